//! The `inputSchema` and `outputSchema` of the contracts tools.
//!
//! Input schemas are derived from the crate's argument tables (`shiftwork_contracts::args::TOOLS`):
//! each argument's meaning is its row's `about`; its bounds (the constants of
//! `shiftwork_contracts::limits` its row names), format and default are its row's, written as schema
//! keywords, which a model reads with the description, and in words only where no keyword can say
//! them (a bound in bytes, a UUID). The adapter adds only what the library cannot know: where the
//! default identity comes from (`--agent` / `AGENT_NAME`, or the authenticated caller over HTTP) and
//! which server options bear on an argument. No limit is written here a second time.
//!
//! Output schemas are `{"type": "object", "oneOf": [...]}` with one closed branch per success shape
//! and one for the refusal shape; every member of every branch is typed and described, down to the
//! fingerprints, drifts and contract records inside them. Closed sets (statuses, refusal codes, end
//! reasons, drift reasons, warning codes) are the library's own lists.

use serde_json::{Map, Value, json};
use shiftwork_contracts::args::{Arg, Fallback, Kind, Length, Tool};
use shiftwork_contracts::limits::{MAX_PATH_BYTES, MAX_POINTERS};
use shiftwork_contracts::model::{DriftReason, EndReason, WarningCode};
use shiftwork_contracts::{RefusalCode, Status};

use crate::schema::{
    AGENT_ID_PATTERN, Member, any_object, array, boolean, closed_branch, constant, integer, item, nullable,
    one_of, record, string, strings,
};

/// The largest integer a schema states as a bound: beyond it (the epochs' 2^53 − 1) every JSON reader
/// loses precision anyway, and the server checks it.
const STATED_MAXIMUM: i64 = 1 << 32;

/// Where an argument whose default is the server's identity gets it.
const DEFAULT_AGENT: &str = "Default: --agent or AGENT_NAME; over HTTP, the authenticated caller.";

/// What the server's options add to an argument's description.
fn option_note(arg: &str) -> Option<&'static str> {
    match arg {
        "claim_epoch" => Some("Required under --contracts-require-epoch."),
        "workspace_root" => Some("Within --contracts-roots (default: home and temp directories)."),
        _ => None,
    }
}

