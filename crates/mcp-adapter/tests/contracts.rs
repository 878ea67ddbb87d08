//! The contracts group through the MCP surface (CT-170): every §11 scenario replayed through an
//! in-process rmcp client with `structuredContent` validated against the advertised `outputSchema`,
//! the text block equal to it and `isError` false (MC-10); the descriptors of §7 (CT-81, CT-84,
//! CT-85, CT-93, CT-94); the settings (CT-91) and the lazy store (CT-90); the blocking handlers run
//! off the async workers (CT-89: every scenario call goes through the server's `spawn_blocking`); `call`
//! (CT-92); and two real `serve`
//! processes handing a contract from one agent to the other on one database (S29).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

mod support;

#[path = "../../contracts/tests/contracts/scenarios.rs"]
mod scenarios;

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::Tool;
use rmcp::service::RunningService;
use scenarios::{CallOpts, Ctx, Surface};
use serde_json::{Value, json};
use shiftwork_contracts::{
    Contracts, ContractsConfig, MemoryStore, SeededIdSource, SqliteOptions, SqliteStore, Store,
};
use shiftwork_mcp::groups::contracts::{self as group, Lazy};
use shiftwork_mcp::registry::Registry;
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::{Server, groups};
use shiftwork_seams::{ManualClock, MemFs, OsFs};
use support::postgres_url;

/// A connected client, the tools it listed, and the facade behind its server.
type Connected = (RunningService<RoleClient, ()>, Vec<Tool>, Arc<Contracts>);

/// The scenarios' MCP surface: one in-process server and client per (agent, strict) pair, all over
/// one store, clock and workspace.
struct Mcp {
    rt: tokio::runtime::Runtime,
    store: Arc<dyn Store>,
    clock: ManualClock,
    fs: MemFs,
    ids: Arc<SeededIdSource>,
    clients: HashMap<(Option<String>, bool), Connected>,
    checked: usize,
}

impl Mcp {
    fn new(store: Arc<dyn Store>, fx: &scenarios::Fixture) -> Self {
        Mcp {
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
            store,
            clock: fx.clock.clone(),
            fs: fx.fs.clone(),
            ids: Arc::new(SeededIdSource::new(1)),
            clients: HashMap::new(),
            checked: 0,
        }
    }

    fn facade(&self, strict: bool) -> Arc<Contracts> {
        Arc::new(
            Contracts::builder(self.store.clone())
                .fs(Arc::new(self.fs.clone()))
                .ids(self.ids.clone())
                .config(
                    ContractsConfig::builder()
                        .require_claim_epoch(strict)
                        .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new(["/w"]))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
    }

    fn client(&mut self, agent: Option<&str>, strict: bool) -> (Option<String>, bool) {
        let key = (agent.map(str::to_owned), strict);
        if !self.clients.contains_key(&key) {
            let facade = self.facade(strict);
            let tools = group::tools(Arc::new(Lazy::ready(facade.clone(), agent.map(str::to_owned))));
            let server = Server::new(Registry::from_tools(tools), String::from("contracts"));
            let client = self.rt.block_on(support::connect(server));
            let listed = self.rt.block_on(client.list_all_tools()).unwrap();
            self.clients.insert(key.clone(), (client, listed, facade));
        }
        key
    }
}

impl Surface for Mcp {
    fn call_with(&mut self, opts: &CallOpts<'_>, tool: &str, args: Value) -> Value {
        let key = self.client(opts.agent, opts.strict);
        let (client, listed, _) = &self.clients[&key];
        let def = listed.iter().find(|t| t.name == tool).unwrap().clone();
        let result = self.rt.block_on(support::call(client, tool, args));
        assert_eq!(
            result.is_error,
            Some(false),
            "{tool}: isError must be false (MC-10)"
        );
        let structured = support::assert_valid_answer(&def, &result);
        self.checked += 1;
        structured
    }

    fn sweep(&mut self, now: i64) -> (u64, u64) {
        let key = self.client(None, false);
        let facade = self.clients[&key].2.clone();
        let r = facade
            .sweep(chrono::DateTime::from_timestamp_millis(now).unwrap())
            .unwrap();
        (r.queued_timed_out, r.claimed_timed_out)
    }
}

fn kinds() -> Vec<&'static str> {
    let mut k = vec!["memory", "sqlite"];
    if cfg!(feature = "postgres") && postgres_url().is_some() {
        k.push("postgres");
    }
    k
}

fn schema_name() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "mcp{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    )
}

