//! Issue 30 item 3, the contracts part: the server's metrics count the queue's events (told by the
//! library's observer) and show its depth (read from the store at most once per scrape interval,
//! never per call): the real binary over HTTP, scraped at `GET /metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

mod support;

use serde_json::{Value, json};
use support::{HttpServer, add_token, sample};

fn answer(reply: &Value) -> &Value {
    &reply["result"]["structuredContent"]
}

/// Issue 30 item 3: claims, fulfils, failures, stale-epoch refusals and waiting polls are counted by
/// event, the claim-to-fulfil time is a histogram, and the queue gauge shows the contracts per status,
/// the waiting ones per target agent.
#[test]
fn issue30_the_contracts_queue_is_counted_and_gauged_in_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let alice = add_token(&tokens, "alice");
    let bob = add_token(&tokens, "bob");
    let db = dir.path().join("contracts.db");
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let server = HttpServer::start(
        dir.path(),
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--contracts-db",
            db.to_str().unwrap(),
        ],
        &[("HOME", dir.path().to_str().unwrap())],
    );
    for title in ["one", "two"] {
        let sent = server.call(
            &alice,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": title, "workspace_root": workspace}),
        );
        assert_eq!(answer(&sent)["ok"], true, "{sent}");
    }
    let text = server.scrape(&alice);
    assert_eq!(
        sample(
            &text,
            r#"shiftwork_contracts_queue{status="SUBMITTED",target_agent="bob"}"#
        ),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, r#"shiftwork_contracts_queue{status="CLAIMED"}"#),
        Some(0.0),
        "{text}"
    );
    // bob claims the first and delivers it; claims the second, releases it, claims it again, is
    // refused with the first epoch, and fails it; then waits for more.
    let first = server.call(&bob, "poll_next_task", json!({}));
    let first = &answer(&first)["contract"];
    let done = server.call(
        &bob,
        "fulfill_contract",
        json!({"contract_id": first["contract_id"], "claim_epoch": first["claim_epoch"], "result_summary": "done"}),
    );
    assert_eq!(answer(&done)["ok"], true, "{done}");
    let second = server.call(&bob, "poll_next_task", json!({}));
    let id = answer(&second)["contract"]["contract_id"].clone();
    server.call(
        &bob,
        "release_contract",
        json!({"contract_id": id, "claim_epoch": 1}),
    );
    server.call(&bob, "poll_next_task", json!({}));
    let stale = server.call(&bob, "extend_ttl", json!({"contract_id": id, "claim_epoch": 1}));
    assert_eq!(answer(&stale)["error"]["code"], "STALE_EPOCH", "{stale}");
    let failed = server.call(
        &bob,
        "fail_contract",
        json!({"contract_id": id, "claim_epoch": 2, "reason": "cannot"}),
    );
    assert_eq!(answer(&failed)["ok"], true, "{failed}");
    let waited = server.call(&bob, "poll_next_task", json!({"wait_sec": 1}));
    assert_eq!(answer(&waited)["has_task"], false, "{waited}");
    let text = server.scrape(&alice);
    for (event, count) in [
        ("claim", 3.0),
        ("fulfil", 1.0),
        ("failure", 1.0),
        ("stale_epoch", 1.0),
        ("waiting_poll", 1.0),
    ] {
        assert_eq!(
            sample(
                &text,
                &format!(r#"shiftwork_contracts_events_total{{event="{event}"}}"#)
            ),
            Some(count),
            "{event}: {text}"
        );
    }
    assert_eq!(
        sample(
            &text,
            "shiftwork_contracts_claim_to_fulfil_duration_seconds_count"
        ),
        Some(1.0),
        "{text}"
    );
}