/// The schema of one argument: its JSON type, the bounds, format and default of its table row as
/// keywords (`minimum`, `maxLength`, `pattern`, `default`…, which a model reads with the
/// description), and a description made of the row's `about`, what no keyword can say (a bound in
/// bytes, a UUID), where a default identity comes from, and the server options that bear on it.
fn property(arg: &Arg) -> Value {
    let mut words: Vec<String> = vec![arg.about.to_owned()];
    let mut p = match arg.kind {
        Kind::Agent => json!({"type": "string", "pattern": AGENT_ID_PATTERN}),
        Kind::ContractId => {
            words.push(String::from("A UUID."));
            json!({"type": "string"})
        }
        Kind::Text { min, max } => {
            let mut p = json!({"type": "string"});
            if min > 0 {
                p["minLength"] = json!(min);
            }
            match max {
                Length::Chars(n) => p["maxLength"] = json!(n),
                // JSON Schema counts characters; a byte bound is stated in words only.
                Length::Bytes(n) => words.push(format!("At most {n} bytes.")),
                Length::Any => {}
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
        Kind::Paths => {
            words.push(format!("Each at most {MAX_PATH_BYTES} bytes."));
            json!({"type": "array", "items": {"type": "string"}, "maxItems": MAX_POINTERS})
        }
        Kind::Object => json!({"type": "object"}),
        Kind::Statuses => statuses_or_sets(),
    };
    match arg.default {
        Fallback::Integer(n) => p["default"] = json!(n),
        Fallback::Text(t) => p["default"] = json!(t),
        Fallback::Boolean(b) => p["default"] = json!(b),
        Fallback::DefaultAgent => words.push(String::from(DEFAULT_AGENT)),
        Fallback::None => {}
    }
    if let Some(note) = option_note(arg.name) {
        words.push(note.to_owned());
    }
    p["description"] = Value::String(words.join(" "));
    p
}

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

fn status_names() -> Vec<&'static str> {
    Status::ALL.iter().map(|s| s.as_str()).collect()
}

/// The `status` filter: one status, or an array of 1 to 7 distinct statuses.
fn statuses_or_sets() -> Value {
    let names = status_names();
    json!({"anyOf": [
        {"type": "string", "enum": names},
        {"type": "array", "items": {"type": "string", "enum": names}, "minItems": 1, "maxItems": names.len(), "uniqueItems": true},
    ]})
}

/// An instant of an answer: milliseconds since 1970-01-01 UTC.
fn instant(what: &str) -> Value {
    integer(format!("{what}, in ms since 1970-01-01 UTC."))
}

/// An instant that may be `null`.
fn maybe_instant(what: &str, null: &str) -> Value {
    nullable(integer(format!(
        "{what}, in ms since 1970-01-01 UTC; null {null}."
    )))
}

fn status(description: &str) -> Value {
    one_of(&status_names(), description)
}

fn contract_id() -> Value {
    string("The contract's id (a UUID): pass it to the other contracts tools.")
}

fn agent(description: &str) -> Value {
    string(description)
}

/// A file pinned by size and SHA-256.
fn pointer() -> Value {
    item(
        vec![
            (
                "path",
                string("Path relative to workspace_root, with / separators."),
            ),
            ("size", integer("Size in bytes.")),
            (
                "sha256",
                string("SHA-256 of the content, 64 lowercase hex digits."),
            ),
            (
                "first_line",
                string("The file's first line, at most 120 characters."),
            ),
            (
                "last_line",
                string("The file's last line, at most 120 characters."),
            ),
        ],
        &["path", "size", "sha256", "first_line", "last_line"],
    )
}

fn pointers(description: &str) -> Value {
    array(pointer(), description)
}

/// A pinned file that no longer matches its baseline.
fn drift() -> Value {
    let reasons: Vec<&str> = DriftReason::ALL.iter().map(|r| r.as_str()).collect();
    item(
        vec![
            ("path", string("The pointer's path.")),
            ("reason", one_of(&reasons, "What changed.")),
            ("expected_size", integer("The size at dispatch, in bytes.")),
            (
                "actual_size",
                nullable(integer(
                    "The size now, in bytes; null when no readable regular file is there.",
                )),
            ),
            ("hint", string("What to do about it, in one sentence.")),
        ],
        &["path", "reason", "expected_size", "actual_size", "hint"],
    )
}

fn drifts(description: &str) -> Value {
    array(drift(), description)
}

fn warnings() -> Value {
    let codes: Vec<&str> = WarningCode::ALL.iter().map(|c| c.as_str()).collect();
    array(
        item(
            vec![
                ("code", one_of(&codes, "What it is about.")),
                ("message", string("One sentence.")),
            ],
            &["code", "message"],
        ),
        "Things that deserve a look though the call succeeded; usually empty.",
    )
}

fn ok() -> Member {
    ("ok", constant(true, "The call succeeded."))
}

fn message() -> Member {
    ("message", string("What happened, in one sentence."))
}

/// The refusal shape: `ok: false` and the error (no success shape has an `error`, so exactly one
/// branch matches every answer).
fn refusal() -> Value {
    let codes: Vec<&str> = RefusalCode::ALL.iter().map(|c| c.as_str()).collect();
    closed_branch(
        vec![
            ("ok", constant(false, "The call was refused.")),
            (
                "error",
                record(
                    vec![
                        ("code", one_of(&codes, "Why, as a stable code.")),
                        (
                            "message",
                            string("Why, in one sentence naming the argument, contract or limit."),
                        ),
                        (
                            "details",
                            any_object(
                                "The refusal's values, per code (the argument, the contract's status after the call, the drifted files…); {} when none.",
                            ),
                        ),
                    ],
                    &["code", "message", "details"],
                    "The refusal. Refusals are answers, not protocol errors.",
                ),
            ),
        ],
        &["ok", "error"],
    )
}

/// The members a summary of a contract has (an inspect page, a verify's record).
fn summary_members(error_reason: &str) -> Vec<Member> {
    let ends: Vec<&str> = EndReason::ALL.iter().map(|r| r.as_str()).collect();
    vec![
        ("contract_id", contract_id()),
        ("requester_agent", agent("Who dispatched it.")),
        (
            "target_agent",
            agent("Who it is addressed to, the only agent that may hold it."),
        ),
        ("task_type", string("The kind of work.")),
        ("title", string("What to do, in one line.")),
        ("status", status("Its status as stored.")),
        (
            "is_logically_expired",
            boolean("Past a deadline that no sweep has recorded yet."),
        ),
        ("created_at", instant("When it was dispatched")),
        ("queued_at", instant("When it last entered the queue")),
        ("queue_expires_at", instant("When its queue window ends")),
        ("lifetime_ends_at", instant("When it ends at the latest")),
        (
            "claimed_at",
            maybe_instant("When the current lease began", "unless claimed"),
        ),
        (
            "expires_at",
            maybe_instant("When the current lease ends", "unless claimed"),
        ),
        ("completed_at", maybe_instant("When it ended", "while it is live")),
        (
            "claim_epoch",
            integer("How many claims it had; the current claim's fencing token."),
        ),
        ("extend_count", integer("Lease renewals in the current claim.")),
        ("release_count", integer("Times it was handed back.")),
        ("retry_count", integer("Deliveries refused by its result schema.")),
        (
            "toctou_strikes",
            integer("Deliveries in this claim that found its files changed."),
        ),
        ("pointer_count", integer("How many files it pins.")),
        (
            "end_reason",
            nullable(one_of(&ends, "Why it ended; null while it is live.")),
        ),
        ("has_result", boolean("A delivery (or a salvaged one) is stored.")),
        ("error_reason", nullable(string(error_reason))),
        ("delivery_count", integer("Claims so far.")),
        ("max_deliveries", integer("Claims it may get.")),
        (
            "available_at",
            maybe_instant(
                "When a redelivered contract becomes claimable",
                "unless redelivered",
            ),
        ),
    ]
}

fn names(members: &[Member]) -> Vec<&'static str> {
    members.iter().map(|(name, _)| *name).collect()
}