/// A store of `kind` and what removes it afterwards (a PostgreSQL run drops its own schema).
fn store(kind: &str, clock: &ManualClock, dir: &std::path::Path) -> (Arc<dyn Store>, Box<dyn FnOnce()>) {
    match kind {
        "memory" => (
            Arc::new(MemoryStore::new(Arc::new(clock.clone()))),
            Box::new(|| ()),
        ),
        #[cfg(feature = "postgres")]
        "postgres" => {
            let options = shiftwork_contracts::PgOptions {
                schema: Some(schema_name()),
                clock: Some(Arc::new(clock.clone())),
                ..Default::default()
            };
            let pg =
                Arc::new(shiftwork_contracts::PgStore::connect(&postgres_url().unwrap(), options).unwrap());
            let keep = pg.clone();
            (pg, Box::new(move || keep.drop_schema().unwrap()))
        }
        _ => {
            let path = dir.join("contracts.db");
            let sqlite =
                SqliteStore::open(&path, SqliteOptions::default(), Arc::new(clock.clone()), &OsFs).unwrap();
            (Arc::new(sqlite), Box::new(|| ()))
        }
    }
}

#[test]
fn ct170_ct176_every_scenario_through_mcp_on_every_store() {
    for (name, scenario) in scenarios::all() {
        for kind in kinds() {
            let fx = scenarios::fixture();
            let dir = tempfile::tempdir().unwrap();
            let (opened, cleanup) = store(kind, &fx.clock, dir.path());
            let mut mcp = Mcp::new(opened, &fx);
            {
                let mut ctx = Ctx::new(&mut mcp, &fx);
                scenario(&mut ctx);
                assert!(!ctx.answers.is_empty(), "{name}");
            }
            assert!(mcp.checked > 0, "{name} on {kind}: no answer was validated");
            assert!(
                mcp.store.check_integrity().unwrap().is_clean(),
                "{name} on {kind}"
            );
            drop(mcp);
            cleanup();
        }
    }
}

fn registry(flags: Vec<(&'static str, String)>, env: Vec<(&str, &str)>) -> Result<Registry, String> {
    let settings = Settings::new(flags, env.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())));
    Registry::build(&groups::all(), &["contracts"], &settings)
}

#[test]
fn ct81_ct93_ct94_descriptors_in_order_with_hints_and_texts() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", dir.path().join("c.db").display().to_string())],
        vec![],
    )
    .unwrap();
    let names: Vec<&str> = r.tools().iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "dispatch_contract",
            "poll_next_task",
            "extend_ttl",
            "release_contract",
            "fail_contract",
            "fulfill_contract",
            "verify_contract",
            "inspect_mesh_state",
            // CT-183: the ninth tool.
            "cancel_contract"
        ]
    );
    let expected = [
        ("Dispatch contract", false, false, false),
        ("Poll next task", false, false, false),
        ("Extend lease", false, false, false),
        ("Release contract", false, false, false),
        ("Fail contract", false, true, false),
        ("Fulfil contract", false, false, false),
        ("Verify contract files", true, false, true),
        ("Inspect contracts", true, false, true),
        ("Cancel contract", false, true, true),
    ];
    for (tool, (title, ro, destructive, idempotent)) in r.tools().iter().zip(expected) {
        assert_eq!(tool.title, title);
        assert_eq!(
            (
                tool.hints.read_only,
                tool.hints.destructive,
                tool.hints.idempotent,
                tool.hints.open_world
            ),
            (ro, destructive, idempotent, false),
            "{}",
            tool.name
        );
    }
    let dispatch = &r.tools()[0];
    assert!(
        dispatch
            .description
            .starts_with("Queue a contract for another agent. Each pointer")
    );
    // CT-94's text, then what issue 35 item 1 adds: what the call changes and answers.
    assert!(
        dispatch
            .description
            .contains("Follow it with inspect_mesh_state. Writes the store, never a file;")
    );
    assert!(
        r.tools()[5]
            .description
            .contains("put proposed changes in structured_output, e.g. under fixes. Writes the store")
    );
}

#[test]
fn ct85_input_schemas_are_closed_with_arguments_in_table_order() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", dir.path().join("c.db").display().to_string())],
        vec![],
    )
    .unwrap();
    for tool in r.tools() {
        let known = shiftwork_contracts::args::known_arguments(tool.name).unwrap();
        assert_eq!(tool.known_arguments(), known, "{}", tool.name);
        assert_eq!(tool.input_schema["additionalProperties"], false);
    }
    let dispatch = &r.tools()[0].input_schema;
    assert_eq!(
        dispatch["required"],
        json!(["target_agent", "title", "workspace_root"])
    );
    let exec_ttl = &dispatch["properties"]["exec_ttl_sec"];
    assert_eq!(
        (
            &exec_ttl["type"],
            &exec_ttl["minimum"],
            &exec_ttl["maximum"],
            &exec_ttl["default"]
        ),
        (&json!("integer"), &json!(60), &json!(86400), &json!(1800))
    );
    assert!(
        exec_ttl["description"].as_str().unwrap().contains("in seconds"),
        "{exec_ttl}"
    );
    assert_eq!(dispatch["properties"]["queue_ttl_sec"]["maximum"], 604800);
    assert_eq!(
        r.tools()[4].input_schema["required"],
        json!(["contract_id", "reason"])
    );
    assert_eq!(r.tools()[7].input_schema["properties"]["limit"]["maximum"], 50);
}

