//! Two agents hand work to each other through one contracts database (an embedded SQLite file).
//!
//! alice asks bob to review a file and names the shape of the answer; bob claims the contract, checks
//! the file is still the one alice read, and delivers a verdict; then bob hands a follow-up back to
//! alice, who claims and fulfills it. Each agent has its own `Contracts` facade and its own connection,
//! as two processes on one machine would.
//!
//! Run with `cargo run -p examples --example contracts_handoff`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, HolderRef, Identity,
    InspectRequest, OsIdSource, SqliteOptions, SqliteStore,
};
use shiftwork_seams::{OsFs, SystemClock};

fn agent(name: &str) -> AgentId {
    AgentId::parse(name).unwrap()
}

fn agent_facade(db: &std::path::Path, workspaces: &std::path::Path) -> Contracts {
    let clock = Arc::new(SystemClock::new());
    let store = SqliteStore::open(db, SqliteOptions::default(), clock.clone(), &OsFs).unwrap();
    Contracts::new(
        Arc::new(store),
        clock,
        Arc::new(OsFs),
        Arc::new(OsIdSource),
        // Workspace roots must lie in an allowed root (the default: the home and temporary directories).
        ContractsConfig {
            allowed_roots: AllowedRoots::new([workspaces]),
            ..ContractsConfig::default()
        },
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::write(
        workspace.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .unwrap();
    let db = dir.path().join("shared").join("contracts.db");
    let alice = agent_facade(&db, dir.path());
    let bob = agent_facade(&db, dir.path());

    // alice dispatches a review with a result schema.
    let sent = alice
        .dispatch(&DispatchRequest {
            pointers: Some(vec!["src/lib.rs".into()]),
            contract_schema: json!({"type": "object", "required": ["verdict"],
                                     "properties": {"verdict": {"enum": ["approve", "reject"]}}})
            .as_object()
            .cloned(),
            requester_agent: Identity::from(agent("alice")),
            ..DispatchRequest::new(agent("bob"), "Review add()", workspace.display().to_string())
        })
        .unwrap();
    println!(
        "alice dispatched {} ({:?}), pinning {}",
        sent.contract_id, sent.status, sent.pointers[0].sha256
    );

    // bob claims it; the poll verifies the pinned file before handing it over.
    let polled = bob.poll_next_task(&Identity::from(agent("bob"))).unwrap();
    let held = polled.held().expect("bob has work");
    println!(
        "bob claimed {} with claim_epoch {}",
        held.contract_id, held.claim_epoch
    );
    let bob_holds = HolderRef {
        contract_id: held.contract_id.clone(),
        agent_id: Identity::from(agent("bob")),
        claim_epoch: Some(held.claim_epoch),
    };
    let done = bob
        .fulfill_contract(
            &bob_holds,
            &FulfillRequest {
                result_summary: "add() is correct; consider overflow.".into(),
                structured_output: json!({"verdict": "approve", "fixes": ["use checked_add"]})
                    .as_object()
                    .cloned(),
                artifacts_pointers: None,
            },
        )
        .unwrap();
    println!("bob delivered: {:?} at {}", done.status, done.completed_at);

    // bob hands a follow-up back to alice.
    let follow_up = bob
        .dispatch(&DispatchRequest {
            pointers: Some(vec!["src/lib.rs".into()]),
            task_type: Some("implementation".into()),
            context_summary: Some("Use checked_add and return an Option.".into()),
            requester_agent: Identity::from(agent("bob")),
            ..DispatchRequest::new(
                agent("alice"),
                "Apply the overflow fix",
                workspace.display().to_string(),
            )
        })
        .unwrap();
    let polled = alice.poll_next_task(&Identity::from(agent("alice"))).unwrap();
    let held = polled.held().expect("alice has work");
    assert_eq!(held.contract_id, follow_up.contract_id);
    alice
        .fulfill_contract(
            &HolderRef {
                contract_id: held.contract_id.clone(),
                agent_id: Identity::from(agent("alice")),
                claim_epoch: Some(held.claim_epoch),
            },
            &FulfillRequest {
                result_summary: "Fix proposed under fixes.".into(),
                ..Default::default()
            },
        )
        .unwrap();

    // Either agent can read the whole exchange.
    let seen = alice.inspect(&InspectRequest::default()).unwrap();
    for item in &seen.contracts {
        let v = serde_json::to_value(item).unwrap();
        println!(
            "{} -> {}: {} [{}]",
            v["requester_agent"], v["target_agent"], v["title"], v["status"]
        );
    }
    println!("counts: {}", serde_json::to_string(&seen.counts).unwrap());
    assert!(alice.check_integrity().unwrap().is_clean());
}
