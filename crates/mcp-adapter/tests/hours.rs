//! The `hours` group: the tool `hours_check` (hours.md §11) through the in-process MCP client and the
//! real binary — the examples of §11 exactly, the argument checks in order, the server zone, and "now"
//! from the clock seam.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use rmcp::model::Tool;
use serde_json::{Value, json};
use shiftwork_mcp::groups::hours::{self, ServerZone, resolve_server_zone};
use shiftwork_mcp::registry::{Outcome, Registry, TextStyle, ToolDef};
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::{Server, groups, instructions};
use shiftwork_seams::ManualClock;

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

/// The tool with a manual clock at `now` and the given server zone.
fn tool_at(now: &str, server_zone: Tz) -> ToolDef {
    hours::tool(Arc::new(ManualClock::new(utc(now))), server_zone)
}

/// An in-process MCP server holding only `hours_check`.
async fn client_for(tool: ToolDef) -> (rmcp::service::RunningService<rmcp::RoleClient, ()>, Tool) {
    let server = Server::new(
        Registry::from_tools(vec![tool]),
        instructions(&groups::all(), &["hours"]),
    );
    let client = support::connect(server).await;
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(listed.len(), 1);
    let descriptor = listed[0].clone();
    (client, descriptor)
}

/// Calls through MCP; checks MC-8/HR-85 (valid against the output schema, `isError` false, one compact
/// text block equal to `expected` byte for byte, keys in order).
async fn check_call(tool: ToolDef, arguments: Value, expected: &str) {
    let (client, descriptor) = client_for(tool).await;
    let result = support::call(&client, "hours_check", arguments.clone()).await;
    assert_eq!(result.is_error, Some(false), "HR-83: {arguments}");
    let structured = support::assert_valid_answer(&descriptor, &result);
    assert_eq!(support::only_text(&result), expected, "{arguments}");
    assert_eq!(structured, serde_json::from_str::<Value>(expected).unwrap());
}

