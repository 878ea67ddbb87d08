//! The `contracts` tool group: the tools over `shiftwork_contracts::Contracts`.
//!
//! The handlers are thin: they hand the argument object to `shiftwork_contracts::args::call`, which
//! decodes it in the tool's argument order, runs the operation and returns the answer object. The store
//! location rule and the reopen policy are the crate's (`shiftwork_contracts::location`); the store is
//! opened on the first contracts call, never at start-up. What the adapter adds: the settings, the hint
//! naming the flag or variable to check in the refusals where one helps (the library's messages name
//! none), the authenticated caller as every identity's default, and the metrics: the library's observer
//! counts the queue's events, and the queue gauges read the open store at most once per interval.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use shiftwork_contracts::args::{Step, WaitingCall};
use shiftwork_contracts::location::{LazyContracts, Location, LocationError};
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{
    AgentId, ContractEvent, ContractRefusal, Contracts, ContractsConfig, DefaultAgent, QueueDepth, Status,
    StoreError,
};

use crate::registry::{
    Answered, CallContext, DemoStep, Group, Hints, Outcome, Park, ParkProgress, TextStyle, ToolDef,
};

mod schema;
use crate::settings::{Setting, Settings};

/// `--contracts-db` / `SHIFTWORK_CONTRACTS_DB`.
pub static CONTRACTS_DB: Setting = Setting {
    flag: "--contracts-db",
    env: Some("SHIFTWORK_CONTRACTS_DB"),
    takes_value: true,
    help: "contracts store: a file path or a postgres:// URL (default ~/.shiftwork/contracts.db)",
};

/// `--contracts-sync` / `SHIFTWORK_CONTRACTS_SYNC`.
pub static CONTRACTS_SYNC: Setting = Setting {
    flag: "--contracts-sync",
    env: Some("SHIFTWORK_CONTRACTS_SYNC"),
    takes_value: true,
    help: "SQLite synchronous mode of the contracts store: normal or full (default normal)",
};

/// `--contracts-require-epoch` / `SHIFTWORK_CONTRACTS_REQUIRE_EPOCH`.
pub static CONTRACTS_REQUIRE_EPOCH: Setting = Setting {
    flag: "--contracts-require-epoch",
    env: Some("SHIFTWORK_CONTRACTS_REQUIRE_EPOCH"),
    takes_value: false,
    help: "refuse contract holder calls without claim_epoch",
};

/// `--contracts-roots` / `SHIFTWORK_CONTRACTS_ROOTS`: where workspace roots may lie.
pub static CONTRACTS_ROOTS: Setting = Setting {
    flag: "--contracts-roots",
    env: Some("SHIFTWORK_CONTRACTS_ROOTS"),
    takes_value: true,
    help: "comma list of directories contract workspace roots must lie in (default: the home and temporary directories)",
};

/// `--contracts-retention` / `SHIFTWORK_CONTRACTS_RETENTION`: how long finished contracts are kept.
pub static CONTRACTS_RETENTION: Setting = Setting {
    flag: "--contracts-retention",
    env: Some("SHIFTWORK_CONTRACTS_RETENTION"),
    takes_value: true,
    help: "how long finished contracts are kept before they are purged in the background: 3600, 90m, 24h, 7d or forever (default 7d)",
};

/// `--agent` / `AGENT_NAME`.
pub static AGENT: Setting = Setting {
    flag: "--agent",
    env: Some("AGENT_NAME"),
    takes_value: true,
    help: "this agent's identity, the default of every agent argument of the contracts tools",
};

static SETTINGS: [Setting; 6] = [
    CONTRACTS_DB,
    CONTRACTS_SYNC,
    CONTRACTS_REQUIRE_EPOCH,
    CONTRACTS_ROOTS,
    CONTRACTS_RETENTION,
    AGENT,
];

