use std::path::Path;
use std::time::{Duration, Instant};

use shiftwork_seams::{Host, OsHost, ProbeStatus};

#[test]
fn os_host_knows_itself_and_the_dead() {
    let host = OsHost;
    assert_eq!(host.pid(), std::process::id());
    assert!(host.is_pid_alive(host.pid()));
    assert!(!host.hostname().is_empty());
    // A child that has exited and been reaped no longer exists.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    assert!(!host.is_pid_alive(pid));
    assert!(!host.is_pid_alive(0));
}

#[test]
fn probe_reports_exit_code_output_and_runs_in_cwd() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "x").unwrap();
    let out = OsHost.run_probe(
        "test -f marker && echo found; echo err >&2; exit 3",
        dir.path(),
        Duration::from_secs(10),
    );
    assert_eq!(out.status, ProbeStatus::Exited(3));
    assert_eq!(out.stdout, b"found\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn probe_past_its_timeout_is_killed_with_its_children() {
    let start = Instant::now();
    // The shell starts a grandchild that would keep the pipes open; the group kill ends both.
    let out = OsHost.run_probe(
        "sleep 30 & sleep 30; echo never",
        Path::new("/"),
        Duration::from_millis(300),
    );
    assert_eq!(out.status, ProbeStatus::TimedOut);
    assert!(out.stdout.is_empty());
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "the probe was not killed: {:?}",
        start.elapsed()
    );
}

#[test]
fn a_timed_out_probe_gets_sigterm_first_and_sigkill_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    // A probe that handles SIGTERM by leaving a mark and exiting: it never needs the SIGKILL.
    let polite = OsHost.run_probe(
        "trap 'echo term > got-term; exit 0' TERM; while :; do sleep 0.05; done",
        dir.path(),
        Duration::from_millis(300),
    );
    assert_eq!(polite.status, ProbeStatus::TimedOut);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("got-term")).unwrap(),
        "term\n"
    );
    // A probe that ignores SIGTERM is killed once the grace has passed.
    let start = Instant::now();
    let stubborn = OsHost.run_probe(
        "trap '' TERM; while :; do sleep 0.05; done",
        dir.path(),
        Duration::from_millis(300),
    );
    assert_eq!(stubborn.status, ProbeStatus::TimedOut);
    assert!(
        start.elapsed() >= shiftwork_seams::PROBE_KILL_GRACE,
        "SIGKILL came before the grace: {:?}",
        start.elapsed()
    );
}

#[test]
fn probe_output_is_capped() {
    let out = OsHost.run_probe(
        "head -c 3000000 /dev/zero",
        Path::new("/"),
        Duration::from_secs(20),
    );
    assert!(out.succeeded());
    assert_eq!(out.stdout.len(), shiftwork_seams::PROBE_OUTPUT_CAP);
}

#[test]
fn probe_in_a_missing_directory_fails_to_spawn() {
    let out = OsHost.run_probe(
        "true",
        Path::new("/nonexistent/dir/for/probe"),
        Duration::from_secs(5),
    );
    assert_eq!(
        out.status,
        ProbeStatus::SpawnFailed(String::from("No such file or directory"))
    );
}

/// True while a process with this id exists (a zombie counts: it is not reaped yet).
fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for the process's existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn pid_in(dir: &Path, name: &str) -> i32 {
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Issue 12 item 4: a probe is over when its shell exits, whatever it left running — a background
/// job holding the output pipe, one in a new session — and what it left running is killed.
#[test]
fn a_probe_that_leaves_processes_behind_ends_with_its_shell_issue12_item4() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = OsHost.run_probe(
        "sleep 45 & echo $! > bg; setsid sleep 45 & echo $! > session; echo done; exit 0",
        dir.path(),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, ProbeStatus::Exited(0));
    assert_eq!(out.stdout, b"done\n");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    for name in ["bg", "session"] {
        let pid = pid_in(dir.path(), name);
        assert!(!exists(pid), "{name} process {pid} outlived its probe");
    }
}

/// Issue 12 item 4: at the deadline every descendant dies — one in a new session, one whose parent
/// already exited (a double fork) — not only the probe's process group.
#[test]
fn a_probe_past_its_deadline_loses_every_descendant_issue12_item4() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = OsHost.run_probe(
        "setsid sh -c 'echo $$ > session; exec sleep 45' & (sleep 45 & echo $! > orphan) ; sleep 45",
        dir.path(),
        Duration::from_millis(500),
    );
    assert_eq!(out.status, ProbeStatus::TimedOut);
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    for name in ["session", "orphan"] {
        let pid = pid_in(dir.path(), name);
        assert!(!exists(pid), "{name} process {pid} outlived its probe");
    }
}
