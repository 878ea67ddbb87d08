//! Rules checked one by one: argument decoding in table order (CT-4, CT-87, CT-95, CT-98, CT-101,
//! CT-104, CT-107, CT-110, CT-114, CT-117), the refusal lists of each tool (CT-97, CT-100, CT-103,
//! CT-106, CT-109, CT-112, CT-116, CT-119), roots and symlinks at verification (CT-30, CT-33, CT-35),
//! operations that read no file (CT-67), detail views (CT-73), and what the crate never does (CT-59,
//! CT-121, CT-123), plus the documented limitations (CT-177).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use shiftwork_contracts::{Contracts, SeededIdSource};
use shiftwork_seams::{MemFs, Op};

use crate::scenarios::{self, T0};
use crate::support::{TestStore, store, store_kinds};

/// One store of the suite with its fixture and facade (threat class "every backend": each rule below
/// that touches the store runs on every store kind, PostgreSQL included when a server is set).
struct World {
    fx: scenarios::Fixture,
    c: Contracts,
    /// Which store, for the messages of a failing assertion.
    #[allow(dead_code)]
    kind: &'static str,
    _store: TestStore,
}

/// A fresh fixture, store and facade for each store kind.
fn worlds() -> impl Iterator<Item = World> {
    store_kinds().into_iter().map(|kind| {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        eprintln!("on {kind}");
        let c = Contracts::builder(s.store.clone())
            .fs(Arc::new(fx.fs.clone()))
            .ids(Arc::new(SeededIdSource::new(1)))
            .config(crate::support::config(false))
            .build();
        World {
            fx,
            c,
            kind,
            _store: s,
        }
    })
}

fn call(c: &Contracts, tool: &str, args: Value) -> Value {
    shiftwork_contracts::args::call(c, tool, args.as_object().unwrap(), &Default::default())
}

fn invalid(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], "INVALID_ARGUMENT", "{answer}");
    answer["error"]["details"]["argument"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The refusal codes each tool may answer (CT-97 … CT-119).
pub fn allowed(tool: &str) -> &'static [&'static str] {
    match tool {
        "dispatch_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "CONTRACT_SCHEMA_INVALID",
            "AGENT_ID_REQUIRED",
            "IDEMPOTENCY_CONFLICT",
            "WORKSPACE_ROOT_INVALID",
            "POINTER_REFUSED",
            "IO_ERROR",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "poll_next_task" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "IO_ERROR",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "extend_ttl" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "CONTRACT_NOT_FOUND",
            "NOT_TARGET_AGENT",
            "EPOCH_REQUIRED",
            "STALE_EPOCH",
            "NOT_CLAIMED",
            "LEASE_EXPIRED",
            "ALREADY_TERMINAL",
            // CT-185: a cancelled contract answers its holder CANCELLED.
            "CANCELLED",
            "EXTEND_LIMIT",
            "LIFETIME_CEILING",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "release_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "CONTRACT_NOT_FOUND",
            "NOT_TARGET_AGENT",
            "EPOCH_REQUIRED",
            "STALE_EPOCH",
            "NOT_CLAIMED",
            "LEASE_EXPIRED",
            "ALREADY_TERMINAL",
            // CT-185: a cancelled contract answers its holder CANCELLED.
            "CANCELLED",
            "RELEASE_LIMIT",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "fail_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "CONTRACT_NOT_FOUND",
            "NOT_TARGET_AGENT",
            "EPOCH_REQUIRED",
            "STALE_EPOCH",
            "NOT_CLAIMED",
            "ALREADY_TERMINAL",
            // CT-185: a cancelled contract answers its holder CANCELLED.
            "CANCELLED",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "fulfill_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "CONTRACT_NOT_FOUND",
            "NOT_TARGET_AGENT",
            "EPOCH_REQUIRED",
            "STALE_EPOCH",
            "NOT_CLAIMED",
            "LEASE_EXPIRED",
            "ALREADY_TERMINAL",
            // CT-185: a cancelled contract answers its holder CANCELLED.
            "CANCELLED",
            "ARTIFACT_REFUSED",
            "RETRY_NEEDED",
            "POINTER_STALE",
            "OUTPUT_SCHEMA_INVALID",
            "SCHEMA_RETRIES_EXHAUSTED",
            // Issue 12 item 11: a validation the regex engine could not decide.
            "CONTRACT_SCHEMA_INVALID",
            "IO_ERROR",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        "verify_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "CONTRACT_NOT_FOUND",
            "IO_ERROR",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        // CT-183, CT-184.
        "cancel_contract" => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "AGENT_ID_REQUIRED",
            "CONTRACT_NOT_FOUND",
            "NOT_REQUESTER",
            "ALREADY_TERMINAL",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
        _ => &[
            "UNKNOWN_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_CURSOR",
            "STORE_BUSY",
            "STORE_UNAVAILABLE",
            "STORE_ERROR",
        ],
    }
}