#[test]
fn ct84_output_schemas_are_one_of_closed_branches() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", dir.path().join("c.db").display().to_string())],
        vec![],
    )
    .unwrap();
    for tool in r.tools() {
        let s = &tool.output_schema;
        assert_eq!(s["type"], "object");
        let branches = s["oneOf"].as_array().unwrap();
        // Two success shapes for a poll (claimed or not) and a failure (ended, or queued again).
        let expected = if matches!(tool.name, "poll_next_task" | "fail_contract") {
            3
        } else {
            2
        };
        assert_eq!(branches.len(), expected, "{}", tool.name);
        for b in branches {
            assert_eq!(b["additionalProperties"], false, "{}", tool.name);
        }
        // A refusal validates against the last branch only.
        let refusal = shiftwork_contracts::args::unknown_argument("x", &[]).to_json();
        support::validate(s, &refusal).unwrap();
    }
}

#[test]
fn ct86_unknown_argument_frame_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", dir.path().join("c.db").display().to_string())],
        vec![],
    )
    .unwrap();
    let out = r
        .get("extend_ttl")
        .unwrap()
        .call(json!({"contract_id": "x", "epoch": 1}).as_object().unwrap());
    let shiftwork_mcp::Outcome::Answer(v, style) = out.outcome else {
        panic!("an answer")
    };
    assert_eq!(
        style,
        shiftwork_mcp::registry::TextStyle::Compact,
        "CT-82: compact text block"
    );
    assert_eq!(
        v,
        json!({"ok": false, "error": {"code": "UNKNOWN_ARGUMENT",
               "message": "unknown argument 'epoch'; known: contract_id, claim_epoch, agent_id",
               "details": {"argument": "epoch", "known": ["contract_id", "claim_epoch", "agent_id"]}}})
    );
    assert!(
        !dir.path().join("c.db").exists(),
        "CT-90: an argument refusal opens no store"
    );
}

#[test]
fn ct91_invalid_settings_are_start_up_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db").display().to_string();
    let e = registry(
        vec![
            ("--contracts-db", db.clone()),
            ("--contracts-sync", "fast".into()),
        ],
        vec![],
    )
    .unwrap_err();
    assert!(e.contains("--contracts-sync"), "{e}");
    assert!(
        registry(
            vec![("--contracts-db", db.clone())],
            vec![("SHIFTWORK_CONTRACTS_SYNC", "FULL")]
        )
        .is_ok()
    );
    let e = registry(
        vec![("--contracts-db", db.clone())],
        // Issue 12 item 3: a switch's variable takes 1/true/yes/on or 0/false/no/off; anything else
        // is a start-up error naming it.
        vec![("SHIFTWORK_CONTRACTS_REQUIRE_EPOCH", "maybe")],
    )
    .unwrap_err();
    assert!(e.contains("SHIFTWORK_CONTRACTS_REQUIRE_EPOCH"), "{e}");
    let e = registry(
        vec![("--contracts-db", db.clone()), ("--agent", "bad name".into())],
        vec![],
    )
    .unwrap_err();
    assert!(e.contains("--agent"), "{e}");
    // AGENT_NAME is answered per call (CT-88, S29), so the server still starts.
    assert!(registry(vec![("--contracts-db", db)], vec![("AGENT_NAME", "bad name")]).is_ok());
}

#[test]
fn ct90_ct135_store_opened_on_first_call_with_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("deep").join("er").join("contracts.db");
    let r = registry(
        vec![("--contracts-db", db.display().to_string())],
        vec![("AGENT_NAME", "bob")],
    )
    .unwrap();
    assert!(!db.exists(), "nothing is created at start-up");
    let out = r
        .get("poll_next_task")
        .unwrap()
        .call(&serde_json::Map::new())
        .outcome;
    assert_eq!(
        out.text(),
        r#"{"ok":true,"has_task":false,"message":"No pending contracts for agent \"bob\"","skipped_stale":[]}"#
    );
    assert!(db.exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(db.parent().unwrap()), 0o700);
    assert_eq!(mode(&dir.path().join("deep")), 0o700);
    // The default location is under HOME.
    let home = tempfile::tempdir().unwrap();
    let r = registry(
        vec![],
        vec![("HOME", home.path().to_str().unwrap()), ("AGENT_NAME", "bob")],
    )
    .unwrap();
    r.get("poll_next_task").unwrap().call(&serde_json::Map::new());
    assert!(home.path().join(".shiftwork/contracts.db").exists());
}

