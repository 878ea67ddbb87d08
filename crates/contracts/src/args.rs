//! Tool arguments as JSON objects: decoding in each tool's argument order (CT-86, CT-87, CT-88) and
//! one entry point, [`call`], that runs a tool and returns its JSON answer (CT-82, CT-83). The MCP
//! adapter is a thin shell over this module; it is also what the fuzz target drives.
//!
//! ```
//! use shiftwork_contracts::{args, Contracts, ContractsConfig, MemoryStore, SeededIdSource};
//! use shiftwork_seams::{ManualClock, MemFs};
//! use serde_json::json;
//! use std::sync::Arc;
//! let clock = Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH));
//! let c = Contracts::new(Arc::new(MemoryStore::new(clock.clone())), clock, Arc::new(MemFs::new()),
//!                        Arc::new(SeededIdSource::new(1)), ContractsConfig::default());
//! let answer = args::call(&c, "poll_next_task", json!({"agent": "bob"}).as_object().unwrap(), None);
//! assert_eq!(answer["error"]["message"], "unknown argument 'agent'; known: agent_id");
//! let answer = args::call(&c, "poll_next_task", &Default::default(), Some("bob"));
//! assert_eq!(answer["has_task"], false);
//! ```

use serde_json::{Map, Value, json};

use crate::error::{Refusal, RefusalCode};
use crate::facade::Contracts;
use crate::request::{self, DispatchRequest, FulfilRequest, HolderRef, Identity, InspectRequest};

/// The eight tools and their argument names in table order (§7.2).
pub const TOOLS: [(&str, &[&str]); 8] = [
    (
        "dispatch_contract",
        &[
            "target_agent",
            "title",
            "workspace_root",
            "pointers",
            "task_type",
            "context_summary",
            "contract_schema",
            "exec_ttl_sec",
            "queue_ttl_sec",
            "idempotency_key",
            "requester_agent",
        ],
    ),
    ("poll_next_task", &["agent_id"]),
    ("extend_ttl", &["contract_id", "claim_epoch", "agent_id"]),
    (
        "release_contract",
        &["contract_id", "reason", "claim_epoch", "agent_id"],
    ),
    (
        "fail_contract",
        &["contract_id", "reason", "claim_epoch", "agent_id"],
    ),
    (
        "fulfill_contract",
        &[
            "contract_id",
            "result_summary",
            "structured_output",
            "artifacts_pointers",
            "claim_epoch",
            "agent_id",
        ],
    ),
    ("verify_contract", &["contract_id", "agent_id", "claim_epoch"]),
    (
        "inspect_mesh_state",
        &[
            "target_agent",
            "requester_agent",
            "status",
            "contract_id",
            "limit",
            "cursor",
        ],
    ),
];

/// The argument names of `tool`, in table order.
pub fn known_arguments(tool: &str) -> Option<&'static [&'static str]> {
    TOOLS.iter().find(|(t, _)| *t == tool).map(|(_, a)| *a)
}

/// The `UNKNOWN_ARGUMENT` refusal of CT-86.
pub fn unknown_argument(key: &str, known: &[&str]) -> Refusal {
    let list = if known.is_empty() {
        String::from("(none)")
    } else {
        known.join(", ")
    };
    Refusal::new(
        RefusalCode::UnknownArgument,
        format!("unknown argument '{key}'; known: {list}"),
        vec![("argument", json!(key)), ("known", json!(known))],
    )
}

/// Runs `tool` with `args` and returns its answer object: the success shape, or the refusal shape of
/// CT-83. `default_agent` is the adapter's `--agent` / `AGENT_NAME`. An unknown tool answers
/// `INVALID_ARGUMENT { argument: "tool" }`.
pub fn call(
    contracts: &Contracts,
    tool: &str,
    args: &Map<String, Value>,
    default_agent: Option<&str>,
) -> Value {
    match run(contracts, tool, args, default_agent) {
        Ok(v) => v,
        Err(r) => r.to_json(),
    }
}

