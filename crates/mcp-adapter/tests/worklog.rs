//! The worklog group through MCP (in process and the real binary), `shiftwork-mcp call` and the probe
//! `shiftwork-mcp worklog check` on the real filesystem: AS-33, AS-43 … AS-47 and WL-5 … WL-13,
//! WL-65, WL-73 … WL-86. The same paths over `MemFs` with injected errors are the unit tests of
//! `src/groups/worklog.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::{Registry, Server, groups, instructions};
use support::Binary;

const M_NO_DIR: &str = "the worklog directory is not configured or does not exist";

/// Runs `shiftwork-mcp ARGS` with the worklog variables removed from the inherited environment and
/// `env` set, in `cwd` when given.
fn run(args: &[&str], env: &[(&str, &str)], cwd: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
    cmd.args(args)
        .stdin(Stdio::null())
        .env_remove("WORKLOG_DIR")
        .env_remove("WORKLOG_FILE_PATTERN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A temporary log directory holding `2026-09-06.md` with `content`.
fn log_dir(content: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("2026-09-06.md"), content).unwrap();
    dir
}

/// An in-process server over the real filesystem with the worklog group configured by `flags`.
async fn client(flags: Vec<(&'static str, String)>) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let all = groups::all();
    let settings = Settings::new(flags, Vec::new());
    let registry = Registry::build(&all, &["worklog"], &settings).unwrap();
    support::connect(Server::new(registry, instructions(&all, &["worklog"]))).await
}

fn dir_flag(dir: &Path) -> Vec<(&'static str, String)> {
    vec![("--worklog-dir", dir.display().to_string())]
}

/// AS-46 (a)–(f), WL-84, WL-85, WL-7: the probe's outputs and exit codes, configured by option or by
/// variable.
#[test]
fn as46_probe_exit_codes() {
    let ok = log_dir(b"- [x] a\n- [x] b\n");
    let ok_dir = ok.path().to_str().unwrap();
    for (args, env) in [
        (vec!["worklog", "check", "--worklog-dir", ok_dir], vec![]),
        (vec!["worklog", "check"], vec![("WORKLOG_DIR", ok_dir)]),
    ] {
        let out = run(&args, &env, None);
        assert_eq!(
            (out.status.code(), text(&out.stdout), text(&out.stderr)),
            (
                Some(0),
                "ok: file=\"2026-09-06.md\" items=2\n".into(),
                String::new()
            )
        );
    }
    let out = run(&["worklog", "check"], &[], None);
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(2),
            String::new(),
            // AS-46's line byte for byte, then the hint of issue 31 item 5 on a line of its own.
            format!(
                "shiftwork-mcp: {M_NO_DIR}\nshiftwork-mcp: hint: the directory is not configured; set \
                 WORKLOG_DIR or give --worklog-dir DIR\n"
            )
        )
    );
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "worklog",
            "check",
            "--worklog-dir",
            empty.path().to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(3),
            "shiftwork-mcp: the worklog directory holds no files\n".into()
        )
    );
    let prose = log_dir(b"# T\n");
    let out = run(
        &["worklog", "check"],
        &[("WORKLOG_DIR", prose.path().to_str().unwrap())],
        None,
    );
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(4),
            "shiftwork-mcp: \"2026-09-06.md\" has no checklist yet; the next append will start one\n".into()
        )
    );
    let bad = log_dir(b"- [x] caf\xE9\n");
    let out = run(
        &["worklog", "check", "--worklog-dir", bad.path().to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(1),
            String::new(),
            "shiftwork-mcp: \"2026-09-06.md\" is not valid UTF-8\n".into()
        )
    );
    let out = run(&["worklog", "check", "--bogus"], &[], None);
    assert_eq!(out.status.code(), Some(64));
    assert!(text(&out.stderr).contains("usage: shiftwork-mcp worklog check"));
    let out = run(&["worklog", "check", "--help"], &[], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("--worklog-pattern"));
}