#[test]
fn ct90_ct132_unavailable_store_answers_store_unavailable_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign.db");
    {
        let c = rusqlite_free_foreign_db(&foreign);
        assert!(c);
    }
    let r = registry(
        vec![("--contracts-db", foreign.display().to_string())],
        vec![("AGENT_NAME", "bob")],
    )
    .unwrap();
    for _ in 0..2 {
        let shiftwork_mcp::Outcome::Answer(v, _) = r
            .get("poll_next_task")
            .unwrap()
            .call(&serde_json::Map::new())
            .outcome
        else {
            panic!()
        };
        assert_eq!(v["error"]["code"], "STORE_UNAVAILABLE", "{v}");
        assert_eq!(v["error"]["details"], json!({}));
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("--contracts-db / SHIFTWORK_CONTRACTS_DB"),
            "{message}"
        );
        assert!(
            !message.contains(dir.path().to_str().unwrap()),
            "no path in the message: {message}"
        );
    }
    let r = registry(
        vec![("--contracts-db", "postgres://localhost/x".into())],
        vec![("AGENT_NAME", "bob")],
    )
    .unwrap();
    let out = r
        .get("inspect_mesh_state")
        .unwrap()
        .call(&serde_json::Map::new())
        .outcome;
    if cfg!(feature = "postgres") {
        assert!(out.text().contains("STORE_UNAVAILABLE"), "{}", out.text());
    } else {
        assert!(
            out.text().contains("built without PostgreSQL support"),
            "{}",
            out.text()
        );
    }
}

/// Writes a file that is not a contracts database (a text file SQLite refuses, or another product's).
fn rusqlite_free_foreign_db(path: &std::path::Path) -> bool {
    std::fs::write(
        path,
        b"this is not a database, it is someone's notes\n".repeat(200),
    )
    .is_ok()
}

/// The flow of S29 between two `serve` processes on the store `db` (`--contracts-db` for one,
/// `SHIFTWORK_CONTRACTS_DB` for the other), with the workspace under `dir`; both must exit 0 without a
/// panic when their client closes stdin (a PostgreSQL store closes its connections outside the
/// server's async runtime).
fn two_servers_hand_a_contract(dir: &std::path::Path, db: &str) {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), scenarios::LIB).unwrap();
    let mut alice = support::Binary::serve(
        &["--tools", "contracts"],
        &[("AGENT_NAME", "alice"), ("SHIFTWORK_CONTRACTS_DB", db)],
    );
    let mut bob = support::Binary::serve(
        &["--tools", "contracts", "--contracts-db", db],
        &[("AGENT_NAME", "bob")],
    );
    alice.initialize();
    bob.initialize();
    let call = |b: &mut support::Binary, tool: &str, args: Value| -> Value {
        let r = b.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["structuredContent"].clone()
    };
    let sent = call(
        &mut alice,
        "dispatch_contract",
        json!({"target_agent": "bob", "title": "Review add()", "workspace_root": ws.to_str().unwrap(), "pointers": ["src/lib.rs"]}),
    );
    assert_eq!(sent["requester_agent"], "alice");
    let id = sent["contract_id"].as_str().unwrap().to_owned();
    let held = call(&mut bob, "poll_next_task", json!({}));
    assert_eq!(held["contract"]["contract_id"], id.as_str());
    let epoch = held["contract"]["claim_epoch"].clone();
    assert_eq!(
        call(
            &mut bob,
            "extend_ttl",
            json!({"contract_id": id, "claim_epoch": epoch})
        )["ok"],
        true
    );
    std::fs::write(ws.join("src/lib.rs"), scenarios::LIB_CHANGED).unwrap();
    let retry = call(
        &mut bob,
        "fulfill_contract",
        json!({"contract_id": id, "claim_epoch": epoch, "result_summary": "LGTM"}),
    );
    assert_eq!(retry["error"]["code"], "RETRY_NEEDED", "{retry}");
    assert_eq!(retry["error"]["details"]["dirty_files"][0]["path"], "src/lib.rs");
    std::fs::write(ws.join("src/lib.rs"), scenarios::LIB).unwrap();
    let done = call(
        &mut bob,
        "fulfill_contract",
        json!({"contract_id": id, "claim_epoch": epoch, "result_summary": "LGTM"}),
    );
    assert_eq!(done["status"], "COMPLETED", "{done}");
    let seen = call(&mut alice, "inspect_mesh_state", json!({"contract_id": id}));
    assert_eq!(seen["contracts"][0]["result_summary"], "LGTM");
    for (who, server) in [("alice", alice), ("bob", bob)] {
        let (status, _, stderr) = server.close();
        assert!(status.success(), "{who} exited with {status:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{who}: {stderr}");
    }
}

/// S29 and the issue's "as a user would": two `serve` processes with different AGENT_NAMEs on one
/// database hand a contract from alice to bob; alice edits the file, bob's fulfill answers the one
/// recoverable retry naming the drifted file; after the restore the fulfill completes.
#[test]
fn s29_two_servers_hand_a_contract_over_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").join("contracts.db");
    let db = db.to_str().unwrap();
    two_servers_hand_a_contract(dir.path(), db);
    let call = |b: &mut support::Binary, tool: &str, args: Value| -> Value {
        let r = b.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["structuredContent"].clone()
    };
    // A server without AGENT_NAME refuses identity-less calls; one with an invalid AGENT_NAME names it.
    let mut nobody = support::Binary::serve(
        &["--tools", "contracts", "--contracts-db", db],
        &[("AGENT_NAME", "")],
    );
    nobody.initialize();
    assert_eq!(
        call(&mut nobody, "poll_next_task", json!({}))["error"]["code"],
        "AGENT_ID_REQUIRED"
    );
    nobody.close();
    let mut bad = support::Binary::serve(
        &["--tools", "contracts", "--contracts-db", db],
        &[("AGENT_NAME", "bad name")],
    );
    bad.initialize();
    let r = call(&mut bad, "poll_next_task", json!({}));
    assert_eq!(r["error"]["details"], json!({"argument": "AGENT_NAME"}));
    bad.close();
}

