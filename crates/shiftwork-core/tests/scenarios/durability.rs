//! S-G: the lock, durability and symlinks (§13; SW-99..SW-111), with `MemFs` fault injection at every
//! write step and crash point (SW-111).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use shiftwork_core::Env;
use shiftwork_seams::{MemHost, Op};

use super::support::*;

const LOCK: &str = "/.shiftwork/cp.json.lock";
/// The lock refusal of SW-100, with what the lock tells of its holder (issue 12 item 13).
fn locked(lock: &str, holder: &str) -> String {
    format!(
        r#"{{"result": "error", "reason": "checkpoint locked by another clock-out, nothing written: {lock} (held by {holder}; if that holder is gone, the lock is stale: remove {lock})"}}"#
    )
}

/// The holder a lock file of `contents` written `age_secs` ago names.
fn holder(fx: &Fx, contents: &str, age_secs: u64) -> String {
    let mut lines = contents.split('\n');
    let pid = lines.next().unwrap();
    let mut who = match pid.parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => String::from("an unknown process"),
    };
    if let Some(host) = lines.next().and_then(|l| l.strip_prefix("host ")) {
        who.push_str(&format!(" on host {host}"));
    }
    let since = shiftwork_seams::Clock::now(&fx.clock) - chrono::Duration::seconds(age_secs as i64);
    format!("{who} since {}", shiftwork_core::records::timestamp(since))
}

fn ago(fx: &Fx, secs: u64) -> SystemTime {
    let now: SystemTime = fx.clock.now_system();
    now - Duration::from_secs(secs)
}

trait NowSystem {
    fn now_system(&self) -> SystemTime;
}

impl NowSystem for shiftwork_seams::ManualClock {
    fn now_system(&self) -> SystemTime {
        shiftwork_seams::Clock::now(self).into()
    }
}

fn check_lock(contents: &str, age_secs: u64, alive: Option<u32>, taken_over: bool) {
    let fx = Fx::new(&ex());
    if let Some(pid) = alive {
        fx.host.set_alive(pid, true);
    }
    fx.fs.write_file(LOCK, contents.as_bytes());
    fx.fs.set_mtime(LOCK, ago(&fx, age_secs));
    let expected = locked(LOCK, &holder(&fx, contents, age_secs));
    let start = shiftwork_seams::Clock::monotonic(&fx.clock);
    let answer = fx.out("U3", "done");
    if taken_over {
        assert!(
            answer.starts_with(r#"{"result": "ok""#),
            "{contents:?} {age_secs}: {answer}"
        );
        assert!(fx.fs.file(LOCK).is_none(), "lock left behind");
    } else {
        assert_eq!(answer, expected, "{contents:?} {age_secs}");
        assert!(shiftwork_seams::Clock::monotonic(&fx.clock) - start >= Duration::from_millis(5000));
        assert_eq!(fx.fs.file(LOCK).unwrap(), contents.as_bytes());
        assert_eq!(fx.ledger(), None);
    }
}

#[test]
fn g1_lock_staleness_sw100_sw101() {
    check_lock(&format!("777\nhost {HOST}\n"), 60, Some(777), false);
    check_lock(&format!("777\nhost {HOST}\n"), 1, Some(777), false);
    check_lock(&format!("778\nhost {HOST}\n"), 31, None, true);
    check_lock(&format!("778\nhost {HOST}\n"), 10, None, false);
    check_lock("123\nhost other-host\n", 600, None, false);
    check_lock("778\n", 31, None, true);
    check_lock("not a pid\n", 31, None, true);
}

#[test]
fn g1_lock_released_only_when_ours_sw102() {
    let fx = Fx::new(&ex());
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    assert!(fx.fs.file(LOCK).is_none());
    assert!(fx.fs.file("/.shiftwork/cp.json.lock.break").is_none());
}

/// A second process after a crash: another pid, the crashed one dead, time past the staleness age.
fn after_crash(fx: &Fx) -> Env {
    fx.fs.restart();
    fx.clock.advance(Duration::from_secs(31));
    let host = MemHost::new(PID + 1, HOST);
    Env::new(
        Arc::new(fx.fs.clone()),
        Arc::new(fx.clock.clone()),
        Arc::new(host),
    )
}

fn leftovers(fx: &Fx) -> Vec<String> {
    fx.fs
        .paths()
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".tmp") || p.contains(".lock"))
        .collect()
}

/// The files a clean `in(); out(U3, done)` leaves, for comparison.
fn reference() -> (Vec<u8>, String, Vec<u8>, String) {
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    let before = (fx.cp(), fx.ledger().unwrap());
    fx.out("U3", "done");
    (before.0, before.1, fx.cp(), fx.ledger().unwrap())
}

