//! A probe run under a supervisor process (Linux): the probe never outlives its timeout, and nothing it
//! started outlives the probe.
//!
//! The calling thread forks a *supervisor* that marks itself a child subreaper
//! (`prctl(PR_SET_CHILD_SUBREAPER)`) and forks the shell. Every process the probe starts — in the
//! shell's process group, in a group of its own, or in a new session (`setsid`) — stays a descendant of
//! the supervisor: when its parent dies it is re-parented to the supervisor, not to `init`. So the
//! supervisor can find all of them (its children in `/proc/self/task/<tid>/children`, generation by
//! generation) and kill them without ever signalling a process that is not its own child, whose pid
//! therefore cannot have been reused.
//!
//! The supervisor waits for the shell's *exit status*, not for the end of its output: when the shell
//! exits, whatever it left running (`sleep 45 &`) is killed at once; at the deadline the shell's
//! group and every other descendant get SIGTERM, then, after [`PROBE_KILL_GRACE`], SIGKILL. It then
//! reports how the shell ended through a pipe and exits; the caller reads the output pipes until every
//! writer is gone, which is now bounded.
//!
//! Between the fork and its exit the supervisor makes only async-signal-safe system calls on memory
//! prepared before the fork: it allocates nothing and takes no lock, as a child of a multi-threaded
//! process must.

use std::ffi::{CString, c_char, c_int};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::host::{PROBE_KILL_GRACE, PROBE_OUTPUT_CAP, ProbeOutcome, ProbeStatus};

const TAG_EXITED: u8 = 0;
const TAG_SIGNALED: u8 = 1;
const TAG_TIMED_OUT: u8 = 2;
const TAG_SPAWN_FAILED: u8 = 3;

/// How long the caller still reads the output pipes once the supervisor has reported: only a process
/// that escaped the supervisor (by handing a pipe to a process outside the tree) keeps them open.
const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// How long killing the leftovers may take before the supervisor gives up on them (only when
/// `/proc` cannot be read, or a process cannot die).
const KILL_ROUNDS_LIMIT: Duration = Duration::from_secs(5);

/// Runs `command` with `/bin/sh -c` in `cwd` under a supervisor (see the module doc).
pub(crate) fn run(command: &str, cwd: &Path, timeout: Duration) -> ProbeOutcome {
    match start(command, cwd, timeout) {
        Ok(running) => running.collect(timeout),
        Err(e) => spawn_failed(&e),
    }
}

fn spawn_failed(e: &io::Error) -> ProbeOutcome {
    ProbeOutcome {
        status: ProbeStatus::SpawnFailed(crate::os_reason(e)),
        stdout: Vec::new(),
        stderr: Vec::new(),
    }
}

/// A pipe whose both ends are close-on-exec.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What the supervisor needs, prepared before the fork.
struct Prepared {
    command: CString,
    cwd: CString,
    devnull: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    status: OwnedFd,
    timeout: Duration,
    parent: libc::pid_t,
}

struct Running {
    supervisor: libc::pid_t,
    status: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

fn start(command: &str, cwd: &Path, timeout: Duration) -> io::Result<Running> {
    let invalid = || io::Error::from_raw_os_error(libc::EINVAL);
    let command = CString::new(command).map_err(|_| invalid())?;
    let cwd = CString::new(cwd.as_os_str().as_bytes()).map_err(|_| invalid())?;
    let devnull = OwnedFd::from(std::fs::File::open("/dev/null")?);
    let (status_r, status_w) = pipe()?;
    let (stdout_r, stdout_w) = pipe()?;
    let (stderr_r, stderr_w) = pipe()?;
    let prepared = Prepared {
        command,
        cwd,
        devnull,
        stdout: stdout_w,
        stderr: stderr_w,
        status: status_w,
        timeout,
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
    };
    // SAFETY: the child runs only `supervise`, which makes async-signal-safe calls on `prepared`'s
    // memory (allocated above) and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the forked child, as documented on `supervise`.
        unsafe { supervise(&prepared) }
    }
    // The write ends now belong to the supervisor; dropping ours lets the pipes reach end of file.
    drop(prepared);
    Ok(Running {
        supervisor: pid,
        status: status_r,
        stdout: stdout_r,
        stderr: stderr_r,
    })
}