/// CT-83 and the refusal lists: a refusal's code is one the tool may answer, with exactly the
/// details keys of Appendix B.
pub fn check_refusal(tool: &str, answer: &Value) {
    if answer["ok"] == false {
        let code = answer["error"]["code"].as_str().unwrap();
        assert!(allowed(tool).contains(&code), "{tool} may not answer {code}");
        let known = shiftwork_contracts::RefusalCode::ALL
            .iter()
            .find(|c| c.as_str() == code)
            .unwrap();
        let keys: Vec<&str> = answer["error"]["details"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, known.detail_keys(), "CT-83: details of {code}");
        assert!(answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

#[test]
fn ct87_ct95_arguments_are_checked_in_table_order() {
    for World { c, _store: _s, .. } in worlds() {
        // Several invalid arguments: the first of the table is named.
        let a = call(
            &c,
            "dispatch_contract",
            json!({"exec_ttl_sec": 5, "title": "", "target_agent": "bad name", "workspace_root": 3}),
        );
        assert_eq!(invalid(&a), "target_agent");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "\u{7}", "exec_ttl_sec": 5}),
        );
        assert_eq!(invalid(&a), "title");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "pointers": "x", "task_type": "Bad"}),
        );
        assert_eq!(invalid(&a), "pointers");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "task_type": "Bad", "exec_ttl_sec": 5}),
        );
        assert_eq!(invalid(&a), "task_type");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "context_summary": "x".repeat(8193)}),
        );
        assert_eq!(invalid(&a), "context_summary");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "contract_schema": [], "exec_ttl_sec": 5}),
        );
        assert_eq!(invalid(&a), "contract_schema");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "idempotency_key": "has space"}),
        );
        assert_eq!(invalid(&a), "idempotency_key");
        // The schema is judged after the argument types and bounds, before the identity (CT-61).
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "contract_schema": {"type": 5}}),
        );
        assert_eq!(a["error"]["code"], "CONTRACT_SCHEMA_INVALID");
        assert!(a["error"]["details"]["validation_errors"].is_array());
        let a = call(
            &c,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "t", "workspace_root": "/w"}),
        );
        assert_eq!(a["error"]["code"], "AGENT_ID_REQUIRED");
    }
}

