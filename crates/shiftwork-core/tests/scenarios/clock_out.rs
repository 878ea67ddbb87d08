//! S-F: `shiftwork_clock_out` (§10, §11, §12; SW-76..SW-98).

use shiftwork_core::json::Json;

use super::support::*;

const F1_SHA: &str = "844e76fc796c0c5a39225f4777acd7afc962f4a603e569e64564456ef02ed8de";

fn err(reason: &str) -> String {
    format!(r#"{{"result": "error", "reason": "{reason}"}}"#)
}

fn ok(unit: &str, status: &str, cursor: &str) -> String {
    format!(
        r#"{{"result": "ok", "unit": "{unit}", "status": "{status}", "cursor": "{cursor}", "log": ".shiftwork/cp.json.log.jsonl"}}"#
    )
}

#[test]
fn f1_clock_out_writes_line_and_bytes_sw83_sw84_sw85_sw115_sw116() {
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    let answer = fx.out_with("U3", "done", |a| {
        a.handoff_patch = obj(r#"{"next_action": "Review the core."}"#);
        a.accounting = Some(parse(
            r#"{"tokens": 1234, "duration_ms": 88200, "duration": 88.2, "model": "haiku"}"#,
        ));
    });
    assert_eq!(answer, ok("U3", "done", "U4"));
    assert_eq!(
        fx.ledger_lines()[1],
        r#"{"briefed": true, "duration": 88.2, "duration_ms": 88200, "model": "haiku", "role": "implementer", "status": "done", "tokens": 1234, "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#
    );
    let cp = fx.cp();
    assert_eq!(cp.len(), 1955);
    assert_eq!(
        shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(&cp)),
        F1_SHA
    );
    assert!(fx.clock_in(None).contains(r#""unit": {"id": "U4""#));
    assert_eq!(fx.out("U4", "done"), ok("U4", "done", "U4"));
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "success", "reason": "all units done or dropped"}"#
    );
    let lines = fx.ledger_lines();
    assert_eq!(lines.len(), 4);
    assert!(lines[1].starts_with(r#"{"briefed": true"#) && lines[3].starts_with(r#"{"briefed": true"#));
    // No lock or temp file is left.
    assert!(
        fx.fs
            .paths()
            .iter()
            .all(|p| !p.to_string_lossy().contains(".lock") && !p.to_string_lossy().ends_with(".tmp"))
    );
}

#[test]
fn f2_unit_and_cursor_gates_sw77_sw78() {
    let fx = Fx::new(&ex());
    let before = fx.snapshot();
    assert_eq!(fx.out("U99", "done"), err("unit U99 is not in the plan"));
    assert_eq!(fx.out("U4", "done"), err("unit U4 is not the cursor unit U3"));
    let roles = Fx::new(&ex_with(|d| {
        set(d, "job/roles", parse(r#"{"reviewer": ["claude-opus-5"]}"#))
    }));
    assert_eq!(roles.out("U4", "done"), err("unit U4 is not the cursor unit U3"));
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn f3_model_gate_sw35_sw79() {
    let fx = Fx::new(&ex_with(|d| {
        set(
            d,
            "job/roles",
            parse(r#"{"implementer": ["zzz-last", "aaa-first"], "reviewer": ["claude-opus-5"]}"#),
        )
    }));
    let with = |accounting: &str| fx.out_with("U3", "done", |a| a.accounting = Some(parse(accounting)));
    let tail = "which job.roles.implementer does not allow: zzz-last, aaa-first";
    assert_eq!(
        with(r#"{"tokens": 1, "duration_ms": 2, "model": "haiku"}"#),
        err(&format!(
            "unit U3 in role implementer reported model haiku, {tail}"
        ))
    );
    let none = err(
        "unit U3 in role implementer reported no model, but job.roles.implementer allows only: zzz-last, aaa-first",
    );
    assert_eq!(with(r#"{"tokens": 1, "duration_ms": 2}"#), none);
    assert_eq!(with("null"), none);
    assert_eq!(with(r#"{"model": null}"#), none);
    for (model, shown) in [
        ("5", "5"),
        ("5.0", "5.0"),
        ("true", "True"),
        (r#"["a", "b"]"#, "['a', 'b']"),
        (r#"{"name": "x"}"#, "{'name': 'x'}"),
    ] {
        assert_eq!(
            with(&format!(r#"{{"model": {model}}}"#)),
            err(&format!(
                "unit U3 in role implementer reported model {shown}, {tail}"
            ))
        );
    }
    assert_eq!(fx.ledger(), None);
    assert_eq!(
        with(r#"{"tokens": 1, "duration_ms": 2, "model": "aaa-first"}"#),
        ok("U3", "done", "U4")
    );
    let reviewer_only = Fx::new(&ex_with(|d| {
        set(d, "job/roles", parse(r#"{"reviewer": ["claude-opus-5"]}"#))
    }));
    assert_eq!(reviewer_only.out("U3", "done"), ok("U3", "done", "U4"));
}

#[test]
fn f4_accounting_shape_sw80() {
    let prefix = "unit U3 in role implementer reported an accounting line the schema refuses: JSON does not match schema at ";
    let cases = [
        (
            r#"{"tokens": 1234, "duration": 88.2, "model": "haiku"}"#,
            "'accounting': 'duration_ms' is a required property",
        ),
        (
            r#"{"duration_ms": 88200}"#,
            "'accounting': 'tokens' is a required property",
        ),
        ("{}", "'accounting': 'tokens' is a required property"),
        (
            r#"{"tokens": -1, "model": 5}"#,
            "'accounting': 'duration_ms' is a required property",
        ),
        (
            r#"{"tokens": "1234", "duration_ms": 1}"#,
            "'accounting/tokens': '1234' is not of type 'integer'",
        ),
        (
            r#"{"tokens": 12.5, "duration_ms": 1}"#,
            "'accounting/tokens': 12.5 is not of type 'integer'",
        ),
        (
            r#"{"tokens": true, "duration_ms": 1}"#,
            "'accounting/tokens': True is not of type 'integer'",
        ),
        (
            r#"{"tokens": 1, "duration_ms": 1, "note": 5, "model": 5}"#,
            "'accounting/note': 5 is not of type 'string'",
        ),
        (
            r#"{"tokens": -1, "duration_ms": 1}"#,
            "'accounting/tokens': -1 is less than the minimum of 0",
        ),
    ];
    for (accounting, tail) in cases {
        let fx = Fx::new(&ex());
        let before = fx.snapshot();
        assert_eq!(
            fx.out_with("U3", "done", |a| a.accounting = Some(parse(accounting))),
            err(&format!("{prefix}{tail}")),
            "{accounting}"
        );
        assert_eq!(fx.snapshot(), before);
    }
    for (accounting, expect) in [
        (
            r#"{"tokens": 1234.0, "duration_ms": 88200.0}"#,
            vec![r#""duration_ms": 88200.0"#, r#""tokens": 1234.0"#],
        ),
        (
            r#"{"tokens": 1e16, "duration_ms": -0.0}"#,
            vec![r#""duration_ms": -0.0"#, r#""tokens": 1e+16"#],
        ),
        (
            r#"{"tokens": 1000000000000000000000000000000, "duration_ms": 1}"#,
            vec![r#""tokens": 1000000000000000000000000000000"#],
        ),
    ] {
        let fx = Fx::new(&ex());
        assert_eq!(
            fx.out_with("U3", "done", |a| a.accounting = Some(parse(accounting))),
            ok("U3", "done", "U4")
        );
        let line = &fx.ledger_lines()[0];
        for part in expect {
            assert!(line.contains(part), "{line} lacks {part}");
        }
    }
}

#[test]
fn f5_reserved_keys_and_briefed_sw15_sw81_sw85_sw96() {
    let fx = Fx::new(&ex());
    assert_eq!(
        fx.out_with("U3", "done", |a| a.accounting = Some(parse(
            r#"{"tokens": 1, "duration_ms": 1, "ts": "x", "unit": "C", "event": "brief"}"#
        ))),
        err(
            "unit U3 in role implementer reported an accounting line that sets the runtime's own keys: unit, ts, event"
        )
    );
    assert!(
        fx.out_with("U3", "done", |a| a.accounting =
            Some(parse(r#"{"duration_ms": 1, "ts": "x"}"#)))
            .contains("'accounting': 'tokens' is a required property")
    );
    assert_eq!(
        fx.out_with("U3", "done", |a| a.accounting = Some(parse(r#"{"tokens": 1, "duration_ms": 1, "briefed": true, "wall": ["x", {"y": 1, "a": 2}], "é": 1, "😀": 2, "\ue000": 3, "Z": 0}"#))),
        ok("U3", "done", "U4")
    );
    assert_eq!(
        fx.ledger_lines()[0],
        r#"{"Z": 0, "briefed": false, "duration_ms": 1, "role": "implementer", "status": "done", "tokens": 1, "ts": "2026-01-02T03:04:05Z", "unit": "U3", "wall": ["x", {"a": 2, "y": 1}], "\u00e9": 1, "\ue000": 3, "\ud83d\ude00": 2}"#
    );
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    fx.out_with("U3", "done", |a| {
        a.accounting = Some(parse(r#"{"tokens": 1, "duration_ms": 1, "briefed": false}"#))
    });
    assert!(fx.ledger_lines()[1].starts_with(r#"{"briefed": true"#));
}

#[test]
fn f6_whole_document_validation_sw77_gate14() {
    let prefix = "refused to write: JSON does not match schema at ";
    let check = |edit: &dyn Fn(&mut shiftwork_core::ClockOutArguments), tail: &str| {
        let fx = Fx::new(&ex());
        let before = fx.snapshot();
        assert_eq!(
            fx.out_with("U3", "done", |a| edit(a)),
            err(&format!("{prefix}{tail}"))
        );
        assert_eq!(fx.snapshot(), before);
    };
    check(
        &|a| a.status = "in-progress".into(),
        "'plan/units/1/status': 'in-progress' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
    );
    check(
        &|a| a.status = "bogus".into(),
        "'plan/units/1/status': 'bogus' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
    );
    check(
        &|a| a.handoff_patch = obj(r#"{"journal": "x"}"#),
        "'handoff': Additional properties are not allowed ('journal' was unexpected)",
    );
    check(
        &|a| a.handoff_patch = obj(r#"{"note": "x"}"#),
        "'handoff': Additional properties are not allowed ('note' was unexpected)",
    );
    check(
        &|a| a.handoff_patch = obj(r#"{"notes": 5}"#),
        "'handoff/notes': 5 is not of type 'string'",
    );
    check(
        &|a| a.handoff_patch = obj(r#"{"open_questions": [""]}"#),
        "'handoff/open_questions/0': '' should be non-empty",
    );
    check(
        &|a| a.history_entry = obj(r#"{"outcome": "x"}"#),
        "'history/1': 'unit' is a required property",
    );
    let fx = Fx::new(&ex());
    assert!(fx
        .out_with("U3", "done", |a| {
            a.history_entry = obj(r#"{"outcome": "x"}"#);
            a.accounting = Some(parse(r#"{"tokens": 1}"#));
        })
        .contains("reported an accounting line the schema refuses: JSON does not match schema at 'accounting': 'duration_ms' is a required property"));
}

#[test]
fn f7_merge_ring_key_order_sw83() {
    let fx = Fx::new(&ex_with(|d| set(d, "handoff/notes", Json::str("old"))));
    fx.out_with("U3", "done", |a| {
        a.handoff_patch = obj(r#"{"notes": "", "next_action": "Go."}"#)
    });
    assert_eq!(
        compact(fx.doc().get("handoff").unwrap()),
        r#"{"next_action": "Go.", "open_questions": [], "do_not": ["do not touch vendor/"], "notes": ""}"#
    );
    let fx = Fx::new(&ex());
    fx.out_with("U3", "done", |a| {
        a.handoff_patch = obj(r#"{"notes": "n", "do_not": [], "next_action": "Go."}"#);
        a.history_entry = obj(r#"{"outcome": "d", "unit": "U3", "x": {"b": 1, "a": 2}}"#);
    });
    let doc = fx.doc();
    assert_eq!(
        compact(doc.get("handoff").unwrap()),
        r#"{"next_action": "Go.", "open_questions": [], "do_not": [], "notes": "n"}"#
    );
    assert_eq!(
        compact(&doc.get("history").unwrap().as_array().unwrap()[1]),
        r#"{"outcome": "d", "unit": "U3", "x": {"b": 1, "a": 2}}"#
    );
    let ring = Json::Array(
        (0..5)
            .map(|i| parse(&format!(r#"{{"unit": "H{i}", "outcome": "done"}}"#)))
            .collect(),
    );
    let fx = Fx::new(&ex_with(|d| set(d, "history", ring)));
    fx.out("U3", "done");
    let units: Vec<String> = fx
        .doc()
        .get("history")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.get("unit").unwrap().as_str().unwrap().to_owned())
        .collect();
    assert_eq!(units, ["H1", "H2", "H3", "H4", "U3"]);
}

#[test]
fn f8_briefed_sw94_sw95_sw16() {
    let fx = Fx::new(&ex());
    fx.clock_in(None);
    fx.out("U3", "blocked");
    fx.out("U3", "blocked");
    fx.clock_in(None);
    fx.out("U3", "done");
    let briefed: Vec<bool> = fx
        .ledger_lines()
        .iter()
        .filter(|l| !l.contains("\"event\""))
        .map(|l| l.contains("\"briefed\": true"))
        .collect();
    assert_eq!(briefed, [true, false, true]);

    let fx = Fx::new(&g(
        "N1(todo); N2(todo, reviewer, <-N1); N3(blocked, planner)",
        "N1",
    ));
    fx.clock_in(None);
    assert!(fx.out("N1", "done").contains(r#""cursor": "N2""#));
    assert!(fx.plan().contains(r#""ready": ["N2", "N3"]"#));
    assert_eq!(fx.out("N2", "done"), ok("N2", "done", "N3"));
    assert!(
        fx.ledger_lines()
            .last()
            .unwrap()
            .starts_with(r#"{"briefed": false"#)
    );

    let fx = Fx::new(&ex());
    fx.clock_in(None);
    let mut ledger = fx.ledger().unwrap();
    ledger.push_str("not json\n[1, 2]\n\n{\"junk\": \"a\u{2028}b\", \"unit\": \"U3\"}\n");
    fx.fs.write_file(LEDGER, ledger.as_bytes());
    fx.out("U3", "done");
    assert!(
        fx.ledger_lines()
            .last()
            .unwrap()
            .starts_with(r#"{"briefed": true"#)
    );

    let fx = Fx::new(&g("N1(todo); N2(todo); N3(todo, <-N1, N2)", "N1"));
    fx.fs.write_file(
        LEDGER,
        concat!(
            r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "N2"}"#, "\n",
            r#"{"briefed": true, "role": "implementer", "status": "done", "ts": "2026-01-02T03:04:05Z", "unit": "N2"}"#, "\n",
            r#"{"event": "uncommitted", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "N2"}"#, "\n"
        )
        .as_bytes(),
    );
    assert_eq!(fx.out("N2", "done"), ok("N2", "done", "N1"));
    assert!(
        fx.ledger_lines()
            .last()
            .unwrap()
            .starts_with(r#"{"briefed": true"#)
    );

    let fx = Fx::new(&ex());
    fx.fs.write_file(LEDGER, b"{\"hand\": \"edited\"}");
    fx.out("U3", "done");
    let ledger = fx.ledger().unwrap();
    assert!(
        ledger.starts_with("{\"hand\": \"edited\"}\n{\"briefed\": false"),
        "{ledger}"
    );
}

#[test]
fn f9_wave_trace_sw78() {
    let fx = Fx::new(&g("N1(todo); N2(todo); N3(todo, <-N1, N2)", "N1"));
    assert!(fx.clock_in(None).contains(r#""id": "N1""#));
    assert!(fx.clock_in(Some("N2")).contains(r#""id": "N2""#));
    assert_eq!(fx.out("N2", "done"), ok("N2", "done", "N1"));
    assert!(
        fx.ledger_lines()
            .last()
            .unwrap()
            .starts_with(r#"{"briefed": true"#)
    );
    assert_eq!(fx.out("N2", "done"), err("unit N2 is not the cursor unit N1"));
    assert!(fx.plan().contains(r#""batches": [["N1"], ["N3"]]"#));
    assert_eq!(fx.out("N3", "done"), err("unit N3 is not the cursor unit N1"));
    assert_eq!(fx.out("N1", "done"), ok("N1", "done", "N3"));
    assert!(fx.clock_in(None).contains(r#""id": "N3""#));
}

#[test]
fn f10_cursor_rule_sw87_sw88_sw89() {
    let fx = Fx::new(&g("A(todo); C(todo, <-B); B(todo)", "A"));
    assert!(fx.plan().contains(r#""ready": ["A", "B"]"#));
    assert_eq!(fx.out("A", "done"), ok("A", "done", "B"));
    assert!(fx.plan().contains(r#""ready": ["B"]"#));
    assert_eq!(fx.clock_in(Some("C")), err("unit C is not ready; ready is B"));
    let fx = Fx::new(&g("A(todo); B(todo, <-C); C(todo, reviewer, <-B)", "A"));
    assert_eq!(fx.out("A", "done"), ok("A", "done", "B"));
    assert_eq!(fx.out("B", "done"), ok("B", "done", "C"));
    assert_eq!(fx.out("C", "done"), ok("C", "done", "C"));
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "success", "reason": "all units done or dropped"}"#
    );
    let fx = Fx::new(&ex());
    assert_eq!(
        fx.out_with("U3", "blocked", |a| a.handoff_patch =
            obj(r#"{"open_questions": ["Need key?"]}"#)),
        ok("U3", "blocked", "U3")
    );
    assert_eq!(
        fx.clock_in(None),
        r#"{"result": "escalate", "reason": "open question: Need key?", "open_questions": ["Need key?"]}"#
    );
    let fx = Fx::new(&ex_with(|d| set(d, "plan/cursor", Json::str("U1"))));
    assert_eq!(fx.out("U1", "done"), ok("U1", "done", "U3"));
}

#[test]
fn f11_ledger_is_a_directory_sw106_w1() {
    let fx = Fx::new(&ex());
    fx.fs.make_dirs(LEDGER);
    let before = fx.snapshot();
    assert_eq!(
        fx.out("U3", "done"),
        err(
            "accounting log unwritable, checkpoint untouched: [Errno 21] Is a directory: '.shiftwork/cp.json.log.jsonl'"
        )
    );
    assert_eq!(fx.snapshot(), before);
}
