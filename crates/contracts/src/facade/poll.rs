//! The poll: claim the oldest waiting contract of an agent, check its files, and — asked to — wait
//! for work on the facade's clock. A waiting poll is a value ([`PollTask`]) that its host steps: the
//! blocking [`Contracts::poll_next_task_wait`] waits between two steps on the facade's clock; an
//! async host parks the task as state, without a thread, until the task's [`Wake`] is given or its
//! deadline comes.

use std::sync::Arc;
use std::time::Duration;

use shiftwork_seams::Clock;

use super::{Contracts, io_refusal};
use crate::error::ContractRefusal;
use crate::fingerprint;
use crate::limits::MAX_STALE_PER_POLL;
use crate::model::{AgentId, Contract, Status};
use crate::observe::ContractEvent;
use crate::transition::{self, Command, Revert};
use crate::views::{HeldContract, PollOutcome, Skipped};
use crate::wait::{Cancel, Wake};

/// One round of a poll.
enum Round {
    /// A contract claimed with its files as pinned.
    Claimed(Box<Contract>),
    /// Nothing qualified.
    Empty,
    /// Stopped after closing [`MAX_STALE_PER_POLL`] stale contracts.
    StaleLimit,
    /// The call was cancelled (or no longer meets its [`Cancel::require`]d condition); any claim it
    /// made was undone.
    Cancelled,
}

/// How often a waiting poll asks the store again even without a signal.
const WAIT_RECHECK: Duration = Duration::from_secs(5);

/// A poll in progress ([`Contracts::poll_task`]): each [`PollTask::step`] runs it as far as it can
/// without waiting, and either answers or says until when it waits. Between two steps it holds no
/// transaction, no lock, no pooled connection and no thread: it is plain state, woken by its
/// [`PollTask::wake`] — which the store gives when a contract of the agent may have become claimable,
/// and the call's [`Cancel`] when it is cancelled.
///
/// ```
/// use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, MemoryStore, PollStep};
/// use shiftwork_contracts::roots::AllowedRoots;
/// use shiftwork_contracts::wait::Cancel;
/// use shiftwork_seams::{Clock, MemFs, SystemClock};
/// use std::{sync::Arc, time::Duration};
///
/// let fs = MemFs::new();
/// fs.make_dirs("/w");
/// let config = ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/w"])).build().unwrap();
/// let c = Contracts::builder(Arc::new(MemoryStore::new(Arc::new(SystemClock::new()))))
///     .fs(Arc::new(fs))
///     .ids(Arc::new(shiftwork_contracts::SeededIdSource::new(1)))
///     .config(config)
///     .build();
/// let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
/// let mut task = c.poll_task(&bob, Duration::from_secs(60), &Cancel::new());
/// let PollStep::Wait { .. } = task.step(&c) else { panic!("nothing to claim yet") };
/// // Parked: no thread waits. A dispatch gives the task's wake-up.
/// c.dispatch(&DispatchRequest::new(alice, bob, "Review", "/w")).unwrap();
/// assert!(task.wake().take(), "woken by the dispatch");
/// task.woken();
/// let PollStep::Done(Ok(polled)) = task.step(&c) else { panic!("answered") };
/// assert!(polled.held().is_some());
/// ```
pub struct PollTask {
    agent: AgentId,
    wait: Duration,
    cancel: Cancel,
    wake: Wake,
    stale: Vec<Skipped>,
    /// When the wait began and ends, on the facade's clock's monotonic time (set by the first step).
    window: Option<(Duration, Duration)>,
    /// The first round has run.
    polled: bool,
    /// The store (or the cancellation) gave the wake-up since the last step.
    woken: bool,
    /// When a redelivery or a deadline of the agent's records falls due (monotonic time).
    falls_due: Option<Duration>,
    done: bool,
    /// The store the wake is registered with while the poll waits: answering or dropping the task
    /// takes it off the store's list ([`crate::Store::unwatch`]), which hands on a wake given after
    /// the poll's last look.
    registered: Option<Arc<dyn crate::Store>>,
}