impl Running {
    /// Reads the output and the report until the supervisor is done, then reaps it.
    fn collect(self, timeout: Duration) -> ProbeOutcome {
        let start = Instant::now();
        // The supervisor reports by the deadline plus the kill grace and its kill rounds; past a
        // generous margin it is itself killed (its descendants then go to init, a last resort).
        let hard_limit = timeout
            .saturating_add(PROBE_KILL_GRACE)
            .saturating_add(KILL_ROUNDS_LIMIT)
            .saturating_add(Duration::from_secs(5));
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let mut report = Vec::new();
        let mut open = [true, true, true];
        let mut reported_at: Option<Instant> = None;
        while open.iter().any(|o| *o) {
            if let Some(at) = reported_at
                && at.elapsed() >= OUTPUT_DRAIN
            {
                break;
            }
            if reported_at.is_none() && start.elapsed() >= hard_limit {
                // SAFETY: signals our own unreaped child, whose pid cannot have been reused.
                unsafe { libc::kill(self.supervisor, libc::SIGKILL) };
                break;
            }
            let fds = [&self.status, &self.stdout, &self.stderr];
            let mut polls: Vec<libc::pollfd> = fds
                .iter()
                .zip(open)
                .filter(|(_, o)| *o)
                .map(|(fd, _)| libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: `polls` is a valid array of `polls.len()` pollfd structures.
            let ready = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, 50) };
            if ready < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            for p in polls.iter().filter(|p| p.revents != 0) {
                let which = fds.iter().position(|fd| fd.as_raw_fd() == p.fd).unwrap_or(0);
                let sink = match which {
                    0 => &mut report,
                    1 => &mut stdout,
                    _ => &mut stderr,
                };
                if !read_some(p.fd, sink) {
                    open[which] = false;
                    if which == 0 {
                        reported_at = Some(Instant::now());
                    }
                }
            }
        }
        let mut wait_status = 0;
        // SAFETY: reaps our own child; `wait_status` is a valid out pointer.
        unsafe { libc::waitpid(self.supervisor, &mut wait_status, 0) };
        ProbeOutcome {
            status: decode(&report),
            stdout,
            stderr,
        }
    }
}

/// Reads what `fd` has into `sink` (keeping at most [`PROBE_OUTPUT_CAP`] bytes); false at end of file
/// or on an error.
fn read_some(fd: RawFd, sink: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; 8192];
    // SAFETY: `buf` is valid for `buf.len()` bytes of writing.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return io::Error::last_os_error().kind() == io::ErrorKind::Interrupted;
    }
    if n == 0 {
        return false;
    }
    let n = n as usize;
    let room = PROBE_OUTPUT_CAP.saturating_sub(sink.len());
    sink.extend_from_slice(&buf[..n.min(room)]);
    true
}

fn decode(report: &[u8]) -> ProbeStatus {
    let value = report
        .get(1..5)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(i32::from_le_bytes)
        .unwrap_or(-1);
    match report.first() {
        Some(&TAG_EXITED) => ProbeStatus::Exited(value),
        Some(&TAG_SIGNALED) => ProbeStatus::Signaled(value),
        Some(&TAG_TIMED_OUT) => ProbeStatus::TimedOut,
        Some(&TAG_SPAWN_FAILED) => {
            ProbeStatus::SpawnFailed(crate::os_reason(&io::Error::from_raw_os_error(value)))
        }
        // The supervisor died without reporting (killed): nothing is known of the probe.
        _ => ProbeStatus::SpawnFailed(String::from("the probe's supervisor ended without a report")),
    }
}

// ---- The supervisor: async-signal-safe system calls only, from here on. ----

/// The descriptor the supervisor reports on.
const REPORT_FD: c_int = 3;

