//! The command line a newcomer meets (issue 31 item 1): every command answers `--help` and `-h`
//! with exit 0; no command prints the whole usage (exit 2); `tools` lists every tool; `call TOOL
//! --help` shows each tool's arguments from the definitions the server lists; `call TOOL -` and
//! `call TOOL @FILE` read the arguments from stdin or a file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use shiftwork_mcp::{Registry, groups, help, settings::Settings};

fn registry() -> Registry {
    let all = groups::all();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    Registry::build(&all, &names, &Settings::new(Vec::new(), Vec::new())).unwrap()
}

#[test]
fn every_command_answers_help_and_h_with_exit_0() {
    let mut commands: Vec<Vec<&str>> = vec![vec![]];
    for (name, _, _) in help::COMMANDS {
        commands.push(vec![name]);
    }
    commands.push(vec!["worklog"]);
    for command in commands {
        for flag in ["--help", "-h"] {
            let mut args = command.clone();
            args.push(flag);
            let out = support::run(&args, &[]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                stdout.to_ascii_lowercase().contains("usage"),
                "{args:?}: {stdout}"
            );
        }
    }
}

#[test]
fn no_command_prints_the_whole_usage_and_exits_2() {
    let out = support::run(&[], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (name, _, _) in help::COMMANDS {
        assert!(
            stderr.contains(&format!("shiftwork-mcp {name}")),
            "{name}: {stderr}"
        );
    }
    let unknown = support::run(&["frobnicate"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    for (name, _, _) in help::COMMANDS {
        assert!(
            stderr.contains(name),
            "the unknown command's error lists {name}: {stderr}"
        );
    }
}

#[test]
fn tools_lists_every_tool_and_call_tool_help_shows_its_arguments() {
    let registry = registry();
    let out = support::run(&["tools"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    for tool in registry.tools() {
        let line = listed
            .lines()
            .find(|l| l.starts_with(&format!("{} ", tool.name)))
            .unwrap_or_else(|| panic!("{}: {listed}", tool.name));
        assert!(line.contains(tool.title), "{line}");
        let out = support::run(&["call", tool.name, "--help"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", tool.name);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(tool.title), "{text}");
        let table = &text[text.find("\nArguments:").unwrap_or_else(|| panic!("{text}"))..];
        for argument in help::arguments(tool) {
            let row = table
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", argument.name)))
                .unwrap_or_else(|| panic!("{}: no row for {}: {text}", tool.name, argument.name));
            assert!(row.contains(&argument.kind), "{row}");
            assert!(
                row.contains(if argument.required { "yes" } else { "no" }),
                "{row}"
            );
        }
    }
    let only = support::run(&["tools", "--tools", "hours"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&only.stdout)
            .lines()
            .filter(|l| l.contains(" — "))
            .count(),
        1
    );
    let unknown = support::run(&["call", "nope", "--help"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn call_reads_its_arguments_from_stdin_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("args.json");
    std::fs::write(
        &file,
        r#"{"expression": "Mon 09:00-10:00", "at": "2026-12-07T09:30:00Z"}"#,
    )
    .unwrap();
    let from_file = support::run(&["call", "hours_check", &format!("@{}", file.display())], &[]);
    assert_eq!(
        from_file.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    assert!(String::from_utf8_lossy(&from_file.stdout).contains(r#""in_hours":true"#));
    let mut child = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .args(["call", "hours_check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"expression": "Mon 09:00-10:00", "at": "2026-12-07T11:00:00Z"}"#)
        .unwrap();
    let from_stdin = child.wait_with_output().unwrap();
    assert_eq!(
        from_stdin.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&from_stdin.stderr)
    );
    assert!(String::from_utf8_lossy(&from_stdin.stdout).contains(r#""in_hours":false"#));
    let missing = support::run(&["call", "hours_check", "@/nonexistent/args.json"], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/args.json"));
}

/// Issue 35 item 1: `call TOOL --help` and the guide's reference (`tools --markdown`) are written
/// from the definitions `tools/list` serves, so each shows every argument (object arguments' members
/// included) and every member of every shape of the answer, with its meaning.
#[test]
fn issue35_item1_help_and_the_reference_show_every_argument_and_answer_member() {
    let registry = registry();
    let markdown = help::tools_markdown(&registry);
    let cell = |t: &str| t.replace('<', "&lt;").replace('>', "&gt;").replace('|', "\\|");
    for tool in registry.tools() {
        let text = help::tool_help(tool);
        let answers = help::answers(tool);
        assert!(!answers.is_empty(), "{}", tool.name);
        let rows = help::arguments(tool)
            .into_iter()
            .chain(answers.into_iter().flat_map(|a| a.members));
        for row in rows {
            assert!(!row.meaning.is_empty(), "{}: {}", tool.name, row.name);
            assert!(
                text.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{} ", row.name))
                        && l.ends_with(&row.meaning)),
                "{}: call --help has no row for {}",
                tool.name,
                row.name
            );
            assert!(
                markdown.contains(&format!("| `{}` | {} |", row.name, cell(&row.kind)))
                    && markdown.contains(&cell(&row.meaning)),
                "{}: the reference has no row for {}",
                tool.name,
                row.name
            );
        }
    }
}