#[test]
fn ct90_serve_without_the_contracts_group_never_creates_a_database() {
    let home = tempfile::tempdir().unwrap();
    let mut b = support::Binary::serve(
        &["--tools", "hours,worklog"],
        &[("HOME", home.path().to_str().unwrap())],
    );
    b.initialize();
    b.request("tools/list", json!({}));
    b.close();
    assert!(!home.path().join(".shiftwork").exists());
}

/// CT-92: `shiftwork-mcp call` runs the same handler and prints the structuredContent object; a
/// refusal is a result (exit 0).
#[test]
fn ct92_call_prints_the_same_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    let out = support::run(
        &["call", "poll_next_task", "{}", "--contracts-db", db],
        &[("AGENT_NAME", "bob")],
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"ok": true, "has_task": false, "message": "No pending contracts for agent \"bob\"", "skipped_stale": []})
    );
    let out = support::run(
        &[
            "call",
            "extend_ttl",
            r#"{"contract_id": "nope"}"#,
            "--contracts-db",
            db,
        ],
        &[("AGENT_NAME", "bob")],
    );
    assert!(out.status.success(), "a refusal is a result");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "CONTRACT_NOT_FOUND");
}

/// Issue 8, as a user would: two `serve` processes with different AGENT_NAMEs and one
/// `--contracts-db postgres://…` hand a contract from one to the other (the flow of S29).
#[cfg(feature = "postgres")]
#[test]
fn issue8_two_servers_hand_a_contract_over_postgres() {
    let Some(url) = postgres_url() else { return };
    let schema = schema_name();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let dir = tempfile::tempdir().unwrap();
    two_servers_hand_a_contract(
        dir.path(),
        &format!("{url}{sep}options=-c%20search_path%3D{schema}"),
    );
    admin
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .unwrap();
}

/// Issue 14 (CT-181) end to end through the binary: `notifications/cancelled` for a waiting
/// `poll_next_task` ends it unanswered, and a contract dispatched afterwards by another server stays
/// waiting for its target (the cancelled wait claimed nothing), until the target polls again.
#[test]
fn issue14_a_cancelled_waiting_poll_through_the_binary_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db").display().to_string();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut alice = support::Binary::serve(
        &["--tools", "contracts", "--contracts-db", &db],
        &[("AGENT_NAME", "alice")],
    );
    let mut bob = support::Binary::serve(
        &["--tools", "contracts", "--contracts-db", &db],
        &[("AGENT_NAME", "bob")],
    );
    alice.initialize();
    bob.initialize();
    // Answers up to the one with `id`, checking that the cancelled call is never among them.
    let until = |b: &mut support::Binary, id: Value| loop {
        let m = b.receive();
        assert_ne!(
            m.get("id"),
            Some(&json!("wait-1")),
            "a cancelled call was answered: {m}"
        );
        if m.get("id") == Some(&id) {
            return m;
        }
    };
    bob.send(&json!({"jsonrpc": "2.0", "id": "wait-1", "method": "tools/call", "params": {"name": "poll_next_task", "arguments": {"wait_sec": 30}}}));
    std::thread::sleep(std::time::Duration::from_millis(200));
    bob.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "wait-1", "reason": "changed my mind"}}));
    bob.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    until(&mut bob, json!(2));
    let sent = alice.request(
        "tools/call",
        json!({"name": "dispatch_contract", "arguments": {"target_agent": "bob", "title": "Review", "workspace_root": ws.to_str().unwrap()}}),
    );
    let id = sent["result"]["structuredContent"]["contract_id"].clone();
    assert!(id.is_string(), "{sent}");
    // Long enough for a wait that was still alive to have claimed it (the SQLite watch looks every 20 ms).
    std::thread::sleep(std::time::Duration::from_millis(300));
    bob.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    until(&mut bob, json!(3));
    let seen = alice.request(
        "tools/call",
        json!({"name": "inspect_mesh_state", "arguments": {"contract_id": id}}),
    );
    assert_eq!(
        seen["result"]["structuredContent"]["contracts"][0]["status"], "SUBMITTED",
        "{seen}"
    );
    bob.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "poll_next_task", "arguments": {}}}));
    let held = until(&mut bob, json!(4));
    assert_eq!(
        held["result"]["structuredContent"]["contract"]["contract_id"], id,
        "{held}"
    );
}

