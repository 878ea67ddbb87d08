//! The `worklog` tool group: the tools `worklog_append` and `worklog_check` and the probe
//! `shiftwork-mcp worklog check`.
//!
//! Everything about the work log is decided by the `worklog` crate; this module only reads the two
//! settings, decodes the tools' arguments, wires `shiftwork_seams::OsFs`, and presents results: as
//! MCP answers and tool errors, or as the probe's output line and exit status.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use shiftwork_seams::echo::{clip_echo, escape_controls, is_control_or_bidi};
use shiftwork_seams::{Fs, OsFs};
use shiftwork_worklog::{AppendStatus, CheckStatus, Config, NotWritten, Worklog, quoted_name};

use crate::cli::{UsageError, parse_flags};
use crate::registry::{
    Answered, DemoStep, Group, Hints, INVALID_ARGUMENT, Outcome, ToolDef, UNKNOWN_ARGUMENT, Verdict,
    unknown_argument_sentence,
};
use crate::settings::{Setting, Settings};

/// `--worklog-dir` / `WORKLOG_DIR` (the log's directory), then `--worklog-pattern` /
/// `WORKLOG_FILE_PATTERN` (which of its files are logs).
static SETTINGS: [Setting; 2] = [
    Setting {
        flag: "--worklog-dir",
        env: Some("WORKLOG_DIR"),
        takes_value: true,
        help: "work log directory; its newest file is today's log (~ expands to HOME)",
    },
    Setting {
        flag: "--worklog-pattern",
        env: Some("WORKLOG_FILE_PATTERN"),
        takes_value: true,
        help: "regular expression a log file's name must match (recommended: \\.md$)",
    },
];
static DIR: &Setting = &SETTINGS[0];
static PATTERN: &Setting = &SETTINGS[1];

/// The group.
pub static GROUP: Group = Group {
    name: "worklog",
    instructions: "worklog: worklog_append ticks one finished piece of work into the checklist of the \
                   user's current Markdown work log; worklog_check tells whether that log is set up.",
    settings: &SETTINGS,
    build,
    demo_settings,
    demo,
    try_next: &[],
    try_in_demo: &[
        "shiftwork-mcp worklog check",
        "shiftwork-mcp call worklog_append '{\"description\": \"Tried the demo\"}'",
    ],
    command: Some(command),
};

const APPEND_DESCRIPTION: &str = "Adds one completed piece of work, as a checked item, to the checklist of the user's current work log: the newest file in a log directory fixed when the server started. That directory cannot be passed, chosen or revealed.

Call it once per piece of work, right after the work is really done (a bug fixed, a change merged, a question settled). Do not call it for plans, notes or unfinished work.

`description`: a single plain sentence in the past tense, in the language the user keeps the log in, saying what changed and, for a bug, its cause. No issue keys, links or branch names unless the user asks for them.

Sending the same sentence twice is harmless: the second answer is `duplicate` and nothing is written. `created` means the file had no checklist and one was started at its end, which the user should be told. `no_dir` or `no_file` means the log is not set up or not started: report it in one line and stop, without creating files, looking for the log or asking for its path.

`dry_run` is for a preview the user asked for. The answer gives the status, the file's name (never its path) and the line.";

const CHECK_DESCRIPTION: &str = "Tells whether the work log can be reached right now. Use it after an append answered `no_dir` or `no_file`, to tell a server that is not configured (`no_dir`) from a log that has not been started (`no_file`).

It takes no arguments and changes nothing: a file without a checklist is reported as `no_checklist`, not given one. The answer gives the file's name and how many items its checklist holds, never the items. Do not call it before every append.";

/// The work log's configuration (directory, file pattern, home) from flags and environment, read
/// once at start-up: a flag wins over its variable.
pub(crate) fn config(settings: &Settings) -> Config {
    let mut config = Config::builder();
    if let Some(dir) = settings.value(DIR) {
        config = config.dir(dir);
    }
    if let Some(pattern) = settings.value(PATTERN) {
        config = config.pattern(pattern);
    }
    if let Some(home) = settings.env("HOME") {
        config = config.home(home);
    }
    config.build()
}

/// Never fails, and prints nothing about the configuration; an invalid pattern or a missing
/// directory is reported by each call.
fn build(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    Ok(tools(Arc::new(Worklog::new(config(settings), OsFs))))
}

/// Which setting gave a value: the flag when it was given, else its environment variable.
fn source(settings: &Settings, setting: &Setting) -> &'static str {
    match (settings.flag(setting), setting.env) {
        (None, Some(variable)) => variable,
        _ => setting.flag,
    }
}

