//! The facade [`Contracts`]: one method per operation, each a sequence of store transactions and file
//! checks, with no transaction open while a file is read or hashed.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use shiftwork_seams::echo::clip_echo;
use shiftwork_seams::{Clock, Fs};

use crate::canonical;
use crate::config::ContractsConfig;
use crate::error::{ContractRefusal, RefusalCode, RefusalDetails, StoreError};
use crate::fingerprint::{self, Accepted, CouldNotRun, PathRefusal, RootReason};
use crate::ids::{IdSource, OsIdSource, contract_id_from_bits};
use crate::integrity::IntegrityReport;
use crate::limits::*;
use crate::model::{AgentId, Contract, ContractId, Drift, EpochMs, Status, Warning, WarningCode, instant};
use crate::observe::{ContractEvent, ContractsObserver};
use crate::request::{self, DispatchRequest, FulfillRequest, HolderRef, InspectRequest};
use crate::roots::SYSTEM_DIRECTORIES;
use crate::schema::{self, Checked};
use crate::store::{InsertOutcome, QueueDepth, Store, SweepReport, epoch_ms};
use crate::transition::{self, Command, Delivery, Holder, Policy, Reply, Verdict};
use crate::views::*;
use crate::wait::Cancel;

mod inspect;
mod poll;
mod retention;

pub use poll::{PollStep, PollTask};

/// The contract queue: one method per operation. `Send + Sync`: share it (in an `Arc`) between
/// threads and call it from all of them. Every method is synchronous and may block on the store and on
/// file reads; a tokio host calls it from `tokio::task::spawn_blocking`.
///
/// ```
/// use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, MemoryStore, SeededIdSource};
/// use shiftwork_contracts::roots::AllowedRoots;
/// use shiftwork_seams::{ManualClock, MemFs};
/// use std::sync::Arc;
///
/// let clock = Arc::new(ManualClock::new(chrono::DateTime::from_timestamp_millis(1_767_225_600_000).unwrap()));
/// let fs = MemFs::new();
/// fs.write_file("/w/src/lib.rs", b"pub fn add() {}\n");
/// // Workspace roots must lie inside an allowed root (default: the home and temporary directories).
/// let config = ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/w"])).build().unwrap();
/// let c = Contracts::builder(Arc::new(MemoryStore::new(clock)))
///     .fs(Arc::new(fs))
///     .ids(Arc::new(SeededIdSource::new(1)))
///     .config(config)
///     .build();
/// let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
/// let sent = c.dispatch(&DispatchRequest::new(alice, bob.clone(), "Review", "/w").pointers(["src/lib.rs"])).unwrap();
/// let polled = c.poll_next_task(&bob).unwrap();
/// assert_eq!(polled.held().unwrap().contract_id, sent.contract_id);
/// ```
pub struct Contracts {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    fs: Arc<dyn Fs>,
    ids: Arc<dyn IdSource>,
    config: ContractsConfig,
    observer: Option<Arc<dyn ContractsObserver>>,
    /// The background retention purge, when the builder asked for one.
    _purger: Option<retention::Purger>,
}

/// A seam a [`ContractsBuilder`] has not been given yet: a builder builds only once it has a
/// filesystem and an id source, so no facade reads the real disk unless asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unset;

/// Builds a [`Contracts`] facade over a store ([`Contracts::builder`]). The facade reads time from
/// the store's clock ([`Store::clock`]), so the two never disagree. It builds only once it is given
/// the filesystem workspace files are read through ([`ContractsBuilder::fs`], or
/// [`ContractsBuilder::real_fs`] for the operating system's) and where contract ids come from
/// ([`ContractsBuilder::ids`], or [`ContractsBuilder::real_ids`]): nothing defaults to the real
/// world, so a test that forgets `.fs(…)` does not compile rather than read the developer's files.
///
/// ```compile_fail
/// use std::sync::Arc;
/// use shiftwork_contracts::{Contracts, MemoryStore};
/// use shiftwork_seams::SystemClock;
/// // No filesystem and no id source: there is no `build` to call.
/// let c = Contracts::builder(Arc::new(MemoryStore::new(Arc::new(SystemClock::new())))).build();
/// ```
///
/// ```
/// use std::sync::Arc;
/// use shiftwork_contracts::{Contracts, MemoryStore, SeededIdSource};
/// use shiftwork_seams::{MemFs, SystemClock};
/// let store = Arc::new(MemoryStore::new(Arc::new(SystemClock::new())));
/// let in_memory = Contracts::builder(store.clone()).fs(Arc::new(MemFs::new())).ids(Arc::new(SeededIdSource::new(7))).build();
/// let real = Contracts::builder(store).real_fs().real_ids().build(); // the disk and the OS's ids, named
/// # let _ = (in_memory, real);
/// ```
pub struct ContractsBuilder<F = Unset, I = Unset> {
    store: Arc<dyn Store>,
    fs: F,
    ids: I,
    config: ContractsConfig,
    observer: Option<Arc<dyn ContractsObserver>>,
    purge_in_background: bool,
}