/// AS-47 (a), WL-73, WL-74, WL-75, WL-76, WL-77, WL-78: `tools/list` holds both tools with exactly
/// the titles, descriptions, schemas and annotations of §15, and no `_meta`. WL-4: no tool accepts a
/// path (the only arguments are `description` and `dry_run`).
///
/// Deliberate differences from §15's text (issue 35 item 1): a value that may be null is
/// `anyOf: [{type}, {type: null}]` rather than a `type` array, which Gemini's clients refuse; the
/// `description` argument states its bounds in words (`dry_run`'s default is its schema's, as §15 has it).
#[tokio::test]
async fn as47a_tools_list() {
    let dir = tempfile::tempdir().unwrap();
    let client = client(dir_flag(dir.path())).await;
    let tools = client.list_all_tools().await.unwrap();
    let listed: Vec<Value> = tools.iter().map(|t| serde_json::to_value(t).unwrap()).collect();
    assert_eq!(listed.len(), 2);
    let expected = expected_descriptors();
    for (tool, expected) in listed.iter().zip(expected.iter()) {
        assert_eq!(tool, expected, "{}", expected["name"]);
        assert!(tool.get("_meta").is_none());
    }
}

fn expected_descriptors() -> [Value; 2] {
    let append = "Adds one completed piece of work, as a checked item, to the checklist of the user's current work log: the newest file in a log directory fixed when the server started. That directory cannot be passed, chosen or revealed.\n\nCall it once per piece of work, right after the work is really done (a bug fixed, a change merged, a question settled). Do not call it for plans, notes or unfinished work.\n\n`description`: a single plain sentence in the past tense, in the language the user keeps the log in, saying what changed and, for a bug, its cause. No issue keys, links or branch names unless the user asks for them.\n\nSending the same sentence twice is harmless: the second answer is `duplicate` and nothing is written. `created` means the file had no checklist and one was started at its end, which the user should be told. `no_dir` or `no_file` means the log is not set up or not started: report it in one line and stop, without creating files, looking for the log or asking for its path.\n\n`dry_run` is for a preview the user asked for. The answer gives the status, the file's name (never its path) and the line.";
    let check = "Tells whether the work log can be reached right now. Use it after an append answered `no_dir` or `no_file`, to tell a server that is not configured (`no_dir`) from a log that has not been started (`no_file`).\n\nIt takes no arguments and changes nothing: a file without a checklist is reported as `no_checklist`, not given one. The answer gives the file's name and how many items its checklist holds, never the items. Do not call it before every append.";
    let file = json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Name of the log file without its directory; null when no file was reached."});
    let message = json!({"type": "string", "description": "One sentence describing the outcome, fit to repeat to the user."});
    [
        json!({
            "name": "worklog_append",
            "title": "Append to today's work log",
            "description": append,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "minLength": 1, "description": "The finished work as one past-tense sentence, at most 4,096 bytes, no control character but whitespace. Runs of whitespace, line breaks included, become single spaces; a leading list marker and checkbox are removed."},
                    "dry_run": {"type": "boolean", "default": false, "description": "If true, return the line that would be written and write nothing. Only for a preview the user asked for."}
                },
                "required": ["description"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["written", "created", "duplicate", "dry_run", "empty", "no_dir", "no_file"], "description": "What happened: written, created, duplicate, dry_run, empty, no_dir or no_file."},
                    "file": file,
                    "line": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "The line written, or the line that would have been written; null when no file was reached."},
                    "message": message
                },
                "required": ["status", "file", "line", "message"],
                "additionalProperties": false
            },
            "annotations": {"title": "Append to today's work log", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        }),
        json!({
            "name": "worklog_check",
            "title": "Check the work log setup",
            "description": check,
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "outputSchema": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["ok", "no_dir", "no_file", "no_checklist"], "description": "ok, or the first thing missing: no_dir, no_file or no_checklist."},
                    "file": file,
                    "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "description": "How many items the checklist holds; null unless the status is ok."},
                    "message": message
                },
                "required": ["status", "file", "items", "message"],
                "additionalProperties": false
            },
            "annotations": {"title": "Check the work log setup", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        }),
    ]
}