/// A contract of an inspect page: its summary, and with a `contract_id` filter its detail.
fn inspect_item() -> Value {
    let summary = summary_members(
        "Its failure history; cut to 200 characters in a page, complete in a detail; null when none.",
    );
    let required = names(&summary);
    let mut members = summary;
    members.extend([
        (
            "exec_ttl_sec",
            integer("Detail: the lease of a claim, in seconds."),
        ),
        ("queue_ttl_sec", integer("Detail: the queue window, in seconds.")),
        (
            "idempotency_key",
            nullable(string("Detail: the dispatch's key; null when none.")),
        ),
        (
            "context_summary",
            string("Detail: what the dispatcher told the receiver."),
        ),
        (
            "workspace_root",
            string("Detail: the directory the pointers are relative to."),
        ),
        (
            "pointers",
            nullable(pointers(
                "Detail: the pinned files; null when left out (omitted_fields).",
            )),
        ),
        (
            "contract_schema",
            nullable(any_object(
                "Detail: the result's JSON Schema; null when none or left out.",
            )),
        ),
        (
            "dirty_files",
            nullable(drifts(
                "Detail: the latest drift found; null when none or left out.",
            )),
        ),
        (
            "fail_reason",
            nullable(string("Detail: the holder's fail reason; null when none.")),
        ),
        (
            "result_summary",
            nullable(string("Detail: the delivered summary; null when none.")),
        ),
        (
            "structured_output",
            nullable(any_object(
                "Detail: the delivered result; null when none or left out.",
            )),
        ),
        (
            "artifacts_pointers",
            nullable(pointers(
                "Detail: the delivered files; null when none or left out.",
            )),
        ),
        (
            "salvaged_result",
            nullable(record(
                vec![
                    ("result_summary", string("The delivered summary.")),
                    (
                        "structured_output",
                        nullable(any_object("The delivered result; null when none.")),
                    ),
                    ("artifacts_pointers", pointers("The delivered files.")),
                ],
                &["result_summary", "structured_output", "artifacts_pointers"],
                "Detail: a delivery kept when the contract ended on it; null when none or left out.",
            )),
        ),
        (
            "cancel_reason",
            nullable(string("Detail: the requester's cancel reason; null when none.")),
        ),
        (
            "omitted_fields",
            strings("Detail: the fields set to null to keep the answer within 64 KiB."),
        ),
    ]);
    item(members, &required)
}

/// What a poll hands to the holder.
fn held_contract() -> Value {
    let members = vec![
        ("contract_id", contract_id()),
        ("requester_agent", agent("Who dispatched it.")),
        ("target_agent", agent("You, its holder.")),
        ("task_type", string("The kind of work.")),
        ("title", string("What to do, in one line.")),
        (
            "context_summary",
            string("What the dispatcher wants you to know."),
        ),
        (
            "workspace_root",
            string("The directory the pointers are relative to."),
        ),
        (
            "pointers",
            pointers("The files to work on, as pinned at dispatch."),
        ),
        (
            "contract_schema",
            nullable(any_object(
                "The JSON Schema your structured_output must match; null when none.",
            )),
        ),
        ("claimed_at", instant("When your lease began")),
        ("exec_ttl_sec", integer("The lease, in seconds.")),
        (
            "claim_epoch",
            integer("Your claim's fencing token: pass it to every later call on this contract."),
        ),
        ("expires_at", instant("When your lease ends unless renewed")),
        (
            "lifetime_ends_at",
            instant("When the contract ends at the latest"),
        ),
        ("extends_left", integer("Lease renewals left in this claim.")),
        ("releases_left", integer("Hand-backs left.")),
        (
            "schema_attempts_left",
            integer("Deliveries its schema may still refuse before it fails."),
        ),
        ("delivery_count", integer("Claims so far, this one included.")),
        ("max_deliveries", integer("Claims it may get.")),
        (
            "available_at",
            maybe_instant(
                "When it became claimable again after a redelivery",
                "unless redelivered",
            ),
        ),
    ];
    let required = names(&members);
    record(members, &required, "The contract you now hold.")
}

