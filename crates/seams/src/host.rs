//! The `Host` seam: who this process is, whether another process lives, and running a shell probe.

use std::collections::{HashMap, HashSet};
#[cfg(not(target_os = "linux"))]
use std::io::Read;
use std::path::Path;
#[cfg(not(target_os = "linux"))]
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
#[cfg(not(target_os = "linux"))]
use std::time::Instant;

/// The most bytes of a probe's stdout or stderr kept; the rest is read and discarded.
pub const PROBE_OUTPUT_CAP: usize = 1024 * 1024;

/// How long a timed-out probe's process group has between SIGTERM and SIGKILL.
pub const PROBE_KILL_GRACE: Duration = Duration::from_secs(2);

/// How a probe ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeStatus {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was ended by this signal.
    Signaled(i32),
    /// It ran past its timeout and was killed with its whole process group.
    TimedOut,
    /// The shell could not be started; the text is the OS's reason.
    SpawnFailed(String),
}

/// What a probe produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOutcome {
    /// How it ended.
    pub status: ProbeStatus,
    /// Its standard output (at most [`PROBE_OUTPUT_CAP`] bytes).
    pub stdout: Vec<u8>,
    /// Its standard error (at most [`PROBE_OUTPUT_CAP`] bytes).
    pub stderr: Vec<u8>,
}

impl ProbeOutcome {
    /// True when the probe exited with code 0.
    pub fn succeeded(&self) -> bool {
        self.status == ProbeStatus::Exited(0)
    }
}

/// The process's view of its host.
pub trait Host: Send + Sync {
    /// This process's id.
    fn pid(&self) -> u32;
    /// This host's name.
    fn hostname(&self) -> String;
    /// Whether a process with this id exists on this host.
    fn is_pid_alive(&self, pid: u32) -> bool;
    /// When the live process with this id started, as a number that differs between two processes
    /// that had the same id one after the other (on Linux its start time in clock ticks since boot,
    /// from `/proc/<pid>/stat`), or `None` when the host cannot tell or no such process lives. A lock
    /// that records its holder's start time can so tell its holder from a process that reused the pid.
    ///
    /// The default answers `None`, so hosts written before this method existed keep compiling.
    fn process_start(&self, pid: u32) -> Option<u64> {
        let _ = pid;
        None
    }
    /// Runs `command` with `sh -c` in `cwd`, stdin closed, and waits for the shell's exit status — not
    /// for the end of its output — at most `timeout`; past it the probe's process group (and, on
    /// [`OsHost`] under Linux, every other process it started) is sent SIGTERM, then SIGKILL
    /// [`PROBE_KILL_GRACE`] later if any of it is still running, and the outcome is
    /// [`ProbeStatus::TimedOut`]. Whatever the probe left running when its shell exits is killed, so a
    /// probe never outlives its call.
    fn run_probe(&self, command: &str, cwd: &Path, timeout: Duration) -> ProbeOutcome;
}

/// The real host (POSIX).
///
/// On Linux a probe runs under a supervisor process that is a child subreaper
/// (`prctl(PR_SET_CHILD_SUBREAPER)`): every process the probe starts stays its descendant, even one
/// started with `setsid` or in a process group of its own, so at the shell's exit or its deadline each
/// of them is found and killed. Elsewhere the probe's process group is killed.
///
/// ```
/// use shiftwork_seams::{Host, OsHost};
/// use std::time::Duration;
/// let host = OsHost;
/// assert!(host.is_pid_alive(host.pid()));
/// let out = host.run_probe("echo hi", std::path::Path::new("/"), Duration::from_secs(5));
/// assert!(out.succeeded());
/// assert_eq!(out.stdout, b"hi\n");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OsHost;

/// Field 22 of `/proc/<pid>/stat` (`starttime`), in clock ticks since boot; `None` when it cannot be read.
fn read_process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22 (`starttime`); the command name in field 2 may hold spaces and parentheses, so the
    // fields are counted after its closing parenthesis, from field 3.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

impl Host for OsHost {
    fn pid(&self) -> u32 {
        std::process::id()
    }