fn errno() -> c_int {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Monotonic time in nanoseconds.
fn now_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Writes the five-byte report and exits.
///
/// # Safety
/// Only in the supervisor.
unsafe fn report_and_exit(tag: u8, value: i32) -> ! {
    let v = value.to_le_bytes();
    let bytes = [tag, v[0], v[1], v[2], v[3]];
    // SAFETY: `bytes` is valid for its length; write and _exit are async-signal-safe.
    unsafe {
        libc::write(REPORT_FD, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// Waits for SIGCHLD (blocked in the supervisor) for at most `ns` nanoseconds.
///
/// # Safety
/// Only in the supervisor.
unsafe fn wait_child_signal(ns: i128) {
    let ns = ns.clamp(0, 1_000_000_000);
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: ns as libc::c_long,
    };
    // SAFETY: `set` is initialised by sigemptyset before use; the pointers are valid.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigtimedwait(&set, std::ptr::null_mut(), &ts);
    }
}

/// Reaps every child that has ended; records the shell's status. Returns false when no child is left.
///
/// # Safety
/// Only in the supervisor.
unsafe fn reap(shell: libc::pid_t, shell_status: &mut Option<c_int>) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out pointer.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r == shell {
            *shell_status = Some(status);
        } else if r == 0 {
            return true;
        } else if r < 0 {
            return errno() != libc::ECHILD;
        }
    }
}

/// Sends `signal` to every direct child of the supervisor (the shell and every re-parented orphan),
/// listed in `/proc/self/task/<tid>/children`. Returns false when the list cannot be read.
///
/// # Safety
/// Only in the supervisor (single-threaded: its tid is its pid).
unsafe fn signal_children(signal: c_int) -> bool {
    // "/proc/self/task/<pid>/children\0", built without allocating.
    let mut path = [0u8; 64];
    let head = b"/proc/self/task/";
    let tail = b"/children\0";
    path[..head.len()].copy_from_slice(head);
    let mut at = head.len();
    // SAFETY: getpid has no preconditions.
    let mut pid = unsafe { libc::getpid() } as u32;
    let mut digits = [0u8; 10];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (pid % 10) as u8;
        len += 1;
        pid /= 10;
        if pid == 0 || len == digits.len() {
            break;
        }
    }
    for i in (0..len).rev() {
        path[at] = digits[i];
        at += 1;
    }
    path[at..at + tail.len()].copy_from_slice(tail);
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 4096];
    let mut value: u32 = 0;
    let mut in_number = false;
    loop {
        // SAFETY: `buf` is valid for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        for &b in &buf[..n as usize] {
            if b.is_ascii_digit() {
                value = value.saturating_mul(10).saturating_add(u32::from(b - b'0'));
                in_number = true;
            } else if in_number {
                // SAFETY: signals a direct child of ours (it cannot be reaped, nor its pid reused,
                // before we wait for it).
                unsafe { libc::kill(value as libc::pid_t, signal) };
                value = 0;
                in_number = false;
            }
        }
    }
    if in_number {
        // SAFETY: as above.
        unsafe { libc::kill(value as libc::pid_t, signal) };
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    true
}

/// Kills every descendant: SIGKILL to the shell's group and to every child, generation by generation
/// (a killed child's own children are re-parented to us), until no child is left.
///
/// # Safety
/// Only in the supervisor.
unsafe fn kill_all(shell: libc::pid_t, shell_status: &mut Option<c_int>) {
    let start = now_ns();
    if shell_status.is_none() {
        // SAFETY: the shell is not reaped yet, so its pid — the id of its process group — is still
        // ours and cannot name anybody else's group.
        unsafe { libc::kill(-shell, libc::SIGKILL) };
    }
    // SAFETY: in the supervisor.
    while unsafe { reap(shell, shell_status) } {
        // SAFETY: in the supervisor.
        let listed = unsafe { signal_children(libc::SIGKILL) };
        if !listed || now_ns() - start > KILL_ROUNDS_LIMIT.as_nanos() as i128 {
            return;
        }
        // SAFETY: in the supervisor.
        unsafe { wait_child_signal(1_000_000) };
    }
}

