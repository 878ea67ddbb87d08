//! Issue 27, the second hostile round (the shift-work part): one test per class, named after the
//! class, each failing on the code before the fix.

use shiftwork_core::json::{self, Json};

use super::support::*;

/// The reasons of the four checkpoint tools on the fixture's checkpoint.
fn reasons(fx: &Fx) -> Vec<String> {
    [fx.status(), fx.plan(), fx.clock_in(None), fx.out("U3", "done")]
        .iter()
        .map(|answer| {
            parse(answer)
                .get("reason")
                .and_then(Json::as_str)
                .unwrap_or_else(|| panic!("a refusal: {answer}"))
                .to_owned()
        })
        .collect()
}

/// Item 13: a refusal about the file a `checkpoint` argument names quotes none of its content —
/// whatever the file: a secret in a JSON string, a key, an enum's place, a file that is not JSON —
/// and a syntax error in a file that does not begin as a JSON object gives no position (the offset of
/// its first invalid byte would tell the length of a token). Every tool refuses alike.
#[test]
fn a_refusal_about_a_document_never_echoes_its_content_issue27_item13() {
    let secret = "ghp_SECRET0123456789";
    let with_secret = |edit: &dyn Fn(&mut json::Object)| {
        let doc = ex_with(|d| edit(d));
        json::to_checkpoint_text(&doc).into_bytes()
    };
    let files: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "a token file",
            format!(r#"{{"token": "{secret}"}}"#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': 'version' is a required property",
        ),
        (
            "a bare string",
            format!(r#""{secret}""#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': the value is not of type 'object'",
        ),
        (
            "a list of strings",
            format!(r#"["{secret}", "x"]"#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': the value is not of type 'object'",
        ),
        (
            "a secret where an enum stands",
            with_secret(&|d| set(d, "plan/units/1/status", Json::str(secret))),
            "checkpoint invalid: JSON does not match schema at 'plan/units/1/status': the value is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
        ),
        (
            "a secret as a key",
            with_secret(&|d| {
                d.insert(secret.to_owned(), Json::int(1));
            }),
            "checkpoint invalid: JSON does not match schema at 'root': Additional properties are not allowed (1 was unexpected)",
        ),
        (
            "a secret as a role name",
            with_secret(&|d| set(d, "job/roles", parse(&format!(r#"{{"{secret}": ["m"]}}"#)))),
            "checkpoint invalid: JSON does not match schema at 'job/roles': a property name is not one of ['planner', 'implementer', 'reviewer']",
        ),
        (
            "a secret in a question",
            with_secret(&|d| {
                set(
                    d,
                    "handoff/open_questions",
                    parse(&format!(r#"[5, {{"q": "{secret}", "kind": 7}}]"#)),
                )
            }),
            "checkpoint invalid: JSON does not match schema at 'handoff/open_questions/1/kind': the value is not one of ['relay', 'decision']",
        ),
        (
            "a secret where a number stands",
            with_secret(&|d| set(d, "job/budget", parse(&format!(r#"{{"tokens": "{secret}"}}"#)))),
            "checkpoint invalid: JSON does not match schema at 'job/budget/tokens': the value is not of type 'integer'",
        ),
        (
            "an env file",
            format!("TOKEN={secret}\n").into_bytes(),
            "checkpoint is not parseable as JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            "digits, then a secret",
            format!("1234567{secret}").into_bytes(),
            "checkpoint is not parseable as JSON: Extra data (no position given: the file does not begin as a JSON object)",
        ),
        (
            "an array cut short",
            format!(r#"["{secret}", tru"#).into_bytes(),
            "checkpoint is not parseable as JSON: Expecting value (no position given: the file does not begin as a JSON object)",
        ),
        (
            "a binary file",
            [b"\x30\x82\x01\x22".as_slice(), secret.as_bytes(), b"\xff\xfe"].concat(),
            "checkpoint unreadable: 'utf-8' codec can't decode the file: invalid start byte (no position given: the file does not begin as a JSON object)",
        ),
        (
            "a string with a byte that is not UTF-8",
            [b"\"".as_slice(), secret.as_bytes(), b"\xe9\""].concat(),
            "checkpoint unreadable: 'utf-8' codec can't decode the file: invalid continuation byte (no position given: the file does not begin as a JSON object)",
        ),
    ];
    for (what, bytes, expected) in files {
        let fx = Fx::raw(&bytes);
        for reason in reasons(&fx) {
            assert_eq!(reason, expected, "{what}");
            assert!(
                !reason.contains("ghp_") && !reason.contains("SECRET"),
                "{what}: {reason}"
            );
        }
    }
    // A checkpoint being written keeps Python's position: its author needs the line and column.
    let fx = Fx::raw(b"{\"version\": 1,\n  \"job\": {\"id\": \"x\",}}");
    assert_eq!(
        reasons(&fx)[0],
        "checkpoint is not parseable as JSON: Expecting property name enclosed in double quotes: line 2 column 21 (char 35)"
    );
}
