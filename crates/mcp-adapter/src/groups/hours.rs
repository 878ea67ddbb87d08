//! The `hours` tool group: `hours_check`, a thin adapter over the `hours` crate.
//!
//! The adapter decides the two things the crate never does: "now" (from the clock seam) and the
//! server's default zone (`--zone`, else `TZ`, else the operating system's zone, else UTC —
//! resolved once at start-up). Everything else — parsing, evaluation, the summary text, the
//! refusals and their bounds — is the crate's typed answer (`shiftwork_hours::HoursQuery`); this
//! module decodes the arguments and encodes the answer.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};
use shiftwork_hours::{HoursQuery, HoursReport, parse_zone};
use shiftwork_seams::echo::clip_echo;
use shiftwork_seams::{Clock, SystemClock};

use crate::registry::{
    Answered, DemoStep, Group, Hints, INVALID_ARGUMENT, Outcome, TextStyle, ToolDef, UNKNOWN_ARGUMENT,
    unknown_argument_sentence,
};
use crate::schema::{boolean, closed_branch, constant, nullable, one_of, string, variants};
use crate::settings::{Setting, Settings};

/// The tool's name.
pub const TOOL: &str = "hours_check";

/// `--zone IANA` / `TZ`: the zone of expressions without a `TZ=` prefix.
pub static ZONE: Setting = Setting {
    flag: "--zone",
    env: Some("TZ"),
    takes_value: true,
    help: "hours: zone for expressions without TZ= (default: TZ, else the system zone, else UTC)",
};

/// The `hours` group.
pub static GROUP: Group = Group {
    name: "hours",
    instructions: "hours: `hours_check` evaluates an operating-hours expression such as \
                   `TZ=Europe/London Mon-Fri 09:00-17:30` at an instant — in hours or not, the next \
                   change, when hours last ended.",
    settings: &[ZONE, crate::resources::HOURS],
    build,
    demo_settings,
    demo,
    try_next: &[
        r#"shiftwork-mcp call hours_check '{"expression":"Mon-Fri 09:00-17:00"}'   # now, in your zone (--zone or TZ)"#,
        r#"shiftwork-mcp call hours_check '{"expression":"TZ=Australia/Lord_Howe 02:00-03:00","at":"2026-10-03T15:00:00Z"}'"#,
    ],
    try_in_demo: &[],
    command: None,
};

const DESCRIPTION: &str = "Evaluate an operating-hours expression ([TZ=zone] [days] HH:MM-HH:MM; …) at an instant \
(default: now): answers whether the instant is in hours, the next change, when the hours last ended (previous_end), \
the canonical form and a summary, exact across DST. Changes nothing and reads no file. Call it before starting work \
that must happen inside (or outside) given hours. A refusal is an answer with result error, not a tool error.";

/// Builds the group's tool: the server zone is resolved here, once. An unknown `--zone` is a
/// start-up usage error; an unknown `TZ` is a warning on stderr, and UTC is used.
fn build(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    let zone = server_zone(settings, &ZONE, "hours_check")?;
    Ok(vec![tool(Arc::new(SystemClock::new()), zone)])
}

/// The server zone of `settings`: the flag of `zone` (a `--zone` like [`ZONE`]), else its
/// environment variable, else the operating system's zone. An unknown `TZ` is warned about on
/// stderr, naming `user` as what falls back to UTC (`hours_check`, the live view).
pub fn server_zone(settings: &Settings, zone: &Setting, user: &str) -> Result<Tz, String> {
    let flag_only = Setting { env: None, ..*zone };
    let flag = settings.value(&flag_only);
    let env = if flag.is_none() {
        settings.value(zone)
    } else {
        None
    };
    let resolved = resolve_server_zone(flag, env, || iana_time_zone::get_timezone().ok())?;
    if let Some(warning) = &resolved.warning {
        crate::terminal::print_err(&format!("shiftwork-mcp: warning: {warning}; {user} uses UTC\n"));
    }
    Ok(resolved.zone)
}

