//! The worklog group over `MemFs`: argument decoding (WL-82, WL-83), the MCP rendering of results and
//! tool errors (WL-79 … WL-81), the probe (WL-84, WL-85) and privacy with injected errors (WL-101,
//! AS-44). The same paths over the real filesystem and the real binary are in `tests/worklog.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use shiftwork_seams::{MemFs, Op};
use shiftwork_worklog::{Config, Worklog};

use super::{EXIT_USAGE, probe, tools};
use crate::registry::{Outcome, ToolDef};
use crate::server::render;
use crate::settings::Settings;

const DIR: &str = "/srv/secret-notes-7f3a";

fn group_tools(fs: &MemFs, dir: Option<&str>, pattern: Option<&str>) -> Vec<ToolDef> {
    tools(Arc::new(Worklog::new(
        {
            let config = dir.map_or(Config::builder(), |d| Config::builder().dir(d));
            pattern.map_or(config.clone(), |p| config.pattern(p)).build()
        },
        fs.clone(),
    )))
}

fn call(tools: &[ToolDef], name: &str, args: Value) -> Outcome {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    tool.call(args.as_object().unwrap()).outcome
}

/// The MCP result of a call, as JSON.
fn mcp(tools: &[ToolDef], name: &str, args: Value) -> Value {
    serde_json::to_value(render(&call(tools, name, args))).unwrap()
}

fn fixture(content: &[u8]) -> MemFs {
    let fs = MemFs::new();
    fs.write_file(Path::new(DIR).join("2026-09-06.md"), content);
    fs
}

