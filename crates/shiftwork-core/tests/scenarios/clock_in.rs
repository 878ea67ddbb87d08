//! S-D and S-E: status search and `shiftwork_clock_in` (§8, §9, §12; SW-65..SW-75, SW-92, SW-93).

use shiftwork_core::json::Json;
use shiftwork_seams::{ProbeOutcome, ProbeStatus};

use super::support::*;

const E1_BRIEF: &str = r#"{"result": "brief", "unit": {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, "role": "implementer", "invariants": ["keep the API stable", "no new dependencies"], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": ["do not touch vendor/"]}, "do_not": ["do not touch vendor/"], "files": [{"path": "docs/spec.md", "role": "spec"}]}"#;
const BRIEF_U3: &str =
    r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#;

fn err(reason: &str) -> String {
    format!(r#"{{"result": "error", "reason": "{reason}"}}"#)
}

#[test]
fn e1_brief_and_its_line_sw17_sw70_sw74_sw92() {
    let fx = Fx::new(&ex());
    let before = fx.cp();
    assert_eq!(fx.clock_in(None), E1_BRIEF);
    assert_eq!(fx.ledger().unwrap(), format!("{BRIEF_U3}\n"));
    assert_eq!(fx.clock_in(Some("U3")), E1_BRIEF);
    assert_eq!(fx.ledger().unwrap(), format!("{BRIEF_U3}\n{BRIEF_U3}\n"));
    assert_eq!(fx.cp(), before);
    // The brief line is best-effort (SW-93).
    let fx = Fx::new(&ex());
    fx.fs.make_dirs(LEDGER);
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
fn e4_wave_sw70_sw90() {
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
    let out = compact(&shiftwork_core::status(
        &fx.env,
        std::path::Path::new(CP),
        Some("lock timeout"),
    ));
    assert!(out.ends_with(r#""last_history": {"unit": "U1", "outcome": "done"}, "search": {"query": "lock timeout", "matches": [{"file": "job-a.txt", "line": 1, "text": "lock timeout on U3"}, {"file": "job-a.txt", "line": 3, "text": "LOCK wait TIMEOUT"}], "truncated": false}}"#), "{out}");
    let none = Fx::new(&ex());
    assert!(
        compact(&shiftwork_core::status(
            &none.env,
            std::path::Path::new(CP),
            Some("lock")
        ))
        .ends_with(r#""matches": [], "truncated": false}}"#)
    );
    let many = Fx::new(&ex());
    let text: String = (0..60).map(|i| format!("lock timeout {i}\n")).collect();
    many.fs
        .write_file("/.shiftwork/archive/sub/big.log", text.as_bytes());
    let out = compact(&shiftwork_core::status(
        &many.env,
        std::path::Path::new(CP),
        Some("LOCK"),
    ));
    assert_eq!(out.matches("\"file\": \"sub/big.log\"").count(), 50);
    assert!(out.ends_with(r#""truncated": true}}"#));
}

fn with_touches(doc: &mut Json, index: usize, paths: &[&str]) {
    set(
        doc.as_object_mut().unwrap(),
        &format!("plan/units/{index}/touches"),
        Json::strings(paths),
    );
}

#[test]
fn touches_hold_first_path_first_holder_relaunch_and_release_sw114() {
    let mut doc = g("W(todo, <-Z); X(todo); Y(todo); Z(todo)", "Z");
    with_touches(&mut doc, 0, &["a", "./b"]);
    with_touches(&mut doc, 1, &["b"]);
    with_touches(&mut doc, 2, &["a"]);
    let fx = Fx::new(&doc);
    for unit in ["X", "Y", "Z"] {
        assert!(fx.clock_in(Some(unit)).starts_with(r#"{"result": "brief""#));
    }
    // A relaunch of an in-flight unit is not held by itself.
    assert!(fx.clock_in(Some("X")).starts_with(r#"{"result": "brief""#));
    assert!(fx.out("Z", "done").contains(r#""cursor": "W""#));
    // W's first path `a` is held by Y, although X (earlier in the plan) holds W's second path.
    assert_eq!(
        fx.clock_in(None),
        err("unit W touches a, which Y holds until its clock-out")
    );
    // Y's accounting line releases `a`, though Y is not terminal; `b` is still X's.
    assert!(fx.out("Y", "blocked").starts_with(r#"{"result": "ok""#));
    assert_eq!(
        fx.clock_in(None),
        err("unit W touches b, which X holds until its clock-out")
    );
    assert!(fx.out("X", "done").starts_with(r#"{"result": "ok""#));
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "W""#));
}

#[test]
fn upstream_lists_each_dependency_with_attempts_once_in_order_sw119() {
    let mut doc = g("A(done); B(done); C(done); U(todo, <-B, A, B, C)", "U");
    let d = doc.as_object_mut().unwrap();
    set(
        d,
        "plan/units/0/attempts",
        parse(
            r#"[{"status": "blocked", "outcome": "x", "produced": [{"kind": "file", "ref": "old"}]}, {"status": "done", "outcome": "y", "produced": [{"kind": "commit", "ref": "new"}]}]"#,
        ),
    );
    set(
        d,
        "plan/units/1/attempts",
        parse(r#"[{"status": "done", "outcome": "no output"}]"#),
    );
    let brief = parse(&Fx::new(&doc).clock_in(None));
    assert_eq!(
        compact(brief.get("upstream").unwrap()),
        r#"[{"unit": "B", "last": []}, {"unit": "A", "last": [{"kind": "commit", "ref": "new"}]}]"#
    );
    // No dependency with attempts: no `upstream` key; no `job.agreements` key: no `agreements`.
    let brief = parse(&Fx::new(&g("A(done); U(todo, <-A)", "U")).clock_in(None));
    assert!(brief.get("upstream").is_none() && brief.get("agreements").is_none());
    // An empty `job.agreements` is carried as it is.
    let doc = ex_with(|d| set(d, "job/agreements", Json::Array(vec![])));
    assert!(Fx::new(&doc).clock_in(None).ends_with(r#", "agreements": []}"#));
}

#[test]
fn relays_run_in_order_from_the_repo_root_every_clock_in_sw72_sw135_sw136() {
    let relays = parse(
        r#"[{"q": "Built?", "kind": "relay", "probe": "test -f built"}, {"q": "Green?", "kind": "relay", "probe": "test -f green"}]"#,
    );
    let fx = Fx::new(&ex_with(|d| set(d, "handoff/open_questions", relays)));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    let fs = fx.fs.clone();
    fx.host.script_probes(move |command, cwd, timeout| {
        record.lock().unwrap().push((cwd.to_path_buf(), timeout));
        let file = command.trim_start_matches("test -f ");
        ProbeOutcome {
            status: ProbeStatus::Exited(if fs.file(format!("/{file}")).is_some() {
                0
            } else {
                1
            }),
            stdout: vec![],
            stderr: vec![],
        }
    });
    fx.fs.write_file("/built", b"");
    let answer = fx.clock_in(None);
    assert!(
        answer.starts_with(r#"{"result": "escalate", "reason": "open question: Green?""#)
            && answer.ends_with(r#""probe": {"q": "Green?", "exit": 1}}"#),
        "{answer}"
    );
    assert_eq!(fx.host.probes_run(), ["test -f built", "test -f green"]);
    fx.fs.write_file("/green", b"");
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    // Every clock-in re-runs the probes; their runs are not recorded in the ledger.
    assert_eq!(fx.host.probes_run().len(), 6);
    assert_eq!(fx.ledger_lines(), [BRIEF_U3, BRIEF_U3]);
    // From the repo root (the directory holding `.git`), with the 30 s timeout.
    for (cwd, timeout) in seen.lock().unwrap().iter() {
        assert_eq!(cwd, std::path::Path::new("/"));
        assert_eq!(*timeout, std::time::Duration::from_secs(30));
    }
    assert_eq!(shiftwork_core::PROBE_TIMEOUT, std::time::Duration::from_secs(30));
    // A `decision` object is a decision question: no probe runs.
    let fx = Fx::new(&ex_with(|d| {
        set(
            d,
            "handoff/open_questions",
            parse(r#"[{"q": "Ship?", "kind": "decision"}, {"q": "CI?", "kind": "relay", "probe": "true"}]"#),
        )
    }));
    assert!(
        fx.clock_in(None)
            .starts_with(r#"{"result": "escalate", "reason": "open question: Ship?""#)
    );
    assert!(fx.host.probes_run().is_empty());
}

#[test]
fn plan_checks_cover_every_unit_terminal_ones_included_sw60_sw61() {
    let mut doc = g("A(done); B(todo)", "B");
    with_touches(&mut doc, 0, &["../outside"]);
    let fx = Fx::new(&doc);
    let reason = err("nodes[0].touches must be a list of repo-relative paths");
    assert_eq!(fx.plan(), reason);
    assert_eq!(fx.clock_in(None), reason);
    // The touches check comes before the planner's refusals, which come before review independence.
    let mut doc = g("A(todo, <-B); B(todo, <-A); C(done, reviewer)", "A");
    with_touches(&mut doc, 1, &["/abs"]);
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/2/reviews",
        Json::strings(["nobody"]),
    );
    assert_eq!(
        Fx::new(&doc).plan(),
        err("nodes[1].touches must be a list of repo-relative paths")
    );
    with_touches(&mut doc, 1, &["ok"]);
    assert_eq!(Fx::new(&doc).plan(), err("the graph has a cycle: A -> B -> A"));
    let mut doc = g("A(todo); C(done, reviewer)", "A");
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/1/reviews",
        Json::strings(["nobody"]),
    );
    assert_eq!(
        Fx::new(&doc).plan(),
        err("unit C reviews nobody, which no unit declares")
    );
}

#[test]
fn plan_reads_the_ledger_only_with_a_budget_sw63() {
    let fx = Fx::new(&ex());
    fx.fs.write_file(LEDGER, BRIEF_U3.as_bytes());
    let reads = fx.fs.count(shiftwork_seams::Op::Read);
    fx.plan();
    assert_eq!(
        fx.fs.count(shiftwork_seams::Op::Read) - reads,
        1,
        "plan read more than the checkpoint"
    );
    let fx = Fx::new(&ex_with(|d| set(d, "job/budget", parse(r#"{"units": 5}"#))));
    fx.fs.write_file(LEDGER, format!("{BRIEF_U3}\n").as_bytes());
    let reads = fx.fs.count(shiftwork_seams::Op::Read);
    let plan = fx.plan();
    assert_eq!(fx.fs.count(shiftwork_seams::Op::Read) - reads, 2);
    assert!(plan.contains(r#""in_flight": ["U3"]"#), "{plan}");
}

#[test]
fn budget_figures_edges_sw130_sw131() {
    // No accounting line: per_unit is 60000; an over-spent budget has a negative remainder and
    // affords nothing; `limit`, `spent`, `remaining` carry the declared dimensions only.
    let doc = ex_with(|d| set(d, "job/budget", parse(r#"{"tokens": 100000}"#)));
    let fx = Fx::new(&doc);
    assert!(fx.plan().ends_with(r#""budget": {"limit": {"tokens": 100000}, "spent": {"tokens": 0}, "in_flight": [], "remaining": {"tokens": 100000}, "per_unit": 60000, "affordable": 1}}"#), "{}", fx.plan());
    fx.fs.write_file(
        LEDGER,
        b"{\"tokens\": 150000, \"unit\": \"U1\"}\n{\"event\": \"brief\", \"unit\": \"U3\"}\n",
    );
    assert!(fx.plan().ends_with(r#""budget": {"limit": {"tokens": 100000}, "spent": {"tokens": 150000}, "in_flight": ["U3"], "remaining": {"tokens": -200000}, "per_unit": 150000, "affordable": 0}}"#), "{}", fx.plan());
    // A line whose commit failed (followed by its unit's uncommitted marker) is not counted (SW-97).
    fx.fs.write_file(
        LEDGER,
        b"{\"tokens\": 7, \"unit\": \"U3\"}\n{\"tokens\": 9, \"unit\": \"U4\"}\n{\"event\": \"uncommitted\", \"unit\": \"U3\"}\n",
    );
    assert!(fx.plan().contains(r#""spent": {"tokens": 9}"#), "{}", fx.plan());
}

fn search(fx: &Fx, checkpoint: &str, query: &str) -> String {
    let answer = shiftwork_core::status(&fx.env, std::path::Path::new(checkpoint), Some(query)).answer();
    compact(answer.get("search").unwrap())
}

#[test]
fn status_search_files_lines_words_and_bounds_sw139() {
    let fx = Fx::new(&ex());
    let archive = "/.shiftwork/archive";
    fx.fs.write_file(
        format!("{archive}/b.txt"),
        b"\xffFAILED \xc3\xa9CHEC here\r\nnothing\n",
    );
    fx.fs.write_file(
        format!("{archive}/a/z.txt"),
        "failed échec twice\nÉCHEC failed again".as_bytes(),
    );
    fx.fs
        .write_file(format!("{archive}/B.txt"), b"failed \xc3\x89chec upper name\n");
    fx.fs
        .write_file("/outside.txt", "failed échec via link\n".as_bytes());
    fx.fs.symlink("../../outside.txt", format!("{archive}/link.txt"));
    fx.fs.write_file(
        format!("{archive}/locked.txt"),
        b"failed \xc3\xa9chec unreadable\n",
    );
    fx.fs
        .fail_path(shiftwork_seams::Op::Read, format!("{archive}/locked.txt"), 13);
    assert_eq!(
        search(&fx, CP, "  échec\tFAILED "),
        concat!(
            r#"{"query": "  \u00e9chec\tFAILED ", "matches": ["#,
            r#"{"file": "B.txt", "line": 1, "text": "failed \u00c9chec upper name"}, "#,
            r#"{"file": "a/z.txt", "line": 1, "text": "failed \u00e9chec twice"}, "#,
            r#"{"file": "a/z.txt", "line": 2, "text": "\u00c9CHEC failed again"}, "#,
            r#"{"file": "b.txt", "line": 1, "text": "\ufffdFAILED \u00e9CHEC here"}], "truncated": false}"#
        )
    );
    // No words, no archive, an archive that is a file: no matches, never a refusal.
    assert_eq!(
        search(&fx, CP, " \t "),
        r#"{"query": " \t ", "matches": [], "truncated": false}"#
    );
    let bare = Fx::new(&ex());
    bare.fs.write_file("/.shiftwork/archive", b"failed");
    assert_eq!(
        search(&bare, CP, "failed"),
        r#"{"query": "failed", "matches": [], "truncated": false}"#
    );
    // Exactly 50 matches is not truncated; the 51st, in a later file, is.
    let fifty = Fx::new(&ex());
    fifty
        .fs
        .write_file(format!("{archive}/1.txt"), "hit\n".repeat(50).as_bytes());
    assert!(search(&fifty, CP, "hit").ends_with(r#""truncated": false}"#));
    fifty.fs.write_file(format!("{archive}/2.txt"), b"no\nhit\n");
    let out = search(&fifty, CP, "hit");
    assert!(
        out.ends_with(r#""truncated": true}"#) && !out.contains("2.txt"),
        "{out}"
    );
    // A checkpoint outside a `.shiftwork` directory searches `<its directory>/.shiftwork/archive`.
    let fx = Fx::empty();
    fx.fs.write_file(
        "/jobs/cp.json",
        shiftwork_core::json::to_checkpoint_text(&ex()).as_bytes(),
    );
    fx.fs.write_file("/jobs/.shiftwork/archive/old.md", b"found it\n");
    assert!(search(&fx, "jobs/cp.json", "found").contains(r#""file": "old.md""#));
}