/// AS-47 (b)–(h), WL-79 … WL-83 through MCP on the real filesystem.
#[tokio::test]
async fn as47_mcp_shapes() {
    let dir = log_dir(b"# 2026-09-06\n\n- [x] a\n- [ ] b\n\nNotes here\n");
    let client = client(dir_flag(dir.path())).await;
    let tools = client.list_all_tools().await.unwrap();
    let append = tools.iter().find(|t| t.name == "worklog_append").unwrap();
    let check = tools.iter().find(|t| t.name == "worklog_check").unwrap();

    let written = support::call(&client, "worklog_append", json!({"description": "Fixed the bug"})).await;
    assert_eq!(written.is_error, Some(false));
    assert_eq!(
        support::assert_valid_answer(append, &written),
        json!({"status": "written", "file": "2026-09-06.md", "line": "- [x] Fixed the bug", "message": "one item was appended to the checklist in \"2026-09-06.md\""})
    );
    assert_eq!(
        support::only_text(&written),
        "{\n  \"status\": \"written\",\n  \"file\": \"2026-09-06.md\",\n  \"line\": \"- [x] Fixed the bug\",\n  \"message\": \"one item was appended to the checklist in \\\"2026-09-06.md\\\"\"\n}"
    );
    let empty = support::call(&client, "worklog_append", json!({"description": ""})).await;
    assert_eq!(
        support::assert_valid_answer(append, &empty),
        json!({"status": "empty", "file": null, "line": null, "message": "the description is empty, so there is nothing to write"})
    );
    let before = fs::read(dir.path().join("2026-09-06.md")).unwrap();
    let refusals = [
        (
            "worklog_append",
            json!({"description": "x", "bogus": 1}),
            "unknown argument 'bogus'; known: description, dry_run",
        ),
        ("worklog_append", json!({}), "missing argument 'description'"),
        (
            "worklog_append",
            json!({"description": "x", "dry_run": "yes"}),
            "argument 'dry_run' must be a boolean",
        ),
        (
            "worklog_append",
            json!({"description": 7}),
            "argument 'description' must be a string",
        ),
        (
            "worklog_check",
            json!({"x": 1}),
            "unknown argument 'x'; known: (none)",
        ),
    ];
    for (tool, args, sentence) in refusals {
        let result = support::call(&client, tool, args).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
        assert_eq!(support::only_text(&result), sentence);
    }
    assert_eq!(
        fs::read(dir.path().join("2026-09-06.md")).unwrap(),
        before,
        "refusals write nothing"
    );
    let checked = support::call(&client, "worklog_check", json!({})).await;
    let structured = support::assert_valid_answer(check, &checked);
    let keys: Vec<&String> = structured.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["status", "file", "items", "message"]);
    assert_eq!(structured["items"], json!(3));
    assert!(structured["items"].is_u64());
}