/// The probe's hint after a `no_dir`: which of "not configured" and "does not exist" it is, and
/// which setting to look at. Not the path: the work log never reveals where it lives, so no output
/// names a directory, the probe's included — its output ends up in scripts' logs.
fn no_dir_hint(config: &Config, settings: &Settings) -> String {
    match &config.dir {
        None => {
            String::from("hint: the directory is not configured; set WORKLOG_DIR or give --worklog-dir DIR")
        }
        Some(_) => format!(
            "hint: {} is set, but names no directory that exists",
            source(settings, DIR)
        ),
    }
}

/// The two tools over one work log (so the pattern is compiled at most once).
pub(crate) fn tools<F: Fs + 'static>(log: Arc<Worklog<F>>) -> Vec<ToolDef> {
    let append_log = Arc::clone(&log);
    vec![
        ToolDef {
            name: "worklog_append",
            title: "Append to today's work log",
            description: APPEND_DESCRIPTION,
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The finished work as one past-tense sentence, at most 4,096 bytes, no control character but whitespace. Runs of whitespace, line breaks included, become single spaces; a leading list marker and checkbox are removed."
                    },
                    "dry_run": {
                        "type": "boolean",
                        "default": false,
                        "description": "If true, return the line that would be written and write nothing. Only for a preview the user asked for."
                    }
                },
                "required": ["description"],
                "additionalProperties": false
            }),
            output_schema: json!({
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "enum": ["written", "created", "duplicate", "dry_run", "empty", "no_dir", "no_file"],
                        "description": "What happened: written, created, duplicate, dry_run, empty, no_dir or no_file."
                    },
                    "file": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "description": "Name of the log file without its directory; null when no file was reached."
                    },
                    "line": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "description": "The line written, or the line that would have been written; null when no file was reached."
                    },
                    "message": {
                        "type": "string",
                        "description": "One sentence describing the outcome, fit to repeat to the user."
                    }
                },
                "required": ["status", "file", "line", "message"],
                "additionalProperties": false
            }),
            hints: Hints::local(false, false, true),
            unknown_argument,
            handler: Arc::new(move |args| append(&append_log, args.map())),
            prefetch: None,
        },
        ToolDef {
            name: "worklog_check",
            title: "Check the work log setup",
            description: CHECK_DESCRIPTION,
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: json!({
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "enum": ["ok", "no_dir", "no_file", "no_checklist"],
                        "description": "ok, or the first thing missing: no_dir, no_file or no_checklist."
                    },
                    "file": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "description": "Name of the log file without its directory; null when no file was reached."
                    },
                    "items": {
                        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
                        "description": "How many items the checklist holds; null unless the status is ok."
                    },
                    "message": {
                        "type": "string",
                        "description": "One sentence describing the outcome, fit to repeat to the user."
                    }
                },
                "required": ["status", "file", "items", "message"],
                "additionalProperties": false
            }),
            hints: Hints::READ_ONLY,
            unknown_argument,
            handler: Arc::new(move |_| {
                answer(log.check().map(|checked| {
                    let verdict = match checked.status {
                        CheckStatus::Ok => Verdict::Result,
                        other => Verdict::Refusal(other.as_str()),
                    };
                    (verdict, serde_json::to_value(checked))
                }))
            }),
            prefetch: None,
        },
    ]
}

/// The first check of the arguments: the adapter-wide refusal of an undeclared argument, as a tool
/// error.
///
/// Every group names the same key: the first unknown one in the order the client sent them, not the
/// alphabetically first, so a client meets one rule whichever group it calls.
///
/// The key is clipped at 2,000 characters: no refusal repeats more of one input value.
fn unknown_argument(_tool: &str, key: &str, _all_unknown: &[&str], known: &[&str]) -> Answered {
    Answered::tool_error(
        Some(UNKNOWN_ARGUMENT),
        unknown_argument_sentence(&clip_echo(key), known),
    )
}

/// The other checks of the arguments (`description` a string and present, `dry_run` a boolean),
/// then the service. An absent `arguments` member arrives as an empty object. The schema's
/// `minLength` is not enforced here, so `""` reaches the service and answers `empty`.
fn append<F: Fs>(log: &Worklog<F>, args: &Map<String, Value>) -> Answered {
    let refuse = |message: &str| Answered::tool_error(Some(INVALID_ARGUMENT), String::from(message));
    let description = match args.get("description") {
        None => return refuse("missing argument 'description'"),
        Some(Value::String(d)) => d,
        Some(_) => return refuse("argument 'description' must be a string"),
    };
    let dry_run = match args.get("dry_run") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return refuse("argument 'dry_run' must be a boolean"),
    };
    answer(log.append(description, dry_run).map(|appended| {
        // The item is in the log, or it was already, or the caller only asked to see the line: a
        // result. Otherwise nothing was written for a reason the caller must act on.
        let verdict = match appended.status {
            AppendStatus::Written
            | AppendStatus::Created
            | AppendStatus::NotWritten(NotWritten::Duplicate | NotWritten::DryRun) => Verdict::Result,
            AppendStatus::NotWritten(why) => Verdict::Refusal(why.as_str()),
        };
        (verdict, serde_json::to_value(appended))
    }))
}