/// The supervisor's body.
///
/// # Safety
/// Only in the child of `fork`, which it never returns from. It makes async-signal-safe system calls
/// only, on memory `prepared` owns (allocated before the fork).
unsafe fn supervise(prepared: &Prepared) -> ! {
    // SAFETY: every call below is an async-signal-safe system call on valid arguments; see each note.
    unsafe {
        // Die with the thread that forked us; if it is already gone, stop now.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != prepared.parent {
            libc::_exit(1);
        }
        // Orphaned descendants come to us, not to init.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        // SIGCHLD delivered as a queued signal we wait for, with its default disposition (never
        // ignored: an ignored SIGCHLD would reap children behind our back).
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGCHLD, &action, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());

        // The probe's standard streams on 0, 1, 2 and the report on 3; every other descriptor of the
        // server closed, so the supervisor holds no file, socket or lock of the server's.
        let moved = [
            libc::fcntl(prepared.devnull.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10),
            libc::fcntl(prepared.stdout.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10),
            libc::fcntl(prepared.stderr.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10),
            libc::fcntl(prepared.status.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10),
        ];
        if moved.iter().any(|&fd| fd < 0) {
            libc::_exit(1);
        }
        for (target, &fd) in moved.iter().enumerate() {
            if libc::dup2(fd, target as c_int) < 0 {
                libc::_exit(1);
            }
        }
        if libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
            for fd in 4..65_536 {
                libc::close(fd);
            }
        }

        if libc::chdir(prepared.cwd.as_ptr()) != 0 {
            report_and_exit(TAG_SPAWN_FAILED, errno());
        }
        let mut exec_pipe = [0 as c_int; 2];
        if libc::pipe2(exec_pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            report_and_exit(TAG_SPAWN_FAILED, errno());
        }
        let sh = c"/bin/sh";
        let argv: [*const c_char; 4] = [
            sh.as_ptr(),
            c"-c".as_ptr(),
            prepared.command.as_ptr(),
            std::ptr::null(),
        ];
        let shell = libc::fork();
        if shell < 0 {
            report_and_exit(TAG_SPAWN_FAILED, errno());
        }
        if shell == 0 {
            // The shell: its own process group, the default signal state, 0–2 only.
            libc::close(REPORT_FD);
            libc::close(exec_pipe[0]);
            libc::setpgid(0, 0);
            let empty: libc::sigset_t = std::mem::zeroed();
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGPIPE, &default, std::ptr::null_mut());
            libc::execv(sh.as_ptr(), argv.as_ptr());
            let e = errno().to_le_bytes();
            libc::write(exec_pipe[1], e.as_ptr().cast(), e.len());
            libc::_exit(127);
        }
        libc::close(exec_pipe[1]);
        // Our copies of the probe's streams go, so its output ends when its last process does.
        libc::close(0);
        libc::close(1);
        libc::close(2);
        let mut exec_error = [0u8; 4];
        let mut got = 0;
        while got < exec_error.len() {
            let n = libc::read(
                exec_pipe[0],
                exec_error[got..].as_mut_ptr().cast(),
                exec_error.len() - got,
            );
            if n > 0 {
                got += n as usize;
            } else if n == 0 || errno() != libc::EINTR {
                break;
            }
        }
        libc::close(exec_pipe[0]);
        let mut shell_status: Option<c_int> = None;
        if got == exec_error.len() {
            let mut status = 0;
            libc::waitpid(shell, &mut status, 0);
            report_and_exit(TAG_SPAWN_FAILED, i32::from_le_bytes(exec_error));
        }

        let deadline = now_ns().saturating_add(prepared.timeout.as_nanos().min(i128::MAX as u128) as i128);
        let mut timed_out = false;
        loop {
            reap(shell, &mut shell_status);
            if shell_status.is_some() {
                break;
            }
            let left = deadline - now_ns();
            if left <= 0 {
                timed_out = true;
                break;
            }
            wait_child_signal(left);
        }
        if timed_out {
            // SW-135: SIGTERM to the probe's group (the shell is not reaped, so its group id is still
            // ours) and to every other descendant we can see, then the grace for them to end.
            libc::kill(-shell, libc::SIGTERM);
            signal_children(libc::SIGTERM);
            let grace_end = now_ns() + PROBE_KILL_GRACE.as_nanos() as i128;
            loop {
                if !reap(shell, &mut shell_status) {
                    break;
                }
                let left = grace_end - now_ns();
                if left <= 0 {
                    break;
                }
                wait_child_signal(left.min(10_000_000));
            }
        }
        kill_all(shell, &mut shell_status);
        if timed_out {
            report_and_exit(TAG_TIMED_OUT, 0);
        }
        let status = shell_status.unwrap_or(0);
        if libc::WIFEXITED(status) {
            report_and_exit(TAG_EXITED, libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            report_and_exit(TAG_SIGNALED, libc::WTERMSIG(status));
        }
        report_and_exit(TAG_EXITED, -1)
    }
}