/// The group.
pub static GROUP: Group = Group {
    name: "contracts",
    instructions: "contracts: hand work to another agent and take work handed to you — dispatch_contract, poll_next_task (wait_sec waits for work), extend_ttl, release_contract, fail_contract, fulfill_contract, verify_contract, inspect_mesh_state, cancel_contract. They keep contracts in the store and never write a file; verify_contract and inspect_mesh_state only read.",
    settings: &SETTINGS,
    build,
    demo_settings,
    demo,
    try_next: &[],
    try_in_demo: &[
        "shiftwork-mcp call inspect_mesh_state '{\"limit\": 5}'",
        "AGENT_NAME=bob shiftwork-mcp call poll_next_task '{}'",
    ],
    command: None,
};

/// The resolved settings of the group.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store's location, or why there is none (answered per call).
    pub location: Result<Location, LocationError>,
    /// SQLite `synchronous`.
    pub sync: shiftwork_contracts::Synchronous,
    /// The facade's configuration (`require_claim_epoch`, the allowed roots).
    pub contracts: ContractsConfig,
    /// The default identity, parsed once (an invalid `AGENT_NAME` is answered per call).
    pub agent: DefaultAgent,
}

/// Resolves the settings; an invalid value is a start-up error.
pub fn config(settings: &Settings) -> Result<Config, String> {
    let home = settings.env("HOME");
    let cwd = std::env::current_dir().unwrap_or_default();
    let location = match Location::resolve(settings.value(&CONTRACTS_DB), home, &cwd) {
        Err(e @ (LocationError::TildeWithoutHome | LocationError::HomeItself)) => {
            return Err(format!("--contracts-db / SHIFTWORK_CONTRACTS_DB: {e}"));
        }
        other => other,
    };
    let sync = match settings.value(&CONTRACTS_SYNC) {
        None => shiftwork_contracts::Synchronous::Normal,
        Some(v) => shiftwork_contracts::Synchronous::parse(v).ok_or_else(|| {
            format!(
                "--contracts-sync / SHIFTWORK_CONTRACTS_SYNC must be normal or full, not '{}'",
                shiftwork_seams::echo::clip_echo(v)
            )
        })?,
    };
    // `Registry::build` has refused a variable that is neither on nor off (issue 12 item 3).
    let require_epoch = settings.switch(&CONTRACTS_REQUIRE_EPOCH);
    let temp = std::env::temp_dir();
    let allowed_roots = AllowedRoots::from_values(
        settings.value(&CONTRACTS_ROOTS),
        home,
        &temp.display().to_string(),
    )
    .map_err(|e| format!("--contracts-roots / SHIFTWORK_CONTRACTS_ROOTS: {e}"))?;
    // An invalid --agent flag is a start-up error; an invalid AGENT_NAME is answered per call with
    // INVALID_ARGUMENT { argument: "AGENT_NAME" } as CT-88 and scenario S29 require, so a bad variable
    // does not take the other tool groups down with it.
    let agent = DefaultAgent::from_value(settings.value(&AGENT), "AGENT_NAME");
    if let Some(a) = settings.flag(&AGENT)
        && matches!(agent, DefaultAgent::Invalid { .. })
    {
        return Err(format!(
            "--agent must be 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit, not '{}'",
            shiftwork_seams::echo::clip_echo(a)
        ));
    }
    let mut builder = ContractsConfig::builder()
        .require_claim_epoch(require_epoch)
        .allowed_roots(allowed_roots);
    if let Some(v) = settings.value(&CONTRACTS_RETENTION) {
        let kept = shiftwork_contracts::parse_retention(v)
            .map_err(|e| format!("--contracts-retention / SHIFTWORK_CONTRACTS_RETENTION: {e}"))?;
        builder = builder.finished_retention(kept);
    }
    let contracts = builder.build().map_err(|e| e.to_string())?;
    Ok(Config {
        location,
        sync,
        contracts,
        agent,
    })
}

/// The facade, opened on first use (the crate's reopen policy), and the default identity.
pub struct Lazy {
    contracts: LazyContracts,
    agent: DefaultAgent,
    progress_every: Duration,
}

impl Lazy {
    /// A facade that opens `config`'s store on first use, its events counted in the server's metrics.
    pub fn new(config: Config) -> Self {
        Lazy {
            contracts: LazyContracts::new(config.location, config.sync, config.contracts)
                .with_observer(Arc::new(count_event)),
            agent: config.agent,
            progress_every: PROGRESS_EVERY,
        }
    }