/// AS-33 (b), (d), WL-5, WL-8: a blank `WORKLOG_DIR` is unset and never falls back to the working
/// directory; a blank option wins over a valid variable.
#[test]
fn as33_blank_directory_values() {
    let cwd = log_dir(b"- [x] a\n");
    let out = run(
        &["call", "worklog_append", r#"{"description":"x"}"#],
        &[("WORKLOG_DIR", " ")],
        Some(cwd.path()),
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer,
        json!({"status": "no_dir", "file": null, "line": null, "message": M_NO_DIR})
    );
    assert_eq!(fs::read(cwd.path().join("2026-09-06.md")).unwrap(), b"- [x] a\n");
    assert!(!cwd.path().join(".worklog.lock").exists());
    let out = run(
        &["call", "worklog_check"],
        &[("WORKLOG_DIR", " ")],
        Some(cwd.path()),
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer,
        json!({"status": "no_dir", "file": null, "items": null, "message": M_NO_DIR})
    );

    let valid = cwd.path().to_str().unwrap();
    let out = run(
        &[
            "call",
            "worklog_append",
            r#"{"description":"x"}"#,
            "--worklog-dir",
            "",
        ],
        &[("WORKLOG_DIR", valid)],
        None,
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["status"],
        "no_dir"
    );
    let out = run(
        &["worklog", "check", "--worklog-dir="],
        &[("WORKLOG_DIR", valid)],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

/// WL-9: `~` expands from HOME in the adapter's configuration.
#[test]
fn wl9_tilde_from_home() {
    let home = tempfile::tempdir().unwrap();
    fs::create_dir(home.path().join("log")).unwrap();
    fs::write(home.path().join("log/a.md"), "- [x] a\n").unwrap();
    let out = run(
        &["worklog", "check", "--worklog-dir", "~/log"],
        &[("HOME", home.path().to_str().unwrap())],
        None,
    );
    assert_eq!(text(&out.stdout), "ok: file=\"a.md\" items=1\n");
}

/// AS-45, WL-10, WL-12: an invalid pattern does not stop `serve`, which lists both tools; each call
/// fails with E-pattern; the probe exits 1; with no directory, `no_dir` comes first (exit 2). A blank
/// pattern is unset (DV-17).
#[test]
fn as45_pattern_configuration() {
    let dir = log_dir(b"- [x] a\n");
    let path = dir.path().to_str().unwrap();
    let mut server = Binary::serve(
        &["--tools", "worklog"],
        &[("WORKLOG_FILE_PATTERN", "("), ("WORKLOG_DIR", path)],
    );
    server.initialize();
    let listed = server.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["worklog_append", "worklog_check"]);
    for (tool, args) in [
        ("worklog_append", json!({"description": "x"})),
        ("worklog_check", json!({})),
    ] {
        let result = server.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(result["result"]["isError"], json!(true));
        assert_eq!(
            result["result"]["content"][0]["text"],
            json!("the configured file pattern is not a valid regular expression")
        );
    }
    let (status, _, stderr) = server.close();
    assert!(status.success());
    assert!(
        stderr.is_empty(),
        "WL-10: nothing is printed about the configuration: {stderr}"
    );
    let out = run(
        &["worklog", "check"],
        &[("WORKLOG_FILE_PATTERN", "("), ("WORKLOG_DIR", path)],
        None,
    );
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(1),
            // E-pattern's line as it is, then the library's own words (issue 31 item 5).
            "shiftwork-mcp: the configured file pattern is not a valid regular expression\n\
             shiftwork-mcp: hint: WORKLOG_FILE_PATTERN: unclosed group\n"
                .into()
        )
    );
    let out = run(&["worklog", "check"], &[("WORKLOG_FILE_PATTERN", "(")], None);
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &["call", "worklog_append", r#"{"description":"x"}"#],
        &[("WORKLOG_FILE_PATTERN", "(")],
        None,
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["status"],
        "no_dir"
    );

    let empty = tempfile::tempdir().unwrap();
    let out = run(
        &["worklog", "check"],
        &[
            ("WORKLOG_FILE_PATTERN", " "),
            ("WORKLOG_DIR", empty.path().to_str().unwrap()),
        ],
        None,
    );
    assert_eq!(
        text(&out.stderr),
        "shiftwork-mcp: the worklog directory holds no files\n"
    );
}