#[test]
fn ct98_ct101_ct104_ct107_ct110_ct114_ct117_holder_and_read_arguments() {
    for World { c, _store: _s, .. } in worlds() {
        assert_eq!(
            invalid(&call(&c, "poll_next_task", json!({"agent_id": 7}))),
            "agent_id"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "extend_ttl",
                json!({"contract_id": "", "claim_epoch": 0})
            )),
            "contract_id"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "extend_ttl",
                json!({"contract_id": "x", "claim_epoch": 0})
            )),
            "claim_epoch"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "extend_ttl",
                json!({"contract_id": "x", "claim_epoch": 9_007_199_254_740_992u64})
            )),
            "claim_epoch"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "extend_ttl",
                json!({"contract_id": "x", "claim_epoch": 1.5})
            )),
            "claim_epoch"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "extend_ttl",
                json!({"contract_id": "x", "agent_id": "no way"})
            )),
            "agent_id"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "release_contract",
                json!({"contract_id": "x", "reason": "r".repeat(1001), "claim_epoch": 0})
            )),
            "reason"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "fail_contract",
                json!({"contract_id": "x", "reason": "  "})
            )),
            "reason"
        );
        assert_eq!(
            invalid(&call(&c, "fail_contract", json!({"contract_id": "x"}))),
            "reason"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "fulfill_contract",
                json!({"contract_id": "x", "result_summary": " ", "claim_epoch": 0})
            )),
            "result_summary"
        );
        let big = json!({"blob": "x".repeat(33 * 1024)});
        assert_eq!(
            invalid(&call(
                &c,
                "fulfill_contract",
                json!({"contract_id": "x", "result_summary": "r", "structured_output": big})
            )),
            "structured_output"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "fulfill_contract",
                json!({"contract_id": "x", "result_summary": "r", "artifacts_pointers": [1]})
            )),
            "artifacts_pointers"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "verify_contract",
                json!({"contract_id": "x", "agent_id": "a", "claim_epoch": -1})
            )),
            "claim_epoch"
        );
        assert_eq!(
            invalid(&call(
                &c,
                "inspect_mesh_state",
                json!({"status": ["CLAIMED", "CLAIMED"]})
            )),
            "status"
        );
        assert_eq!(
            invalid(&call(&c, "inspect_mesh_state", json!({"status": "DONE"}))),
            "status"
        );
        assert_eq!(
            invalid(&call(&c, "inspect_mesh_state", json!({"limit": 51}))),
            "limit"
        );
        // CT-18: ids are lowercased before lookup; an unknown one is CONTRACT_NOT_FOUND.
        let a = call(&c, "extend_ttl", json!({"contract_id": "ABC", "agent_id": "bob"}));
        assert_eq!(a["error"]["code"], "CONTRACT_NOT_FOUND");
        assert_eq!(a["error"]["details"]["contract_id"], "abc");
    }
}

#[test]
fn ct4_null_arguments_are_absent_and_every_field_is_present() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let a = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w",
               "pointers": null, "task_type": null, "context_summary": null, "contract_schema": null,
               "exec_ttl_sec": null, "queue_ttl_sec": null, "idempotency_key": null}),
        );
        assert_eq!(a["ok"], true, "{a}");
        assert_eq!(
            (a["exec_ttl_sec"].clone(), a["pointers"].clone()),
            (json!(1800), json!([]))
        );
        let d = call(&c, "inspect_mesh_state", json!({"contract_id": a["contract_id"]}));
        let item = d["contracts"][0].as_object().unwrap();
        for key in [
            "claimed_at",
            "expires_at",
            "completed_at",
            "end_reason",
            "dirty_files",
            "fail_reason",
            "result_summary",
            "structured_output",
            "artifacts_pointers",
            "salvaged_result",
            "idempotency_key",
            "contract_schema",
        ] {
            assert_eq!(
                item.get(key),
                Some(&Value::Null),
                "CT-4: {key} is present and null"
            );
        }
    }
}

#[test]
fn ct97_to_ct119_every_tool_refuses_only_with_its_codes() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        for (tool, args) in [
            (
                "dispatch_contract",
                json!({"target_agent": "bob", "title": "t", "workspace_root": "/nope", "requester_agent": "a"}),
            ),
            (
                "dispatch_contract",
                json!({"target_agent": "bob", "title": "t", "workspace_root": "/w", "requester_agent": "a", "pointers": [".env"]}),
            ),
            ("poll_next_task", json!({})),
            ("extend_ttl", json!({"contract_id": "x", "agent_id": "bob"})),
            ("release_contract", json!({"contract_id": "x", "agent_id": "bob"})),
            (
                "fail_contract",
                json!({"contract_id": "x", "agent_id": "bob", "reason": "r"}),
            ),
            (
                "fulfill_contract",
                json!({"contract_id": "x", "agent_id": "bob", "result_summary": "r"}),
            ),
            ("verify_contract", json!({"contract_id": "x"})),
            ("inspect_mesh_state", json!({"cursor": "zzz"})),
        ] {
            let a = call(&c, tool, args);
            assert_eq!(a["ok"], false);
            check_refusal(tool, &a);
        }
        let _ = fx;
    }
}

