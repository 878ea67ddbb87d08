//! The `inputSchema` (CT-85) and `outputSchema` (CT-84) of the contracts tools.
//!
//! Input schemas are derived from the crate's argument tables (`shiftwork_contracts::args::TOOLS`,
//! whose bounds are the constants of `shiftwork_contracts::limits`): no limit is written here a second
//! time. Output schemas are `{"type": "object", "oneOf": [...]}` with one closed branch per success
//! shape and one for the refusal shape; nested shapes are given by name only, to keep the group's
//! `tools/list` under the 10,000 bytes of MC-11.

use serde_json::{Map, Value, json};
use shiftwork_contracts::Status;
use shiftwork_contracts::args::{Arg, Fallback, Kind, Length, Tool};

/// The schema of one argument (its JSON type and the bounds of its table row).
fn property(arg: &Arg) -> Value {
    let mut p = match arg.kind {
        // An agent id's grammar (CT-17) is checked by the server and named in the refusal.
        Kind::Agent => json!({"type": "string"}),
        Kind::ContractId => json!({"type": "string", "maxLength": 64}),
        Kind::Text { min, max } => {
            let mut p = json!({"type": "string"});
            if min > 0 {
                p["minLength"] = json!(min);
            }
            // JSON Schema counts characters; a byte bound (CT-5) is the server's to check.
            if let Length::Chars(n) = max {
                p["maxLength"] = json!(n);
            }
            p
        }
        Kind::Pattern(pattern) => json!({"type": "string", "pattern": pattern}),
        Kind::Integer { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Kind::Boolean => json!({"type": "boolean"}),
        Kind::Paths => json!({"type": "array", "items": {"type": "string"}}),
        Kind::Object => json!({"type": "object"}),
        Kind::Statuses => statuses_or_sets(),
    };
    match arg.default {
        Fallback::Integer(n) => p["default"] = json!(n),
        Fallback::Text(t) => p["default"] = json!(t),
        Fallback::Boolean(b) => p["default"] = json!(b),
        Fallback::None | Fallback::DefaultAgent => {}
    }
    p
}

/// The input schema of `tool`: a closed object with the arguments in table order (CT-85).
pub fn input(tool: &Tool) -> Value {
    let properties: Map<String, Value> = tool
        .args
        .iter()
        .map(|a| (a.name.to_owned(), property(a)))
        .collect();
    let required: Vec<&str> = tool.args.iter().filter(|a| a.required).map(|a| a.name).collect();
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema["additionalProperties"] = json!(false);
    schema
}

/// The `status` filter: one status, or an array of 1–6 distinct statuses.
fn statuses_or_sets() -> Value {
    let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    json!({"anyOf": [
        {"type": "string", "enum": names},
        {"type": "array", "items": {"type": "string", "enum": names}, "minItems": 1, "maxItems": Status::ALL.len(), "uniqueItems": true},
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