/// WL-86, MC-4, and the issue's "as a user would": `call` runs the same handlers — a written item, a
/// duplicate, refusals and tool errors with exit 1 — and no answer names the folder.
#[test]
fn wl86_call_as_a_user_would() {
    let dir = log_dir(b"# 2026-09-06\n\n- [x] Set up the log\n");
    let path = dir.path().to_str().unwrap();
    let env = [("WORKLOG_DIR", path)];
    let args = r#"{"description":"Fixed the login redirect"}"#;
    let first = run(&["call", "worklog_append", args], &env, None);
    let second = run(&["call", "worklog_append", args], &env, None);
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(
        serde_json::from_slice::<Value>(&first.stdout).unwrap(),
        json!({"status": "written", "file": "2026-09-06.md", "line": "- [x] Fixed the login redirect", "message": "one item was appended to the checklist in \"2026-09-06.md\""})
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&second.stdout).unwrap()["status"],
        "duplicate"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("2026-09-06.md")).unwrap(),
        "# 2026-09-06\n\n- [x] Set up the log\n- [x] Fixed the login redirect\n"
    );
    let refused = run(&["call", "worklog_append", r#"{"bogus":1}"#], &env, None);
    assert_eq!(
        (refused.status.code(), text(&refused.stderr)),
        (
            Some(1),
            // MC-4: the message on stderr, with the binary's prefix (issue 31 item 5).
            "shiftwork-mcp: unknown argument 'bogus'; known: description, dry_run\n".into()
        )
    );
    let check = run(&["call", "worklog_check", "{}", "--pretty"], &env, None);
    assert_eq!(
        text(&check.stdout),
        "{\n  \"status\": \"ok\",\n  \"file\": \"2026-09-06.md\",\n  \"items\": 2,\n  \"message\": \"\\\"2026-09-06.md\\\" has a checklist with 2 items\"\n}\n"
    );
    let name = dir.path().file_name().unwrap().to_str().unwrap();
    for out in [&first, &second, &refused, &check] {
        for stream in [&out.stdout, &out.stderr] {
            let s = text(stream);
            assert!(!s.contains(name) && !s.contains(path), "{s}");
        }
    }
}

/// AS-43 (a), (b), WL-63: twenty concurrent `shiftwork-mcp call worklog_append` processes lose nothing;
/// five concurrent appends of one sentence write it once.
#[test]
fn as43_concurrent_calls_of_the_binary() {
    let dir = log_dir(b"- [x] a\n");
    let path = dir.path().to_str().unwrap().to_owned();
    let spawn = |description: String| {
        Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .args([
                "call",
                "worklog_append",
                &json!({"description": description}).to_string(),
            ])
            .env("WORKLOG_DIR", &path)
            .env_remove("WORKLOG_FILE_PATTERN")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (1..=20).map(|n| spawn(format!("item {n}"))).collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&out.stdout).unwrap()["status"],
            "written"
        );
    }
    let text = fs::read_to_string(dir.path().join("2026-09-06.md")).unwrap();
    let mut lines: Vec<&str> = text.strip_prefix("- [x] a\n").unwrap().lines().collect();
    lines.sort_unstable();
    let mut expected: Vec<String> = (1..=20).map(|n| format!("- [x] item {n}")).collect();
    expected.sort_unstable();
    assert_eq!(lines, expected);
    assert!(text.ends_with('\n'));

    let children: Vec<_> = (0..5).map(|_| spawn(String::from("same"))).collect();
    let statuses: Vec<String> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            serde_json::from_slice::<Value>(&out.stdout).unwrap()["status"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| *s == "written").count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| *s == "duplicate").count(),
        4,
        "{statuses:?}"
    );
    let text = fs::read_to_string(dir.path().join("2026-09-06.md")).unwrap();
    assert_eq!(text.matches("- [x] same\n").count(), 1);
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// AS-44, WL-70, WL-101 through the binary: `serve` (MCP results and stderr), `call` and the probe,
/// with the directory `secret-notes-7f3a` configured by its absolute path and the log file a link
/// into `hidden-target-9c1d`. (Injected errors: the group's unit tests.)
#[test]
fn as44_privacy_through_the_binary() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("secret-notes-7f3a");
    let hidden = root.path().join("hidden-target-9c1d");
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(&hidden).unwrap();
    let path = dir.to_str().unwrap();
    let env = [("WORKLOG_DIR", path), ("RUST_LOG", "trace")];
    let mut outputs: Vec<String> = Vec::new();
    let record = |outputs: &mut Vec<String>, out: Output| {
        outputs.push(text(&out.stdout));
        outputs.push(text(&out.stderr));
    };
    record(&mut outputs, run(&["worklog", "check"], &env, None)); // no_file
    record(
        &mut outputs,
        run(&["call", "worklog_append", r#"{"description":"x"}"#], &env, None),
    ); // no_file
    fs::write(hidden.join("real.md"), "# T\n").unwrap();
    std::os::unix::fs::symlink(hidden.join("real.md"), dir.join("2026-09-06.md")).unwrap();
    record(&mut outputs, run(&["worklog", "check"], &env, None)); // no_checklist
    let mut server = Binary::serve(&["--tools", "worklog"], &env);
    server.initialize();
    for args in [
        json!({"description": "x", "dry_run": true}),
        json!({"description": "x"}),
        json!({"description": "y"}),
        json!({"description": "y"}),
        json!({"description": "z", "dry_run": true}),
        json!({"description": ""}),
        json!({"description": "x", "bogus": true}),
    ] {
        let answer = server.request("tools/call", json!({"name": "worklog_append", "arguments": args}));
        outputs.push(answer.to_string());
    }
    let answer = server.request("tools/call", json!({"name": "worklog_check", "arguments": {}}));
    outputs.push(answer.to_string());
    fs::write(hidden.join("real.md"), b"\xFF").unwrap();
    let answer = server.request("tools/call", json!({"name": "worklog_check", "arguments": {}}));
    assert_eq!(answer["result"]["isError"], json!(true));
    outputs.push(answer.to_string());
    let (_, rest, stderr) = server.close();
    outputs.push(rest);
    outputs.push(stderr);
    record(&mut outputs, run(&["worklog", "check"], &env, None)); // E-utf8
    record(
        &mut outputs,
        run(
            &[
                "worklog",
                "check",
                "--worklog-dir",
                dir.join("missing").to_str().unwrap(),
            ],
            &env,
            None,
        ),
    );
    let all = outputs.join("\n");
    assert!(
        all.contains("\\\"2026-09-06.md\\\" already has this item"),
        "{all}"
    );
    let root_path = root.path().to_str().unwrap();
    for forbidden in ["secret-notes-7f3a", "hidden-target-9c1d", root_path, "real.md"] {
        assert!(!all.contains(forbidden), "{forbidden} leaked:\n{all}");
    }
}

/// WL-65: a call waiting for the append lock never stalls other requests: while another process holds
/// the lock, an append waits and a check is answered.
#[tokio::test]
async fn wl65_waiting_append_does_not_stall_the_server() {
    use shiftwork_seams::Fs;
    let dir = log_dir(b"- [x] a\n");
    let client = client(dir_flag(dir.path())).await;
    let guard = shiftwork_seams::OsFs
        .lock(
            &dir.path().join(".worklog.lock"),
            std::time::Duration::from_secs(1),
        )
        .unwrap();
    let waiting = client.call_tool(
        rmcp::model::CallToolRequestParams::new("worklog_append")
            .with_arguments(json!({"description": "waits"}).as_object().unwrap().clone()),
    );
    tokio::pin!(waiting);
    // The append is sent and blocks on the lock; a check must still be answered meanwhile.
    let checked = tokio::select! {
        _ = &mut waiting => panic!("the append finished while the lock was held"),
        checked = support::call(&client, "worklog_check", json!({})) => checked,
    };
    assert_eq!(checked.structured_content.unwrap()["status"], json!("ok"));
    drop(guard);
    let appended = waiting.await.unwrap();
    assert_eq!(appended.structured_content.unwrap()["status"], json!("written"));
}

/// WL-73: the tools are in the `worklog` group, listed by default and absent when it is not selected.
#[test]
fn wl73_group_selection() {
    let all = groups::all();
    let settings = Settings::new(Vec::new(), Vec::new());
    let names = |selected: &[&str]| -> Vec<&'static str> {
        Registry::build(&all, selected, &settings)
            .unwrap()
            .tools()
            .iter()
            .map(|t| t.name)
            .collect()
    };
    assert_eq!(names(&["worklog"]), ["worklog_append", "worklog_check"]);
    assert!(names(&["shiftwork", "worklog", "contracts", "hours"]).contains(&"worklog_check"));
    assert!(!names(&["hours"]).contains(&"worklog_append"));
}

