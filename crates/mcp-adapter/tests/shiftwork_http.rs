//! The shift-work tools served over HTTP through the real binary (issue 29 items 3 and 4): checkpoint
//! paths confined to `--roots` (default: the directory `serve` started in), links followed; the
//! caller's identity from its token as the clock-out's `agent_id`; and over stdio nothing changes.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{HttpServer, add_token};

/// EX of the shift-work scenarios: three units, U1 done, U3 the cursor.
const EX: &str = r##"{"version": 1, "job": {"id": "demo-job", "goal": "Ship the demo.", "done_definition": "make test passes", "constraints": ["keep the API stable"]}, "plan": {"cursor": "U3", "units": [{"id": "U1", "title": "Scaffold", "brief_path": "briefs/U1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make u1"}, {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, {"id": "U4", "title": "Review core", "brief_path": "briefs/U4.md", "status": "todo", "role": "reviewer", "depends_on": ["U3"], "verify": "make u4"}]}, "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": []}}"##;

/// A repository at `dir` holding EX as `.shiftwork/cp.json`.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join(".shiftwork")).unwrap();
    std::fs::write(dir.join(".shiftwork/cp.json"), EX).unwrap();
}

/// The answer object of a `tools/call` response (its structured content).
fn answer(response: &Value) -> &Value {
    &response["result"]["structuredContent"]
}