    /// An already opened facade (tests, embedders); `agent` is the default identity as configured.
    pub fn ready(contracts: Arc<Contracts>, agent: Option<String>) -> Self {
        Lazy {
            contracts: LazyContracts::ready(contracts),
            agent: DefaultAgent::from_value(agent.as_deref(), "AGENT_NAME"),
            progress_every: PROGRESS_EVERY,
        }
    }

    /// The same facade reporting a waiting poll's progress every `every` instead of
    /// [`PROGRESS_EVERY`] (tests).
    pub fn with_progress_every(mut self, every: Duration) -> Self {
        self.progress_every = every;
        self
    }

    /// The facade, or the store failure that keeps it closed.
    pub fn contracts(&self) -> Result<Arc<Contracts>, StoreError> {
        self.contracts.get()
    }

    /// The queue gauges' rows (status, target agent or "", contracts), read from the store if it is
    /// open already: a scrape never opens (or creates) a store. Each status once, except `SUBMITTED`,
    /// given per target agent (one row with no agent when none waits), so that the rows of one status
    /// add up to its contracts.
    pub fn queue_gauges(&self) -> Result<Vec<(String, String, u64)>, String> {
        let Some(contracts) = self.contracts.opened() else {
            return Ok(Vec::new());
        };
        let depth = contracts.queue_depth().map_err(|r| r.message().to_owned())?;
        Ok(gauge_rows(&depth))
    }

    /// Runs `tool`: the answer object, or `STORE_UNAVAILABLE`, with the adapter's hints.
    pub fn call(&self, tool: &str, args: &Map<String, Value>) -> Value {
        answer_object(self.call_in(tool, args, &CallContext::default()))
    }

    /// [`Lazy::call`] within the MCP call's `context`: every contracts call gets the call's
    /// cancellation — a poll, waiting or not, ends with nothing claimed when the client cancels the
    /// request (`notifications/cancelled`), a call reading files stops there and keeps nothing — and
    /// a waiting poll reports progress every 10 s when the client asked for progress (a
    /// `progressToken`). A read-only tool at a location where no store exists yet creates nothing
    ///: it answers as over an empty store, `inspect_mesh_state` with a `note` that names
    /// the setting. The refusal stays typed (the tool's handler renders it with the adapter's
    /// hints), so the server's telemetry reads its code.
    pub fn call_in(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        context: &CallContext,
    ) -> Result<Value, ContractRefusal> {
        match self.start_in(tool, args, context) {
            Step::Answered(answer) => answer,
            Step::Waiting(waiting) => {
                let cancel = waiting.cancel().clone();
                delivered(waiting.finish(), &cancel)
            }
        }
    }

    /// [`Lazy::call_in`] as the handler runs it: a waiting poll with nothing to claim yet is parked
    /// as state when the transport can hold it so ([`CallContext::parks`], over HTTP), and waits on
    /// this thread otherwise.
    fn outcome_in(&self, tool: &str, args: &Map<String, Value>, context: &CallContext) -> Answered {
        let waiting = match self.start_in(tool, args, context) {
            Step::Answered(answer) => return answered(answer),
            Step::Waiting(waiting) if context.parks() => waiting,
            Step::Waiting(waiting) => {
                let every = self.progress_every;
                let _progress = context.wants_progress().then(|| {
                    Progress::start(
                        context.clone(),
                        wait_total(args),
                        every,
                        Arc::clone(waiting.clock()),
                    )
                });
                let cancel = waiting.cancel().clone();
                return answered(delivered(waiting.finish(), &cancel));
            }
        };
        let progress = context.wants_progress().then(|| ParkProgress {
            started: waiting.clock().monotonic(),
            every: self.progress_every,
            total: wait_total(args),
            message: PROGRESS_MESSAGE,
        });
        park(context, waiting, progress)
    }

