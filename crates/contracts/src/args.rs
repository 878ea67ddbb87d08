//! The tools as JSON: each tool's argument table ([`TOOLS`], typed and bounded by
//! [`crate::limits`], from which the MCP adapter derives its input schemas), decoding of an argument
//! object in the tool's argument order (an unknown argument refused, an absent identity taken from
//! the embedder's default), and one entry point, [`call`], that runs a tool and returns its JSON
//! answer: the outcome with `ok: true`, or `{ ok: false, error: { code, message, details } }`. The
//! answer-only fields `ok` and `has_task` are added here, when an outcome becomes an answer; the
//! outcome types themselves do not carry them. The MCP adapter is a thin shell over this module; it
//! is also what the fuzz target drives.
//!
//! ```
//! use shiftwork_contracts::{args, Contracts, MemoryStore};
//! use shiftwork_contracts::request::DefaultAgent;
//! use shiftwork_seams::{ManualClock, MemFs};
//! use serde_json::json;
//! use std::sync::Arc;
//! let clock = Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH));
//! let c = Contracts::builder(Arc::new(MemoryStore::new(clock))).fs(Arc::new(MemFs::new())).real_ids().build();
//! let answer = args::call(&c, "poll_next_task", json!({"agent": "bob"}).as_object().unwrap(), &DefaultAgent::Unset);
//! assert_eq!(answer["error"]["message"], "unknown argument 'agent'; known: agent_id, wait_sec");
//! let bob = DefaultAgent::from_value(Some("bob"), "AGENT_NAME");
//! let answer = args::call(&c, "poll_next_task", &Default::default(), &bob);
//! assert_eq!(answer["has_task"], false);
//! ```

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use shiftwork_seams::Clock;

use crate::error::{ContractRefusal, RefusalDetails};
use crate::facade::{Contracts, PollStep, PollTask, accept_schema};
use crate::limits::*;
use crate::model::{AgentId, ContractId};
use crate::request::{
    self, DefaultAgent, DispatchRequest, FulfillRequest, HolderRef, Identity, InspectRequest, MAX_EPOCH,
};
use crate::views::PollOutcome;
use crate::wait::{Cancel, Wake};

/// How long a text argument may be, and in which unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Unbounded.
    Any,
    /// At most this many characters (Unicode scalar values).
    Chars(usize),
    /// At most this many bytes of UTF-8.
    Bytes(usize),
}

/// The JSON type of an argument and the bounds its table row gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An agent id: 1 to 64 of `[A-Za-z0-9._@:-]`, starting with a letter or digit.
    Agent,
    /// A contract id argument: 1 to 64 characters.
    ContractId,
    /// A string of at least `min` characters (`min` 1 also means "not blank") and at most `max`.
    Text {
        /// Fewest characters.
        min: usize,
        /// Most characters or bytes.
        max: Length,
    },
    /// A string matching `pattern`.
    Pattern(&'static str),
    /// An integer in `min ..= max`.
    Integer {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// An array of strings: paths under the workspace root (at most 32).
    Paths,
    /// A JSON object.
    Object,
    /// One status, or an array of 1 to 7 distinct statuses.
    Statuses,
    /// `true` or `false`.
    Boolean,
}

/// The default of an optional argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// No default: absent means absent.
    None,
    /// The embedder's default identity.
    DefaultAgent,
    /// An integer.
    Integer(i64),
    /// A string.
    Text(&'static str),
    /// A boolean.
    Boolean(bool),
}

/// One row of a tool's argument table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// The argument's name.
    pub name: &'static str,
    /// What it is, for the one who calls the tool: its meaning and unit in a sentence or two, and,
    /// for an optional argument without a default value ([`Fallback::None`]), what leaving it out
    /// means. Its bounds, its format and any default value are in [`Arg::kind`] and
    /// [`Arg::default`]: a host that writes a schema from the row states them (as schema keywords,
    /// in words where no keyword can), and says where the default identity comes from (this text
    /// names no flag or variable of any host).
    pub about: &'static str,
    /// Its JSON type and bounds.
    pub kind: Kind,
    /// Whether it must be given.
    pub required: bool,
    /// Its default when absent.
    pub default: Fallback,
}

