//! Issue 36 item 4: a clock-out's cost does not grow with the ledger. What the clock-out's gates need
//! of the ledger (briefed of the unit, the ledger's last byte) is kept in the ledger's index,
//! `<ledger>.index`, which names the exact state of the ledger it describes; a ledger that no longer
//! matches it (appended by another program, edited by hand, restored) is read whole again, and an index
//! that is not ours to trust (a link, a FIFO, another owner, writable by others, damaged, too long) is
//! ignored. The answers are those of a full pass in every case: a lockstep property test runs every
//! call twice, with and without the index.

use std::path::Path;

use proptest::prelude::*;
use shiftwork_seams::{Fs, Op};

use crate::support::*;

const INDEX: &str = "/.shiftwork/cp.json.log.jsonl.index";
const INDEX_TEMP: &str = "/.shiftwork/cp.json.log.jsonl.index.tmp";
const OK: &str = r#"{"result": "ok""#;
const BRIEF: &str = r#"{"result": "brief""#;

/// Three independent units, `A` the cursor: `B` and `C` clock out only when briefed.
fn three() -> Fx {
    Fx::new(&g("A(todo); B(todo); C(todo)", "A"))
}

fn last_line(fx: &Fx) -> String {
    fx.ledger_lines().last().cloned().unwrap_or_default()
}

