//! The official MCP SDKs reading the resources and prompts of the real binary (issue 35 items 2 and
//! 3): the Python SDK 2.3.0 in its three connect modes (`legacy`, `auto`, `"2026-07-28"`) and the
//! TypeScript SDK 1.32.2 list and read every resource and template, list the prompts and get one,
//! complete an argument, and — where the transport and version have a way — subscribe to the job's
//! status and are told of a clock-out made by another process: `resources/subscribe` on stdio
//! before 2026-07-28, `subscriptions/listen` from 2026-07-28 on stdio and over HTTP. Over HTTP
//! before 2026-07-28 no subscription is made: `resources/subscribe` needs a session, which the
//! stateless HTTP server does not keep (it refuses it, naming `subscriptions/listen`).
//!
//! The SDKs are installed by `scripts/setup.d/40-mcp-sdks.sh` (`SHIFTWORK_TEST_PYTHON_SDK`,
//! `SHIFTWORK_TEST_TS_SDK`); without them the tests say they were skipped, except under CI.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/clients.rs"]
mod clients;
mod support;

use std::path::Path;
use std::process::Command;

use clients::{EX, Transport, flags, repo, script, sdk};
use serde_json::{Value, json};

/// The clock-out of U3 by another process, as the argv the scripts run once subscribed.
fn trigger(dir: &Path) -> String {
    let mut argv = vec![
        env!("CARGO_BIN_EXE_shiftwork-mcp").to_owned(),
        String::from("call"),
        String::from("shiftwork_clock_out"),
        json!({"checkpoint": ".shiftwork/checkpoint.json", "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "built"}}).to_string(),
    ];
    argv.extend(flags(dir));
    serde_json::to_string(&argv).unwrap()
}

/// Runs a client script against `serve` on `dir`'s job over `transport`; its report.
fn run_client(dir: &Path, transport: Transport, program: &str, args: &[String]) -> Value {
    // Each run starts from the job as it was: U3 the cursor.
    std::fs::write(dir.join(".shiftwork/checkpoint.json"), EX).unwrap();
    let _ = std::fs::remove_file(dir.join(".shiftwork/checkpoint.json.log.jsonl"));
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("AGENT_NAME", "alice");
    let mut _http = None;
    match transport {
        Transport::Stdio => {
            command
                .arg("--")
                .arg(env!("CARGO_BIN_EXE_shiftwork-mcp"))
                .arg("serve")
                .args(flags(dir));
        }
        Transport::Http => {
            let tokens = dir.join("sdk-tokens");
            let saved = dir.join("sdk-token");
            let token = match std::fs::read_to_string(&saved) {
                Ok(token) => token,
                Err(_) => {
                    let token = support::add_token(&tokens, "sdk-agent");
                    std::fs::write(&saved, &token).unwrap();
                    token
                }
            };
            let mut args = flags(dir);
            args.extend(["--auth-tokens".to_owned(), tokens.to_str().unwrap().to_owned()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let home = dir.to_str().unwrap();
            let server = support::HttpServer::start(dir, &args, &[("HOME", home)]);
            command.args(["--url", &format!("{}/mcp", server.base), "--token", &token]);
            _http = Some(server);
        }
    }
    let out = command.output().expect("cannot run the client");
    assert!(
        out.status.success(),
        "{program} {args:?} over {transport:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("not a report: {e}: {text}"))
}

/// What every report holds, and the notification when the client subscribed.
fn check(dir: &Path, report: &Value, subscribed: bool, what: &str) {
    assert_eq!(
        report["resources"],
        json!([
            "shiftwork://plan",
            "shiftwork://plan.mmd",
            "shiftwork://status",
            "shiftwork://contracts",
            "shiftwork://hours",
            "shiftwork://worklog/today"
        ]),
        "{what}"
    );
    assert_eq!(
        report["templates"],
        json!([
            "shiftwork://units/{unit_id}/brief",
            "shiftwork://contracts/{contract_id}"
        ]),
        "{what}"
    );
    let reads = report["reads"].as_object().unwrap();
    assert_eq!(reads.len(), 7, "{what}: every resource and a brief read");
    assert!(
        reads["shiftwork://plan"]
            .as_str()
            .unwrap()
            .contains("job demo-job"),
        "{what}"
    );
    assert!(
        reads["shiftwork://units/U3/brief"]
            .as_str()
            .unwrap()
            .contains("\"brief\""),
        "{what}"
    );
    for (uri, text) in reads {
        assert!(
            !text.as_str().unwrap().contains(dir.to_str().unwrap()),
            "{what}: {uri}: {text}"
        );
    }
    assert_eq!(
        report["prompts"],
        json!([
            "start_unit",
            "finish_unit",
            "hand_review",
            "take_contract",
            "day_summary"
        ]),
        "{what}"
    );
    assert!(
        report["prompt"][0]
            .as_str()
            .unwrap()
            .contains("target_agent 'bob'"),
        "{what}"
    );
    assert_eq!(report["prompt"][1], "shiftwork://contracts", "{what}");
    assert_eq!(report["completion"], json!(["U3", "U4", "U1"]), "{what}");
    if subscribed {
        let took = report["notified_ms"]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: {report}"));
        eprintln!("{what}: notified {took:.0} ms after the other process's clock-out ended");
    }
}

/// Issue 35 items 2 and 3: the Python SDK in each connect mode, over stdio and HTTP.
#[test]
fn issue35_items2_3_the_python_sdk_reads_subscribes_and_gets_prompts() {
    let Some(python) = sdk("SHIFTWORK_TEST_PYTHON_SDK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    for transport in [Transport::Stdio, Transport::Http] {
        for (mode, version) in [
            ("legacy", "2025-11-25"),
            ("auto", "2026-07-28"),
            ("2026-07-28", "2026-07-28"),
        ] {
            let subscribes = !(transport == Transport::Http && mode == "legacy");
            let report = run_client(
                dir.path(),
                transport,
                &python,
                &[
                    String::from("-W"),
                    String::from("ignore"),
                    script("python_resources.py").display().to_string(),
                    mode.to_owned(),
                    String::from(if subscribes { "yes" } else { "no" }),
                    trigger(dir.path()),
                ],
            );
            assert_eq!(report["version"], version, "mode {mode} over {transport:?}");
            check(
                dir.path(),
                &report,
                subscribes,
                &format!("python SDK, mode {mode}, over {transport:?}"),
            );
        }
    }
}

/// Issue 35 items 2 and 3: the TypeScript SDK, over stdio (with `resources/subscribe`) and HTTP.
#[test]
fn issue35_items2_3_the_typescript_sdk_reads_subscribes_and_gets_prompts() {
    let Some(sdk_dir) = sdk("SHIFTWORK_TEST_TS_SDK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    for transport in [Transport::Stdio, Transport::Http] {
        let subscribes = transport == Transport::Stdio;
        let report = run_client(
            dir.path(),
            transport,
            "node",
            &[
                script("ts_resources.mjs").display().to_string(),
                sdk_dir.clone(),
                String::from(if subscribes { "yes" } else { "no" }),
                trigger(dir.path()),
            ],
        );
        check(
            dir.path(),
            &report,
            subscribes,
            &format!("TypeScript SDK over {transport:?}"),
        );
    }
}
