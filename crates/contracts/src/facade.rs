//! The facade `Contracts` (CT-58): one method per operation, each a sequence of store transactions
//! and file checks run with no transaction open (CT-41).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use shiftwork_seams::echo::clip_echo;
use shiftwork_seams::{Clock, Fs};

use crate::canonical;
use crate::error::{Refusal, RefusalCode, StoreError};
use crate::fingerprint::{self, Accepted, CouldNotRun, PathRefusal, RootReason};
use crate::ids::{IdSource, contract_id_from_bits};
use crate::integrity::IntegrityReport;
use crate::limits::*;
use crate::model::AgentId;
use crate::model::{Contract, Drift, EpochMs, Status, Warning};
use crate::request::{self, DispatchRequest, FulfillRequest, HolderRef, Identity};
use crate::roots::{AllowedRoots, SYSTEM_DIRECTORIES};
use crate::schema::{self, Checked};
use crate::store::{InsertOutcome, Store, SweepReport, epoch_ms};
use crate::transition::{self, Command, Delivery, Holder, Policy, Reply, Revert, Verdict};
use crate::views::*;
use crate::wait::{Cancel, Wake};
use std::time::Duration;

mod inspect;

/// Configuration of the facade (CT-125), plus where workspace roots may lie ([`AllowedRoots`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractsConfig {
    /// Execution TTL when a dispatch gives none (60 ..= 86,400).
    pub default_exec_ttl_sec: u32,
    /// Queue TTL when a dispatch gives none (60 ..= 604,800).
    pub default_queue_ttl_sec: u32,
    /// Refuse holder operations without `claim_epoch` (`EPOCH_REQUIRED`).
    pub require_claim_epoch: bool,
    /// The directories a `workspace_root` must lie in (default: the user's home directory and `/tmp`).
    pub allowed_roots: AllowedRoots,
}

impl Default for ContractsConfig {
    fn default() -> Self {
        ContractsConfig {
            default_exec_ttl_sec: DEFAULT_EXEC_TTL_SEC,
            default_queue_ttl_sec: DEFAULT_QUEUE_TTL_SEC,
            require_claim_epoch: false,
            allowed_roots: AllowedRoots::default(),
        }
    }
}

impl ContractsConfig {
    /// A configuration, refused when a default TTL is outside the bounds of §3.
    ///
    /// ```
    /// use shiftwork_contracts::ContractsConfig;
    /// assert!(ContractsConfig::new(1800, 14400, true).is_ok());
    /// assert!(ContractsConfig::new(59, 14400, false).is_err());
    /// ```
    pub fn new(
        default_exec_ttl_sec: u32,
        default_queue_ttl_sec: u32,
        require_claim_epoch: bool,
    ) -> Result<Self, Refusal> {
        request::ttl(
            "default_exec_ttl_sec",
            i64::from(default_exec_ttl_sec),
            MIN_EXEC_TTL_SEC,
            MAX_EXEC_TTL_SEC,
        )?;
        request::ttl(
            "default_queue_ttl_sec",
            i64::from(default_queue_ttl_sec),
            MIN_QUEUE_TTL_SEC,
            MAX_QUEUE_TTL_SEC,
        )?;
        Ok(ContractsConfig {
            default_exec_ttl_sec,
            default_queue_ttl_sec,
            require_claim_epoch,
            allowed_roots: AllowedRoots::default(),
        })
    }
}

/// The contract queue: one method per operation (CT-58). `Send + Sync`; call it from many threads.
///
/// ```
/// use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, Identity, MemoryStore, SeededIdSource};
/// use shiftwork_contracts::roots::AllowedRoots;
/// use shiftwork_seams::{ManualClock, MemFs};
/// use std::sync::Arc;
///
/// let clock = Arc::new(ManualClock::new(chrono::DateTime::from_timestamp_millis(1_767_225_600_000).unwrap()));
/// let fs = MemFs::new();
/// fs.write_file("/w/src/lib.rs", b"pub fn add() {}\n");
/// // Workspace roots must lie inside an allowed root (default: the home and temporary directories).
/// let config = ContractsConfig { allowed_roots: AllowedRoots::new(["/w"]), ..ContractsConfig::default() };
/// let c = Contracts::new(Arc::new(MemoryStore::new(clock.clone())), clock, Arc::new(fs),
///                        Arc::new(SeededIdSource::new(1)), config);
/// let bob = AgentId::parse("bob").unwrap();
/// let sent = c.dispatch(&DispatchRequest {
///     pointers: Some(vec!["src/lib.rs".into()]),
///     requester_agent: Identity::given("alice").unwrap(),
///     ..DispatchRequest::new(bob.clone(), "Review", "/w")
/// }).unwrap();
/// let polled = c.poll_next_task(&bob.into()).unwrap();
/// assert_eq!(polled.held().unwrap().contract_id, sent.contract_id);
/// ```
pub struct Contracts {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    fs: Arc<dyn Fs>,
    ids: Arc<dyn IdSource>,
    config: ContractsConfig,
}