/// The server zone and, when `TZ` named no known zone, what is wrong with it (the caller says what
/// uses UTC instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerZone {
    /// The zone for expressions without a prefix.
    pub zone: Tz,
    /// A warning for stderr.
    pub warning: Option<String>,
}

/// Resolves the server zone from the `--zone` value, the `TZ` value (when the flag is absent) and
/// the operating system's zone name (asked only when both are absent).
pub fn resolve_server_zone(
    flag: Option<&str>,
    tz_env: Option<&str>,
    os_zone: impl FnOnce() -> Option<String>,
) -> Result<ServerZone, String> {
    let quiet = |zone| ServerZone { zone, warning: None };
    // The library's sentence repeats the name (it is the expression grammar's, kept for parity); the
    // command line says it once.
    let unknown = |name: &str| {
        format!(
            "{:?} is not a known IANA time zone (such as Europe/London or America/New_York)",
            clip_echo(name)
        )
    };
    if let Some(name) = flag {
        return parse_zone(name).map(quiet).map_err(|e| match e {
            shiftwork_hours::ZoneError::Unknown { .. } => format!("--zone: {}", unknown(name)),
            other => format!("--zone: {other}"),
        });
    }
    if let Some(value) = tz_env.filter(|v| !v.trim().is_empty()) {
        let name = value.strip_prefix(':').unwrap_or(value);
        return Ok(match parse_zone(name) {
            Ok(zone) => quiet(zone),
            Err(_) => ServerZone {
                zone: Tz::UTC,
                warning: Some(format!("TZ: {}", unknown(name))),
            },
        });
    }
    Ok(quiet(
        os_zone()
            .and_then(|name| parse_zone(&name).ok())
            .unwrap_or(Tz::UTC),
    ))
}

/// The `hours_check` tool with an injected clock and server zone (tests inject both).
pub fn tool(clock: Arc<dyn Clock>, server_zone: Tz) -> ToolDef {
    ToolDef {
        name: TOOL,
        title: "Check operating hours",
        description: DESCRIPTION,
        input_schema: input_schema(),
        output_schema: output_schema(),
        hints: Hints::READ_ONLY,
        unknown_argument: refuse_unknown_argument,
        handler: Arc::new(move |args| check(args.map(), clock.now(), server_zone)),
        prefetch: None,
    }
}

/// The closed input schema (an undeclared argument is refused), properties in argument order.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "description": "Operating hours: [TZ=zone] then windows [days] HH:MM-HH:MM joined by ; (days like Mon-Fri or Sat,Sun, default every day; 24:00 ends a day; 22:00-02:00 runs overnight), at most 2,048 bytes. E.g. \"TZ=America/New_York Mon-Fri 09:00-17:00; Sat 10:00-14:00\"."
            },
            "at": {
                "type": "string",
                "format": "date-time",
                "description": "The instant to evaluate, RFC 3339 (2026-09-28T16:00:00Z, or with an offset). Default: now, by the server's clock."
            },
            "zone": {
                "type": "string",
                "description": "IANA zone (Europe/London) for an expression without TZ=. Default: the server's zone (--zone, else TZ, else the system's zone)."
            }
        },
        "required": ["expression"],
        "additionalProperties": false
    })
}

/// The output schema: an object admitting exactly the result shape and the refusal shape, every
/// member typed and described.
fn output_schema() -> Value {
    variants(
        "result",
        one_of(
            &["hours", "error"],
            "hours: the evaluation; error: the arguments were refused.",
        ),
        vec![
            closed_branch(
                vec![
                    ("result", constant("hours", "The evaluation.")),
                    ("in_hours", boolean("Whether the instant is inside the hours.")),
                    (
                        "next_change",
                        nullable(string(
                            "When it next flips in or out, RFC 3339 in UTC (2026-09-28T16:00:00Z); null when the hours never change.",
                        )),
                    ),
                    (
                        "previous_end",
                        nullable(string(
                            "When the hours last ended, RFC 3339 in UTC; null when in hours or when they never end.",
                        )),
                    ),
                    ("canonical", string("The expression in canonical form.")),
                    (
                        "zone",
                        string(
                            "The zone it was evaluated in: the TZ= prefix, else the zone argument, else the server's.",
                        ),
                    ),
                    (
                        "summary",
                        string(
                            "opens Ddd HH:MM out of hours, closes HH:MM in hours (in that zone); empty when it never changes.",
                        ),
                    ),
                ],
                &[
                    "result",
                    "in_hours",
                    "next_change",
                    "previous_end",
                    "canonical",
                    "zone",
                    "summary",
                ],
            ),
            closed_branch(
                vec![
                    (
                        "result",
                        constant("error", "Refused; a normal result, not a tool error."),
                    ),
                    ("reason", string("Why, in one sentence.")),
                ],
                &["result", "reason"],
            ),
        ],
    )
}