/// WL-13: options and environment are read once, but the directory is examined afresh on every call.
#[tokio::test]
async fn wl13_directory_examined_on_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let client = client(dir_flag(dir.path())).await;
    let first = support::call(&client, "worklog_check", json!({})).await;
    assert_eq!(first.structured_content.unwrap()["status"], json!("no_file"));
    fs::write(dir.path().join("2026-09-06.md"), "- [x] a\n").unwrap();
    let second = support::call(&client, "worklog_check", json!({})).await;
    assert_eq!(second.structured_content.unwrap()["items"], json!(1));
}

/// WL-82: an absent `arguments` member is treated as an empty object.
#[test]
fn wl82_absent_arguments_member() {
    let dir = log_dir(b"- [x] a\n");
    let mut server = Binary::serve(
        &["--tools", "worklog"],
        &[("WORKLOG_DIR", dir.path().to_str().unwrap())],
    );
    server.initialize();
    let check = server.request("tools/call", json!({"name": "worklog_check"}));
    assert_eq!(check["result"]["structuredContent"]["items"], json!(1));
    let append = server.request("tools/call", json!({"name": "worklog_append"}));
    assert_eq!(append["result"]["isError"], json!(true));
    assert_eq!(
        append["result"]["content"][0]["text"],
        json!("missing argument 'description'")
    );
    let (status, _, _) = server.close();
    assert!(status.success());
}