#[test]
fn ct30_ct33_ct35_roots_and_symlinks_at_verification() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        // CT-33: a symlink inside the root whose target is sensitive is refused by its target's name.
        fx.fs.symlink(".env", "/w/notes.txt");
        let a = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "pointers": ["notes.txt"]}),
        );
        assert_eq!(
            a["error"]["details"],
            json!({"path": "notes.txt", "reason": "SENSITIVE_FILE", "pattern": ".env"})
        );
        // CT-35: a symlink to a regular file inside the root keeps the caller's path.
        let a = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "pointers": ["link_in", "README.md"]}),
        );
        assert_eq!(a["pointers"][0]["path"], "link_in");
        let id = a["contract_id"].as_str().unwrap().to_owned();
        // The link now points at a secret: PATH_REFUSED (CT-40).
        use shiftwork_seams::Fs;
        fx.fs.remove_file(Path::new("/w/link_in")).unwrap();
        fx.fs.symlink(".env", "/w/link_in");
        let v = call(
            &c,
            "verify_contract",
            json!({"contract_id": id, "agent_id": "bob"}),
        );
        assert_eq!(v["dirty_files"][0]["reason"], "PATH_REFUSED", "{v}");
        assert_eq!(v["dirty_files"][0]["actual_size"], Value::Null);
        // CT-30: the root is canonicalised afresh; when it is gone every pointer is FILE_MISSING.
        fx.fs.remove_file(Path::new("/w/link_in")).unwrap();
        for f in [
            "/w/README.md",
            "/w/src/lib.rs",
            "/w/.env",
            "/w/link_out",
            "/w/notes.txt",
        ] {
            fx.fs.remove_file(Path::new(f)).unwrap();
        }
        let moved = MemFs::new();
        let c2 = Contracts::builder(c.store().clone())
            .fs(Arc::new(moved))
            .ids(Arc::new(SeededIdSource::new(2)))
            .config(crate::support::config(false))
            .build();
        let v = call(
            &c2,
            "verify_contract",
            json!({"contract_id": id, "agent_id": "bob"}),
        );
        let reasons: Vec<&str> = v["dirty_files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["reason"].as_str().unwrap())
            .collect();
        assert_eq!(reasons, ["FILE_MISSING", "FILE_MISSING"], "{v}");
    }
}

#[test]
fn ct67_extend_release_and_fail_read_no_files() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        let a = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "pointers": ["src/lib.rs"]}),
        );
        let id = a["contract_id"].as_str().unwrap().to_owned();
        call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        let reads = (
            fx.fs.count(Op::Read),
            fx.fs.count(Op::Stat),
            fx.fs.count(Op::Resolve),
        );
        call(
            &c,
            "extend_ttl",
            json!({"contract_id": id, "claim_epoch": 1, "agent_id": "bob"}),
        );
        call(
            &c,
            "release_contract",
            json!({"contract_id": id, "claim_epoch": 1, "agent_id": "bob"}),
        );
        call(
            &c,
            "fail_contract",
            json!({"contract_id": id, "claim_epoch": 1, "agent_id": "bob", "reason": "x"}),
        );
        assert_eq!(
            (
                fx.fs.count(Op::Read),
                fx.fs.count(Op::Stat),
                fx.fs.count(Op::Resolve)
            ),
            reads
        );
    }
}

#[test]
fn ct73_detail_view_and_unknown_ids() {
    for World { c, _store: _s, .. } in worlds() {
        let a = call(
            &c,
            "inspect_mesh_state",
            json!({"contract_id": "0196f3a0-0000-7000-8000-000000000000"}),
        );
        assert_eq!(
            (
                a["ok"].clone(),
                a["total_returned"].clone(),
                a["contracts"].clone()
            ),
            (json!(true), json!(0), json!([]))
        );
        let d = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "context_summary": "ctx"}),
        );
        let id = d["contract_id"].as_str().unwrap().to_uppercase();
        let a = call(&c, "inspect_mesh_state", json!({"contract_id": id}));
        assert_eq!(
            a["contracts"][0]["context_summary"], "ctx",
            "detail view, id matched case-insensitively"
        );
        let list = call(&c, "inspect_mesh_state", json!({}));
        assert!(
            list["contracts"][0].get("context_summary").is_none(),
            "summary view without detail fields"
        );
    }
}

