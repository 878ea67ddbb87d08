//! The real binary: `serve` spoken to over stdio (MC-1, MC-12), the command line (MC-2, MC-4, MC-5) and
//! the usage errors.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use serde_json::{Value, json};
use support::{Binary, run};

#[test]
fn mc1_serve_answers_initialize_lists_tools_and_exits_0_when_stdin_closes() {
    let mut server = Binary::serve(&[], &[("RUST_LOG", "warn")]);
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "shiftwork-mcp");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .starts_with("shiftwork coordinates")
    );
    assert!(init["capabilities"]["tools"].is_object());
    let listed = server.request("tools/list", json!({}));
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = built_tool_names();
    assert_eq!(names, expected);
    let unknown = server.request("tools/call", json!({"name": "no_such_tool", "arguments": {}}));
    assert!(
        unknown["error"].is_object(),
        "an unknown tool is a JSON-RPC error: {unknown}"
    );
    let (status, rest, stderr) = server.close();
    assert!(status.success(), "exit status {status:?}, stderr {stderr}");
    for line in rest.lines() {
        let v: Value = serde_json::from_str(line).expect("stdout carries JSON-RPC only");
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

fn built_tool_names() -> Vec<String> {
    let settings = shiftwork_mcp::settings::Settings::new(Vec::new(), Vec::new());
    let groups = shiftwork_mcp::groups::all();
    let names: Vec<&str> = groups.iter().map(|g| g.name).collect();
    match shiftwork_mcp::Registry::build(&groups, &names, &settings) {
        Ok(r) => r.tools().iter().map(|t| t.name.to_owned()).collect(),
        Err(e) => panic!("the default configuration must build: {e}"),
    }
}

#[test]
fn mc2_an_unknown_tool_group_is_a_usage_error_naming_the_known_groups() {
    let out = run(&["serve", "--tools", "shiftwork,bogus"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("unknown tool group 'bogus'; known groups: shiftwork, worklog, contracts, hours"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn usage_errors_exit_2_and_help_and_version_exit_0() {
    let check = |args: &[&str], code: i32, stdout_has: &str, stderr_has: &str| {
        let out = run(args, &[]);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: stdout {stdout} stderr {stderr}"
        );
        assert!(stdout.contains(stdout_has), "{args:?}: stdout {stdout}");
        assert!(stderr.contains(stderr_has), "{args:?}: stderr {stderr}");
    };
    check(
        &["--version"],
        0,
        concat!("shiftwork-mcp ", env!("CARGO_PKG_VERSION")),
        "",
    );
    check(&["--help"], 0, "shiftwork-mcp call TOOL [JSON]", "");
    check(&[], 2, "", "a command is required");
    check(&["frobnicate"], 2, "", "unknown command 'frobnicate'");
    check(
        &["serve", "--no-such-flag"],
        2,
        "",
        "unknown option '--no-such-flag'",
    );
    check(&["serve", "--tools"], 2, "", "--tools needs a value");
    check(&["call"], 2, "", "call needs a tool name");
    check(
        &["call", "no_such_tool", "{}"],
        2,
        "",
        "unknown tool 'no_such_tool'",
    );
    check(&["demo", "extra"], 2, "", "demo takes no argument");
}

#[test]
fn mc4_call_refuses_arguments_that_are_not_a_json_object() {
    let Some(tool) = built_tool_names().into_iter().next() else {
        // No group is built yet: the unknown-tool refusal comes first.
        let out = run(&["call", "x", "[1]"], &[]);
        assert_eq!(out.status.code(), Some(2));
        return;
    };
    for bad in ["[1]", "not json", "\"text\""] {
        let out = run(&["call", &tool, bad], &[]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("arguments"), "{stderr}");
    }
}

#[test]
fn mc5_demo_runs_on_a_fresh_machine_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        &["demo"],
        &[
            ("TMPDIR", tmp.path().to_str().unwrap()),
            ("HOME", tmp.path().to_str().unwrap()),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Try next:"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "the demo left files behind: {left:?}");
}