    /// Starts `tool` within `context`: the answer, or a waiting poll to park or wait for.
    fn start_in(&self, tool: &str, args: &Map<String, Value>, context: &CallContext) -> Step {
        let target = match self.contracts.for_tool(tool) {
            Ok(target) => target,
            Err(e) => return Step::Answered(Err(e.to_refusal())),
        };
        let cancel = Cancel::new();
        let on_cancel = cancel.clone();
        context.on_cancel(move || on_cancel.cancel());
        // Registered before the call can claim anything: a poll's claim whose answer the transport
        // drops — the client cancelled or went away at any step — goes back to the queue.
        let undeliver = cancel.clone();
        context.on_undelivered(move || undeliver.undeliver());
        // Over HTTP a waiting call must still hold its caller's credentials when it claims and when
        // it answers: a token revoked (a JWT expired, its key withdrawn) meanwhile claims nothing.
        if let Some(check) = context.credential_check() {
            cancel.require(move || check());
        }
        // Over HTTP the caller's credentials say who it is: every identity argument defaults to that
        // agent, and one naming another is refused before the store is asked.
        let authenticated = context
            .agent()
            .and_then(|a| AgentId::new(a).ok())
            .map(DefaultAgent::Authenticated);
        let default = authenticated.as_ref().unwrap_or(&self.agent);
        match target.start(tool, args, default, &cancel) {
            Step::Answered(answer) if tool == "poll_next_task" => Step::Answered(delivered(answer, &cancel)),
            step => step,
        }
    }
}

/// The message of a waiting poll's progress reports.
const PROGRESS_MESSAGE: &str = "waiting for a contract";

/// The `total` of a waiting poll's progress: its `wait_sec`.
fn wait_total(args: &Map<String, Value>) -> Option<f64> {
    args.get("wait_sec").and_then(Value::as_f64)
}

/// A poll's answer, made: from here the transport sends it or drops it (the test pause point
/// `poll-answered`, between the two).
fn delivered(answer: Result<Value, ContractRefusal>, cancel: &Cancel) -> Result<Value, ContractRefusal> {
    shiftwork_contracts::failpoints::pause("poll-answered", cancel);
    answer
}

/// Parks `waiting` through `context`: the transport resumes it on a worker once woken or due, and it
/// answers or parks again.
fn park(context: &CallContext, waiting: WaitingCall, progress: Option<ParkProgress>) -> Answered {
    let wake = waiting.wake().clone();
    let clock = Arc::clone(waiting.clock());
    let until = waiting.until();
    let resumed = context.clone();
    let cancel = waiting.cancel().clone();
    context.park(Park {
        wake,
        clock,
        until,
        progress,
        resume: Box::new(move || match waiting.resume() {
            Step::Answered(answer) => answered(delivered(answer, &cancel)),
            Step::Waiting(next) => park(&resumed, next, progress),
        }),
    })
}

/// A contracts call's answer (the success's object, or the refusal's with its code), with the
/// adapter's hints.
fn answered(result: Result<Value, ContractRefusal>) -> Answered {
    let code = result.as_ref().err().map(|refusal| refusal.code());
    let outcome = Outcome::Answer(answer_object(result), TextStyle::Compact);
    match code {
        None => Answered::result(outcome),
        Some(code) => Answered::refusal(code, outcome),
    }
}

/// The answer object of a contracts call, with the adapter's hints.
fn answer_object(result: Result<Value, ContractRefusal>) -> Value {
    let mut answer = result.unwrap_or_else(|refusal| refusal.to_json());
    add_hint(&mut answer);
    answer
}

/// Counts a queue event in the server's metrics (the claim-to-fulfil time of a delivery too).
fn count_event(event: &ContractEvent) {
    crate::telemetry::contracts_event(event.name());
    if let ContractEvent::Fulfilled { claim_to_fulfil, .. } = event {
        crate::telemetry::contracts_claim_to_fulfil(*claim_to_fulfil);
    }
}

/// The rows of [`Lazy::queue_gauges`].
fn gauge_rows(depth: &QueueDepth) -> Vec<(String, String, u64)> {
    let mut rows = Vec::new();
    for status in Status::ALL {
        if status != Status::Submitted || depth.submitted_by_target.is_empty() {
            rows.push((
                status.as_str().to_owned(),
                String::new(),
                depth.by_status.of(status),
            ));
        }
    }
    for (agent, waiting) in &depth.submitted_by_target {
        rows.push((Status::Submitted.as_str().to_owned(), agent.to_string(), *waiting));
    }
    rows
}

