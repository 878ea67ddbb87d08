//! The `contracts` tool group (contracts.md §7): the eight tools over `shiftwork_contracts::Contracts`.
//!
//! The handlers are thin: they hand the argument object to `shiftwork_contracts::args::call`, which decodes it
//! in the tool's argument order, runs the operation and returns the answer object (CT-82, CT-83). The
//! store is opened on the first contracts call, never at start-up (CT-90).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use shiftwork_contracts::{Contracts, ContractsConfig, OsIdSource, Store, StoreError};
use shiftwork_seams::{Clock, OsFs, SystemClock};

use crate::registry::{DemoStep, Group, Hints, Outcome, TextStyle, ToolDef};

mod schema;
use crate::settings::{Setting, Settings};

/// `--contracts-db` / `SHIFTWORK_CONTRACTS_DB` (CT-91, CT-135).
pub static CONTRACTS_DB: Setting = Setting {
    flag: "--contracts-db",
    env: Some("SHIFTWORK_CONTRACTS_DB"),
    takes_value: true,
    help: "contracts store: a file path or a postgres:// URL (default ~/.shiftwork/contracts.db)",
};

/// `--contracts-sync` / `SHIFTWORK_CONTRACTS_SYNC` (CT-138).
pub static CONTRACTS_SYNC: Setting = Setting {
    flag: "--contracts-sync",
    env: Some("SHIFTWORK_CONTRACTS_SYNC"),
    takes_value: true,
    help: "SQLite synchronous mode of the contracts store: normal or full (default normal)",
};

/// `--contracts-require-epoch` / `SHIFTWORK_CONTRACTS_REQUIRE_EPOCH` (CT-125).
pub static CONTRACTS_REQUIRE_EPOCH: Setting = Setting {
    flag: "--contracts-require-epoch",
    env: Some("SHIFTWORK_CONTRACTS_REQUIRE_EPOCH"),
    takes_value: false,
    help: "refuse contract holder calls without claim_epoch",
};

/// `--agent` / `AGENT_NAME` (CT-88).
pub static AGENT: Setting = Setting {
    flag: "--agent",
    env: Some("AGENT_NAME"),
    takes_value: true,
    help: "this agent's identity, the default of every agent argument of the contracts tools",
};

static SETTINGS: [Setting; 4] = [CONTRACTS_DB, CONTRACTS_SYNC, CONTRACTS_REQUIRE_EPOCH, AGENT];

/// The group.
pub static GROUP: Group = Group {
    name: "contracts",
    instructions: "contracts: hand work to another agent and take work handed to you — dispatch_contract, poll_next_task, extend_ttl, release_contract, fail_contract, fulfill_contract, verify_contract, inspect_mesh_state.",
    settings: &SETTINGS,
    build,
    demo_settings,
    demo,
    try_next: &[
        "AGENT_NAME=bob shiftwork-mcp call poll_next_task '{}'",
        "shiftwork-mcp call inspect_mesh_state '{\"limit\": 5}'",
    ],
    command: None,
};

/// Where the store lives (CT-135).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    File(PathBuf),
    /// A PostgreSQL URL.
    Postgres(String),
    /// No location could be worked out (no home directory for the default); the reason.
    Unknown(String),
}

/// The resolved settings of the group.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store's location.
    pub location: Location,
    /// SQLite `synchronous`.
    pub sync: shiftwork_contracts::Synchronous,
    /// `require_claim_epoch`.
    pub require_epoch: bool,
    /// The default identity, as given (validated per call, CT-88).
    pub agent: Option<String>,
}