/// A result is `structuredContent` plus its pretty JSON; an error is its sentence, as a tool error.
///
/// What the tools answer reaches a terminal (`call` prints it) and a client's screen, and a result
/// repeats a file's name and the first item's indent as they are. So every character of the shared
/// rule (`shiftwork_seams::echo::is_control_or_bidi`) is written as a JSON escape (`\u202e`) in
/// both the structured answer and the text block — the values a JSON reader gets are the same, but
/// no raw bidirectional control, C1 control or DEL is ever printed (JSON already escapes C0) — and
/// an error's sentence passes through `escape_controls`. For a text without such a character, both
/// are exactly `serde_json`'s output.
///
/// The verdict is the library's status ([`Verdict::Refusal`] with its name, `no_dir`, …) or error
/// ([`Verdict::ToolError`] with [`shiftwork_worklog::WorklogError::code`]).
fn answer(result: Result<(Verdict, serde_json::Result<Value>), shiftwork_worklog::WorklogError>) -> Answered {
    let (verdict, value) = match result {
        Ok((verdict, Ok(value))) => (verdict, value),
        // The results are plain structs of strings, numbers and enums: encoding them cannot fail.
        Ok((_, Err(e))) => {
            return Answered::tool_error(None, format!("the result could not be encoded: {e}"));
        }
        Err(e) => {
            return Answered::tool_error(Some(e.code()), escape_controls(&e.to_string()).into_owned());
        }
    };
    let pretty = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    Answered {
        outcome: Outcome::Prerendered {
            structured: inert_json(&value.to_string()),
            // A string always encodes as JSON; the fallback is never taken.
            text_json: serde_json::to_string(&inert_json(&pretty)).ok(),
        },
        verdict,
    }
}

/// `json` (as `serde_json` writes it) with every character of the shared rule that `serde_json` leaves
/// raw — DEL, the C1 controls, the line and paragraph separators, the bidirectional controls — written
/// as a `\uXXXX` escape. They can stand only inside strings (`serde_json` escapes C0 there, and the
/// layout between tokens is spaces and line feeds), so the JSON value is unchanged.
fn inert_json(json: &str) -> String {
    let raw = |c: char| u32::from(c) >= 0x7F && is_control_or_bidi(c);
    if !json.contains(raw) {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            // Every such character is in the Basic Multilingual Plane: one escape.
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The usage line of the probe.
const PROBE_USAGE: &str =
    "usage: shiftwork-mcp worklog check [--worklog-dir <DIR>] [--worklog-pattern <REGEX>]";

/// The exit status of a usage error (`EX_USAGE` of `sysexits.h`): never one of the outcomes' 0–4.
pub(crate) const EXIT_USAGE: i32 = 64;

/// `shiftwork-mcp worklog …` on the real filesystem.
fn command(args: &[String], settings: &Settings) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    probe(args, settings, &mut stdout.lock(), &mut stderr.lock(), |config| {
        Worklog::new(config, OsFs)
    })
}

/// `worklog check [--worklog-dir DIR] [--worklog-pattern REGEX]` runs `check` once and prints one
/// line; `--help` prints help and exits 0; a usage error exits 64. Never writes.
pub(crate) fn probe<F: Fs>(
    args: &[String],
    settings: &Settings,
    out: &mut dyn Write,
    err: &mut dyn Write,
    open: impl FnOnce(Config) -> Worklog<F>,
) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") || args.first().is_some_and(|a| a == "help") {
        return exit_after(
            out.write_all(probe_help().as_bytes()).and_then(|()| out.flush()),
            0,
        );
    }
    let settings = match probe_settings(args, settings) {
        Ok(s) => s,
        Err(UsageError(message)) => {
            let _ = writeln!(err, "shiftwork-mcp: {message}\n{PROBE_USAGE}");
            return EXIT_USAGE;
        }
    };
    let configured = config(&settings);
    // CLI-fail keeps the fixed sentence on its own line, byte for byte; what the person at the
    // terminal needs to fix it (issue 31 item 5) follows on a line of its own.
    let (line, hint, code, to_stdout) = match open(configured.clone()).check() {
        Ok(result) => match result.status {
            CheckStatus::Ok => {
                // CLI-ok, with the name quoted as every message quotes it (issue 12: never raw).
                let name = quoted_name(&result.file.unwrap_or_default());
                let items = result.items.unwrap_or_default();
                (format!("ok: file={name} items={items}"), None, 0, true)
            }
            CheckStatus::NoDir => (
                result.message,
                Some(no_dir_hint(&configured, &settings)),
                2,
                false,
            ),
            CheckStatus::NoFile => (result.message, None, 3, false),
            CheckStatus::NoChecklist => (result.message, None, 4, false),
        },
        Err(e) => {
            let hint = configured.pattern_problem().map(|problem| {
                let setting = source(&settings, PATTERN);
                format!("hint: {setting}: {problem}")
            });
            (e.to_string(), hint, 1, false)
        }
    };
    // Issue 27 item 11: every line the probe prints passes the shared rule (names are already quoted
    // with their controls escaped; this keeps it so whatever a sentence holds).
    let line = escape_controls(&line);
    if to_stdout {
        exit_after(writeln!(out, "{line}").and_then(|()| out.flush()), code)
    } else {
        // A stderr that is gone is ignored, as every command of the binary ignores it.
        let _ = writeln!(err, "shiftwork-mcp: {line}").and_then(|()| match &hint {
            Some(hint) => writeln!(err, "shiftwork-mcp: {}", escape_controls(hint)),
            None => Ok(()),
        });
        code
    }
}