/// A tool: its name and its argument table, in the order its arguments are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// Its arguments in table order.
    pub args: &'static [Arg],
}

impl Tool {
    /// The argument names in table order.
    pub fn names(&self) -> Vec<&'static str> {
        self.args.iter().map(|a| a.name).collect()
    }

    /// True for the tools that only read (`verify_contract`, `inspect_mesh_state`, which carry the
    /// read-only hint): such a call never creates a store.
    pub fn reads_only(&self) -> bool {
        matches!(self.name, "verify_contract" | "inspect_mesh_state")
    }
}

const fn arg(name: &'static str, kind: Kind, about: &'static str) -> Arg {
    Arg {
        name,
        about,
        kind,
        required: false,
        default: Fallback::None,
    }
}

const fn required(name: &'static str, kind: Kind, about: &'static str) -> Arg {
    Arg {
        name,
        about,
        kind,
        required: true,
        default: Fallback::None,
    }
}

const fn with_default(name: &'static str, kind: Kind, default: Fallback, about: &'static str) -> Arg {
    Arg {
        name,
        about,
        kind,
        required: false,
        default,
    }
}

/// The holder's identity on the calls that act on a claim.
const HOLDER: Arg = with_default(
    "agent_id",
    Kind::Agent,
    Fallback::DefaultAgent,
    "The holder (its target agent).",
);
const CONTRACT: Arg = required(
    "contract_id",
    Kind::ContractId,
    "From dispatch_contract or poll_next_task.",
);
/// `claim_epoch`: 1 ..= 2^53 − 1.
const EPOCH: Arg = arg(
    "claim_epoch",
    Kind::Integer {
        min: 1,
        max: MAX_EPOCH as i64,
    },
    "From poll_next_task; a stale one is refused. Without it only the agent id is checked.",
);

/// The task type grammar.
pub const TASK_TYPE_PATTERN: &str = "^[a-z][a-z0-9_-]{0,31}$";

