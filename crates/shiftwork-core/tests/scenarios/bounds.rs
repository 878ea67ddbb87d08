//! Answers and their bounds (§5.3, §16, §17; SW-45, SW-46, SW-141, SW-145, SW-147): fixed key order,
//! clipped reasons, no plan-size cap, no critical path, and answers bounded by their inputs — never by
//! the ledger or the archive.

use shiftwork_core::json::{self, Json};

use super::support::*;

fn keys(answer: &str) -> Vec<String> {
    parse(answer).as_object().unwrap().keys().cloned().collect()
}

#[test]
fn answer_keys_come_in_the_documented_order_sw45() {
    let mut doc = ex_with(|d| {
        set(d, "job/budget", parse(r#"{"tokens": 500000, "units": 9}"#));
        set(d, "job/kind", Json::str("experimentation"));
        set(d, "job/agreements", Json::strings(["Be kind."]));
        set(d, "plan/units/1/touches", Json::strings(["src/a.rs"]));
        set(
            d,
            "plan/units/0/attempts",
            parse(r#"[{"status": "done", "outcome": "done"}]"#),
        );
    });
    let fx = Fx::new(&doc);
    assert_eq!(
        keys(&fx.plan()),
        [
            "result", "batches", "ready", "sequence", "width", "cursor", "held", "budget", "ranking",
            "winner"
        ]
    );
    assert_eq!(
        keys(&compact(&shiftwork_core::status(
            &fx.env,
            std::path::Path::new(CP),
            Some("x")
        ))),
        [
            "result",
            "cursor",
            "units",
            "open_questions",
            "last_history",
            "search"
        ]
    );
    assert_eq!(
        keys(&fx.clock_in(None)),
        [
            "result",
            "unit",
            "role",
            "invariants",
            "handoff",
            "do_not",
            "files",
            "agreements",
            "upstream"
        ]
    );
    assert_eq!(
        keys(&fx.out("U3", "done")),
        ["result", "unit", "status", "cursor", "log"]
    );
    set(
        doc.as_object_mut().unwrap(),
        "handoff/open_questions",
        parse(r#"[{"q": "CI?", "kind": "relay", "probe": "false"}]"#),
    );
    assert_eq!(
        keys(&Fx::new(&doc).clock_in(None)),
        ["result", "reason", "open_questions", "probe"]
    );
    // Optional keys appear only in their cases: EX has none of them.
    assert_eq!(
        keys(&Fx::new(&ex()).plan()),
        ["result", "batches", "ready", "sequence", "width", "cursor"]
    );
    assert_eq!(
        keys(&Fx::new(&ex()).clock_in(None)),
        [
            "result",
            "unit",
            "role",
            "invariants",
            "handoff",
            "do_not",
            "files"
        ]
    );
}

#[test]
fn a_reason_is_clipped_to_2000_code_points_sw46() {
    let fx = Fx::new(&ex());
    let id = "é".repeat(3000);
    let answer = shiftwork_core::clock_out_arguments(&fx.env, &out_args(&id, "done")).answer();
    let reason = answer.get("reason").and_then(Json::as_str).unwrap();
    let full = format!("unit {id} is not in the plan");
    let cut = full.chars().count() - 2000;
    assert_eq!(
        reason,
        format!("{}…({cut} more)", full.chars().take(2000).collect::<String>())
    );
    assert_eq!(
        reason.chars().count(),
        2000 + format!("…({cut} more)").chars().count()
    );
    // Also a clock-in refusal naming a long unit id.
    let answer = shiftwork_core::clock_in_arguments(&fx.env, std::path::Path::new(CP), Some(&id)).answer();
    let reason = answer.get("reason").and_then(Json::as_str).unwrap();
    assert!(
        reason.ends_with(" more)") && reason.starts_with("unit éé"),
        "{reason}"
    );
}

/// A chain of `n` units in waves of ten, each after two of the previous wave.
fn big_plan(n: usize) -> Json {
    let units: Vec<Json> = (0..n)
        .map(|i| {
            let deps = if i >= 10 {
                format!("<-N{}, N{}", i - 10, i - 7)
            } else {
                String::new()
            };
            unit(&format!("N{i}(todo, {deps})"))
        })
        .collect();
    ex_with(|d| {
        set(d, "plan/units", Json::Array(units));
        set(d, "plan/cursor", Json::str("N0"));
    })
}

#[test]
fn no_soft_cap_on_plan_size_sw141() {
    let fx = Fx::new(&big_plan(3000));
    let plan = parse(&fx.plan());
    assert_eq!(plan.get("sequence").unwrap().as_array().unwrap().len(), 3000);
    assert_eq!(
        compact(plan.get("ready").unwrap()),
        compact(&Json::strings((0..10).map(|i| format!("N{i}"))))
    );
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert!(
        fx.out("N0", "done")
            .starts_with(r#"{"result": "ok", "unit": "N0", "status": "done", "cursor": "N1""#)
    );
    let nodes = Json::Array(
        (0..20_000)
            .map(|i| {
                parse(&format!(
                    r#"{{"id": "n{i}", "depends_on": [{}]}}"#,
                    if i > 0 {
                        format!("\"n{}\"", i - 1)
                    } else {
                        String::new()
                    }
                ))
            })
            .collect(),
    );
    let answer = shiftwork_core::work_plan(&nodes).answer();
    assert_eq!(answer.get("batches").unwrap().as_array().unwrap().len(), 20_000);
}

#[test]
fn no_answer_carries_a_critical_path_sw145() {
    let fx = Fx::new(&g("A(todo); B(todo, <-A); C(todo, <-A, B)", "A"));
    let nodes = parse(r#"[{"id": "a"}, {"id": "b", "depends_on": ["a"], "priority": 5}]"#);
    for answer in [
        fx.plan(),
        compact(&shiftwork_core::work_plan(&nodes)),
        fx.status(),
        fx.clock_in(None),
    ] {
        for word in ["critical", "slack"] {
            assert!(!answer.contains(word), "{answer}");
        }
    }
}

#[test]
fn answers_are_bounded_by_their_inputs_never_by_the_ledger_or_archive_sw147() {
    let doc = ex_with(|d| set(d, "handoff/open_questions", Json::Array(vec![])));
    let small = Fx::new(&doc);
    let big = Fx::new(&doc);
    // 20,000 ledger lines about U3 and U4: plan, status and the brief do not grow with them.
    let mut ledger = String::new();
    for i in 0..10_000 {
        ledger.push_str(&format!(
            "{{\"event\": \"brief\", \"unit\": \"U{}\"}}\n{{\"tokens\": {i}, \"unit\": \"U{}\"}}\n",
            3 + i % 2,
            3 + i % 2
        ));
    }
    big.fs.write_file(LEDGER, ledger.as_bytes());
    assert_eq!(big.plan(), small.plan());
    assert_eq!(big.status(), small.status());
    assert_eq!(
        big.clock_in(None).len(),
        small.clock_in(None).len(),
        "the brief grew with the ledger"
    );
    // With a budget: a fixed shape plus the in-flight ids.
    let budget = ex_with(|d| set(d, "job/budget", parse(r#"{"tokens": 100000000}"#)));
    let fx = Fx::new(&budget);
    fx.fs.write_file(LEDGER, ledger.as_bytes());
    let plan = parse(&fx.plan());
    assert_eq!(
        compact(plan.get("budget").unwrap().get("in_flight").unwrap()),
        r#"[]"#
    );
    // The archive: at most 50 matches of at most 500 code points each, however big the archive.
    let fx = Fx::new(&ex());
    let line = format!("needle {}\n", "x".repeat(2000));
    fx.fs
        .write_file("/.shiftwork/archive/big.log", line.repeat(500).as_bytes());
    let answer = shiftwork_core::status(&fx.env, std::path::Path::new(CP), Some("needle")).answer();
    let matches = answer
        .get("search")
        .unwrap()
        .get("matches")
        .unwrap()
        .as_array()
        .unwrap();
    assert_eq!(matches.len(), 50);
    for m in matches {
        let text = m.get("text").unwrap().as_str().unwrap();
        assert_eq!(text, format!("needle {}…(1507 more)", "x".repeat(493)));
    }
    // A brief echoes at most 3 attempts per unit; `ready` and `sequence` list an id once.
    let fx = Fx::new(&ex());
    for _ in 0..6 {
        fx.clock_in(None);
        fx.out("U3", "blocked");
    }
    let brief = parse(&fx.clock_in(None));
    assert_eq!(
        brief
            .get("unit")
            .unwrap()
            .get("attempts")
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let plan = parse(&fx.plan());
    assert_eq!(compact(plan.get("sequence").unwrap()), r#"["U3", "U4"]"#);
    assert!(json::to_compact_text(&brief).len() < 2000);
}