#[test]
fn g3_crash_at_every_step_then_recovery_sw86_sw107_sw110_sw111_sw144() {
    let (cp_before, ledger_before, cp_after, ledger_after) = reference();
    let mut crashes = 0;
    for op in Op::MUTATING {
        for n in 1..=12 {
            let fx = Fx::new(&ex());
            fx.clock_in(None);
            fx.fs.crash_at(op, n);
            let _ = fx.out("U3", "done");
            if !fx.fs.crashed() {
                continue;
            }
            crashes += 1;
            let env = after_crash(&fx);
            // Any call that takes the lock breaks the dead holder's lock and recovers first.
            let probe = shiftwork_core::clock_out_arguments(&env, &out_args("U99", "done"));
            assert_eq!(
                compact(&probe),
                r#"{"result": "error", "reason": "unit U99 is not in the plan"}"#,
                "{op:?} {n}"
            );
            let state = (fx.cp(), fx.ledger().unwrap_or_default());
            let rolled_back = state == (cp_before.clone(), ledger_before.clone());
            let rolled_forward = state == (cp_after.clone(), ledger_after.clone());
            assert!(
                rolled_back || rolled_forward,
                "crash at {op:?} #{n}: files are neither before nor after"
            );
            assert!(
                leftovers(&fx).is_empty(),
                "crash at {op:?} #{n} left {:?}",
                leftovers(&fx)
            );
            // Recovery is idempotent.
            let again = shiftwork_core::clock_out_arguments(&env, &out_args("U99", "done"));
            assert_eq!(compact(&again), compact(&probe));
            assert_eq!((fx.cp(), fx.ledger().unwrap_or_default()), state);
        }
    }
    assert!(crashes >= 10, "only {crashes} crash points reached");
}