/// The nine tools and their argument tables, in `tools/list` order.
pub const TOOLS: [Tool; 9] = [
    Tool {
        name: "dispatch_contract",
        args: &[
            required(
                "target_agent",
                Kind::Agent,
                "Who does the work; only it can claim the contract.",
            ),
            required(
                "title",
                Kind::Text {
                    min: 1,
                    max: Length::Chars(MAX_TITLE_CHARS),
                },
                "What to do, in one line; not blank, no control characters.",
            ),
            required(
                "workspace_root",
                Kind::Text {
                    min: 0,
                    max: Length::Any,
                },
                "Absolute path of the directory the work is about.",
            ),
            arg(
                "pointers",
                Kind::Paths,
                "Files to work on, if any, relative to workspace_root; pinned by size and SHA-256.",
            ),
            with_default(
                "task_type",
                Kind::Pattern(TASK_TYPE_PATTERN),
                Fallback::Text("review"),
                "The kind of work: review, audit, implementation, test or your own label.",
            ),
            arg(
                "context_summary",
                Kind::Text {
                    min: 0,
                    max: Length::Bytes(MAX_CONTEXT_SUMMARY_BYTES),
                },
                "What the receiver needs beyond the title, as plain text; empty when left out.",
            ),
            arg(
                "contract_schema",
                Kind::Object,
                "JSON Schema that structured_output must match (2020-12 unless $schema names draft 4, 6, 7 or 2019-09; no external $ref; at most 16 KiB).",
            ),
            with_default(
                "exec_ttl_sec",
                Kind::Integer {
                    min: MIN_EXEC_TTL_SEC as i64,
                    max: MAX_EXEC_TTL_SEC as i64,
                },
                Fallback::Integer(DEFAULT_EXEC_TTL_SEC as i64),
                "The lease of a claim, in seconds: the holder's time to deliver or renew.",
            ),
            with_default(
                "queue_ttl_sec",
                Kind::Integer {
                    min: MIN_QUEUE_TTL_SEC as i64,
                    max: MAX_QUEUE_TTL_SEC as i64,
                },
                Fallback::Integer(DEFAULT_QUEUE_TTL_SEC as i64),
                "How long it may wait to be claimed, in seconds; it ends by 4 × this after dispatch.",
            ),
            arg(
                "idempotency_key",
                Kind::Text {
                    min: 1,
                    max: Length::Chars(MAX_IDEMPOTENCY_KEY_CHARS),
                },
                "Printable ASCII; a repeat dispatch with it answers the first instead of queueing twice.",
            ),
            with_default(
                "requester_agent",
                Kind::Agent,
                Fallback::DefaultAgent,
                "Who dispatches; only it may cancel.",
            ),
            with_default(
                "max_deliveries",
                Kind::Integer {
                    min: 1,
                    max: MAX_DELIVERIES as i64,
                },
                Fallback::Integer(1),
                "Claims it may get: a lost lease or a retryable failure requeues it until then.",
            ),
        ],
    },
    Tool {
        name: "poll_next_task",
        args: &[
            with_default(
                "agent_id",
                Kind::Agent,
                Fallback::DefaultAgent,
                "Whose queue: claims the oldest SUBMITTED contract addressed to this agent.",
            ),
            with_default(
                "wait_sec",
                Kind::Integer {
                    min: 0,
                    max: MAX_WAIT_SEC as i64,
                },
                Fallback::Integer(0),
                "Seconds to wait for work when none is queued; 0 answers at once.",
            ),
        ],
    },
    Tool {
        name: "extend_ttl",
        args: &[CONTRACT, EPOCH, HOLDER],
    },
    Tool {
        name: "release_contract",
        args: &[
            CONTRACT,
            arg(
                "reason",
                Kind::Text {
                    min: 0,
                    max: Length::Chars(MAX_REASON_CHARS),
                },
                "Why you hand it back, if you say; kept in its history.",
            ),
            EPOCH,
            HOLDER,
        ],
    },
    Tool {
        name: "fail_contract",
        args: &[
            CONTRACT,
            required(
                "reason",
                Kind::Text {
                    min: 1,
                    max: Length::Chars(MAX_REASON_CHARS),
                },
                "Why the work failed, kept in its history; not blank.",
            ),
            EPOCH,
            HOLDER,
            with_default(
                "retryable",
                Kind::Boolean,
                Fallback::Boolean(false),
                "true requeues it while deliveries are left (max_deliveries); false ends it FAILED.",
            ),
        ],
    },
    Tool {
        name: "fulfill_contract",
        args: &[
            CONTRACT,
            required(
                "result_summary",
                Kind::Text {
                    min: 1,
                    max: Length::Bytes(MAX_RESULT_SUMMARY_BYTES),
                },
                "What you did and found, as plain text; not blank.",
            ),
            arg(
                "structured_output",
                Kind::Object,
                "The result (at most 32 KiB), checked against the contract_schema if any.",
            ),
            arg(
                "artifacts_pointers",
                Kind::Paths,
                "Files you produced, if any, relative to workspace_root; fingerprinted.",
            ),
            EPOCH,
            HOLDER,
        ],
    },
    Tool {
        name: "verify_contract",
        args: &[
            CONTRACT,
            with_default(
                "agent_id",
                Kind::Agent,
                Fallback::DefaultAgent,
                "Whose delivery fulfillable judges; false without any identity.",
            ),
            EPOCH,
        ],
    },
    Tool {
        name: "inspect_mesh_state",
        args: &[
            arg(
                "target_agent",
                Kind::Agent,
                "Only contracts addressed to this agent; any when left out.",
            ),
            arg(
                "requester_agent",
                Kind::Agent,
                "Only contracts this agent dispatched; any when left out.",
            ),
            arg(
                "status",
                Kind::Statuses,
                "Only contracts in this status or these; any when left out.",
            ),
            arg(
                "contract_id",
                Kind::ContractId,
                "One contract in full (result, failures, files) instead of a page.",
            ),
            with_default(
                "limit",
                Kind::Integer {
                    min: 1,
                    max: INSPECT_MAX_LIMIT as i64,
                },
                Fallback::Integer(INSPECT_DEFAULT_LIMIT as i64),
                "Contracts per page, newest first.",
            ),
            arg(
                "cursor",
                Kind::Text {
                    min: 0,
                    max: Length::Any,
                },
                "The previous page's next_cursor, same filters; the first page when left out.",
            ),
        ],
    },
    Tool {
        name: "cancel_contract",
        args: &[
            CONTRACT,
            required(
                "reason",
                Kind::Text {
                    min: 1,
                    max: Length::Chars(MAX_CANCEL_REASON_CHARS),
                },
                "Why you withdraw it; its holder is told. Not blank.",
            ),
            with_default(
                "agent_id",
                Kind::Agent,
                Fallback::DefaultAgent,
                "Who cancels: the requester.",
            ),
        ],
    },
];

