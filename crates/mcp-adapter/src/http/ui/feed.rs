//! The web view's data: one thread gathers it and publishes it to every open page.
//!
//! Pages never read a file or a store themselves: a request answers from what was published last,
//! so a hundred pages cost one reading. The reading is the live terminal view's
//! (`shiftwork_watch::gather`: the checkpoint read as the tools read it, the ledger streamed once,
//! the contracts store opened read-only — no sidecar left, no byte written), on this module's own
//! thread, apart from the threads that run tool calls. It runs only while a page is open (an event
//! stream, or a request in the last [`DEMAND_WINDOW`]): every [`TICK`] it looks at the files that
//! can change (each checkpoint and its ledger, the SQLite store and its log, the work log's
//! directory) and reads again when one changed (at most every [`READ_GAP`]), when a PostgreSQL
//! store was last read [`SERVER_EVERY`] ago, or at the latest every [`FULL_EVERY`]. A reading that
//! differs from the last is published with the next version; the event streams send it on. The
//! thread runs [`NICENESS`] below the tool calls' threads, so on a busy machine a call goes first.
//!
//! **Which jobs.** The server knows a checkpoint only when a client names one, so the view shows a
//! bounded, configured set: every checkpoint of `--ui-checkpoints`, then each root's conventional
//! `.shiftwork/checkpoint.json` when it exists, at most [`MAX_JOBS`]. Each is checked against the
//! roots before every reading, by the rule the shift-work tools apply
//! ([`shiftwork_core::Env::confine_checkpoint`]): a checkpoint (or its ledger) that a link now leads
//! outside the roots is shown as the tools' refusal, and not read.
//!
//! One contract's whole record is read on this thread too, on demand ([`Feed::record`]): at most
//! [`MAX_QUEUED`] such reads wait; beyond, the page is answered busy.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono_tz::Tz;
use serde_json::{Value, json};
use shiftwork_seams::{Clock as _, Fs, OsFs, SystemClock};
use shiftwork_watch::display_text::clean_text;
use shiftwork_watch::gather::{self, ContractsReader, HoursWatch, StoreLocation};
use shiftwork_watch::snapshot::{JobPane, Snapshot};
use shiftwork_watch::web::{document, svg};
use shiftwork_worklog::Worklog;

/// How often an open page's sources are looked at.
pub const TICK: Duration = Duration::from_millis(100);
/// The longest time between two readings while a page is open.
pub const FULL_EVERY: Duration = Duration::from_secs(2);
/// The shortest time between two readings that a change brings on: a job that changes ten times a
/// second is read, and every open page sent a document, about three times a second, not ten, so
/// the view's share of the machine does not grow with the rate of change (a change still reaches
/// an open page within [`READ_GAP`] + [`TICK`] + the streams' [`super::SPREAD`]).
pub const READ_GAP: Duration = Duration::from_millis(300);
/// How much lower than the tool calls' threads the reading thread runs (a nice value): when the
/// machine is busy, a tool call goes first and the view's reading waits.
pub const NICENESS: i32 = 10;
/// How often a PostgreSQL store, which has no file to look at, is read while a page is open.
pub const SERVER_EVERY: Duration = Duration::from_millis(500);
/// How long after a page's last request the thread keeps reading.
pub const DEMAND_WINDOW: Duration = Duration::from_secs(30);
/// The most jobs the view shows.
pub const MAX_JOBS: usize = 32;
/// The most contract reads that wait for the thread.
pub const MAX_QUEUED: usize = 16;
/// The most work-log items the view lists (the last ones of the checklist).
pub const WORKLOG_ITEMS_SHOWN: usize = 200;
/// The conventional checkpoint of a root.
pub const CONVENTIONAL: &str = ".shiftwork/checkpoint.json";

/// What the view reads, resolved once at start-up.
pub struct Sources {
    /// The jobs, when the shift-work tools are served: the checkpoints named, the roots, and the
    /// environment whose roots confine them.
    pub jobs: Option<Jobs>,
    /// The contracts store, when the contracts tools are served.
    pub store: Option<StoreLocation>,
    /// The hours gate, when configured.
    pub hours: Option<HoursWatch>,
    /// The server's zone.
    pub zone: Tz,
    /// The work log, when its tools are served, and whether its items are listed.
    pub worklog: Option<(Worklog<OsFs>, bool)>,
}