impl Drop for PollTask {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// What a [`PollTask::step`] came to.
#[derive(Debug)]
pub enum PollStep {
    /// The poll answered (a claim, nothing, or a refusal); stepping it again answers nothing claimed.
    Done(Result<PollOutcome, ContractRefusal>),
    /// Nothing to claim yet: step again once [`PollTask::wake`] is given (tell the task with
    /// [`PollTask::woken`] when the wait took the signal) or the facade clock's
    /// [`Clock::monotonic`] time reaches `until`, whichever comes first.
    Wait {
        /// The latest monotonic instant to step again at.
        until: Duration,
    },
}

impl std::fmt::Debug for PollTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollTask")
            .field("agent", &self.agent)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl PollTask {
    /// The signal the task waits on between two steps.
    pub fn wake(&self) -> &Wake {
        &self.wake
    }

    /// The call's cancellation.
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// Tells the task its wake-up was given (the waiter took the signal, as
    /// [`Clock::wait_until`] does): the next step polls at once.
    pub fn woken(&mut self) {
        self.woken = true;
    }

    /// Takes the wake off the store's list, once.
    fn unregister(&mut self) {
        if let Some(store) = self.registered.take() {
            store.unwatch(&self.agent, &self.wake);
        }
    }

    /// Runs the poll as far as it goes without waiting, on `contracts` (the facade that made it):
    /// the first step registers the wait with the store (when there is one) and polls; a later step
    /// polls again when it was woken, something of the agent fell due, the call was cancelled or the
    /// deadline came, and otherwise asks the store whether anything is claimable before it says to
    /// wait again. A task that answered answers nothing claimed if stepped again.
    pub fn step(&mut self, contracts: &Contracts) -> PollStep {
        if self.done {
            return PollStep::Done(Ok(contracts.answer_round(
                &self.agent,
                Round::Cancelled,
                Vec::new(),
                None,
            )));
        }
        let step = contracts
            .advance(self)
            .unwrap_or_else(|refusal| PollStep::Done(Err(refusal)));
        if matches!(step, PollStep::Done(_)) {
            self.done = true;
            self.unregister();
        }
        step
    }
}

impl Contracts {
    /// Claims the oldest waiting contract addressed to `agent` and checks that its pinned files are
    /// as they were at dispatch. A contract whose files changed is closed `POINTER_STALE` (listed in
    /// `skipped_stale`) and the next one is tried, at most eight a call. Nothing claimed is a success
    /// too ([`PollOutcome::Empty`]).
    pub fn poll_next_task(&self, agent: &AgentId) -> Result<PollOutcome, ContractRefusal> {
        self.poll_next_task_wait(agent, Duration::ZERO, &Cancel::new())
    }

    /// [`Contracts::poll_next_task`], waiting up to `wait` for work when none is there: the call waits
    /// on the facade's clock ([`Clock::wait_until`]), holding no transaction, lock or pooled
    /// connection, until the store signals that a contract of `agent` may have become claimable (a
    /// dispatch, a release or a redelivery, made in this process, another one or, with PostgreSQL,
    /// on another machine) or a redelivery or a deadline falls due, then runs the poll again; it
    /// answers nothing claimed only once `wait` has passed on that clock (the last poll runs at the
    /// deadline). The answer carries the time waited (its `waited`, written `waited_ms`); with a zero
    /// `wait` it is the plain poll, without it. It is [`Contracts::poll_task`] stepped on this thread;
    /// a host that must not hold a thread while it waits steps the task itself.
    ///
    /// `cancel` ends the call with nothing claimed, waiting or not: a wait ends at once; a pinned file
    /// being hashed is left between two chunks; a claim the call made is undone (the contract goes
    /// back to the queue with the history entry `CLAIM_REVERTED: the poll was cancelled`, its epoch
    /// spent), also when the cancellation arrives after the files were checked but before the answer,
    /// and — through [`Cancel::undeliver`] — when the answer made will never reach the caller. A
    /// condition given with [`Cancel::require`] is judged before each claim and before the answer.
    ///
    /// ```
    /// use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, MemoryStore};
    /// use shiftwork_contracts::roots::AllowedRoots;
    /// use shiftwork_contracts::wait::Cancel;
    /// use shiftwork_seams::{MemFs, SystemClock};
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let fs = MemFs::new();
    /// fs.make_dirs("/w");
    /// let config = ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/w"])).build().unwrap();
    /// let c = Arc::new(
    ///     Contracts::builder(Arc::new(MemoryStore::new(Arc::new(SystemClock::new()))))
    ///         .fs(Arc::new(fs))
    ///         .config(config)
    ///         .real_ids().build(),
    /// );
    /// let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
    /// let requester = c.clone();
    /// let target = bob.clone();
    /// std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(50));
    ///     requester.dispatch(&DispatchRequest::new(alice, target, "Review", "/w")).unwrap();
    /// });
    /// let polled = c.poll_next_task_wait(&bob, Duration::from_secs(10), &Cancel::new()).unwrap();
    /// assert!(polled.held().is_some(), "woken by the dispatch, not after ten seconds");
    /// ```
    pub fn poll_next_task_wait(
        &self,
        agent: &AgentId,
        wait: Duration,
        cancel: &Cancel,
    ) -> Result<PollOutcome, ContractRefusal> {
        let mut task = self.poll_task(agent, wait, cancel);
        loop {
            match task.step(self) {
                PollStep::Done(answer) => return answer,
                PollStep::Wait { until } => {
                    if self.clock.wait_until(task.wake(), until) {
                        task.woken();
                    }
                }
            }
        }
    }