/// The probe's exit status once its line is written to stdout: `code`, also when the reader went away
/// (`worklog check | true`: a closed reader ends quietly, as every command of the binary does); 1 when
/// stdout failed otherwise.
fn exit_after(written: std::io::Result<()>, code: i32) -> i32 {
    match written {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(_) => 1,
    }
}

/// The probe's own flags over the environment-based settings: `check`, then only the two options.
fn probe_settings(args: &[String], settings: &Settings) -> Result<Settings, UsageError> {
    match args.first().map(String::as_str) {
        Some("check") => {}
        Some(other) => {
            return Err(UsageError(format!(
                "unknown worklog command '{other}'; known: check"
            )));
        }
        None => return Err(UsageError(String::from("a worklog command is required: check"))),
    }
    let parsed = parse_flags(&args[1..], &SETTINGS, &[])?;
    if let Some(p) = parsed.positional.first() {
        return Err(UsageError(format!(
            "worklog check takes no positional argument, got '{p}'"
        )));
    }
    let mut settings = settings.clone();
    for (flag, value) in parsed.flags {
        if let Some(setting) = SETTINGS.iter().find(|s| s.flag == flag) {
            settings.set_flag(setting, value);
        }
    }
    Ok(settings)
}

fn probe_help() -> String {
    let mut text = String::from(
        "shiftwork-mcp worklog check — tell whether the work log can be reached; changes nothing\n\n",
    );
    text.push_str(PROBE_USAGE);
    text.push_str(
        "\n\nOptions (a flag wins over its environment variable; a blank value counts as unset):\n",
    );
    for s in &SETTINGS {
        let env = s.env.map(|e| format!(" [env {e}]")).unwrap_or_default();
        text.push_str(&format!(
            "  {:<28} {}{env}\n",
            format!("{} VALUE", s.flag),
            s.help
        ));
    }
    text.push_str(
        "\nPrints `ok: file=\"NAME\" items=N` and exits 0 when the newest log file has a checklist.\n\
         Otherwise prints the reason on stderr and exits 1 (error), 2 (no_dir), 3 (no_file),\n\
         4 (no_checklist) or 64 (usage error).\n",
    );
    text
}

/// The demo keeps the work log in `worklog/` inside its temporary directory.
fn demo_settings(root: &Path) -> Vec<(&'static Setting, String)> {
    vec![
        (DIR, root.join("worklog").display().to_string()),
        (PATTERN, String::from(r"\.md$")),
    ]
}

/// The group's part of `shiftwork-mcp demo`: write a day's note, append, append again (a
/// duplicate), check.
fn demo(root: &Path) -> Vec<DemoStep> {
    let dir = root.join("worklog");
    vec![
        DemoStep::Say(String::from(
            "A work log directory holds one Markdown note per day; the newest file is today's log.",
        )),
        DemoStep::Prepare(
            String::from("write worklog/2026-09-06.md: a heading and one finished item"),
            Box::new(move || {
                std::fs::create_dir_all(&dir)?;
                std::fs::write(
                    dir.join("2026-09-06.md"),
                    "# 2026-09-06\n\n- [x] Set up the work log\n\nNotes follow the list.\n",
                )
            }),
        ),
        DemoStep::Call(
            "worklog_append",
            json!({"description": "Fixed the login redirect"}),
        ),
        DemoStep::Say(String::from(
            "The same sentence again is harmless: nothing is written.",
        )),
        DemoStep::Call(
            "worklog_append",
            json!({"description": "Fixed the login redirect"}),
        ),
        DemoStep::Call("worklog_check", json!({})),
    ]
}

#[cfg(test)]
#[path = "worklog_tests.rs"]
mod tests;