#[test]
fn ct75_detail_bounded_to_64_kib() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let line = "l".repeat(200);
        let artifacts: Vec<String> = (0..32).map(|i| format!("{}{i:02}", "a".repeat(400))).collect();
        for a in &artifacts {
            fx.fs
                .write_file(format!("/w/{a}"), format!("{line}\n{line}\n").as_bytes());
        }
        let schema = json!({"type": "object", "description": "d".repeat(15 * 1024)});
        let d = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w",
                                                  "contract_schema": schema, "context_summary": "c".repeat(8000)}),
        );
        let id = d["contract_id"].as_str().unwrap().to_owned();
        call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        let r = call(
            &c,
            "fulfill_contract",
            json!({"contract_id": id, "agent_id": "bob", "claim_epoch": 1, "result_summary": "s".repeat(8000),
                                                 "structured_output": {"blob": "o".repeat(31 * 1024)}, "artifacts_pointers": artifacts}),
        );
        assert_eq!(r["status"], "COMPLETED", "{r}");
        let a = call(&c, "inspect_mesh_state", json!({"contract_id": id}));
        assert!(
            serde_json::to_vec(&a).unwrap().len() <= 64 * 1024,
            "CT-75: the detail response stays within 64 KiB"
        );
        let item = &a["contracts"][0];
        assert_eq!(
            item["omitted_fields"],
            json!(["structured_output"]),
            "fields left out in CT-75 order, only as many as needed"
        );
        assert_eq!(item["structured_output"], Value::Null);
        assert_eq!(item["contract_schema"]["type"], "object");
        let full = c
            .inspect(&shiftwork_contracts::InspectRequest {
                contract_id: Some(crate::support::cid(&id)),
                unbounded: true,
                ..Default::default()
            })
            .unwrap();
        let full = serde_json::to_value(&full).unwrap();
        assert!(serde_json::to_vec(&full).unwrap().len() > 64 * 1024);
        assert_eq!(
            full["contracts"][0]["omitted_fields"],
            json!([]),
            "the library gives embedders the full record"
        );
    }
}

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn ct59_ct121_ct123_the_crate_reads_no_clock_no_fs_and_names_no_mcp() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for dep in ["tokio", "rmcp", "schemars"] {
        assert!(
            !manifest.contains(dep),
            "CT-59: the crate must not depend on {dep}"
        );
    }
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    for (name, text) in files {
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = code;
        for forbidden in [
            "SystemTime::now",
            "Utc::now",
            "Instant::now",
            "std::fs",
            "std::env",
            "tokio",
            "rmcp",
        ] {
            // The SQLite store opens its file through rusqlite, never through std::fs.
            assert!(!text.contains(forbidden), "{name} uses {forbidden}");
        }
    }
}

#[test]
fn ct177_limitations_are_documented_for_users() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    for phrase in [
        "self-declared",
        "claim_epoch",
        "power loss",
        "symlink swapped",
        "1 GiB",
        // CT-177 item 6 is superseded by §13: the README says who may cancel and what is redelivered.
        "cancel_contract",
        "max_deliveries",
        "wall-clock",
        "jsonschema",
    ] {
        assert!(
            readme.contains(phrase),
            "README must state the limitation: {phrase}"
        );
    }
}