/// Issue 11 item 4: the input schemas are derived from the crate's argument tables, so their bounds
/// are the crate's limits (none is written a second time in the adapter).
#[test]
fn issue11_input_schemas_carry_the_limits_of_the_crate() {
    use shiftwork_contracts::limits::*;
    let dir = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", dir.path().join("c.db").display().to_string())],
        vec![],
    )
    .unwrap();
    let schema = |tool: &str, arg: &str| r.get(tool).unwrap().input_schema["properties"][arg].clone();
    let bounds = |tool: &str, arg: &str| {
        let p = schema(tool, arg);
        (
            p["minimum"].as_i64(),
            p["maximum"].as_i64(),
            p["default"].as_i64(),
        )
    };
    let int = |v: u32| Some(i64::from(v));
    assert_eq!(
        bounds("dispatch_contract", "exec_ttl_sec"),
        (
            int(MIN_EXEC_TTL_SEC),
            int(MAX_EXEC_TTL_SEC),
            int(DEFAULT_EXEC_TTL_SEC)
        )
    );
    assert_eq!(
        bounds("dispatch_contract", "queue_ttl_sec"),
        (
            int(MIN_QUEUE_TTL_SEC),
            int(MAX_QUEUE_TTL_SEC),
            int(DEFAULT_QUEUE_TTL_SEC)
        )
    );
    assert_eq!(
        bounds("inspect_mesh_state", "limit"),
        (
            Some(1),
            Some(INSPECT_MAX_LIMIT as i64),
            Some(INSPECT_DEFAULT_LIMIT as i64)
        )
    );
    for tool in [
        "extend_ttl",
        "release_contract",
        "fail_contract",
        "fulfill_contract",
        "verify_contract",
    ] {
        // MAX_CLAIM_EPOCH (2^53 − 1) is beyond what a schema usefully states; the server checks it.
        assert_eq!(bounds(tool, "claim_epoch"), (Some(1), None, None), "{tool}");
    }
    const { assert!(MAX_CLAIM_EPOCH > 1 << 32) };
    assert_eq!(
        bounds("poll_next_task", "wait_sec"),
        (Some(0), Some(i64::from(MAX_WAIT_SEC)), Some(0))
    );
    assert_eq!(
        bounds("dispatch_contract", "max_deliveries"),
        (Some(1), Some(i64::from(MAX_DELIVERIES)), Some(1))
    );
    assert_eq!(
        schema("cancel_contract", "reason")["maxLength"],
        MAX_CANCEL_REASON_CHARS
    );
    assert_eq!(schema("dispatch_contract", "title")["maxLength"], MAX_TITLE_CHARS);
    assert_eq!(
        schema("dispatch_contract", "idempotency_key")["maxLength"],
        MAX_IDEMPOTENCY_KEY_CHARS
    );
    assert_eq!(
        schema("release_contract", "reason")["maxLength"],
        MAX_REASON_CHARS
    );
    assert_eq!(schema("fail_contract", "reason")["maxLength"], MAX_REASON_CHARS);
    assert_eq!(
        schema("dispatch_contract", "task_type")["pattern"],
        shiftwork_contracts::args::TASK_TYPE_PATTERN
    );
    // Every table row is a property, typed, with `required` exactly the required rows, described from
    // the row's `about` (issue 35 item 1: the library's table is the one source of the meaning).
    for tool in shiftwork_contracts::args::TOOLS {
        let s = &r.get(tool.name).unwrap().input_schema;
        let required: Vec<&str> = tool.args.iter().filter(|a| a.required).map(|a| a.name).collect();
        assert_eq!(
            s["required"].as_array().map_or(0, Vec::len),
            required.len(),
            "{}",
            tool.name
        );
        for a in tool.args {
            assert!(s["properties"][a.name].is_object(), "{}.{}", tool.name, a.name);
            assert!(
                s["properties"][a.name]["description"]
                    .as_str()
                    .is_some_and(|d| d.starts_with(a.about)),
                "{}.{}",
                tool.name,
                a.name
            );
        }
    }
}