/// HR-80 … HR-85, HR-92: the ten examples of §11, exact.
#[tokio::test]
async fn hr92_section_11_examples() {
    let far = "2031-01-01T00:00:00Z"; // "now" — never used by the examples that give `at`
    #[rustfmt::skip]
    let rows: Vec<(Tz, Value, &str)> = vec![
        (Tz::UTC, json!({"expression": "TZ=America/Los_Angeles Mon-Fri 09:00-13:00", "at": "2026-09-26T03:00:00Z"}),
         r#"{"result":"hours","in_hours":false,"next_change":"2026-09-28T16:00:00Z","previous_end":"2026-09-25T20:00:00Z","canonical":"TZ=America/Los_Angeles Mon 09:00-13:00; Tue 09:00-13:00; Wed 09:00-13:00; Thu 09:00-13:00; Fri 09:00-13:00","zone":"America/Los_Angeles","summary":"opens Mon 09:00"}"#),
        (Tz::UTC, json!({"expression": "Mon-Fri 09:00-17:30", "at": "2026-09-21T03:29:00Z", "zone": "Asia/Kolkata"}),
         r#"{"result":"hours","in_hours":false,"next_change":"2026-09-21T03:30:00Z","previous_end":"2026-09-18T12:00:00Z","canonical":"Mon 09:00-17:30; Tue 09:00-17:30; Wed 09:00-17:30; Thu 09:00-17:30; Fri 09:00-17:30","zone":"Asia/Kolkata","summary":"opens Mon 09:00"}"#),
        (Tz::UTC, json!({"expression": "TZ=America/New_York 22:00-02:00", "at": "2026-11-01T03:00:00Z"}),
         r#"{"result":"hours","in_hours":true,"next_change":"2026-11-01T07:00:00Z","previous_end":null,"canonical":"TZ=America/New_York Mon 22:00-02:00; Tue 22:00-02:00; Wed 22:00-02:00; Thu 22:00-02:00; Fri 22:00-02:00; Sat 22:00-02:00; Sun 22:00-02:00","zone":"America/New_York","summary":"closes 02:00"}"#),
        (Tz::UTC, json!({"expression": "Mon-Sun 00:00-24:00", "at": "2026-09-23T12:00:00Z", "zone": "UTC"}),
         r#"{"result":"hours","in_hours":true,"next_change":null,"previous_end":null,"canonical":"Mon 00:00-24:00; Tue 00:00-24:00; Wed 00:00-24:00; Thu 00:00-24:00; Fri 00:00-24:00; Sat 00:00-24:00; Sun 00:00-24:00","zone":"UTC","summary":""}"#),
        (Tz::UTC, json!({"expression": "+9:00-13:00"}),
         r#"{"result":"error","reason":"window \"+9:00-13:00\": start time \"+9:00\": malformed hour"}"#),
        (Tz::UTC, json!({"expression": "TZ=Local 09:00-17:00"}),
         r#"{"result":"error","reason":"unknown time zone \"Local\": unknown time zone Local"}"#),
        (Tz::UTC, json!({"expression": "09:00-17:00", "tz": "UTC"}),
         r#"{"result":"error","reason":"unknown argument 'tz'; known: expression, at, zone"}"#),
        (Tz::UTC, json!({"expression": "09:00-17:00", "at": "tomorrow"}),
         r#"{"result":"error","reason":"argument 'at' must be an RFC 3339 timestamp, got \"tomorrow\""}"#),
        (Tz::UTC, json!({"expression": "09:00-17:00", "zone": "Mars/Olympus"}),
         r#"{"result":"error","reason":"unknown time zone \"Mars/Olympus\": unknown time zone Mars/Olympus"}"#),
        (chrono_tz::America::New_York, json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-03-06T22:00:00Z"}),
         r#"{"result":"hours","in_hours":false,"next_change":"2026-03-09T13:00:00Z","previous_end":"2026-03-06T22:00:00Z","canonical":"Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00","zone":"America/New_York","summary":"opens Mon 09:00"}"#),
    ];
    for (server_zone, arguments, expected) in rows {
        check_call(tool_at(far, server_zone), arguments, expected).await;
    }
}

/// The handler's answer without MCP (for the many small cases).
fn answer(tool: &ToolDef, arguments: Value) -> Value {
    match tool.call(arguments.as_object().unwrap()).outcome {
        Outcome::Answer(value, TextStyle::Compact) => value,
        other => panic!("HR-83, HR-85: a compact answer, never a tool error: {other:?}"),
    }
}

fn reason(tool: &ToolDef, arguments: Value) -> String {
    let value = answer(tool, arguments.clone());
    assert_eq!(value["result"], "error", "{arguments}: {value}");
    value["reason"].as_str().unwrap().to_owned()
}

/// HR-78: the argument checks, in order; the first failure is the refusal.
#[test]
fn hr78_argument_checks_in_order() {
    let tool = tool_at("2026-09-21T12:00:00Z", Tz::UTC);
    #[rustfmt::skip]
    let rows: Vec<(Value, &str)> = vec![
        // 1: an undeclared key, the first in arrival order, before anything else.
        (json!({"b": 1, "a": 2, "expression": 5}), "unknown argument 'b'; known: expression, at, zone"),
        (json!({"Expression": "09:00-10:00"}), "unknown argument 'Expression'; known: expression, at, zone"),
        // 2: missing or ill-typed arguments.
        (json!({}), "missing argument 'expression'"),
        (json!({"at": 5}), "missing argument 'expression'"),
        (json!({"expression": null}), "argument 'expression' must be a string"),
        (json!({"expression": 9}), "argument 'expression' must be a string"),
        (json!({"expression": "bad", "at": 1}), "argument 'at' must be a string"),
        (json!({"expression": "bad", "zone": ["UTC"]}), "argument 'zone' must be a string"),
        (json!({"expression": "bad", "zone": true, "at": {}}), "argument 'at' must be a string"),
        // 3: the parse error, exactly.
        (json!({"expression": "bad", "zone": "Mars", "at": "never"}), r#"window "bad": malformed time range "bad" (want "HH:MM-HH:MM")"#),
        (json!({"expression": "   "}), "must not be blank"),
        // 4: an unknown zone, also when the expression has a prefix.
        (json!({"expression": "TZ=UTC 09:00-10:00", "zone": "Mars", "at": "never"}), r#"unknown time zone "Mars": unknown time zone Mars"#),
        (json!({"expression": "09:00-10:00", "zone": "utc"}), r#"unknown time zone "utc": unknown time zone utc"#),
        (json!({"expression": "09:00-10:00", "zone": ""}), "zone must not be blank"),
        (json!({"expression": "09:00-10:00", "zone": "Local"}), r#"unknown time zone "Local": unknown time zone Local"#),
        // 5: `at` not RFC 3339, quoted as Rust quotes it.
        (json!({"expression": "09:00-10:00", "at": "2026-09-21"}), r#"argument 'at' must be an RFC 3339 timestamp, got "2026-09-21""#),
        (json!({"expression": "09:00-10:00", "at": "2026-09-21T12:00:00"}), r#"argument 'at' must be an RFC 3339 timestamp, got "2026-09-21T12:00:00""#),
        (json!({"expression": "09:00-10:00", "at": "say \"when\"\n"}), r#"argument 'at' must be an RFC 3339 timestamp, got "say \"when\"\n""#),
    ];
    for (arguments, expected) in rows {
        assert_eq!(reason(&tool, arguments.clone()), expected, "{arguments}");
    }
}

/// HR-77, HR-80: `null` for `at` or `zone` counts as absent; without `at` the instant is "now" from the
/// clock seam; the evaluation zone is the prefix, else `zone`, else the server zone.
#[test]
fn hr77_hr80_defaults_from_the_clock_and_the_server_zone() {
    let tool = tool_at("2026-09-21T13:30:00Z", chrono_tz::Asia::Kolkata); // 19:00 in Kolkata
    let by_clock = answer(
        &tool,
        json!({"expression": "Mon-Fri 09:00-17:30", "at": null, "zone": null}),
    );
    assert_eq!(by_clock["in_hours"], false);
    assert_eq!(by_clock["zone"], "Asia/Kolkata");
    assert_eq!(by_clock["previous_end"], "2026-09-21T12:00:00Z");
    assert_eq!(by_clock["next_change"], "2026-09-22T03:30:00Z");
    let in_utc = answer(&tool, json!({"expression": "Mon-Fri 09:00-17:30", "zone": "UTC"}));
    assert_eq!(
        (in_utc["in_hours"].clone(), in_utc["zone"].clone()),
        (json!(true), json!("UTC"))
    );
    let prefixed = answer(
        &tool,
        json!({"expression": "TZ=US/Eastern Mon-Fri 09:00-17:30", "zone": "UTC"}),
    );
    assert_eq!(
        prefixed["zone"], "US/Eastern",
        "HR-31: the prefix text as written"
    );
    assert_eq!(prefixed["in_hours"], true);
    let link = answer(
        &tool,
        json!({"expression": "Mon-Fri 09:00-17:30", "zone": "US/Eastern"}),
    );
    assert_eq!(link["zone"], "US/Eastern", "HR-81: the zone argument as given");
    // The handler reads the clock on every call.
    let clock = ManualClock::new(utc("2026-09-21T12:59:59Z"));
    let moving = hours::tool(Arc::new(clock.clone()), Tz::UTC);
    assert_eq!(
        answer(&moving, json!({"expression": "09:00-13:00"}))["in_hours"],
        true
    );
    clock.set(utc("2026-09-21T13:00:00Z"));
    let later = answer(&moving, json!({"expression": "09:00-13:00"}));
    assert_eq!(
        (later["in_hours"].clone(), later["previous_end"].clone()),
        (json!(false), json!("2026-09-21T13:00:00Z"))
    );
}

/// HR-82, HR-84: the summary in the evaluation zone; timestamps in UTC, whole seconds, `Z`, whatever
/// the form of `at`.
#[test]
fn hr82_hr84_summary_and_timestamps() {
    let tool = tool_at("2026-09-21T12:00:00Z", Tz::UTC);
    let v = answer(
        &tool,
        json!({"expression": "TZ=Asia/Kathmandu Mon-Fri 09:00-17:00", "at": "2026-09-21T10:15:00.123456+02:00"}),
    );
    assert_eq!(v["in_hours"], true);
    assert_eq!(v["next_change"], "2026-09-21T11:15:00Z");
    assert_eq!(v["summary"], "closes 17:00");
    let v = answer(
        &tool,
        json!({"expression": "TZ=Asia/Kathmandu Mon-Fri 09:00-17:00", "at": "2026-09-25T11:15:00.5Z"}),
    );
    assert_eq!(v["previous_end"], "2026-09-25T11:15:00Z");
    assert_eq!(v["summary"], "opens Mon 09:00");
    let v = answer(
        &tool,
        json!({"expression": "00:00-12:00; 12:00-24:00", "at": "2026-09-25T11:15:00Z"}),
    );
    assert_eq!(
        (v["summary"].clone(), v["next_change"].clone()),
        (json!(""), Value::Null)
    );
}

/// The issue's check: New York's fall-back night, `01:00-02:00` runs on both passes.
#[test]
fn issue5_call_from_the_shell_answers_in_hours_through_the_fold() {
    let out = support::run(
        &[
            "call",
            "hours_check",
            r#"{"expression":"TZ=America/New_York 01:00-02:00","at":"2026-11-01T05:30:00Z"}"#,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "hours");
    assert_eq!(v["in_hours"], true);
    assert_eq!(v["next_change"], "2026-11-01T07:00:00Z");
    // MC-4: a refusal is a result, exit 0.
    let out = support::run(
        &["call", "hours_check", r#"{"expression":"TZ=Local 09:00-17:00"}"#],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        r#"{"result":"error","reason":"unknown time zone \"Local\": unknown time zone Local"}"#
    );
}

/// HR-79 through the binary: `--zone` wins over `TZ`; an unknown `--zone` is a usage error (exit 2);
/// `TZ` with a leading `:` is read; an unknown `TZ` warns and uses UTC.
#[test]
fn hr79_server_zone_from_flag_and_environment() {
    let args = r#"{"expression":"Mon-Fri 09:00-17:00","at":"2026-03-06T22:00:00Z"}"#;
    let zone_of = |out: &std::process::Output| -> String {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["zone"].as_str().unwrap().to_owned()
    };
    let out = support::run(
        &["call", "hours_check", args, "--zone", "America/New_York"],
        &[("TZ", "Asia/Tokyo")],
    );
    assert_eq!(zone_of(&out), "America/New_York");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["next_change"], "2026-03-09T13:00:00Z",
        "§11 example 10 through the binary"
    );
    assert_eq!(
        zone_of(&support::run(
            &["call", "hours_check", args],
            &[("TZ", ":Asia/Tokyo")]
        )),
        "Asia/Tokyo"
    );
    let out = support::run(&["call", "hours_check", args], &[("TZ", "Mars/Olympus")]);
    assert_eq!(zone_of(&out), "UTC");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("warning")
            && stderr.contains(r#"TZ: "Mars/Olympus" is not a known IANA time zone"#)
            && stderr.matches("Mars/Olympus").count() == 1
            && stderr.contains("; hours_check uses UTC"),
        "{stderr}"
    );
    let out = support::run(&["call", "hours_check", args, "--zone=Mars/Olympus"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(r#"--zone: "Mars/Olympus" is not a known IANA time zone"#)
            && stderr.matches("Mars/Olympus").count() == 1,
        "issue 31 item 5: each message once: {stderr}"
    );
    assert!(out.stdout.is_empty());
    // `serve` refuses to start with an unknown `--zone` too.
    let out = support::run(&["serve", "--zone", "Local"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// HR-79: the resolution order, table-driven (flag, TZ, the OS's zone).
#[test]
fn hr79_resolution_order() {
    let os = |name: &'static str| move || Some(name.to_owned());
    let no_os = || None;
    let ok = |zone: Tz| Ok(ServerZone { zone, warning: None });
    assert_eq!(
        resolve_server_zone(Some("Europe/London"), Some("Asia/Tokyo"), os("Asia/Kolkata")),
        ok(chrono_tz::Europe::London)
    );
    // Issue 31 item 5 (a deliberate difference from HR-79's "the parse_zone text", which repeats the
    // name as the expression grammar does): the command line names the zone once and says what a
    // zone looks like.
    assert_eq!(
        resolve_server_zone(Some("Mars"), Some("Asia/Tokyo"), os("Asia/Kolkata")),
        Err(String::from(
            r#"--zone: "Mars" is not a known IANA time zone (such as Europe/London or America/New_York)"#
        ))
    );
    assert_eq!(
        resolve_server_zone(None, Some("Asia/Tokyo"), os("Asia/Kolkata")),
        ok(chrono_tz::Asia::Tokyo)
    );
    assert_eq!(
        resolve_server_zone(None, Some(":Asia/Tokyo"), os("Asia/Kolkata")),
        ok(chrono_tz::Asia::Tokyo)
    );
    let odd = resolve_server_zone(None, Some("::Asia/Tokyo"), os("Asia/Kolkata")).unwrap();
    assert_eq!(odd.zone, Tz::UTC, "only one leading ':' is removed");
    assert!(
        odd.warning
            .unwrap()
            .contains(r#"TZ: ":Asia/Tokyo" is not a known IANA time zone"#)
    );
    let posix = resolve_server_zone(None, Some("EST+5"), os("Asia/Kolkata")).unwrap();
    assert_eq!(posix.zone, Tz::UTC, "an unknown TZ uses UTC, not the OS zone");
    assert!(posix.warning.is_some());
    assert_eq!(
        resolve_server_zone(None, Some("  "), os("Asia/Kolkata")),
        ok(chrono_tz::Asia::Kolkata)
    );
    assert_eq!(
        resolve_server_zone(None, None, os("Asia/Kolkata")),
        ok(chrono_tz::Asia::Kolkata)
    );
    assert_eq!(resolve_server_zone(None, None, os("Not/AZone")), ok(Tz::UTC));
    assert_eq!(resolve_server_zone(None, None, no_os), ok(Tz::UTC));
    // Through the group's settings: the flag wins even when TZ is set.
    let settings = Settings::new(
        [("--zone", String::from("Asia/Kathmandu"))],
        [(String::from("TZ"), String::from("UTC"))],
    );
    let built = Registry::build(&groups::all(), &["hours"], &settings).unwrap();
    let v = answer(
        &built.tools()[0],
        json!({"expression": "00:00-01:00", "at": "2026-09-21T00:00:00Z"}),
    );
    assert_eq!(v["zone"], "Asia/Kathmandu");
}

/// HR-76, HR-77, HR-83: the descriptor, the closed input schema in argument order, the output schema
/// admitting exactly the two shapes.
#[tokio::test]
async fn hr76_hr77_hr83_descriptor_and_schemas() {
    let (_client, descriptor) = client_for(tool_at("2026-09-21T12:00:00Z", Tz::UTC)).await;
    let d = serde_json::to_value(&descriptor).unwrap();
    assert_eq!(d["name"], "hours_check");
    assert_eq!(d["title"], "Check operating hours");
    assert_eq!(
        d["annotations"],
        json!({"title": "Check operating hours", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    let description = d["description"].as_str().unwrap();
    for words in [
        "[TZ=zone] [days] HH:MM-HH:MM",
        "default: now",
        "in hours",
        "next change",
        "canonical",
        "Changes nothing",
        "before starting",
    ] {
        assert!(
            description.contains(words),
            "HR-76: the description says {words:?}: {description}"
        );
    }
    let input = &d["inputSchema"];
    let keys: Vec<&str> = input["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["expression", "at", "zone"]);
    assert_eq!(input["required"], json!(["expression"]));
    assert_eq!(input["additionalProperties"], false);
    assert_eq!(input["properties"]["at"]["format"], "date-time");
    let output = &d["outputSchema"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["result"]));
    let valid = |v: Value| support::validate(output, &v).is_ok();
    assert!(valid(json!({"result": "error", "reason": "x"})));
    assert!(valid(
        json!({"result": "hours", "in_hours": true, "next_change": null, "previous_end": null, "canonical": "Mon 09:00-10:00", "zone": "UTC", "summary": ""})
    ));
    assert!(!valid(json!({"result": "error"})));
    assert!(!valid(json!({"result": "error", "reason": "x", "extra": 1})));
    assert!(!valid(json!({"result": "hours", "reason": "x"})));
    assert!(!valid(
        json!({"result": "hours", "in_hours": true, "next_change": null, "previous_end": null, "canonical": "", "zone": "UTC"})
    ));
    assert!(!valid(json!({"result": "other", "reason": "x"})));
}

/// HR-85, MC-9: every refusal and answer carries one compact text block; a refusal is `isError` false.
#[tokio::test]
async fn hr85_refusals_through_mcp() {
    let (client, descriptor) = client_for(tool_at("2026-09-21T12:00:00Z", Tz::UTC)).await;
    for arguments in [
        json!({"tz": "UTC", "zone": 1}),
        json!({}),
        json!({"expression": "Mon Tue 09:00-10:00"}),
    ] {
        let result = support::call(&client, "hours_check", arguments.clone()).await;
        let structured = support::assert_valid_answer(&descriptor, &result);
        assert_eq!(structured["result"], "error", "{arguments}");
        assert!(!support::only_text(&result).contains('\n'), "compact");
    }
}

/// Issue 12 item 14 (class: an answer instant RFC 3339 cannot write): at 9999-12-31 the next opening
/// lies in year 10000; `next_change` is `null` (and the summary empty) instead of
/// `+10000-01-03T09:00:00Z`, and every answer still validates against the output schema.
#[tokio::test]
async fn issue12_item14_instant_past_year_9999_is_null() {
    let tool = tool_at("2026-09-21T12:00:00Z", Tz::UTC);
    #[rustfmt::skip]
    let rows: &[(&str, &str, Value, Value, &str)] = &[
        ("TZ=UTC Mon-Fri 09:00-17:00", "9999-12-31T18:00:00Z", Value::Null, json!("9999-12-31T17:00:00Z"), ""),
        ("TZ=UTC Mon-Fri 09:00-17:00", "9999-12-31T12:00:00Z", json!("9999-12-31T17:00:00Z"), Value::Null, "closes 17:00"),
        ("TZ=UTC Mon-Fri 09:00-17:00", "0000-01-01T12:00:00Z", json!("0000-01-03T09:00:00Z"), Value::Null, "opens Mon 09:00"),
    ];
    for (expression, at, next, prev, summary) in rows {
        let v = answer(&tool, json!({"expression": expression, "at": at}));
        assert_eq!(
            (
                &v["next_change"],
                &v["previous_end"],
                v["summary"].as_str().unwrap()
            ),
            (next, prev, *summary),
            "{at}: {v}"
        );
    }
    let (client, descriptor) = client_for(tool_at("2026-09-21T12:00:00Z", Tz::UTC)).await;
    let arguments = json!({"expression": "TZ=UTC Mon-Fri 09:00-17:00", "at": "9999-12-31T18:00:00Z"});
    let result = support::call(&client, "hours_check", arguments).await;
    let structured = support::assert_valid_answer(&descriptor, &result);
    assert_eq!(structured["next_change"], Value::Null);
    assert!(!support::only_text(&result).contains("+10000"));
}

/// Issue 12 item 14 (class: an input quoted twice in a reason): a 1 MB expression no longer answers
/// 2 MB of `reason`. An expression over the limit is refused naming it; a value repeated in any other
/// reason (a segment, a time, a zone, `at`) is clipped at 2,000 characters with `…(<k> more)`.
#[test]
fn issue12_item14_long_expression_reason_is_bounded() {
    let tool = tool_at("2026-09-21T12:00:00Z", Tz::UTC);
    let mb = "9".repeat(1 << 20);
    let refused = reason(&tool, json!({"expression": format!("{mb}:00-13:00")}));
    assert_eq!(
        refused,
        format!(
            "argument 'expression' is {} bytes long; an expression may hold at most 2048 bytes",
            (1 << 20) + 9
        )
    );
    // Within the limit, a bad time is quoted whole, exactly as before.
    let short = "9".repeat(1_500);
    assert_eq!(
        reason(&tool, json!({"expression": format!("{short}:00-13:00")})),
        format!(r#"window "{short}:00-13:00": start time "{short}:00": malformed hour"#)
    );
    for arguments in [
        json!({"expression": "09:00-10:00", "zone": mb}),
        json!({"expression": "09:00-10:00", "at": mb}),
        json!({"expression": "09:00-10:00", mb.clone(): 1}),
    ] {
        let text = reason(&tool, arguments);
        assert!(text.len() < 5_000, "{} bytes", text.len());
        assert!(
            text.contains(&format!("…({} more)", (1 << 20) - 2_000)),
            "{}",
            &text[..80]
        );
    }
}

/// Issue 16 item 4 (class: a huge value in a string argument): 10 MB in `expression`, `at` or `zone`
/// (and as an unknown key) gives an answer under 64 KB, through MCP, and the server keeps answering.
/// The crate clips with the same bound and form as `shiftwork_seams::echo` (it cannot depend on it,
/// HR-5): the two must agree.
#[tokio::test]
async fn issue16_item4_ten_megabyte_values_answer_under_64kb() {
    assert_eq!(shiftwork_hours::ECHO_LIMIT, shiftwork_seams::echo::ECHO_LIMIT);
    let value = "Z".repeat(3_000);
    let from_hours = shiftwork_hours::parse_zone(&value).unwrap_err().to_string();
    let clipped = shiftwork_seams::echo::clip_echo(&value);
    assert_eq!(
        from_hours,
        format!("unknown time zone \"{clipped}\": unknown time zone {clipped}")
    );

    let (client, descriptor) = client_for(tool_at("2026-09-21T12:00:00Z", Tz::UTC)).await;
    let ten_mb = "x".repeat(10 << 20);
    let valid_but_long = "09:00-10:00; ".repeat((10 << 20) / 13);
    for arguments in [
        json!({"expression": ten_mb}),
        json!({"expression": valid_but_long}),
        json!({"expression": "09:00-10:00", "at": ten_mb}),
        json!({"expression": "09:00-10:00", "zone": ten_mb}),
        json!({"expression": format!("TZ={ten_mb} 09:00-10:00")}),
        json!({"expression": "09:00-10:00", ten_mb.clone(): true}),
    ] {
        let result = support::call(&client, "hours_check", arguments).await;
        let size = serde_json::to_vec(&result).unwrap().len();
        assert!(size < 64 * 1024, "an answer of {size} bytes");
        let structured = support::assert_valid_answer(&descriptor, &result);
        assert_eq!(structured["result"], "error");
    }
    let after = support::call(
        &client,
        "hours_check",
        json!({"expression": "09:00-10:00", "at": "2026-09-21T09:30:00Z"}),
    )
    .await;
    assert_eq!(
        support::assert_valid_answer(&descriptor, &after)["in_hours"],
        true
    );
}
