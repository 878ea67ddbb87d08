//! S-A: reading and bytes (§4, §3; SW-8..SW-34).

use shiftwork_core::json::{self, Json};

use super::support::*;

const EX_SHA: &str = "42e7c80dc067525d179a156ac4f5117458c455978f869e9288f065953a56c638";

#[test]
fn ex_is_written_in_the_section_3_form_sw9_sw11() {
    let text = json::to_checkpoint_text(&ex());
    assert_eq!(text.len(), 1780);
    assert_eq!(
        shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(text.as_bytes())),
        EX_SHA
    );
}

fn check_status(doc: &Json, expected: &str) {
    let fx = Fx::new(doc);
    let before = fx.snapshot();
    assert_eq!(fx.status(), expected);
    assert_eq!(fx.snapshot(), before, "status wrote something");
}

#[test]
fn a1_status_sw65_sw66() {
    check_status(
        &ex(),
        r#"{"result": "status", "cursor": "U3", "units": {"done": 1, "todo": 2}, "open_questions": 0, "last_history": {"unit": "U1", "outcome": "done"}}"#,
    );
    check_status(
        &ex_with(|d| set(d, "history", Json::Array(vec![]))),
        r#"{"result": "status", "cursor": "U3", "units": {"done": 1, "todo": 2}, "open_questions": 0, "last_history": null}"#,
    );
    check_status(
        &ex_with(|d| set(d, "plan/units", Json::Array(vec![]))),
        r#"{"result": "status", "cursor": "U3", "units": {}, "open_questions": 0, "last_history": {"unit": "U1", "outcome": "done"}}"#,
    );
}

fn refusal(reason: &str) -> String {
    compact(&shiftwork_core::answer::refusal(reason))
}

#[test]
fn a2_read_refusals_sw18_sw20_sw32_sw33() {
    let fx = Fx::new(&ex());
    fx.fs.make_dirs("/adir");
    let env = &fx.env;
    let cases = [
        (
            "nope/cp.json",
            "checkpoint unreadable: [Errno 2] No such file or directory: 'nope/cp.json'",
        ),
        (
            "./nope//./cp.json",
            "checkpoint unreadable: [Errno 2] No such file or directory: 'nope/cp.json'",
        ),
        ("adir", "checkpoint unreadable: [Errno 21] Is a directory: 'adir'"),
    ];
    for (path, reason) in cases {
        assert_eq!(
            compact(&shiftwork_core::status(env, std::path::Path::new(path), None)),
            refusal(reason),
            "{path}"
        );
        assert_eq!(
            compact(&shiftwork_core::plan_checkpoint(env, std::path::Path::new(path))),
            refusal(reason),
            "{path}"
        );
        assert_eq!(
            compact(&shiftwork_core::clock_in_arguments(
                env,
                std::path::Path::new(path),
                None
            )),
            refusal(reason),
            "{path}"
        );
    }
    // 0.36.2's tail names the byte (`byte 0xff in position 21`); ours never quotes a byte of the file
    // (issue 27 item 13), only where it is.
    let fx = Fx::raw(b"{\"version\": 1, \"x\": \"\xff\"}");
    assert_eq!(
        fx.status(),
        refusal(
            "checkpoint unreadable: 'utf-8' codec can't decode a byte in position 21: invalid start byte"
        )
    );
}