    /// A poll for `agent` that waits up to `wait` for work, under `cancel`, to be stepped
    /// ([`PollTask::step`]); nothing runs until its first step.
    pub fn poll_task(&self, agent: &AgentId, wait: Duration, cancel: &Cancel) -> PollTask {
        let wake = Wake::new();
        cancel.attach(&wake);
        PollTask {
            agent: agent.clone(),
            wait,
            cancel: cancel.clone(),
            wake,
            stale: Vec::new(),
            window: None,
            polled: false,
            woken: false,
            falls_due: None,
            done: false,
            registered: None,
        }
    }

    /// One step of `task` ([`PollTask::step`]).
    fn advance(&self, task: &mut PollTask) -> Result<PollStep, ContractRefusal> {
        let clock = self.clock.as_ref();
        let (start, deadline) = match task.window {
            Some(window) => window,
            None => {
                if !task.wait.is_zero() {
                    self.tx("watch", |s| s.watch(&task.agent, &task.wake))?;
                    task.registered = Some(Arc::clone(&self.store));
                }
                let start = clock.monotonic();
                let window = (start, start.saturating_add(task.wait));
                task.window = Some(window);
                window
            }
        };
        let mut poll_now = !task.polled || std::mem::take(&mut task.woken) | task.wake.take();
        loop {
            let mono = clock.monotonic();
            if task.cancel.is_cancelled() || mono >= deadline || task.falls_due.is_some_and(|d| mono >= d) {
                poll_now = true;
            }
            if poll_now {
                // About to look again: whatever woke this poll is being acted on, and the store's next
                // wake goes to another poll. A cancelled poll does not look, so it keeps (and hands
                // on) its wake.
                if task.polled && task.registered.is_some() && !task.cancel.is_cancelled() {
                    self.tx("watch", |s| s.watch(&task.agent, &task.wake))?;
                }
                let round = self.poll_round(&task.agent, &mut task.stale, &task.cancel)?;
                let first = !task.polled;
                task.polled = true;
                task.falls_due = None;
                if task.wait.is_zero() {
                    let stale = std::mem::take(&mut task.stale);
                    return Ok(PollStep::Done(Ok(self.answer_round(
                        &task.agent,
                        round,
                        stale,
                        None,
                    ))));
                }
                let waited = clock.monotonic().saturating_sub(start);
                if !matches!(round, Round::Empty) || waited >= task.wait {
                    let waited = if first { Duration::ZERO } else { waited };
                    let stale = std::mem::take(&mut task.stale);
                    return Ok(PollStep::Done(Ok(self.answer_round(
                        &task.agent,
                        round,
                        stale,
                        Some(waited),
                    ))));
                }
                if first {
                    self.tell(|| ContractEvent::WaitingPollStarted {
                        agent: task.agent.clone(),
                        wait: task.wait,
                    });
                }
            }
            // Nothing claimed yet: ask the store whether to look again now or what to wait for.
            let mono = clock.monotonic();
            if task.cancel.is_cancelled() || mono >= deadline {
                poll_now = true;
                continue;
            }
            let now = self.now();
            let due = self.tx("due", |s| s.due(&task.agent, now))?;
            if due.claimable {
                poll_now = true;
                continue;
            }
            // When a redelivery or a deadline of the agent's records falls due.
            task.falls_due = due
                .next_at
                .map(|at| mono.saturating_add(Duration::from_millis(u64::try_from(at - now).unwrap_or(0))));
            // The safety net: a signal lost (a reconnecting listener) costs at most WAIT_RECHECK.
            let mut until = deadline.min(mono.saturating_add(WAIT_RECHECK));
            if let Some(d) = task.falls_due {
                until = until.min(d);
            }
            return Ok(PollStep::Wait { until });
        }
    }

