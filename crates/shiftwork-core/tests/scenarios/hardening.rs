//! Issue 12: hostile input as normal input. One test per class of input that broke, named after the
//! class, each failing on the code before the fix.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shiftwork_core::Env;
use shiftwork_core::json;

use super::support::*;

/// A repository on the real filesystem holding `.git/` and `.shiftwork/cp.json` with EX.
fn os_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&ex())).unwrap();
    (dir, cp)
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Item 7: a checkpoint path that leads to a FIFO, a device or a file past 256 MB is refused at once —
/// never blocking, never reading the device, never keeping the checkpoint's lock.
#[test]
fn checkpoint_paths_that_are_not_regular_files_are_refused_without_blocking_issue12_item7() {
    let (dir, _) = os_repo();
    let env = Env::os();
    let fifo = dir.path().join(".shiftwork/fifo.json");
    mkfifo(&fifo);
    let big = dir.path().join(".shiftwork/big.json");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(shiftwork_core::checkpoint::MAX_CHECKPOINT_BYTES + 1)
        .unwrap();
    drop(file);
    let shown = |p: &Path| p.to_string_lossy().into_owned();
    let cases: [(PathBuf, String); 4] = [
        (fifo.clone(), format!("Not a regular file: '{}'", shown(&fifo))),
        (
            PathBuf::from("/dev/zero"),
            String::from("Not a regular file: '/dev/zero'"),
        ),
        (
            PathBuf::from("/dev/stdin"),
            String::from("Not a regular file: '/dev/stdin'"),
        ),
        (
            big.clone(),
            format!("[Errno 27] File too large: '{}'", shown(&big)),
        ),
    ];
    for (path, tail) in cases {
        let cp = shown(&path);
        let expected = compact(&shiftwork_core::answer::refusal(&format!(
            "checkpoint unreadable: {tail}"
        )));
        let start = Instant::now();
        assert_eq!(
            compact(&shiftwork_core::status(&env, std::path::Path::new(&cp), None)),
            expected,
            "{cp}"
        );
        assert_eq!(
            compact(&shiftwork_core::plan_checkpoint(&env, std::path::Path::new(&cp))),
            expected,
            "{cp}"
        );
        assert_eq!(
            compact(&shiftwork_core::clock_in_arguments(
                &env,
                std::path::Path::new(&cp),
                None
            )),
            expected,
            "{cp}"
        );
        let mut args = out_args("U3", "done");
        args.checkpoint = cp.clone().into();
        // Twice: the first refusal released the lock, so the second is not a lock timeout.
        for _ in 0..2 {
            assert_eq!(
                compact(&shiftwork_core::clock_out_arguments(&env, &args)),
                expected,
                "{cp}"
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{cp} took {:?}",
            start.elapsed()
        );
    }
    assert!(!dir.path().join(".shiftwork/fifo.json.lock").exists());
    assert!(!dir.path().join(".shiftwork/fifo.json.log.jsonl").exists());
}

fn search_of(env: &Env, checkpoint: &str, query: &str) -> String {
    compact(
        shiftwork_core::status(env, std::path::Path::new(checkpoint), Some(query))
            .answer()
            .get("search")
            .unwrap(),
    )
}

/// Item 1: the status search reads only a real archive directory inside the repository — an archive,
/// or a shiftwork directory, that is a link out of it finds nothing — and reads a bounded amount: a
/// 3 GB file or a FIFO in the archive answers at once.
#[test]
fn status_search_over_an_archive_that_leads_out_of_the_repository_or_past_its_bound_issue12_item1() {
    let none = |q: &str| format!(r#"{{"query": "{q}", "matches": [], "truncated": false}}"#);
    // `archive` itself a link to a directory of secrets.
    let fx = Fx::new(&ex());
    fx.fs.write_file("/etc/shadow", b"root:$6$secret\n");
    fx.fs.symlink("/etc", "/.shiftwork/archive");
    assert_eq!(search_of(&fx.env, CP, "root:"), none("root:"));
    // A link on the way: the shiftwork directory itself links out of the repository.
    let fx = Fx::empty();
    fx.fs.make_dirs("/repo/.git");
    fx.fs.write_file(
        "/home/u/.shiftwork/cp.json",
        json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fx.fs
        .write_file("/home/u/.shiftwork/archive/creds.txt", b"token=hunter2\n");
    fx.fs.symlink("/home/u/.shiftwork", "/repo/.shiftwork");
    assert_eq!(
        search_of(&fx.env, "/repo/.shiftwork/cp.json", "token"),
        none("token")
    );
    // A linked directory below a real archive is not followed either (SW-139).
    let fx = Fx::new(&ex());
    fx.fs.write_file("/.shiftwork/archive/ok.txt", b"token here\n");
    fx.fs.write_file("/outside/deep/x.txt", b"token there\n");
    fx.fs.symlink("/outside", "/.shiftwork/archive/sub");
    assert_eq!(
        search_of(&fx.env, CP, "token"),
        r#"{"query": "token", "matches": [{"file": "ok.txt", "line": 1, "text": "token here"}], "truncated": false}"#
    );

    // On the real filesystem: a FIFO is skipped without blocking, a 3 GB file is read only up to the
    // search's bound, and the answer says the search stopped.
    let (dir, cp) = os_repo();
    let archive = dir.path().join(".shiftwork/archive");
    std::fs::create_dir_all(&archive).unwrap();
    mkfifo(&archive.join("a-fifo"));
    let mut big = std::fs::File::create(archive.join("b-big.log")).unwrap();
    std::io::Write::write_all(&mut big, b"needle at the start\n").unwrap();
    big.set_len(3 * 1024 * 1024 * 1024).unwrap();
    drop(big);
    std::fs::write(archive.join("c-after.log"), b"needle after the bound\n").unwrap();
    let start = Instant::now();
    let found = search_of(&Env::os(), &cp.to_string_lossy(), "needle");
    assert_eq!(
        found,
        r#"{"query": "needle", "matches": [{"file": "b-big.log", "line": 1, "text": "needle at the start"}], "truncated": true}"#
    );
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

/// Item 1: an archive of more entries than one search lists stops at the bound and says so.
#[test]
fn status_search_over_an_archive_of_too_many_entries_stops_at_its_bound_issue12_item1() {
    let fx = Fx::new(&ex());
    for i in 0..=shiftwork_core::search::MAX_ENTRIES {
        fx.fs
            .write_file(format!("/.shiftwork/archive/d{}/f{i}", i % 100), b"x\n");
    }
    assert!(search_of(&fx.env, CP, "needle").ends_with(r#""truncated": true}"#));
}

/// Item 3: probes are opt-in. An environment built without asking for them runs no probe: relay
/// questions escalate like decision questions (SW-72's no-probe path), naming the first relay.
#[test]
fn relay_questions_in_an_environment_without_probes_escalate_unrun_issue12_item3() {
    let relays = parse(
        r#"[{"q": "Built?", "kind": "relay", "probe": "touch /pwned"}, {"q": "Green?", "kind": "relay", "probe": "true"}]"#,
    );
    let fx = Fx::new(&ex_with(|d| set(d, "handoff/open_questions", relays)));
    let default = Env::new(
        std::sync::Arc::new(fx.fs.clone()),
        std::sync::Arc::new(fx.clock.clone()),
        std::sync::Arc::new(fx.host.clone()),
    );
    assert!(!default.probes);
    assert_eq!(
        compact(&shiftwork_core::clock_in_arguments(
            &default,
            std::path::Path::new(CP),
            None
        )),
        r#"{"result": "escalate", "reason": "open question: Built?", "open_questions": [{"q": "Built?", "kind": "relay", "probe": "touch /pwned"}, {"q": "Green?", "kind": "relay", "probe": "true"}]}"#
    );
    assert!(fx.host.probes_run().is_empty());
    assert!(!shiftwork_core::Env::os().probes);
}

/// Item 4: the relay probes of one clock-in share one 30 s budget — each gets what is left, and a
/// relay reached with nothing left counts as timed out without running — so several slow relays never
/// add up their timeouts.
#[test]
fn slow_relays_of_one_clock_in_share_one_probe_budget_issue12_item4() {
    let relays = parse(
        r#"[{"q": "A?", "kind": "relay", "probe": "a"}, {"q": "B?", "kind": "relay", "probe": "b"}, {"q": "C?", "kind": "relay", "probe": "c"}]"#,
    );
    let check = |takes: u64, expected: &str, timeouts: &[u64]| {
        let fx = Fx::new(&ex_with(|d| set(d, "handoff/open_questions", relays.clone())));
        let clock = fx.clock.clone();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = std::sync::Arc::clone(&seen);
        // Each probe takes `takes` seconds and succeeds, or is killed at its timeout.
        fx.host.script_probes(move |_, _, timeout| {
            record.lock().unwrap().push(timeout.as_secs());
            let needed = Duration::from_secs(takes);
            let status = if needed <= timeout {
                clock.advance(needed);
                shiftwork_seams::ProbeStatus::Exited(0)
            } else {
                clock.advance(timeout);
                shiftwork_seams::ProbeStatus::TimedOut
            };
            shiftwork_seams::ProbeOutcome {
                status,
                stdout: vec![],
                stderr: vec![],
            }
        });
        let start = shiftwork_seams::Clock::monotonic(&fx.clock);
        let answer = fx.clock_in(None);
        assert!(answer.contains(expected), "{takes}: {answer}");
        assert_eq!(*seen.lock().unwrap(), timeouts, "{takes}");
        assert!(shiftwork_seams::Clock::monotonic(&fx.clock) - start <= shiftwork_core::PROBE_TIMEOUT);
    };
    // 20 s each: the second gets the 10 s left and is killed there.
    check(20, r#""probe": {"q": "B?", "exit": null}}"#, &[30, 10]);
    // 15 s each: two fit exactly; the third is reached with nothing left and does not run.
    check(15, r#""probe": {"q": "C?", "exit": null}}"#, &[30, 15]);
    // 5 s each: all three answer within the budget.
    check(5, r#"{"result": "brief""#, &[30, 25, 20]);
}

/// Item 13: a lock whose holder's pid was reused by another live process (a container restart) is
/// stale: the lock records its holder's start time, and a live process with that pid that started at
/// another time is not its holder. The lock stays readable by 0.36.2 (its first line is the pid), and
/// the refusal for a live holder says who holds it, since when, and which file to remove.
#[test]
fn a_lock_whose_holders_pid_was_reused_is_stale_issue12_item13() {
    const LOCK: &str = "/.shiftwork/cp.json.lock";
    let check = |recorded: &str, live_start: Option<u64>, expected_start: &str| {
        let fx = Fx::new(&ex());
        fx.host.set_alive(777, true);
        if let Some(start) = live_start {
            fx.host.set_started(777, start);
        }
        fx.fs
            .write_file(LOCK, format!("777\nhost {HOST}\n{recorded}").as_bytes());
        let written: std::time::SystemTime = shiftwork_seams::Clock::now(&fx.clock).into();
        fx.fs.set_mtime(LOCK, written - Duration::from_secs(60));
        let answer = fx.out("U3", "done");
        assert!(
            answer.starts_with(expected_start),
            "{recorded:?} {live_start:?}: {answer}"
        );
        answer
    };
    // The live process 777 started at 200; the lock's holder started at 100: the pid was reused.
    check("started 100\n", Some(200), r#"{"result": "ok""#);
    // The same start: the holder lives. So does a holder whose start the host cannot tell, and a lock
    // that records none (0.36.2's, or an older one of ours).
    let refused = check("started 100\n", Some(100), r#"{"result": "error""#);
    assert_eq!(
        refused,
        format!(
            r#"{{"result": "error", "reason": "checkpoint locked by another clock-out, nothing written: {LOCK} (held by process 777 on host {HOST} since 2026-01-02T03:03:05Z; if that holder is gone, the lock is stale: remove {LOCK})"}}"#
        )
    );
    check("started 100\n", None, r#"{"result": "error""#);
    check("", Some(200), r#"{"result": "error""#);

    // The lock a clock-out takes records the start time when the host can tell it.
    let fx = Fx::new(&ex());
    fx.host.set_started(PID, 4321);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let record = std::sync::Arc::clone(&seen);
    let fs = fx.fs.clone();
    fx.fs.write_file("/briefs/F1.md", b"# F1");
    // The lock's bytes as the commit sees them: read while the clock-out holds it (at its ledger write).
    let hold = fx.fs.hold_reads(CP_ABS);
    let env = std::sync::Arc::new(fx.env);
    let worker = {
        let env = std::sync::Arc::clone(&env);
        std::thread::spawn(move || {
            compact(&shiftwork_core::clock_out_arguments(
                &env,
                &out_args("U3", "done"),
            ))
        })
    };
    assert!(hold.wait_entered(Duration::from_secs(10)));
    *record.lock().unwrap() = fs.file(LOCK);
    drop(hold);
    assert!(worker.join().unwrap().starts_with(r#"{"result": "ok""#));
    assert_eq!(
        seen.lock().unwrap().as_deref(),
        Some(format!("{PID}\nhost {HOST}\nstarted 4321\n").as_bytes())
    );
}