/// Issue 12 item 2: `--contracts-roots DIR,…` / `SHIFTWORK_CONTRACTS_ROOTS` (default: the home and the
/// temporary directory); a root outside them is refused `WORKSPACE_ROOT_INVALID` naming the rule and
/// the setting; `/etc` is refused even when listed; an entry that is not absolute is a start-up error.
#[test]
fn issue12_contracts_roots_setting_and_its_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db").display().to_string();
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let dispatch = |r: &Registry, root: &str| -> Value {
        let out = r.get("dispatch_contract").unwrap().call(
            json!({"target_agent": "bob", "title": "t", "workspace_root": root})
                .as_object()
                .unwrap(),
        );
        let shiftwork_mcp::Outcome::Answer(v, _) = out.outcome else {
            panic!()
        };
        v
    };
    let e = registry(
        vec![
            ("--contracts-db", db.clone()),
            ("--contracts-roots", "relative/dir".into()),
        ],
        vec![],
    )
    .unwrap_err();
    assert!(
        e.contains("--contracts-roots") && e.contains("not an absolute path"),
        "{e}"
    );
    // The default: the home directory and the temporary directory.
    let r = registry(
        vec![("--contracts-db", db.clone())],
        vec![("HOME", home.path().to_str().unwrap()), ("AGENT_NAME", "alice")],
    )
    .unwrap();
    assert_eq!(dispatch(&r, ws.to_str().unwrap())["ok"], true);
    let etc = dispatch(&r, "/etc");
    assert_eq!(etc["error"]["details"]["reason"], "SYSTEM_DIRECTORY", "{etc}");
    // Listed roots replace the default; the variable works like the flag.
    let elsewhere = tempfile::tempdir().unwrap();
    let r = registry(
        vec![("--contracts-db", db.clone())],
        vec![
            ("HOME", home.path().to_str().unwrap()),
            ("AGENT_NAME", "alice"),
            (
                "SHIFTWORK_CONTRACTS_ROOTS",
                &format!("{}, /etc", elsewhere.path().display()),
            ),
        ],
    )
    .unwrap();
    let outside = dispatch(&r, ws.to_str().unwrap());
    assert_eq!(
        outside["error"]["details"]["reason"], "OUTSIDE_ALLOWED_ROOTS",
        "{outside}"
    );
    let message = outside["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("allowed roots") && message.contains("--contracts-roots"),
        "{message}"
    );
    assert_eq!(
        dispatch(&r, "/etc")["error"]["details"]["reason"],
        "SYSTEM_DIRECTORY"
    );
    assert_eq!(dispatch(&r, elsewhere.path().to_str().unwrap())["ok"], true);
}