fn to_value<T: serde::Serialize>(v: T) -> Result<Value, Refusal> {
    serde_json::to_value(v).map_err(|e| {
        Refusal::new(
            RefusalCode::StoreError,
            format!("The answer could not be encoded: {e}."),
            Vec::new(),
        )
    })
}

fn run(
    c: &Contracts,
    tool: &str,
    args: &Map<String, Value>,
    default_agent: Option<&str>,
) -> Result<Value, Refusal> {
    let Some(known) = known_arguments(tool) else {
        return Err(Refusal::invalid_argument(
            "tool",
            format!("There is no contracts tool named {tool}."),
        ));
    };
    if let Some(key) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(unknown_argument(key, known));
    }
    let a = Args {
        map: args,
        default_agent,
    };
    match tool {
        "dispatch_contract" => to_value(c.dispatch(&a.dispatch()?)?),
        "poll_next_task" => to_value(c.poll_next_task(&a.identity("agent_id")?)?),
        "extend_ttl" => {
            let h = a.holder(None)?;
            to_value(c.extend_ttl(&h)?)
        }
        "release_contract" => {
            let mut reason = None;
            let h = a.holder(Some(&mut |a: &Args<'_>| {
                reason = a.string("reason")?;
                if let Some(r) = &reason {
                    request::release_reason(r)?;
                }
                Ok(())
            }))?;
            to_value(c.release_contract(&h, reason.as_deref())?)
        }
        "fail_contract" => {
            let mut reason = String::new();
            let h = a.holder(Some(&mut |a: &Args<'_>| {
                reason = a.required_string("reason")?;
                request::fail_reason(&reason)
            }))?;
            to_value(c.fail_contract(&h, &reason)?)
        }
        "fulfill_contract" => {
            let mut delivery = FulfilRequest::default();
            let h = a.holder(Some(&mut |a: &Args<'_>| {
                delivery.result_summary = a.required_string("result_summary")?;
                request::result_summary(&delivery.result_summary)?;
                delivery.structured_output = a.object("structured_output")?;
                if let Some(o) = &delivery.structured_output {
                    request::structured_output(o)?;
                }
                delivery.artifacts_pointers = a.strings("artifacts_pointers")?;
                Ok(())
            }))?;
            to_value(c.fulfill_contract(&h, &delivery)?)
        }
        "verify_contract" => {
            let id = a.required_string("contract_id")?;
            request::contract_id(&id)?;
            let agent = a.identity("agent_id")?;
            let epoch = a.epoch()?;
            to_value(c.verify_contract(&id, &agent, epoch)?)
        }
        _ => to_value(c.inspect(&a.inspect()?)?),
    }
}

struct Args<'a> {
    map: &'a Map<String, Value>,
    default_agent: Option<&'a str>,
}

fn wrong_type(argument: &str, what: &str) -> Refusal {
    Refusal::invalid_argument(argument, format!("{argument} must be {what}."))
}