#[test]
fn f11_g3_failure_at_every_step_writes_all_or_nothing_sw106_sw107_sw108() {
    let (cp_before, ledger_before, cp_after, ledger_after) = reference();
    let mut failures = 0;
    for op in Op::ALL {
        for n in 1..=12 {
            let fx = Fx::new(&ex());
            fx.clock_in(None);
            fx.fs.fail_nth(op, n, libc::EIO);
            let answer = fx.out("U3", "done");
            fx.fs.clear_faults();
            let state = (fx.cp(), fx.ledger().unwrap_or_default());
            if answer.starts_with(r#"{"result": "ok""#) {
                // A failed read of the ledger reads as empty (SW-94), so only writes must match exactly.
                assert!(state.0 == cp_after, "{op:?} #{n}: checkpoint differs");
                if Op::MUTATING.contains(&op) {
                    assert!(state.1 == ledger_after, "{op:?} #{n}: ledger differs");
                }
            } else {
                failures += 1;
                assert!(
                    state == (cp_before.clone(), ledger_before.clone()),
                    "{op:?} #{n}: {answer}"
                );
                assert!(
                    answer.contains("accounting log unwritable, checkpoint untouched: ")
                        || answer.contains("checkpoint unwritable, last log line uncommitted: ")
                        || answer.contains("checkpoint unreadable: "),
                    "{op:?} #{n}: {answer}"
                );
                // A retry without faults succeeds and reads briefed: true.
                assert!(
                    fx.out("U3", "done").starts_with(r#"{"result": "ok""#),
                    "{op:?} #{n}: retry"
                );
                assert!(
                    fx.ledger_lines()
                        .last()
                        .unwrap()
                        .starts_with(r#"{"briefed": true"#)
                );
            }
            assert!(leftovers(&fx).iter().all(|p| !p.ends_with(".tmp")), "{op:?} #{n}");
        }
    }
    assert!(failures >= 8);
}

#[test]
fn f11_named_write_failures_sw106() {
    let cases = [
        (
            Op::Rename,
            "checkpoint unwritable, last log line uncommitted: [Errno 5] Input/output error: '.shiftwork/cp.json'",
        ),
        (
            Op::Create,
            "checkpoint unwritable, last log line uncommitted: [Errno 5] Input/output error: '.shiftwork/cp.json'",
        ),
        (
            Op::Write,
            "checkpoint unwritable, last log line uncommitted: [Errno 5] Input/output error: '.shiftwork/cp.json'",
        ),
    ];
    for (op, reason) in cases {
        let fx = Fx::new(&ex());
        fx.clock_in(None);
        let before = (fx.cp(), fx.ledger());
        // Skip the lock's own create and write: fail the temp file's.
        let n = if op == Op::Rename { 1 } else { 2 };
        fx.fs.fail_nth(op, n, libc::EIO);
        assert_eq!(
            fx.out("U3", "done"),
            format!(r#"{{"result": "error", "reason": "{reason}"}}"#),
            "{op:?}"
        );
        assert_eq!((fx.cp(), fx.ledger()), before);
    }
    // A failing ledger fsync (W4): the temp file's and the commit intent's fsyncs come first.
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    let before = (fx.cp(), fx.ledger());
    fx.fs.fail_nth(Op::Fsync, 3, libc::EIO);
    assert_eq!(
        fx.out("U3", "done"),
        r#"{"result": "error", "reason": "accounting log unwritable, checkpoint untouched: [Errno 5] Input/output error: '.shiftwork/cp.json.log.jsonl'"}"#
    );
    assert_eq!((fx.cp(), fx.ledger()), before);
}

#[test]
fn g4_symlinked_checkpoint_sw91_sw99_sw106() {
    let fx = Fx::empty();
    fx.fs.write_file(
        "/real/cp.json",
        shiftwork_core::json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fx.fs.set_mode("/real/cp.json", 0o600);
    fx.fs.symlink("../real/cp.json", CP_ABS);
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    assert_eq!(
        shiftwork_seams::Fs::read_link(&fx.fs, Path::new(CP_ABS)).unwrap(),
        Path::new("../real/cp.json")
    );
    assert!(String::from_utf8(fx.fs.file("/real/cp.json").unwrap()).unwrap().contains("\"status\": \"done\",\n        \"role\": \"implementer\",\n        \"depends_on\": [\n          \"U1\""));
    assert_eq!(
        shiftwork_seams::Fs::metadata(&fx.fs, Path::new("/real/cp.json"))
            .unwrap()
            .mode,
        0o600
    );
    assert!(fx.ledger().is_some());
    let real: Vec<_> = fx
        .fs
        .paths()
        .into_iter()
        .filter(|p| p.starts_with("/real"))
        .collect();
    assert_eq!(real, [Path::new("/real"), Path::new("/real/cp.json")]);
}

#[test]
fn g_lock_file_uses_the_resolved_target_sw99() {
    let fx = Fx::empty();
    fx.fs.write_file(
        "/real/cp.json",
        shiftwork_core::json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fx.fs.symlink("../real/cp.json", CP_ABS);
    fx.fs
        .write_file("/real/cp.json.lock", format!("777\nhost {HOST}\n").as_bytes());
    // Issue 37 item 3: the lock's time is the Env's clock's, which the MemFs reads.
    let written = shiftwork_core::records::timestamp(shiftwork_seams::Clock::now(&fx.clock));
    fx.host.set_alive(777, true);
    assert_eq!(
        fx.out("U3", "done"),
        locked(
            "/real/cp.json.lock",
            &format!("process 777 on host {HOST} since {written}")
        )
    );
}

fn out_answer(fx: &Fx) -> String {
    fx.out("U3", "done")
}

/// SW-105: without the lock (its creation failed other than "exists") a clock-out never commits; it
/// goes only as far as 0.36.2's sentence needs and leaves nothing behind.
#[test]
fn without_the_lock_a_clock_out_never_commits_sw105() {
    // The lock cannot be created, everything else can: the lock's error, at the checkpoint path.
    let fx = Fx::new(&ex());
    fx.fs.fail_path(Op::Create, LOCK, libc::EACCES);
    let before = fx.snapshot();
    assert_eq!(
        out_answer(&fx),
        r#"{"result": "error", "reason": "checkpoint unwritable, last log line uncommitted: [Errno 13] Permission denied: '.shiftwork/cp.json'"}"#
    );
    assert_eq!(fx.snapshot(), before);
    // A read-only directory without a ledger: the ledger cannot be created either.
    let fx = Fx::new(&ex());
    fx.fs.fail_path(Op::Create, LOCK, libc::EROFS);
    fx.fs.fail_path(Op::Create, LEDGER, libc::EROFS);
    let before = fx.snapshot();
    assert_eq!(
        out_answer(&fx),
        r#"{"result": "error", "reason": "accounting log unwritable, checkpoint untouched: [Errno 30] Read-only file system: '.shiftwork/cp.json.log.jsonl'"}"#
    );
    assert_eq!(fx.snapshot(), before);
    // A read-only directory with a writable ledger: the temp file cannot be created.
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    fx.fs.fail_path(Op::Create, LOCK, libc::EROFS);
    fx.fs.fail_nth(Op::Create, 2, libc::EROFS);
    let before = fx.snapshot();
    assert_eq!(
        out_answer(&fx),
        r#"{"result": "error", "reason": "checkpoint unwritable, last log line uncommitted: [Errno 30] Read-only file system: '.shiftwork/cp.json'"}"#
    );
    assert_eq!(fx.snapshot(), before);
}

/// SW-109: the temp file is `<T's name>.<pid>.<8 lowercase hex>.tmp`, created exclusively beside `T`.
#[test]
fn temp_names_carry_the_pid_and_eight_hex_digits_sw109() {
    let mut names = std::collections::HashSet::new();
    for _ in 0..20 {
        let fx = Fx::new(&ex());
        fx.fs.crash_at(Op::Rename, 1);
        let _ = fx.out("U3", "done");
        assert!(fx.fs.crashed());
        let temps: Vec<String> = fx
            .fs
            .paths()
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| p.ends_with(".tmp"))
            .collect();
        assert_eq!(temps.len(), 1, "{temps:?}");
        let rest = temps[0]
            .strip_prefix(&format!("/.shiftwork/cp.json.{PID}."))
            .and_then(|r| r.strip_suffix(".tmp"))
            .unwrap_or_else(|| panic!("{}", temps[0]));
        assert!(
            rest.len() == 8 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "{rest}"
        );
        names.insert(rest.to_owned());
    }
    assert!(names.len() > 15, "the suffixes are not random: {names:?}");
}

/// SW-73, SW-132: two clock-ins of ready units at once with room for one: the second waits for the
/// lock, reads the first one's brief line under it and is refused by the budget.
#[test]
fn clock_ins_judge_the_budget_under_the_lock_sw73() {
    let mut doc = g("X(todo); Y(todo)", "X");
    set(
        doc.as_object_mut().unwrap(),
        "job/budget",
        parse(r#"{"units": 1}"#),
    );
    let fx = Fx::new(&doc);
    fx.fs.write_file(LEDGER, b"");
    let env = Arc::new(Env::new(
        Arc::new(fx.fs.clone()),
        Arc::new(shiftwork_seams::SystemClock::new()),
        Arc::new(fx.host.clone()),
    ));
    let hold = fx.fs.hold_reads(LEDGER);
    let first = {
        let env = Arc::clone(&env);
        std::thread::spawn(move || {
            compact(&shiftwork_core::clock_in_arguments(
                &env,
                std::path::Path::new(CP),
                Some("X"),
            ))
        })
    };
    assert!(
        hold.wait_entered(Duration::from_secs(10)),
        "X never read the ledger"
    );
    // X holds the lock while it reads the ledger; Y now waits for it.
    let second = {
        let env = Arc::clone(&env);
        std::thread::spawn(move || {
            compact(&shiftwork_core::clock_in_arguments(
                &env,
                std::path::Path::new(CP),
                Some("Y"),
            ))
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(fx.fs.file(LOCK).is_some(), "X does not hold the lock");
    hold.release();
    let (x, y) = (first.join().unwrap(), second.join().unwrap());
    assert!(x.starts_with(r#"{"result": "brief", "unit": {"id": "X""#), "{x}");
    assert_eq!(
        y,
        r#"{"result": "error", "reason": "budget units spent: 1 of 1; raise job.budget or stop the job"}"#
    );
    assert_eq!(fx.ledger_lines().len(), 1);
    assert!(fx.fs.file(LOCK).is_none());
}

/// SW-73: when the lock cannot be had within its wait, the clock-in goes on without it; probes never
/// run under the lock.
#[test]
fn clock_in_without_the_lock_is_best_effort_and_probes_run_outside_it_sw73() {
    let fx = Fx::new(&ex());
    fx.host.set_alive(777, true);
    fx.fs.write_file(LOCK, format!("777\nhost {HOST}\n").as_bytes());
    let start = shiftwork_seams::Clock::monotonic(&fx.clock);
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert!(shiftwork_seams::Clock::monotonic(&fx.clock) - start >= Duration::from_millis(5000));
    assert_eq!(fx.ledger_lines().len(), 1);
    assert_eq!(
        fx.fs.file(LOCK).unwrap(),
        format!("777\nhost {HOST}\n").as_bytes()
    );

    let relay = parse(r#"[{"q": "CI?", "kind": "relay", "probe": "check"}]"#);
    let fx = Fx::new(&ex_with(|d| set(d, "handoff/open_questions", relay)));
    let fs = fx.fs.clone();
    fx.host
        .script_probes(move |_, _, _| shiftwork_seams::ProbeOutcome {
            status: if fs.paths().iter().any(|p| p.to_string_lossy().ends_with(".lock")) {
                shiftwork_seams::ProbeStatus::Exited(99)
            } else {
                shiftwork_seams::ProbeStatus::Exited(0)
            },
            stdout: vec![],
            stderr: vec![],
        });
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert_eq!(fx.host.probes_run(), ["check"]);
}