/// Runs the binary with `HOME` set to `home` and none of the contracts variables of the caller's
/// environment.
fn run_at_home(home: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (bool, Value) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .env("HOME", home)
        .env_remove("SHIFTWORK_CONTRACTS_DB")
        .env_remove("AGENT_NAME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or(Value::String(stdout.into_owned()));
    (out.status.success(), value)
}

/// The output schema the server advertises for `tool`.
fn advertised_output(tool: &str) -> Value {
    let lazy = Lazy::ready(
        Arc::new(
            Contracts::builder(Arc::new(MemoryStore::new(Arc::new(
                shiftwork_seams::SystemClock::new(),
            ))))
            .fs(Arc::new(MemFs::new()))
            .ids(Arc::new(SeededIdSource::new(1)))
            .build(),
        ),
        None,
    );
    group::tools(Arc::new(lazy))
        .into_iter()
        .find(|t| t.name == tool)
        .unwrap()
        .output_schema
}

/// Issue 31 item 4: a read-only tool never creates a store or a directory. With a fresh HOME and no
/// store yet, `call inspect_mesh_state` answers empty counts and a `note` saying no store exists and
/// naming the setting (valid against the advertised output schema), `verify_contract` answers
/// CONTRACT_NOT_FOUND, and HOME is left without `.shiftwork`; the first call that writes creates it.
#[test]
fn issue31_nothing_is_created_by_looking() {
    let home = tempfile::tempdir().unwrap();
    let (ok, v) = run_at_home(home.path(), &["call", "inspect_mesh_state", "{}"], &[]);
    assert!(ok, "{v}");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["total_returned"], 0);
    assert!(
        v["counts"].as_object().unwrap().values().all(|n| n == &json!(0)),
        "{v}"
    );
    let note = v["note"].as_str().unwrap();
    assert!(
        note.contains("No contracts store exists") && note.contains("nothing was created"),
        "{note}"
    );
    assert!(note.contains("--contracts-db / SHIFTWORK_CONTRACTS_DB"), "{note}");
    let validator = jsonschema::validator_for(&advertised_output("inspect_mesh_state")).unwrap();
    assert!(validator.is_valid(&v), "{v}");
    let (_, v) = run_at_home(
        home.path(),
        &[
            "call",
            "verify_contract",
            r#"{"contract_id": "0196f3a0-0000-7000-8000-000000000000"}"#,
        ],
        &[],
    );
    assert_eq!(v["error"]["code"], "CONTRACT_NOT_FOUND", "{v}");
    let (_, v) = run_at_home(
        home.path(),
        &["call", "inspect_mesh_state", r#"{"limit": 0}"#],
        &[],
    );
    assert_eq!(
        v["error"]["code"], "INVALID_ARGUMENT",
        "arguments are still checked: {v}"
    );
    assert!(
        !home.path().join(".shiftwork").exists(),
        "looking created ~/.shiftwork"
    );
    let (_, v) = run_at_home(
        home.path(),
        &["call", "poll_next_task", "{}"],
        &[("AGENT_NAME", "bob")],
    );
    assert_eq!(v["ok"], true, "{v}");
    assert!(home.path().join(".shiftwork/contracts.db").exists());
    let (_, v) = run_at_home(home.path(), &["call", "inspect_mesh_state", "{}"], &[]);
    assert!(v.get("note").is_none(), "a store exists now: {v}");
}

/// Every file of `dir` with its bytes.
fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// Issue 27 items 5, 9 and 10 through the binary, as a hostile user would: a `-wal` of another
/// database planted beside a 40 KB store, then a trigger in the store, then an empty file named as
/// the store. `call inspect_mesh_state` and `watch --once` refuse each (STORE_UNAVAILABLE naming the
/// file and the setting), and every file is left byte for byte as it was — before, the planted log
/// shrank the store to 8 KB.
#[test]
fn issue27_a_planted_wal_a_triggered_store_and_an_empty_file_through_the_binary() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let db = dir.path().join("contracts.db");
    let db_arg = db.to_str().unwrap();
    let roots = dir.path().to_str().unwrap();
    for i in 0..40 {
        let args = json!({"target_agent": "bob", "title": format!("job {i}"), "workspace_root": ws,
                          "context_summary": "x".repeat(600)});
        let (_, v) = run_at_home(
            home.path(),
            &[
                "call",
                "dispatch_contract",
                &args.to_string(),
                "--contracts-db",
                db_arg,
                "--contracts-roots",
                roots,
            ],
            &[("AGENT_NAME", "alice")],
        );
        assert_eq!(v["ok"], true, "{v}");
    }
    assert!(std::fs::metadata(&db).unwrap().len() >= 40_000);
    let wal = shiftwork_contracts::testing::foreign_wal(dir.path()).unwrap();
    let planted = dir.path().join("contracts.db-wal");
    let trigger = "CREATE TRIGGER to_mallory AFTER INSERT ON contracts BEGIN
                     UPDATE contracts SET target_agent = 'mallory' WHERE seq = new.seq; END";
    let empty = dir.path().join("empty.db");
    for (case, store, names) in [
        ("a planted -wal", &db, "contracts.db-wal"),
        ("a trigger", &db, "to_mallory"),
        ("an empty file", &empty, "empty.db"),
    ] {
        match case {
            "a planted -wal" => std::fs::write(&planted, &wal).unwrap(),
            "a trigger" => {
                std::fs::remove_file(&planted).unwrap();
                shiftwork_contracts::testing::sqlite_exec(&db, trigger).unwrap();
            }
            _ => std::fs::write(&empty, b"").unwrap(),
        }
        let before = files_of(dir.path());
        let store_arg = store.to_str().unwrap();
        let (ok, v) = run_at_home(
            home.path(),
            &["call", "inspect_mesh_state", "{}", "--contracts-db", store_arg],
            &[],
        );
        assert!(ok, "{case}: a refusal is a result");
        assert_eq!(v["error"]["code"], "STORE_UNAVAILABLE", "{case}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(names), "{case}: names {names}: {message}");
        assert!(message.contains("--contracts-db"), "{case}: {message}");
        let watch = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .args(["watch", "--once", "--contracts-db", store_arg])
            .env("HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&watch.stdout);
        assert!(shown.contains(names), "{case}: watch --once names it: {shown}");
        assert_eq!(files_of(dir.path()), before, "{case}: every byte as it was");
    }
}

/// Issue 36 item 5: `--contracts-retention` / `SHIFTWORK_CONTRACTS_RETENTION` says how long finished
/// contracts are kept (default 7 days, `forever` keeps them); a value the library cannot read is a
/// start-up error naming the flag and the variable; `inspect_mesh_state` says what is configured.
#[test]
fn issue36_item5_contracts_retention_setting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db").display().to_string();
    let kept = |flags: Vec<(&'static str, String)>, env: Vec<(&str, &str)>| -> Value {
        let r = registry(flags, env).unwrap();
        let out = r.get("inspect_mesh_state").unwrap().call(&serde_json::Map::new());
        let answer: Value = serde_json::from_str(&out.outcome.text()).unwrap();
        answer["finished_kept_sec"].clone()
    };
    assert_eq!(kept(vec![("--contracts-db", db.clone())], vec![]), json!(604_800));
    assert_eq!(
        kept(
            vec![
                ("--contracts-db", db.clone()),
                ("--contracts-retention", "24h".into())
            ],
            vec![]
        ),
        json!(86_400)
    );
    assert_eq!(
        kept(
            vec![("--contracts-db", db.clone())],
            vec![("SHIFTWORK_CONTRACTS_RETENTION", "forever")]
        ),
        json!(null)
    );
    // The flag wins over the variable.
    assert_eq!(
        kept(
            vec![
                ("--contracts-db", db.clone()),
                ("--contracts-retention", "90m".into())
            ],
            vec![("SHIFTWORK_CONTRACTS_RETENTION", "forever")]
        ),
        json!(5_400)
    );
    for bad in ["30", "1w", "soon", "-1d"] {
        let e = registry(
            vec![
                ("--contracts-db", db.clone()),
                ("--contracts-retention", bad.into()),
            ],
            vec![],
        )
        .err()
        .unwrap_or_default();
        assert!(
            e.contains("--contracts-retention / SHIFTWORK_CONTRACTS_RETENTION") && e.contains(bad),
            "{bad}: {e}"
        );
    }
    assert!(!std::path::Path::new(&db).exists(), "reading creates no store");
}