/// The tool called `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The argument names of `tool`, in table order.
pub fn known_arguments(tool_name: &str) -> Option<Vec<&'static str>> {
    tool(tool_name).map(Tool::names)
}

/// The `UNKNOWN_ARGUMENT` refusal for `key`, with the tool's argument names `known`.
pub fn unknown_argument(key: &str, known: &[&str]) -> ContractRefusal {
    let list = if known.is_empty() {
        String::from("(none)")
    } else {
        known.join(", ")
    };
    ContractRefusal::new(
        format!("unknown argument '{}'; known: {list}", clip(key)),
        RefusalDetails::UnknownArgument {
            argument: clip(key),
            known: known.iter().map(|k| (*k).to_owned()).collect(),
        },
    )
}

/// The check of unknown arguments, the one place it is made: the refusal for the first key of `args`
/// (in arrival order) that is not an argument of `tool`, or `None`.
pub fn check_keys(tool: &Tool, args: &Map<String, Value>) -> Option<ContractRefusal> {
    let known = tool.names();
    args.keys()
        .find(|k| !known.contains(&k.as_str()))
        .map(|key| unknown_argument(key, &known))
}

/// An input value as an answer may echo it: at most [`shiftwork_seams::echo::ECHO_LIMIT`] code points.
fn clip(text: &str) -> String {
    shiftwork_seams::echo::clip_echo(text)
}

/// Runs `tool` with `args` and returns its answer object: the success shape, or the refusal shape
/// ([`ContractRefusal::to_json`]). `default_agent` is the embedder's default identity (the adapter's
/// `--agent` / `AGENT_NAME`, or the authenticated caller). An unknown tool answers
/// `INVALID_ARGUMENT { argument: "tool" }`.
pub fn call(
    contracts: &Contracts,
    tool: &str,
    args: &Map<String, Value>,
    default_agent: &DefaultAgent,
) -> Value {
    call_cancellable(contracts, tool, args, default_agent, &Cancel::new())
}

/// [`call`] under the call's cancellation (the adapter triggers `cancel` on
/// `notifications/cancelled`): a poll, waiting or not, ends with no claim (a claim it made is undone);
/// a dispatch, fulfil or verify reading files stops between chunks and keeps nothing; an operation
/// whose store transaction already ran answers.
pub fn call_cancellable(
    contracts: &Contracts,
    tool: &str,
    args: &Map<String, Value>,
    default_agent: &DefaultAgent,
    cancel: &Cancel,
) -> Value {
    try_call(contracts, tool, args, default_agent, cancel).unwrap_or_else(|r| r.to_json())
}