/// Runs the probe with `args` (after `worklog`) and the environment `env`; returns the exit status,
/// stdout and stderr.
fn run_probe(fs: &MemFs, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let settings = Settings::new(
        Vec::new(),
        env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = probe(&args, &settings, &mut out, &mut err, |config| {
        Worklog::new(config, fs.clone())
    });
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// WL-79, WL-80, AS-47 (b): a status result is `isError: false`, four keys with explicit nulls, and
/// one text block that is exactly the pretty JSON.
#[test]
fn wl79_wl80_status_result_shape() {
    let fs = fixture(b"# 2026-09-06\n\n- [x] a\n- [ ] b\n\nNotes here\n");
    let tools = group_tools(&fs, Some(DIR), None);
    let result = mcp(&tools, "worklog_append", json!({"description": "Fixed the bug"}));
    assert_eq!(result["isError"], json!(false));
    assert_eq!(
        result["structuredContent"],
        json!({"status": "written", "file": "2026-09-06.md", "line": "- [x] Fixed the bug", "message": "one item was appended to the checklist in \"2026-09-06.md\""})
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["content"].as_array().unwrap().len(), 1);
    assert_eq!(
        text,
        "{\n  \"status\": \"written\",\n  \"file\": \"2026-09-06.md\",\n  \"line\": \"- [x] Fixed the bug\",\n  \"message\": \"one item was appended to the checklist in \\\"2026-09-06.md\\\"\"\n}"
    );
    let empty = mcp(&tools, "worklog_append", json!({"description": ""}));
    assert_eq!(empty["isError"], json!(false));
    assert_eq!(
        empty["structuredContent"],
        json!({"status": "empty", "file": null, "line": null, "message": "the description is empty, so there is nothing to write"})
    );
    let check = mcp(&tools, "worklog_check", json!({}));
    let keys: Vec<&String> = check["structuredContent"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["status", "file", "items", "message"]);
}

/// WL-80: non-ASCII characters are written as themselves in the text block.
#[test]
fn wl80_non_ascii_as_itself() {
    let fs = fixture(b"- [x] a\n");
    let tools = group_tools(&fs, Some(DIR), None);
    let text = call(&tools, "worklog_append", json!({"description": "Café réparé 🎉"})).text();
    assert!(text.contains("\"line\": \"- [x] Café réparé 🎉\""), "{text}");
}

/// WL-81, WL-69 (the texts reach the client): a tool error is `isError: true`, one text block with the §14 text, no structuredContent.
#[test]
fn wl81_tool_error_shape() {
    let fs = fixture(b"- [x] caf\xE9\n");
    let tools = group_tools(&fs, Some(DIR), None);
    for (name, args) in [
        ("worklog_check", json!({})),
        ("worklog_append", json!({"description": "x"})),
    ] {
        let result = mcp(&tools, name, args);
        assert_eq!(result["isError"], json!(true));
        assert_eq!(result.get("structuredContent"), None);
        assert_eq!(result["content"].as_array().unwrap().len(), 1);
        assert_eq!(
            result["content"][0]["text"],
            json!("\"2026-09-06.md\" is not valid UTF-8")
        );
    }
}

/// WL-82, WL-83, AS-47 (c)–(g): the argument checks in order, each answered as a tool error before the
/// service runs; `""` is not refused.
#[test]
fn wl82_argument_checks_in_order() {
    let fs = fixture(b"- [x] a\n");
    let tools = group_tools(&fs, Some(DIR), None);
    let cases = [
        (
            json!({"description": "x", "bogus": 1}),
            "unknown argument 'bogus'; known: description, dry_run",
        ),
        // MC-9 over WL-82 (the lead's decision): the first unknown key in arrival order is named,
        // not the alphabetically first.
        (
            json!({"zeta": 1, "alpha": 2}),
            "unknown argument 'zeta'; known: description, dry_run",
        ),
        (
            json!({"bogus": 1}),
            "unknown argument 'bogus'; known: description, dry_run",
        ),
        (json!({}), "missing argument 'description'"),
        (json!({"dry_run": "yes"}), "missing argument 'description'"),
        (
            json!({"description": 5, "dry_run": "yes"}),
            "argument 'description' must be a string",
        ),
        (
            json!({"description": null}),
            "argument 'description' must be a string",
        ),
        (
            json!({"description": "x", "dry_run": "yes"}),
            "argument 'dry_run' must be a boolean",
        ),
        (
            json!({"description": "x", "dry_run": null}),
            "argument 'dry_run' must be a boolean",
        ),
        (
            json!({"description": "x", "dry_run": 1}),
            "argument 'dry_run' must be a boolean",
        ),
    ];
    for (args, text) in cases {
        assert_eq!(
            call(&tools, "worklog_append", args.clone()),
            Outcome::ToolError(text.into()),
            "{args}"
        );
    }
    assert_eq!(
        call(&tools, "worklog_check", json!({"x": 1})),
        Outcome::ToolError("unknown argument 'x'; known: (none)".into())
    );
    assert_eq!(
        fs.file(Path::new(DIR).join("2026-09-06.md")).unwrap(),
        b"- [x] a\n"
    );
    assert_eq!(fs.count(Op::List), 0, "the service was never called");
    let outcome = call(
        &tools,
        "worklog_append",
        json!({"description": "", "dry_run": true}),
    );
    let Some(value) = outcome.structured() else {
        panic!("WL-83: \"\" is answered, not refused")
    };
    assert_eq!(value["status"], json!("empty"));
}

/// WL-84, AS-46 over `MemFs`: the outcomes' lines and exit statuses.
#[test]
fn wl84_probe_outcomes() {
    let env = [("WORKLOG_DIR", DIR)];
    let fs = fixture(b"- [x] a\n- [x] b\n");
    assert_eq!(
        run_probe(&fs, &["check"], &env),
        (0, "ok: file=\"2026-09-06.md\" items=2\n".into(), String::new())
    );
    let none = MemFs::new();
    assert_eq!(
        run_probe(&none, &["check"], &[]),
        (
            2,
            String::new(),
            // AS-46's line byte for byte, then issue 31 item 5's hint: which of the two.
            "shiftwork-mcp: the worklog directory is not configured or does not exist\n\
             shiftwork-mcp: hint: the directory is not configured; set WORKLOG_DIR or give --worklog-dir DIR\n"
                .into()
        )
    );
    assert_eq!(
        run_probe(&none, &["check"], &[("WORKLOG_DIR", "/nowhere/log")]),
        (
            2,
            String::new(),
            "shiftwork-mcp: the worklog directory is not configured or does not exist\n\
             shiftwork-mcp: hint: WORKLOG_DIR is set, but names no directory that exists\n"
                .into()
        ),
        "issue 31 item 5: which of the two, and which setting (never the path, WL-101)"
    );
    assert_eq!(
        run_probe(&none, &["check", "--worklog-dir", "/nowhere/log"], &[]),
        (
            2,
            String::new(),
            "shiftwork-mcp: the worklog directory is not configured or does not exist\n\
             shiftwork-mcp: hint: --worklog-dir is set, but names no directory that exists\n"
                .into()
        ),
        "issue 31 item 5: the flag, when the flag gave it"
    );
    let empty = MemFs::new();
    empty.make_dirs(DIR);
    assert_eq!(
        run_probe(&empty, &["check"], &env),
        (
            3,
            String::new(),
            "shiftwork-mcp: the worklog directory holds no files\n".into()
        )
    );
    assert_eq!(
        run_probe(&empty, &["check", "--worklog-pattern", r"\.md$"], &env),
        (
            3,
            String::new(),
            "shiftwork-mcp: no file in the worklog directory matches the configured pattern\n".into()
        )
    );
    let prose = fixture(b"# T\n");
    assert_eq!(
        run_probe(&prose, &["check"], &env),
        (
            4,
            String::new(),
            "shiftwork-mcp: \"2026-09-06.md\" has no checklist yet; the next append will start one\n".into()
        )
    );
    let bad = fixture(b"- [x] caf\xE9\n");
    assert_eq!(
        run_probe(&bad, &["check"], &env),
        (
            1,
            String::new(),
            "shiftwork-mcp: \"2026-09-06.md\" is not valid UTF-8\n".into()
        )
    );
    // WL-7: the option wins over the variable, even when blank (WL-5, WL-8).
    assert_eq!(
        run_probe(
            &fs,
            &["check", "--worklog-dir", DIR],
            &[("WORKLOG_DIR", "/nowhere")]
        )
        .0,
        0
    );
    assert_eq!(run_probe(&fs, &["check", "--worklog-dir="], &env).0, 2);
    assert_eq!(run_probe(&fs, &["check", "--worklog-pattern", "("], &env).0, 1);
    // Issue 31 item 5: E-pattern's line as it is, then the library's own words and the setting.
    assert_eq!(
        run_probe(
            &fs,
            &["check"],
            &[("WORKLOG_DIR", DIR), ("WORKLOG_FILE_PATTERN", "(")]
        ),
        (
            1,
            String::new(),
            "shiftwork-mcp: the configured file pattern is not a valid regular expression\n\
             shiftwork-mcp: hint: WORKLOG_FILE_PATTERN: unclosed group\n"
                .into()
        )
    );
}

/// WL-85, DV-25: usage errors exit 64 with the usage on stderr; `--help` prints help on stdout, exit 0.
#[test]
fn wl85_probe_usage_and_help() {
    let fs = fixture(b"- [x] a\n");
    for args in [
        &["check", "--bogus"][..],
        &["check", "--worklog-dir"],
        &["check", "extra"],
        &["frob"],
        &[],
    ] {
        let (code, out, err) = run_probe(&fs, args, &[("WORKLOG_DIR", DIR)]);
        assert_eq!(code, EXIT_USAGE, "{args:?}");
        assert!(out.is_empty(), "{args:?}");
        assert!(
            err.starts_with("shiftwork-mcp: ") && err.contains("usage: shiftwork-mcp worklog check"),
            "{err}"
        );
        assert!(err.ends_with('\n'));
    }
    for args in [&["check", "--help"][..], &["--help"], &["check", "-h"]] {
        let (code, out, err) = run_probe(&fs, args, &[]);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert!(out.contains("usage: shiftwork-mcp worklog check") && out.contains("WORKLOG_FILE_PATTERN"));
    }
}

/// WL-84 ("like the tool, the probe never writes"), WL-50: no lock file, no temporary file.
#[test]
fn wl84_probe_never_writes() {
    let fs = fixture(b"# T\n");
    let before = fs.paths();
    assert_eq!(run_probe(&fs, &["check"], &[("WORKLOG_DIR", DIR)]).0, 4);
    assert_eq!(fs.paths(), before);
    assert_eq!(
        fs.count(Op::Create) + fs.count(Op::Lock) + fs.count(Op::Rename),
        0
    );
}

/// WL-101, AS-44 through the adapter: every status and every tool error (injected through `MemFs`),
/// rendered as MCP results and as the probe's output, never holds the directory's name, a link's
/// target or an absolute path.
#[test]
fn wl101_as44_privacy_through_the_adapter() {
    let fs = MemFs::new();
    fs.make_dirs(DIR);
    let mut seen: Vec<String> = Vec::new();
    let tools = group_tools(&fs, Some(DIR), None);
    let mut both = |fs: &MemFs, tools: &[ToolDef], args: Value, env: &[(&str, &str)]| {
        seen.push(mcp(tools, "worklog_append", args).to_string());
        seen.push(mcp(tools, "worklog_check", json!({})).to_string());
        let (_, out, err) = run_probe(fs, &["check"], env);
        seen.push(out);
        seen.push(err);
    };
    let env = [("WORKLOG_DIR", DIR)];
    both(&fs, &tools, json!({"description": "x"}), &env); // no_file
    let patterned = group_tools(&fs, Some(DIR), Some("^z"));
    both(
        &fs,
        &patterned,
        json!({"description": "x"}),
        &[("WORKLOG_DIR", DIR), ("WORKLOG_FILE_PATTERN", "^z")],
    );
    let missing = group_tools(&fs, Some("/srv/secret-notes-7f3a/missing"), None);
    both(
        &fs,
        &missing,
        json!({"description": "x"}),
        &[("WORKLOG_DIR", "/srv/secret-notes-7f3a/missing")],
    );
    fs.write_file("/srv/hidden-target-9c1d/real.md", b"# T\n");
    fs.symlink(
        "/srv/hidden-target-9c1d/real.md",
        Path::new(DIR).join("2026-09-06.md"),
    );
    both(&fs, &tools, json!({"description": "x", "dry_run": true}), &env); // dry_run new, no_checklist
    both(&fs, &tools, json!({"description": "x"}), &env); // created, ok
    both(&fs, &tools, json!({"description": "y"}), &env); // written
    both(&fs, &tools, json!({"description": "y"}), &env); // duplicate
    both(&fs, &tools, json!({"description": "z", "dry_run": true}), &env); // dry_run
    both(&fs, &tools, json!({"description": " "}), &env); // empty
    let bad_pattern = group_tools(&fs, Some(DIR), Some("("));
    both(
        &fs,
        &bad_pattern,
        json!({"description": "x"}),
        &[("WORKLOG_DIR", DIR), ("WORKLOG_FILE_PATTERN", "(")],
    );
    let file = Path::new(DIR).join("2026-09-06.md");
    fs.fail_path(Op::List, DIR, libc::EACCES);
    both(&fs, &tools, json!({"description": "w"}), &env);
    fs.clear_faults();
    fs.fail_path(Op::Read, &file, libc::EACCES);
    both(&fs, &tools, json!({"description": "w"}), &env);
    fs.clear_faults();
    for op in [Op::Create, Op::Rename, Op::Lock] {
        fs.fail_nth(op, 1, libc::EACCES);
        both(&fs, &tools, json!({"description": format!("w {op:?}")}), &env);
        fs.clear_faults();
    }
    fs.lock_times_out(Path::new(DIR).join(shiftwork_worklog::LOCK_FILE_NAME));
    both(&fs, &tools, json!({"description": "locked out"}), &env);
    fs.write_file("/srv/hidden-target-9c1d/real.md", b"\xFF");
    both(&fs, &tools, json!({"description": "x"}), &env);
    let all = seen.join("\n");
    for needle in [
        "timed out waiting for another append to finish",
        "cannot list the worklog directory: Permission denied",
        "cannot read \\\"2026-09-06.md\\\": Permission denied",
        "cannot write \\\"2026-09-06.md\\\": Permission denied",
        "is not valid UTF-8",
        "the configured file pattern is not a valid regular expression",
        "\"status\":\"duplicate\"",
    ] {
        assert!(all.contains(needle), "{needle} was not produced");
    }
    for forbidden in [
        "secret-notes-7f3a",
        "hidden-target-9c1d",
        "/srv",
        "real.md",
        ".worklog",
        ".tmp",
    ] {
        assert!(!all.contains(forbidden), "{forbidden} leaked: {all}");
    }
}

/// Issue 27 item 11 (class: control characters reach a terminal or a file), over `MemFs`: a file name
/// and a first item's indent are repeated by the answers as they are, and a JSON writer leaves DEL, the
/// C1 controls, the line separators and the bidirectional controls raw. The worklog tools write every
/// one of them as a JSON escape, in the structured answer and in the text block alike, so the values a
/// client reads are the real ones and nothing raw is printed; tool errors and the probe's lines are
/// escaped as `\u{…}`. A description holding a bidirectional control is refused and writes nothing.
#[test]
fn issue27_item11_answers_hold_no_raw_control_or_bidi_character() {
    use shiftwork_seams::echo::is_control_or_bidi;

    let raw = |text: &str| -> Vec<char> {
        text.chars()
            .filter(|&c| c != '\n' && is_control_or_bidi(c))
            .collect()
    };
    let name = "day\u{202e}\u{9b}\u{7f}\u{2066}.md";
    let fs = MemFs::new();
    fs.write_file(Path::new(DIR).join(name), "\u{85}- [x] a\n".as_bytes());
    let tools = group_tools(&fs, Some(DIR), None);
    for (tool, args) in [
        ("worklog_check", json!({})),
        ("worklog_append", json!({"description": "b", "dry_run": true})),
        ("worklog_append", json!({"description": "b"})),
        ("worklog_append", json!({"description": "b"})),
    ] {
        let outcome = call(&tools, tool, args);
        let Outcome::Prerendered {
            structured,
            text_json,
        } = &outcome
        else {
            panic!("{tool}: {outcome:?}")
        };
        assert!(raw(structured).is_empty(), "{tool}: {structured}");
        let text = outcome.text();
        assert!(raw(&text).is_empty(), "{tool}: {text}");
        assert!(raw(text_json.as_deref().unwrap()).is_empty());
        // The values are the real ones.
        let value: Value = serde_json::from_str(structured).unwrap();
        assert_eq!(value["file"], json!(name), "{tool}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value, "{tool}");
    }
    assert_eq!(
        fs.file(Path::new(DIR).join(name)).unwrap(),
        "\u{85}- [x] a\n\u{85}- [x] b\n".as_bytes()
    );
    let line = call(
        &tools,
        "worklog_append",
        json!({"description": "c", "dry_run": true}),
    )
    .structured()
    .unwrap()["line"]
        .clone();
    assert_eq!(line, json!("\u{85}- [x] c"));
    // A bidirectional control in a description is refused, naming it; nothing is written.
    let refused = call(&tools, "worklog_append", json!({"description": "x\u{202e}y"}));
    assert_eq!(
        refused,
        Outcome::ToolError(String::from(
            "the description holds the control character U+202E (RLO) at character 2; a description may \
             hold no control character other than whitespace, so nothing was written"
        ))
    );
    // Tool errors: the not-UTF-8 sentence quotes the name escaped.
    fs.write_file(Path::new(DIR).join(name), b"- [x] caf\xE9\n");
    let Outcome::ToolError(error) = call(&tools, "worklog_check", json!({})) else {
        panic!("not UTF-8 is an error")
    };
    assert!(raw(&error).is_empty(), "{error}");
    assert_eq!(
        error,
        r#""day\u{202e}\u{9b}\u{7f}\u{2066}.md" is not valid UTF-8"#
    );
    // The probe: the error line and the ok line.
    let (code, out, err) = run_probe(&fs, &["check", "--worklog-dir", DIR], &[]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(raw(&err).is_empty(), "{err}");
    fs.write_file(Path::new(DIR).join(name), b"- [x] a\n");
    let (code, out, err) = run_probe(&fs, &["check", "--worklog-dir", DIR], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "ok: file=\"day\\u{202e}\\u{9b}\\u{7f}\\u{2066}.md\" items=1\n"
    );
}
