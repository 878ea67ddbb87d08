//! The full-screen terminal session: the alternate screen in raw mode, restored on every way out
//! (`q`, Ctrl-C, SIGTERM, SIGHUP, a panic).
//!
//! Four threads feed one channel: the keyboard, file change notification (`notify`: the directories
//! of the checkpoints, their ledgers and a SQLite store), the signals, and the reader that gathers
//! panes off the drawing thread (so a slow store never freezes the keys). The loop sleeps on that
//! channel until the next whole second, when it redraws for the countdowns without reading a file.
//! A change marks its pane stale; stale panes are read again at most [`MAX_REFRESH_RATE`] times a
//! second.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::draw;
use crate::error::WatchError;
use crate::gather::{self, StoreLocation};
use crate::snapshot::{ContractsPane, JobPane, Snapshot};

use crate::sources::{Sources, WatchOptions};
use crate::view::{Action, Key, ViewState};

/// The most times a second the view reads its sources again.
pub const MAX_REFRESH_RATE: u32 = 10;

/// The shortest time between two reads of the sources.
const REFRESH_GAP: Duration = Duration::from_millis(1_000 / MAX_REFRESH_RATE as u64);

/// A PostgreSQL store sends no file events, and its `NOTIFY` tells only of contracts entering
/// one agent's queue, not of claims and ends; it is read again this often.
const SERVER_READ_GAP: Duration = Duration::from_secs(2);

/// How long the keyboard thread waits for a key before it checks whether the view has ended.
const KEY_WAIT: Duration = Duration::from_millis(250);

/// What wakes the loop.
enum Wake {
    Input(Event),
    Files(Vec<PathBuf>),
    Job(usize, Box<JobPane>),
    Contracts(Box<ContractsPane>),
    Served,
    Quit,
}

/// A read the loop asks of the reader thread.
struct Request {
    jobs: Vec<usize>,
    contracts: bool,
}

/// Which pane a file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Job(usize),
    Contracts,
}

/// Runs the live view of `options` until the person quits (`q`, Ctrl-C) or a signal ends it; the
/// terminal is restored in every case. Standard output must be a terminal.
pub fn run(options: &WatchOptions) -> Result<(), WatchError> {
    if !std::io::stdout().is_terminal() {
        return Err(WatchError::NotATerminal);
    }
    let mut sources = Sources::new(
        options,
        Arc::new(shiftwork_seams::OsFs),
        Arc::new(shiftwork_seams::SystemClock::new()),
    )?;
    let hours = sources.take_hours();
    let (tx, rx) = mpsc::channel::<Wake>();
    let mut files = Files::of(&sources);
    let events = tx.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
        Ok(event) if matters(&event.kind) => {
            let _ = events.send(Wake::Files(event.paths));
        }
        Ok(_) => {}
        // A lost event (queue overflow) may hide any change: read everything again.
        Err(_) => {
            let _ = events.send(Wake::Files(Vec::new()));
        }
    })?;
    files.watch(&mut watcher);
    let server_store = matches!(sources.store(), Some(StoreLocation::Postgres(_)));
    let mut snapshot = sources.snapshot_but_contracts();
    let stop = Arc::new(AtomicBool::new(false));
    let requests = spawn_reader(sources, tx.clone());
    let signals = spawn_signals(tx.clone())?;
    spawn_keyboard(tx, stop.clone());
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            // Raw mode may be on already; leave the terminal as it was.
            let _ = ratatui::try_restore();
            return Err(WatchError::Terminal(e));
        }
    };
    let session = Session {
        rx,
        requests,
        files,
        watcher,
        hours,
        server_store,
    };
    let result = session.run(&mut terminal, &mut snapshot);
    stop.store(true, Ordering::Relaxed);
    signals.close();
    let restored = ratatui::try_restore().map_err(WatchError::Terminal);
    result.and(restored)
}

struct Session<W> {
    rx: Receiver<Wake>,
    requests: Sender<Request>,
    files: Files,
    watcher: W,
    hours: Option<gather::HoursWatch>,
    server_store: bool,
}