/// [`call_cancellable`], the refusal kept typed: the success's answer object, or the
/// [`ContractRefusal`] (whose [`ContractRefusal::to_json`] is the answer object). An embedder that
/// counts or logs what its calls did reads [`ContractRefusal::code`] here instead of reading the
/// answer back.
///
/// ```
/// use shiftwork_contracts::{Contracts, DefaultAgent, MemoryStore, RefusalCode};
/// use shiftwork_contracts::wait::Cancel;
/// use std::sync::Arc;
/// let clock = Arc::new(shiftwork_seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH));
/// let contracts = Contracts::builder(Arc::new(MemoryStore::new(clock)))
///     .fs(Arc::new(shiftwork_seams::MemFs::new()))
///     .ids(Arc::new(shiftwork_contracts::SeededIdSource::new(1)))
///     .build();
/// let args = serde_json::json!({"agent_id": "bob"});
/// let polled = shiftwork_contracts::args::try_call(
///     &contracts, "poll_next_task", args.as_object().unwrap(), &DefaultAgent::Unset, &Cancel::new());
/// assert_eq!(polled.unwrap()["has_task"], false);
/// let args = serde_json::json!({"agent_id": "bob", "wait_sec": -1});
/// let refused = shiftwork_contracts::args::try_call(
///     &contracts, "poll_next_task", args.as_object().unwrap(), &DefaultAgent::Unset, &Cancel::new());
/// assert_eq!(refused.unwrap_err().code(), RefusalCode::InvalidArgument);
/// ```
pub fn try_call(
    contracts: &Contracts,
    tool: &str,
    args: &Map<String, Value>,
    default_agent: &DefaultAgent,
    cancel: &Cancel,
) -> Result<Value, ContractRefusal> {
    run(contracts, tool, args, default_agent, cancel)
}

/// Undoes what `answer` (of `tool`) did when it will never reach its caller — the caller cancelled
/// the call after it answered, and the transport drops the answer (a cancelled call answers or undoes
/// what it did). A poll's claim goes back to the queue (history entry `CLAIM_REVERTED: the poll was
/// cancelled`); the other tools' answers have nothing to undo that their caller could not see again
/// (a dispatch is found again with its `idempotency_key`, a fulfil's outcome with `inspect_mesh_state`).
pub fn answer_not_delivered(contracts: &Contracts, tool: &str, answer: &Value) {
    if tool != "poll_next_task" || answer.get("has_task") != Some(&Value::Bool(true)) {
        return;
    }
    let held = &answer["contract"];
    if let (Some(Ok(id)), Some(epoch)) = (
        held["contract_id"].as_str().map(ContractId::parse),
        held["claim_epoch"].as_u64(),
    ) {
        // A failure leaves the claim to run out its lease, as a crash would.
        let _ = contracts.abandon_claim(&id, epoch);
    }
}

/// The answer object of a success: `ok: true`, then the outcome's fields.
pub fn answer<T: Serialize>(outcome: &T) -> Value {
    answer_with(outcome, &[])
}

/// The answer object of a poll: `ok: true`, `has_task`, then the outcome's fields.
pub fn poll_answer(outcome: &PollOutcome) -> Value {
    answer_with(outcome, &[("has_task", Value::Bool(outcome.held().is_some()))])
}

fn answer_with<T: Serialize>(outcome: &T, first: &[(&str, Value)]) -> Value {
    let mut map = Map::new();
    map.insert("ok".into(), Value::Bool(true));
    for (k, v) in first {
        map.insert((*k).to_owned(), v.clone());
    }
    match serde_json::to_value(outcome) {
        Ok(Value::Object(fields)) => map.extend(fields),
        Ok(_) | Err(_) => {
            return ContractRefusal::new("The answer could not be encoded.", RefusalDetails::StoreError {})
                .to_json();
        }
    }
    Value::Object(map)
}

/// A tool call its host steps instead of blocking on it ([`start`]): answered, or a waiting poll
/// that found nothing yet and is parked as state.
#[derive(Debug)]
pub enum Step {
    /// The tool answered: its success's answer object, or its refusal, as [`try_call`] gives it.
    Answered(Result<Value, ContractRefusal>),
    /// A waiting poll (`poll_next_task` with a `wait_sec`) has nothing to claim yet: resume it
    /// ([`WaitingCall::resume`]) once its wake-up is given or its clock reaches its deadline.
    Waiting(WaitingCall),
}

/// A waiting poll between two steps: plain state, holding no thread, transaction or connection.
pub struct WaitingCall {
    contracts: Arc<Contracts>,
    task: PollTask,
    until: std::time::Duration,
}

impl std::fmt::Debug for WaitingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitingCall")
            .field("task", &self.task)
            .field("until", &self.until)
            .finish_non_exhaustive()
    }
}