/// Issue 12 item 5, issue 16 item 4 (classes: a control character in a description, an oversized
/// description, a huge value in any string argument) through MCP on the real filesystem: each is a tool
/// error whose sentence names what was wrong, nothing is written, every answer stays under 64 KB
/// (10 MB description, 10 MB unknown key on both tools), and the server keeps answering.
#[tokio::test]
async fn issue16_item4_hostile_descriptions_answer_small_and_write_nothing() {
    let dir = log_dir(b"- [x] a\n");
    let path = dir.path().join("2026-09-06.md");
    let client = client(dir_flag(dir.path())).await;
    let ten_mb = "x".repeat(10 << 20);
    let rows = [
        (
            "worklog_append",
            json!({"description": "Fixed\u{0}it"}),
            Some(
                "the description holds the control character U+0000 (NUL) at character 6; a description may \
                 hold no control character other than whitespace, so nothing was written",
            ),
        ),
        (
            "worklog_append",
            json!({"description": "\u{1b}[2J", "dry_run": true}),
            Some(
                "the description holds the control character U+001B (ESC) at character 1; a description may \
                 hold no control character other than whitespace, so nothing was written",
            ),
        ),
        (
            "worklog_append",
            json!({"description": "a".repeat(4_097)}),
            Some(
                "the description is 4097 bytes long; a description may hold at most 4096 bytes, so nothing \
                 was written",
            ),
        ),
        ("worklog_append", json!({"description": ten_mb}), None),
        (
            "worklog_append",
            json!({"description": "x", ten_mb.clone(): 1}),
            None,
        ),
        ("worklog_check", json!({ten_mb.clone(): "y"}), None),
    ];
    for (tool, arguments, sentence) in rows {
        let result = support::call(&client, tool, arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
        let size = serde_json::to_vec(&result).unwrap().len();
        assert!(size < 64 * 1024, "{tool}: an answer of {size} bytes");
        if let Some(sentence) = sentence {
            assert_eq!(support::only_text(&result), sentence);
        }
    }
    assert_eq!(fs::read(&path).unwrap(), b"- [x] a\n", "nothing written");
    assert!(
        !dir.path().join(".worklog.lock").exists(),
        "the lock is never taken"
    );
    let written = support::call(&client, "worklog_append", json!({"description": "b"})).await;
    assert_eq!(written.is_error, Some(false));
    assert_eq!(fs::read(&path).unwrap(), b"- [x] a\n- [x] b\n");
}

/// Issue 12 item 14 (class: a file name holding a line feed or an ESC): the probe prints the name
/// quoted, with the control characters escaped, on stdout and on stderr; a plain name is printed as
/// before (AS-46).
#[test]
fn issue12_item14_probe_quotes_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let name = "day\n2\u{1b}[2J.md";
    fs::write(dir.path().join(name), "- [x] a\n").unwrap();
    let out = run(
        &["worklog", "check", "--worklog-dir", dir.path().to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(0),
            "ok: file=\"day\\n2\\u{1b}[2J.md\" items=1\n".into(),
            String::new()
        )
    );
    fs::write(dir.path().join(name), "# T\n").unwrap();
    let out = run(
        &["worklog", "check", "--worklog-dir", dir.path().to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        text(&out.stderr),
        "shiftwork-mcp: \"day\\n2\\u{1b}[2J.md\" has no checklist yet; the next append will start one\n"
    );
    assert!(!out.stderr.contains(&0x1b) && out.stderr.iter().filter(|&&b| b == b'\n').count() == 1);
}

/// Issue 12 item 7 (class: a log file too large to read whole) through the binary: a 3 GB (sparse) log
/// is refused at once by the probe and the tool, naming the limit, and left as it is.
#[test]
fn issue12_item7_huge_log_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    fs::File::create(&path).unwrap().set_len(3 << 30).unwrap();
    let sentence = "cannot read \"2026-09-06.md\": the file is larger than 67108864 bytes (64 MiB), the most a \
                    log file may hold";
    let env = [("WORKLOG_DIR", dir.path().to_str().unwrap())];
    let out = run(&["worklog", "check"], &env, None);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(1), format!("shiftwork-mcp: {sentence}\n"))
    );
    let out = run(&["call", "worklog_append", r#"{"description":"x"}"#], &env, None);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(1), format!("shiftwork-mcp: {sentence}\n"))
    );
    assert_eq!(fs::metadata(&path).unwrap().len(), 3 << 30);
}

/// The characters of the shared rule in `bytes` (a line feed aside), decoded as UTF-8.
fn raw_controls(bytes: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|&c| c != '\n' && shiftwork_seams::echo::is_control_or_bidi(c))
        .collect()
}