fn dispatch_n(c: &Contracts, n: usize, title: &str) -> Vec<String> {
    (0..n)
        .map(|_| {
            let d = call(c, "dispatch_contract", json!({"requester_agent": "alice", "target_agent": "bob", "title": title, "workspace_root": "/w"}));
            d["contract_id"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn ct74_ct75_list_pages_are_bounded_stable_and_skip_purged() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let ids = dispatch_n(&c, 50, &"T".repeat(200));
        let p1 = call(&c, "inspect_mesh_state", json!({"limit": 50}));
        let size = serde_json::to_vec(&p1).unwrap().len();
        assert!(size <= 32 * 1024, "CT-75: {size} bytes");
        let shown = p1["total_returned"].as_u64().unwrap() as usize;
        assert!(shown < 50, "the page ended early");
        let cursor = p1["next_cursor"].as_str().unwrap().to_owned();
        // CT-74: contracts dispatched after the first page never appear on later pages.
        dispatch_n(&c, 3, "late");
        let p2 = call(&c, "inspect_mesh_state", json!({"limit": 50, "cursor": cursor}));
        let titles: Vec<&str> = p2["contracts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap())
            .collect();
        assert!(!titles.contains(&"late"));
        assert_eq!(p2["contracts"][0]["contract_id"], ids[49 - shown].as_str());
        // Cursors decode to `v1.<seq>.<tag>`; anything else is INVALID_CURSOR.
        let text =
            String::from_utf8(shiftwork_contracts::canonical::base64url_decode(&cursor).unwrap()).unwrap();
        assert!(text.starts_with("v1."), "{text}");
        let forged = shiftwork_contracts::canonical::base64url(b"v1.5.0000000000000000");
        assert_eq!(
            call(&c, "inspect_mesh_state", json!({"cursor": forged}))["error"]["code"],
            "INVALID_CURSOR"
        );
    }
}

#[test]
fn ct78_purge_deletes_terminal_records_and_frees_keys() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let d = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "idempotency_key": "k"}),
        );
        let live = dispatch_n(&c, 1, "live");
        let id = d["contract_id"].as_str().unwrap().to_owned();
        call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        call(
            &c,
            "fail_contract",
            json!({"contract_id": id, "agent_id": "bob", "claim_epoch": 1, "reason": "x"}),
        );
        assert_eq!(
            c.purge_terminal(crate::support::instant(T0)).unwrap(),
            0,
            "completed_at < completed_before is strict"
        );
        assert_eq!(c.purge_terminal(crate::support::instant(T0 + 1)).unwrap(), 1);
        assert!(c.store().get(&crate::support::cid(&id)).unwrap().is_none());
        assert!(
            c.store().get(&crate::support::cid(&live[0])).unwrap().is_some(),
            "live records are never purged"
        );
        let again = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w", "idempotency_key": "k"}),
        );
        assert_eq!(again["idempotent_replay"], false, "the key is free again");
        assert_ne!(again["contract_id"], d["contract_id"]);
    }
}

#[test]
fn ct26_history_entries_chain_and_are_capped() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let id = dispatch_n(&c, 1, "t").remove(0);
        let long = "r".repeat(1000);
        for k in 1..=3 {
            call(&c, "poll_next_task", json!({"agent_id": "bob"}));
            call(
                &c,
                "release_contract",
                json!({"contract_id": id, "agent_id": "bob", "claim_epoch": k, "reason": long}),
            );
        }
        let e = c
            .store()
            .get(&crate::support::cid(&id))
            .unwrap()
            .unwrap()
            .error_reason
            .unwrap();
        assert_eq!(e.chars().count(), 2000);
        assert!(e.ends_with('…'));
        assert!(e.starts_with(&format!(
            "RELEASED_BY_HOLDER: {long} | prev: RELEASED_BY_HOLDER: "
        )));
        let summary = call(&c, "inspect_mesh_state", json!({}));
        let shown = summary["contracts"][0]["error_reason"].as_str().unwrap();
        assert_eq!(
            shown.chars().count(),
            200,
            "summaries cut error_reason to 200 characters"
        );
        assert!(shown.ends_with('…'));
    }
}

#[test]
fn ct5_characters_are_scalar_values_and_byte_limits_count_utf8() {
    for World { c, _store: _s, .. } in worlds() {
        let base = json!({"requester_agent": "alice", "target_agent": "bob", "workspace_root": "/w"});
        let with = |extra: Value| {
            let mut a = base.clone();
            for (k, v) in extra.as_object().unwrap() {
                a[k] = v.clone();
            }
            call(&c, "dispatch_contract", a)
        };
        // 200 two-byte characters are 200 characters: accepted; 201 are not.
        assert_eq!(with(json!({"title": "é".repeat(200)}))["ok"], true);
        assert_eq!(invalid(&with(json!({"title": "é".repeat(201)}))), "title");
        // 4,096 two-byte characters are 8,192 bytes: accepted; one more byte is not.
        assert_eq!(
            with(json!({"title": "t", "context_summary": "é".repeat(4096)}))["ok"],
            true
        );
        assert_eq!(
            invalid(&with(
                json!({"title": "t", "context_summary": format!("{}x", "é".repeat(4096))})
            )),
            "context_summary"
        );
    }
}

