//! The official MCP SDKs as clients of the real binary (issue 29 item 1): the Python SDK 2.3.0 in its
//! three connect modes (`legacy`: the `initialize` handshake; `auto`: `server/discover`, falling back
//! to the handshake; `"2026-07-28"`: the stateless protocol straight away) and the TypeScript SDK
//! 1.32.2 list every tool and call each one — one suite, run over stdio and over Streamable HTTP (with a
//! bearer token, issue 29 item 2).
//!
//! The SDKs are installed by `scripts/setup.d/40-mcp-sdks.sh`, which exports
//! `SHIFTWORK_TEST_PYTHON_SDK` (a Python with `mcp==2.3.0`) and `SHIFTWORK_TEST_TS_SDK` (a directory
//! holding `node_modules/@modelcontextprotocol/sdk`). Without them the tests say they were skipped,
//! except under CI (`CI=true`), where a missing SDK fails them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/clients.rs"]
mod clients;
mod support;

use std::process::Command;

use clients::{script, sdk};
use serde_json::{Value, json};
use support::DemoSetup;

/// One call of every tool the demos call, as the client scripts read them.
fn calls_file(setup: &DemoSetup) -> tempfile::NamedTempFile {
    let mut names: Vec<&String> = setup.examples.keys().collect();
    names.sort();
    let calls: Vec<Value> = names
        .into_iter()
        .map(|tool| json!({"tool": tool, "arguments": setup.examples[tool]}))
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_vec(&calls).unwrap()).unwrap();
    file
}

/// The transports a client reaches the server by.
#[derive(Debug, Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

