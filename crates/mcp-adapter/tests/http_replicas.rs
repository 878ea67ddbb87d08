//! Issue 29 item 5: two `serve --http` replicas on one PostgreSQL database are one service — a waiting
//! poll through one wakes on a dispatch made through the other, and a lease taken through one is
//! fenced through the other. Each test gets a database of its own on the server of
//! `SHIFTWORK_TEST_POSTGRES_URL` (skipped without it, unless `SHIFTWORK_REQUIRE_POSTGRES=1`, as CI
//! sets).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Database, HttpServer, add_token};

/// Two replicas serving `db`, alice's and bob's tokens, and a workspace.
struct Replicas {
    one: HttpServer,
    other: HttpServer,
    alice: String,
    bob: String,
    workspace: std::path::PathBuf,
}

fn replicas(dir: &Path, db: &Database) -> Replicas {
    let tokens = dir.join("tokens");
    let alice = add_token(&tokens, "alice");
    let bob = add_token(&tokens, "bob");
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let args = [
        "--auth-tokens",
        tokens.to_str().unwrap(),
        "--contracts-db",
        db.url.as_str(),
    ];
    let env = [("HOME", dir.to_str().unwrap())];
    Replicas {
        one: HttpServer::start(dir, &args, &env),
        other: HttpServer::start(dir, &args, &env),
        alice,
        bob,
        workspace,
    }
}

fn answer(reply: Value) -> Value {
    reply["result"]["structuredContent"].clone()
}

/// Issue 29 item 5: a poll waiting through one replica wakes when alice dispatches through the other,
/// and answers the contract well before its wait ends.
#[test]
fn issue29_a_poll_waiting_on_one_replica_wakes_on_a_dispatch_through_the_other() {
    let Some(db) = Database::create("replicas") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = replicas(dir.path(), &db);
    // The store is opened (and its schema made) before bob waits.
    let empty = answer(r.one.call(&r.bob, "inspect_mesh_state", json!({})));
    assert_eq!(empty["ok"], true, "{empty}");
    std::thread::scope(|s| {
        let waiting = s.spawn(|| answer(r.one.call(&r.bob, "poll_next_task", json!({"wait_sec": 60}))));
        // Not a measurement: the poll has time to start waiting before the dispatch.
        std::thread::sleep(Duration::from_secs(2));
        let sent = answer(r.other.call(
            &r.alice,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "Review", "workspace_root": r.workspace}),
        ));
        assert_eq!(sent["ok"], true, "{sent}");
        let woken = waiting.join().unwrap();
        assert_eq!(woken["has_task"], true, "{woken}");
        assert_eq!(woken["contract"]["contract_id"], sent["contract_id"], "{woken}");
        let waited = woken["waited_ms"].as_u64().unwrap();
        assert!(waited > 0, "it waited for the dispatch: {woken}");
        assert!(waited < 60_000, "it woke before its wait ended: {woken}");
    });
}

/// Issue 29 item 5: a lease taken through one replica is fenced through the other — the other sees it
/// held, and once the contract is released and claimed again there, the first claim's epoch is
/// refused `STALE_EPOCH` through either replica.
#[test]
fn issue29_a_lease_taken_through_one_replica_is_fenced_through_the_other() {
    let Some(db) = Database::create("replicas") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = replicas(dir.path(), &db);
    let sent = answer(r.one.call(
        &r.alice,
        "dispatch_contract",
        json!({"target_agent": "bob", "title": "Review", "workspace_root": r.workspace}),
    ));
    let id = sent["contract_id"].clone();
    let first = answer(r.one.call(&r.bob, "poll_next_task", json!({})));
    assert_eq!(first["contract"]["claim_epoch"], 1, "{first}");
    // The other replica sees the lease: nothing to claim there, and the contract CLAIMED.
    let nothing = answer(r.other.call(&r.bob, "poll_next_task", json!({})));
    assert_eq!(nothing["has_task"], false, "{nothing}");
    let seen = answer(
        r.other
            .call(&r.alice, "inspect_mesh_state", json!({"contract_id": id})),
    );
    assert_eq!(seen["contracts"][0]["status"], "CLAIMED", "{seen}");
    // Released and claimed again through the other replica: epoch 2.
    let released = answer(r.other.call(
        &r.bob,
        "release_contract",
        json!({"contract_id": id, "claim_epoch": 1}),
    ));
    assert_eq!(released["ok"], true, "{released}");
    let second = answer(r.other.call(&r.bob, "poll_next_task", json!({})));
    assert_eq!(second["contract"]["claim_epoch"], 2, "{second}");
    // The first claim is fenced out through the replica that gave it.
    for (tool, extra) in [
        ("extend_ttl", json!({})),
        ("fulfill_contract", json!({"result_summary": "late"})),
    ] {
        let mut args = json!({"contract_id": id, "claim_epoch": 1});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let refused = answer(r.one.call(&r.bob, tool, args));
        assert_eq!(refused["error"]["code"], "STALE_EPOCH", "{tool}: {refused}");
        assert_eq!(refused["error"]["details"]["claim_epoch"], 2, "{tool}: {refused}");
    }
    let current = answer(
        r.one
            .call(&r.bob, "extend_ttl", json!({"contract_id": id, "claim_epoch": 2})),
    );
    assert_eq!(
        current["ok"], true,
        "the current epoch works through either replica: {current}"
    );
}