/// CT-136, CT-137: a new file gets the application id, the schema version (3: CT-191's columns, then
/// the commit counter of issue 34 item 2) and WAL; a file with another
/// application id or a newer version is refused with STORE_UNAVAILABLE and left untouched.
#[test]
fn ct136_ct137_sqlite_header_and_refused_files() {
    use shiftwork_contracts::{SqliteOptions, SqliteStore, StoreError};
    let dir = tempfile::tempdir().unwrap();
    let clock: Arc<dyn shiftwork_seams::Clock> = Arc::new(shiftwork_seams::SystemClock::new());
    let path = dir.path().join("ok.db");
    drop(
        SqliteStore::open(
            &path,
            SqliteOptions::default(),
            clock.clone(),
            &shiftwork_seams::OsFs,
        )
        .unwrap(),
    );
    let raw = rusqlite::Connection::open(&path).unwrap();
    let header: (i64, i64, String) = raw
        .query_row("SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), (SELECT journal_mode FROM pragma_journal_mode)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    // CT-136, CT-191: schema version 2 since §13 added its columns, 3 since the commit counter.
    assert_eq!(header, (0x5357_4354, 3, String::from("wal")));
    drop(raw);
    for (name, setup) in [
        ("other.db", "PRAGMA application_id = 42; CREATE TABLE notes (x);"),
        (
            "newer.db",
            "PRAGMA application_id = 1398227796; PRAGMA user_version = 3; CREATE TABLE contracts (x);",
        ),
    ] {
        let p = dir.path().join(name);
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(setup)
            .unwrap();
        let before = std::fs::read(&p).unwrap();
        match SqliteStore::open(
            &p,
            SqliteOptions::default(),
            clock.clone(),
            &shiftwork_seams::OsFs,
        ) {
            Err(StoreError::Unavailable { reason: why, .. }) => {
                assert!(!why.contains(dir.path().to_str().unwrap()), "no path: {why}")
            }
            other => panic!("{name}: expected Unavailable, got {:?}", other.map(|_| ())),
        }
        assert_eq!(std::fs::read(&p).unwrap(), before, "{name} is left untouched");
    }
}

/// CT-58: the facade is `Send + Sync` and never panics on the inputs the fuzz target feeds it.
#[test]
fn ct58_facade_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Contracts>();
    assert_send_sync::<shiftwork_contracts::MemoryStore>();
    assert_send_sync::<shiftwork_contracts::SqliteStore>();
}

/// CT-65, CT-99: one poll closes at most 8 stale contracts, then stops with the exact message; the
/// next poll goes on.
#[test]
fn ct65_ct99_a_poll_stops_after_eight_stale_contracts() {
    for World {
        fx, c, _store: _s, ..
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        for i in 0..10 {
            fx.fs.write_file(format!("/w/f{i}.rs"), b"x\n");
            let d = call(
                &c,
                "dispatch_contract",
                json!({"requester_agent": "alice", "target_agent": "bob", "title": format!("t{i}"), "workspace_root": "/w", "pointers": [format!("f{i}.rs")]}),
            );
            assert_eq!(d["ok"], true);
        }
        use shiftwork_seams::Fs;
        for i in 0..9 {
            fx.fs.remove_file(Path::new(&format!("/w/f{i}.rs"))).unwrap();
        }
        let first = call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        assert_eq!(first["has_task"], false);
        assert_eq!(
            first["message"],
            "Closed 8 contracts whose files changed for agent \"bob\"; call poll_next_task again"
        );
        assert_eq!(first["skipped_stale"].as_array().unwrap().len(), 8);
        let second = call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        assert_eq!(second["has_task"], true);
        assert_eq!(second["contract"]["title"], "t9");
        assert_eq!(second["skipped_stale"].as_array().unwrap().len(), 1);
        assert_eq!(second["skipped_stale"][0]["title"], "t8");
    }
}