/// The jobs of the view.
pub struct Jobs {
    /// `--ui-checkpoints`, in order.
    pub named: Vec<PathBuf>,
    /// The roots, whose conventional checkpoints are shown when they exist.
    pub roots: Vec<PathBuf>,
    /// The shift-work tools' environment (its roots confine every checkpoint read).
    pub env: shiftwork_core::Env,
}

/// One published reading.
#[derive(Debug, Default)]
pub struct Published {
    /// Its version, counted from 1 (0 before the first reading).
    pub version: u64,
    /// The page's data document (JSON).
    pub document: Bytes,
    /// Each job's plan pictures, by the job's position in the document.
    pub plans: Vec<Option<Plan>>,
}

/// A job's plan as pictures.
#[derive(Debug)]
pub struct Plan {
    /// SVG for a light page.
    pub light: Bytes,
    /// SVG for a dark page.
    pub dark: Bytes,
    /// The Mermaid flowchart (`plan --format mermaid`).
    pub mermaid: Bytes,
}

enum Command {
    Kick,
    Record(
        String,
        tokio::sync::oneshot::Sender<Result<Option<Value>, String>>,
    ),
}

impl Plan {
    /// A name of what the pictures show: the same pictures, the same name.
    pub fn key(&self) -> String {
        use std::hash::{Hash as _, Hasher as _};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.light.hash(&mut hasher);
        self.dark.hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

/// The publishing thread and what it published.
pub struct Feed {
    latest: tokio::sync::watch::Receiver<Arc<Published>>,
    /// When the thread last read the sources (whether or not it published).
    read_at: Arc<Mutex<Option<Instant>>>,
    commands: Mutex<Option<SyncSender<Command>>>,
    streams: Arc<AtomicUsize>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Why a contract could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// Too many reads wait.
    Busy,
    /// The store could not be read (the sentence).
    Store(String),
}

impl Feed {
    /// Starts the thread over `sources`.
    pub fn start(sources: Sources) -> Result<Feed, String> {
        let (publish, latest) = tokio::sync::watch::channel(Arc::new(Published::default()));
        let (commands, incoming) = std::sync::mpsc::sync_channel(MAX_QUEUED);
        let streams = Arc::new(AtomicUsize::new(0));
        let open = Arc::clone(&streams);
        let read_at = Arc::new(Mutex::new(None));
        let reader = Reader::new(sources, Arc::clone(&read_at));
        let thread = std::thread::Builder::new()
            .name(String::from("shiftwork-ui"))
            .spawn(move || {
                lower_this_threads_priority(NICENESS);
                reader.run(&publish, &incoming, &open)
            })
            .map_err(|e| format!("the web view cannot start its reading thread: {e}"))?;
        Ok(Feed {
            latest,
            read_at,
            commands: Mutex::new(Some(commands)),
            streams,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// What was published last, once the sources were read at most `fresh` ago: when the thread was
    /// idle, it is asked to read, and waited for (at most `wait`).
    pub async fn fresh(&self, fresh: Duration, wait: Duration) -> Arc<Published> {
        self.kick();
        let deadline = Instant::now() + wait;
        loop {
            let read_at = *self.read_at.lock().unwrap_or_else(PoisonError::into_inner);
            if read_at.is_some_and(|at| at.elapsed() <= fresh) || Instant::now() >= deadline {
                return Arc::clone(&self.latest.borrow());
            }
            tokio::time::sleep(TICK / 4).await;
        }
    }

    /// A receiver of every publication (an event stream's), counted as an open page while it lives.
    pub fn subscribe(&self) -> Subscription {
        self.streams.fetch_add(1, Ordering::SeqCst);
        self.kick();
        Subscription {
            latest: self.latest.clone(),
            streams: Arc::clone(&self.streams),
        }
    }

    /// The contract `id` in full (the page's detail document), `Ok(None)` when there is none.
    pub async fn record(&self, id: &str) -> Result<Option<Value>, RecordError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = match &*self.commands.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(commands) => commands.try_send(Command::Record(id.to_owned(), reply)),
            None => return Err(RecordError::Busy),
        };
        match sent {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return Err(RecordError::Busy),
        }
        match answer.await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(sentence)) => Err(RecordError::Store(sentence)),
            Err(_) => Err(RecordError::Busy),
        }
    }

    /// The open event streams.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::SeqCst)
    }

    fn kick(&self) {
        if let Some(commands) = &*self.commands.lock().unwrap_or_else(PoisonError::into_inner) {
            // A full queue already wakes the thread.
            let _ = commands.try_send(Command::Kick);
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        // Closing the queue ends the thread at its next wake-up (within a tick, or at once).
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = thread.join();
        }
    }
}