/// Runs a client script (`program` with `args`) against `shiftwork-mcp serve` of `setup` over
/// `transport` and returns its report.
fn run_client(setup: &DemoSetup, transport: Transport, program: &str, args: &[String]) -> Value {
    let mut command = Command::new(program);
    command.args(args);
    // Over HTTP the server lives as long as the client runs.
    let mut _http = None;
    match transport {
        Transport::Stdio => {
            command
                .arg("--")
                .arg(env!("CARGO_BIN_EXE_shiftwork-mcp"))
                .arg("serve");
            command.args(&setup.flags);
        }
        Transport::Http => {
            let file = setup.root.path().join("sdk-tokens");
            let saved = setup.root.path().join("sdk-token");
            let token = match std::fs::read_to_string(&saved) {
                Ok(token) => token,
                Err(_) => {
                    let token = support::add_token(&file, "demo-agent");
                    std::fs::write(&saved, &token).unwrap();
                    token
                }
            };
            let mut flags: Vec<&str> = setup.flags.iter().map(String::as_str).collect();
            flags.extend(["--auth-tokens", file.to_str().unwrap()]);
            let env = setup.env();
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let server = support::HttpServer::start(setup.root.path(), &flags, &env);
            command.args(["--url", &format!("{}/mcp", server.base), "--token", &token]);
            _http = Some(server);
        }
    }
    command.current_dir(setup.root.path());
    for (key, value) in setup.env() {
        command.env(key, value);
    }
    let out = command.output().expect("cannot run the client");
    assert!(
        out.status.success(),
        "{program} {args:?} over {transport:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not a report: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The report lists every tool served and holds an answer of every call, each valid against its
/// tool's output schema (MC-8).
fn check(setup: &DemoSetup, report: &Value, what: &str) {
    let served: Vec<&str> = setup.tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let listed: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(listed, served, "{what}: tools/list");
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls.len(), setup.examples.len(), "{what}: every tool called");
    for call in calls {
        let name = call["tool"].as_str().unwrap();
        let tool = setup.tools.iter().find(|t| t["name"] == name).unwrap();
        if call["isError"] == true {
            // A tool error is an answer too (the shift-work tools answer some refusals so, SW-40).
            assert!(
                !call["text"][0].as_str().unwrap_or("").is_empty(),
                "{what}: {name}: {call}"
            );
            continue;
        }
        let structured = &call["structuredContent"];
        support::validate(&tool["outputSchema"], structured)
            .unwrap_or_else(|e| panic!("{what}: {name}: {e}: {structured}"));
    }
}

/// Issue 29 items 1 and 2: the Python SDK 2.3.0 in each connect mode negotiates the version it
/// should and lists and calls every tool, over stdio and over HTTP.
#[test]
fn the_python_sdk_lists_and_calls_every_tool_in_each_mode_on_each_transport() {
    let Some(python) = sdk("SHIFTWORK_TEST_PYTHON_SDK") else {
        return;
    };
    let setup = DemoSetup::new();
    let calls = calls_file(&setup);
    for transport in [Transport::Stdio, Transport::Http] {
        for (mode, version) in [
            ("legacy", "2025-11-25"),
            ("auto", "2026-07-28"),
            ("2026-07-28", "2026-07-28"),
        ] {
            let report = run_client(
                &setup,
                transport,
                &python,
                &[
                    script("python_client.py").display().to_string(),
                    mode.to_owned(),
                    calls.path().display().to_string(),
                ],
            );
            assert_eq!(report["version"], version, "mode {mode} over {transport:?}");
            check(
                &setup,
                &report,
                &format!("python SDK, mode {mode}, over {transport:?}"),
            );
        }
    }
}

/// Issue 29 items 1 and 2: the TypeScript SDK 1.32.2 lists and calls every tool, over stdio and over
/// HTTP (its `StreamableHTTPClientTransport`).
#[test]
fn the_typescript_sdk_lists_and_calls_every_tool_on_each_transport() {
    let Some(sdk_dir) = sdk("SHIFTWORK_TEST_TS_SDK") else {
        return;
    };
    let setup = DemoSetup::new();
    let calls = calls_file(&setup);
    for transport in [Transport::Stdio, Transport::Http] {
        let report = run_client(
            &setup,
            transport,
            "node",
            &[
                script("ts_client.mjs").display().to_string(),
                sdk_dir.clone(),
                calls.path().display().to_string(),
            ],
        );
        check(&setup, &report, &format!("TypeScript SDK over {transport:?}"));
    }
}

/// The error lines the binary answers to messages whose request id cannot be read: a line that is
/// not JSON, an id that is an object, a batch.
fn unreadable_id_errors() -> Vec<String> {
    let mut server = support::Binary::serve(&[], &[]);
    server.initialize();
    let mut lines = Vec::new();
    for line in [
        "not json",
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
    ] {
        server.send_line(line);
        let answer = server.receive();
        assert!(answer.get("id").is_none(), "{line}: {answer}");
        lines.push(answer.to_string());
    }
    lines
}

/// What a reader of `program` with `args` makes of `lines`: one verdict per line.
fn verdicts(program: &str, args: &[String], lines: &[String]) -> Vec<bool> {
    use std::io::Write as _;
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Issue 35 item 5: an error answering a message whose id cannot be read has no `id` member, which
/// MCP's schema allows since 2025-11-25 (no version allows `null`), and which the TypeScript SDK
/// reads as the error it is; the same line with `"id": null`, as JSON-RPC 2.0 writes it, the
/// TypeScript SDK refuses as not a message. The Python SDK 2.3.0 reads it the other way round: its
/// error model requires the member and allows `null`. The two official SDKs disagree; we follow
/// MCP's schema and the TypeScript SDK, which most hosts are built on.
#[test]
fn issue35_item5_an_error_without_a_readable_id_omits_it_and_each_sdk_says_what_it_reads() {
    let ts = sdk("SHIFTWORK_TEST_TS_SDK");
    let python = sdk("SHIFTWORK_TEST_PYTHON_SDK");
    if ts.is_none() && python.is_none() {
        return;
    }
    let ours = unreadable_id_errors();
    let with_null: Vec<String> = ours
        .iter()
        .map(|l| l.replacen(r#"{"jsonrpc":"2.0","#, r#"{"jsonrpc":"2.0","id":null,"#, 1))
        .collect();
    let n = ours.len();
    if let Some(sdk_dir) = ts {
        let args = [script("read_messages.mjs").display().to_string(), sdk_dir];
        assert_eq!(
            verdicts("node", &args, &ours),
            vec![true; n],
            "TypeScript SDK: {ours:?}"
        );
        assert_eq!(
            verdicts("node", &args, &with_null),
            vec![false; n],
            "TypeScript SDK: {with_null:?}"
        );
    }
    if let Some(python) = python {
        let args = [script("read_messages.py").display().to_string()];
        assert_eq!(
            verdicts(&python, &args, &ours),
            vec![false; n],
            "Python SDK: {ours:?}"
        );
        assert_eq!(
            verdicts(&python, &args, &with_null),
            vec![true; n],
            "Python SDK: {with_null:?}"
        );
    }
}