/// How often a waiting poll reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Progress reports of a waiting call, every `every` until dropped: `progress` is the seconds waited,
/// `total` the `wait_sec` asked for. The reports are timed on the facade's clock, as the wait itself
/// is (every wait ends by the clock it was given).
struct Progress {
    stop: shiftwork_seams::Signal,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(
        context: CallContext,
        total: Option<f64>,
        every: Duration,
        clock: Arc<dyn shiftwork_seams::Clock>,
    ) -> Progress {
        let stop = shiftwork_seams::Signal::new();
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name(String::from("contracts-progress"))
            .spawn(move || {
                let started = clock.monotonic();
                let mut next = started;
                loop {
                    next = next.saturating_add(every);
                    if clock.wait_until(&stopped, next) {
                        return;
                    }
                    let waited = clock.monotonic().saturating_sub(started).as_secs_f64().round();
                    context.progress(waited, total, Some(PROGRESS_MESSAGE));
                }
            })
            .ok();
        Progress { stop, thread }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.notify();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Appends to a refusal's message the flag or variable to check, where one helps (the library's own
/// sentences name none), and to the `note` of an answer over a store that does not exist yet the
/// setting that names its location.
fn add_hint(answer: &mut Value) {
    if let Some(Value::String(note)) = answer.get_mut("note") {
        note.push_str(
            " The location is --contracts-db / SHIFTWORK_CONTRACTS_DB (default ~/.shiftwork/contracts.db).",
        );
    }
    let Some(error) = answer.get_mut("error") else {
        return;
    };
    let hint = match (
        error["code"].as_str(),
        error["details"]["argument"].as_str(),
        error["details"]["reason"].as_str(),
    ) {
        (Some("STORE_UNAVAILABLE"), _, _) => " Check --contracts-db / SHIFTWORK_CONTRACTS_DB.",
        (Some("AGENT_ID_REQUIRED"), _, _) => " The server's default is --agent or AGENT_NAME.",
        (Some("INVALID_ARGUMENT"), Some("AGENT_NAME"), _) => " Fix AGENT_NAME (or give --agent).",
        (Some("WORKSPACE_ROOT_INVALID"), _, Some("OUTSIDE_ALLOWED_ROOTS")) => {
            " Allow more with --contracts-roots / SHIFTWORK_CONTRACTS_ROOTS."
        }
        _ => return,
    };
    if let Some(Value::String(message)) = error.get_mut("message") {
        message.push_str(hint);
    }
}

fn build(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    let config = config(settings)?;
    let lazy = Arc::new(Lazy::new(config));
    // The queue gauges read this group's store (telemetry reads them at most once per interval).
    let weak = Arc::downgrade(&lazy);
    crate::telemetry::set_queue_reader(Box::new(move || {
        weak.upgrade().map_or(Ok(Vec::new()), |lazy| lazy.queue_gauges())
    }));
    Ok(tools(lazy))
}

/// An unknown argument: the library's refusal, the one place its sentence is written.
fn unknown_argument(_tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    answered(Err(shiftwork_contracts::args::unknown_argument(key, known)))
}

/// The descriptor parts fixed per tool: title, description, hints.
fn descriptor(name: &str) -> (&'static str, &'static str, Hints) {
    match name {
        "dispatch_contract" => ("Dispatch contract", DISPATCH, Hints::local(false, false, false)),
        "poll_next_task" => ("Poll next task", POLL, Hints::local(false, false, false)),
        "extend_ttl" => ("Extend lease", EXTEND, Hints::local(false, false, false)),
        "release_contract" => ("Release contract", RELEASE, Hints::local(false, false, false)),
        "fail_contract" => ("Fail contract", FAIL, Hints::local(false, true, false)),
        "fulfill_contract" => ("Fulfil contract", FULFILL, Hints::local(false, false, false)),
        "verify_contract" => ("Verify contract files", VERIFY, Hints::READ_ONLY),
        "inspect_mesh_state" => ("Inspect contracts", INSPECT, Hints::READ_ONLY),
        _ => ("Cancel contract", CANCEL, Hints::local(false, true, true)),
    }
}

/// The tools over `lazy`, in the order of the crate's argument tables.
pub fn tools(lazy: Arc<Lazy>) -> Vec<ToolDef> {
    shiftwork_contracts::args::TOOLS
        .iter()
        .map(|tool| {
            let (title, description, hints) = descriptor(tool.name);
            let lazy = lazy.clone();
            let name = tool.name;
            ToolDef {
                name,
                title,
                description,
                input_schema: schema::input(tool),
                output_schema: schema::output(name),
                hints,
                unknown_argument,
                handler: Arc::new(move |args| lazy.outcome_in(name, args.map(), args.context())),
                prefetch: None,
            }
        })
        .collect()
}

// The tools' descriptions: CT-94's texts (cancel_contract's, CT-183, is this crate's own), then what
// issue 35 item 1 adds in as few words: what it answers, and which tool fits better when. That every
// tool works on the store and never on a file is said once, in the group's instructions.
const DISPATCH: &str = "Queue a contract for another agent. Each pointer (a file path under workspace_root) is pinned by size and SHA-256 so the receiver works on exactly the files you read; paths leaving the root, symlinks pointing out of it and secret-bearing files are refused. The contract waits SUBMITTED for queue_ttl_sec (default 14400) and runs under a lease of exec_ttl_sec (default 1800); it can never live past 4 × queue_ttl_sec. Give idempotency_key to make retries safe. Follow it with inspect_mesh_state. Writes the store, never a file; answers contract_id, deadlines and fingerprints.";
const POLL: &str = "Claim the oldest SUBMITTED contract addressed to you (agent_id, default AGENT_NAME) and check that its pointer files are unchanged: existence, then size, then SHA-256. A contract whose files changed is closed POINTER_STALE and the next one is tried. The reply carries claim_epoch; pass it to extend_ttl, release_contract, fail_contract and fulfill_contract. The lease lasts exec_ttl_sec; renew it with extend_ttl. To look without claiming, use inspect_mesh_state. Answers has_task, and the contract claimed.";
const EXTEND: &str = "Renew the lease of a contract you hold: the execution window restarts now for its full exec_ttl_sec. At most 5 renewals per claim, and never past the lifetime ceiling (created_at + 4 × queue_ttl_sec). A lease that already ran out cannot be renewed; the contract is then TIMED_OUT. Answers the new expires_at and renewals left.";
const RELEASE: &str = "Hand a contract you hold back to the queue, behind the contracts already waiting, for the same target agent. At most 3 releases per contract; its count of schema-invalid deliveries is kept. Your claim_epoch stops working. Answers the new queue deadline; fail_contract gives up for good.";
const FAIL: &str = "Close a contract you hold as FAILED, with a reason. If your lease had already run out, the contract stays TIMED_OUT and your reason is recorded. Answers the status it ended in; release_contract hands it back unfinished.";
const FULFILL: &str = "Deliver the result of a contract you hold: result_summary, optional structured_output (checked against the contract's contract_schema) and optional artifacts_pointers (files you produced; they are fingerprinted). The pointer files must still match their baseline: the first mismatch answers RETRY_NEEDED and renews your lease once, the next closes the contract POINTER_STALE. The third schema-invalid delivery closes it FAILED. Never edit pointer files; put proposed changes in structured_output, e.g. under fixes. Writes the store, never a file; answers COMPLETED.";
const VERIFY: &str = "Compare a contract's pointer files with their baseline without changing anything. Lists every drifted file (FILE_MISSING, SIZE_MISMATCH, CONTENT_CHANGED, PATH_REFUSED) with a restore hint and says whether fulfill_contract would pass its file check for you now. Uses up no retry. Use it before fulfill_contract when files may have moved.";
const CANCEL: &str = "Withdraw a contract you dispatched; it ends CANCELLED and its holder is told at its next call. Cancelling again changes nothing. Answers whether it was held and by whom. A holder uses fail_contract or release_contract.";
const INSPECT: &str = "Read contracts without claiming or changing them. Filter by target_agent, requester_agent, status or contract_id; newest first, paged with limit and cursor; counts per status included. Contracts past a deadline that no sweep has recorded yet show is_logically_expired. With contract_id, returns the full record, including results and failure causes. To take work, use poll_next_task.";

fn demo_settings(root: &Path) -> Vec<(&'static Setting, String)> {
    vec![
        (
            &CONTRACTS_DB,
            root.join("contracts-demo.db").display().to_string(),
        ),
        (&CONTRACTS_ROOTS, root.display().to_string()),
        (&AGENT, String::from("alice")),
    ]
}

/// alice's first dispatch, made from another connection to the demo's database half a second after
/// bob started waiting (as alice's own server would).
fn dispatch_later(root: &Path, workspace: &Path) -> std::io::Result<()> {
    use shiftwork_contracts::DispatchRequest;
    let db = root.join("contracts-demo.db");
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new([root]))
        .build()
        .map_err(std::io::Error::other)?;
    let lazy = LazyContracts::new(
        Ok(Location::File(db)),
        shiftwork_contracts::Synchronous::Normal,
        config,
    );
    let contracts = lazy.get().map_err(std::io::Error::other)?;
    let alice = AgentId::new("alice").map_err(std::io::Error::other)?;
    let bob = AgentId::new("bob").map_err(std::io::Error::other)?;
    let request = DispatchRequest {
        contract_schema: json!({"type": "object", "required": ["verdict"],
                                "properties": {"verdict": {"enum": ["approve", "reject"]}}})
        .as_object()
        .cloned(),
        ..DispatchRequest::new(alice, bob, "Review add()", workspace.display().to_string())
            .pointers(["src/lib.rs"])
    };
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        // Should it fail, bob's wait ends after its wait_sec with nothing claimed.
        let _ = contracts.dispatch(&request);
    });
    Ok(())
}