impl WaitingCall {
    /// The signal that says to resume now: given by the store when a contract of the agent may have
    /// become claimable, and by the call's [`Cancel`].
    pub fn wake(&self) -> &Wake {
        self.task.wake()
    }

    /// The clock [`WaitingCall::until`] is read on (the facade's; its [`Clock::monotonic`] time).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.contracts.clock()
    }

    /// The call's cancellation.
    pub fn cancel(&self) -> &Cancel {
        self.task.cancel()
    }

    /// The latest monotonic instant at which to resume.
    pub fn until(&self) -> std::time::Duration {
        self.until
    }

    /// Tells the call its wake-up was given and taken by the waiter (as [`Clock::wait_until`] takes
    /// it): it polls at once when resumed.
    pub fn woken(&mut self) {
        self.task.woken();
    }

    /// Runs the poll again as far as it goes without waiting.
    pub fn resume(mut self) -> Step {
        match self.task.step(&self.contracts) {
            PollStep::Done(answered) => Step::Answered(answered.map(|outcome| poll_answer(&outcome))),
            PollStep::Wait { until } => {
                self.until = until;
                Step::Waiting(self)
            }
        }
    }

    /// Waits on this thread, on the facade's clock, until the poll answers.
    pub fn finish(self) -> Result<Value, ContractRefusal> {
        let mut call = self;
        loop {
            if call.clock().wait_until(call.wake(), call.until) {
                call.woken();
            }
            match call.resume() {
                Step::Answered(answer) => return answer,
                Step::Waiting(next) => call = next,
            }
        }
    }
}

/// [`call_cancellable`] as a step: every tool answers at once, except a waiting poll that finds
/// nothing to claim, which comes back as a [`WaitingCall`] for its host to park (an async host holds
/// no thread while it waits) and resume.
///
/// ```
/// use shiftwork_contracts::{args, Contracts, MemoryStore};
/// use shiftwork_contracts::request::DefaultAgent;
/// use shiftwork_contracts::wait::Cancel;
/// use shiftwork_seams::{MemFs, SystemClock};
/// use serde_json::json;
/// use std::sync::Arc;
/// let c = Arc::new(Contracts::builder(Arc::new(MemoryStore::new(Arc::new(SystemClock::new()))))
///     .fs(Arc::new(MemFs::new())).ids(Arc::new(shiftwork_contracts::SeededIdSource::new(1))).build());
/// let bob = DefaultAgent::from_value(Some("bob"), "AGENT_NAME");
/// let cancel = Cancel::new();
/// let args::Step::Waiting(waiting) = args::start(&c, "poll_next_task", json!({"wait_sec": 30}).as_object().unwrap(), &bob, &cancel)
///     else { panic!("nothing to claim: it waits") };
/// cancel.cancel(); // the client went away
/// assert!(waiting.wake().take(), "the cancellation wakes the parked call");
/// let args::Step::Answered(answer) = waiting.resume() else { panic!("cancelled: it answers") };
/// assert_eq!(answer.unwrap()["has_task"], false);
/// ```
pub fn start(
    contracts: &Arc<Contracts>,
    tool_name: &str,
    args: &Map<String, Value>,
    default_agent: &DefaultAgent,
    cancel: &Cancel,
) -> Step {
    if tool_name != "poll_next_task" {
        return Step::Answered(try_call(contracts, tool_name, args, default_agent, cancel));
    }
    let (agent, wait) = match prepare(tool_name, args, default_agent).and_then(|(_, a)| a.poll()) {
        Ok(request) => request,
        Err(refusal) => return Step::Answered(Err(refusal)),
    };
    let call = WaitingCall {
        contracts: Arc::clone(contracts),
        task: contracts.poll_task(&agent, wait, cancel),
        until: std::time::Duration::ZERO,
    };
    call.resume()
}

/// The tool called `tool_name` with its arguments checked against its table.
fn prepare<'a>(
    tool_name: &str,
    args: &'a Map<String, Value>,
    default_agent: &'a DefaultAgent,
) -> Result<(&'static Tool, Args<'a>), ContractRefusal> {
    let Some(tool) = tool(tool_name) else {
        return Err(ContractRefusal::invalid_argument(
            "tool",
            format!("There is no contracts tool named {}.", clip(tool_name)),
        ));
    };
    if let Some(refusal) = check_keys(tool, args) {
        return Err(refusal);
    }
    Ok((
        tool,
        Args {
            map: args,
            default_agent,
        },
    ))
}