fn io_refusal(
    contract_id: Option<&str>,
    path: Option<&str>,
    skipped: Option<&[Skipped]>,
    error: &std::io::Error,
) -> Refusal {
    let what = path.map_or_else(|| String::from("the workspace root"), |p| p.to_owned());
    let message = match contract_id {
        // Issue 27: a call cancelled while it read a file stops there; what it had changed is undone.
        _ if fingerprint::is_cancelled(error) => format!(
            "The call was cancelled while it read {}; nothing it did is kept.",
            clip_echo(&what)
        ),
        Some(id) => format!(
            "Checking {what} of contract {id} failed: {}.",
            shiftwork_seams::os_reason(error)
        ),
        None => format!("Reading {what} failed: {}.", shiftwork_seams::os_reason(error)),
    };
    Refusal::new(
        RefusalCode::IoError,
        message,
        vec![
            ("contract_id", json!(contract_id)),
            ("path", json!(path)),
            ("skipped_stale", skipped.map_or(Value::Null, |s| json!(s))),
        ],
    )
}

fn path_refusal(code: RefusalCode, r: &PathRefusal) -> Refusal {
    let noun = if code == RefusalCode::PointerRefused {
        "pointer"
    } else {
        "artifact"
    };
    // The path as the caller wrote it, clipped: a 10 MB path is not echoed back (issue 16).
    let path = r.path.as_deref().map(clip_echo);
    let message = match (&path, r.pattern) {
        (None, _) => format!("At most {MAX_POINTERS} {noun} paths are accepted."),
        (Some(p), Some(pattern)) => format!(
            "The {noun} path '{p}' was refused: {} (matches {pattern}).",
            r.reason.as_str()
        ),
        (Some(p), None) => format!("The {noun} path '{p}' was refused: {}.", r.reason.as_str()),
    };
    Refusal::new(
        code,
        message,
        vec![
            ("path", json!(path)),
            ("reason", json!(r.reason.as_str())),
            ("pattern", json!(r.pattern)),
        ],
    )
}

fn store_err(e: StoreError) -> Refusal {
    e.to_refusal()
}

impl Contracts {
    /// The drift of `record`'s pointers against its baseline (CT-39); a file that cannot be read is
    /// the I/O refusal naming it.
    fn drift_of(&self, record: &Contract, cancel: &Cancel) -> Result<Vec<Drift>, Refusal> {
        fingerprint::verify_cancellable(
            self.fs.as_ref(),
            &record.workspace_root,
            &record.pointers,
            &self.config.allowed_roots,
            cancel,
        )
        .map_err(|failed| io_refusal(Some(&record.contract_id), Some(&failed.path), None, &failed.error))
    }