/// A server over HTTP started in `cwd` with a token for alice and bob; `extra` after `--tools shiftwork`.
fn server(base: &Path, cwd: &Path, extra: &[&str]) -> (HttpServer, String, String) {
    let file = base.join("tokens");
    let alice = add_token(&file, "alice");
    let bob = add_token(&file, "bob");
    let mut args = vec!["--tools", "shiftwork", "--auth-tokens", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let home = base.to_str().unwrap();
    (HttpServer::start(cwd, &args, &[("HOME", home)]), alice, bob)
}

/// Issue 29 item 4: with `--roots`, a checkpoint outside them is refused, naming the rule; one inside
/// answers; a link inside that leads outside is refused without naming where it leads; a relative
/// path is read from the directory `serve` started in. The refusal's code reaches the log line.
#[test]
fn issue29_item4_checkpoint_paths_are_confined_to_the_roots_over_http() {
    let base = tempfile::tempdir().unwrap();
    let served = base.path().join("served");
    let outside = base.path().join("outside");
    repo(&served);
    repo(&outside);
    std::os::unix::fs::symlink(
        outside.join(".shiftwork/cp.json"),
        served.join(".shiftwork/link.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, served.join("elsewhere")).unwrap();
    let roots = format!("{},{}", served.display(), base.path().join("other").display());
    let (http, alice, _) = server(base.path(), &served, &["--roots", &roots]);
    let plan = |checkpoint: &str| http.call(&alice, "shiftwork_plan", json!({"checkpoint": checkpoint}));
    for (checkpoint, what) in [
        (
            outside.join(".shiftwork/cp.json").to_string_lossy().into_owned(),
            "the checkpoint",
        ),
        (String::from(".shiftwork/link.json"), "the checkpoint"),
        (String::from("elsewhere/.shiftwork/cp.json"), "the checkpoint"),
        (String::from("../outside/.shiftwork/cp.json"), "the checkpoint"),
    ] {
        let response = plan(&checkpoint);
        let reason = answer(&response)["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(answer(&response)["result"], "error", "{checkpoint}: {response}");
        assert_eq!(
            response["result"]["isError"], false,
            "an answer, not a tool error"
        );
        assert_eq!(
            reason,
            format!(
                "refused: {what} '{checkpoint}' resolves outside the directories this server may open; every path it opens must resolve, links followed, inside one of its roots"
            ),
        );
    }
    let inside = plan(".shiftwork/cp.json");
    assert_eq!(answer(&inside)["result"], "plan", "{inside}");
    assert_eq!(answer(&inside)["ready"], json!(["U3"]));
    let absolute = plan(served.join(".shiftwork/cp.json").to_str().unwrap());
    assert_eq!(answer(&absolute)["result"], "plan", "{absolute}");
    // A clock-out refused outside writes nothing there.
    let before = std::fs::read(outside.join(".shiftwork/cp.json")).unwrap();
    let out = http.call(
        &alice,
        "shiftwork_clock_out",
        json!({"checkpoint": ".shiftwork/link.json", "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "done"}}),
    );
    assert_eq!(answer(&out)["result"], "error", "{out}");
    assert_eq!(std::fs::read(outside.join(".shiftwork/cp.json")).unwrap(), before);
    assert!(!outside.join(".shiftwork/cp.json.log.jsonl").exists());
    let log = http.stderr.lock().unwrap().join("\n");
    assert!(
        log.contains("OUTSIDE_ROOTS"),
        "the log line names the refusal's code: {log}"
    );
    assert!(!log.contains("resolves outside"), "and never its sentence: {log}");
}

/// Issue 29 item 4: without `--roots` the root is the directory `serve` started in.
#[test]
fn issue29_item4_the_default_root_is_the_directory_serve_started_in() {
    let base = tempfile::tempdir().unwrap();
    let served = base.path().join("served");
    let outside = base.path().join("outside");
    repo(&served);
    repo(&outside);
    let (http, alice, _) = server(base.path(), &served, &[]);
    let inside = http.call(
        &alice,
        "shiftwork_status",
        json!({"checkpoint": ".shiftwork/cp.json"}),
    );
    assert_eq!(answer(&inside)["result"], "status", "{inside}");
    let refused = http.call(
        &alice,
        "shiftwork_status",
        json!({"checkpoint": outside.join(".shiftwork/cp.json").to_str().unwrap()}),
    );
    assert_eq!(answer(&refused)["result"], "error", "{refused}");
    assert!(
        answer(&refused)["reason"]
            .as_str()
            .unwrap()
            .contains("resolves outside"),
        "{refused}"
    );
}

/// Issue 29 item 3: over HTTP the caller's token decides the clock-out's `agent_id`: absent, it is the
/// caller's; naming another agent, it is refused naming both, before the checkpoint is touched.
#[test]
fn issue29_item3_a_clock_out_acts_only_as_the_authenticated_agent() {
    let base = tempfile::tempdir().unwrap();
    let served = base.path().join("served");
    repo(&served);
    let (http, alice, _) = server(base.path(), &served, &[]);
    let cp = served.join(".shiftwork/cp.json");
    let before = std::fs::read(&cp).unwrap();
    let args = json!({"checkpoint": ".shiftwork/cp.json", "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "done"}});
    let mut as_bob = args.clone();
    as_bob["agent_id"] = json!("bob");
    let refused = http.call(&alice, "shiftwork_clock_out", as_bob);
    assert_eq!(
        answer(&refused),
        &json!({"result": "error", "reason": "agent_id names bob, but this caller authenticated as alice: an agent acts only as itself."})
    );
    assert_eq!(std::fs::read(&cp).unwrap(), before, "nothing written");
    assert!(!served.join(".shiftwork/cp.json.log.jsonl").exists());
    let done = http.call(&alice, "shiftwork_clock_out", args);
    assert_eq!(answer(&done)["result"], "ok", "{done}");
    let ledger = std::fs::read_to_string(served.join(".shiftwork/cp.json.log.jsonl")).unwrap();
    assert!(ledger.contains(r#""agent_id": "alice""#), "{ledger}");
    let log = http.stderr.lock().unwrap().join("\n");
    assert!(log.contains("IDENTITY_MISMATCH"), "{log}");
}

/// Issue 29 item 4: over stdio nothing changes — the local user is trusted, `--roots` does not apply
/// and an `agent_id` is taken as given.
#[test]
fn issue29_item4_over_stdio_no_root_applies() {
    let base = tempfile::tempdir().unwrap();
    let served = base.path().join("served");
    let outside = base.path().join("outside");
    repo(&served);
    repo(&outside);
    let cp = outside.join(".shiftwork/cp.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .current_dir(&served)
        .args([
            "call",
            "shiftwork_plan",
            &json!({"checkpoint": cp.to_str().unwrap()}).to_string(),
            "--tools",
            "shiftwork",
            "--roots",
            served.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["result"], "plan", "{answer}");
}