/// Issue 36 item 4: once a call of ours wrote the ledger, the next clock-out (and clock-in) reads the
/// ledger's index and never the ledger: with every read of the ledger failing (which would read as
/// empty), `B` is still known briefed, and each call leaves the index of the ledger as it left it.
#[test]
fn issue36_item4_a_clock_out_reads_the_index_not_the_ledger() {
    let fx = three();
    assert!(fx.clock_in(Some("B")).starts_with(BRIEF));
    assert!(fx.fs.file(INDEX).is_some(), "the clock-in wrote no index");
    fx.fs.fail_path(Op::Read, LEDGER, libc::EIO);
    let answer = fx.out("B", "done");
    assert!(answer.starts_with(OK), "{answer}");
    assert!(last_line(&fx).starts_with(r#"{"briefed": true, "role": "implementer", "status": "done""#));
    // The clock-in reads the index too (no budget declared): C is briefed, then clocked out.
    assert!(fx.clock_in(Some("C")).starts_with(BRIEF));
    assert!(fx.out("C", "blocked").starts_with(OK));
    assert!(last_line(&fx).starts_with(r#"{"briefed": true"#));
    // A second clock-out of C: its brief was consumed.
    assert_eq!(
        fx.out("C", "done"),
        r#"{"result": "error", "reason": "unit C is not the cursor unit A"}"#
    );
    // The touches hold of a clock-in reads the in-flight units from the index as well: X, briefed
    // while W waited for Z, holds W's path.
    let mut doc = g("W(todo, <-Z); X(todo); Z(todo)", "Z");
    for i in [0, 1] {
        set(
            doc.as_object_mut().unwrap(),
            &format!("plan/units/{i}/touches"),
            parse(r#"["src/p.rs"]"#),
        );
    }
    let fx = Fx::new(&doc);
    assert!(fx.clock_in(Some("X")).starts_with(BRIEF));
    assert!(fx.clock_in(None).starts_with(BRIEF));
    fx.fs.fail_path(Op::Read, LEDGER, libc::EIO);
    assert!(fx.out("Z", "done").starts_with(OK));
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "error", "reason": "unit W touches src/p.rs, which X holds until its clock-out"}"#
    );
}

/// Issue 36 item 4 (THREATS "Your own past"): a ledger changed by anything but a call of ours since
/// its index was written is read whole, so the answer is the ledger's, never the index's.
#[test]
fn issue36_item4_a_ledger_changed_behind_the_index_is_read_whole() {
    // Each case: after `in(B)`, `change` edits the files; then `out(unit, done)` answers `expected`.
    type Change = fn(&Fx);
    let cases: [(&str, Change, &str, &str); 7] = [
        (
            "bantamkit's clock-in appends a brief of C",
            |fx| {
                append(fx, br#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "C"}"#)
            },
            "C",
            r#"{"briefed": true"#,
        ),
        (
            "a hand edit of the same length turns B's brief into another event",
            |fx| {
                let text = fx
                    .ledger()
                    .unwrap()
                    .replace(r#""event": "brief""#, r#""event": "brie_""#);
                fx.fs.write_file(LEDGER, text.as_bytes());
            },
            "B",
            "unit B is not the cursor unit A",
        ),
        (
            "the ledger emptied by hand",
            |fx| fx.fs.write_file(LEDGER, b""),
            "B",
            "unit B is not the cursor unit A",
        ),
        (
            "the ledger removed",
            |fx| {
                fx.fs.remove_file(Path::new(LEDGER)).unwrap();
            },
            "B",
            "unit B is not the cursor unit A",
        ),
        (
            "an accounting line of B appended by hand, without its line feed",
            |fx| {
                let mut text = fx.ledger().unwrap();
                text.push_str(r#"{"role": "implementer", "status": "blocked", "ts": "t", "unit": "B"}"#);
                fx.fs.write_file(LEDGER, text.as_bytes());
            },
            "B",
            "unit B is not the cursor unit A",
        ),
        (
            "the ledger restored from a copy: same bytes, another file",
            |fx| {
                let bytes = fx.fs.file(LEDGER).unwrap();
                fx.fs.remove_file(Path::new(LEDGER)).unwrap();
                fx.fs.write_file(LEDGER, &bytes);
            },
            "B",
            r#"{"briefed": true"#,
        ),
        (
            "the index of an older state put back (a backup)",
            |fx| {
                let old = fx.fs.file(INDEX).unwrap();
                append(
                    fx,
                    br#"{"role": "implementer", "status": "blocked", "ts": "t", "unit": "B"}"#,
                );
                // A clock-out of the cursor writes the index of the new state; the old one returns.
                assert!(fx.out("A", "blocked").starts_with(OK));
                fx.fs.write_file(INDEX, &old);
            },
            "B",
            "unit B is not the cursor unit A",
        ),
    ];
    for (name, change, unit, expected) in cases {
        let fx = three();
        assert!(fx.clock_in(Some("B")).starts_with(BRIEF), "{name}");
        assert!(fx.fs.file(INDEX).is_some(), "{name}");
        // A change behind the index comes later than the call that wrote it: the filesystem stamps it
        // with a later time (the in-memory one reads the fixture's clock). A change within the same
        // tick of the filesystem's clock and of the same length is what no stamp can see.
        fx.clock.advance(std::time::Duration::from_millis(10));
        change(&fx);
        let answer = fx.out(unit, "done");
        if expected.starts_with('{') {
            assert!(answer.starts_with(OK), "{name}: {answer}");
            assert!(last_line(&fx).starts_with(expected), "{name}: {}", last_line(&fx));
        } else {
            assert_eq!(
                answer,
                format!(r#"{{"result": "error", "reason": "{expected}"}}"#),
                "{name}"
            );
        }
    }
    // SW-16 through a rebuild: the line appended after a hand-written line without its line feed
    // starts with one.
    let fx = three();
    assert!(fx.clock_in(Some("B")).starts_with(BRIEF));
    append_raw(&fx, b"junk");
    assert!(fx.out("B", "done").starts_with(OK));
    assert!(fx.ledger().unwrap().contains("\njunk\n{\"briefed\": true"));
}

fn append(fx: &Fx, line: &[u8]) {
    let mut bytes = line.to_vec();
    bytes.push(b'\n');
    append_raw(fx, &bytes);
}

fn append_raw(fx: &Fx, bytes: &[u8]) {
    let mut text = fx.fs.file(LEDGER).unwrap_or_default();
    text.extend_from_slice(bytes);
    fx.fs.write_file(LEDGER, &text);
}

/// An index claiming that no unit is briefed, naming the ledger exactly as it is now: trusting it
/// refuses `out(B)` after `in(B)`.
fn lying_index(fx: &Fx) -> Vec<u8> {
    let meta = Fs::metadata(&fx.fs, Path::new(LEDGER)).unwrap();
    let ns = |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let head = format!(
        r#"{{"before": [], "briefed": [], "last_byte": 10, "ledger": {{"changed": {}, "dev": {}, "ino": {}, "len": {}, "modified": {}}}, "version": 1}}"#,
        ns(meta.changed),
        meta.dev,
        meta.ino,
        meta.len,
        ns(meta.modified)
    );
    let sum = shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(head.as_bytes()));
    format!("{head}\n{{\"sha256\": \"{sum}\"}}\n").into_bytes()
}

/// Issue 36 item 4 (THREATS "Sidecars", "Not a regular file", "Symlinks", "Someone else's file",
/// "Size"): an index is hostile input. One the ledger's owner alone can write, naming the ledger as it
/// is, is trusted (the control case, which proves the lie would be believed); every other is ignored
/// — the ledger read whole, the answer the ledger's — never followed for a write, never blocking.
#[test]
fn issue36_item4_an_index_not_ours_to_trust_is_ignored() {
    type Plant = fn(&Fx, &[u8]);
    let cases: [(&str, Plant, bool); 9] = [
        (
            "the control: ours, exact",
            |fx, lie| fx.fs.write_file(INDEX, lie),
            true,
        ),
        (
            "owned by another user",
            |fx, lie| {
                fx.fs.write_file(INDEX, lie);
                fx.fs.set_owner(INDEX, 1000, 1000);
            },
            false,
        ),
        (
            "writable by the group",
            |fx, lie| {
                fx.fs.write_file(INDEX, lie);
                fx.fs.set_mode(INDEX, 0o664);
            },
            false,
        ),
        (
            "a link to an index elsewhere",
            |fx, lie| {
                fx.fs.write_file("/elsewhere/index", lie);
                fx.fs.remove_file(Path::new(INDEX)).unwrap();
                fx.fs.symlink("/elsewhere/index", INDEX);
            },
            false,
        ),
        (
            "a FIFO",
            |fx, _| {
                fx.fs.remove_file(Path::new(INDEX)).unwrap();
                fx.fs.create_special(INDEX);
            },
            false,
        ),
        (
            "a directory",
            |fx, _| {
                fx.fs.remove_file(Path::new(INDEX)).unwrap();
                fx.fs.make_dirs(INDEX);
            },
            false,
        ),
        (
            "a checksum that does not match",
            |fx, lie| {
                let text = String::from_utf8(lie.to_vec())
                    .unwrap()
                    .replace("\"briefed\": []", "\"briefed\": [ ]");
                fx.fs.write_file(INDEX, text.as_bytes());
            },
            false,
        ),
        (
            "longer than an index is read",
            |fx, lie| {
                let mut text = lie.to_vec();
                text.resize(8 * 1024 * 1024 + 1, b' ');
                fx.fs.write_file(INDEX, &text);
            },
            false,
        ),
        (
            "a temp file of the index in the way, a link to a file elsewhere",
            |fx, _| {
                fx.fs.write_file("/elsewhere/victim", b"keep");
                fx.fs.symlink("/elsewhere/victim", INDEX_TEMP);
            },
            false,
        ),
    ];
    for (name, plant, trusted) in cases {
        let fx = three();
        assert!(fx.clock_in(Some("B")).starts_with(BRIEF), "{name}");
        let lie = lying_index(&fx);
        plant(&fx, &lie);
        let answer = fx.out("B", "done");
        if trusted {
            assert_eq!(
                answer, r#"{"result": "error", "reason": "unit B is not the cursor unit A"}"#,
                "{name}"
            );
            continue;
        }
        assert!(answer.starts_with(OK), "{name}: {answer}");
        assert!(last_line(&fx).starts_with(r#"{"briefed": true"#), "{name}");
        // Nothing elsewhere was written through a link.
        if let Some(elsewhere) = fx.fs.file("/elsewhere/index") {
            assert_eq!(elsewhere, lie, "{name}");
        }
        if let Some(victim) = fx.fs.file("/elsewhere/victim") {
            assert_eq!(victim, b"keep", "{name}");
        }
        assert!(fx.fs.file(INDEX_TEMP).is_none(), "{name}: the temp file is left");
    }
}

/// Issue 36 item 4: a failure or a crash while the index is written fails nothing: the clock-out is
/// committed (the index is written after it), no temp file stays once recovery ran, and the next call
/// answers from the ledger.
#[test]
fn issue36_item4_the_index_write_fails_nothing() {
    for op in [Op::Create, Op::Write, Op::Rename] {
        // The index is the clock-out's last file: its create is the third (after the lock and the
        // temp checkpoint), its write the fourth (the lock's head, the temp checkpoint, the commit
        // intent), its rename the second.
        let n = match op {
            Op::Create => 3,
            Op::Write => 4,
            _ => 2,
        };
        let fx = three();
        assert!(fx.clock_in(Some("B")).starts_with(BRIEF));
        let index_before = fx.fs.file(INDEX);
        fx.fs.fail_nth(op, n, libc::EIO);
        assert!(fx.out("B", "done").starts_with(OK), "{op:?}");
        assert_eq!(fx.fs.file(INDEX), index_before, "{op:?}: the index changed");
        assert!(fx.fs.file(INDEX_TEMP).is_none(), "{op:?}");
        assert!(fx.clock_in(Some("C")).starts_with(BRIEF), "{op:?}");
        assert!(fx.out("C", "done").starts_with(OK), "{op:?}");
        assert_eq!(
            fx.out("B", "done"),
            r#"{"result": "error", "reason": "unit B is not the cursor unit A"}"#,
            "{op:?}"
        );
    }
}

/// One call or one change of the files, for the lockstep test.
#[derive(Debug, Clone)]
enum Step {
    In(Option<usize>),
    Out(usize, usize),
    /// Another program appends a line: a brief, an accounting line, an uncommitted marker of a unit,
    /// a line of a unit outside the plan, junk, or junk without a line feed.
    Foreign(usize, usize),
    /// The last line of the ledger removed by hand.
    DropLastLine,
    /// The next clock-out fails at its rename (W5): its line withdrawn.
    FailRename,
}

const UNITS: [&str; 3] = ["A", "B", "C"];
const STATUSES: [&str; 3] = ["done", "blocked", "todo"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => proptest::option::of(0usize..3).prop_map(Step::In),
        4 => (0usize..3, 0usize..3).prop_map(|(u, s)| Step::Out(u, s)),
        2 => (0usize..3, 0usize..6).prop_map(|(u, k)| Step::Foreign(u, k)),
        1 => Just(Step::DropLastLine),
        1 => Just(Step::FailRename),
    ]
}

fn apply(fx: &Fx, step: &Step) -> String {
    match *step {
        Step::In(unit) => fx.clock_in(unit.map(|u| UNITS[u])),
        Step::Out(u, s) => fx.out(UNITS[u], STATUSES[s]),
        Step::Foreign(u, kind) => {
            let unit = UNITS[u];
            let line = match kind {
                0 => format!(r#"{{"event": "brief", "role": "implementer", "ts": "t", "unit": "{unit}"}}"#),
                1 => format!(
                    r#"{{"briefed": false, "role": "implementer", "status": "done", "ts": "t", "unit": "{unit}"}}"#
                ),
                2 => format!(
                    r#"{{"event": "uncommitted", "role": "implementer", "ts": "t", "unit": "{unit}"}}"#
                ),
                3 => String::from(r#"{"event": "brief", "unit": "Z"}"#),
                4 => String::from("junk"),
                _ => {
                    append_raw(fx, b"{\"event\": \"brief\"");
                    return String::new();
                }
            };
            append(fx, line.as_bytes());
            String::new()
        }
        Step::DropLastLine => {
            if let Some(text) = fx.ledger() {
                let kept = text.trim_end_matches('\n');
                let cut = kept.rfind('\n').map_or(0, |i| i + 1);
                fx.fs.write_file(LEDGER, &text.as_bytes()[..cut]);
            }
            String::new()
        }
        Step::FailRename => {
            fx.fs.fail_nth(Op::Rename, 1, libc::EIO);
            let answer = fx.out(UNITS[0], "blocked");
            fx.fs.clear_faults();
            answer
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// Issue 36 item 4: every call answers and writes the same with the ledger's index as without it,
    /// whatever the calls and whatever other programs and people do to the ledger between them.
    #[test]
    fn issue36_item4_the_index_answers_as_the_whole_ledger(steps in proptest::collection::vec(step(), 1..16)) {
        let with = three();
        let without = three();
        for (i, step) in steps.iter().enumerate() {
            let _ = without.fs.remove_file(Path::new(INDEX));
            let a = apply(&with, step);
            let b = apply(&without, step);
            prop_assert_eq!(&a, &b, "step {} {:?}", i, step);
            prop_assert_eq!(with.cp(), without.cp(), "step {} {:?}", i, step);
            prop_assert_eq!(with.ledger(), without.ledger(), "step {} {:?}", i, step);
        }
    }
}