impl<F, I> ContractsBuilder<F, I> {
    /// The filesystem workspace files are read through (tests: a [`shiftwork_seams::MemFs`]).
    pub fn fs(self, fs: Arc<dyn Fs>) -> ContractsBuilder<Arc<dyn Fs>, I> {
        ContractsBuilder {
            store: self.store,
            fs,
            ids: self.ids,
            config: self.config,
            observer: self.observer,
            purge_in_background: self.purge_in_background,
        }
    }

    /// The operating system's filesystem, [`shiftwork_seams::OsFs`]: the real disk, named.
    pub fn real_fs(self) -> ContractsBuilder<Arc<dyn Fs>, I> {
        self.fs(Arc::new(shiftwork_seams::OsFs))
    }

    /// Where the random bits of contract ids come from (tests: [`crate::SeededIdSource`]).
    pub fn ids(self, ids: Arc<dyn IdSource>) -> ContractsBuilder<F, Arc<dyn IdSource>> {
        ContractsBuilder {
            store: self.store,
            fs: self.fs,
            ids,
            config: self.config,
            observer: self.observer,
            purge_in_background: self.purge_in_background,
        }
    }

    /// The operating system's random generator, [`OsIdSource`]: the real one, named.
    pub fn real_ids(self) -> ContractsBuilder<F, Arc<dyn IdSource>> {
        self.ids(Arc::new(OsIdSource))
    }

    /// The configuration (default: [`ContractsConfig::default`]).
    pub fn config(mut self, config: ContractsConfig) -> Self {
        self.config = config;
        self
    }

