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
    check(&["--help"], 0, "shiftwork-mcp call TOOL [JSON", "");
    check(&[], 2, "", "Usage:");
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

/// Issue 16 item 5: a client that closes stdin before `initialize` sees the server exit 0 and write
/// nothing, on stdout or stderr.
#[test]
fn closing_stdin_before_initialize_exits_0_without_an_error_line() {
    let server = Binary::serve(&[], &[]);
    let (status, stdout, stderr) = server.close();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
}

/// Issue 16 item 5, issue 35 item 5: a line that is not JSON gets -32700, an invalid request its
/// error, with the request's id when it can be read and no `id` member when it cannot (the TypeScript
/// SDK refuses `"id": null`); `tools/list` says how long it may be cached.
#[test]
fn protocol_errors_are_answered_and_tools_list_carries_its_ttl() {
    let mut server = Binary::serve(&[], &[]);
    server.initialize();
    let check = |server: &mut Binary, line: &str, code: i64, id: Value| {
        server.send_line(line);
        let answer = server.receive();
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        assert_eq!(
            answer.get("id"),
            (!id.is_null()).then_some(&id),
            "{line}: {answer}"
        );
    };
    check(&mut server, "not json", -32700, Value::Null);
    check(
        &mut server,
        "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\"",
        -32700,
        json!(4),
    );
    check(
        &mut server,
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        -32600,
        Value::Null,
    );
    check(
        &mut server,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        -32600,
        Value::Null,
    );
    check(
        &mut server,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hours_check","arguments":[1,2]}}"#,
        -32602,
        json!(5),
    );
    let listed = server.request("tools/list", json!({}));
    let ttl = listed["result"]["ttlMs"].as_u64().expect("ttlMs");
    assert!(
        ttl >= 24 * 3600 * 1000,
        "the tool set never changes while a server runs: {ttl}"
    );
    let (status, _, stderr) = server.close();
    assert_eq!(status.code(), Some(0));
    assert_eq!(stderr, "", "error replies are not warnings (issue 12 item 9)");
}

/// A worklog directory whose lock the test holds, and a server whose `worklog_append` then waits on it
/// (WL-65): a call that stays in flight as long as the test wants.
fn server_with_a_call_in_flight() -> (tempfile::TempDir, Binary, Box<dyn shiftwork_seams::LockGuard>) {
    use shiftwork_seams::Fs;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2026-09-06.md"), "- [x] a\n").unwrap();
    let guard = shiftwork_seams::OsFs
        .lock(
            &dir.path().join(".worklog.lock"),
            std::time::Duration::from_secs(1),
        )
        .unwrap();
    let mut server = Binary::serve(
        &["--tools", "worklog"],
        &[("WORKLOG_DIR", dir.path().to_str().unwrap())],
    );
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "worklog_append", "arguments": {"description": "in flight"}}}));
    // The append has been read once a later ping is answered.
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    (dir, server, guard)
}

/// Issue 16 item 5: SIGTERM and SIGINT let the call in flight finish, refuse new requests, then exit
/// 0 (no panic, nothing on stderr).
#[test]
fn a_stop_signal_lets_the_call_in_flight_finish_then_exits_0() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let (dir, mut server, guard) = server_with_a_call_in_flight();
        server.signal(signal);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            server.wait_for_exit(std::time::Duration::ZERO).is_none(),
            "it waits for the call"
        );
        let refused = server.request("ping", json!({}));
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("shutting down"),
            "{refused}"
        );
        drop(guard);
        let answer = server.receive();
        assert_eq!(answer["id"], 7);
        assert_eq!(
            answer["result"]["structuredContent"]["status"], "written",
            "{answer}"
        );
        let status = server
            .wait_for_exit(std::time::Duration::from_secs(10))
            .expect("it exits");
        assert_eq!(status.code(), Some(0), "signal {signal}");
        let (_, _, stderr) = server.close();
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            std::fs::read_to_string(dir.path().join("2026-09-06.md"))
                .unwrap()
                .contains("in flight")
        );
    }
}

/// Issue 16 item 5: a second signal exits at once, without waiting for the call in flight.
#[test]
fn a_second_signal_exits_at_once() {
    let (_dir, mut server, _guard) = server_with_a_call_in_flight();
    server.signal(libc::SIGTERM);
    std::thread::sleep(std::time::Duration::from_millis(200));
    server.signal(libc::SIGINT);
    let status = server
        .wait_for_exit(std::time::Duration::from_secs(2))
        .expect("it exits at once");
    assert_eq!(status.code(), Some(128 + libc::SIGINT));
}