#[test]
fn a3_parse_refusals_sw21_sw22_sw26_sw27() {
    let mut bom = "\u{feff}".as_bytes().to_vec();
    bom.extend_from_slice(json::to_checkpoint_text(&ex()).as_bytes());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"".to_vec(), "Expecting value: line 1 column 1 (char 0)"),
        (
            bom,
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
        ),
        (br#"{"a": 1} x"#.to_vec(), "Extra data: line 1 column 10 (char 9)"),
        (
            b"\n\n  {\"a\": tru}".to_vec(),
            "Expecting value: line 3 column 9 (char 10)",
        ),
        (
            b"{\"a\" 1}".to_vec(),
            "Expecting ':' delimiter: line 1 column 6 (char 5)",
        ),
        (
            b"{\"a\": 1 \"b\": 2}".to_vec(),
            "Expecting ',' delimiter: line 1 column 9 (char 8)",
        ),
        (
            b"{'a': 1}".to_vec(),
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            b"{\"k\": \"abc".to_vec(),
            "Unterminated string starting at: line 1 column 7 (char 6)",
        ),
        (
            b"{\"k\": \"a\tb\"}".to_vec(),
            "Invalid control character at: line 1 column 9 (char 8)",
        ),
        (
            b"{\"k\": \"\\x\"}".to_vec(),
            "Invalid \\escape: line 1 column 8 (char 7)",
        ),
        (
            b"{\"k\": \"\\u12x4\"}".to_vec(),
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        ),
        (
            b"{\"k\": \"\\ud800\"}".to_vec(),
            "Unpaired surrogate escape: line 1 column 8 (char 7)",
        ),
        (
            b"{\"\xc3\xa9\": x}".to_vec(),
            "Expecting value: line 1 column 7 (char 6)",
        ),
        // Whatever the document, an error at its first character keeps its position.
        (b"  x".to_vec(), "Expecting value: line 1 column 3 (char 2)"),
        (
            b"\"abc".to_vec(),
            "Unterminated string starting at: line 1 column 1 (char 0)",
        ),
    ];
    for (bytes, tail) in cases {
        let fx = Fx::raw(&bytes);
        assert_eq!(
            fx.status(),
            refusal(&format!("checkpoint is not parseable as JSON: {tail}")),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let deep = format!("{{\"k\": {}{}}}", "[".repeat(512), "]".repeat(512));
    let fx = Fx::raw(deep.as_bytes());
    assert_eq!(
        fx.status(),
        refusal(
            "checkpoint is not parseable as JSON: Nesting deeper than 512 levels: line 1 column 518 (char 517)"
        )
    );
    let crlf = json::to_checkpoint_text(&ex()).replace('\n', "\r\n");
    let fx = Fx::raw(crlf.as_bytes());
    assert_eq!(
        fx.status(),
        r#"{"result": "status", "cursor": "U3", "units": {"done": 1, "todo": 2}, "open_questions": 0, "last_history": {"unit": "U1", "outcome": "done"}}"#
    );
}

/// A schema refusal on read: the reason, and 0.36.2's tail (values quoted), which the writer's
/// validation still gives — the path is the same, only the read refusal leaves the values out (issue 27
/// item 13, a deliberate difference).
fn check_invalid(doc: &Json, tail: &str, quoted: &str) {
    let fx = Fx::new(doc);
    assert_eq!(
        fx.status(),
        refusal(&format!(
            "checkpoint invalid: JSON does not match schema at {tail}"
        ))
    );
    assert_eq!(
        shiftwork_core::schema::validate_to_write(doc)
            .unwrap_err()
            .to_string(),
        format!("JSON does not match schema at {quoted}")
    );
}

#[test]
fn a4_schema_refusals_sw28_sw29_sw30_sw31() {
    check_invalid(
        &Json::Array(vec![]),
        "'root': the value is not of type 'object'",
        "'root': [] is not of type 'object'",
    );
    check_invalid(
        &ex_with(|d| set(d, "version", Json::int(2))),
        "'version': 1 was expected",
        "'version': 1 was expected",
    );
    check_invalid(
        &ex_with(|d| {
            d.insert("zeta".into(), Json::int(1));
            d.insert("alpha".into(), Json::int(1));
            d.insert("Beta".into(), Json::int(1));
        }),
        "'root': Additional properties are not allowed (3 were unexpected)",
        "'root': Additional properties are not allowed ('Beta', 'alpha', 'zeta' were unexpected)",
    );
    check_invalid(
        &ex_with(|d| {
            d.shift_remove("version");
            d.insert("journal".into(), Json::int(1));
        }),
        "'root': 'version' is a required property",
        "'root': 'version' is a required property",
    );
    check_invalid(
        &ex_with(|d| {
            set(d, "job/goal", Json::str(""));
            set(d, "plan/cursor", Json::str(""));
        }),
        "'plan/cursor': the value should be non-empty",
        "'plan/cursor': '' should be non-empty",
    );
    check_invalid(
        &ex_with(|d| set(d, "job/roles", parse(r#"{"implementer": []}"#))),
        "'job/roles/implementer': the value should be non-empty",
        "'job/roles/implementer': [] should be non-empty",
    );
    check_invalid(
        &ex_with(|d| set(d, "job/roles", parse(r#"{"qa": ["x"]}"#))),
        "'job/roles': a property name is not one of ['planner', 'implementer', 'reviewer']",
        "'job/roles': 'qa' is not one of ['planner', 'implementer', 'reviewer']",
    );
    check_invalid(
        &ex_with(|d| set(d, "plan/units/1/status", Json::str("in-progress"))),
        "'plan/units/1/status': the value is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
        "'plan/units/1/status': 'in-progress' is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
    );
    let six = Json::Array(
        (0..6)
            .map(|i| parse(&format!(r#"{{"unit": "H{i}", "outcome": "done"}}"#)))
            .collect(),
    );
    check_invalid(
        &ex_with(|d| set(d, "history", six)),
        "'history': the value is too long",
        "'history': [{'unit': 'H0', 'outcome': 'done'}, {'unit': 'H1', 'outcome': 'done'}, {'unit': 'H2', 'outcome': 'done'}, {'unit': 'H3', 'outcome': 'done'}, {'unit': 'H4', 'outcome': 'done'}, {'unit': 'H5', 'outcome'…(10 more) is too long",
    );
    check_invalid(
        &ex_with(|d| {
            set(d, "plan/units/0/title", Json::str(""));
            set(d, "plan/units/2/title", Json::str(""));
        }),
        "'plan/units/2/title': the value should be non-empty",
        "'plan/units/2/title': '' should be non-empty",
    );
    check_invalid(
        &ex_with(|d| {
            set(d, "plan/units/0/title", Json::str(""));
            set(d, "handoff/next_action", Json::str(""));
        }),
        "'handoff/next_action': the value should be non-empty",
        "'handoff/next_action': '' should be non-empty",
    );
    // Accepted: an extra key in a history entry.
    let fx = Fx::new(&ex_with(|d| set(d, "history/0/seq", Json::int(1))));
    assert!(fx.status().starts_with(r#"{"result": "status""#));
    // Duplicate unit ids.
    let fx = Fx::new(&ex_with(|d| set(d, "plan/units/2/id", Json::str("U3"))));
    let dup = refusal("duplicate node id U3");
    assert_eq!(fx.status(), dup);
    assert_eq!(fx.plan(), dup);
    assert_eq!(fx.clock_in(None), dup);
}

#[test]
fn a5_byte_form_sw11_sw12_sw13_sw14() {
    let text = json::to_checkpoint_text(&ex());
    let text = text.replacen(
        "\"do_not\": [\n      \"do not touch vendor/\"\n    ]\n  }",
        "\"do_not\": [\n      \"do not touch vendor/\"\n    ],\n    \"notes\": \"ไทย — “q” 😀 é\"\n  }",
        1,
    );
    let text = text.replacen(
        "\"outcome\": \"done\"\n    }\n  ],\n  \"retro\"",
        "\"outcome\": \"done\", \"score\": 5.0, \"big\": 1e16, \"tiny\": 1e-5, \"n\": 12345678901234567890123, \"neg0\": -0, \"negf\": -0.0, \"E\": 1E2, \"f\": 2.50, \"x\": NaN\n    }\n  ],\n  \"retro\"",
        1,
    );
    let fx = Fx::raw(text.as_bytes());
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    let written = String::from_utf8(fx.cp()).unwrap();
    for line in [
        r#"    "notes": "\u0e44\u0e17\u0e22 \u2014 \u201cq\u201d \ud83d\ude00 \u00e9""#,
        r#"      "score": 5.0,"#,
        r#"      "big": 1e+16,"#,
        r#"      "tiny": 1e-05,"#,
        r#"      "n": 12345678901234567890123,"#,
        r#"      "neg0": 0,"#,
        r#"      "negf": -0.0,"#,
        r#"      "E": 100.0,"#,
        r#"      "f": 2.5,"#,
        r#"      "x": NaN"#,
    ] {
        assert!(written.lines().any(|l| l == line), "missing line {line}");
    }
    assert!(written.is_ascii());
    let again = json::to_checkpoint_text(&json::parse(&written).unwrap());
    assert_eq!(again, written);
}

#[test]
fn a6_duplicate_keys_and_fences_sw10_sw24() {
    let text = json::to_checkpoint_text(&ex()).replacen(
        "\"id\": \"demo-job\",",
        "\"id\": \"first\", \"goal\": \"g0\", \"id\": \"second\",",
        1,
    );
    let fx = Fx::raw(text.as_bytes());
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    let written = String::from_utf8(fx.cp()).unwrap();
    assert!(written.contains("  \"job\": {\n    \"id\": \"second\",\n    \"goal\": \"Ship the demo.\",\n"));
    let fenced = ex_with(|d| set(d, "handoff/notes", Json::str("run ```cargo test``` first")));
    let fx = Fx::new(&fenced);
    assert!(fx.status().starts_with(r#"{"result": "status""#));
}

#[test]
fn paths_in_answers_are_normalized_as_0_36_2_prints_them_sw18() {
    let cases = [
        ("a//b/./c/", "a/b/c", "a/b/c.log.jsonl"),
        ("./cp.json", "cp.json", "cp.json.log.jsonl"),
        ("a/../b", "a/../b", "a/../b.log.jsonl"),
        ("//x", "//x", "//x.log.jsonl"),
        ("///x", "/x", "/x.log.jsonl"),
        ("cp", "cp", "cp.log.jsonl"),
    ];
    for (given, shown, ledger) in cases {
        let p = shiftwork_core::CheckpointPaths::new(given);
        assert_eq!(
            (p.shown.as_str(), p.ledger_shown.as_str()),
            (shown, ledger),
            "{given}"
        );
    }
    // The `log` of a clock-out and the path of a read error use that form.
    let fx = Fx::new(&ex());
    let answer = compact(&shiftwork_core::clock_out_arguments(
        &fx.env,
        &shiftwork_core::ClockOutArguments {
            checkpoint: "./.shiftwork//./cp.json".into(),
            ..out_args("U3", "done")
        },
    ));
    assert!(
        answer.ends_with(r#""log": ".shiftwork/cp.json.log.jsonl"}"#),
        "{answer}"
    );
    assert!(fx.ledger().is_some());
}

#[test]
fn relative_paths_and_any_file_name_sw19() {
    // The server's working directory is the fixture's `/`; the file name holds non-ASCII and spaces.
    let fx = Fx::empty();
    let name = ".shiftwork/çp ü 😀.json";
    fx.fs
        .write_file(format!("/{name}"), json::to_checkpoint_text(&ex()).as_bytes());
    assert!(
        compact(&shiftwork_core::plan_checkpoint(
            &fx.env,
            std::path::Path::new(name)
        ))
        .contains(r#""ready": ["U3"]"#)
    );
    assert!(
        compact(&shiftwork_core::clock_in_arguments(
            &fx.env,
            std::path::Path::new(name),
            None
        ))
        .starts_with(r#"{"result": "brief""#)
    );
    let answer = shiftwork_core::clock_out_arguments(
        &fx.env,
        &shiftwork_core::ClockOutArguments {
            checkpoint: name.into(),
            ..out_args("U3", "done")
        },
    )
    .answer();
    assert_eq!(
        answer.get("log").and_then(Json::as_str),
        Some(".shiftwork/çp ü 😀.json.log.jsonl")
    );
    assert_eq!(
        fx.fs
            .file(format!("/{name}.log.jsonl"))
            .map(|l| l.iter().filter(|&&b| b == b'\n').count()),
        Some(2)
    );
}

#[test]
fn a_refused_read_writes_nothing_with_any_tool_sw23() {
    let refusals: Vec<(&str, Vec<u8>)> = vec![
        ("not JSON", b"{".to_vec()),
        ("invalid", br#"{"version": 2}"#.to_vec()),
        ("not UTF-8", b"\xff".to_vec()),
        (
            "duplicate ids",
            json::to_checkpoint_text(&ex_with(|d| set(d, "plan/units/2/id", Json::str("U3")))).into_bytes(),
        ),
    ];
    for (what, bytes) in refusals {
        let fx = Fx::raw(&bytes);
        fx.fs
            .write_file(LEDGER, b"{\"event\": \"brief\", \"unit\": \"U3\"}\n");
        let before = fx.snapshot();
        let answers = [
            fx.status(),
            fx.plan(),
            fx.clock_in(None),
            fx.clock_in(Some("U3")),
            fx.out("U3", "done"),
        ];
        for answer in answers {
            assert!(
                answer.starts_with(r#"{"result": "error", "reason": ""#),
                "{what}: {answer}"
            );
        }
        assert_eq!(fx.snapshot(), before, "{what}");
    }
}

#[test]
fn the_dialect_of_0_36_2_is_read_and_written_back_sw25() {
    let digits = "7".repeat(5000);
    let text = json::to_checkpoint_text(&ex()).replacen(
        "\"outcome\": \"done\"\n    }\n  ],\n  \"retro\"",
        &format!(
            "\"outcome\": \"done\",\t\"inf\": Infinity, \"ninf\": -Infinity, \"nan\": NaN, \"huge\": {digits}, \"dup\": 1, \"dup\": 2\n    }}\n  ],\n  \"retro\""
        ),
        1,
    );
    let fx = Fx::raw(text.as_bytes());
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    let written = String::from_utf8(fx.cp()).unwrap();
    for line in [
        "      \"inf\": Infinity,".to_owned(),
        "      \"ninf\": -Infinity,".to_owned(),
        "      \"nan\": NaN,".to_owned(),
        format!("      \"huge\": {digits},"),
        "      \"dup\": 2".to_owned(),
    ] {
        assert!(written.lines().any(|l| l == line), "missing {line}");
    }
}
