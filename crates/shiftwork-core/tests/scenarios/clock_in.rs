//! S-D and S-E: status search and `shiftwork_clock_in` (§8, §9, §12; SW-65..SW-75, SW-92, SW-93).

use seams::{ProbeOutcome, ProbeStatus};
use shiftwork_core::json::Json;

use super::support::*;

const E1_BRIEF: &str = r#"{"result": "brief", "unit": {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, "role": "implementer", "invariants": ["keep the API stable", "no new dependencies"], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": ["do not touch vendor/"]}, "do_not": ["do not touch vendor/"], "files": [{"path": "docs/spec.md", "role": "spec"}]}"#;
const BRIEF_U3: &str =
    r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#;

fn err(reason: &str) -> String {
    format!(r#"{{"result": "error", "reason": "{reason}"}}"#)
}

#[test]
fn e1_brief_and_its_line_sw70_sw74_sw92() {
    let fx = Fx::new(&ex());
    let before = fx.cp();
    assert_eq!(fx.clock_in(None), E1_BRIEF);
    assert_eq!(fx.ledger().unwrap(), format!("{BRIEF_U3}\n"));
    assert_eq!(fx.clock_in(Some("U3")), E1_BRIEF);
    assert_eq!(fx.ledger().unwrap(), format!("{BRIEF_U3}\n{BRIEF_U3}\n"));
    assert_eq!(fx.cp(), before);
    // The brief line is best-effort (SW-93).
    let fx = Fx::new(&ex());
    fx.fs.create_dir_all(LEDGER);
    let before = fx.snapshot();
    assert_eq!(fx.clock_in(None), E1_BRIEF);
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn e2_escalate_and_success_sw67_sw68_sw71() {
    let questions = |d: &mut shiftwork_core::json::Object| {
        set(
            d,
            "handoff/open_questions",
            Json::strings(["Which layer?", "Second?"]),
        )
    };
    let escalate = r#"{"result": "escalate", "reason": "open question: Which layer?", "open_questions": ["Which layer?", "Second?"]}"#;
    let all_done = |d: &mut shiftwork_core::json::Object| {
        for i in 0..3 {
            set(d, &format!("plan/units/{i}/status"), Json::str("done"));
        }
    };
    let fx = Fx::new(&ex_with(questions));
    assert_eq!(fx.clock_in(None), escalate);
    assert_eq!(fx.clock_in(Some("U4")), escalate);
    assert_eq!(
        Fx::new(&ex_with(|d| {
            questions(d);
            all_done(d)
        }))
        .clock_in(None),
        escalate
    );
    let success = r#"{"result": "success", "reason": "all units done or dropped"}"#;
    assert_eq!(Fx::new(&ex_with(all_done)).clock_in(None), success);
    let empty = Fx::new(&ex_with(|d| set(d, "plan/units", Json::Array(vec![]))));
    assert_eq!(empty.clock_in(None), success);
    assert_eq!(empty.ledger(), None);
    assert_eq!(fx.ledger(), None);
}

#[test]
fn e3_cursor_and_readiness_sw69() {
    let fx = Fx::new(&ex_with(|d| set(d, "plan/cursor", Json::str("U99"))));
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "escalate", "reason": "cursor U99 names no unit"}"#
    );
    assert!(
        fx.clock_in(Some("U3"))
            .starts_with(r#"{"result": "brief", "unit": {"id": "U3""#)
    );
    assert_eq!(fx.clock_in(Some("U4")), err("unit U4 is not ready; ready is U3"));
    for cursor in ["U1", "U4"] {
        let fx = Fx::new(&ex_with(|d| set(d, "plan/cursor", Json::str(cursor))));
        assert_eq!(
            fx.clock_in(None),
            err(&format!("unit {cursor} is not ready; ready is U3"))
        );
        assert_eq!(
            fx.clock_in(Some("nope")),
            err("unit nope is not ready; ready is U3")
        );
        assert_eq!(fx.ledger(), None);
    }
}

#[test]
fn e4_wave_sw70() {
    let fx = Fx::new(&g("N1(todo); N2(todo); N3(todo, <-N1, N2)", "N1"));
    assert_eq!(
        fx.clock_in(Some("N3")),
        err("unit N3 is not ready; ready is N1, N2")
    );
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "N1""#));
    assert!(fx.clock_in(Some("N2")).contains(r#""unit": {"id": "N2""#));
    assert!(fx.status().contains(r#""cursor": "N1""#));
    let lines = fx.ledger_lines();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].ends_with(r#""unit": "N1"}"#) && lines[1].ends_with(r#""unit": "N2"}"#));
}

#[test]
fn e5_cycle_refuses_every_selection_sw60() {
    let fx = Fx::new(&g("A(todo); B(todo, <-C); C(todo, reviewer, <-B)", "A"));
    for unit in [None, Some("A"), Some("nope")] {
        assert_eq!(fx.clock_in(unit), err("the graph has a cycle: B -> C -> B"));
    }
}

fn relay() -> Json {
    parse(r#"{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}"#)
}

fn exited(code: i32) -> ProbeOutcome {
    ProbeOutcome {
        status: ProbeStatus::Exited(code),
        stdout: vec![],
        stderr: vec![],
    }
}

#[test]
fn e6_relays_run_probes_sw72_sw134_sw136_sw137() {
    let doc = ex_with(|d| set(d, "handoff/open_questions", Json::Array(vec![relay()])));
    let fx = Fx::new(&doc);
    fx.host.answer_probe("test -f ci-green", exited(1));
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "escalate", "reason": "open question: Is CI green?", "open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}], "probe": {"q": "Is CI green?", "exit": 1}}"#
    );
    fx.host.answer_probe("test -f ci-green", exited(0));
    let before = fx.cp();
    let brief = fx.clock_in(None);
    assert!(
        brief.contains(
            r#""open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}]"#
        ),
        "{brief}"
    );
    assert_eq!(fx.cp(), before);
    // Timed out or killed: exit null.
    fx.host.answer_probe(
        "test -f ci-green",
        ProbeOutcome {
            status: ProbeStatus::TimedOut,
            stdout: vec![],
            stderr: vec![],
        },
    );
    assert!(
        fx.clock_in(None)
            .ends_with(r#""probe": {"q": "Is CI green?", "exit": null}}"#)
    );
    // A decision question first: no probe runs.
    let mixed = ex_with(|d| {
        set(
            d,
            "handoff/open_questions",
            Json::Array(vec![Json::str("Ship it?"), relay()]),
        )
    });
    let fx = Fx::new(&mixed);
    assert!(
        fx.clock_in(None)
            .starts_with(r#"{"result": "escalate", "reason": "open question: Ship it?""#)
    );
    assert!(fx.host.probes_run().is_empty());
    // Probes disabled: relays count as decision questions.
    let mut fx = Fx::new(&doc);
    fx.env.probes = false;
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "escalate", "reason": "open question: Is CI green?", "open_questions": [{"q": "Is CI green?", "kind": "relay", "probe": "test -f ci-green"}]}"#
    );
    assert!(fx.host.probes_run().is_empty());
    // A relay without a probe is refused by the schema.
    let bad = ex_with(|d| {
        set(
            d,
            "handoff/open_questions",
            parse(r#"[{"q": "x", "kind": "relay"}]"#),
        )
    });
    assert_eq!(
        Fx::new(&bad).clock_in(None),
        err(
            "checkpoint invalid: JSON does not match schema at 'handoff/open_questions/0': 'probe' is a required property"
        )
    );
}

#[test]
fn e7_touches_hold_sw114() {
    let mut doc = g("W(todo, <-Z); X(todo); Z(todo)", "Z");
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/0/touches",
        Json::strings(["src/p.rs"]),
    );
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/1/touches",
        Json::strings(["src/p.rs"]),
    );
    let fx = Fx::new(&doc);
    assert!(fx.clock_in(Some("X")).contains(r#""unit": {"id": "X""#));
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "Z""#));
    assert_eq!(
        fx.out("Z", "done"),
        r#"{"result": "ok", "unit": "Z", "status": "done", "cursor": "W", "log": ".shiftwork/cp.json.log.jsonl"}"#
    );
    assert_eq!(
        fx.plan(),
        r#"{"result": "plan", "batches": [["W"], ["X"]], "ready": ["W"], "sequence": ["W", "X"], "width": 1, "cursor": "W", "held": [{"id": "X", "batch": 0, "by": "W", "path": "src/p.rs"}]}"#
    );
    let lines = fx.ledger_lines().len();
    assert_eq!(
        fx.clock_in(None),
        err("unit W touches src/p.rs, which X holds until its clock-out")
    );
    assert_eq!(fx.ledger_lines().len(), lines);
    assert!(fx.out("X", "done").contains(r#""cursor": "W""#));
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "W""#));
}

#[test]
fn e8_budget_sw130_sw131_sw132() {
    let make = |budget: &str| {
        let mut doc = g("U1(done); U2(blocked); U3(todo); U4(done); U5(todo)", "U5");
        set(doc.as_object_mut().unwrap(), "job/budget", parse(budget));
        let fx = Fx::new(&doc);
        let line = |s: &str| format!("{s}\n");
        let ledger = [
            r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U1"}"#,
            r#"{"briefed": true, "duration_ms": 1, "role": "implementer", "status": "done", "tokens": 50000, "ts": "2026-01-02T03:04:05Z", "unit": "U1"}"#,
            r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U2"}"#,
            r#"{"briefed": true, "duration_ms": 1, "role": "implementer", "status": "blocked", "tokens": 30000, "ts": "2026-01-02T03:04:05Z", "unit": "U2"}"#,
            r#"{"briefed": false, "duration_ms": 1, "role": "implementer", "status": "done", "tokens": 90000, "ts": "2026-01-02T03:04:05Z", "unit": "U4"}"#,
            r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#,
        ]
        .map(line)
        .concat();
        fx.fs.write_file(LEDGER, ledger.as_bytes());
        fx
    };
    let fx = make(r#"{"tokens": 300000, "units": 5}"#);
    assert_eq!(
        fx.plan(),
        r#"{"result": "plan", "batches": [["U2", "U3", "U5"]], "ready": ["U2", "U3", "U5"], "sequence": ["U2", "U3", "U5"], "width": 3, "cursor": "U5", "budget": {"limit": {"tokens": 300000, "units": 5}, "spent": {"tokens": 170000, "units": 3}, "in_flight": ["U3"], "remaining": {"tokens": 80000, "units": 1}, "per_unit": 50000, "affordable": 1}}"#
    );
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "U5""#));
    assert_eq!(
        fx.clock_in(Some("U2")),
        err("budget tokens spent: 270000 of 300000; raise job.budget or stop the job")
    );
    assert!(fx.clock_in(Some("U3")).contains(r#""unit": {"id": "U3""#));
    let fx = make(r#"{"units": 4}"#);
    assert_eq!(
        fx.clock_in(None),
        err("budget units spent: 4 of 4; raise job.budget or stop the job")
    );
}

#[test]
fn e9_brief_additions_sw74_sw119_sw124() {
    let doc = ex_with(|d| {
        set(d, "job/agreements", Json::strings(["Run the linter first."]));
        set(
            d,
            "plan/units/0/attempts",
            parse(
                r#"[{"status": "done", "outcome": "done", "produced": [{"kind": "commit", "ref": "abc1234"}]}]"#,
            ),
        );
    });
    let brief = Fx::new(&doc).clock_in(None);
    assert_eq!(
        brief,
        format!(
            "{}, \"agreements\": [\"Run the linter first.\"], \"upstream\": [{{\"unit\": \"U1\", \"last\": [{{\"kind\": \"commit\", \"ref\": \"abc1234\"}}]}}]}}",
            E1_BRIEF.trim_end_matches('}')
        )
    );
}

#[test]
fn d1_status_search_sw139() {
    let fx = Fx::new(&ex());
    fx.fs.write_file(
        "/.shiftwork/archive/job-a.txt",
        b"lock timeout on U3\nunit U4 done\nLOCK wait TIMEOUT\n",
    );
    let out = compact(&shiftwork_core::status(&fx.env, CP, Some("lock timeout")));
    assert!(out.ends_with(r#""last_history": {"unit": "U1", "outcome": "done"}, "search": {"query": "lock timeout", "matches": [{"file": "job-a.txt", "line": 1, "text": "lock timeout on U3"}, {"file": "job-a.txt", "line": 3, "text": "LOCK wait TIMEOUT"}], "truncated": false}}"#), "{out}");
    let none = Fx::new(&ex());
    assert!(
        compact(&shiftwork_core::status(&none.env, CP, Some("lock")))
            .ends_with(r#""matches": [], "truncated": false}}"#)
    );
    let many = Fx::new(&ex());
    let text: String = (0..60).map(|i| format!("lock timeout {i}\n")).collect();
    many.fs
        .write_file("/.shiftwork/archive/sub/big.log", text.as_bytes());
    let out = compact(&shiftwork_core::status(&many.env, CP, Some("LOCK")));
    assert_eq!(out.matches("\"file\": \"sub/big.log\"").count(), 50);
    assert!(out.ends_with(r#""truncated": true}}"#));
}