/// Issue 16 item 5 with a client that never reads its answers: the calls in flight are stuck writing
/// to a full stdout, so they cannot finish; the first signal still ends the server after the grace,
/// with exit 0 and a warning that says why.
#[test]
fn a_stop_signal_ends_the_server_after_the_grace_when_its_answers_are_never_read() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut server = Binary::serve(&[], &[("RUST_LOG", "warn")]);
    server.initialize();
    let mut stdin = server.take_stdin();
    let sent = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&sent);
    // tools/list answers ~24 kB each, far more than the pipe holds once thousands are unread.
    std::thread::spawn(move || {
        for id in 1_u64.. {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n");
            if std::io::Write::write_all(&mut stdin, line.as_bytes()).is_err() {
                return;
            }
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    // The server has stopped reading (its calls in flight are blocked on stdout) once the writer makes
    // no progress for half a second.
    let mut last = usize::MAX;
    for _ in 0..200 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = sent.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    assert_eq!(
        sent.load(Ordering::SeqCst),
        last,
        "the server never stopped reading"
    );
    let grace = shiftwork_mcp::shutdown::GRACE;
    server.signal(libc::SIGTERM);
    let status = server
        .wait_for_exit(grace + std::time::Duration::from_secs(20))
        .expect("it exits after the grace even though its answers cannot be written");
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut server.take_stderr(), &mut stderr).unwrap();
    // The calls get the grace less the exporters' and the log's share.
    let why = format!(
        "still running after {} s",
        (grace - shiftwork_mcp::shutdown::FLUSH_SHARE).as_secs()
    );
    assert!(stderr.contains(&why), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Issue 12 item 9 (a stderr nobody reads): with every error reply logged (RUST_LOG=debug) and stderr
/// never read, every request is still answered; the lines stderr could not take are dropped and
/// counted.
#[test]
fn a_stderr_nobody_reads_never_stops_the_server() {
    let mut server = Binary::serve(&[], &[("RUST_LOG", "debug")]);
    server.initialize();
    let mut stdin = server.take_stdin();
    let writer = std::thread::spawn(move || {
        for i in 0..4000 {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"no/such/method/{i}\"}}\n");
            std::io::Write::write_all(&mut stdin, line.as_bytes()).unwrap();
        }
        stdin
    });
    for _ in 0..4000 {
        let answer = server.receive();
        assert_eq!(answer["error"]["code"], -32601);
    }
    drop(writer.join().unwrap());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut server.take_stderr(), &mut stderr).unwrap();
    assert!(
        stderr.contains("log line(s) dropped"),
        "{}",
        &stderr[stderr.len().saturating_sub(500)..]
    );
    let status = server.wait_for_exit(std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(status.code(), Some(0));
}

/// Issue 12 item 8 (a client that never reads stdout): the server stops reading instead of growing;
/// its memory stays bounded.
#[test]
fn a_client_that_never_reads_stdout_keeps_the_server_bounded() {
    let mut server = Binary::serve(&[], &[]);
    server.initialize();
    let mut stdin = server.take_stdin();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    // tools/list answers ~24 kB each: unread, they would pile up in the server.
    std::thread::spawn(move || {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n".repeat(1000);
        while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
            if std::io::Write::write_all(&mut stdin, &line).is_err() {
                return;
            }
        }
    });
    let mut most = 0;
    for _ in 0..30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        most = most.max(server.rss_kb());
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(most < 100_000, "the server grew to {most} kB");
}

/// Issue 12 item 14: `shiftwork-mcp call … | head` (a reader that goes away) ends quietly: no panic, no
/// backtrace, exit 0.
#[test]
fn a_broken_pipe_on_stdout_ends_quietly() {
    for args in [
        &[
            "call",
            "hours_check",
            r#"{"expression": "Mon 09:00-17:00"}"#,
            "--pretty",
        ][..],
        &["--help"][..],
        &["demo"][..],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}

/// Issue 12 item 3: a switch's variable takes 1/true/yes/on or 0/false/no/off in any case; blank is
/// unset (MC-3); anything else is a usage error naming the variable (exit 2).
#[test]
fn a_switch_variable_is_on_off_or_a_usage_error_naming_it() {
    for variable in ["SHIFTWORK_NO_PROBES", "SHIFTWORK_CONTRACTS_REQUIRE_EPOCH"] {
        for (value, accepted) in [
            ("1", true),
            ("TRUE", true),
            ("yes", true),
            ("On", true),
            ("0", true),
            ("false", true),
            ("NO", true),
            ("off", true),
            ("", true),
            ("  ", true),
            ("maybe", false),
            ("2", false),
            ("y", false),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let db = tmp.path().join("c.db");
            let out = run(
                &["serve", "--contracts-db", db.to_str().unwrap()],
                &[(variable, value)],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            if accepted {
                assert_eq!(out.status.code(), Some(0), "{variable}={value:?}: {stderr}");
            } else {
                assert_eq!(out.status.code(), Some(2), "{variable}={value:?}");
                assert!(stderr.contains(variable) && stderr.contains(value), "{stderr}");
            }
        }
    }
}

/// Issue 16 item 1: the server runs without transparent huge pages, whose 2 MiB zeroing on every
/// re-fault cost more CPU than a large call's work. Checked where the kernel reports it (Linux 6.x
/// `/proc/<pid>/status` has `THP_enabled`); elsewhere there is nothing to read.
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let mut server = Binary::serve(&[], &[("RUST_LOG", "warn")]);
    server.initialize();
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
        assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    }
    let (status, _, stderr) = server.close();
    assert!(status.success(), "{stderr}");
}
