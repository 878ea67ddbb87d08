//! The second hostile round (issue 27) through the real binary, one test per class:
//!
//! - control characters reach the terminal (item 11): every text the binary prints on stderr or on
//!   `call`'s stdout holds no raw C0/C1 control and no bidirectional control;
//! - control under load (item 4): with 64 waiting polls in flight, a cancel and a ping are handled at
//!   once.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use shiftwork_seams::echo::is_control_or_bidi;
use support::Binary;

/// The characters of the class in `text`, other than the line feeds that end its lines.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| *c != '\n' && is_control_or_bidi(*c))
        .collect()
}

/// Issue 27 item 11 (control characters reach the terminal): every echo of an input value — an
/// unknown tool, command, option or group, a flag's bad value, an undeclared argument's key in a
/// tool error, a time zone in a warning, a value in a JSON answer — reaches stderr and stdout escaped.
#[test]
fn control_characters_never_reach_a_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap().to_owned();
    let worklog = dir.path().join("log");
    std::fs::create_dir(&worklog).unwrap();
    std::fs::write(worklog.join("2026-12-04.md"), "# log\n\n- [x] first\n").unwrap();
    let worklog = worklog.to_str().unwrap().to_owned();
    let osc = "\u{1b}]52;c;Zm9v\u{7}";
    let bidi = "\u{202e}";
    let key = format!(r#"{{"{}": 1}}"#, "\\u001b]52;c;Zm9v\\u0007");
    let unknown_tool = format!("tool{osc}");
    let unknown_command = format!("cmd{osc}{bidi}");
    let unknown_option = format!("--opt{osc}");
    let tools = format!("--tools=hours{osc}");
    let sync = format!("--contracts-sync=full{osc}");
    let agent = format!("--agent=bob{osc}");
    let format = format!("--format=text{osc}");
    let zone = format!("Mars/Olympus{osc}{bidi}");
    let expression = json!({"expression": format!("Mon-Fri 09:00-17:00 {bidi}{osc}")}).to_string();
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case<'_>> = vec![
        (
            vec!["call", "worklog_append", &key],
            vec![("WORKLOG_DIR", &worklog)],
        ),
        (vec!["call", &unknown_tool, "{}"], vec![]),
        (vec![&unknown_command], vec![]),
        (vec!["serve", &unknown_option], vec![]),
        (vec!["call", "hours_check", &tools, "{}"], vec![]),
        (vec!["call", "inspect_mesh_state", &sync, "{}"], vec![]),
        (vec!["call", "inspect_mesh_state", &agent, "{}"], vec![]),
        (vec!["plan", &format], vec![]),
        (vec!["call", "hours_check", "{}"], vec![("TZ", &zone)]),
        (vec!["call", "hours_check", &expression], vec![]),
        (vec!["call", "hours_check", "--pretty", &expression], vec![]),
    ];
    for (args, env) in cases {
        let mut env = env;
        env.push(("HOME", &home));
        let out = support::run(&args, &env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stdout.is_empty() || !stderr.is_empty(),
            "{args:?} printed nothing"
        );
        assert_eq!(raw_controls(&stdout), [], "stdout of {args:?}: {stdout}");
        assert_eq!(raw_controls(&stderr), [], "stderr of {args:?}: {stderr}");
    }
}

/// Issue 27 item 4 (control under load) through the binary: 64 waiting polls take every slot; a
/// cancel of one of them and a ping are still read and handled at once, and the server stays up.
#[test]
fn a_cancel_and_a_ping_are_handled_while_64_polls_wait() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("contracts.db");
    let home = dir.path().to_str().unwrap().to_owned();
    let mut server = Binary::serve(
        &["--contracts-db", db.to_str().unwrap(), "--tools", "contracts"],
        &[("HOME", &home)],
    );
    server.initialize();
    for i in 0..64 {
        server.send(&json!({"jsonrpc": "2.0", "id": format!("poll-{i}"), "method": "tools/call",
            "params": {"name": "poll_next_task", "arguments": {"agent_id": format!("agent-{i}"), "wait_sec": 60}}}));
    }
    // Every slot is taken once a further request waits: the server answers no ping until then, so
    // give the polls time to start; the ping below is read whatever the bound.
    std::thread::sleep(Duration::from_millis(500));
    let start = Instant::now();
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "poll-7"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    let pong = server.receive();
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "ping", "result": {}}));
    // Liveness, not speed: the old server answered only when a 60 s wait ended.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the ping waited for a poll to end"
    );
    // The cancelled poll's slot is free again: a plain call runs and is answered.
    let answer = server.request(
        "tools/call",
        json!({"name": "inspect_mesh_state", "arguments": {"agent_id": "agent-1"}}),
    );
    assert!(answer["result"]["structuredContent"].is_object(), "{answer}");
}