/// An event stream's view of the publications.
pub struct Subscription {
    /// The publications.
    pub latest: tokio::sync::watch::Receiver<Arc<Published>>,
    streams: Arc<AtomicUsize>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The state of the reading thread.
struct Reader {
    sources: Sources,
    read_at: Arc<Mutex<Option<Instant>>>,
    fs: OsFs,
    clock: Arc<SystemClock>,
    contracts: Option<ContractsReader>,
    last_look: Option<Fingerprint>,
    last_read: Option<Instant>,
    last_tick: Option<Instant>,
    last_body: String,
    version: u64,
    demand_until: Instant,
}

/// What the files of the sources looked like.
type Fingerprint = Vec<Option<(u64, std::time::SystemTime, u64, u64)>>;

impl Reader {
    fn new(sources: Sources, read_at: Arc<Mutex<Option<Instant>>>) -> Reader {
        let clock = Arc::new(SystemClock::new());
        let contracts = sources
            .store
            .clone()
            .map(|location| ContractsReader::new(location, None, clock.clone()));
        Reader {
            sources,
            read_at,
            fs: OsFs,
            clock,
            contracts,
            last_look: None,
            last_read: None,
            last_tick: None,
            last_body: String::new(),
            version: 0,
            demand_until: Instant::now(),
        }
    }