    /// Tells `observer` of the queue's events ([`crate::observe`]); the store is given it too, for the
    /// leases its sweeps end ([`Store::observe`]).
    pub fn observer(mut self, observer: Arc<dyn ContractsObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Purge finished contracts past their retention ([`ContractsConfig::finished_retention`]) in
    /// the background (default off): a thread of the facade runs [`Contracts::purge_finished`] a
    /// second after the facade is built and then every minute on the store's clock, batch after batch of at most 100 contracts
    /// (each its own short transaction, so a claim waits for one batch at most) until none is left;
    /// it stops when the facade is dropped, or for good when the store is read-only. Without it, the
    /// host calls [`Contracts::purge_finished`] when it likes.
    pub fn purge_in_background(mut self, on: bool) -> Self {
        self.purge_in_background = on;
        self
    }
}

impl ContractsBuilder<Arc<dyn Fs>, Arc<dyn IdSource>> {
    /// The facade.
    pub fn build(self) -> Contracts {
        if let Some(observer) = &self.observer {
            self.store.observe(Arc::clone(observer));
        }
        let clock = self.store.clock();
        let purger = match self.config.finished_retention() {
            Some(kept) if self.purge_in_background => {
                retention::Purger::start(Arc::clone(&self.store), Arc::clone(&clock), kept)
            }
            _ => None,
        };
        Contracts {
            clock,
            store: self.store,
            fs: self.fs,
            ids: self.ids,
            config: self.config,
            observer: self.observer,
            _purger: purger,
        }
    }
}

fn io_refusal(
    contract_id: Option<&ContractId>,
    path: Option<&str>,
    skipped: Option<&[Skipped]>,
    error: &std::io::Error,
) -> ContractRefusal {
    let what = path.map_or_else(|| String::from("the workspace root"), |p| p.to_owned());
    let message = match contract_id {
        // A call cancelled while it read a file stops there; what it had changed is undone.
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
    ContractRefusal::new(
        message,
        RefusalDetails::IoError {
            contract_id: contract_id.cloned(),
            path: path.map(str::to_owned),
            skipped_stale: skipped.map(<[Skipped]>::to_vec),
        },
    )
}

fn path_refusal(code: RefusalCode, r: &PathRefusal) -> ContractRefusal {
    let noun = if code == RefusalCode::PointerRefused {
        "pointer"
    } else {
        "artifact"
    };
    // The path as the caller wrote it, clipped: a 10 MB path is not echoed back.
    let path = r.path.as_deref().map(clip_echo);
    let message = match (&path, r.pattern) {
        (None, _) => format!("At most {MAX_POINTERS} {noun} paths are accepted."),
        // Refused by what the file holds: the sentence says what kind of key, never a byte of it.
        (Some(p), Some(kind)) if crate::paths::PRIVATE_KEY_CONTENTS.contains(&kind) => {
            // The labels are a closed list: these three are read with "an".
            let article = if matches!(
                kind,
                "OpenSSH private key" | "SSH2 private key" | "age secret key"
            ) {
                "an"
            } else {
                "a"
            };
            format!(
                "The {noun} path '{p}' was refused: {} (its first bytes are {article} {kind}, whatever the file is called).",
                r.reason.as_str()
            )
        }
        (Some(p), Some(pattern)) => format!(
            "The {noun} path '{p}' was refused: {} (matches {pattern}).",
            r.reason.as_str()
        ),
        (Some(p), None) => format!("The {noun} path '{p}' was refused: {}.", r.reason.as_str()),
    };
    let details = if code == RefusalCode::PointerRefused {
        RefusalDetails::PointerRefused {
            path,
            reason: r.reason,
            pattern: r.pattern,
        }
    } else {
        RefusalDetails::ArtifactRefused {
            path,
            reason: r.reason,
            pattern: r.pattern,
        }
    };
    ContractRefusal::new(message, details)
}

impl Contracts {
    /// A builder of a facade over `store`.
    pub fn builder(store: Arc<dyn Store>) -> ContractsBuilder {
        ContractsBuilder {
            store,
            fs: Unset,
            ids: Unset,
            config: ContractsConfig::default(),
            observer: None,
            purge_in_background: false,
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

    /// The clock the facade reads and waits on: the store's ([`Store::clock`]; for PostgreSQL on the
    /// server's time, the server's).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Runs one store operation in the span `contracts.store` (field `operation`), its failure as a
    /// refusal.
    fn tx<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&dyn Store) -> Result<T, StoreError>,
    ) -> Result<T, ContractRefusal> {
        let _span = tracing::info_span!("contracts.store", operation).entered();
        f(self.store.as_ref()).map_err(|e| e.to_refusal())
    }

    /// Tells the observer, if any.
    fn tell(&self, event: impl FnOnce() -> ContractEvent) {
        if let Some(observer) = &self.observer {
            observer.event(&event());
        }
    }

    fn now(&self) -> EpochMs {
        epoch_ms(self.clock.as_ref())
    }

    /// The drift of `record`'s pointers against its baseline; a file that cannot be read is the I/O
    /// refusal naming it.
    fn drift_of(&self, record: &Contract, cancel: &Cancel) -> Result<Vec<Drift>, ContractRefusal> {
        fingerprint::verify_cancellable(
            self.fs.as_ref(),
            &record.workspace_root,
            &record.pointers,
            self.config.allowed_roots(),
            cancel,
        )
        .map_err(|failed| io_refusal(Some(&record.contract_id), Some(&failed.path), None, &failed.error))
    }

    /// `WORKSPACE_ROOT_INVALID` for `reason`, the sentence naming the rule.
    fn root_refusal(&self, reason: RootReason) -> ContractRefusal {
        let message = match reason {
            RootReason::SystemDirectory => format!(
                "workspace_root was refused: SYSTEM_DIRECTORY (no workspace root may lie in or under {}, even inside an allowed root).",
                SYSTEM_DIRECTORIES.join(", ")
            ),
            RootReason::OutsideAllowedRoots => format!(
                "workspace_root was refused: OUTSIDE_ALLOWED_ROOTS (a workspace root must lie inside one of the allowed roots: {}).",
                clip_echo(&self.config.allowed_roots().describe())
            ),
            other => format!("workspace_root was refused: {}.", other.as_str()),
        };
        ContractRefusal::new(message, RefusalDetails::WorkspaceRootInvalid { reason })
    }

    fn policy(&self) -> Policy {
        Policy {
            require_claim_epoch: self.config.require_claim_epoch(),
        }
    }

    /// Dispatches a contract: checks every part of `req`, pins its files by size and SHA-256 (no
    /// transaction open), and stores it `SUBMITTED` for its target. With an idempotency key, a second
    /// dispatch of the same arguments answers the first contract (`idempotent_replay`), and one of
    /// different arguments is refused `IDEMPOTENCY_CONFLICT`.
    pub fn dispatch(&self, req: &DispatchRequest) -> Result<DispatchOutcome, ContractRefusal> {
        self.dispatch_cancellable(req, &Cancel::new())
    }

    /// [`Contracts::dispatch`] that stops when `cancel` is triggered while it fingerprints the pointer
    /// files (between files and between the chunks of a hash): `IO_ERROR`, nothing stored. Once the
    /// record is inserted the dispatch answers.
    pub fn dispatch_cancellable(
        &self,
        req: &DispatchRequest,
        cancel: &Cancel,
    ) -> Result<DispatchOutcome, ContractRefusal> {
        self.dispatch_checked(req, cancel, false)
    }

    /// The dispatch, its schema already accepted when `schema_accepted` (the tool-argument surface
    /// judges it before it resolves the requester, in the order of the tool's rules).
    pub(crate) fn dispatch_checked(
        &self,
        req: &DispatchRequest,
        cancel: &Cancel,
        schema_accepted: bool,
    ) -> Result<DispatchOutcome, ContractRefusal> {
        // Every argument, in the tool's argument order, then the schema.
        request::title(&req.title)?;
        let workspace_root = request::workspace_root(&req.workspace_root)?;
        if let Some(t) = &req.task_type {
            request::task_type(t)?;
        }
        if let Some(s) = &req.context_summary {
            request::context_summary(s)?;
        }
        let exec = match req.exec_ttl {
            Some(v) => request::ttl_duration("exec_ttl_sec", v, MIN_EXEC_TTL_SEC, MAX_EXEC_TTL_SEC)?,
            None => self.config.default_exec_ttl_sec(),
        };
        let queue = match req.queue_ttl {
            Some(v) => request::ttl_duration("queue_ttl_sec", v, MIN_QUEUE_TTL_SEC, MAX_QUEUE_TTL_SEC)?,
            None => self.config.default_queue_ttl_sec(),
        };
        if let Some(k) = &req.idempotency_key {
            request::idempotency_key(k)?;
        }
        let deliveries = match req.max_deliveries {
            Some(v) => request::max_deliveries(i64::from(v))?,
            None => 1,
        };
        if !schema_accepted && let Some(s) = &req.contract_schema {
            accept_schema(s)?;
        }
        let requester = &req.requester_agent;
        let payload = payload_sha256(req);
        // An idempotent replay, read-only.
        if let Some(key) = &req.idempotency_key
            && let Some(existing) = self.tx("get_by_key", |s| s.get_by_key(requester, key))?
        {
            return replay(&existing, &payload);
        }
        // The root.
        let root =
            match fingerprint::accept_root(self.fs.as_ref(), workspace_root, self.config.allowed_roots()) {
                Ok(Ok(root)) => root,
                Ok(Err(reason)) => return Err(self.root_refusal(reason)),
                Err(CouldNotRun { path, error }) => {
                    return Err(io_refusal(None, path.as_deref(), None, &error));
                }
            };
        // The pointers, no transaction open.
        let paths = req.pointers.clone().unwrap_or_default();
        let pointers = match fingerprint::accept_paths_cancellable(
            self.fs.as_ref(),
            &paths,
            workspace_root,
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
                code: WarningCode::LargePointer,
                message: format!(
                    "Pointer {} is {} bytes (above {LARGE_POINTER_WARN_BYTES}); every claim and fulfill hashes it again.",
                    p.path, p.size
                ),
            })
            .collect();
        // One write transaction.
        let bits = self.ids.random_bits();
        let build = |now: EpochMs, seq: i64| Contract {
            seq,
            contract_id: contract_id_from_bits(now, bits),
            requester_agent: requester.clone(),
            target_agent: req.target_agent.clone(),
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
        match self.tx("insert", |s| s.insert(&build))? {
            InsertOutcome::Inserted(c) => Ok(dispatched(&c, false, warnings)),
            InsertOutcome::KeyTaken(existing) => replay(&existing, &payload),
        }
    }

    /// Undoes a claim whose answer will never reach its caller (the caller cancelled after the poll
    /// answered, so the transport drops the answer): the contract goes back to the queue with the
    /// history entry `CLAIM_REVERTED: the poll was cancelled`, if it is still claimed under
    /// `claim_epoch`; otherwise nothing happens.
    pub fn abandon_claim(&self, contract_id: &ContractId, claim_epoch: u64) -> Result<(), ContractRefusal> {
        self.revert(contract_id, claim_epoch, transition::Revert::Cancelled)
    }

    /// Puts back the claim `epoch` of `contract_id`, if it still stands.
    fn revert(
        &self,
        contract_id: &ContractId,
        epoch: u64,
        why: transition::Revert,
    ) -> Result<(), ContractRefusal> {
        let policy = self.policy();
        let command = Command::RevertClaim { epoch, why };
        self.tx("update", |s| {
            s.update(contract_id, &|r, now| {
                transition::apply(r, &command, now, &policy)
            })
        })?;
        Ok(())
    }

    fn holder(&self, h: &HolderRef) -> Result<Holder, ContractRefusal> {
        if let Some(e) = h.claim_epoch {
            request::claim_epoch(e)?;
        }
        Ok(Holder {
            agent_id: h.agent_id.clone(),
            claim_epoch: h.claim_epoch,
        })
    }

    fn run(&self, id: &ContractId, command: &Command) -> Result<Contract, ContractRefusal> {
        self.run_reply(id, command).map(|(c, _)| c)
    }

    /// Runs `command`: the record afterwards, and whether the command had already taken effect. A
    /// holder call refused `STALE_EPOCH` is told to the observer.
    fn run_reply(&self, id: &ContractId, command: &Command) -> Result<(Contract, bool), ContractRefusal> {
        let policy = self.policy();
        let reply = self.tx("update", |s| {
            s.update(id, &|c, now| transition::apply(c, command, now, &policy))
        })?;
        match reply {
            None | Some(Reply::GuardFailed) => Err(ContractRefusal::not_found(id)),
            Some(Reply::Done(c)) => Ok((*c, false)),
            Some(Reply::Already(c)) => Ok((*c, true)),
            Some(Reply::Refused(r)) => {
                if let (RefusalDetails::StaleEpoch { claim_epoch, .. }, Some(holder)) =
                    (r.details(), command.holder())
                {
                    self.tell(|| ContractEvent::StaleEpochRefused {
                        contract_id: id.clone(),
                        agent: holder.agent_id.clone(),
                        given: holder.claim_epoch.unwrap_or_default(),
                        current: *claim_epoch,
                    });
                }
                Err(r)
            }
        }
    }

    /// Renews the holder's lease by the contract's lease length (at most five times a claim, never
    /// past the contract's lifetime ceiling).
    pub fn extend_ttl(&self, h: &HolderRef) -> Result<ExtendOutcome, ContractRefusal> {
        let holder = self.holder(h)?;
        let c = self.run(&h.contract_id, &Command::Extend { holder })?;
        Ok(ExtendOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            claim_epoch: c.claim_epoch,
            claimed_at: instant(c.claimed_at.unwrap_or_default()),
            expires_at: instant(c.expires_at.unwrap_or_default()),
            extend_count: c.extend_count,
            extends_left: MAX_EXTENDS_PER_CLAIM.saturating_sub(c.extend_count),
            lifetime_ends_at: instant(c.lifetime_ends_at),
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Hands the contract back to the queue (at most three times in its life); the holder's epoch
    /// stops working.
    pub fn release_contract(
        &self,
        h: &HolderRef,
        reason: Option<&str>,
    ) -> Result<ReleaseOutcome, ContractRefusal> {
        if let Some(r) = reason {
            request::release_reason(r)?;
        }
        let holder = self.holder(h)?;
        let c = self.run(
            &h.contract_id,
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
            queued_at: instant(c.queued_at),
            queue_expires_at: instant(c.queue_expires_at),
            message: format!(
                "Contract {} is back in the queue for agent \"{}\"; claim_epoch {} no longer works.",
                c.contract_id, c.target_agent, c.claim_epoch
            ),
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Fails the contract (`FAILED`, its reason recorded), or records a report that came after the
    /// lease ran out (the contract stays `TIMED_OUT`).
    pub fn fail_contract(&self, h: &HolderRef, reason: &str) -> Result<FailOutcome, ContractRefusal> {
        self.fail(h, reason, false)
    }

    /// [`Contracts::fail_contract`]; with `retryable`, a contract with deliveries left goes back to the
    /// queue after its backoff instead (`SUBMITTED`, `redelivery_at` set).
    pub fn fail(&self, h: &HolderRef, reason: &str, retryable: bool) -> Result<FailOutcome, ContractRefusal> {
        request::fail_reason(reason)?;
        let holder = self.holder(h)?;
        let c = self.run(
            &h.contract_id,
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
        self.tell(|| ContractEvent::Failed {
            contract_id: c.contract_id.clone(),
            agent: h.agent_id.clone(),
            status: c.status,
        });
        if requeued {
            self.tell(|| ContractEvent::Redelivered {
                contract_id: c.contract_id.clone(),
                target_agent: c.target_agent.clone(),
                available_at: c.available_at.map(instant),
            });
        }
        Ok(FailOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            completed_at: if requeued {
                None
            } else {
                Some(instant(c.completed_at.unwrap_or_default()))
            },
            redelivery_at: if requeued {
                c.available_at.map(instant)
            } else {
                None
            },
            message,
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Withdraws a contract, waiting or held: only its requester may; its holder's next call is
    /// refused `CANCELLED`. A second cancel answers success again with `already_cancelled` and changes
    /// nothing.
    pub fn cancel(
        &self,
        contract_id: &ContractId,
        requester: &AgentId,
        reason: &str,
    ) -> Result<CancelOutcome, ContractRefusal> {
        request::cancel_reason(reason)?;
        let was_claimed = |c: &Contract| c.claimed_at.is_some();
        let (c, already) = self.run_reply(
            contract_id,
            &Command::Cancel {
                requester: requester.clone(),
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

    /// Delivers the result: checks the holder, pins the artifacts, verifies that the pinned files
    /// are as they were at dispatch, and checks the structured output against the result schema. An
    /// accepted delivery closes the contract `COMPLETED`; files that changed are refused
    /// `RETRY_NEEDED` the first time in a claim (the lease is renewed) and end the contract
    /// `POINTER_STALE` the second; an output that fails the schema is refused `OUTPUT_SCHEMA_INVALID`,
    /// and the third such delivery ends the contract `FAILED`.
    pub fn fulfill_contract(
        &self,
        h: &HolderRef,
        delivery: &FulfillRequest,
    ) -> Result<FulfillOutcome, ContractRefusal> {
        self.fulfill_cancellable(h, delivery, &Cancel::new())
    }

    /// [`Contracts::fulfill_contract`] that stops when `cancel` is triggered while it reads files
    /// (artifacts and pinned files, between files and between the chunks of a hash): `IO_ERROR`,
    /// nothing further written, no strike and no schema attempt used. Once the fulfil transaction has
    /// run, it answers.
    pub fn fulfill_cancellable(
        &self,
        h: &HolderRef,
        delivery: &FulfillRequest,
        cancel: &Cancel,
    ) -> Result<FulfillOutcome, ContractRefusal> {
        // The arguments, in the tool's argument order.
        request::result_summary(&delivery.result_summary)?;
        if let Some(o) = &delivery.structured_output {
            request::structured_output(o)?;
        }
        let holder = self.holder(h)?;
        let id = &h.contract_id;
        // The pre-check writes nothing but an expiry step, so when a read of the record shows the
        // pre-check passing with nothing to write, its write transaction is left out (one lock fewer
        // per delivery under contention); the fulfil transaction sweeps and judges the record again at
        // its own `now`. Otherwise it runs as one write transaction.
        let check = Command::FulfillCheck {
            holder: holder.clone(),
        };
        let read = self.tx("get", |s| s.get(id))?;
        let now = self.now();
        let record = match read.map(|c| transition::apply(&c, &check, now, &self.policy())) {
            Some(transition::Step {
                next: None,
                reply: Reply::Done(c),
            }) => *c,
            _ => self.run(id, &check)?,
        };
        // The artifacts.
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
        // The pinned files.
        let drift = self.drift_of(&record, cancel)?;
        if cancel.is_cancelled() {
            return Err(io_refusal(
                Some(&record.contract_id),
                None,
                None,
                &fingerprint::cancelled(),
            ));
        }
        // The output.
        let verdict = if !drift.is_empty() {
            Verdict::Drift(drift)
        } else {
            match &record.contract_schema {
                None => Verdict::Valid,
                Some(s) => match schema::check(s, delivery.structured_output.as_ref()) {
                    Checked::Valid => Verdict::Valid,
                    Checked::Invalid(errors) => Verdict::Invalid(errors),
                    // Not the holder's fault: nothing is written and no attempt is used.
                    Checked::Undecided(error) => {
                        return Err(ContractRefusal::new(
                            format!(
                                "structured_output could not be checked against the contract_schema of contract {}: {} hit the regular-expression engine's backtracking limit. No schema attempt was used; deliver an output that avoids it, or fail the contract.",
                                record.contract_id,
                                if error.instance_path.is_empty() {
                                    "(root)"
                                } else {
                                    error.instance_path.as_str()
                                }
                            ),
                            RefusalDetails::ContractSchemaInvalid {
                                validation_errors: vec![error],
                            },
                        ));
                    }
                },
            }
        };
        // The fulfil transaction.
        let command = Command::Fulfill {
            holder,
            delivery: Delivery {
                result_summary: delivery.result_summary.clone(),
                structured_output: delivery.structured_output.clone(),
                artifacts_pointers: artifacts,
            },
            verdict,
        };
        let result = self.run(id, &command);
        #[cfg(feature = "test-failpoints")]
        if matches!(&result, Err(r) if r.code() == RefusalCode::RetryNeeded) {
            crate::failpoints::hit("after-u2-commit");
        }
        let c = result?;
        let completed_at = c.completed_at.unwrap_or_default();
        self.tell(|| ContractEvent::Fulfilled {
            contract_id: c.contract_id.clone(),
            agent: h.agent_id.clone(),
            claim_to_fulfil: std::time::Duration::from_millis(
                u64::try_from(completed_at.saturating_sub(c.claimed_at.unwrap_or(completed_at))).unwrap_or(0),
            ),
        });
        Ok(FulfillOutcome {
            contract_id: c.contract_id.clone(),
            status: c.status,
            completed_at: instant(completed_at),
            artifacts_pointers: c.artifacts_pointers.clone().unwrap_or_default(),
            message: format!(
                "Contract {} is COMPLETED; the result is stored for {}.",
                c.contract_id, c.requester_agent
            ),
            warnings: epoch_warning(h, &c.contract_id),
        })
    }

    /// Compares the pinned files with what they were at dispatch, changing nothing, and says whether
    /// `caller` (with `claim_epoch`) could deliver now. Without a caller, `fulfillable` is false and
    /// the answer is warned `NO_IDENTITY`.
    pub fn verify_contract(
        &self,
        contract_id: &ContractId,
        caller: Option<&AgentId>,
        claim_epoch: Option<u64>,
    ) -> Result<VerifyOutcome, ContractRefusal> {
        self.verify_cancellable(contract_id, caller, claim_epoch, &Cancel::new())
    }

    /// [`Contracts::verify_contract`] that stops between files and between the chunks of a hash once
    /// `cancel` is triggered (`IO_ERROR`; it changes nothing either way).
    pub fn verify_cancellable(
        &self,
        contract_id: &ContractId,
        caller: Option<&AgentId>,
        claim_epoch: Option<u64>,
        cancel: &Cancel,
    ) -> Result<VerifyOutcome, ContractRefusal> {
        if let Some(e) = claim_epoch {
            request::claim_epoch(e)?;
        }
        let Some(record) = self.tx("get", |s| s.get(contract_id))? else {
            return Err(ContractRefusal::not_found(contract_id));
        };
        let drift = self.drift_of(&record, cancel)?;
        let now = self.now();
        let valid = drift.is_empty();
        let expired = record.is_logically_expired(now);
        let mut warnings = Vec::new();
        let identity_ok = match caller {
            Some(a) => a == &record.target_agent,
            None => {
                warnings.push(Warning {
                    code: WarningCode::NoIdentity,
                    message: String::from(
                        "No agent_id was given and there is no default agent identity, so fulfillable is false; pass agent_id to learn whether you could fulfill.",
                    ),
                });
                false
            }
        };
        let epoch_ok = match claim_epoch {
            Some(e) => e == record.claim_epoch,
            None => !self.config.require_claim_epoch(),
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
            now: instant(now),
            contract: ContractSummary::of(&record, now),
            warnings,
        })
    }

    /// One contract in full, its delivered result included (read it typed with
    /// [`ContractDetail::output`]): [`Contracts::inspect`] of `contract_id`, without the size bound of
    /// a tool answer. `CONTRACT_NOT_FOUND` when no contract has that id.
    pub fn detail(&self, contract_id: &ContractId) -> Result<ContractDetail, ContractRefusal> {
        let page = self.inspect(&InspectRequest {
            contract_id: Some(contract_id.clone()),
            unbounded: true,
            ..InspectRequest::default()
        })?;
        page.contracts
            .into_iter()
            .find_map(|item| match item {
                InspectItem::Detail(d) => Some(*d),
                InspectItem::Summary(_) => None,
            })
            .ok_or_else(|| ContractRefusal::not_found(contract_id))
    }

    /// Ends every contract past its deadline at `now` (queue window or lease), in batches of 1,000 per
    /// kind; a lease that ran out with deliveries left goes back to the queue. Every write operation
    /// already does this for the contracts it meets; this is for a host that sweeps on a timer.
    pub fn sweep(&self, now: DateTime<Utc>) -> Result<SweepReport, ContractRefusal> {
        let now = now.timestamp_millis();
        let mut total = SweepReport::default();
        loop {
            let r = self.tx("sweep", |s| s.sweep(now, SWEEP_BATCH_PER_CALL))?;
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

    /// Deletes the ended contracts that ended before `completed_before`; the number deleted.
    pub fn purge_terminal(&self, completed_before: DateTime<Utc>) -> Result<u64, ContractRefusal> {
        let before = completed_before.timestamp_millis();
        let mut total = 0;
        loop {
            let n = self.tx("purge_terminal", |s| {
                s.purge_terminal(before, SWEEP_BATCH_PER_CALL)
            })?;
            total += n;
            if n < SWEEP_BATCH_PER_CALL as u64 {
                return Ok(total);
            }
        }
    }

    /// One step of the retention purge: deletes at most 100 finished contracts (`COMPLETED`,
    /// `FAILED`, `CANCELLED`, `TIMED_OUT`, `POINTER_STALE`) that ended longer ago than the configured
    /// retention ([`ContractsConfig::finished_retention`], 7 days by default), oldest first, in one
    /// short store transaction; the number deleted (fewer than 100: none is left). Nothing when the
    /// retention is off. [`ContractsBuilder::purge_in_background`] runs it on a thread of its own.
    pub fn purge_finished(&self) -> Result<u64, ContractRefusal> {
        let Some(kept) = self.config.finished_retention() else {
            return Ok(0);
        };
        self.tx("purge_finished", |s| {
            retention::step(s, self.clock.as_ref(), kept)
        })
    }

    /// How many contracts the store holds in each state, and how many wait for each agent: two cheap
    /// queries, for a gauge read now and then (not on every call).
    pub fn queue_depth(&self) -> Result<QueueDepth, ContractRefusal> {
        self.tx("queue_depth", |s| s.queue_depth())
    }

    /// The store's integrity report: its own consistency check, and every record's invariants.
    pub fn check_integrity(&self) -> Result<IntegrityReport, ContractRefusal> {
        self.tx("check_integrity", |s| s.check_integrity())
    }
}

/// `CONTRACT_SCHEMA_INVALID` unless `schema` is an acceptable result schema.
pub(crate) fn accept_schema(schema: &Map<String, Value>) -> Result<(), ContractRefusal> {
    schema::accept(schema).map_err(|errors| {
        ContractRefusal::new(
            "contract_schema is not an acceptable JSON Schema (at most 16 KiB, draft 4, 6, 7, 2019-09 or 2020-12, valid against its meta-schema, no external $ref).",
            RefusalDetails::ContractSchemaInvalid {
                validation_errors: errors,
            },
        )
    })
}

fn epoch_warning(h: &HolderRef, contract_id: &ContractId) -> Vec<Warning> {
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
        created_at: instant(c.created_at),
        queue_expires_at: instant(c.queue_expires_at),
        lifetime_ends_at: instant(c.lifetime_ends_at),
        exec_ttl: std::time::Duration::from_secs(u64::from(c.exec_ttl_sec)),
        queue_ttl: std::time::Duration::from_secs(u64::from(c.queue_ttl_sec)),
        pointers: c.pointers.clone(),
        warnings,
    }
}

fn replay(existing: &Contract, payload: &str) -> Result<DispatchOutcome, ContractRefusal> {
    if existing.payload_sha256 == payload {
        return Ok(dispatched(existing, true, Vec::new()));
    }
    Err(ContractRefusal::new(
        format!(
            "idempotency_key already names contract {}, which was dispatched with different arguments.",
            existing.contract_id
        ),
        RefusalDetails::IdempotencyConflict {
            contract_id: existing.contract_id.clone(),
        },
    ))
}

/// The fingerprint that tells a retry from a different dispatch under the same idempotency key: the
/// SHA-256 of the dispatch's arguments as given (windows in seconds), without `idempotency_key`,
/// `requester_agent` and the ones left out.
pub fn payload_sha256(req: &DispatchRequest) -> String {
    let mut m = Map::new();
    m.insert("target_agent".into(), json!(req.target_agent));
    m.insert("title".into(), json!(req.title));
    m.insert(
        "workspace_root".into(),
        json!(req.workspace_root.to_string_lossy()),
    );
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
    if let Some(v) = req.exec_ttl {
        m.insert("exec_ttl_sec".into(), json!(v.as_secs()));
    }
    if let Some(v) = req.queue_ttl {
        m.insert("queue_ttl_sec".into(), json!(v.as_secs()));
    }
    if let Some(v) = req.max_deliveries {
        m.insert("max_deliveries".into(), json!(v));
    }
    canonical::sha256_hex(&Value::Object(m))
}
