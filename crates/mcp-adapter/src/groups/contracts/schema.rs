//! The `inputSchema` and `outputSchema` of the contracts tools.
//!
//! Input schemas are derived from the crate's argument tables (`shiftwork_contracts::args::TOOLS`,
//! whose bounds are the constants of `shiftwork_contracts::limits`): no limit is written here a second
//! time. Output schemas are `{"type": "object", "oneOf": [...]}` with one closed branch per success
//! shape and one for the refusal shape; nested shapes are given by name only, to keep the group's
//! `tools/list` under 10,000 bytes.

use serde_json::{Map, Value, json};
use shiftwork_contracts::args::{Arg, Fallback, Kind, Length, Tool};

/// The largest integer a schema states as a bound: beyond it (the epochs' 2^53 − 1) every JSON reader
/// loses precision anyway, and the server checks it.
const STATED_MAXIMUM: i64 = 1 << 32;

/// The schema of one argument: its JSON type and the bounds of its table row that a client can act
/// on. The server checks every rule again and names the argument; to keep the group's
/// `tools/list` within its 10,000 bytes, lower bounds of one character and the 64 characters of a contract id
/// (a value the client copies from an answer) are left to it.
fn property(arg: &Arg) -> Value {
    let mut p = match arg.kind {
        // An agent id's grammar (CT-17) is checked by the server and named in the refusal.
        Kind::Agent | Kind::ContractId => json!({"type": "string"}),
        Kind::Text { min: _, max } => {
            let mut p = json!({"type": "string"});
            // JSON Schema counts characters; a byte bound (CT-5) is the server's to check.
            if let Length::Chars(n) = max {
                p["maxLength"] = json!(n);
            }
            p
        }
        Kind::Pattern(pattern) => json!({"type": "string", "pattern": pattern}),
        Kind::Integer { min, max } => {
            let mut p = json!({"type": "integer", "minimum": min});
            if max <= STATED_MAXIMUM {
                p["maximum"] = json!(max);
            }
            p
        }
        Kind::Boolean => json!({"type": "boolean"}),
        Kind::Paths => json!({"type": "array", "items": {"type": "string"}}),
        Kind::Object => json!({"type": "object"}),
        Kind::Statuses => statuses_or_sets(),
    };
    // The defaults of §7.2; the arguments of §13 default to "as before" (no wait, one delivery, not
    // retryable), which their names say.
    match arg.default {
        Fallback::Integer(n) if !SECTION_13.contains(&arg.name) => p["default"] = json!(n),
        Fallback::Text(t) => p["default"] = json!(t),
        Fallback::Integer(_) | Fallback::Boolean(_) | Fallback::None | Fallback::DefaultAgent => {}
    }
    p
}

/// The arguments of waiting, cancelling and redelivery.
const SECTION_13: [&str; 3] = ["wait_sec", "max_deliveries", "retryable"];

/// The input schema of `tool`: a closed object with the arguments in table order.
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

/// The `status` filter: one status, or an array of 1 to 7 distinct statuses (the server checks them and
/// names the accepted values when it refuses one).
fn statuses_or_sets() -> Value {
    json!({"anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}},
    ]})
}

/// A closed branch naming the fields of one success shape. Fields are named,
/// not typed — as `properties` or as one anchored pattern, whichever is shorter — which keeps every
/// branch closed within the 10,000 bytes allowed to the group; `has_task` alone carries a constant,
/// to tell the two poll shapes apart.
fn branch(fields: &[&str], has_task: Option<bool>) -> Value {
    let mut names = vec!["ok"];
    names.extend_from_slice(fields);
    let constant = |b: &mut Value| {
        if let Some(t) = has_task {
            b["properties"]["has_task"] = json!({"const": t});
        }
    };
    let mut by_pattern = json!({"patternProperties": {format!("^({})$", names.join("|")): {}}});
    constant(&mut by_pattern);
    let mut by_name = json!({"properties": {}});
    for name in &names {
        by_name["properties"][*name] = json!({});
    }
    constant(&mut by_name);
    let mut b = if by_pattern.to_string().len() < by_name.to_string().len() {
        by_pattern
    } else {
        by_name
    };
    b["additionalProperties"] = json!(false);
    b
}

/// The refusal shape: `ok` and `error` only (no success shape has an `error`, so exactly one branch
/// matches every answer).
fn refusal() -> Value {
    json!({"properties": {"ok": {}, "error": {}}, "additionalProperties": false})
}

/// The output schema of `tool`.
pub fn output(tool: &str) -> Value {
    let successes: Vec<Value> = match tool {
        "dispatch_contract" => vec![branch(
            &[
                "contract_id",
                "status",
                "idempotent_replay",
                "requester_agent",
                "target_agent",
                "created_at",
                "queue_expires_at",
                "lifetime_ends_at",
                "exec_ttl_sec",
                "queue_ttl_sec",
                "pointers",
                "warnings",
            ],
            None,
        )],
        "poll_next_task" => vec![
            branch(&["status", "contract", "skipped_stale", "waited_ms"], Some(true)),
            branch(&["message", "skipped_stale", "waited_ms"], Some(false)),
        ],
        "extend_ttl" => vec![branch(
            &[
                "contract_id",
                "status",
                "claim_epoch",
                "claimed_at",
                "expires_at",
                "extend_count",
                "extends_left",
                "lifetime_ends_at",
                "warnings",
            ],
            None,
        )],
        "release_contract" => vec![branch(
            &[
                "contract_id",
                "status",
                "release_count",
                "releases_left",
                "queued_at",
                "queue_expires_at",
                "message",
                "warnings",
            ],
            None,
        )],
        // FAILED / TIMED_OUT with completed_at, or SUBMITTED with redelivery_at (CT-188).
        "fail_contract" => vec![branch(
            &[
                "contract_id",
                "status",
                "completed_at",
                "redelivery_at",
                "message",
                "warnings",
            ],
            None,
        )],
        "fulfill_contract" => vec![branch(
            &[
                "contract_id",
                "status",
                "completed_at",
                "artifacts_pointers",
                "message",
                "warnings",
            ],
            None,
        )],
        "verify_contract" => vec![branch(
            &[
                "contract_id",
                "status",
                "is_logically_expired",
                "valid",
                "fulfillable",
                "dirty_files",
                "checked",
                "toctou_strikes_left",
                "now",
                "contract",
                "warnings",
            ],
            None,
        )],
        // `note` only when no store exists yet (issue 31: nothing is created by looking).
        "inspect_mesh_state" => vec![branch(
            &[
                "total_returned",
                "contracts",
                "next_cursor",
                "counts",
                "now",
                "note",
            ],
            None,
        )],
        _ => vec![branch(
            &[
                "contract_id",
                "status",
                "was_claimed",
                "holder",
                "already_cancelled",
                "cancel_reason",
            ],
            None,
        )],
    };
    let mut one_of = successes;
    one_of.push(refusal());
    json!({"type": "object", "oneOf": one_of})
}