/// A refusal: a normal result (`"result": "error"`), never an MCP tool error; `code` is what the
/// server's telemetry reads.
fn refusal(code: &'static str, reason: impl Into<String>) -> Answered {
    Answered::refusal(
        code,
        Outcome::Answer(
            json!({"result": "error", "reason": reason.into()}),
            TextStyle::Compact,
        ),
    )
}

/// The adapter-wide refusal of an undeclared argument (the first unknown key, in arrival order), in
/// this group's frame: the first check of the arguments.
fn refuse_unknown_argument(_tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    refusal(
        UNKNOWN_ARGUMENT,
        unknown_argument_sentence(&clip_echo(key), known),
    )
}

/// An optional string argument: absent and `null` are `None`.
fn optional_string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("argument '{key}' must be a string")),
    }
}

/// The handler: decodes the arguments (`expression` required, `at` and `zone` optional strings),
/// then the crate answers the question with `now` and the server zone (parsing, the instant, the
/// zone, the evaluation), and the answer or the refusal is encoded.
fn check(args: &Map<String, Value>, now: DateTime<Utc>, server_zone: Tz) -> Answered {
    let expression = match args.get("expression") {
        None => return refusal(INVALID_ARGUMENT, "missing argument 'expression'"),
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return refusal(INVALID_ARGUMENT, "argument 'expression' must be a string"),
    };
    let (at, zone) = match (optional_string(args, "at"), optional_string(args, "zone")) {
        (Err(e), _) | (_, Err(e)) => return refusal(INVALID_ARGUMENT, e),
        (Ok(at), Ok(zone)) => (at, zone),
    };
    match (HoursQuery { expression, at, zone }).answer(now, server_zone) {
        Ok(report) => Answered::result(Outcome::Answer(encode(&report), TextStyle::Compact)),
        Err(refused) => refusal(refused.code(), refused.to_string()),
    }
}

/// The report as `structuredContent`, keys in the order of the output schema.
fn encode(report: &HoursReport) -> Value {
    json!({
        "result": "hours",
        "in_hours": report.in_hours,
        "next_change": report.next_change.map(stamp),
        "previous_end": report.previous_end.map(stamp),
        "canonical": report.canonical,
        "zone": report.zone,
        "summary": report.summary,
    })
}

/// RFC 3339 in UTC, whole seconds, `Z` (`2026-09-28T16:00:00Z`).
fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn demo_settings(_root: &Path) -> Vec<(&'static Setting, String)> {
    vec![(&ZONE, String::from("UTC"))]
}

fn demo(_root: &Path) -> Vec<DemoStep> {
    vec![
        DemoStep::Say(String::from(
            "Operating hours: is an instant in hours, when does that change, when did hours last end?",
        )),
        DemoStep::Call(
            TOOL,
            json!({"expression": "TZ=America/Los_Angeles Mon-Fri 09:00-13:00", "at": "2026-09-26T03:00:00Z"}),
        ),
        DemoStep::Say(String::from(
            "Exact across DST: New York falls back at 06:00Z on 2026-11-01, so 01:00-02:00 runs twice.",
        )),
        DemoStep::Call(
            TOOL,
            json!({"expression": "TZ=America/New_York 01:00-02:00", "at": "2026-11-01T05:30:00Z"}),
        ),
        DemoStep::Say(String::from("A mistake is answered with a reason, not an error:")),
        DemoStep::Call(TOOL, json!({"expression": "Mon-Fri 9:00-17:00"})),
    ]
}