/// Resolves the settings; an invalid value is a start-up error (CT-91).
pub fn config(settings: &Settings) -> Result<Config, String> {
    let location = match settings.value(&CONTRACTS_DB) {
        Some(v) if v.starts_with("postgres://") || v.starts_with("postgresql://") => {
            Location::Postgres(v.to_owned())
        }
        Some(v) => Location::File(expand(v, settings.env("HOME"))?),
        None => match settings.env("HOME") {
            Some(home) => Location::File(Path::new(home).join(".shiftwork").join("contracts.db")),
            None => Location::Unknown(String::from(
                "no home directory for the default location; set --contracts-db or SHIFTWORK_CONTRACTS_DB",
            )),
        },
    };
    let sync = match settings.value(&CONTRACTS_SYNC) {
        None => shiftwork_contracts::Synchronous::Normal,
        Some(v) => shiftwork_contracts::Synchronous::parse(v).ok_or_else(|| {
            format!("--contracts-sync / SHIFTWORK_CONTRACTS_SYNC must be normal or full, not '{v}'")
        })?,
    };
    // `Registry::build` has refused a variable that is neither on nor off (issue 12 item 3).
    let require_epoch = settings.switch(&CONTRACTS_REQUIRE_EPOCH);
    // An invalid --agent flag is a start-up error; an invalid AGENT_NAME is answered per call with
    // INVALID_ARGUMENT { argument: "AGENT_NAME" } as CT-88 and scenario S29 require, so a bad variable
    // does not take the other tool groups down with it.
    let agent = settings.value(&AGENT).map(str::to_owned);
    if let Some(a) = &agent
        && settings.flag(&AGENT).is_some()
        && shiftwork_contracts::AgentId::parse(a).is_none()
    {
        return Err(format!(
            "--agent must be 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit, not '{a}'"
        ));
    }
    Ok(Config {
        location,
        sync,
        require_epoch,
        agent,
    })
}