fn run(
    c: &Contracts,
    tool_name: &str,
    args: &Map<String, Value>,
    default_agent: &DefaultAgent,
    cancel: &Cancel,
) -> Result<Value, ContractRefusal> {
    let (tool, a) = prepare(tool_name, args, default_agent)?;
    match tool.name {
        "dispatch_contract" => Ok(answer(&c.dispatch_checked(&a.dispatch()?, cancel, true)?)),
        "poll_next_task" => {
            let (agent, wait) = a.poll()?;
            Ok(poll_answer(&c.poll_next_task_wait(&agent, wait, cancel)?))
        }
        "extend_ttl" => {
            let h = a.holder(None)?;
            Ok(answer(&c.extend_ttl(&h)?))
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
            Ok(answer(&c.release_contract(&h, reason.as_deref())?))
        }
        "fail_contract" => {
            let mut reason = String::new();
            let h = a.holder(Some(&mut |a: &Args<'_>| {
                reason = a.required_string("reason")?;
                request::fail_reason(&reason)
            }))?;
            let retryable = a.boolean("retryable")?.unwrap_or(false);
            Ok(answer(&c.fail(&h, &reason, retryable)?))
        }
        "cancel_contract" => {
            let id = request::contract_id(&a.required_string("contract_id")?)?;
            let reason = a.required_string("reason")?;
            request::cancel_reason(&reason)?;
            let agent = a.identity("agent_id")?.resolve("agent_id")?;
            Ok(answer(&c.cancel(&id, &agent, &reason)?))
        }
        "fulfill_contract" => {
            let mut delivery = FulfillRequest::default();
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
            Ok(answer(&c.fulfill_cancellable(&h, &delivery, cancel)?))
        }
        "verify_contract" => {
            let id = request::contract_id(&a.required_string("contract_id")?)?;
            let agent = a.identity("agent_id")?;
            let epoch = a.epoch()?;
            let agent = agent.resolve_optional()?;
            Ok(answer(&c.verify_cancellable(
                &id,
                agent.as_ref(),
                epoch,
                cancel,
            )?))
        }
        _ => Ok(answer(&c.inspect(&a.inspect()?)?)),
    }
}

struct Args<'a> {
    map: &'a Map<String, Value>,
    default_agent: &'a DefaultAgent,
}

fn wrong_type(argument: &str, what: &str) -> ContractRefusal {
    ContractRefusal::invalid_argument(argument, format!("{argument} must be {what}."))
}

