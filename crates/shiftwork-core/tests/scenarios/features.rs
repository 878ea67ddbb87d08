//! S-H: the 0.38 clock-out features (§14; SW-115..SW-133).

use shiftwork_core::json::Json;

use super::support::*;

fn err(reason: &str) -> String {
    format!(r#"{{"result": "error", "reason": "{reason}"}}"#)
}

fn is_ok(answer: &str) -> bool {
    answer.starts_with(r#"{"result": "ok""#)
}

#[test]
fn h1_attempts_sw115_sw117_sw118() {
    let fx = Fx::new(&ex());
    assert!(is_ok(&fx.out_with("U3", "blocked", |a| a.history_entry =
        obj(r#"{"unit": "U3", "outcome": "blocked on key", "notes": "n"}"#))));
    fx.clock_in(None);
    assert!(is_ok(&fx.out_with("U3", "done", |a| a.history_entry = obj(
        r#"{"unit": "U3", "outcome": "done", "produced": [{"kind": "commit", "ref": "f00d"}]}"#
    ))));
    let doc = fx.doc();
    let u3 = &doc.get("plan").unwrap().get("units").unwrap().as_array().unwrap()[1];
    assert_eq!(
        compact(u3.get("attempts").unwrap()),
        r#"[{"status": "blocked", "outcome": "blocked on key", "notes": "n"}, {"status": "done", "outcome": "done", "produced": [{"kind": "commit", "ref": "f00d"}]}]"#
    );
    assert!(
        compact(doc.get("history").unwrap()).contains(
            r#"{"unit": "U3", "outcome": "done", "produced": [{"kind": "commit", "ref": "f00d"}]}"#
        )
    );
    let fx = Fx::new(&ex());
    for i in 0..5 {
        fx.out_with("U3", "blocked", |a| {
            a.history_entry = obj(&format!(r#"{{"unit": "U3", "outcome": "o{i}"}}"#))
        });
    }
    let doc = fx.doc();
    let attempts = compact(
        doc.get("plan").unwrap().get("units").unwrap().as_array().unwrap()[1]
            .get("attempts")
            .unwrap(),
    );
    assert_eq!(
        attempts,
        r#"[{"status": "blocked", "outcome": "o2"}, {"status": "blocked", "outcome": "o3"}, {"status": "blocked", "outcome": "o4"}]"#
    );
    let notes = |n: usize| {
        let fx = Fx::new(&ex());
        let text = "é".repeat(n);
        fx.out_with("U3", "done", |a| {
            a.history_entry = obj(&format!(
                r#"{{"unit": "U3", "outcome": "done", "notes": "{text}"}}"#
            ))
        })
    };
    assert!(notes(2001).starts_with(r#"{"result": "error", "reason": "refused to write: JSON does not match schema at 'plan/units/1/attempts/0/notes': "#));
    assert!(is_ok(&notes(2000)));
    let fx = Fx::new(&ex());
    assert_eq!(
        fx.out_with("U3", "done", |a| a.history_entry = obj(
            r#"{"unit": "U3", "outcome": "done", "produced": [{"kind": "commit"}]}"#
        )),
        err(
            "refused to write: JSON does not match schema at 'history/1/produced/0': 'ref' is a required property"
        )
    );
}

#[test]
fn h2_follow_ups_sw120_sw121() {
    let item =
        r#"{"id": "U5", "title": "Fix flaky test", "role": "implementer", "brief_path": "briefs/U5.md"}"#;
    let run = |doc: &Json, follow_ups: &str| {
        let fx = Fx::new(doc);
        fx.fs.write_file("/briefs/U5.md", b"# U5");
        fx.fs.write_file("/briefs/U6.md", b"# U6");
        fx.clock_in(None);
        let before = fx.snapshot();
        let answer = fx.out_with("U3", "done", |a| a.follow_ups = Some(parse(follow_ups)));
        (fx, answer, before)
    };
    let (fx, answer, _) = run(&ex(), &format!("[{item}]"));
    assert_eq!(
        answer,
        r#"{"result": "ok", "unit": "U3", "status": "done", "cursor": "U4", "log": ".shiftwork/cp.json.log.jsonl"}"#
    );
    let doc = fx.doc();
    let units = doc.get("plan").unwrap().get("units").unwrap().as_array().unwrap();
    assert_eq!(
        compact(units.last().unwrap()),
        r#"{"id": "U5", "title": "Fix flaky test", "brief_path": "briefs/U5.md", "status": "todo", "role": "implementer", "depends_on": ["U3"], "verify": "make u3"}"#
    );
    assert!(fx.plan().contains(r#""batches": [["U4", "U5"]]"#));
    let refused = [
        (ex(), item.replace("U5\", \"title", "U4\", \"title"), "duplicate node id U4".to_owned()),
        (ex(), item.replace("briefs/U5.md", "briefs/none.md"), "follow-up U5 brief briefs/none.md is not a file".to_owned()),
        (ex(), item.replace("}", r#", "depends_on": ["ghost"]}"#), "node U5 depends on ghost, which no node declares".to_owned()),
        (
            ex_with(|d| set(d, "job/roles", parse(r#"{"reviewer": ["claude-opus-5"]}"#))),
            item.to_owned(),
            "follow-up U5 has role implementer, which job.roles does not declare".to_owned(),
        ),
        (
            ex(),
            r#"{"id": "U5", "title": "t", "role": "implementer"}"#.to_owned(),
            "unit U3 in role implementer sent follow_ups the schema refuses: JSON does not match schema at 'follow_ups/0': 'brief_path' is a required property".to_owned(),
        ),
    ];
    for (doc, item, reason) in refused {
        let (fx, answer, before) = run(&doc, &format!("[{item}]"));
        assert_eq!(answer, err(&reason));
        assert_eq!(fx.snapshot(), before);
    }
    let cycle = format!(
        "[{}, {}]",
        item.replace("}", r#", "depends_on": ["U6"]}"#),
        item.replace("U5", "U6")
            .replace("}", r#", "depends_on": ["U5"]}"#)
    );
    assert_eq!(run(&ex(), &cycle).1, err("the graph has a cycle: U5 -> U6 -> U5"));
}

#[test]
fn h3_agreements_sw122_sw123_sw124() {
    let doc = ex_with(|d| {
        set(
            d,
            "job/agreements",
            Json::strings(["Run cargo fmt before commit."]),
        )
    });
    let fx = Fx::new(&doc);
    fx.clock_in(None);
    let patch = r#"{"retire": ["Run cargo fmt before commit."], "adopt": ["Run cargo fmt and clippy before commit.", "Never edit vendor/."]}"#;
    assert!(is_ok(
        &fx.out_with("U3", "done", |a| a.agreements = Some(parse(patch)))
    ));
    let doc2 = fx.doc();
    assert_eq!(
        compact(doc2.get("job").unwrap().get("agreements").unwrap()),
        r#"["Run cargo fmt and clippy before commit.", "Never edit vendor/."]"#
    );
    assert_eq!(
        compact(doc2.get("retro").unwrap()),
        r#"[{"trigger": "slow tests", "patch_applied_to": "Makefile"}, {"trigger": "unit U3 clocked out", "patch_applied_to": "job.agreements", "change": "retire", "agreement": "Run cargo fmt before commit."}, {"trigger": "unit U3 clocked out", "patch_applied_to": "job.agreements", "change": "adopt", "agreement": "Run cargo fmt and clippy before commit."}, {"trigger": "unit U3 clocked out", "patch_applied_to": "job.agreements", "change": "adopt", "agreement": "Never edit vendor/."}]"#
    );
    assert!(
        fx.clock_in(None)
            .contains(r#""agreements": ["Run cargo fmt and clippy before commit.", "Never edit vendor/."]"#)
    );
    let fx = Fx::new(&doc);
    assert_eq!(
        fx.out_with("U3", "done", |a| a.agreements =
            Some(parse(r#"{"retire": ["Unknown."]}"#))),
        err("agreement to retire is not on job.agreements: Unknown.")
    );
    let twenty: Vec<String> = (0..20).map(|i| format!("A{i}")).collect();
    let adopt = format!(r#"{{"adopt": {}}}"#, compact(&Json::strings(&twenty)));
    assert_eq!(
        fx.out_with("U3", "done", |a| a.agreements = Some(parse(&adopt))),
        err("job.agreements would hold 21 agreements; at most 20 are kept")
    );
    assert!(is_ok(&fx.out_with("U3", "blocked", |a| a.agreements =
        Some(parse(r#"{"adopt": ["Run cargo fmt before commit."]}"#)))));
    assert_eq!(fx.doc().get("retro").unwrap().as_array().unwrap().len(), 1);
}

fn h4_doc(edit: impl FnOnce(&mut shiftwork_core::json::Object)) -> Json {
    let mut doc = g(
        "R(todo); P(todo, reviewer, <-R); V(todo, planner, <-R); C(todo, planner, <-R, P, V)",
        "R",
    );
    let d = doc.as_object_mut().unwrap();
    set(d, "plan/units/0/tests", Json::str("H1"));
    set(d, "plan/units/1/replay_of", Json::str("R"));
    set(d, "plan/units/2/reviews", Json::strings(["R"]));
    set(d, "plan/units/3/concludes", Json::Bool(true));
    edit(d);
    doc
}

#[test]
fn h4_conclusions_sw125_sw126_sw127_sw128() {
    let fx = Fx::new(&h4_doc(|_| {}));
    let output =
        r#"{"unit": "R", "outcome": "done", "produced": [{"kind": "run-output", "ref": "logs/r.txt"}]}"#;
    fx.clock_in(None);
    assert_eq!(
        fx.out("R", "done"),
        err("unit R is a run unit clocked out done without a run-output in history_entry.produced")
    );
    assert!(is_ok(
        &fx.out_with("R", "done", |a| a.history_entry = obj(output))
    ));
    fx.clock_in(Some("P"));
    assert!(is_ok(&fx.out_with("P", "done", |a| a.history_entry =
        obj(&output.replace("\"R\"", "\"P\"")))));
    fx.clock_in(Some("V"));
    assert!(is_ok(&fx.out("V", "done")));
    fx.clock_in(Some("C"));
    let conclusion = r#"{"outcome": "resolved", "evidence": ["logs/r.txt"], "supported": "H1"}"#;
    assert!(is_ok(
        &fx.out_with("C", "done", |a| a.conclusion = Some(parse(conclusion)))
    ));
    assert_eq!(
        compact(fx.doc().get("job").unwrap().get("conclusion").unwrap()),
        conclusion
    );

    let variant = |statuses: [&str; 3], p_role: &str, sender: &str, conclusion: &str| {
        let doc = h4_doc(|d| {
            for (i, s) in statuses.iter().enumerate() {
                set(d, &format!("plan/units/{i}/status"), Json::str(*s));
            }
            set(d, "plan/units/1/role", Json::str(p_role));
            set(d, "plan/cursor", Json::str("C"));
        });
        let fx = Fx::new(&doc);
        if sender == "V" {
            fx.fs.write_file(
                LEDGER,
                br#"{"event": "brief", "role": "planner", "ts": "2026-01-02T03:04:05Z", "unit": "V"}
"#,
            );
        }
        let before = fx.snapshot();
        let answer = fx.out_with(sender, "done", |a| a.conclusion = Some(parse(conclusion)));
        if !is_ok(&answer) {
            assert_eq!(fx.snapshot(), before);
        }
        answer
    };
    let done = ["done", "done", "done"];
    let resolved = r#"{"outcome": "resolved", "evidence": ["e"], "supported": "H1"}"#;
    assert_eq!(
        variant(done, "reviewer", "V", resolved),
        err("unit V cannot send a conclusion: only a unit with concludes: true may")
    );
    assert_eq!(
        variant(
            done,
            "reviewer",
            "C",
            r#"{"outcome": "resolved", "evidence": []}"#
        ),
        err("conclusion resolved needs supported: the hypothesis id its evidence supports")
    );
    assert_eq!(
        variant(done, "reviewer", "C", &resolved.replace("H1", "H2")),
        err("conclusion resolved for H2 needs a done run: no done unit tests H2")
    );
    assert_eq!(
        variant(["done", "todo", "done"], "reviewer", "C", resolved),
        err("conclusion resolved for H1 needs a done replay of run R in another role")
    );
    assert_eq!(
        variant(done, "implementer", "C", resolved),
        err("conclusion resolved for H1 needs a done replay of run R in another role")
    );
    assert_eq!(
        variant(["done", "done", "todo"], "reviewer", "C", resolved),
        err("conclusion resolved for H1 needs a done review of run R or of its replay P")
    );
    for outcome in ["inconclusive", "stopped"] {
        let c = format!(r#"{{"outcome": "{outcome}", "evidence": []}}"#);
        assert!(is_ok(&variant(["done", "todo", "todo"], "reviewer", "C", &c)));
        assert!(variant(done, "reviewer", "V", &c).contains("cannot send a conclusion"));
    }
}

#[test]
fn h5_zero_tokens_and_estimate_sw133() {
    let budget = ex_with(|d| set(d, "job/budget", parse(r#"{"tokens": 1000000}"#)));
    let with = |doc: &Json, accounting: &str| {
        let fx = Fx::new(doc);
        let answer = fx.out_with("U3", "done", |a| a.accounting = Some(parse(accounting)));
        (answer, fx.ledger_lines())
    };
    let zero = "unit U3 in role implementer reported 0 tokens, which job.budget refuses unless the line carries estimate: true";
    for tokens in ["0", "0.0", "-0.0"] {
        assert_eq!(
            with(&budget, &format!(r#"{{"tokens": {tokens}, "duration_ms": 5}}"#)).0,
            err(zero)
        );
    }
    let (answer, lines) = with(&budget, r#"{"tokens": 0, "duration_ms": 5, "estimate": true}"#);
    assert!(is_ok(&answer) && lines[0].contains(r#""estimate": true"#));
    assert!(is_ok(&with(&ex(), r#"{"tokens": 0, "duration_ms": 5}"#).0));
    assert!(
        with(&budget, r#"{"tokens": 0, "duration_ms": 5, "estimate": "yes"}"#)
            .0
            .contains("'accounting/estimate': 'yes' is not of type 'boolean'")
    );
}

#[test]
fn h6_agent_id_sw129() {
    let fx = Fx::new(&ex());
    assert!(is_ok(
        &fx.out_with("U3", "done", |a| a.agent_id = Some(Json::str("agent-7f3a_9")))
    ));
    assert!(fx.ledger_lines()[0].starts_with(r#"{"agent_id": "agent-7f3a_9", "briefed": "#));
    assert!(!String::from_utf8(fx.cp()).unwrap().contains("agent_id"));
    let fx = Fx::new(&ex());
    assert_eq!(
        fx.out_with("U3", "done", |a| a.agent_id = Some(Json::str("a b"))),
        err(
            "unit U3 in role implementer sent agent_id the schema refuses: JSON does not match schema at 'agent_id': 'a b' does not match '^[A-Za-z0-9_-]{1,64}$'"
        )
    );
    assert!(
        fx.out_with("U3", "done", |a| a.agent_id = Some(Json::str("a".repeat(65))))
            .contains("at 'agent_id': ")
    );
    assert_eq!(
        fx.out_with("U3", "done", |a| a.accounting =
            Some(parse(r#"{"tokens": 1, "duration_ms": 1, "agent_id": "x"}"#))),
        err(
            "unit U3 in role implementer reported an accounting line that sets the runtime's own keys: agent_id"
        )
    );
}

#[test]
fn follow_ups_every_refusal_in_check_order_sw121() {
    let item = |id: &str, extra: &str| {
        format!(
            r#"{{"id": "{id}", "title": "t", "role": "implementer", "brief_path": "briefs/U5.md"{extra}}}"#
        )
    };
    let run = |follow_ups: String| {
        let fx = Fx::new(&ex());
        fx.fs.write_file("/briefs/U5.md", b"# U5");
        fx.fs.make_dirs("/briefs/dir.md");
        fx.fs.write_file("/elsewhere/real.md", b"# real");
        fx.fs.symlink("../elsewhere/real.md", "/briefs/link.md");
        let before = fx.snapshot();
        let answer = fx.out_with("U3", "done", |a| a.follow_ups = Some(parse(&follow_ups)));
        if !answer.starts_with(r#"{"result": "ok""#) {
            assert_eq!(fx.snapshot(), before, "{follow_ups}");
        }
        (fx, answer)
    };
    let cases = [
        // 1. duplicates: within the list too, and before a bad brief of an earlier item.
        (
            format!(
                "[{}, {}]",
                item("U5", r#", "brief_path": "/abs.md""#),
                item("U5", "")
            ),
            "duplicate node id U5",
        ),
        // 2. brief paths: absolute, with `..`, a directory, missing.
        (
            format!("[{}]", item("U5", r#", "brief_path": "/briefs/U5.md""#)),
            "follow-up U5 brief /briefs/U5.md is not a file",
        ),
        (
            format!("[{}]", item("U5", r#", "brief_path": "briefs/../briefs/U5.md""#)),
            "follow-up U5 brief briefs/../briefs/U5.md is not a file",
        ),
        (
            format!("[{}]", item("U5", r#", "brief_path": "briefs/dir.md""#)),
            "follow-up U5 brief briefs/dir.md is not a file",
        ),
        // The brief check runs over the whole list before the dependency check.
        (
            format!(
                "[{}, {}]",
                item("U5", r#", "depends_on": ["ghost"]"#),
                item("U6", r#", "brief_path": "nope.md""#)
            ),
            "follow-up U6 brief nope.md is not a file",
        ),
        // 3. and 4.
        (
            format!("[{}]", item("U5", r#", "depends_on": ["U3", "ghost"]"#)),
            "node U5 depends on ghost, which no node declares",
        ),
        (
            format!("[{}]", item("U5", r#", "depends_on": ["U5"]"#)),
            "the graph has a cycle: U5 -> U5",
        ),
    ];
    for (follow_ups, reason) in cases {
        assert_eq!(run(follow_ups).1, err(reason));
    }
    // Accepted: a symlinked brief, a dependency on a sibling item, explicit verify and touches, an
    // empty depends_on; new units take part in the cursor rule of the same write.
    let (fx, answer) = run(format!(
        "[{}, {}]",
        item(
            "U6",
            r#", "brief_path": "briefs/link.md", "depends_on": ["U5"], "verify": "make u6", "touches": ["src/u6.rs"]"#
        ),
        item("U5", r#", "depends_on": []"#)
    ));
    assert!(is_ok(&answer), "{answer}");
    let doc = fx.doc();
    let units = doc.get("plan").unwrap().get("units").unwrap().as_array().unwrap();
    assert_eq!(
        compact(&units[3]),
        r#"{"id": "U6", "title": "t", "brief_path": "briefs/link.md", "status": "todo", "role": "implementer", "depends_on": ["U5"], "verify": "make u6", "touches": ["src/u6.rs"]}"#
    );
    assert_eq!(
        compact(&units[4]),
        r#"{"id": "U5", "title": "t", "brief_path": "briefs/U5.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "make u3"}"#
    );
    assert!(
        fx.plan().contains(r#""batches": [["U4", "U5"], ["U6"]]"#),
        "{}",
        fx.plan()
    );
    // The only unit left is a follow-up: it becomes the cursor.
    let fx = Fx::new(&g("A(todo)", "A"));
    fx.fs.write_file("/briefs/U5.md", b"# U5");
    assert_eq!(
        fx.out_with("A", "done", |a| a.follow_ups =
            Some(parse(&format!("[{}]", item("U5", ""))))),
        r#"{"result": "ok", "unit": "A", "status": "done", "cursor": "U5", "log": ".shiftwork/cp.json.log.jsonl"}"#
    );
}

#[test]
fn agreements_key_creation_empty_patches_and_retire_all_sw122_sw123() {
    // Without job.agreements, an adoption creates the key at the end of `job`.
    let fx = Fx::new(&ex());
    assert!(is_ok(&fx.out_with("U3", "blocked", |a| a.agreements =
        Some(parse(r#"{"adopt": ["A"]}"#)))));
    let doc = fx.doc();
    let job: Vec<&String> = doc.get("job").unwrap().as_object().unwrap().keys().collect();
    assert_eq!(
        job,
        ["id", "goal", "done_definition", "constraints", "agreements"]
    );
    // Retiring every agreement keeps the key with [].
    assert!(is_ok(&fx.out_with("U3", "blocked", |a| a.agreements =
        Some(parse(r#"{"retire": ["A"]}"#)))));
    assert_eq!(
        compact(fx.doc().get("job").unwrap().get("agreements").unwrap()),
        "[]"
    );
    let retro = fx.doc().get("retro").unwrap().as_array().unwrap().len();
    assert_eq!(retro, 3);
    // `{}` and empty lists change nothing: no key, no retro entry.
    for patch in ["{}", r#"{"adopt": [], "retire": []}"#] {
        let fx = Fx::new(&ex());
        assert!(is_ok(
            &fx.out_with("U3", "blocked", |a| a.agreements = Some(parse(patch)))
        ));
        assert!(
            fx.doc().get("job").unwrap().get("agreements").is_none(),
            "{patch}"
        );
        assert_eq!(fx.doc().get("retro").unwrap().as_array().unwrap().len(), 1);
    }
    // Retire then adopt the same text: two records, the text moved to the end.
    let fx = Fx::new(&ex_with(|d| set(d, "job/agreements", Json::strings(["A", "B"]))));
    assert!(is_ok(&fx.out_with("U3", "blocked", |a| a.agreements =
        Some(parse(r#"{"adopt": ["A"], "retire": ["A"]}"#)))));
    assert_eq!(
        compact(fx.doc().get("job").unwrap().get("agreements").unwrap()),
        r#"["B", "A"]"#
    );
    let retro = fx.doc().get("retro").unwrap().as_array().unwrap().clone();
    let changes: Vec<&str> = retro[1..]
        .iter()
        .map(|r| r.get("change").unwrap().as_str().unwrap())
        .collect();
    assert_eq!(changes, ["retire", "adopt"]);
}

#[test]
fn conclusion_is_judged_after_this_status_change_and_replaces_in_place_sw126_sw127() {
    // C concludes and reviews R: its own clock-out done makes it the done review.
    let make = |with_old: bool| {
        let mut doc = g("R(done); P(done, reviewer, <-R); C(todo, planner, <-R, P)", "C");
        let d = doc.as_object_mut().unwrap();
        set(d, "plan/units/0/tests", Json::str("H1"));
        set(d, "plan/units/1/replay_of", Json::str("R"));
        set(d, "plan/units/2/reviews", Json::strings(["R"]));
        set(d, "plan/units/2/concludes", Json::Bool(true));
        if with_old {
            set(
                d,
                "job/conclusion",
                parse(r#"{"outcome": "inconclusive", "evidence": []}"#),
            );
            set(d, "job/agreements", Json::strings(["after"]));
        }
        doc
    };
    let resolved = r#"{"supported": "H1", "outcome": "resolved", "evidence": ["logs/r.txt"]}"#;
    let fx = Fx::new(&make(false));
    assert_eq!(
        fx.out_with("C", "blocked", |a| a.conclusion = Some(parse(resolved))),
        err("conclusion resolved for H1 needs a done review of run R or of its replay P")
    );
    let fx = Fx::new(&make(true));
    assert!(is_ok(
        &fx.out_with("C", "done", |a| a.conclusion = Some(parse(resolved)))
    ));
    let doc = fx.doc();
    let job = doc.get("job").unwrap().as_object().unwrap();
    assert_eq!(
        job.keys().collect::<Vec<_>>(),
        [
            "id",
            "goal",
            "done_definition",
            "constraints",
            "conclusion",
            "agreements"
        ]
    );
    // Verbatim, in the argument's key order.
    assert_eq!(compact(&job["conclusion"]), resolved);
}

#[test]
fn run_output_rule_applies_to_done_runs_and_replays_only_sw128() {
    let mut doc = g("R(todo); P(todo, reviewer, <-R)", "R");
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/0/tests",
        Json::str("H1"),
    );
    set(
        doc.as_object_mut().unwrap(),
        "plan/units/1/replay_of",
        Json::str("R"),
    );
    let fx = Fx::new(&doc);
    assert!(is_ok(&fx.out("R", "blocked")));
    let output = r#"{"unit": "R", "outcome": "done", "produced": [{"kind": "file", "ref": "a"}, {"kind": "run-output", "ref": "o"}]}"#;
    assert!(is_ok(
        &fx.out_with("R", "done", |a| a.history_entry = obj(output))
    ));
    assert_eq!(
        fx.out_with("P", "done", |a| a.history_entry = obj(
            r#"{"unit": "P", "outcome": "done", "produced": [{"kind": "file", "ref": "a"}]}"#
        )),
        err("unit P is a run unit clocked out done without a run-output in history_entry.produced")
    );
}

#[test]
fn argument_shapes_are_judged_in_order_sw82_sw129() {
    let prefix = "unit U3 in role implementer sent";
    type Edit = Box<dyn Fn(&mut shiftwork_core::ClockOutArguments)>;
    let cases: Vec<(Edit, String)> = vec![
        (
            Box::new(|a| a.agreements = Some(parse(r#"{"adopt": "x"}"#))),
            format!(
                "{prefix} agreements the schema refuses: JSON does not match schema at 'agreements/adopt': 'x' is not of type 'array'"
            ),
        ),
        (
            Box::new(|a| a.agreements = Some(parse(r#"{"adopt": ["x"], "drop": []}"#))),
            format!(
                "{prefix} agreements the schema refuses: JSON does not match schema at 'agreements': Additional properties are not allowed ('drop' was unexpected)"
            ),
        ),
        (
            Box::new(|a| a.conclusion = Some(parse(r#"{"outcome": "resolved"}"#))),
            format!(
                "{prefix} conclusion the schema refuses: JSON does not match schema at 'conclusion': 'evidence' is a required property"
            ),
        ),
        (
            Box::new(|a| a.agent_id = Some(Json::str("agent\n"))),
            format!(
                "{prefix} agent_id the schema refuses: JSON does not match schema at 'agent_id': 'agent\\\\n' does not match '^[A-Za-z0-9_-]{{1,64}}$'"
            ),
        ),
        (
            Box::new(|a| a.agent_id = Some(Json::int(7))),
            format!(
                "{prefix} agent_id the schema refuses: JSON does not match schema at 'agent_id': 7 is not of type 'string'"
            ),
        ),
        // agent_id, agreements, conclusion, follow_ups: the first bad one in that order speaks.
        (
            Box::new(|a| {
                a.follow_ups = Some(parse("[{}]"));
                a.conclusion = Some(parse("{}"));
                a.agent_id = Some(Json::str(""));
            }),
            format!(
                "{prefix} agent_id the schema refuses: JSON does not match schema at 'agent_id': '' does not match '^[A-Za-z0-9_-]{{1,64}}$'"
            ),
        ),
        (
            Box::new(|a| {
                a.follow_ups = Some(parse("[{}]"));
                a.conclusion = Some(parse("{}"));
            }),
            format!(
                "{prefix} conclusion the schema refuses: JSON does not match schema at 'conclusion': 'outcome' is a required property"
            ),
        ),
    ];
    for (edit, reason) in cases {
        let fx = Fx::new(&ex());
        let before = fx.snapshot();
        assert_eq!(fx.out_with("U3", "done", |a| edit(a)), err(&reason));
        assert_eq!(fx.snapshot(), before);
    }
    // A null agent_id writes no key.
    let fx = Fx::new(&ex());
    assert!(is_ok(
        &fx.out_with("U3", "done", |a| a.agent_id = Some(Json::Null))
    ));
    assert!(!fx.ledger().unwrap().contains("agent_id"));
}

#[test]
fn a_relay_without_probe_is_refused_on_clock_out_too_sw134() {
    let fx = Fx::new(&ex());
    let before = fx.snapshot();
    assert_eq!(
        fx.out_with("U3", "blocked", |a| a.handoff_patch =
            obj(r#"{"open_questions": [{"q": "CI?", "kind": "relay"}]}"#)),
        err(
            "refused to write: JSON does not match schema at 'handoff/open_questions/0': 'probe' is a required property"
        )
    );
    assert_eq!(fx.snapshot(), before);
}