    fn hostname(&self) -> String {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most `buf.len()` bytes into a buffer this function owns.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc != 0 {
            return String::from("localhost");
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    fn is_pid_alive(&self, pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: kill with signal 0 only checks for the process's existence.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }

    fn process_start(&self, pid: u32) -> Option<u64> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        // This process's own start time is asked at every lock it takes and never changes: read once
        // (keyed by the pid, so a forked child reads its own).
        static OWN: std::sync::OnceLock<(u32, u64)> = std::sync::OnceLock::new();
        let own = std::process::id();
        if pid == own
            && let Some(&(read_for, start)) = OWN.get()
            && read_for == own
        {
            return Some(start);
        }
        let start = read_process_start(pid)?;
        if pid == own {
            let _ = OWN.set((own, start));
        }
        Some(start)
    }

    fn run_probe(&self, command: &str, cwd: &Path, timeout: Duration) -> ProbeOutcome {
        #[cfg(target_os = "linux")]
        {
            crate::probe_supervisor::run(command, cwd, timeout)
        }
        #[cfg(not(target_os = "linux"))]
        {
            run_in_group(command, cwd, timeout)
        }
    }
}

/// A probe in a process group of its own (POSIX systems without child subreapers).
#[cfg(not(target_os = "linux"))]
fn run_in_group(command: &str, cwd: &Path, timeout: Duration) -> ProbeOutcome {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let spawned = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return ProbeOutcome {
                status: ProbeStatus::SpawnFailed(crate::os_reason(&e)),
                stdout: Vec::new(),
                stderr: Vec::new(),
            };
        }
    };
    let stdout = child.stdout.take().map(capped_reader);
    let stderr = child.stderr.take().map(capped_reader);
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // What the shell left running in its group goes with it: the readers below must
                // not wait for a background job's end of output.
                if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: signals the probe's own process group, created by `process_group(0)`.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                }
                break match (status.code(), status.signal()) {
                    (Some(code), _) => ProbeStatus::Exited(code),
                    (None, Some(sig)) => ProbeStatus::Signaled(sig),
                    (None, None) => ProbeStatus::Exited(-1),
                };
            }
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
                    terminate_group(pgid, &mut child);
                }
                let _ = child.wait();
                break ProbeStatus::TimedOut;
            }
        }
    };
    // A grandchild that keeps the pipe open past the kill cannot hold us: the readers are joined
    // only when the status is known, and the whole group was killed on timeout.
    let collect =
        |h: Option<std::thread::JoinHandle<Vec<u8>>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    ProbeOutcome {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

/// SIGTERM to the probe's process group, then SIGKILL once [`PROBE_KILL_GRACE`] has passed with any
/// member still alive.
#[cfg(not(target_os = "linux"))]
fn terminate_group(pgid: libc::pid_t, child: &mut std::process::Child) {
    let signal_group = |signal| {
        // SAFETY: signals the probe's own process group, created by `process_group(0)`; a negative
        // pid addresses the group, and signal 0 only checks that a member exists.
        unsafe { libc::kill(-pgid, signal) == 0 }
    };
    signal_group(libc::SIGTERM);
    let start = Instant::now();
    while start.elapsed() < PROBE_KILL_GRACE {
        // Reap the shell as soon as it exits so that only live members answer signal 0.
        if let Ok(Some(_)) = child.try_wait()
            && !signal_group(0)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(libc::SIGKILL);
}

#[cfg(not(target_os = "linux"))]
fn capped_reader<R: Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => return kept,
                Ok(n) => {
                    let room = PROBE_OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    })
}

type ProbeScript = Arc<dyn Fn(&str, &Path, Duration) -> ProbeOutcome + Send + Sync>;

/// A scripted host for tests. Clones share state.
///
/// ```
/// use shiftwork_seams::{Host, MemHost, ProbeOutcome, ProbeStatus};
/// use std::time::Duration;
/// let host = MemHost::new(4242, "build-1");
/// host.set_alive(7, true);
/// assert!(host.is_pid_alive(4242) && host.is_pid_alive(7) && !host.is_pid_alive(8));
/// host.answer_probe("test -f x", ProbeOutcome { status: ProbeStatus::Exited(0), stdout: vec![], stderr: vec![] });
/// assert!(host.run_probe("test -f x", std::path::Path::new("/"), Duration::from_secs(1)).succeeded());
/// assert_eq!(host.probes_run(), vec!["test -f x".to_string()]);
/// ```
#[derive(Clone)]
pub struct MemHost {
    pid: u32,
    hostname: String,
    state: Arc<Mutex<MemHostState>>,
}

#[derive(Default)]
struct MemHostState {
    alive: HashSet<u32>,
    started: HashMap<u32, u64>,
    answers: HashMap<String, ProbeOutcome>,
    script: Option<ProbeScript>,
    runs: Vec<String>,
}

impl std::fmt::Debug for MemHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemHost")
            .field("pid", &self.pid)
            .field("hostname", &self.hostname)
            .finish()
    }
}

impl MemHost {
    /// A host where process `pid` (this one) is alive and no other is.
    pub fn new(pid: u32, hostname: &str) -> Self {
        let mut state = MemHostState::default();
        state.alive.insert(pid);
        MemHost {
            pid,
            hostname: hostname.to_owned(),
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MemHostState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks process `pid` alive or dead.
    pub fn set_alive(&self, pid: u32, alive: bool) {
        let mut st = self.state();
        if alive {
            st.alive.insert(pid);
        } else {
            st.alive.remove(&pid);
        }
    }

    /// Records when process `pid` started (see [`Host::process_start`]); a pid never given a start
    /// answers `None`.
    pub fn set_started(&self, pid: u32, start: u64) {
        self.state().started.insert(pid, start);
    }

    /// Answers the probe `command` with `outcome`.
    pub fn answer_probe(&self, command: &str, outcome: ProbeOutcome) {
        self.state().answers.insert(command.to_owned(), outcome);
    }

    /// Answers every probe without a fixed answer by calling `script`.
    pub fn script_probes(
        &self,
        script: impl Fn(&str, &Path, Duration) -> ProbeOutcome + Send + Sync + 'static,
    ) {
        self.state().script = Some(Arc::new(script));
    }

    /// The commands run so far, in order.
    pub fn probes_run(&self) -> Vec<String> {
        self.state().runs.clone()
    }
}

impl Host for MemHost {
    fn pid(&self) -> u32 {
        self.pid
    }
    fn hostname(&self) -> String {
        self.hostname.clone()
    }
    fn is_pid_alive(&self, pid: u32) -> bool {
        self.state().alive.contains(&pid)
    }
    fn process_start(&self, pid: u32) -> Option<u64> {
        let st = self.state();
        st.alive
            .contains(&pid)
            .then(|| st.started.get(&pid).copied())
            .flatten()
    }
    fn run_probe(&self, command: &str, cwd: &Path, timeout: Duration) -> ProbeOutcome {
        let (answer, script) = {
            let mut st = self.state();
            st.runs.push(command.to_owned());
            (st.answers.get(command).cloned(), st.script.clone())
        };
        answer
            .or_else(|| script.map(|s| s(command, cwd, timeout)))
            .unwrap_or(ProbeOutcome {
                status: ProbeStatus::SpawnFailed(String::from("no scripted answer")),
                stdout: Vec::new(),
                stderr: Vec::new(),
            })
    }
}