    fn run(
        mut self,
        publish: &tokio::sync::watch::Sender<Arc<Published>>,
        incoming: &Receiver<Command>,
        streams: &AtomicUsize,
    ) {
        loop {
            let now = Instant::now();
            let active = streams.load(Ordering::SeqCst) > 0 || now < self.demand_until;
            let wait = if active {
                self.last_tick
                    .map_or(Duration::ZERO, |t| (t + TICK).saturating_duration_since(now))
            } else {
                Duration::from_secs(3600)
            };
            let mut force = false;
            match incoming.recv_timeout(wait) {
                Ok(Command::Kick) => {
                    force = !active || self.last_read.is_none();
                    self.demand_until = Instant::now() + DEMAND_WINDOW;
                }
                Ok(Command::Record(id, reply)) => {
                    let _ = reply.send(self.record(&id));
                    continue;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            let now = Instant::now();
            if !force && self.last_tick.is_some_and(|t| now < t + TICK) {
                continue;
            }
            self.last_tick = Some(now);
            let checkpoints = self.checkpoints();
            let look = self.look(&checkpoints);
            let since = self.last_read.map_or(Duration::MAX, |t| now.duration_since(t));
            let server = matches!(self.sources.store, Some(StoreLocation::Postgres(_)));
            let changed = self.last_look.as_ref() != Some(&look);
            let due = force
                || (changed && since >= READ_GAP)
                || since >= FULL_EVERY
                || (server && since >= SERVER_EVERY);
            if !due {
                continue;
            }
            self.last_look = Some(look);
            self.last_read = Some(now);
            if let Some(published) = self.read(&checkpoints) {
                publish.send_replace(Arc::new(published));
            }
            *self.read_at.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        }
    }

    /// The checkpoints shown now: the named ones, then each root's conventional one that exists.
    fn checkpoints(&self) -> Vec<PathBuf> {
        let Some(jobs) = &self.sources.jobs else {
            return Vec::new();
        };
        let mut out = jobs.named.clone();
        for root in &jobs.roots {
            let conventional = root.join(CONVENTIONAL);
            if !out.contains(&conventional) && self.fs.metadata(&conventional).is_ok() {
                out.push(conventional);
            }
        }
        out.truncate(MAX_JOBS);
        out
    }

    /// The files that change when a source changes.
    fn look(&self, checkpoints: &[PathBuf]) -> Fingerprint {
        let mut files: Vec<PathBuf> = Vec::new();
        for checkpoint in checkpoints {
            files.extend(gather::checkpoint_files(checkpoint));
        }
        if let Some(location) = &self.sources.store {
            files.extend(location.files());
        }
        if let Some((log, _)) = &self.sources.worklog
            && let Some(dir) = &log.config().dir
        {
            files.push(dir.clone());
        }
        files
            .iter()
            .map(|f| {
                self.fs
                    .metadata(f)
                    .ok()
                    .map(|m| (m.len, m.modified, m.ino, m.dev))
            })
            .collect()
    }

    /// Reads every source; the publication when the document differs from the last one.
    fn read(&mut self, checkpoints: &[PathBuf]) -> Option<Published> {
        let now = self.clock.now();
        let jobs: Vec<JobPane> = checkpoints.iter().map(|c| self.job(c)).collect();
        let fs = self.fs;
        let contracts = self.contracts.as_mut().map(|r| r.read(&fs));
        let snapshot = Snapshot {
            now,
            zone: self.sources.zone,
            jobs,
            contracts,
            hours: self.sources.hours.as_ref().map(|h| h.line(now)),
        };
        let plans: Vec<Option<Plan>> = snapshot
            .jobs
            .iter()
            .map(|pane| {
                pane.body.as_ref().ok().map(|job| Plan {
                    light: Bytes::from(svg::plan(job, svg::Palette::Light)),
                    dark: Bytes::from(svg::plan(job, svg::Palette::Dark)),
                    mermaid: Bytes::from(shiftwork_watch::picture::mermaid(job)),
                })
            })
            .collect();
        let mut doc = document::of(&snapshot);
        // Each job's picture is named by what it shows, so a page fetches it again only when it
        // changed (and may keep it meanwhile).
        if let Some(jobs) = doc["jobs"].as_array_mut() {
            for (pane, plan) in jobs.iter_mut().zip(&plans) {
                pane["picture"] = plan.as_ref().map_or(Value::Null, |p| json!(p.key()));
            }
        }
        doc["worklog"] = self.worklog();
        doc["shown"] = json!({
            "jobs": self.sources.jobs.is_some(),
            "contracts": self.sources.store.is_some(),
            "hours": self.sources.hours.is_some(),
            "worklog": self.sources.worklog.is_some(),
        });
        // The instant of the reading is not part of it: a page learns the server's time with each
        // document it is sent, so a document stays the same while nothing changes.
        if let Some(doc) = doc.as_object_mut() {
            doc.remove("now");
        }
        let body = doc.to_string();
        if body == self.last_body && self.version > 0 {
            return None;
        }
        self.version += 1;
        self.last_body = body;
        doc["version"] = json!(self.version);
        Some(Published {
            version: self.version,
            document: Bytes::from(doc.to_string()),
            plans,
        })
    }

    /// One job's pane, unless its files lie outside the roots.
    fn job(&self, checkpoint: &Path) -> JobPane {
        if let Some(jobs) = &self.sources.jobs
            && let Err(refusal) = jobs.env.confine_checkpoint(checkpoint)
        {
            return JobPane {
                checkpoint: clean_text(&shiftwork_core::CheckpointPaths::new(checkpoint).shown),
                body: Err(clean_text(&refusal.to_string())),
            };
        }
        gather::job(&self.fs, checkpoint)
    }

    /// The work log part of the document.
    fn worklog(&self) -> Value {
        let Some((log, with_items)) = &self.sources.worklog else {
            return Value::Null;
        };
        match log.items() {
            Ok(found) => {
                let total = found.items.len();
                let items: Option<Vec<Value>> = with_items.then(|| {
                    found.items[total.saturating_sub(WORKLOG_ITEMS_SHOWN)..]
                        .iter()
                        .map(|i| json!({"checked": i.checked, "depth": i.depth.min(8), "text": clean_text(&i.text)}))
                        .collect()
                });
                json!({
                    "status": found.status.as_str(),
                    "file": found.file.as_deref().map(clean_text),
                    "count": total,
                    "items": items,
                    "items_left_out": if *with_items { total.saturating_sub(WORKLOG_ITEMS_SHOWN) } else { 0 },
                })
            }
            Err(e) => json!({"error": clean_text(&e.to_string())}),
        }
    }

    /// One contract's record document.
    fn record(&mut self, id: &str) -> Result<Option<Value>, String> {
        let fs = self.fs;
        match self.contracts.as_mut() {
            Some(reader) => reader
                .record(&fs, id)
                .map(|found| found.as_ref().map(document::record)),
            None => Ok(None),
        }
    }
}

/// Lowers the calling thread's scheduling priority by `niceness` (Linux keeps a nice value per
/// thread). Best effort: a host that refuses (a sandbox without the call) leaves the thread as it
/// was, which is only slower to yield, never wrong.
fn lower_this_threads_priority(niceness: i32) {
    // SAFETY: `gettid` and `setpriority` take plain integers and touch no memory of ours.
    unsafe {
        let tid = libc::gettid();
        let current = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
        libc::setpriority(
            libc::PRIO_PROCESS,
            tid as libc::id_t,
            current.saturating_add(niceness),
        );
    }
}