fn skipped() -> Value {
    array(
        item(
            vec![
                ("contract_id", contract_id()),
                ("title", string("Its title.")),
                ("dirty_files", drifts("What changed.")),
            ],
            &["contract_id", "title", "dirty_files"],
        ),
        "Contracts this poll closed POINTER_STALE on its way because their files had changed.",
    )
}

fn waited() -> Member {
    (
        "waited_ms",
        integer("How long the call waited, in ms; only when wait_sec was given."),
    )
}

/// A success branch: `ok` and `members`, all required but `optional`, closed.
fn success(members: Vec<Member>, optional: &[&str]) -> Value {
    let mut all = vec![ok()];
    all.extend(members);
    let required: Vec<&str> = names(&all)
        .into_iter()
        .filter(|n| !optional.contains(n))
        .collect();
    closed_branch(all, &required)
}

/// The output schema of `tool`.
pub fn output(tool: &str) -> Value {
    let successes: Vec<Value> = match tool {
        "dispatch_contract" => vec![success(
            vec![
                ("contract_id", contract_id()),
                (
                    "status",
                    status("SUBMITTED for a new contract; on a replay, its status now."),
                ),
                (
                    "idempotent_replay",
                    boolean(
                        "An earlier dispatch with this idempotency_key answered; nothing new was queued.",
                    ),
                ),
                ("requester_agent", agent("Who dispatched it.")),
                ("target_agent", agent("Who it is addressed to.")),
                ("created_at", instant("When it was dispatched")),
                ("queue_expires_at", instant("When its queue window ends")),
                ("lifetime_ends_at", instant("When it ends at the latest")),
                ("exec_ttl_sec", integer("The lease of a claim, in seconds.")),
                ("queue_ttl_sec", integer("The queue window, in seconds.")),
                ("pointers", pointers("The files pinned, with their fingerprints.")),
                ("warnings", warnings()),
            ],
            &[],
        )],
        "poll_next_task" => vec![
            success(
                vec![
                    ("has_task", constant(true, "A contract was claimed.")),
                    ("status", constant("CLAIMED", "You hold it now.")),
                    ("contract", held_contract()),
                    ("skipped_stale", skipped()),
                    waited(),
                ],
                &["waited_ms"],
            ),
            success(
                vec![
                    ("has_task", constant(false, "Nothing was claimed.")),
                    (
                        "message",
                        string(
                            "Why: no contract waits for you, this poll closed 8 stale ones (poll again), or the call was cancelled.",
                        ),
                    ),
                    ("skipped_stale", skipped()),
                    waited(),
                ],
                &["waited_ms"],
            ),
        ],
        "extend_ttl" => vec![success(
            vec![
                ("contract_id", contract_id()),
                ("status", constant("CLAIMED", "You still hold it.")),
                ("claim_epoch", integer("Your claim's fencing token, unchanged.")),
                ("claimed_at", instant("When the renewed lease began (now)")),
                ("expires_at", instant("When the renewed lease ends")),
                ("extend_count", integer("Renewals used in this claim.")),
                ("extends_left", integer("Renewals left in this claim.")),
                (
                    "lifetime_ends_at",
                    instant("When the contract ends at the latest"),
                ),
                ("warnings", warnings()),
            ],
            &[],
        )],
        "release_contract" => vec![success(
            vec![
                ("contract_id", contract_id()),
                ("status", constant("SUBMITTED", "Back in the queue.")),
                ("release_count", integer("Times it was handed back.")),
                ("releases_left", integer("Hand-backs left.")),
                ("queued_at", instant("When it re-entered the queue")),
                ("queue_expires_at", instant("When its new queue window ends")),
                message(),
                ("warnings", warnings()),
            ],
            &[],
        )],
        "fail_contract" => vec![
            success(
                vec![
                    ("contract_id", contract_id()),
                    (
                        "status",
                        one_of(
                            &["FAILED", "TIMED_OUT"],
                            "FAILED, or TIMED_OUT when your lease had already run out (your reason is kept).",
                        ),
                    ),
                    (
                        "completed_at",
                        instant("When it ended (the lease's end for TIMED_OUT)"),
                    ),
                    message(),
                    ("warnings", warnings()),
                ],
                &[],
            ),
            success(
                vec![
                    ("contract_id", contract_id()),
                    (
                        "status",
                        constant(
                            "SUBMITTED",
                            "A retryable failure with deliveries left: queued again.",
                        ),
                    ),
                    ("redelivery_at", instant("When it becomes claimable again")),
                    message(),
                    ("warnings", warnings()),
                ],
                &[],
            ),
        ],
        "fulfill_contract" => vec![success(
            vec![
                ("contract_id", contract_id()),
                ("status", constant("COMPLETED", "Delivered and accepted.")),
                ("completed_at", instant("When it ended")),
                (
                    "artifacts_pointers",
                    pointers("The files you produced, fingerprinted."),
                ),
                message(),
                ("warnings", warnings()),
            ],
            &[],
        )],
        "verify_contract" => {
            let summary = summary_members("Its failure history, cut to 200 characters; null when none.");
            let required = names(&summary);
            vec![success(
                vec![
                    ("contract_id", contract_id()),
                    ("status", status("Its status as stored.")),
                    (
                        "is_logically_expired",
                        boolean("Past a deadline that no sweep has recorded yet."),
                    ),
                    ("valid", boolean("Every pinned file still matches its baseline.")),
                    (
                        "fulfillable",
                        boolean(
                            "A fulfill_contract by the caller now would pass the holder and file checks.",
                        ),
                    ),
                    (
                        "dirty_files",
                        drifts("The files that no longer match, with what to do."),
                    ),
                    ("checked", integer("How many pinned files were checked.")),
                    (
                        "toctou_strikes_left",
                        integer(
                            "Deliveries that may still find changed files before it closes POINTER_STALE (0 unless CLAIMED).",
                        ),
                    ),
                    ("now", instant("When the files were checked")),
                    ("contract", record(summary, &required, "The contract's summary.")),
                    ("warnings", warnings()),
                ],
                &[],
            )]
        }
        "inspect_mesh_state" => {
            let counts: Vec<Member> = Status::ALL
                .iter()
                .map(|s| (s.as_str(), integer(format!("{} contracts.", s.as_str()))))
                .chain([(
                    "logically_expired",
                    integer("Live contracts past a deadline no sweep has recorded yet."),
                )])
                .collect();
            let count_names = names(&counts);
            vec![success(
                vec![
                    ("total_returned", integer("How many contracts this page holds.")),
                    (
                        "contracts",
                        array(
                            inspect_item(),
                            "The page, newest first; with contract_id, that one contract with its detail members.",
                        ),
                    ),
                    (
                        "next_cursor",
                        nullable(string("Pass as cursor for the next page; null on the last.")),
                    ),
                    (
                        "counts",
                        record(
                            counts,
                            &count_names,
                            "Contracts per status among those the filters other than status select.",
                        ),
                    ),
                    ("now", instant("When the store was read")),
                    (
                        "finished_kept_sec",
                        nullable(integer(
                            "How long finished contracts (COMPLETED, FAILED, CANCELLED, TIMED_OUT, POINTER_STALE) are kept after they end before the background purge deletes them, in whole seconds (the server's --contracts-retention, default 604800: 7 days); null: kept until deleted by hand.",
                        )),
                    ),
                    (
                        "note",
                        string("Only when no store exists yet: where it would be; nothing was created."),
                    ),
                ],
                &["note"],
            )]
        }
        _ => vec![success(
            vec![
                ("contract_id", contract_id()),
                ("status", constant("CANCELLED", "Withdrawn.")),
                ("was_claimed", boolean("Someone held it when it was cancelled.")),
                (
                    "holder",
                    nullable(agent("That holder, told at its next call; null when none.")),
                ),
                (
                    "already_cancelled",
                    boolean("It was cancelled before; nothing changed."),
                ),
                ("cancel_reason", string("The reason stored with the cancel.")),
            ],
            &[],
        )],
    };
    let mut one_of = successes;
    one_of.push(refusal());
    json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean", "description": "true: the call succeeded; false: it was refused, see error."}},
        "required": ["ok"],
        "oneOf": one_of,
    })
}