impl<W: Watcher> Session<W> {
    fn run(
        mut self,
        terminal: &mut ratatui::DefaultTerminal,
        snapshot: &mut Snapshot,
    ) -> Result<(), WatchError> {
        let panes = snapshot.jobs.len() + usize::from(snapshot.contracts.is_some());
        let mut view = ViewState::new(panes);
        let mut stale_jobs = vec![false; snapshot.jobs.len()];
        let mut stale_contracts = snapshot.contracts.is_some();
        let mut reading = false;
        let mut last_read = Instant::now();
        let mut next_tick = next_second();
        let mut next_server_read = Instant::now() + SERVER_READ_GAP;
        let mut redraw = true;
        loop {
            if redraw {
                snapshot.now = chrono::Utc::now();
                snapshot.hours = self.hours.as_ref().map(|h| h.line(snapshot.now));
                terminal
                    .draw(|frame| draw::draw(frame, snapshot, &mut view))
                    .map_err(WatchError::Terminal)?;
                redraw = false;
            }
            let stale = stale_contracts || stale_jobs.iter().any(|s| *s);
            let mut deadline = next_tick;
            if stale && !reading {
                deadline = deadline.min(last_read + REFRESH_GAP);
            }
            if self.server_store {
                deadline = deadline.min(next_server_read);
            }
            match self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(Wake::Input(Event::Key(key))) => {
                    if let Some(key) = key_of(key) {
                        match view.on_key(key) {
                            Action::Quit => return Ok(()),
                            Action::Redraw => redraw = true,
                            Action::Nothing => {}
                        }
                    }
                }
                Ok(Wake::Input(Event::Resize(..))) => redraw = true,
                Ok(Wake::Input(_)) => {}
                Ok(Wake::Files(paths)) => {
                    for target in self.files.targets(&paths) {
                        match target {
                            Target::Job(i) => stale_jobs[i] = true,
                            Target::Contracts => stale_contracts = true,
                        }
                    }
                }
                Ok(Wake::Job(i, pane)) => {
                    if let Some(slot) = snapshot.jobs.get_mut(i) {
                        *slot = *pane;
                    }
                    redraw = true;
                }
                Ok(Wake::Contracts(pane)) => {
                    snapshot.contracts = Some(*pane);
                    redraw = true;
                }
                Ok(Wake::Served) => reading = false,
                Ok(Wake::Quit) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
                Err(RecvTimeoutError::Timeout) => {}
            }
            let now = Instant::now();
            if now >= next_tick {
                redraw = true;
                next_tick = next_second();
                // A directory that did not exist yet may exist now.
                if self.files.watch(&mut self.watcher) {
                    stale_jobs.iter_mut().for_each(|s| *s = true);
                    stale_contracts |= snapshot.contracts.is_some();
                }
            }
            if self.server_store && now >= next_server_read {
                stale_contracts = true;
                next_server_read = now + SERVER_READ_GAP;
            }
            let stale = stale_contracts || stale_jobs.iter().any(|s| *s);
            if stale && !reading && now >= last_read + REFRESH_GAP {
                let request = Request {
                    jobs: (0..stale_jobs.len()).filter(|&i| stale_jobs[i]).collect(),
                    contracts: stale_contracts,
                };
                if self.requests.send(request).is_err() {
                    return Ok(());
                }
                stale_jobs.iter_mut().for_each(|s| *s = false);
                stale_contracts = false;
                reading = true;
                last_read = now;
            }
        }
    }
}

/// Whether a file event may change what a pane shows (opening or reading a file does not; the view's
/// own reads would otherwise wake it).
fn matters(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    }
}

/// The files whose changes matter, and the directories watched for them.
struct Files {
    files: Vec<(PathBuf, Target)>,
    directories: Vec<(PathBuf, bool)>,
}

impl Files {
    fn of(sources: &Sources) -> Files {
        let mut files = Vec::new();
        for (i, checkpoint) in sources.checkpoints().iter().enumerate() {
            let mut paths: Vec<PathBuf> = gather::checkpoint_files(checkpoint).into();
            // A symlinked checkpoint is replaced at its target, in the target's directory.
            if let Ok(target) = std::fs::canonicalize(checkpoint) {
                paths.push(target);
            }
            files.extend(paths.into_iter().map(|p| (absolute(&p), Target::Job(i))));
        }
        if let Some(location) = sources.store() {
            files.extend(location.files().iter().map(|p| (absolute(p), Target::Contracts)));
        }
        let mut directories: Vec<(PathBuf, bool)> = Vec::new();
        for (file, _) in &files {
            if let Some(dir) = file.parent()
                && !directories.iter().any(|(d, _)| d == dir)
            {
                directories.push((dir.to_path_buf(), false));
            }
        }
        Files { files, directories }
    }

    /// Starts watching every directory that exists and is not watched yet; true when one started.
    fn watch(&mut self, watcher: &mut impl Watcher) -> bool {
        let mut started = false;
        for (dir, watched) in self.directories.iter_mut().filter(|(_, w)| !*w) {
            if dir.is_dir() && watcher.watch(dir, RecursiveMode::NonRecursive).is_ok() {
                *watched = true;
                started = true;
            }
        }
        started
    }

    /// The panes the event paths belong to (every pane when the event names no path).
    fn targets(&self, paths: &[PathBuf]) -> Vec<Target> {
        let mut out: Vec<Target> = Vec::new();
        for (file, target) in &self.files {
            let hit = paths.is_empty() || paths.iter().any(|p| p == file);
            if hit && !out.contains(target) {
                out.push(*target);
            }
        }
        out
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The instant of the next whole second of the wall clock.
fn next_second() -> Instant {
    let into = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Instant::now() + Duration::from_nanos(u64::from(1_000_000_000 - into.min(999_999_999)))
}

/// The reader thread: reads the panes a request names and sends them back.
fn spawn_reader(mut sources: Sources, tx: Sender<Wake>) -> Sender<Request> {
    let (requests, incoming) = mpsc::channel::<Request>();
    std::thread::spawn(move || {
        for request in incoming {
            for i in request.jobs {
                if tx.send(Wake::Job(i, Box::new(sources.job(i)))).is_err() {
                    return;
                }
            }
            if request.contracts
                && let Some(pane) = sources.contracts()
                && tx.send(Wake::Contracts(Box::new(pane))).is_err()
            {
                return;
            }
            if tx.send(Wake::Served).is_err() {
                return;
            }
        }
    });
    requests
}

/// SIGTERM, SIGHUP, SIGINT and SIGQUIT end the view like `q` does, so the terminal is restored.
fn spawn_signals(tx: Sender<Wake>) -> Result<signal_hook::iterator::Handle, WatchError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT])
        .map_err(WatchError::Terminal)?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = tx.send(Wake::Quit);
        }
    });
    Ok(handle)
}

/// The keyboard thread; it ends within [`KEY_WAIT`] of `stop`.
fn spawn_keyboard(tx: Sender<Wake>, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match crossterm::event::poll(KEY_WAIT) {
                Ok(false) => {}
                Ok(true) => match crossterm::event::read() {
                    Ok(event) => {
                        if tx.send(Wake::Input(event)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                },
                Err(_) => break,
            }
        }
    });
}

/// The view's key for a terminal key press.
fn key_of(key: KeyEvent) -> Option<Key> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C')).then_some(Key::Interrupt);
    }
    Some(match key.code {
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}