fn demo(root: &Path) -> Vec<DemoStep> {
    let workspace = root.join("workspace");
    let file = workspace.join("src").join("lib.rs");
    let ws = workspace.display().to_string();
    let later = (root.to_path_buf(), workspace.clone());
    vec![
        DemoStep::Say(String::from(
            "bob waits for work instead of polling; alice (AGENT_NAME) asks him to review a file and he wakes at once, claims it and delivers a verdict; then alice withdraws a second contract.",
        )),
        DemoStep::Prepare(
            format!("write {}", file.display()),
            Box::new(move || {
                std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/")))?;
                std::fs::write(&file, "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
            }),
        ),
        DemoStep::Prepare(
            String::from(
                "in half a second, alice dispatches \"Review add()\" to bob from her own connection",
            ),
            Box::new(move || dispatch_later(&later.0, &later.1)),
        ),
        DemoStep::Call("poll_next_task", json!({"agent_id": "bob", "wait_sec": 10})),
        DemoStep::CallWith(
            "fulfill_contract",
            Box::new(|answers: &[Value]| {
                let held = answers.last().map(|a| a["contract"].clone()).unwrap_or_default();
                json!({"contract_id": held["contract_id"], "claim_epoch": held["claim_epoch"], "agent_id": "bob",
                       "result_summary": "Looks right.", "structured_output": {"verdict": "approve"}})
            }),
        ),
        DemoStep::Call(
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "Rename add() to sum()", "workspace_root": ws,
                   "pointers": ["src/lib.rs"], "task_type": "implementation", "max_deliveries": 3}),
        ),
        DemoStep::CallWith(
            "cancel_contract",
            Box::new(|answers: &[Value]| {
                let id = answers
                    .last()
                    .map(|a| a["contract_id"].clone())
                    .unwrap_or_default();
                json!({"contract_id": id, "reason": "Keeping the name after all."})
            }),
        ),
        DemoStep::CallWith(
            "inspect_mesh_state",
            Box::new(|answers: &[Value]| {
                let id = answers
                    .first()
                    .map(|a| a["contract"]["contract_id"].clone())
                    .unwrap_or_default();
                json!({"contract_id": id})
            }),
        ),
    ]
}