type Extra<'f> = Option<&'f mut dyn FnMut(&Args<'_>) -> Result<(), ContractRefusal>>;

impl Args<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, ContractRefusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong_type(key, "a string")),
        }
    }

    fn required_string(&self, key: &str) -> Result<String, ContractRefusal> {
        self.string(key)?
            .ok_or_else(|| ContractRefusal::invalid_argument(key, format!("{key} is required.")))
    }

    fn integer(&self, key: &str) -> Result<Option<i64>, ContractRefusal> {
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

    fn boolean(&self, key: &str) -> Result<Option<bool>, ContractRefusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(wrong_type(key, "true or false")),
        }
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ContractRefusal> {
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

    fn object(&self, key: &str) -> Result<Option<Map<String, Value>>, ContractRefusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o.clone())),
            Some(_) => Err(wrong_type(key, "a JSON object")),
        }
    }

    /// An agent argument, parsed once.
    fn agent(&self, key: &str) -> Result<Option<AgentId>, ContractRefusal> {
        self.string(key)?.map(|s| request::agent(key, &s)).transpose()
    }

    /// An identity argument: the caller's, else the embedder's default; with an authenticated caller,
    /// one naming another agent is refused `IDENTITY_MISMATCH`.
    fn identity(&self, key: &str) -> Result<Identity, ContractRefusal> {
        Identity::checked(key, self.agent(key)?, self.default_agent)
    }

    fn epoch(&self) -> Result<Option<u64>, ContractRefusal> {
        match self.integer("claim_epoch")? {
            None => Ok(None),
            Some(e) => {
                // A negative epoch is out of range like 0.
                request::claim_epoch(u64::try_from(e).unwrap_or(0)).map(Some)
            }
        }
    }

    /// A poll's agent (resolved) and wait, in table order.
    fn poll(&self) -> Result<(AgentId, std::time::Duration), ContractRefusal> {
        let agent = self.identity("agent_id")?;
        let wait = match self.integer("wait_sec")? {
            Some(w) => request::wait_sec(w)?,
            None => 0,
        };
        let agent = agent.resolve("agent_id")?;
        Ok((agent, std::time::Duration::from_secs(u64::from(wait))))
    }

    /// `contract_id`, then the tool's own arguments (`extra`), then `claim_epoch`, then `agent_id`;
    /// then the identity resolved.
    fn holder(&self, extra: Extra<'_>) -> Result<HolderRef, ContractRefusal> {
        let contract_id = request::contract_id(&self.required_string("contract_id")?)?;
        if let Some(f) = extra {
            f(self)?;
        }
        let claim_epoch = self.epoch()?;
        let agent_id = self.identity("agent_id")?.resolve("agent_id")?;
        Ok(HolderRef {
            contract_id,
            agent_id,
            claim_epoch,
        })
    }

    /// Every argument in table order, then the result schema, then the requester resolved.
    fn dispatch(&self) -> Result<DispatchRequest, ContractRefusal> {
        let target_agent = self
            .agent("target_agent")?
            .ok_or_else(|| ContractRefusal::invalid_argument("target_agent", "target_agent is required."))?;
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
        let exec_ttl_sec = match self.integer("exec_ttl_sec")? {
            Some(v) => Some(request::ttl(
                "exec_ttl_sec",
                v,
                MIN_EXEC_TTL_SEC,
                MAX_EXEC_TTL_SEC,
            )?),
            None => None,
        };
        let queue_ttl_sec = match self.integer("queue_ttl_sec")? {
            Some(v) => Some(request::ttl(
                "queue_ttl_sec",
                v,
                MIN_QUEUE_TTL_SEC,
                MAX_QUEUE_TTL_SEC,
            )?),
            None => None,
        };
        let idempotency_key = self.string("idempotency_key")?;
        if let Some(k) = &idempotency_key {
            request::idempotency_key(k)?;
        }
        let requester_agent = self.identity("requester_agent")?;
        let max_deliveries = match self.integer("max_deliveries")? {
            Some(v) => Some(request::max_deliveries(v)?),
            None => None,
        };
        if let Some(s) = &contract_schema {
            accept_schema(s)?;
        }
        let requester_agent = requester_agent.resolve("requester_agent")?;
        let seconds = |v: Option<u32>| v.map(|s| std::time::Duration::from_secs(u64::from(s)));
        Ok(DispatchRequest {
            max_deliveries,
            pointers,
            task_type,
            context_summary,
            contract_schema,
            exec_ttl: seconds(exec_ttl_sec),
            queue_ttl: seconds(queue_ttl_sec),
            idempotency_key,
            ..DispatchRequest::new(requester_agent, target_agent, title, workspace_root)
        })
    }

    fn inspect(&self) -> Result<InspectRequest, ContractRefusal> {
        let target_agent = self.agent("target_agent")?;
        let requester_agent = self.agent("requester_agent")?;
        let status = match self.get("status") {
            None => None,
            Some(Value::String(s)) => Some(vec![s.clone()]),
            Some(Value::Array(_)) => self.strings("status")?,
            Some(_) => return Err(wrong_type("status", "a status or an array of statuses")),
        };
        let status = status.map(|s| request::status_names(&s)).transpose()?;
        let contract_id = self
            .string("contract_id")?
            .map(|id| request::contract_id(&id))
            .transpose()?;
        let limit = self.integer("limit")?.map(request::limit).transpose()?;
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
