//! The poll: claim the oldest waiting contract of an agent, check its files, and — asked to — wait
//! for work on the facade's clock.

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
    /// The call was cancelled; any claim it made was undone.
    Cancelled,
}

/// How often a waiting poll asks the store again even without a signal.
const WAIT_RECHECK: Duration = Duration::from_secs(5);

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
    /// `wait` it is the plain poll, without it.
    ///
    /// `cancel` ends the call with nothing claimed, waiting or not: a wait ends at once; a pinned file
    /// being hashed is left between two chunks; a claim the call made is undone (the contract goes
    /// back to the queue with the history entry `CLAIM_REVERTED: the poll was cancelled`, its epoch
    /// spent), also when the cancellation arrives after the files were checked but before the answer.
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
        let mut stale = Vec::new();
        if wait.is_zero() {
            let round = self.poll_round(agent, &mut stale, cancel)?;
            return Ok(self.answer_round(agent, round, stale, None));
        }
        let wake = Wake::new();
        cancel.attach(&wake);
        self.tx("watch", |s| s.watch(agent, &wake))?;
        let start = self.clock.monotonic();
        let deadline = start.saturating_add(wait);
        let waited = || self.clock.monotonic().saturating_sub(start);
        let mut first = true;
        loop {
            let round = self.poll_round(agent, &mut stale, cancel)?;
            let waited_now = if first { Duration::ZERO } else { waited() };
            if !matches!(round, Round::Empty) || waited() >= wait {
                return Ok(self.answer_round(agent, round, stale, Some(waited_now)));
            }
            if first {
                self.tell(|| ContractEvent::WaitingPollStarted {
                    agent: agent.clone(),
                    wait,
                });
            }
            first = false;
            self.wait_until_due(agent, deadline, &wake, cancel)?;
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
    ) -> Result<(), ContractRefusal> {
        loop {
            let mono = self.clock.monotonic();
            if cancel.is_cancelled() || mono >= deadline {
                return Ok(());
            }
            let now = self.now();
            let due = self.tx("due", |s| s.due(agent, now))?;
            if due.claimable {
                return Ok(());
            }
            // When a redelivery or a deadline of the agent's records falls due.
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

    /// One round of the poll, adding to `stale` the contracts it closes. A triggered `cancel` claims
    /// nothing more, stops a verification between chunks, and undoes the claim this round made
    /// ([`Round::Cancelled`]).
    fn poll_round(
        &self,
        agent: &AgentId,
        stale: &mut Vec<Skipped>,
        cancel: &Cancel,
    ) -> Result<Round, ContractRefusal> {
        loop {
            if cancel.is_cancelled() {
                return Ok(Round::Cancelled);
            }
            let Some(claimed) = self.tx("claim_next", |s| s.claim_next(agent))? else {
                return Ok(Round::Empty);
            };
            #[cfg(feature = "test-failpoints")]
            crate::failpoints::hit("after-claim-commit");
            let epoch = claimed.claim_epoch;
            match fingerprint::verify_cancellable(
                self.fs.as_ref(),
                &claimed.workspace_root,
                &claimed.pointers,
                self.config.allowed_roots(),
                cancel,
            ) {
                // The last look before the answer: a caller gone by now gets nothing, and the claim
                // is undone rather than held by nobody until its lease runs out.
                _ if cancel.is_cancelled() => {
                    self.revert(&claimed.contract_id, epoch, Revert::Cancelled)?;
                    return Ok(Round::Cancelled);
                }
                Ok(drift) if drift.is_empty() => return Ok(Round::Claimed(Box::new(claimed))),
                Ok(drift) => {
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
}