/// Issue 11 item 4: library messages name no command-line flag and no environment variable (the
/// adapter adds that hint where it belongs). Every string literal of the crate's code is checked.
#[test]
fn issue11_library_messages_name_no_flag_or_environment_variable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for (name, text) in files {
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // The string literals of the line.
            for (i, literal) in line.split('"').enumerate() {
                if i % 2 == 0 {
                    continue;
                }
                let flag = literal
                    .split_whitespace()
                    .any(|w| w.starts_with("--") && w.len() > 2 && w.as_bytes()[2].is_ascii_lowercase());
                if flag || literal.contains("AGENT_NAME") || literal.contains("SHIFTWORK_") {
                    found.push(format!("{name}:{}: \"{literal}\"", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library messages naming a flag or variable:\n{}",
        found.join("\n")
    );
}

/// Issue 27 (the class of item 6: every writer checks its readers' limits first): a store accepts
/// only what every store can keep and give back. PostgreSQL text and JSON cannot hold the NUL
/// character, so NUL is refused in every stored text — reasons, summaries, and the strings and keys
/// of `structured_output` and `contract_schema` — with the same refusal on every store, and nothing
/// is written; what is accepted reads back as it was given.
#[test]
fn issue27_every_store_keeps_what_it_accepts() {
    for World {
        fx,
        c,
        kind,
        _store: _s,
    } in worlds()
    {
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let base =
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w"});
        let with = |extra: Value| {
            let mut a = base.clone();
            for (k, v) in extra.as_object().unwrap() {
                a[k] = v.clone();
            }
            a
        };
        for (at, extra) in [
            (
                "/description",
                json!({"contract_schema": {"type": "object", "description": "a\u{0}b"}}),
            ),
            (
                "/properties/a\u{0}",
                json!({"contract_schema": {"type": "object", "properties": {"a\u{0}": {}}}}),
            ),
        ] {
            let a = call(&c, "dispatch_contract", with(extra));
            assert_eq!(a["error"]["code"], "CONTRACT_SCHEMA_INVALID", "{kind}: {a}");
            assert_eq!(
                a["error"]["details"]["validation_errors"][0]["instance_path"], at,
                "{kind}: {a}"
            );
        }
        let d = call(
            &c,
            "dispatch_contract",
            with(json!({"context_summary": "é\t\u{1F600}"})),
        );
        let id = d["contract_id"].as_str().unwrap().to_owned();
        call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        let holder = json!({"contract_id": id, "agent_id": "bob", "claim_epoch": 1});
        let with_holder = |extra: Value| {
            let mut a = holder.clone();
            for (k, v) in extra.as_object().unwrap() {
                a[k] = v.clone();
            }
            a
        };
        for (tool, argument, extra) in [
            ("release_contract", "reason", json!({"reason": "a\u{0}b"})),
            ("fail_contract", "reason", json!({"reason": "a\u{0}b"})),
            (
                "fulfill_contract",
                "result_summary",
                json!({"result_summary": "a\u{0}b"}),
            ),
            (
                "fulfill_contract",
                "structured_output",
                json!({"result_summary": "ok", "structured_output": {"v": ["x\u{0}"]}}),
            ),
            (
                "fulfill_contract",
                "structured_output",
                json!({"result_summary": "ok", "structured_output": {"k\u{0}": 1}}),
            ),
        ] {
            let a = call(&c, tool, with_holder(extra));
            assert_eq!(a["error"]["code"], "INVALID_ARGUMENT", "{kind} {tool}: {a}");
            assert_eq!(a["error"]["details"]["argument"], argument, "{kind} {tool}: {a}");
        }
        let a = call(
            &c,
            "cancel_contract",
            json!({"contract_id": id, "agent_id": "alice", "reason": "a\u{0}b"}),
        );
        assert_eq!(a["error"]["details"]["argument"], "reason", "{kind}: {a}");
        let record = c.store().get(&crate::support::cid(&id)).unwrap().unwrap();
        assert_eq!(
            record.status,
            shiftwork_contracts::Status::Claimed,
            "{kind}: nothing written"
        );
        let done = call(
            &c,
            "fulfill_contract",
            with_holder(json!({"result_summary": "fine ✓", "structured_output": {"k": "\u{7f}é\u{1F600}"}})),
        );
        assert_eq!(done["ok"], true, "{kind}: {done}");
        let record = c.store().get(&crate::support::cid(&id)).unwrap().unwrap();
        assert_eq!(record.context_summary, "é\t\u{1F600}", "{kind}");
        assert_eq!(record.result_summary.as_deref(), Some("fine ✓"), "{kind}");
        assert_eq!(
            record.structured_output,
            json!({"k": "\u{7f}é\u{1F600}"}).as_object().cloned(),
            "{kind}"
        );
    }
}