    fn answer_round(
        &self,
        agent: &AgentId,
        round: Round,
        stale: Vec<Skipped>,
        waited: Option<Duration>,
    ) -> PollOutcome {
        match round {
            Round::Claimed(c) => {
                self.tell(|| ContractEvent::Claimed {
                    contract_id: c.contract_id.clone(),
                    agent: agent.clone(),
                    claim_epoch: c.claim_epoch,
                    delivery_count: c.delivery_count,
                });
                PollOutcome::Claimed {
                    status: Status::Claimed,
                    contract: Box::new(HeldContract::of(&c)),
                    skipped_stale: stale,
                    waited,
                }
            }
            Round::Empty => PollOutcome::Empty {
                message: format!("No pending contracts for agent \"{agent}\""),
                skipped_stale: stale,
                waited,
            },
            Round::StaleLimit => PollOutcome::Empty {
                message: format!(
                    "Closed {MAX_STALE_PER_POLL} contracts whose files changed for agent \"{agent}\"; call poll_next_task again"
                ),
                skipped_stale: stale,
                waited,
            },
            Round::Cancelled => PollOutcome::Empty {
                message: match waited {
                    Some(_) => {
                        format!("Stopped waiting for work for agent \"{agent}\": the wait was cancelled")
                    }
                    None => format!("Stopped looking for work for agent \"{agent}\": the poll was cancelled"),
                },
                skipped_stale: stale,
                waited,
            },
        }
    }

    /// One round of the poll, adding to `stale` the contracts it closes. A triggered `cancel` (or one
    /// whose required condition fails) claims nothing more, stops a verification between chunks, and
    /// undoes the claim this round made ([`Round::Cancelled`]). Each claim is registered with
    /// `cancel` the moment it is committed ([`Cancel::undeliver`] undoes it from then on).
    fn poll_round(
        &self,
        agent: &AgentId,
        stale: &mut Vec<Skipped>,
        cancel: &Cancel,
    ) -> Result<Round, ContractRefusal> {
        loop {
            if !cancel.allows() {
                return Ok(Round::Cancelled);
            }
            crate::failpoints::pause("poll-before-claim", cancel);
            let Some(claimed) = self.tx("claim_next", |s| s.claim_next(agent))? else {
                return Ok(Round::Empty);
            };
            let epoch = claimed.claim_epoch;
            cancel.hold(&claimed.contract_id, epoch, self.undo_claim(&claimed));
            #[cfg(feature = "test-failpoints")]
            crate::failpoints::hit("after-claim-commit");
            crate::failpoints::pause("poll-after-claim", cancel);
            let verified = fingerprint::verify_cancellable(
                self.fs.as_ref(),
                &claimed.workspace_root,
                &claimed.pointers,
                self.config.allowed_roots(),
                cancel,
            );
            crate::failpoints::pause("poll-after-verify", cancel);
            match verified {
                // The last look before the answer: a caller gone by now (or whose credentials no
                // longer hold) gets nothing, and the claim is undone rather than held by nobody until
                // its lease runs out.
                _ if !cancel.allows() => {
                    cancel.settle(&claimed.contract_id, epoch);
                    self.revert(&claimed.contract_id, epoch, Revert::Cancelled)?;
                    return Ok(Round::Cancelled);
                }
                Ok(drift) if drift.is_empty() => return Ok(Round::Claimed(Box::new(claimed))),
                Ok(drift) => {
                    cancel.settle(&claimed.contract_id, epoch);
                    let policy = self.policy();
                    let command = Command::StaleAtClaim {
                        epoch,
                        drift: drift.clone(),
                    };
                    self.tx("update", |s| {
                        s.update(&claimed.contract_id, &|c, now| {
                            transition::apply(c, &command, now, &policy)
                        })
                    })?;
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
                    cancel.settle(&claimed.contract_id, epoch);
                    self.revert(&claimed.contract_id, epoch, Revert::CheckFailed)?;
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

    /// What undoes `claimed` when the poll's answer is dropped: the claim goes back to the queue
    /// (`CLAIM_REVERTED: the poll was cancelled`) if it still stands under its epoch. A failure leaves
    /// the claim to run out its lease, as a crash would.
    fn undo_claim(&self, claimed: &Contract) -> Box<dyn FnOnce() + Send> {
        let store = Arc::clone(&self.store);
        let policy = self.policy();
        let contract_id = claimed.contract_id.clone();
        let command = Command::RevertClaim {
            epoch: claimed.claim_epoch,
            why: Revert::Cancelled,
        };
        Box::new(move || {
            let _span = tracing::info_span!("contracts.store", operation = "update").entered();
            let _ = store.update(&contract_id, &|c, now| {
                transition::apply(c, &command, now, &policy)
            });
        })
    }
}
