//! The checkpoint's shape (§2; SW-1..SW-7) and the clipping of schema messages (SW-30): one table of
//! edits to EX, each read by `shiftwork_status`, with the refusal it must give or `None` when the
//! edited document must be accepted.
//!
//! The tails of the table are 0.36.2's, values quoted: the words of the writer's validation (gate 14,
//! `validate_to_write`), whose values are the caller's. A checkpoint *read* from a file is refused
//! at the same path with the rule only, none of the file's values (issue 27 item 13, a deliberate
//! difference from 0.36.2).

use shiftwork_core::json::Json;

use super::support::*;

/// Reads EX with `edit` applied and compares the answer: `None` means accepted, `Some(tail)` the
/// refusal `checkpoint invalid: JSON does not match schema at <tail>`.
fn check(what: &str, edit: impl FnOnce(&mut shiftwork_core::json::Object), expected: Option<&str>) {
    let fx = Fx::new(&ex_with(edit));
    let before = fx.snapshot();
    let answer = fx.status();
    match expected {
        None => assert!(answer.starts_with(r#"{"result": "status""#), "{what}: {answer}"),
        Some(tail) => {
            let doc = fx.doc();
            let quoted = shiftwork_core::schema::validate_to_write(&doc).unwrap_err();
            assert_eq!(
                quoted.to_string(),
                format!("JSON does not match schema at {tail}"),
                "{what}"
            );
            let reason = parse(&answer)
                .get("reason")
                .and_then(Json::as_str)
                .unwrap()
                .to_owned();
            let (place, _) = tail.split_once(": ").unwrap();
            let read = shiftwork_core::schema::validate_checkpoint(&doc).unwrap_err();
            assert_eq!(reason, format!("checkpoint invalid: {read}"), "{what}");
            assert!(
                reason.starts_with(&format!(
                    "checkpoint invalid: JSON does not match schema at {place}: "
                )),
                "{what}: {reason}"
            );
            assert_no_value_quoted(&reason, &quoted.detail, what);
        }
    }
    // SW-23: a refused read never writes.
    assert_eq!(fx.snapshot(), before, "{what}");
}

/// Issue 27 item 13: the read refusal's detail holds none of the values the quoting detail rendered
/// (the allowed values of an enum and the required key's name are the schema's, not the document's).
fn assert_no_value_quoted(reason: &str, quoted: &str, what: &str) {
    let detail = reason.split_once("': ").map_or(reason, |(_, d)| d);
    for rule in [
        " is not of type ",
        " is not one of ",
        " should be non-empty",
        " is too long",
        " is less than the minimum of ",
        " is not valid under any of the given schemas",
    ] {
        if let Some((value, _)) = quoted.split_once(rule)
            && !value.is_empty()
        {
            assert!(
                detail.starts_with("the value") || detail.starts_with("a property name"),
                "{what}: {detail}"
            );
            assert!(
                !detail.contains(value) || value == "1",
                "{what}: {detail} quotes {value}"
            );
        }
    }
    if quoted.starts_with("Additional properties") {
        assert!(!detail.contains('\''), "{what}: {detail}");
    }
}

type Edit = Box<dyn FnOnce(&mut shiftwork_core::json::Object)>;

fn unit_with(key: &str, value: &str) -> Edit {
    let (key, value) = (key.to_owned(), parse(value));
    Box::new(move |d| set(d, &format!("plan/units/1/{key}"), value))
}

#[test]
fn the_schema_is_embedded_with_its_identity_sw1() {
    let schema: serde_json::Value = serde_json::from_str(shiftwork_core::CHECKPOINT_SCHEMA).unwrap();
    assert_eq!(schema["$id"], "urn:shiftwork:checkpoint:v1");
    assert_eq!(schema["title"], "Shift-work checkpoint contract v1");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    // The embedded text is a schema a generic draft 2020-12 validator compiles, and EX passes it.
    let generic = jsonschema::validator_for(&schema).unwrap();
    assert!(generic.is_valid(&ex().to_serde()));
}

#[test]
fn fields_of_0_36_2_sw3_sw4() {
    let cases: Vec<(&str, Edit, Option<&str>)> = vec![
        (
            "version 2",
            Box::new(|d| set(d, "version", Json::int(2))),
            Some("'version': 1 was expected"),
        ),
        ("version 1.0", Box::new(|d| set(d, "version", parse("1.0"))), None),
        (
            "version \"1\"",
            Box::new(|d| set(d, "version", Json::str("1"))),
            Some("'version': 1 was expected"),
        ),
        (
            "job closed",
            Box::new(|d| set(d, "job/extra", Json::int(1))),
            Some("'job': Additional properties are not allowed ('extra' was unexpected)"),
        ),
        (
            "job.id required",
            Box::new(|d| {
                d.get_mut("job")
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .shift_remove("id");
            }),
            Some("'job': 'id' is a required property"),
        ),
        (
            "job.constraints items",
            Box::new(|d| set(d, "job/constraints", Json::strings([""]))),
            Some("'job/constraints/0': '' should be non-empty"),
        ),
        (
            "job.roles values",
            Box::new(|d| set(d, "job/roles", parse(r#"{"reviewer": [5]}"#))),
            Some("'job/roles/reviewer/0': 5 is not of type 'string'"),
        ),
        (
            "job.roles named",
            Box::new(|d| {
                set(
                    d,
                    "job/roles",
                    parse(r#"{"planner": ["a"], "reviewer": ["b", "c"]}"#),
                )
            }),
            None,
        ),
        (
            "plan closed",
            Box::new(|d| set(d, "plan/extra", Json::int(1))),
            Some("'plan': Additional properties are not allowed ('extra' was unexpected)"),
        ),
        (
            "cursor naming no unit",
            Box::new(|d| set(d, "plan/cursor", Json::str("nowhere"))),
            None,
        ),
        (
            "unit closed",
            unit_with("extra", "1"),
            Some("'plan/units/1': Additional properties are not allowed ('extra' was unexpected)"),
        ),
        (
            "unit role",
            unit_with("role", r#""qa""#),
            Some("'plan/units/1/role': 'qa' is not one of ['planner', 'implementer', 'reviewer']"),
        ),
        (
            "unit depends_on",
            unit_with("depends_on", r#"[""]"#),
            Some("'plan/units/1/depends_on/0': '' should be non-empty"),
        ),
        ("unit commits", unit_with("commits", r#"["abc"]"#), None),
        (
            "unit verify",
            unit_with("verify", r#""""#),
            Some("'plan/units/1/verify': '' should be non-empty"),
        ),
        (
            "repo dirty",
            Box::new(|d| set(d, "state/repo/dirty", Json::str("no"))),
            Some("'state/repo/dirty': 'no' is not of type 'boolean'"),
        ),
        (
            "artifact closed",
            Box::new(|d| set(d, "state/artifacts/0/x", Json::int(1))),
            Some("'state/artifacts/0': Additional properties are not allowed ('x' was unexpected)"),
        ),
        (
            "external kind",
            Box::new(|d| set(d, "state/external/1/kind", Json::str("job"))),
            Some("'state/external/1/kind': 'job' is not one of ['process', 'pr', 'ci']"),
        ),
        (
            "external without until_cmd",
            Box::new(|d| {
                d.get_mut("state")
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .get_mut("external")
                    .unwrap()
                    .as_array_mut()
                    .unwrap()[0]
                    .as_object_mut()
                    .unwrap()
                    .shift_remove("until_cmd");
            }),
            None,
        ),
        (
            "history entry open",
            Box::new(|d| set(d, "history/0/anything", parse(r#"{"x": [1]}"#))),
            None,
        ),
        (
            "history entry outcome",
            Box::new(|d| set(d, "history/0/outcome", Json::str(""))),
            Some("'history/0/outcome': '' should be non-empty"),
        ),
        (
            "history notes",
            Box::new(|d| set(d, "history/0/notes", Json::int(3))),
            Some("'history/0/notes': 3 is not of type 'string'"),
        ),
        (
            "retro open",
            Box::new(|d| set(d, "retro/0/extra", Json::Bool(true))),
            None,
        ),
        (
            "retro required",
            Box::new(|d| set(d, "retro", parse(r#"[{"trigger": "t"}]"#))),
            Some("'retro/0': 'patch_applied_to' is a required property"),
        ),
        (
            "handoff closed",
            Box::new(|d| set(d, "handoff/journal", Json::str("x"))),
            Some("'handoff': Additional properties are not allowed ('journal' was unexpected)"),
        ),
        (
            "handoff notes empty",
            Box::new(|d| set(d, "handoff/notes", Json::str(""))),
            None,
        ),
        (
            "do_not items",
            Box::new(|d| set(d, "handoff/do_not", parse("[1]"))),
            Some("'handoff/do_not/0': 1 is not of type 'string'"),
        ),
    ];
    for (what, edit, expected) in cases {
        check(what, edit, expected);
    }
}

#[test]
fn fields_added_for_0_38_sw5_sw2() {
    let twenty_one: Vec<String> = (0..21).map(|i| format!("A{i}")).collect();
    let cases: Vec<(&str, Edit, Option<&str>)> = vec![
        // Every 0.38 field is optional: EX itself (0.36.2-shaped) is valid (SW-2).
        ("EX", Box::new(|_| {}), None),
        (
            "agreements",
            Box::new(|d| set(d, "job/agreements", Json::strings(["a", "b"]))),
            None,
        ),
        (
            "agreements ≤ 20",
            Box::new(move |d| set(d, "job/agreements", Json::strings(&twenty_one))),
            Some(
                "'job/agreements': ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11', 'A12', 'A13', 'A14', 'A15', 'A16', 'A17', 'A18', 'A19', 'A20'] is too long",
            ),
        ),
        (
            "budget",
            Box::new(|d| set(d, "job/budget", parse(r#"{"units": 3}"#))),
            None,
        ),
        (
            "budget empty",
            Box::new(|d| set(d, "job/budget", parse("{}"))),
            Some("'job/budget': {} should be non-empty"),
        ),
        (
            "budget closed",
            Box::new(|d| set(d, "job/budget", parse(r#"{"tokens": 5, "dollars": 1}"#))),
            Some("'job/budget': Additional properties are not allowed ('dollars' was unexpected)"),
        ),
        (
            "budget ≥ 1",
            Box::new(|d| set(d, "job/budget", parse(r#"{"tokens": 0}"#))),
            Some("'job/budget/tokens': 0 is less than the minimum of 1"),
        ),
        (
            "kind",
            Box::new(|d| set(d, "job/kind", Json::str("research"))),
            Some("'job/kind': 'research' is not one of ['experimentation', 'investigation']"),
        ),
        (
            "experiment",
            Box::new(|d| set(d, "job/experiment", parse(r#"{"direction": "up"}"#))),
            Some("'job/experiment/direction': 'up' is not one of ['max', 'min']"),
        ),
        (
            "experiment required",
            Box::new(|d| set(d, "job/experiment", parse("{}"))),
            Some("'job/experiment': 'direction' is a required property"),
        ),
        (
            "conclusion",
            Box::new(|d| {
                set(
                    d,
                    "job/conclusion",
                    parse(r#"{"outcome": "stopped", "evidence": []}"#),
                )
            }),
            None,
        ),
        (
            "conclusion outcome",
            Box::new(|d| {
                set(
                    d,
                    "job/conclusion",
                    parse(r#"{"outcome": "won", "evidence": []}"#),
                )
            }),
            Some("'job/conclusion/outcome': 'won' is not one of ['resolved', 'inconclusive', 'stopped']"),
        ),
        (
            "conclusion evidence",
            Box::new(|d| {
                set(
                    d,
                    "job/conclusion",
                    parse(r#"{"outcome": "resolved", "evidence": [""], "supported": "H"}"#),
                )
            }),
            Some("'job/conclusion/evidence/0': '' should be non-empty"),
        ),
        (
            "touches any strings",
            unit_with("touches", r#"["../not/checked/by/the/schema"]"#),
            None,
        ),
        (
            "touches strings",
            unit_with("touches", "[5]"),
            Some("'plan/units/1/touches/0': 5 is not of type 'string'"),
        ),
        (
            "reviews",
            unit_with("reviews", r#"[""]"#),
            Some("'plan/units/1/reviews/0': '' should be non-empty"),
        ),
        (
            "tests",
            unit_with("tests", r#""""#),
            Some("'plan/units/1/tests': '' should be non-empty"),
        ),
        (
            "replay_of",
            unit_with("replay_of", "5"),
            Some("'plan/units/1/replay_of': 5 is not of type 'string'"),
        ),
        (
            "concludes",
            unit_with("concludes", r#""yes""#),
            Some("'plan/units/1/concludes': 'yes' is not of type 'boolean'"),
        ),
        (
            "attempts ≤ 3",
            unit_with(
                "attempts",
                r#"[{"status": "done", "outcome": "a"}, {"status": "done", "outcome": "b"}, {"status": "done", "outcome": "c"}, {"status": "done", "outcome": "d"}]"#,
            ),
            Some(
                "'plan/units/1/attempts': [{'status': 'done', 'outcome': 'a'}, {'status': 'done', 'outcome': 'b'}, {'status': 'done', 'outcome': 'c'}, {'status': 'done', 'outcome': 'd'}] is too long",
            ),
        ),
        (
            "attempt closed",
            unit_with("attempts", r#"[{"status": "done", "outcome": "a", "extra": 1}]"#),
            Some("'plan/units/1/attempts/0': Additional properties are not allowed ('extra' was unexpected)"),
        ),
        (
            "attempt status",
            unit_with("attempts", r#"[{"status": "won", "outcome": "a"}]"#),
            Some(
                "'plan/units/1/attempts/0/status': 'won' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
            ),
        ),
        (
            "produced closed",
            unit_with(
                "attempts",
                r#"[{"status": "done", "outcome": "a", "produced": [{"kind": "commit", "ref": "r", "x": 1}]}]"#,
            ),
            Some(
                "'plan/units/1/attempts/0/produced/0': Additional properties are not allowed ('x' was unexpected)",
            ),
        ),
        (
            "history produced",
            Box::new(|d| {
                set(
                    d,
                    "history/0/produced",
                    parse(r#"[{"kind": "commit", "ref": "abc"}]"#),
                )
            }),
            None,
        ),
        // SW-2's one exception: a history `produced` not of the 0.38 shape.
        (
            "history produced shape",
            Box::new(|d| set(d, "history/0/produced", parse(r#""abc""#))),
            Some("'history/0/produced': 'abc' is not of type 'array'"),
        ),
        (
            "question objects",
            Box::new(|d| {
                set(
                    d,
                    "handoff/open_questions",
                    parse(
                        r#"["Why?", {"q": "Ship?", "kind": "decision"}, {"q": "CI?", "kind": "relay", "probe": "true"}]"#,
                    ),
                )
            }),
            None,
        ),
        (
            "question kind",
            Box::new(|d| {
                set(
                    d,
                    "handoff/open_questions",
                    parse(r#"[{"q": "x", "kind": "poll"}]"#),
                )
            }),
            Some("'handoff/open_questions/0/kind': 'poll' is not one of ['relay', 'decision']"),
        ),
        (
            "question closed",
            Box::new(|d| {
                set(
                    d,
                    "handoff/open_questions",
                    parse(r#"[{"q": "x", "kind": "decision", "extra": 1}]"#),
                )
            }),
            Some(
                "'handoff/open_questions/0': Additional properties are not allowed ('extra' was unexpected)",
            ),
        ),
        (
            "question type",
            Box::new(|d| set(d, "handoff/open_questions", parse("[5]"))),
            Some("'handoff/open_questions/0': 5 is not valid under any of the given schemas"),
        ),
    ];
    for (what, edit, expected) in cases {
        check(what, edit, expected);
    }
    // SW-3: a document using every 0.38 field keeps `version: 1`.
    let fx = Fx::new(&ex_with(|d| {
        set(d, "job/budget", parse(r#"{"tokens": 9, "units": 2}"#));
        set(d, "job/kind", Json::str("investigation"));
        set(d, "plan/units/1/touches", Json::strings(["src/a.rs"]));
    }));
    assert!(fx.status().starts_with(r#"{"result": "status""#));
    fx.out("U3", "done");
    assert!(
        String::from_utf8(fx.cp())
            .unwrap()
            .starts_with("{\n  \"version\": 1,\n")
    );
}

#[test]
fn history_notes_have_no_limit_on_read_sw6() {
    let long = "n".repeat(5000);
    check(
        "5,000-code-point history notes",
        |d| set(d, "history/0/notes", Json::str(long.as_str())),
        None,
    );
    // The limit is the attempt's: the same notes sent by a clock-out are refused (gate 14, SW-118).
    let fx = Fx::new(&ex());
    let answer = fx.out_with("U3", "done", |a| {
        a.history_entry = obj(&format!(
            r#"{{"unit": "U3", "outcome": "done", "notes": "{}"}}"#,
            "n".repeat(2001)
        ))
    });
    assert!(
        answer.contains("refused to write: JSON does not match schema at 'plan/units/1/attempts/0/notes': "),
        "{answer}"
    );
}

#[test]
fn integers_and_lengths_follow_draft_2020_12_sw7() {
    let cases: Vec<(&str, &str, Option<&str>)> = vec![
        ("1234.0", r#"{"tokens": 1234.0}"#, None),
        ("1e16", r#"{"tokens": 1e16}"#, None),
        (
            "a 60-digit integer",
            r#"{"tokens": 100000000000000000000000000000000000000000000000000000000000}"#,
            None,
        ),
        (
            "12.5",
            r#"{"tokens": 12.5}"#,
            Some("'job/budget/tokens': 12.5 is not of type 'integer'"),
        ),
        (
            "true",
            r#"{"tokens": true}"#,
            Some("'job/budget/tokens': True is not of type 'integer'"),
        ),
        (
            "\"5\"",
            r#"{"tokens": "5"}"#,
            Some("'job/budget/tokens': '5' is not of type 'integer'"),
        ),
        (
            "-0.0",
            r#"{"tokens": -0.0}"#,
            Some("'job/budget/tokens': -0.0 is less than the minimum of 1"),
        ),
    ];
    for (what, budget, expected) in cases {
        check(what, |d| set(d, "job/budget", parse(budget)), expected);
    }
    // minLength counts code points: one astral character is one code point.
    check("😀 goal", |d| set(d, "job/goal", Json::str("😀")), None);
}

#[test]
fn schema_messages_are_clipped_sw30() {
    // A detail longer than 1,000 code points: ten unexpected 150-character keys (quoted as 0.36.2
    // quotes them where the values are the caller's: the writer's validation).
    let keys: Vec<String> = (0..10).map(|i| format!("{i}{}", "k".repeat(149))).collect();
    let doc = ex_with(|d| {
        for k in &keys {
            d.insert(k.clone(), Json::int(1));
        }
    });
    let reason = shiftwork_core::schema::validate_to_write(&doc)
        .unwrap_err()
        .to_string();
    let prefix = "JSON does not match schema at 'root': ";
    let detail = reason.strip_prefix(prefix).unwrap();
    let full: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    let full = format!(
        "Additional properties are not allowed ({} were unexpected)",
        full.join(", ")
    );
    let cut = full.chars().count() - 1000;
    assert_eq!(
        detail,
        format!("{}…({cut} more)", full.chars().take(1000).collect::<String>())
    );
    // Read from a file, the same document is refused naming how many keys, not which.
    let fx = Fx::new(&doc);
    let answer = parse(&fx.status());
    assert_eq!(
        answer.get("reason").and_then(Json::as_str),
        Some(
            "checkpoint invalid: JSON does not match schema at 'root': Additional properties are not allowed (10 were unexpected)"
        )
    );
    // A rendered value longer than 200 code points is clipped to 200.
    let doc = ex_with(|d| set(d, "plan/units/1/status", Json::str("s".repeat(300))));
    let reason = shiftwork_core::schema::validate_to_write(&doc)
        .unwrap_err()
        .to_string();
    assert!(
        reason.contains(&format!("'{}…(102 more) is not one of", "s".repeat(199))),
        "{reason}"
    );
}
