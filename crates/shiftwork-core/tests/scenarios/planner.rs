//! S-B and S-C: the planner, `work_plan` and `shiftwork_plan` (§6, §7; SW-48..SW-64).

use shiftwork_core::json::Json;

use super::support::*;

fn check_work_plan(nodes: &str, expected: &str) {
    assert_eq!(
        compact(&shiftwork_core::work_plan(&parse(nodes))),
        expected,
        "{nodes}"
    );
}

fn err(reason: &str) -> String {
    format!(r#"{{"result": "error", "reason": "{reason}"}}"#)
}

#[test]
fn b1_waves_sw51_sw56() {
    check_work_plan(
        r#"[{"id": "W1"}, {"id": "W2"}, {"id": "W3"}, {"id": "W4", "depends_on": ["W1", "W3"]}, {"id": "W5", "depends_on": ["W2", "W3"]}, {"id": "W6", "depends_on": ["W4", "W5"]}, {"id": "W7", "depends_on": ["W6"]}, {"id": "W8", "depends_on": ["W7"]}]"#,
        r#"{"result": "plan", "batches": [["W1", "W2", "W3"], ["W4", "W5"], ["W6"], ["W7"], ["W8"]], "sequence": ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8"], "width": 3}"#,
    );
}

#[test]
fn b2_worked_answers_sw54_sw55_sw56() {
    check_work_plan(
        "[]",
        r#"{"result": "plan", "batches": [], "sequence": [], "width": 0}"#,
    );
    check_work_plan(
        r#"[{"id": "low", "priority": 1}, {"id": "high", "priority": 9}, {"id": "mid", "priority": 5}]"#,
        r#"{"result": "plan", "batches": [["high", "mid", "low"]], "sequence": ["high", "mid", "low"], "width": 3}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "priority": 0}, {"id": "b", "priority": 1}, {"id": "c", "depends_on": ["a"], "priority": 99}]"#,
        r#"{"result": "plan", "batches": [["b", "a"], ["c"]], "sequence": ["b", "a", "c"], "width": 2}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "priority": -1}, {"id": "b", "priority": -2}, {"id": "c", "priority": -1}]"#,
        r#"{"result": "plan", "batches": [["a", "c", "b"]], "sequence": ["a", "c", "b"], "width": 3}"#,
    );
    check_work_plan(
        r#"[{"id": "b", "priority": 3}, {"id": "a", "priority": 2.0}]"#,
        r#"{"result": "plan", "batches": [["b", "a"]], "sequence": ["b", "a"], "width": 2}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "depends_on": null, "priority": null}]"#,
        r#"{"result": "plan", "batches": [["a"]], "sequence": ["a"], "width": 1}"#,
    );
    check_work_plan(
        r#"[{"id": "a"}, {"id": "b", "depends_on": ["a", "a"]}]"#,
        r#"{"result": "plan", "batches": [["a"], ["b"]], "sequence": ["a", "b"], "width": 1}"#,
    );
    // Priorities compare as exact integers of any size (SW-55).
    check_work_plan(
        r#"[{"id": "a", "priority": 100000000000000000000000000000}, {"id": "b", "priority": 100000000000000000000000000001}, {"id": "c", "priority": 1e300}]"#,
        r#"{"result": "plan", "batches": [["c", "b", "a"]], "sequence": ["c", "b", "a"], "width": 3}"#,
    );
}

#[test]
fn b3_refusals_in_order_sw49_sw53() {
    let cases = [
        (
            r#"[{"id": "z", "depends_on": ["x"]}, {"id": "x", "depends_on": ["y"]}, {"id": "y", "depends_on": ["x"]}]"#,
            "the graph has a cycle: x -> y -> x",
        ),
        (
            r#"[{"id": "a", "depends_on": ["ghost"]}, {"id": "a"}]"#,
            "duplicate node id a",
        ),
        (
            r#"[{"id": "a", "depends_on": ["b"]}, {"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": ["nowhere"]}]"#,
            "node c depends on nowhere, which no node declares",
        ),
        (
            r#"[{"id": "a"}, {"id": "a"}, {"id": 5}]"#,
            "nodes[2].id must be a string",
        ),
        (
            r#"[{"id": "a", "depends_on": ["b"]}, {"id": "b", "depends_on": ["c"]}, {"id": "c", "depends_on": ["b"]}]"#,
            "the graph has a cycle: b -> c -> b",
        ),
        (
            r#"[{"id": "a", "depends_on": ["a"]}]"#,
            "the graph has a cycle: a -> a",
        ),
        (
            r#"[{"id": "e"}, {"id": "x", "depends_on": ["e", "y"]}, {"id": "y", "depends_on": ["x"]}]"#,
            "the graph has a cycle: x -> y -> x",
        ),
        (
            r#"[{"id": "a"}, {"id": "b", "depends_on": ["b", "a"]}]"#,
            "the graph has a cycle: b -> b",
        ),
        (
            r#"[{"id": "x", "depends_on": ["y"]}, {"id": "y", "depends_on": ["x"]}, {"id": "y1", "depends_on": ["y2"]}, {"id": "y2", "depends_on": ["y1"]}]"#,
            "the graph has a cycle: x -> y -> x",
        ),
        (r#"[{"id": "a"}, 5]"#, "nodes[1] must be an object"),
        (r#"[{"id": 5}]"#, "nodes[0].id must be a string"),
        (
            r#"[{"id": "a", "depends_on": "bb"}]"#,
            "nodes[0].depends_on must be a list of strings",
        ),
        (
            r#"[{"id": "a", "priority": 2.5}]"#,
            "nodes[0].priority must be an integer",
        ),
        (
            r#"[{"id": "a", "priority": true}]"#,
            "nodes[0].priority must be an integer",
        ),
        (
            r#"[{"id": "a", "priority": "1"}]"#,
            "nodes[0].priority must be an integer",
        ),
        (r#"[{"depends_on": []}]"#, "nodes[0].id must be a string"),
    ];
    for (nodes, reason) in cases {
        check_work_plan(nodes, &err(reason));
    }
}

#[test]
fn b4_touches_and_held_sw50_sw52_sw112_sw113() {
    check_work_plan(
        r#"[{"id": "a", "touches": ["x"]}, {"id": "b", "touches": ["x"]}, {"id": "c", "touches": ["y"]}, {"id": "d", "depends_on": ["a"]}]"#,
        r#"{"result": "plan", "batches": [["a", "c"], ["b", "d"]], "sequence": ["a", "c", "b", "d"], "width": 2, "held": [{"id": "b", "batch": 0, "by": "a", "path": "x"}]}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "touches": ["f"]}, {"id": "b", "touches": ["f"]}, {"id": "c", "touches": ["f"]}]"#,
        r#"{"result": "plan", "batches": [["a"], ["b"], ["c"]], "sequence": ["a", "b", "c"], "width": 1, "held": [{"id": "b", "batch": 0, "by": "a", "path": "f"}, {"id": "c", "batch": 0, "by": "a", "path": "f"}]}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "touches": ["./src//a.rs"]}, {"id": "b", "touches": ["src/a.rs"]}, {"id": "c", "touches": ["src"]}]"#,
        r#"{"result": "plan", "batches": [["a", "c"], ["b"]], "sequence": ["a", "c", "b"], "width": 2, "held": [{"id": "b", "batch": 0, "by": "a", "path": "src/a.rs"}]}"#,
    );
    check_work_plan(
        r#"[{"id": "a", "touches": null}]"#,
        r#"{"result": "plan", "batches": [["a"]], "sequence": ["a"], "width": 1}"#,
    );
    for bad in [
        r#"["../x"]"#,
        r#"["/etc/x"]"#,
        r#"[""]"#,
        r#"["."]"#,
        r#"["a\\b"]"#,
        "[5]",
        r#""x""#,
    ] {
        check_work_plan(
            &format!(r#"[{{"id": "a", "touches": {bad}}}]"#),
            &err("nodes[0].touches must be a list of repo-relative paths"),
        );
    }
}

#[test]
fn c1_plan_never_writes_sw62_sw63() {
    let fx = Fx::new(&ex());
    let before = fx.snapshot();
    assert_eq!(
        fx.plan(),
        r#"{"result": "plan", "batches": [["U3"], ["U4"]], "ready": ["U3"], "sequence": ["U3", "U4"], "width": 1, "cursor": "U3"}"#
    );
    assert_eq!(fx.snapshot(), before);
    fx.fs.write_file(LEDGER, b"junk\n");
    let before = fx.snapshot();
    fx.plan();
    assert_eq!(fx.snapshot(), before);
    let all_done = ex_with(|d| {
        for i in 0..3 {
            set(d, &format!("plan/units/{i}/status"), Json::str("done"));
        }
    });
    assert_eq!(
        Fx::new(&all_done).plan(),
        r#"{"result": "plan", "batches": [], "ready": [], "sequence": [], "width": 0, "cursor": "U3"}"#
    );
    assert_eq!(
        Fx::new(&ex_with(|d| set(d, "plan/cursor", Json::str("U99")))).plan(),
        r#"{"result": "plan", "batches": [["U3"], ["U4"]], "ready": ["U3"], "sequence": ["U3", "U4"], "width": 1, "cursor": "U99"}"#
    );
}

#[test]
fn c2_batch_view_sw57_sw58_sw59() {
    let wave = g("N1(todo); N2(todo); N3(todo, <-N1, N2)", "N1");
    assert_eq!(
        Fx::new(&wave).plan(),
        r#"{"result": "plan", "batches": [["N1", "N2"], ["N3"]], "ready": ["N1", "N2"], "sequence": ["N1", "N2", "N3"], "width": 2, "cursor": "N1"}"#
    );
    assert!(
        Fx::new(&g("A(in_progress); B(blocked); C(todo, <-A, B)", "A"))
            .plan()
            .contains(r#""batches": [["A", "B"], ["C"]]"#)
    );
    let plan = Fx::new(&g(
        "DONE(done); W1(todo, <-DONE); W2(todo); W3(todo); W4(todo, <-W1, W2, W3)",
        "W1",
    ))
    .plan();
    assert!(
        plan.contains(r#""batches": [["W1", "W2", "W3"], ["W4"]]"#) && plan.contains(r#""width": 3"#),
        "{plan}"
    );
}

#[test]
fn c3_cycles_sw60() {
    let cyc = g("A(todo); B(todo, <-C); C(todo, reviewer, <-B)", "A");
    assert_eq!(Fx::new(&cyc).plan(), err("the graph has a cycle: B -> C -> B"));
    let ex_cycle = ex_with(|d| set(d, "plan/units/1/depends_on", Json::strings(["U1", "U4"])));
    assert_eq!(
        Fx::new(&ex_cycle).plan(),
        err("the graph has a cycle: U3 -> U4 -> U3")
    );
}

#[test]
fn c4_reviews_sw61() {
    let with = |v: &str, reviews: &str| {
        let mut doc = g(&format!("R(todo); {v}"), "R");
        set(
            doc.as_object_mut().unwrap(),
            "plan/units/1/reviews",
            parse(reviews),
        );
        doc
    };
    let cases = [
        (
            with("V(todo, reviewer)", r#"["R"]"#),
            "unit V reviews R, which is not in its depends_on",
        ),
        (
            with("V(todo, implementer, <-R)", r#"["R"]"#),
            "unit V reviews R, which is in its own role implementer",
        ),
        (
            with("V(todo, reviewer, <-R)", r#"["Q"]"#),
            "unit V reviews Q, which no unit declares",
        ),
    ];
    for (doc, reason) in cases {
        let fx = Fx::new(&doc);
        assert_eq!(fx.plan(), err(reason));
        assert_eq!(fx.clock_in(None), err(reason));
    }
}

#[test]
fn c5_ranking_sw138() {
    let units = "E1(done); E2(done); E3(done); E4(done); E5(done); R1(done, reviewer, <-E1, E2, E3, E4, E5)";
    let make = |direction: &str, with_r1: bool| {
        let mut doc = g(units, "R1");
        let d = doc.as_object_mut().unwrap();
        set(d, "job/kind", Json::str("experimentation"));
        set(
            d,
            "job/experiment",
            parse(&format!(r#"{{"direction": "{direction}"}}"#)),
        );
        set(
            d,
            "plan/units/5/reviews",
            Json::strings(["E1", "E2", "E3", "E4", "E5"]),
        );
        for (i, (sha, score)) in [
            ("aaa111", "0.91"),
            ("bbb222", "0.95"),
            ("ccc333", "0.95"),
            ("ddd444", "n/a"),
            ("eee555", "0.99"),
        ]
        .iter()
        .enumerate()
        {
            set(
                d,
                &format!("plan/units/{i}/attempts"),
                parse(&format!(
                    r#"[{{"status": "done", "outcome": "done", "produced": [{{"kind": "commit", "ref": "{sha}"}}, {{"kind": "score", "ref": "{score}"}}]}}]"#
                )),
            );
        }
        if with_r1 {
            set(
                d,
                "plan/units/5/attempts",
                parse(
                    r#"[{"status": "done", "outcome": "done", "produced": [{"kind": "validated-sha", "ref": "aaa111"}, {"kind": "validated-sha", "ref": "bbb222"}, {"kind": "validated-sha", "ref": "ccc333"}, {"kind": "validated-sha", "ref": "ddd444"}, {"kind": "validated-sha", "ref": "eee000"}]}]"#,
                ),
            );
        }
        doc
    };
    assert_eq!(
        Fx::new(&make("max", true)).plan(),
        r#"{"result": "plan", "batches": [], "ready": [], "sequence": [], "width": 0, "cursor": "R1", "ranking": [{"id": "E2", "score": "0.95", "sha": "bbb222"}, {"id": "E3", "score": "0.95", "sha": "ccc333"}, {"id": "E1", "score": "0.91", "sha": "aaa111"}], "winner": "E2"}"#
    );
    let min = Fx::new(&make("min", true)).plan();
    assert!(min.ends_with(r#""ranking": [{"id": "E1", "score": "0.91", "sha": "aaa111"}, {"id": "E2", "score": "0.95", "sha": "bbb222"}, {"id": "E3", "score": "0.95", "sha": "ccc333"}], "winner": "E1"}"#), "{min}");
    assert!(
        Fx::new(&make("max", false))
            .plan()
            .ends_with(r#""ranking": [], "winner": null}"#)
    );
}

#[test]
fn ranking_edges_sw138() {
    // Candidates E9, E10, E11, E12, E13 (done, commit + score), X (not done); validators V (done,
    // reviews all) and W (todo, would validate X).
    let scores = [
        ("E9", "0.5"),
        ("E10", "0.5"),
        ("E11", " 1e400 "),
        ("E12", "NaN"),
        ("E13", "Infinity"),
    ];
    let mut spec: Vec<String> = scores.iter().map(|(id, _)| format!("{id}(done)")).collect();
    spec.push(String::from("X(blocked)"));
    spec.push(String::from("V(done, reviewer, <-E9, E10, E11, E12, E13)"));
    spec.push(String::from("W(todo, reviewer, <-X)"));
    let mut doc = g(&spec.join("; "), "W");
    let d = doc.as_object_mut().unwrap();
    set(d, "job/kind", Json::str("experimentation"));
    let produced = |sha: &str, score: &str| {
        parse(&format!(
            r#"[{{"status": "done", "outcome": "o", "produced": [{{"kind": "score", "ref": "{score}"}}, {{"kind": "commit", "ref": "{sha}"}}, {{"kind": "commit", "ref": "later"}}]}}]"#
        ))
    };
    for (i, (id, score)) in scores.iter().enumerate() {
        set(
            d,
            &format!("plan/units/{i}/attempts"),
            produced(&format!("s-{id}"), score),
        );
    }
    set(d, "plan/units/5/attempts", produced("s-X", "9"));
    let validated: Vec<String> = ["s-E9", "s-E10", "s-E11", "s-E12", "s-E13", "later"]
        .iter()
        .map(|sha| format!(r#"{{"kind": "validated-sha", "ref": "{sha}"}}"#))
        .collect();
    set(
        d,
        "plan/units/6/attempts",
        parse(&format!(
            r#"[{{"status": "done", "outcome": "o", "produced": [{}]}}]"#,
            validated.join(", ")
        )),
    );
    set(
        d,
        "plan/units/6/reviews",
        Json::strings(["E9", "E10", "E11", "E12", "E13"]),
    );
    set(d, "plan/units/7/reviews", Json::strings(["X"]));
    set(
        d,
        "plan/units/7/attempts",
        parse(
            r#"[{"status": "done", "outcome": "o", "produced": [{"kind": "validated-sha", "ref": "s-X"}]}]"#,
        ),
    );
    // No job.experiment: max first; equal scores by id in code-point order ("E10" < "E9"); a number
    // beyond the double range ranks as infinity; NaN and Infinity are not JSON numbers; the first
    // commit is the submitted sha; X is not done and W is no done validator.
    let plan = Fx::new(&doc).plan();
    assert!(
        plan.ends_with(r#""ranking": [{"id": "E11", "score": " 1e400 ", "sha": "s-E11"}, {"id": "E10", "score": "0.5", "sha": "s-E10"}, {"id": "E9", "score": "0.5", "sha": "s-E9"}], "winner": "E11"}"#),
        "{plan}"
    );
    // Without the experimentation kind there is no ranking at all.
    set(
        doc.as_object_mut().unwrap(),
        "job/kind",
        Json::str("investigation"),
    );
    assert!(!Fx::new(&doc).plan().contains("ranking"));
}

/// Issue 16 item 1: a plan's size hint is room for its one-line answer, so the text is written into
/// one buffer that never grows, on a large graph and an empty one.
#[test]
fn a_plans_size_hint_holds_its_structured_text() {
    use shiftwork_core::Answer;
    use shiftwork_core::json::{Formatter, Style};
    for n in [0usize, 1, 3_000] {
        let nodes: Vec<String> = (0..n)
            .map(|i| match i {
                0 => format!(r#"{{"id": "node-{i}"}}"#),
                _ => format!(r#"{{"id": "node-{i}", "depends_on": ["node-{}"]}}"#, i / 2),
            })
            .collect();
        let value = shiftwork_core::json::parse(&format!("[{}]", nodes.join(", "))).unwrap();
        let plan = shiftwork_core::work_plan(&value).unwrap();
        let mut text = String::new();
        plan.emit(&mut Formatter::new(&mut text, Style::STRUCTURED));
        assert!(
            plan.size_hint() >= text.len(),
            "{n} nodes: {} < {}",
            plan.size_hint(),
            text.len()
        );
    }
}
