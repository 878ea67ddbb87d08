//! The `inputSchema` (CT-85) and `outputSchema` (CT-84) of the eight contracts tools.
//!
//! Output schemas are `{"type": "object", "oneOf": [...]}` with one closed branch per success shape
//! and one for the refusal shape; nested shapes are given by type only, to keep the group's
//! `tools/list` under the 10,000 bytes of MC-11.

use serde_json::{Map, Value, json};

const MAX_SAFE: u64 = (1 << 53) - 1;

/// An agent id; its grammar (CT-17) is checked by the server and named in the refusal.
fn agent() -> Value {
    json!({"type": "string"})
}

fn id() -> Value {
    json!({"type": "string", "maxLength": 64})
}

fn epoch() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": MAX_SAFE})
}

fn closed(props: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let properties: Map<String, Value> = props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema["additionalProperties"] = json!(false);
    schema
}

/// The input schema of `tool` (arguments in the order of §7.2).
pub fn input(tool: &str) -> Value {
    let statuses = [
        "SUBMITTED",
        "CLAIMED",
        "COMPLETED",
        "FAILED",
        "TIMED_OUT",
        "POINTER_STALE",
    ];
    match tool {
        "dispatch_contract" => closed(
            vec![
                ("target_agent", agent()),
                ("title", json!({"type": "string", "maxLength": 200})),
                ("workspace_root", json!({"type": "string"})),
                ("pointers", json!({"type": "array", "items": {"type": "string"}})),
                (
                    "task_type",
                    json!({"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$", "default": "review"}),
                ),
                ("context_summary", json!({"type": "string"})),
                ("contract_schema", json!({"type": "object"})),
                (
                    "exec_ttl_sec",
                    json!({"type": "integer", "minimum": 60, "maximum": 86400, "default": 1800}),
                ),
                (
                    "queue_ttl_sec",
                    json!({"type": "integer", "minimum": 60, "maximum": 604800, "default": 14400}),
                ),
                ("idempotency_key", json!({"type": "string", "maxLength": 128})),
                ("requester_agent", agent()),
            ],
            &["target_agent", "title", "workspace_root"],
        ),
        "poll_next_task" => closed(vec![("agent_id", agent())], &[]),
        "extend_ttl" => closed(
            vec![
                ("contract_id", id()),
                ("claim_epoch", epoch()),
                ("agent_id", agent()),
            ],
            &["contract_id"],
        ),
        "release_contract" => closed(
            vec![
                ("contract_id", id()),
                ("reason", json!({"type": "string", "maxLength": 1000})),
                ("claim_epoch", epoch()),
                ("agent_id", agent()),
            ],
            &["contract_id"],
        ),
        "fail_contract" => closed(
            vec![
                ("contract_id", id()),
                (
                    "reason",
                    json!({"type": "string", "minLength": 1, "maxLength": 1000}),
                ),
                ("claim_epoch", epoch()),
                ("agent_id", agent()),
            ],
            &["contract_id", "reason"],
        ),
        "fulfill_contract" => closed(
            vec![
                ("contract_id", id()),
                ("result_summary", json!({"type": "string", "minLength": 1})),
                ("structured_output", json!({"type": "object"})),
                (
                    "artifacts_pointers",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
                ("claim_epoch", epoch()),
                ("agent_id", agent()),
            ],
            &["contract_id", "result_summary"],
        ),
        "verify_contract" => closed(
            vec![
                ("contract_id", id()),
                ("agent_id", agent()),
                ("claim_epoch", epoch()),
            ],
            &["contract_id"],
        ),
        _ => closed(
            vec![
                ("target_agent", agent()),
                ("requester_agent", agent()),
                ("status", statuses_or_sets(&statuses)),
                ("contract_id", id()),
                (
                    "limit",
                    json!({"type": "integer", "minimum": 1, "maximum": 50, "default": 20}),
                ),
                ("cursor", json!({"type": "string"})),
            ],
            &[],
        ),
    }
}

/// The `status` filter: one status, or an array of 1–6 distinct statuses (`pattern` applies to the
/// string form, `items` and the counts to the array form).
fn statuses_or_sets(statuses: &[&str]) -> Value {
    let pattern = format!("^({})$", statuses.join("|"));
    json!({"anyOf": [
        {"type": "string", "pattern": pattern},
        {"type": "array", "items": {"type": "string", "pattern": pattern}, "minItems": 1, "maxItems": 6, "uniqueItems": true},
    ]})
}

/// The schema of an output field: the constants `T`/`F` (true/false) of `has_task` that tell the
/// poll branches apart; every other field (`ok` included: a refusal is told apart by its required
/// `error`, which no success branch allows) is named without a type, which keeps the branch closed within the
/// 10,000 bytes MC-11 allows the group (the shapes are those of contracts.md §7).
fn ty(code: &str) -> Value {
    match code {
        "T" => json!({"const": true}),
        "ok" => json!({}),
        "F" => json!({"const": false}),
        _ => json!({}),
    }
}

fn branch(fields: &[(&str, &str)]) -> Value {
    let properties: Map<String, Value> = fields.iter().map(|(k, t)| ((*k).to_owned(), ty(t))).collect();
    json!({"properties": properties, "additionalProperties": false})
}

fn refusal() -> Value {
    json!({"required": ["error"], "properties": {"ok": {"const": false}, "error": {}}, "additionalProperties": false})
}

/// The output schema of `tool`.
pub fn output(tool: &str) -> Value {
    let successes: Vec<Value> = match tool {
        "dispatch_contract" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("idempotent_replay", "b"),
            ("requester_agent", "s"),
            ("target_agent", "s"),
            ("created_at", "i"),
            ("queue_expires_at", "i"),
            ("lifetime_ends_at", "i"),
            ("exec_ttl_sec", "i"),
            ("queue_ttl_sec", "i"),
            ("pointers", "a"),
            ("warnings", "a"),
        ])],
        "poll_next_task" => vec![
            branch(&[
                ("ok", "ok"),
                ("has_task", "T"),
                ("status", "s"),
                ("contract", "o"),
                ("skipped_stale", "a"),
            ]),
            branch(&[
                ("ok", "ok"),
                ("has_task", "F"),
                ("message", "s"),
                ("skipped_stale", "a"),
            ]),
        ],
        "extend_ttl" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("claim_epoch", "i"),
            ("claimed_at", "i"),
            ("expires_at", "i"),
            ("extend_count", "i"),
            ("extends_left", "i"),
            ("lifetime_ends_at", "i"),
            ("warnings", "a"),
        ])],
        "release_contract" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("release_count", "i"),
            ("releases_left", "i"),
            ("queued_at", "i"),
            ("queue_expires_at", "i"),
            ("message", "s"),
            ("warnings", "a"),
        ])],
        "fail_contract" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("completed_at", "i"),
            ("message", "s"),
            ("warnings", "a"),
        ])],
        "fulfill_contract" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("completed_at", "i"),
            ("artifacts_pointers", "a"),
            ("message", "s"),
            ("warnings", "a"),
        ])],
        "verify_contract" => vec![branch(&[
            ("ok", "ok"),
            ("contract_id", "s"),
            ("status", "s"),
            ("is_logically_expired", "b"),
            ("valid", "b"),
            ("fulfillable", "b"),
            ("dirty_files", "a"),
            ("checked", "i"),
            ("toctou_strikes_left", "i"),
            ("now", "i"),
            ("contract", "o"),
            ("warnings", "a"),
        ])],
        _ => vec![branch(&[
            ("ok", "ok"),
            ("total_returned", "i"),
            ("contracts", "a"),
            ("next_cursor", "s?"),
            ("counts", "o"),
            ("now", "i"),
        ])],
    };
    let mut one_of = successes;
    one_of.push(refusal());
    json!({"type": "object", "oneOf": one_of})
}