/// Issue 27 item 11 (class: control characters reach a terminal or a file) through the binary: with a
/// log file whose name holds an OSC 52 introducer, a C1 CSI, DEL and bidirectional controls, and
/// whose first item is indented by a NEL, nothing `call worklog_check`, `call worklog_append` (plain
/// and `--pretty`), the probe and the stdio server print holds one of them raw (the JSON values are the
/// real ones, written as escapes); a description holding a bidirectional control is refused, naming
/// it, and the file is left as it was.
#[test]
fn issue27_item11_no_raw_control_or_bidi_character_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let name = "day\u{1b}]52;c;x\u{9b}\u{7f}\u{202e}\u{2067}.md";
    let path = dir.path().join(name);
    fs::write(&path, "\u{85}- [x] a\n").unwrap();
    let env = [("WORKLOG_DIR", dir.path().to_str().unwrap())];
    let calls: [&[&str]; 6] = [
        &["call", "worklog_check", "{}"],
        &["call", "worklog_check", "{}", "--pretty"],
        &["call", "worklog_append", r#"{"description":"b","dry_run":true}"#],
        &["call", "worklog_append", r#"{"description":"b"}"#, "--pretty"],
        &["call", "worklog_append", r#"{"description":"b"}"#],
        &["worklog", "check"],
    ];
    for args in calls {
        let out = run(args, &env, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        assert!(
            raw_controls(&out.stdout).is_empty(),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert!(
            raw_controls(&out.stderr).is_empty(),
            "{args:?}: {}",
            text(&out.stderr)
        );
        if args[0] == "call" {
            let value: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(value["file"], json!(name), "{args:?}: the value is the real name");
        }
    }
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "\u{85}- [x] a\n\u{85}- [x] b\n"
    );
    // A bidirectional control in the description: refused on stderr, escaped; nothing written.
    let out = run(
        &[
            "call",
            "worklog_append",
            "{\"description\":\"Fixed the \u{202e}gub\"}",
        ],
        &env,
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "shiftwork-mcp: the description holds the control character U+202E (RLO) at character 11; a \
         description may hold no control character other than whitespace, so nothing was written\n"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "\u{85}- [x] a\n\u{85}- [x] b\n"
    );
    // An error naming the file, from the probe and the tool.
    fs::write(&path, b"- [x] caf\xE9\n").unwrap();
    for args in [&["worklog", "check"][..], &["call", "worklog_check", "{}"]] {
        let out = run(args, &env, None);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            raw_controls(&out.stderr).is_empty(),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr)
                .contains(r#""day\u{1b}]52;c;x\u{9b}\u{7f}\u{202e}\u{2067}.md" is not valid UTF-8"#)
        );
    }
    // The stdio server's response lines.
    fs::write(&path, "\u{85}- [x] a\n").unwrap();
    let mut server = Binary::serve(&["--tools", "worklog"], &env);
    server.initialize();
    for (tool, arguments) in [
        ("worklog_check", json!({})),
        ("worklog_append", json!({"description": "c"})),
    ] {
        server.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
        let line = server.receive_line();
        assert!(raw_controls(line.as_bytes()).is_empty(), "{tool}: {line}");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["result"]["structuredContent"]["file"], json!(name));
    }
    server.close();
}

/// Issue 27 item 6 (class: every writer checks its readers' limits first) through the binary: an
/// append that would make the log file larger than the 64 MiB its reader reads is refused with the
/// sentence naming the limit, and the file is left as it was.
#[test]
fn issue27_item6_append_past_the_read_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-09-06.md");
    let mut content = b"- [x] a\n\n".to_vec();
    content.resize((64 << 20) - 4, b'x');
    content.push(b'\n');
    fs::write(&path, &content).unwrap();
    let env = [("WORKLOG_DIR", dir.path().to_str().unwrap())];
    let out = run(&["call", "worklog_append", r#"{"description":"b"}"#], &env, None);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(1),
            "shiftwork-mcp: cannot write \"2026-09-06.md\": the file would be larger than 67108864 bytes \
             (64 MiB), the most a log file may hold, so nothing was written\n"
                .into()
        )
    );
    assert!(fs::read(&path).unwrap() == content, "left as it was");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
        "{names:?}"
    );
}