fn expand(value: &str, home: Option<&str>) -> Result<PathBuf, String> {
    let path = if let Some(rest) = value.strip_prefix("~/") {
        let home = home.ok_or("--contracts-db starts with ~ but HOME is not set")?;
        Path::new(home).join(rest)
    } else if value == "~" {
        return Err(String::from(
            "--contracts-db must name a file, not the home directory",
        ));
    } else {
        PathBuf::from(value)
    };
    if path.is_absolute() {
        return Ok(path);
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot resolve the relative --contracts-db: {e}"))?;
    Ok(cwd.join(path))
}

/// An opened store and the clock its facade reads (the server's clock for PostgreSQL, CT-148).
pub type Opened = (Arc<dyn Store>, Arc<dyn Clock>);

/// Opens the store of `location` (the first contracts call does this, CT-90).
pub fn open_store(
    location: &Location,
    sync: shiftwork_contracts::Synchronous,
    clock: Arc<dyn Clock>,
) -> Result<Opened, StoreError> {
    match location {
        Location::Unknown(why) => Err(StoreError::Unavailable(why.clone())),
        Location::File(path) => {
            let options = shiftwork_contracts::SqliteOptions {
                synchronous: sync,
                ..shiftwork_contracts::SqliteOptions::default()
            };
            let store = shiftwork_contracts::SqliteStore::open(path, options, clock.clone(), &OsFs)?;
            Ok((Arc::new(store), clock))
        }
        Location::Postgres(url) => open_postgres(url),
    }
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &str) -> Result<Opened, StoreError> {
    let store = shiftwork_contracts::PgStore::connect(url, shiftwork_contracts::PgOptions::default())?;
    let clock = store.server_clock();
    Ok((Arc::new(store), clock))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(_url: &str) -> Result<Opened, StoreError> {
    Err(StoreError::Unavailable(String::from(
        "built without PostgreSQL support",
    )))
}

/// The facade, opened on first use; a failed open is remembered until the process restarts (CT-90).
pub struct Lazy {
    config: Config,
    opened: Mutex<Option<Result<Arc<Contracts>, StoreError>>>,
}

impl Lazy {
    /// A facade that opens `config`'s store on first use.
    pub fn new(config: Config) -> Self {
        Lazy {
            config,
            opened: Mutex::new(None),
        }
    }

    /// An already opened facade (tests, embedders).
    pub fn ready(contracts: Arc<Contracts>, agent: Option<String>) -> Self {
        Lazy {
            config: Config {
                location: Location::Unknown(String::from("opened by the caller")),
                sync: shiftwork_contracts::Synchronous::Normal,
                require_epoch: contracts.config().require_claim_epoch,
                agent,
            },
            opened: Mutex::new(Some(Ok(contracts))),
        }
    }

    fn get(&self) -> Result<Arc<Contracts>, StoreError> {
        // The slot only ever holds a finished result; a panic cannot leave it half-written.
        let mut slot = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
            let opened = open_store(&self.config.location, self.config.sync, clock).map(|(store, clock)| {
                let config = ContractsConfig {
                    require_claim_epoch: self.config.require_epoch,
                    ..ContractsConfig::default()
                };
                Arc::new(Contracts::new(
                    store,
                    clock,
                    Arc::new(OsFs),
                    Arc::new(OsIdSource),
                    config,
                ))
            });
            match opened {
                // A busy lock at opening is transient: answer STORE_BUSY and try again next call.
                Err(e @ StoreError::Busy(_)) => return Err(e),
                Err(StoreError::Unavailable(why)) => *slot = Some(Err(StoreError::Unavailable(why))),
                Err(other) => *slot = Some(Err(StoreError::Unavailable(other.to_string()))),
                Ok(c) => *slot = Some(Ok(c)),
            }
        }
        match slot.as_ref() {
            Some(Ok(c)) => Ok(c.clone()),
            Some(Err(e)) => Err(e.clone()),
            None => Err(StoreError::Unavailable(String::from("the store was not opened"))),
        }
    }

    /// Runs `tool` (CT-82): the answer object, or `STORE_UNAVAILABLE`.
    pub fn call(&self, tool: &str, args: &Map<String, Value>) -> Value {
        match self.get() {
            Ok(c) => shiftwork_contracts::args::call(&c, tool, args, self.config.agent.as_deref()),
            Err(e) => e.to_refusal().to_json(),
        }
    }
}

fn build(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    let config = config(settings)?;
    Ok(tools(Arc::new(Lazy::new(config))))
}

fn unknown_argument(tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Outcome {
    let _ = tool;
    Outcome::Answer(
        shiftwork_contracts::args::unknown_argument(key, known).to_json(),
        TextStyle::Compact,
    )
}

/// The eight tools over `lazy`, in the order of §7.2 (CT-81).
pub fn tools(lazy: Arc<Lazy>) -> Vec<ToolDef> {
    let defs: [(&'static str, &'static str, &'static str, Hints); 8] = [
        (
            "dispatch_contract",
            "Dispatch contract",
            DISPATCH,
            Hints::local(false, false, false),
        ),
        (
            "poll_next_task",
            "Poll next task",
            POLL,
            Hints::local(false, false, false),
        ),
        (
            "extend_ttl",
            "Extend lease",
            EXTEND,
            Hints::local(false, false, false),
        ),
        (
            "release_contract",
            "Release contract",
            RELEASE,
            Hints::local(false, false, false),
        ),
        (
            "fail_contract",
            "Fail contract",
            FAIL,
            Hints::local(false, true, false),
        ),
        (
            "fulfill_contract",
            "Fulfil contract",
            FULFIL,
            Hints::local(false, false, false),
        ),
        (
            "verify_contract",
            "Verify contract files",
            VERIFY,
            Hints::READ_ONLY,
        ),
        (
            "inspect_mesh_state",
            "Inspect contracts",
            INSPECT,
            Hints::READ_ONLY,
        ),
    ];
    defs.into_iter()
        .map(|(name, title, description, hints)| {
            let lazy = lazy.clone();
            ToolDef {
                name,
                title,
                description,
                input_schema: schema::input(name),
                output_schema: schema::output(name),
                hints,
                unknown_argument,
                handler: Arc::new(move |args| {
                    Outcome::Answer(lazy.call(name, args.map()), TextStyle::Compact)
                }),
            }
        })
        .collect()
}

const DISPATCH: &str = "Queue a contract for another agent. Each pointer (a file path under workspace_root) is pinned by size and SHA-256 so the receiver works on exactly the files you read; paths leaving the root, symlinks pointing out of it and secret-bearing files are refused. The contract waits SUBMITTED for queue_ttl_sec (default 14400) and runs under a lease of exec_ttl_sec (default 1800); it can never live past 4 × queue_ttl_sec. Give idempotency_key to make retries safe. Follow it with inspect_mesh_state.";
const POLL: &str = "Claim the oldest SUBMITTED contract addressed to you (agent_id, default AGENT_NAME) and check that its pointer files are unchanged: existence, then size, then SHA-256. A contract whose files changed is closed POINTER_STALE and the next one is tried. The reply carries claim_epoch; pass it to extend_ttl, release_contract, fail_contract and fulfill_contract. The lease lasts exec_ttl_sec; renew it with extend_ttl. To look without claiming, use inspect_mesh_state.";
const EXTEND: &str = "Renew the lease of a contract you hold: the execution window restarts now for its full exec_ttl_sec. At most 5 renewals per claim, and never past the lifetime ceiling (created_at + 4 × queue_ttl_sec). A lease that already ran out cannot be renewed; the contract is then TIMED_OUT.";
const RELEASE: &str = "Hand a contract you hold back to the queue, behind the contracts already waiting, for the same target agent. At most 3 releases per contract; its count of schema-invalid deliveries is kept. Your claim_epoch stops working.";
const FAIL: &str = "Close a contract you hold as FAILED, with a reason. If your lease had already run out, the contract stays TIMED_OUT and your reason is recorded.";
const FULFIL: &str = "Deliver the result of a contract you hold: result_summary, optional structured_output (checked against the contract's contract_schema) and optional artifacts_pointers (files you produced; they are fingerprinted). The pointer files must still match their baseline: the first mismatch answers RETRY_NEEDED and renews your lease once, the next closes the contract POINTER_STALE. The third schema-invalid delivery closes it FAILED. Never edit pointer files; put proposed changes in structured_output, e.g. under fixes.";
const VERIFY: &str = "Compare a contract's pointer files with their baseline without changing anything. Lists every drifted file (FILE_MISSING, SIZE_MISMATCH, CONTENT_CHANGED, PATH_REFUSED) with a restore hint and says whether fulfill_contract would pass its file check for you now. Uses up no retry.";
const INSPECT: &str = "Read contracts without claiming or changing them. Filter by target_agent, requester_agent, status or contract_id; newest first, paged with limit and cursor; counts per status included. Contracts past a deadline that no sweep has recorded yet show is_logically_expired. With contract_id, returns the full record, including results and failure causes.";

fn demo_settings(root: &Path) -> Vec<(&'static Setting, String)> {
    vec![
        (
            &CONTRACTS_DB,
            root.join("contracts-demo.db").display().to_string(),
        ),
        (&AGENT, String::from("alice")),
    ]
}

fn demo(root: &Path) -> Vec<DemoStep> {
    let workspace = root.join("workspace");
    let file = workspace.join("src").join("lib.rs");
    let ws = workspace.display().to_string();
    vec![
        DemoStep::Say(String::from(
            "alice (AGENT_NAME) asks bob to review a file; bob claims the contract and delivers a verdict.",
        )),
        DemoStep::Prepare(
            format!("write {}", file.display()),
            Box::new(move || {
                std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/")))?;
                std::fs::write(&file, "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
            }),
        ),
        DemoStep::Call(
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "Review add()", "workspace_root": ws,
                   "pointers": ["src/lib.rs"],
                   "contract_schema": {"type": "object", "required": ["verdict"],
                                       "properties": {"verdict": {"enum": ["approve", "reject"]}}}}),
        ),
        DemoStep::Call("poll_next_task", json!({"agent_id": "bob"})),
        DemoStep::CallWith(
            "fulfill_contract",
            Box::new(|answers: &[Value]| {
                let held = answers.last().map(|a| a["contract"].clone()).unwrap_or_default();
                json!({"contract_id": held["contract_id"], "claim_epoch": held["claim_epoch"], "agent_id": "bob",
                       "result_summary": "Looks right.", "structured_output": {"verdict": "approve"}})
            }),
        ),
        DemoStep::CallWith(
            "inspect_mesh_state",
            Box::new(|answers: &[Value]| {
                let id = answers
                    .first()
                    .map(|a| a["contract_id"].clone())
                    .unwrap_or_default();
                json!({"contract_id": id})
            }),
        ),
    ]
}