type Extra<'f> = Option<&'f mut dyn FnMut(&Args<'_>) -> Result<(), Refusal>>;

impl Args<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, Refusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong_type(key, "a string")),
        }
    }

    fn required_string(&self, key: &str) -> Result<String, Refusal> {
        self.string(key)?
            .ok_or_else(|| Refusal::invalid_argument(key, format!("{key} is required.")))
    }

    fn integer(&self, key: &str) -> Result<Option<i64>, Refusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Ok(Some(i))
                } else if n.as_u64().is_some() {
                    Ok(Some(i64::MAX))
                } else {
                    Err(wrong_type(key, "an integer"))
                }
            }
            Some(_) => Err(wrong_type(key, "an integer")),
        }
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, Refusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| wrong_type(key, "an array of strings"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(wrong_type(key, "an array of strings")),
        }
    }

    fn object(&self, key: &str) -> Result<Option<Map<String, Value>>, Refusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o.clone())),
            Some(_) => Err(wrong_type(key, "a JSON object")),
        }
    }

    fn identity(&self, key: &str) -> Result<Identity, Refusal> {
        match self.string(key)? {
            Some(s) => {
                request::agent(key, &s)?;
                Ok(Identity::Given(s))
            }
            None => Ok(Identity::from_default(self.default_agent)),
        }
    }

    fn epoch(&self) -> Result<Option<u64>, Refusal> {
        match self.integer("claim_epoch")? {
            None => Ok(None),
            Some(e) => {
                let e = u64::try_from(e)
                    .map_err(|_| wrong_type("claim_epoch", "an integer from 1 to 9007199254740991"))?;
                request::claim_epoch(e).map(Some)
            }
        }
    }

    /// `contract_id`, then the tool's own arguments (`extra`), then `claim_epoch`, then `agent_id`.
    fn holder(&self, extra: Extra<'_>) -> Result<HolderRef, Refusal> {
        let id = self.required_string("contract_id")?;
        request::contract_id(&id)?;
        if let Some(f) = extra {
            f(self)?;
        }
        let claim_epoch = self.epoch()?;
        let agent_id = self.identity("agent_id")?;
        Ok(HolderRef {
            contract_id: id,
            agent_id,
            claim_epoch,
        })
    }

    fn dispatch(&self) -> Result<DispatchRequest, Refusal> {
        let target_agent = self.required_string("target_agent")?;
        request::agent("target_agent", &target_agent)?;
        let title = self.required_string("title")?;
        request::title(&title)?;
        let workspace_root = self.required_string("workspace_root")?;
        let pointers = self.strings("pointers")?;
        let task_type = self.string("task_type")?;
        if let Some(t) = &task_type {
            request::task_type(t)?;
        }
        let context_summary = self.string("context_summary")?;
        if let Some(s) = &context_summary {
            request::context_summary(s)?;
        }
        let contract_schema = self.object("contract_schema")?;
        let exec_ttl_sec = self.integer("exec_ttl_sec")?;
        if let Some(v) = exec_ttl_sec {
            request::ttl(
                "exec_ttl_sec",
                v,
                crate::limits::MIN_EXEC_TTL_SEC,
                crate::limits::MAX_EXEC_TTL_SEC,
            )?;
        }
        let queue_ttl_sec = self.integer("queue_ttl_sec")?;
        if let Some(v) = queue_ttl_sec {
            request::ttl(
                "queue_ttl_sec",
                v,
                crate::limits::MIN_QUEUE_TTL_SEC,
                crate::limits::MAX_QUEUE_TTL_SEC,
            )?;
        }
        let idempotency_key = self.string("idempotency_key")?;
        if let Some(k) = &idempotency_key {
            request::idempotency_key(k)?;
        }
        let requester_agent = match self.string("requester_agent")? {
            Some(s) => {
                request::agent("requester_agent", &s)?;
                Identity::Given(s)
            }
            None => Identity::from_default(self.default_agent),
        };
        Ok(DispatchRequest {
            target_agent,
            title,
            workspace_root,
            pointers,
            task_type,
            context_summary,
            contract_schema,
            exec_ttl_sec,
            queue_ttl_sec,
            idempotency_key,
            requester_agent: Some(requester_agent),
        })
    }

    fn inspect(&self) -> Result<InspectRequest, Refusal> {
        let target_agent = self.string("target_agent")?;
        if let Some(a) = &target_agent {
            request::agent("target_agent", a)?;
        }
        let requester_agent = self.string("requester_agent")?;
        if let Some(a) = &requester_agent {
            request::agent("requester_agent", a)?;
        }
        let status = match self.get("status") {
            None => None,
            Some(Value::String(s)) => Some(vec![s.clone()]),
            Some(Value::Array(_)) => self.strings("status")?,
            Some(_) => return Err(wrong_type("status", "a status or an array of statuses")),
        };
        if let Some(s) = &status {
            request::statuses(s)?;
        }
        let contract_id = self.string("contract_id")?;
        if let Some(id) = &contract_id {
            request::contract_id(id)?;
        }
        let limit = self.integer("limit")?;
        if let Some(l) = limit {
            request::limit(l)?;
        }
        let cursor = self.string("cursor")?;
        Ok(InspectRequest {
            target_agent,
            requester_agent,
            status,
            contract_id,
            limit,
            cursor,
            unbounded: false,
        })
    }
}