    /// A facade over `store`, reading time from `clock` for read-only operations, files through `fs`
    /// and id bits from `ids`.
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        fs: Arc<dyn Fs>,
        ids: Arc<dyn IdSource>,
        config: ContractsConfig,
    ) -> Self {
        Contracts {
            store,
            clock,
            fs,
            ids,
            config,
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &ContractsConfig {
        &self.config
    }

    /// The clock the facade reads and waits on (for PostgreSQL on the server's time, the store's
    /// [`crate::PgStore::server_clock`]).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// `WORKSPACE_ROOT_INVALID` for `reason`, the sentence naming the rule.
    fn root_refusal(&self, reason: RootReason) -> Refusal {
        let message = match reason {
            RootReason::SystemDirectory => format!(
                "workspace_root was refused: SYSTEM_DIRECTORY (no workspace root may lie in or under {}, even inside an allowed root).",
                SYSTEM_DIRECTORIES.join(", ")
            ),
            RootReason::OutsideAllowedRoots => format!(
                "workspace_root was refused: OUTSIDE_ALLOWED_ROOTS (a workspace root must lie inside one of the allowed roots: {}).",
                clip_echo(&self.config.allowed_roots.describe())
            ),
            other => format!("workspace_root was refused: {}.", other.as_str()),
        };
        Refusal::new(
            RefusalCode::WorkspaceRootInvalid,
            message,
            vec![("reason", json!(reason.as_str()))],
        )
    }

    fn policy(&self) -> Policy {
        Policy {
            require_claim_epoch: self.config.require_claim_epoch,
        }
    }

    /// Dispatches a contract (CT-61).
    pub fn dispatch(&self, req: &DispatchRequest) -> Result<DispatchOutcome, Refusal> {
        self.dispatch_cancellable(req, &Cancel::new())
    }

    /// [`Contracts::dispatch`] that stops when `cancel` is triggered while it fingerprints the pointer
    /// files (between files and between the chunks of a hash): `IO_ERROR`, nothing stored. Once the
    /// record is inserted the dispatch answers.
    pub fn dispatch_cancellable(
        &self,
        req: &DispatchRequest,
        cancel: &Cancel,
    ) -> Result<DispatchOutcome, Refusal> {
        // Step 1: every argument, in table order, then the schema (the agents are parsed already).
        let target = req.target_agent.clone();
        request::title(&req.title)?;
        if let Some(t) = &req.task_type {
            request::task_type(t)?;
        }
        if let Some(s) = &req.context_summary {
            request::context_summary(s)?;
        }
        let exec = match req.exec_ttl_sec {
            Some(v) => request::ttl("exec_ttl_sec", v, MIN_EXEC_TTL_SEC, MAX_EXEC_TTL_SEC)?,
            None => self.config.default_exec_ttl_sec,
        };
        let queue = match req.queue_ttl_sec {
            Some(v) => request::ttl("queue_ttl_sec", v, MIN_QUEUE_TTL_SEC, MAX_QUEUE_TTL_SEC)?,
            None => self.config.default_queue_ttl_sec,
        };
        if let Some(k) = &req.idempotency_key {
            request::idempotency_key(k)?;
        }
        let deliveries = match req.max_deliveries {
            Some(v) => request::max_deliveries(v)?,
            None => 1,
        };
        if let Some(s) = &req.contract_schema
            && let Err(errors) = schema::accept(s)
        {
            return Err(Refusal::new(
                RefusalCode::ContractSchemaInvalid,
                "contract_schema is not an acceptable JSON Schema (at most 16 KiB, draft 4, 6, 7, 2019-09 or 2020-12, valid against its meta-schema, no external $ref).",
                vec![("validation_errors", json!(errors))],
            ));
        }
        // Step 2: identity.
        let requester = req.requester_agent.resolve("requester_agent")?;
        let payload = payload_sha256(req);
        // Step 3: idempotent replay, read-only.
        if let Some(key) = &req.idempotency_key
            && let Some(existing) = self.store.get_by_key(&requester, key).map_err(store_err)?
        {
            return replay(&existing, &payload);
        }
        // Step 4: the root.
        let root =
            match fingerprint::accept_root(self.fs.as_ref(), &req.workspace_root, &self.config.allowed_roots)
            {
                Ok(Ok(root)) => root,
                Ok(Err(reason)) => return Err(self.root_refusal(reason)),
                Err(CouldNotRun { path, error }) => {
                    return Err(io_refusal(None, path.as_deref(), None, &error));
                }
            };
        // Step 5: the pointers, no transaction open.
        let paths = req.pointers.clone().unwrap_or_default();
        let pointers = match fingerprint::accept_paths_cancellable(
            self.fs.as_ref(),
            &paths,
            &req.workspace_root,
            &root,
            cancel,
        ) {
            Accepted::Pointers(p) => p,
            Accepted::Refused(r) => return Err(path_refusal(RefusalCode::PointerRefused, &r)),
            Accepted::Io(CouldNotRun { path, error }) => {
                return Err(io_refusal(None, path.as_deref(), None, &error));
            }
        };
        if cancel.is_cancelled() {
            return Err(io_refusal(None, None, None, &fingerprint::cancelled()));
        }
        let warnings: Vec<Warning> = pointers
            .iter()
            .filter(|p| p.size > LARGE_POINTER_WARN_BYTES)
            .map(|p| Warning {
                code: String::from("LARGE_POINTER"),
                message: format!(
                    "Pointer {} is {} bytes (above {LARGE_POINTER_WARN_BYTES}); every claim and fulfill hashes it again.",
                    p.path, p.size
                ),
            })
            .collect();
        // Step 6: one write transaction.
        let bits = self.ids.random_bits();
        let build = |now: EpochMs, seq: i64| Contract {
            seq,
            contract_id: contract_id_from_bits(now, bits),
            requester_agent: requester.clone(),
            target_agent: target.clone(),
            idempotency_key: req.idempotency_key.clone(),
            payload_sha256: payload.clone(),
            task_type: req.task_type.clone().unwrap_or_else(|| String::from("review")),
            title: req.title.clone(),
            context_summary: req.context_summary.clone().unwrap_or_default(),
            workspace_root: root.clone(),
            pointers: pointers.clone(),
            contract_schema: req.contract_schema.clone(),
            exec_ttl_sec: exec,
            queue_ttl_sec: queue,
            status: Status::Submitted,
            created_at: now,
            queued_at: now,
            queue_expires_at: now + i64::from(queue) * 1000,
            lifetime_ends_at: now + LIFETIME_FACTOR * i64::from(queue) * 1000,
            claimed_at: None,
            expires_at: None,
            completed_at: None,
            claim_epoch: 0,
            extend_count: 0,
            release_count: 0,
            retry_count: 0,
            toctou_strikes: 0,
            end_reason: None,
            dirty_files: None,
            error_reason: None,
            fail_reason: None,
            result_summary: None,
            structured_output: None,
            artifacts_pointers: None,
            salvaged_result: None,
            max_deliveries: deliveries,
            delivery_count: 0,
            available_at: None,
            cancel_reason: None,
        };
        match self.store.insert(&build).map_err(store_err)? {
            InsertOutcome::Inserted(c) => Ok(dispatched(&c, false, warnings)),
            InsertOutcome::KeyTaken(existing) => replay(&existing, &payload),
        }
    }

    /// Claims the oldest eligible contract of `agent` and verifies its baseline (CT-65).
    pub fn poll_next_task(&self, agent: &Identity) -> Result<PollOutcome, Refusal> {
        self.poll_next_task_wait(agent, Duration::ZERO, &Cancel::new())
    }

    /// [`Contracts::poll_next_task`], waiting up to `wait` for work when none is there (CT-179 …
    /// CT-182): the call waits on the facade's clock ([`Clock::wait_until`]), holding no transaction,
    /// lock or pooled connection, until the store signals that a contract of `agent` may have become
    /// claimable (or a redelivery or a deadline falls due), then runs the poll again; it answers
    /// nothing claimed only once `wait` has passed on that clock (the last poll runs at the deadline).
    /// The answer carries `waited_ms`; with a zero `wait` it is the plain poll, without `waited_ms`.
    ///
    /// `cancel` ends the call with nothing claimed, waiting or not (issue 27: a cancelled call either
    /// answers or undoes what it did): a wait ends at once; a pointer file being hashed is left
    /// between two chunks; a claim the call made is undone (C3, history entry `CLAIM_REVERTED: the
    /// poll was cancelled`, the epoch spent), also when the cancellation arrives after the files were
    /// checked but before the answer.
    ///
    /// ```
    /// use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, Identity, MemoryStore, SeededIdSource};
    /// use shiftwork_contracts::roots::AllowedRoots;
    /// use shiftwork_contracts::wait::Cancel;
    /// use shiftwork_seams::{MemFs, SystemClock};
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let clock = Arc::new(SystemClock::new());
    /// let fs = MemFs::new();
    /// fs.create_dir_all("/w");
    /// let config = ContractsConfig { allowed_roots: AllowedRoots::new(["/w"]), ..ContractsConfig::default() };
    /// let c = Arc::new(Contracts::new(Arc::new(MemoryStore::new(clock.clone())), clock, Arc::new(fs),
    ///                                 Arc::new(SeededIdSource::new(1)), config));
    /// let bob = AgentId::parse("bob").unwrap();
    /// let requester = c.clone();
    /// let target = bob.clone();
    /// std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(50));
    ///     requester.dispatch(&DispatchRequest {
    ///         requester_agent: Identity::given("alice").unwrap(),
    ///         ..DispatchRequest::new(target, "Review", "/w")
    ///     }).unwrap();
    /// });
    /// let polled = c.poll_next_task_wait(&bob.into(), Duration::from_secs(10), &Cancel::new()).unwrap();
    /// assert!(polled.held().is_some(), "woken by the dispatch, not after ten seconds");
    /// ```
    pub fn poll_next_task_wait(
        &self,
        agent: &Identity,
        wait: Duration,
        cancel: &Cancel,
    ) -> Result<PollOutcome, Refusal> {
        let agent = agent.resolve("agent_id")?;
        let mut stale = Vec::new();
        if wait.is_zero() {
            let round = self.poll_round(&agent, &mut stale, cancel)?;
            return Ok(self.answer_round(&agent, round, stale, None));
        }
        let wake = Wake::new();
        cancel.attach(&wake);
        self.store.watch(&agent, &wake).map_err(store_err)?;
        let start = self.clock.monotonic();
        let deadline = start.saturating_add(wait);
        let waited = || self.clock.monotonic().saturating_sub(start);
        let mut first = true;
        loop {
            let round = self.poll_round(&agent, &mut stale, cancel)?;
            let waited_ms = if first { Duration::ZERO } else { waited() };
            if !matches!(round, Round::Empty) || waited() >= wait {
                return Ok(self.answer_round(&agent, round, stale, Some(waited_ms)));
            }
            first = false;
            self.wait_until_due(&agent, deadline, &wake, cancel)?;
        }
    }

    /// The wait phase of a waiting poll: returns when the store signalled, something of `agent` fell
    /// due, the clock reached `deadline` (its [`Clock::monotonic`] time), or the call was cancelled.
    /// Every wait is the clock's ([`Clock::wait_until`]).
    fn wait_until_due(
        &self,
        agent: &AgentId,
        deadline: Duration,
        wake: &Wake,
        cancel: &Cancel,
    ) -> Result<(), Refusal> {
        loop {
            let mono = self.clock.monotonic();
            if cancel.is_cancelled() || mono >= deadline {
                return Ok(());
            }
            let now = epoch_ms(self.clock.as_ref());
            let due = self.store.due(agent, now).map_err(store_err)?;
            if due.claimable {
                return Ok(());
            }
            // When a redelivery or a deadline of the agent's records falls due (CT-180).
            let falls_due = due
                .next_at
                .map(|at| mono.saturating_add(Duration::from_millis(u64::try_from(at - now).unwrap_or(0))));
            // The safety net: a signal lost (a reconnecting listener) costs at most WAIT_RECHECK.
            let mut until = deadline.min(mono.saturating_add(WAIT_RECHECK));
            if let Some(d) = falls_due {
                until = until.min(d);
            }
            if self.clock.wait_until(wake, until) {
                return Ok(());
            }
            if falls_due.is_some_and(|d| self.clock.monotonic() >= d) {
                return Ok(());
            }
        }
    }

    fn answer_round(
        &self,
        agent: &AgentId,
        round: Round,
        stale: Vec<Skipped>,
        waited: Option<Duration>,
    ) -> PollOutcome {
        let waited_ms = waited.map(millis);
        match round {
            Round::Claimed(c) => PollOutcome::Claimed {
                status: Status::Claimed,
                contract: Box::new(HeldContract::of(&c)),
                skipped_stale: stale,
                waited_ms,
            },
            Round::Empty => PollOutcome::Empty {
                message: format!("No pending contracts for agent \"{agent}\""),
                skipped_stale: stale,
                waited_ms,
            },
            Round::StaleLimit => PollOutcome::Empty {
                message: format!(
                    "Closed {MAX_STALE_PER_POLL} contracts whose files changed for agent \"{agent}\"; call poll_next_task again"
                ),
                skipped_stale: stale,
                waited_ms,
            },
            Round::Cancelled => PollOutcome::Empty {
                message: match waited {
                    Some(_) => {
                        format!("Stopped waiting for work for agent \"{agent}\": the wait was cancelled")
                    }
                    None => format!("Stopped looking for work for agent \"{agent}\": the poll was cancelled"),
                },
                skipped_stale: stale,
                waited_ms,
            },
        }
    }

    /// Undoes a claim whose answer will never reach its caller (issue 27: the caller cancelled after
    /// the poll answered, so the transport drops the answer): C3 with the entry `CLAIM_REVERTED: the
    /// poll was cancelled`, if the contract is still claimed under `claim_epoch`; otherwise nothing.
    pub fn abandon_claim(&self, contract_id: &str, claim_epoch: u64) -> Result<(), Refusal> {
        let id = request::contract_id(contract_id)?;
        let policy = self.policy();
        let command = Command::RevertClaim {
            epoch: claim_epoch,
            why: Revert::Cancelled,
        };
        self.store
            .update(&id, &|r, now| transition::apply(r, &command, now, &policy))
            .map_err(store_err)?;
        Ok(())
    }

    /// C3 for the claim `c` made.
    fn revert(&self, c: &Contract, why: Revert) -> Result<(), Refusal> {
        let policy = self.policy();
        let command = Command::RevertClaim {
            epoch: c.claim_epoch,
            why,
        };
        self.store
            .update(&c.contract_id, &|r, now| {
                transition::apply(r, &command, now, &policy)
            })
            .map_err(store_err)?;
        Ok(())
    }

    /// The loop of CT-65 (steps 1 to 5), adding to `stale` the contracts it closes. A triggered
    /// `cancel` claims nothing more, stops a verification between chunks, and undoes the claim this
    /// round made ([`Round::Cancelled`]).
    fn poll_round(
        &self,
        agent: &AgentId,
        stale: &mut Vec<Skipped>,
        cancel: &Cancel,
    ) -> Result<Round, Refusal> {
        loop {
            if cancel.is_cancelled() {
                return Ok(Round::Cancelled);
            }
            let Some(claimed) = self.store.claim_next(agent).map_err(store_err)? else {
                return Ok(Round::Empty);
            };
            #[cfg(feature = "test-failpoints")]
            crate::failpoints::hit("after-claim-commit");
            let epoch = claimed.claim_epoch;
            match fingerprint::verify_cancellable(
                self.fs.as_ref(),
                &claimed.workspace_root,
                &claimed.pointers,
                &self.config.allowed_roots,
                cancel,
            ) {
                // The last look before the answer: a caller gone by now gets nothing, and the claim
                // is undone rather than held by nobody until its lease runs out.
                _ if cancel.is_cancelled() => {
                    self.revert(&claimed, Revert::Cancelled)?;
                    return Ok(Round::Cancelled);
                }
                Ok(drift) if drift.is_empty() => return Ok(Round::Claimed(Box::new(claimed))),
                Ok(drift) => {
                    let policy = self.policy();
                    let command = Command::StaleAtClaim {
                        epoch,
                        drift: drift.clone(),
                    };
                    self.store
                        .update(&claimed.contract_id, &|c, now| {
                            transition::apply(c, &command, now, &policy)
                        })
                        .map_err(store_err)?;
                    stale.push(Skipped {
                        contract_id: claimed.contract_id.clone(),
                        title: claimed.title.clone(),
                        dirty_files: drift,
                    });
                    if stale.len() >= MAX_STALE_PER_POLL {
                        return Ok(Round::StaleLimit);
                    }
                }
                Err(failed) => {
                    self.revert(&claimed, Revert::CheckFailed)?;
                    return Err(io_refusal(
                        Some(&claimed.contract_id),
                        Some(&failed.path),
                        Some(stale),
                        &failed.error,
                    ));
                }
            }
        }
    }

    fn holder(&self, h: &HolderRef) -> Result<(String, Holder), Refusal> {
        let id = request::contract_id(&h.contract_id)?;
        if let Some(e) = h.claim_epoch {
            request::claim_epoch(e)?;
        }
        let agent = h.agent_id.resolve("agent_id")?;
        Ok((
            id,
            Holder {
                agent_id: agent,
                claim_epoch: h.claim_epoch,
            },
        ))
    }

    fn run(&self, id: &str, command: &Command) -> Result<Contract, Refusal> {
        self.run_reply(id, command).map(|(c, _)| c)
    }

    /// Runs `command`: the record afterwards, and whether the command had already taken effect.
    fn run_reply(&self, id: &str, command: &Command) -> Result<(Contract, bool), Refusal> {
        let policy = self.policy();
        match self
            .store
            .update(id, &|c, now| transition::apply(c, command, now, &policy))
            .map_err(store_err)?
        {
            None => Err(Refusal::not_found(id)),
            Some(Reply::Done(c)) => Ok((*c, false)),
            Some(Reply::Already(c)) => Ok((*c, true)),
            Some(Reply::Refused(r)) => Err(r),
            Some(Reply::GuardFailed) => Err(Refusal::not_found(id)),
        }
    }

    /// Renews the lease (X1).
    pub fn extend_ttl(&self, h: &HolderRef) -> Result<ExtendOutcome, Refusal> {
        let (id, holder) = self.holder(h)?;
        let c = self.run(&id, &Command::Extend { holder })?;
        Ok(ExtendOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            claim_epoch: c.claim_epoch,
            claimed_at: c.claimed_at.unwrap_or_default(),
            expires_at: c.expires_at.unwrap_or_default(),
            extend_count: c.extend_count,
            extends_left: MAX_EXTENDS_PER_CLAIM.saturating_sub(c.extend_count),
            lifetime_ends_at: c.lifetime_ends_at,
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Hands the contract back to the queue (R1).
    pub fn release_contract(&self, h: &HolderRef, reason: Option<&str>) -> Result<ReleaseOutcome, Refusal> {
        let id = request::contract_id(&h.contract_id)?;
        if let Some(r) = reason {
            request::release_reason(r)?;
        }
        let (_, holder) = self.holder(h)?;
        let c = self.run(
            &id,
            &Command::Release {
                holder,
                reason: reason.map(str::to_owned),
            },
        )?;
        Ok(ReleaseOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            release_count: c.release_count,
            releases_left: MAX_RELEASES.saturating_sub(c.release_count),
            queued_at: c.queued_at,
            queue_expires_at: c.queue_expires_at,
            message: format!(
                "Contract {} is back in the queue for agent \"{}\"; claim_epoch {} no longer works.",
                c.contract_id, c.target_agent, c.claim_epoch
            ),
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Fails the contract (F1), or records a late report after the lease ran out (F2).
    pub fn fail_contract(&self, h: &HolderRef, reason: &str) -> Result<FailOutcome, Refusal> {
        self.fail(h, reason, false)
    }

    /// [`Contracts::fail_contract`]; with `retryable`, a contract with deliveries left goes back to the
    /// queue after its backoff instead (F3, CT-188).
    pub fn fail(&self, h: &HolderRef, reason: &str, retryable: bool) -> Result<FailOutcome, Refusal> {
        let id = request::contract_id(&h.contract_id)?;
        request::fail_reason(reason)?;
        let (_, holder) = self.holder(h)?;
        let c = self.run(
            &id,
            &Command::Fail {
                holder,
                reason: reason.to_owned(),
                retryable,
            },
        )?;
        let message = match c.status {
            Status::TimedOut => format!(
                "The lease on contract {} had already run out; it stays TIMED_OUT and your reason is recorded.",
                c.contract_id
            ),
            Status::Submitted => format!(
                "Contract {} goes back to the queue for agent \"{}\" at redelivery_at ({} of {} deliveries used); your claim_epoch no longer works.",
                c.contract_id, c.target_agent, c.delivery_count, c.max_deliveries
            ),
            _ => format!("Contract {} is closed FAILED.", c.contract_id),
        };
        let requeued = c.status == Status::Submitted;
        Ok(FailOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            completed_at: if requeued {
                None
            } else {
                Some(c.completed_at.unwrap_or_default())
            },
            redelivery_at: if requeued { c.available_at } else { None },
            message,
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Withdraws a contract (K1, K2; CT-183 … CT-185): only its requester may; a second cancel answers
    /// success again with `already_cancelled` and changes nothing.
    pub fn cancel(
        &self,
        contract_id: &str,
        caller: &Identity,
        reason: &str,
    ) -> Result<CancelOutcome, Refusal> {
        let id = request::contract_id(contract_id)?;
        request::cancel_reason(reason)?;
        let requester = caller.resolve("agent_id")?;
        let was_claimed = |c: &Contract| c.claimed_at.is_some();
        let (c, already) = self.run_reply(
            &id,
            &Command::Cancel {
                requester,
                reason: reason.to_owned(),
            },
        )?;
        Ok(CancelOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            was_claimed: was_claimed(&c),
            holder: was_claimed(&c).then(|| c.target_agent.clone()),
            already_cancelled: already,
            cancel_reason: c.cancel_reason.clone().unwrap_or_default(),
        })
    }

    /// Delivers the result (CT-68).
    pub fn fulfill_contract(
        &self,
        h: &HolderRef,
        delivery: &FulfillRequest,
    ) -> Result<FulfillOutcome, Refusal> {
        self.fulfill_cancellable(h, delivery, &Cancel::new())
    }

    /// [`Contracts::fulfill_contract`] that stops when `cancel` is triggered while it reads files
    /// (steps 3 and 4: artifacts and baseline, between files and between the chunks of a hash):
    /// `IO_ERROR`, nothing further written, no strike and no schema attempt used. Once the fulfil
    /// transaction has run, it answers.
    pub fn fulfill_cancellable(
        &self,
        h: &HolderRef,
        delivery: &FulfillRequest,
        cancel: &Cancel,
    ) -> Result<FulfillOutcome, Refusal> {
        // Step 1: arguments, in table order.
        let id = request::contract_id(&h.contract_id)?;
        request::result_summary(&delivery.result_summary)?;
        if let Some(o) = &delivery.structured_output {
            request::structured_output(o)?;
        }
        let (_, holder) = self.holder(h)?;
        // Step 2: the pre-check (CT-68). It writes nothing but an expiry step, so when a read of the
        // record shows the pre-check passing with nothing to write, its write transaction is left out
        // (one lock fewer per delivery under contention); the fulfill transaction of step 6 sweeps and
        // judges the record again at its own `now`. Otherwise it runs as one write transaction.
        let check = Command::FulfillCheck {
            holder: holder.clone(),
        };
        let read = self.store.get(&id).map_err(store_err)?;
        let now = epoch_ms(self.clock.as_ref());
        let record = match read.map(|c| transition::apply(&c, &check, now, &self.policy())) {
            Some(transition::Step {
                next: None,
                reply: Reply::Done(c),
            }) => *c,
            _ => self.run(&id, &check)?,
        };
        // Step 3: artifacts.
        let artifact_paths = delivery.artifacts_pointers.clone().unwrap_or_default();
        let artifacts = match fingerprint::accept_paths_cancellable(
            self.fs.as_ref(),
            &artifact_paths,
            &record.workspace_root,
            &record.workspace_root,
            cancel,
        ) {
            Accepted::Pointers(p) => p,
            Accepted::Refused(r) => return Err(path_refusal(RefusalCode::ArtifactRefused, &r)),
            Accepted::Io(CouldNotRun { path, error }) => {
                return Err(io_refusal(
                    Some(&record.contract_id),
                    path.as_deref(),
                    None,
                    &error,
                ));
            }
        };
        // Step 4: the baseline.
        let drift = self.drift_of(&record, cancel)?;
        if cancel.is_cancelled() {
            return Err(io_refusal(
                Some(&record.contract_id),
                None,
                None,
                &fingerprint::cancelled(),
            ));
        }
        // Step 5: the output.
        let verdict = if !drift.is_empty() {
            Verdict::Drift(drift)
        } else {
            match &record.contract_schema {
                None => Verdict::Valid,
                Some(s) => match schema::check(s, delivery.structured_output.as_ref()) {
                    Checked::Valid => Verdict::Valid,
                    Checked::Invalid(errors) => Verdict::Invalid(errors),
                    // Issue 12: not the holder's fault; nothing is written and no attempt is used.
                    Checked::Undecided(error) => {
                        return Err(Refusal::new(
                            RefusalCode::ContractSchemaInvalid,
                            format!(
                                "structured_output could not be checked against the contract_schema of contract {}: {} hit the regular-expression engine's backtracking limit. No schema attempt was used; deliver an output that avoids it, or fail the contract.",
                                record.contract_id,
                                if error.instance_path.is_empty() {
                                    "(root)"
                                } else {
                                    error.instance_path.as_str()
                                }
                            ),
                            vec![("validation_errors", json!([error]))],
                        ));
                    }
                },
            }
        };
        // Step 6: the fulfill transaction.
        let command = Command::Fulfill {
            holder,
            delivery: Delivery {
                result_summary: delivery.result_summary.clone(),
                structured_output: delivery.structured_output.clone(),
                artifacts_pointers: artifacts,
            },
            verdict,
        };
        let result = self.run(&id, &command);
        #[cfg(feature = "test-failpoints")]
        if matches!(&result, Err(r) if r.code == RefusalCode::RetryNeeded) {
            crate::failpoints::hit("after-u2-commit");
        }
        let c = result?;
        Ok(FulfillOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            completed_at: c.completed_at.unwrap_or_default(),
            artifacts_pointers: c.artifacts_pointers.clone().unwrap_or_default(),
            message: format!(
                "Contract {} is COMPLETED; the result is stored for {}.",
                c.contract_id, c.requester_agent
            ),
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Compares the baseline with the files, changing nothing (CT-71).
    pub fn verify_contract(
        &self,
        contract_id: &str,
        caller: &Identity,
        claim_epoch: Option<u64>,
    ) -> Result<VerifyOutcome, Refusal> {
        self.verify_cancellable(contract_id, caller, claim_epoch, &Cancel::new())
    }

    /// [`Contracts::verify_contract`] that stops between files and between the chunks of a hash once
    /// `cancel` is triggered (`IO_ERROR`; it changes nothing either way).
    pub fn verify_cancellable(
        &self,
        contract_id: &str,
        caller: &Identity,
        claim_epoch: Option<u64>,
        cancel: &Cancel,
    ) -> Result<VerifyOutcome, Refusal> {
        let id = request::contract_id(contract_id)?;
        if let Some(e) = claim_epoch {
            request::claim_epoch(e)?;
        }
        let caller = caller.resolve_optional()?;
        let Some(record) = self.store.get(&id).map_err(store_err)? else {
            return Err(Refusal::not_found(&id));
        };
        let drift = self.drift_of(&record, cancel)?;
        let now = epoch_ms(self.clock.as_ref());
        let valid = drift.is_empty();
        let expired = record.is_logically_expired(now);
        let mut warnings = Vec::new();
        let identity_ok = match &caller {
            Some(a) => a == &record.target_agent,
            None => {
                warnings.push(Warning {
                    code: String::from("NO_IDENTITY"),
                    message: String::from(
                        "No agent_id was given and there is no default agent identity, so fulfillable is false; pass agent_id to learn whether you could fulfill.",
                    ),
                });
                false
            }
        };
        let epoch_ok = match claim_epoch {
            Some(e) => e == record.claim_epoch,
            None => !self.config.require_claim_epoch,
        };
        let fulfillable = valid && record.status == Status::Claimed && !expired && identity_ok && epoch_ok;
        Ok(VerifyOutcome {
            contract_id: record.contract_id.clone(),
            status: record.status,
            is_logically_expired: expired,
            valid,
            fulfillable,
            checked: record.pointers.len(),
            dirty_files: drift,
            toctou_strikes_left: if record.status == Status::Claimed {
                TOCTOU_STRIKES.saturating_sub(record.toctou_strikes)
            } else {
                0
            },
            now,
            contract: ContractSummary::of(&record, now),
            warnings,
        })
    }

    /// Ends every contract logically expired at `now`, in batches of 1,000 per kind (CT-77).
    pub fn sweep(&self, now: EpochMs) -> Result<SweepReport, Refusal> {
        let mut total = SweepReport::default();
        loop {
            let r = self.store.sweep(now, SWEEP_BATCH_PER_CALL).map_err(store_err)?;
            total.queued_timed_out += r.queued_timed_out;
            total.claimed_timed_out += r.claimed_timed_out;
            total.redelivered += r.redelivered;
            let full = SWEEP_BATCH_PER_CALL as u64;
            if r.queued_timed_out < full && r.claimed_timed_out < full && r.redelivered < full {
                return Ok(total);
            }
            #[cfg(feature = "test-failpoints")]
            crate::failpoints::hit("between-sweep-batches");
        }
    }

    /// Deletes terminal records that ended before `completed_before` (CT-78); the number deleted.
    pub fn purge_terminal(&self, completed_before: EpochMs) -> Result<u64, Refusal> {
        let mut total = 0;
        loop {
            let n = self
                .store
                .purge_terminal(completed_before, SWEEP_BATCH_PER_CALL)
                .map_err(store_err)?;
            total += n;
            if n < SWEEP_BATCH_PER_CALL as u64 {
                return Ok(total);
            }
        }
    }

    /// The store's integrity report (CT-79).
    pub fn check_integrity(&self) -> Result<IntegrityReport, Refusal> {
        self.store.check_integrity().map_err(store_err)
    }
}

/// One round of a poll (CT-65).
enum Round {
    /// A contract claimed with its baseline intact.
    Claimed(Box<Contract>),
    /// Nothing qualified.
    Empty,
    /// Stopped after closing [`MAX_STALE_PER_POLL`] stale contracts.
    StaleLimit,
    /// The call was cancelled; any claim it made was undone.
    Cancelled,
}

/// How often a waiting poll asks the store again even without a signal.
const WAIT_RECHECK: Duration = Duration::from_secs(5);

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn epoch_warning(h: &HolderRef, contract_id: &str) -> Vec<Warning> {
    if h.claim_epoch.is_none() {
        vec![Warning::epoch_not_supplied(contract_id)]
    } else {
        Vec::new()
    }
}

fn dispatched(c: &Contract, replay: bool, warnings: Vec<Warning>) -> DispatchOutcome {
    DispatchOutcome {
        contract_id: c.contract_id.clone(),
        status: c.status,
        idempotent_replay: replay,
        requester_agent: c.requester_agent.clone(),
        target_agent: c.target_agent.clone(),
        created_at: c.created_at,
        queue_expires_at: c.queue_expires_at,
        lifetime_ends_at: c.lifetime_ends_at,
        exec_ttl_sec: c.exec_ttl_sec,
        queue_ttl_sec: c.queue_ttl_sec,
        pointers: c.pointers.clone(),
        warnings,
    }
}

fn replay(existing: &Contract, payload: &str) -> Result<DispatchOutcome, Refusal> {
    if existing.payload_sha256 == payload {
        return Ok(dispatched(existing, true, Vec::new()));
    }
    Err(Refusal::new(
        RefusalCode::IdempotencyConflict,
        format!(
            "idempotency_key already names contract {}, which was dispatched with different arguments.",
            existing.contract_id
        ),
        vec![("contract_id", json!(existing.contract_id))],
    ))
}

/// The payload fingerprint of CT-63: the arguments as supplied, without `idempotency_key`,
/// `requester_agent` and absent ones.
pub fn payload_sha256(req: &DispatchRequest) -> String {
    let mut m = Map::new();
    m.insert("target_agent".into(), json!(req.target_agent));
    m.insert("title".into(), json!(req.title));
    m.insert("workspace_root".into(), json!(req.workspace_root));
    if let Some(v) = &req.pointers {
        m.insert("pointers".into(), json!(v));
    }
    if let Some(v) = &req.task_type {
        m.insert("task_type".into(), json!(v));
    }
    if let Some(v) = &req.context_summary {
        m.insert("context_summary".into(), json!(v));
    }
    if let Some(v) = &req.contract_schema {
        m.insert("contract_schema".into(), Value::Object(v.clone()));
    }
    if let Some(v) = req.exec_ttl_sec {
        m.insert("exec_ttl_sec".into(), json!(v));
    }
    if let Some(v) = req.queue_ttl_sec {
        m.insert("queue_ttl_sec".into(), json!(v));
    }
    if let Some(v) = req.max_deliveries {
        m.insert("max_deliveries".into(), json!(v));
    }
    canonical::sha256_hex(&Value::Object(m))
}
