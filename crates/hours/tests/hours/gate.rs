//! The hours gate (§8): the scenarios of §8.6 driven through a small test host that carries out each
//! action as HR-59 says, and table tests of every decision function.

use chrono::{DateTime, TimeDelta, Utc};
use shiftwork_hours::{
    ARM_LEAD, BootRoute, CLOSE_QUIET, CLOSE_SETTLE, CloseStepOutcome, DEFAULT_LEASE,
    DEFAULT_SHUTDOWN_TIMEOUT, Expr, GateAction, GateEvent, GateMemory, GateStatus, HarnessGate, HoldPlan,
    Hours, LeaseChange, LeaseRefusal, LeaseState, Observation, ProcState, ReleasePlan, ShutdownMode,
    StartRoute, StopReason, TickInput, TurnState, boot_route, close_anchor, close_deadline, close_step,
    hold_plan, judge_lease, release_plan, start_route, tick, ungate,
};

use crate::{tz, utc};

const DAY_EXPR: &str = "TZ=UTC Mon-Fri 09:00-13:00";

/// Monday 2026-09-21 at `hh:mm:ss` UTC.
fn mon(hms: &str) -> DateTime<Utc> {
    utc(&format!("2026-09-21T{hms}Z"))
}

/// Tuesday 2026-09-22 at `hh:mm:ss` UTC.
fn tue(hms: &str) -> DateTime<Utc> {
    utc(&format!("2026-09-22T{hms}Z"))
}

fn markers(last_event_at: Option<DateTime<Utc>>, turn_ended: bool) -> Observation {
    Observation::Turn(TurnState {
        last_event_at,
        turn_markers: true,
        turn_ended,
    })
}

/// What happened on a tick, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Action(GateAction),
    Event(GateEvent),
    Lease(LeaseChange),
    Hold(HoldPlan),
    Release(ReleasePlan),
    Close(CloseStepOutcome),
}

/// A minimal host for one harness: it keeps the state HR-52 says the host owns and carries out each
/// action as HR-59 says.
struct Host {
    hours: Hours,
    mode: ShutdownMode,
    timeout: Option<TimeDelta>,
    enabled: bool,
    state: ProcState,
    has_process: bool,
    held: bool,
    closing: bool,
    close_at: Option<DateTime<Utc>>,
    lease: LeaseState,
    memory: GateMemory,
    observation: Observation,
    other_holds: u64,
}

impl Host {
    /// An enabled harness, running with a process, graceful, timeout 15 min (the §8.6 defaults).
    fn running(hours: Hours) -> Self {
        Host {
            hours,
            mode: ShutdownMode::Graceful,
            timeout: Some(TimeDelta::minutes(15)),
            enabled: true,
            state: ProcState::Running,
            has_process: true,
            held: false,
            closing: false,
            close_at: None,
            lease: LeaseState::default(),
            memory: GateMemory::default(),
            observation: markers(None, false),
            other_holds: 0,
        }
    }

    fn status(&self) -> GateStatus {
        GateStatus {
            up: self.state.is_up(),
            held: self.held,
            closing: self.closing,
            other_holds: self.other_holds,
        }
    }

    fn stop_process(&mut self) {
        self.state = ProcState::Stopped;
        self.has_process = false;
        self.closing = false;
    }

    fn start_process(&mut self) {
        self.state = ProcState::Running;
        self.has_process = true;
    }

    fn step_close(&mut self, now: DateTime<Utc>, steps: &mut Vec<Step>) {
        let Some(close_at) = self.close_at else {
            panic!("a close step without a close anchor");
        };
        let outcome = close_step(now, self.mode, self.timeout, close_at, &self.observation);
        if outcome.stop.is_some() {
            self.stop_process();
        }
        steps.push(Step::Close(outcome));
    }

    /// One tick at `now`, without its events (the scenarios not about events list none).
    fn act(&mut self, now: DateTime<Utc>) -> Vec<Step> {
        let mut steps = self.tick(now);
        steps.retain(|s| !matches!(s, Step::Event(_)));
        steps
    }

    /// One tick at `now`; returns what happened, events included.
    fn tick(&mut self, now: DateTime<Utc>) -> Vec<Step> {
        let out = tick(
            TickInput {
                now,
                hours: &self.hours,
                status: self.status(),
                mode: self.mode,
                lease: self.lease,
                in_flight: false,
            },
            self.memory,
        );
        self.memory = out.memory;
        self.lease = out.lease;
        let mut steps: Vec<Step> = out.events.iter().copied().map(Step::Event).collect();
        steps.extend(out.lease_change.map(Step::Lease));
        let Some(action) = out.action else {
            return steps;
        };
        steps.push(Step::Action(action));
        match action {
            GateAction::Arm { .. } => {}
            GateAction::CloseStep { now } => self.step_close(now, &mut steps),
            GateAction::Hold {
                mode,
                close_at,
                step_now,
                ..
            } => {
                let plan = hold_plan(mode, close_at, self.enabled, self.state, self.has_process, false);
                steps.push(Step::Hold(plan));
                match plan {
                    HoldPlan::Ignore => {}
                    HoldPlan::BeginClose { close_at } => {
                        self.held = true;
                        self.closing = true;
                        self.close_at = Some(close_at);
                        if step_now {
                            self.step_close(now, &mut steps);
                        }
                    }
                    HoldPlan::StopNow => {
                        self.held = true;
                        self.stop_process();
                    }
                    HoldPlan::MarkHeld => self.held = true,
                }
            }
            GateAction::AddHoursHold { mode } => {
                let plan = hold_plan(mode, now, self.enabled, self.state, self.has_process, false);
                steps.push(Step::Hold(plan));
                if plan == HoldPlan::MarkHeld {
                    self.held = true;
                }
            }
            GateAction::Release { .. } => {
                let plan = release_plan(self.held, self.enabled, self.state, self.has_process);
                steps.push(Step::Release(plan));
                if plan != ReleasePlan::NoOp {
                    self.held = false;
                    self.closing = false;
                }
                if plan == ReleasePlan::ClearAndStart {
                    self.start_process();
                }
            }
        }
        steps
    }

    /// An operator start (HR-66, HR-67): a lease start writes `lease_until` first, then starts.
    fn start(
        &mut self,
        now: DateTime<Utc>,
        requested: Option<TimeDelta>,
    ) -> Result<StartRoute, LeaseRefusal> {
        let route = start_route(now, "day", requested, HarnessGate::Gated(&self.hours))?;
        if let StartRoute::Leased { until } = route {
            self.lease = LeaseState {
                until: Some(until),
                expired_end: None,
            };
        }
        self.enabled = true;
        self.held = false;
        self.closing = false;
        self.start_process();
        Ok(route)
    }
}

fn hold(close_at: DateTime<Utc>, step_now: bool, mode: ShutdownMode) -> Step {
    Step::Action(GateAction::Hold {
        mode,
        close_at,
        anchored: true,
        step_now,
    })
}

fn close(deadline: DateTime<Utc>, stop: Option<StopReason>) -> Step {
    Step::Close(CloseStepOutcome { deadline, stop })
}

const G: ShutdownMode = ShutdownMode::Graceful;

/// G-1 … G-6 (HR-56, HR-57 row 3, HR-59, HR-61 … HR-64): holding at the close and the close steps.
#[test]
fn g1_to_g6_closing_a_running_harness() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let hours = expr.bind(tz("UTC"));
    let deadline = mon("13:15:00");

    // G-1: tick at 13:00:00, turn in progress, last event 12:59:50.
    let mut h = Host::running(hours.clone());
    h.observation = markers(Some(mon("12:59:50")), false);
    assert_eq!(
        h.act(mon("13:00:00")),
        vec![
            hold(mon("13:00:00"), true, G),
            Step::Hold(HoldPlan::BeginClose {
                close_at: mon("13:00:00")
            }),
            close(deadline, None)
        ],
        "G-1"
    );

    // G-2: the turn ended at 13:04:00; the close settles for 10 s.
    h.observation = markers(Some(mon("13:04:00")), true);
    assert_eq!(
        h.act(mon("13:04:09")),
        vec![
            Step::Action(GateAction::CloseStep { now: mon("13:04:09") }),
            close(deadline, None)
        ],
        "G-2"
    );
    assert_eq!(
        h.act(mon("13:04:10")),
        vec![
            Step::Action(GateAction::CloseStep { now: mon("13:04:10") }),
            close(deadline, Some(StopReason::TurnEnded))
        ],
        "G-2"
    );
    assert_eq!(StopReason::TurnEnded.to_string(), "turn ended");
    assert_eq!(
        (h.state, h.held, h.closing),
        (ProcState::Stopped, true, false),
        "G-2: a hold exit"
    );

    // G-3: the turn never ends and events keep coming: the deadline stops it.
    let mut h = Host::running(hours.clone());
    h.act(mon("13:00:00"));
    h.observation = markers(Some(mon("13:14:58")), false);
    assert_eq!(h.act(mon("13:14:59")).last(), Some(&close(deadline, None)), "G-3");
    h.observation = markers(Some(mon("13:14:59")), false);
    assert_eq!(
        h.act(mon("13:15:00")).last(),
        Some(&close(deadline, Some(StopReason::DeadlineReached))),
        "G-3"
    );
    assert_eq!(StopReason::DeadlineReached.to_string(), "deadline reached");

    // G-4: no turn markers; silence for two minutes counts as done.
    let mut h = Host::running(hours.clone());
    h.observation = Observation::Turn(TurnState {
        last_event_at: Some(mon("13:01:00")),
        turn_markers: false,
        turn_ended: false,
    });
    assert_eq!(h.act(mon("13:00:00")).last(), Some(&close(deadline, None)), "G-4");
    assert_eq!(h.act(mon("13:02:59")).last(), Some(&close(deadline, None)), "G-4");
    assert_eq!(
        h.act(mon("13:03:00")).last(),
        Some(&close(deadline, Some(StopReason::Quiet))),
        "G-4"
    );
    assert_eq!(StopReason::Quiet.to_string(), "quiet");

    // G-5: nothing attributable: hold, then stop on the same tick.
    let mut h = Host::running(hours.clone());
    h.observation = Observation::Unavailable {
        why: String::from("generic adapter"),
    };
    let steps = h.act(mon("13:00:00"));
    let unavailable = StopReason::Unavailable(String::from("generic adapter"));
    assert_eq!(
        steps,
        vec![
            hold(mon("13:00:00"), true, G),
            Step::Hold(HoldPlan::BeginClose {
                close_at: mon("13:00:00")
            }),
            close(deadline, Some(unavailable.clone()))
        ],
        "G-5"
    );
    assert_eq!(unavailable.to_string(), "graceful unavailable: generic adapter");

    // G-6: a new prompt during the close does not move the deadline.
    let mut h = Host::running(hours.clone());
    h.act(mon("13:00:00"));
    h.observation = markers(Some(mon("13:08:30")), false);
    assert_eq!(h.act(mon("13:14:59")).last(), Some(&close(deadline, None)), "G-6");
    assert_eq!(
        h.act(mon("13:15:00")).last(),
        Some(&close(deadline, Some(StopReason::DeadlineReached))),
        "G-6"
    );
}

/// G-7, G-8, G-9 (HR-57 row 5, HR-64, HR-65, HR-39 folds): hours reopening releases; the deadline is on
/// the UTC time line.
#[test]
fn g7_to_g9_reopening_and_the_fold() {
    // G-7: a five-minute break; the close started at 12:00 is cancelled at 12:05.
    let expr = Expr::parse("TZ=UTC Mon-Fri 09:00-12:00; Mon-Fri 12:05-17:00").unwrap();
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.observation = markers(Some(mon("11:59:00")), false);
    assert_eq!(h.act(mon("12:00:00"))[0], hold(mon("12:00:00"), true, G), "G-7");
    assert!(h.closing);
    assert_eq!(
        h.act(mon("12:05:00")),
        vec![
            Step::Action(GateAction::Release { ungated: false }),
            Step::Release(ReleasePlan::ClearOnly)
        ],
        "G-7"
    );
    assert_eq!(
        (h.held, h.closing, h.state),
        (false, false, ProcState::Running),
        "G-7: the process keeps running"
    );

    // G-8: New York, 2026-11-01, 00:30-01:30 runs on both passes of the fold.
    let expr = Expr::parse("TZ=America/New_York 00:30-01:30").unwrap();
    let ny = expr.bind(tz("UTC"));
    let at = |s: &str| utc(&format!("2026-11-01T{s}Z"));
    let mut h = Host::running(ny.clone());
    h.act(at("05:29:59"));
    h.observation = markers(Some(at("05:29:50")), false);
    assert_eq!(
        h.act(at("05:30:00")),
        vec![
            hold(at("05:30:00"), true, G),
            Step::Hold(HoldPlan::BeginClose {
                close_at: at("05:30:00")
            }),
            close(at("05:45:00"), None)
        ],
        "G-8"
    );
    h.observation = markers(Some(at("05:44:59")), false);
    assert_eq!(
        h.act(at("05:45:00")).last(),
        Some(&close(at("05:45:00"), Some(StopReason::DeadlineReached))),
        "G-8"
    );
    assert_eq!(
        h.act(at("06:00:00")),
        vec![
            Step::Action(GateAction::Release { ungated: false }),
            Step::Release(ReleasePlan::ClearAndStart)
        ],
        "G-8"
    );
    assert_eq!(h.state, ProcState::Running);
    assert_eq!(h.act(at("06:30:00"))[0], hold(at("06:30:00"), true, G), "G-8");

    // G-9: with a 45-minute timeout the close is still in flight when hours reopen at 06:00Z.
    let mut h = Host::running(ny.clone());
    h.timeout = Some(TimeDelta::minutes(45));
    h.act(at("05:30:00"));
    h.observation = markers(Some(at("05:59:00")), false);
    assert_eq!(
        h.act(at("05:59:59")).last(),
        Some(&close(at("06:15:00"), None)),
        "G-9"
    );
    assert_eq!(
        h.act(at("06:00:00")),
        vec![
            Step::Action(GateAction::Release { ungated: false }),
            Step::Release(ReleasePlan::ClearOnly)
        ],
        "G-9"
    );
    assert_eq!((h.closing, h.state), (false, ProcState::Running));
}

/// G-10 (HR-61, HR-71): a host that wakes past the close holds with the real anchor and stops at once.
#[test]
fn g10_suspended_host() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.observation = markers(Some(mon("12:50:00")), false);
    assert_eq!(h.act(mon("12:50:00")), vec![]);
    assert_eq!(
        h.act(mon("15:00:00")),
        vec![
            hold(mon("13:00:00"), true, G),
            Step::Hold(HoldPlan::BeginClose {
                close_at: mon("13:00:00")
            }),
            close(mon("13:15:00"), Some(StopReason::DeadlineReached))
        ],
        "G-10"
    );
    // HR-71: a clock stepped back into hours releases on the first tick that sees it.
    assert_eq!(
        h.act(mon("12:00:00")),
        vec![
            Step::Action(GateAction::Release { ungated: false }),
            Step::Release(ReleasePlan::ClearAndStart)
        ]
    );
}

/// G-11 … G-14 (HR-54, HR-62): how harnesses that are not simply running are held — or not.
#[test]
fn g11_to_g14_other_states() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let hours = expr.bind(tz("UTC"));
    // G-11: degraded with a process.
    let mut h = Host::running(hours.clone());
    h.state = ProcState::Degraded;
    assert_eq!(h.act(mon("13:00:00"))[1], Step::Hold(HoldPlan::StopNow), "G-11");
    assert_eq!(
        (h.state, h.has_process, h.held),
        (ProcState::Stopped, false, true)
    );
    // G-12: restarting, no process.
    let mut h = Host::running(hours.clone());
    h.state = ProcState::Restarting;
    h.has_process = false;
    assert_eq!(h.act(mon("13:00:00"))[1], Step::Hold(HoldPlan::StopNow), "G-12");
    // G-13: failed, no process: no action at 13:00 Monday or 09:00 Tuesday; it stays failed.
    let mut h = Host::running(hours.clone());
    h.state = ProcState::Failed;
    h.has_process = false;
    assert_eq!(h.act(mon("13:00:00")), vec![], "G-13");
    assert_eq!(h.act(tue("09:00:00")), vec![], "G-13");
    assert_eq!(h.state, ProcState::Failed);
    assert_eq!(
        hold_plan(G, mon("13:00:00"), true, ProcState::Failed, false, false),
        HoldPlan::Ignore,
        "G-13"
    );
    // G-14: operator-stopped: same ticks, no action; it stays stopped.
    let mut h = Host::running(hours.clone());
    h.enabled = false;
    h.state = ProcState::Stopped;
    h.has_process = false;
    assert_eq!(h.act(mon("13:00:00")), vec![], "G-14");
    assert_eq!(h.act(tue("09:00:00")), vec![], "G-14");
    assert_eq!(h.state, ProcState::Stopped);
    assert_eq!(
        hold_plan(G, mon("13:00:00"), false, ProcState::Stopped, false, false),
        HoldPlan::Ignore,
        "G-14"
    );
}

/// G-15 (HR-69): a boot outside hours begins held; hours opening starts it.
#[test]
fn g15_boot_outside_hours() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    assert_eq!(
        boot_route(true, true, None, mon("20:00:00")),
        BootRoute::BeginHeld,
        "G-15"
    );
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.state = ProcState::Stopped;
    h.has_process = false;
    h.held = true;
    assert_eq!(h.act(mon("20:00:00")), vec![]);
    assert_eq!(h.act(tue("08:59:59")), vec![]);
    assert_eq!(
        h.act(tue("09:00:00")).last(),
        Some(&Step::Release(ReleasePlan::ClearAndStart)),
        "G-15"
    );
    assert_eq!(h.state, ProcState::Running);
}

/// G-16 … G-18 (HR-56 steps 5–6, HR-57 row 1, HR-58, HR-60, HR-61, HR-66, HR-67, HR-69): a plain start
/// outside hours runs under a one-hour lease, arms a minute before its end, and is held at its end.
#[test]
fn g16_to_g18_leases() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let hours = expr.bind(tz("UTC"));
    // G-16.
    let mut h = Host::running(hours.clone());
    h.state = ProcState::Stopped;
    h.has_process = false;
    h.held = true;
    assert_eq!(
        h.start(mon("20:00:00"), None),
        Ok(StartRoute::Leased {
            until: mon("21:00:00")
        }),
        "G-16"
    );
    let mut t = mon("20:00:00");
    while t < mon("20:59:00") {
        assert_eq!(h.tick(t), vec![], "G-16: no action at {t}");
        t += TimeDelta::seconds(1);
    }
    assert_eq!(
        h.tick(mon("20:59:00")),
        vec![Step::Action(GateAction::Arm {
            close_at: mon("21:00:00")
        })],
        "G-16"
    );
    assert_eq!(h.tick(mon("20:59:01")), vec![], "G-16: armed once");
    assert_eq!(h.tick(mon("20:59:59")), vec![], "G-16: armed once");
    h.observation = markers(Some(mon("20:59:30")), false);
    assert_eq!(
        h.tick(mon("21:00:00")),
        vec![
            Step::Event(GateEvent::LeaseEnded),
            Step::Lease(LeaseChange::Expired {
                until: mon("21:00:00")
            }),
            hold(mon("21:00:00"), true, G),
            Step::Hold(HoldPlan::BeginClose {
                close_at: mon("21:00:00")
            }),
            close(mon("21:15:00"), None),
        ],
        "G-16"
    );
    assert_eq!(
        h.lease,
        LeaseState::default(),
        "the hold consumed the expired end"
    );

    // G-17: `start --for 3h`.
    let mut h = Host::running(hours.clone());
    assert_eq!(
        h.start(mon("20:00:00"), Some(TimeDelta::hours(3))),
        Ok(StartRoute::Leased {
            until: mon("23:00:00")
        }),
        "G-17"
    );

    // G-18: a daemon restarted mid-lease starts the harness and holds it at the lease's end.
    assert_eq!(
        boot_route(true, true, Some(mon("21:00:00")), mon("20:30:00")),
        BootRoute::Start,
        "G-18"
    );
    let mut h = Host::running(hours.clone());
    h.lease = LeaseState {
        until: Some(mon("21:00:00")),
        expired_end: None,
    };
    assert_eq!(h.tick(mon("20:30:00")), vec![]);
    let steps = h.tick(mon("21:00:00"));
    assert!(steps.contains(&hold(mon("21:00:00"), true, G)), "G-18: {steps:?}");
    assert!(
        steps.contains(&Step::Event(GateEvent::LeaseEnded)),
        "G-18: {steps:?}"
    );
}

/// G-19 (HR-56, HR-58, HR-60 rule 4): hours opening discards a lease; both events on that tick.
#[test]
fn g19_lease_discarded_when_hours_open() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.state = ProcState::Stopped;
    h.has_process = false;
    assert_eq!(
        h.start(mon("08:30:00"), None),
        Ok(StartRoute::Leased {
            until: mon("09:30:00")
        })
    );
    assert_eq!(h.tick(mon("08:30:00")), vec![]);
    assert_eq!(
        h.tick(mon("09:00:00")),
        vec![
            Step::Event(GateEvent::HoursChanged {
                in_hours: true,
                next: Some(mon("13:00:00"))
            }),
            Step::Event(GateEvent::LeaseEnded),
            Step::Lease(LeaseChange::DiscardedHoursOpened),
        ],
        "G-19"
    );
    assert_eq!(h.tick(mon("13:00:00"))[1], hold(mon("13:00:00"), true, G), "G-19");
}

/// G-20 (HR-66): the lease refusals and their texts.
#[test]
fn g20_lease_refusals() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let day = HarnessGate::Gated(&expr.bind(tz("UTC")));
    type Row<'a> = (
        DateTime<Utc>,
        &'a str,
        Option<TimeDelta>,
        HarnessGate<'a>,
        LeaseRefusal,
        &'a str,
    );
    #[rustfmt::skip]
    let rows: Vec<Row<'_>> = vec![
        (mon("20:00:00"), "plain", Some(TimeDelta::hours(2)), HarnessGate::Ungated, LeaseRefusal::Ungated("plain".into()), "no lease applies: plain has no operating_hours"),
        (mon("10:00:00"), "day", Some(TimeDelta::hours(1)), day, LeaseRefusal::InHours("day".into()), "no lease applies: day is in hours now"),
        (mon("20:00:00"), "day", Some(TimeDelta::minutes(-1)), day, LeaseRefusal::NonPositive, "no lease applies: lease length must be positive"),
        (mon("20:00:00"), "day", Some(TimeDelta::zero()), day, LeaseRefusal::NonPositive, "no lease applies: lease length must be positive"),
        // Rule 1 comes before rule 2.
        (mon("20:00:00"), "ghost", Some(TimeDelta::zero()), HarnessGate::Unknown, LeaseRefusal::NonPositive, "no lease applies: lease length must be positive"),
        (mon("20:00:00"), "ghost", None, HarnessGate::Unknown, LeaseRefusal::UnknownHarness, "unknown harness"),
        (mon("20:00:00"), "ghost", Some(TimeDelta::hours(1)), HarnessGate::Unknown, LeaseRefusal::UnknownHarness, "unknown harness"),
    ];
    for (now, name, requested, harness, refusal, text) in rows {
        let got = start_route(now, name, requested, harness).unwrap_err();
        assert_eq!(got, refusal, "G-20 {text}");
        assert_eq!(got.to_string(), text, "G-20");
        assert_eq!(
            got.is_no_lease(),
            text.starts_with("no lease applies: "),
            "G-20 {text}"
        );
    }
}

/// G-21 (HR-57 rows 3 and 6): immediate mode never arms and stops at once.
#[test]
fn g21_immediate_mode() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.mode = ShutdownMode::Immediate;
    assert_eq!(h.act(mon("12:59:30")), vec![], "G-21: no Arm");
    let steps = h.act(mon("13:00:00"));
    assert_eq!(
        steps[0],
        hold(mon("13:00:00"), false, ShutdownMode::Immediate),
        "G-21"
    );
    assert_eq!(steps[1], Step::Hold(HoldPlan::StopNow), "G-21");
}

/// G-22 (HR-57, Appendix A #7): a whole-week expression never acts, never arms, never emits.
#[test]
fn g22_whole_week() {
    let expr = Expr::parse("Mon-Sun 00:00-24:00").unwrap();
    let mut h = Host::running(expr.bind(tz("America/New_York")));
    let mut t = utc("2026-03-07T00:00:00Z");
    while t < utc("2026-03-10T00:00:00Z") {
        assert_eq!(h.tick(t), vec![], "G-22 at {t}");
        t += TimeDelta::seconds(37);
    }
}

/// G-23 (HR-56 step 4, HR-58): no event on the first evaluation; the flip is reported on the tick that
/// first sees it.
#[test]
fn g23_first_evaluation_is_silent() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let mut h = Host::running(expr.bind(tz("UTC")));
    h.state = ProcState::Stopped;
    h.has_process = false;
    h.held = true;
    assert_eq!(h.tick(mon("14:00:00")), vec![], "G-23");
    assert_eq!(h.tick(tue("08:59:59")), vec![], "G-23");
    assert_eq!(
        h.tick(tue("09:00:00"))[0],
        Step::Event(GateEvent::HoursChanged {
            in_hours: true,
            next: Some(tue("13:00:00"))
        }),
        "G-23"
    );
    assert_eq!(
        h.tick(tue("09:00:01"))
            .iter()
            .filter(|s| matches!(s, Step::Event(_)))
            .count(),
        0,
        "G-23: once"
    );
}

/// HR-51: the constants.
#[test]
fn hr51_constants() {
    assert_eq!(ARM_LEAD, TimeDelta::minutes(1));
    assert_eq!(CLOSE_SETTLE, TimeDelta::seconds(10));
    assert_eq!(CLOSE_QUIET, TimeDelta::minutes(2));
    assert_eq!(DEFAULT_SHUTDOWN_TIMEOUT, TimeDelta::minutes(15));
    assert_eq!(DEFAULT_LEASE, TimeDelta::hours(1));
}

/// HR-53: the shutdown mode accepts exactly `graceful` and `immediate`.
#[test]
fn hr53_shutdown_mode() {
    assert_eq!(ShutdownMode::default(), ShutdownMode::Graceful);
    assert_eq!("graceful".parse(), Ok(ShutdownMode::Graceful));
    assert_eq!("immediate".parse(), Ok(ShutdownMode::Immediate));
    for bad in ["", "Graceful", "IMMEDIATE", " graceful", "graceful ", "soft"] {
        let err = bad.parse::<ShutdownMode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "hours_shutdown must be graceful or immediate",
            "{bad:?}"
        );
        assert_eq!(err.given(), bad);
    }
    assert_eq!(
        ShutdownMode::Immediate.to_string().parse(),
        Ok(ShutdownMode::Immediate)
    );
}

/// HR-54: which states are up.
#[test]
fn hr54_up_states() {
    use ProcState::*;
    for (state, up) in [
        (Stopped, false),
        (Starting, true),
        (Running, true),
        (Degraded, true),
        (Restarting, true),
        (Failed, false),
    ] {
        assert_eq!(state.is_up(), up, "{state:?}");
    }
}

fn input<'a>(now: DateTime<Utc>, hours: &'a Hours, status: GateStatus, lease: LeaseState) -> TickInput<'a> {
    TickInput {
        now,
        hours,
        status,
        mode: G,
        lease,
        in_flight: false,
    }
}

/// HR-55, HR-56 step 1: while the previous decision is in flight nothing is decided and nothing changes.
#[test]
fn hr56_in_flight() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let memory = GateMemory {
        last_in: Some(true),
        was_leased: Some(true),
        armed_for: None,
        hours_asked: Some(7),
    };
    let lease = LeaseState {
        until: Some(mon("12:00:00")),
        expired_end: None,
    };
    let status = GateStatus {
        up: true,
        held: false,
        closing: false,
        other_holds: 7,
    };
    let out = tick(
        TickInput {
            in_flight: true,
            ..input(mon("13:00:00"), &expr.bind(tz("UTC")), status, lease)
        },
        memory,
    );
    assert_eq!(
        (
            out.action,
            out.events.len(),
            out.memory,
            out.lease,
            out.lease_change
        ),
        (None, 0, memory, lease, None)
    );
}

/// HR-56, HR-57: each row of the decision table, first match wins, with its memory updates.
#[test]
fn hr57_decision_table() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let hours = expr.bind(tz("UTC"));
    let up = GateStatus {
        up: true,
        ..GateStatus::default()
    };
    let leased = LeaseState {
        until: Some(mon("21:00:00")),
        expired_end: None,
    };

    // Row 1: out of hours and leased — arm only within ARM_LEAD, graceful, once; never rows 2–4.
    let closing_up = GateStatus {
        up: true,
        closing: true,
        ..GateStatus::default()
    };
    let out = tick(
        input(mon("20:00:00"), &hours, closing_up, leased),
        GateMemory::default(),
    );
    assert_eq!(out.action, None, "row 1 wins over rows 2 and 3");
    let out = tick(input(mon("20:59:00"), &hours, up, leased), GateMemory::default());
    assert_eq!(
        out.action,
        Some(GateAction::Arm {
            close_at: mon("21:00:00")
        })
    );
    assert_eq!(out.memory.armed_for, Some(mon("21:00:00")));
    let again = tick(input(mon("20:59:30"), &hours, up, leased), out.memory);
    assert_eq!(again.action, None);
    let immediate = tick(
        TickInput {
            mode: ShutdownMode::Immediate,
            ..input(mon("20:59:00"), &hours, up, leased)
        },
        GateMemory::default(),
    );
    assert_eq!(immediate.action, None);

    // Row 2: closing → close step.
    let out = tick(
        input(mon("13:05:00"), &hours, closing_up, LeaseState::default()),
        GateMemory::default(),
    );
    assert_eq!(out.action, Some(GateAction::CloseStep { now: mon("13:05:00") }));

    // Row 3: up → hold; consumes the expired end and clears armed_for.
    let memory = GateMemory {
        armed_for: Some(mon("13:00:00")),
        ..GateMemory::default()
    };
    let expired = LeaseState {
        until: None,
        expired_end: Some(mon("12:00:00")),
    };
    let out = tick(input(mon("14:00:00"), &hours, up, expired), memory);
    assert_eq!(
        out.action,
        Some(GateAction::Hold {
            mode: G,
            close_at: mon("13:00:00"),
            anchored: true,
            step_now: true
        }),
        "prev_end is later than the expired end"
    );
    assert_eq!((out.lease.expired_end, out.memory.armed_for), (None, None));

    // Row 4: down for other reasons → add the hours hold once per fingerprint.
    let other = GateStatus {
        other_holds: 42,
        ..GateStatus::default()
    };
    let memory = GateMemory {
        armed_for: Some(mon("13:00:00")),
        ..GateMemory::default()
    };
    let out = tick(input(mon("14:00:00"), &hours, other, expired), memory);
    assert_eq!(out.action, Some(GateAction::AddHoursHold { mode: G }));
    assert_eq!(
        (
            out.memory.hours_asked,
            out.memory.armed_for,
            out.lease.expired_end
        ),
        (Some(42), None, None)
    );
    assert_eq!(
        tick(
            input(mon("14:00:01"), &hours, other, LeaseState::default()),
            out.memory
        )
        .action,
        None
    );
    let changed = GateStatus {
        other_holds: 43,
        ..other
    };
    assert_eq!(
        tick(
            input(mon("14:00:02"), &hours, changed, LeaseState::default()),
            out.memory
        )
        .action,
        Some(GateAction::AddHoursHold { mode: G })
    );
    let held = GateStatus { held: true, ..other };
    assert_eq!(
        tick(
            input(mon("14:00:00"), &hours, held, LeaseState::default()),
            GateMemory::default()
        )
        .action,
        None
    );
    // Step 3: being in hours forgets the fingerprint.
    let back = tick(
        input(mon("10:00:00"), &hours, other, LeaseState::default()),
        out.memory,
    );
    assert_eq!(back.memory.hours_asked, None);

    // Row 5: in hours and held → release.
    let held = GateStatus {
        held: true,
        ..GateStatus::default()
    };
    assert_eq!(
        tick(
            input(mon("10:00:00"), &hours, held, LeaseState::default()),
            GateMemory::default()
        )
        .action,
        Some(GateAction::Release { ungated: false })
    );

    // Row 6: in hours, the close within ARM_LEAD → arm once (graceful only).
    let out = tick(
        input(mon("12:58:59"), &hours, up, LeaseState::default()),
        GateMemory::default(),
    );
    assert_eq!(out.action, None);
    let out = tick(
        input(mon("12:59:00"), &hours, up, LeaseState::default()),
        GateMemory::default(),
    );
    assert_eq!(
        out.action,
        Some(GateAction::Arm {
            close_at: mon("13:00:00")
        })
    );
    assert_eq!(
        tick(
            input(mon("12:59:30"), &hours, up, LeaseState::default()),
            out.memory
        )
        .action,
        None
    );

    // Otherwise: nothing.
    assert_eq!(
        tick(
            input(mon("10:00:00"), &hours, up, LeaseState::default()),
            GateMemory::default()
        )
        .action,
        None
    );
    assert_eq!(
        tick(
            input(
                mon("14:00:00"),
                &hours,
                GateStatus::default(),
                LeaseState::default()
            ),
            GateMemory::default()
        )
        .action,
        None
    );
}

/// HR-56 steps 4 and 6, HR-58: events on the first observation of a change only, and nothing in the
/// table reads `last_in` or `was_leased` (a restart loses nothing).
#[test]
fn hr58_events() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let hours = expr.bind(tz("UTC"));
    let up = GateStatus {
        up: true,
        ..GateStatus::default()
    };
    let first = tick(
        input(mon("12:00:00"), &hours, up, LeaseState::default()),
        GateMemory::default(),
    );
    assert!(first.events.is_empty());
    assert_eq!(
        (first.memory.last_in, first.memory.was_leased),
        (Some(true), Some(false))
    );
    let same = tick(
        input(mon("12:30:00"), &hours, up, LeaseState::default()),
        first.memory,
    );
    assert!(same.events.is_empty());
    let flip = tick(
        input(mon("13:00:00"), &hours, up, LeaseState::default()),
        same.memory,
    );
    assert_eq!(
        flip.events,
        vec![GateEvent::HoursChanged {
            in_hours: false,
            next: Some(tue("09:00:00"))
        }]
    );
    // The same decision with forgotten memory (a host restart).
    let fresh = tick(
        input(mon("13:00:00"), &hours, up, LeaseState::default()),
        GateMemory::default(),
    );
    assert_eq!(fresh.action, flip.action);
    assert!(fresh.events.is_empty());
    // HR-68: a stop clears the lease entirely; the next tick reports the lease ended (discarded).
    let leased = LeaseState {
        until: Some(mon("21:00:00")),
        expired_end: None,
    };
    let during = tick(input(mon("20:00:00"), &hours, up, leased), GateMemory::default());
    assert_eq!(during.memory.was_leased, Some(true));
    let stopped = tick(
        input(
            mon("20:00:01"),
            &hours,
            GateStatus::default(),
            LeaseState::default(),
        ),
        during.memory,
    );
    assert_eq!(stopped.events, vec![GateEvent::LeaseEnded]);
    assert_eq!(stopped.lease_change, None);
}

/// HR-60: the lease judgement, rule by rule.
#[test]
fn hr60_judge_lease() {
    let until = mon("21:00:00");
    let lease = LeaseState {
        until: Some(until),
        expired_end: None,
    };
    let stale = LeaseState {
        until: None,
        expired_end: Some(mon("20:00:00")),
    };
    type Row = (
        LeaseState,
        DateTime<Utc>,
        bool,
        bool,
        LeaseState,
        Option<DateTime<Utc>>,
        Option<LeaseChange>,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (LeaseState::default(), mon("20:00:00"), true, false, LeaseState::default(), None, None),
        (stale, mon("20:00:00"), true, false, stale, None, None),
        (lease, until, true, false, LeaseState { until: None, expired_end: Some(until) }, None, Some(LeaseChange::Expired { until })),
        (lease, mon("22:00:00"), false, true, LeaseState { until: None, expired_end: Some(until) }, None, Some(LeaseChange::Expired { until })),
        (lease, mon("20:00:00"), false, false, LeaseState::default(), None, Some(LeaseChange::DiscardedUngated)),
        (lease, mon("20:00:00"), true, true, LeaseState::default(), None, Some(LeaseChange::DiscardedHoursOpened)),
        (lease, mon("20:59:59"), true, false, lease, Some(until), None),
    ];
    for (state, now, gated, in_hours, new_state, valid, change) in rows {
        let j = judge_lease(&state, now, gated, in_hours);
        assert_eq!(
            (j.state, j.valid_until, j.change),
            (new_state, valid, change),
            "{state:?} at {now} gated={gated} in={in_hours}"
        );
    }
}

/// HR-61: the close anchor.
#[test]
fn hr61_close_anchor() {
    let (x, p, now) = (mon("21:00:00"), mon("13:00:00"), mon("21:00:05"));
    assert_eq!(close_anchor(Some(x), Some(p), now), (x, true));
    assert_eq!(close_anchor(Some(p), Some(p), now), (p, true));
    assert_eq!(close_anchor(Some(p), Some(x), now), (x, true));
    assert_eq!(close_anchor(Some(x), None, now), (x, true));
    assert_eq!(close_anchor(None, Some(p), now), (p, true));
    assert_eq!(close_anchor(None, None, now), (now, false));
}

/// HR-62: the hold plan, rule by rule.
#[test]
fn hr62_hold_plan() {
    use ProcState::*;
    let at = mon("13:00:00");
    let i = ShutdownMode::Immediate;
    #[rustfmt::skip]
    let rows: Vec<(ShutdownMode, bool, ProcState, bool, bool, HoldPlan)> = vec![
        (G, false, Running, true, false, HoldPlan::Ignore),
        (G, true, Failed, false, false, HoldPlan::Ignore),
        (G, true, Running, true, true, HoldPlan::Ignore),
        (G, true, Running, true, false, HoldPlan::BeginClose { close_at: at }),
        (i, true, Running, true, false, HoldPlan::StopNow),
        (G, true, Starting, true, false, HoldPlan::StopNow),
        (G, true, Degraded, true, false, HoldPlan::StopNow),
        (G, true, Restarting, true, false, HoldPlan::StopNow),
        (G, true, Restarting, false, false, HoldPlan::StopNow),
        (G, true, Starting, false, false, HoldPlan::StopNow),
        (G, true, Stopped, false, false, HoldPlan::MarkHeld),
        (i, true, Stopped, false, false, HoldPlan::MarkHeld),
    ];
    for (mode, enabled, state, has_process, scheduled, plan) in rows {
        assert_eq!(
            hold_plan(mode, at, enabled, state, has_process, scheduled),
            plan,
            "{mode:?} {enabled} {state:?} {has_process} {scheduled}"
        );
    }
}

/// HR-63, HR-64: the close step, rule by rule, with the deadline on the UTC time line.
#[test]
fn hr63_hr64_close_step() {
    let close_at = mon("13:00:00");
    let turn = |last: Option<&str>, m: bool, ended: bool| {
        Observation::Turn(TurnState {
            last_event_at: last.map(mon),
            turn_markers: m,
            turn_ended: ended,
        })
    };
    let i = ShutdownMode::Immediate;
    let none: Option<StopReason> = None;
    #[rustfmt::skip]
    let rows: Vec<(&str, ShutdownMode, Observation, Option<StopReason>)> = vec![
        ("13:00:00", i, turn(Some("12:59:59"), true, false), Some(StopReason::Immediate)),
        ("13:00:00", i, Observation::Unavailable { why: "x".into() }, Some(StopReason::Immediate)),
        ("13:00:00", G, Observation::Unavailable { why: "no working directory".into() }, Some(StopReason::Unavailable("no working directory".into()))),
        ("13:00:09", G, turn(Some("13:00:00"), true, true), none.clone()),
        ("13:00:10", G, turn(Some("13:00:00"), true, true), Some(StopReason::TurnEnded)),
        ("13:00:00", G, turn(None, true, true), Some(StopReason::TurnEnded)),
        ("13:00:00", G, turn(None, true, false), none.clone()),
        ("13:01:59", G, turn(Some("13:00:00"), false, false), none.clone()),
        ("13:02:00", G, turn(Some("13:00:00"), false, true), Some(StopReason::Quiet)),
        ("13:00:00", G, turn(None, false, false), Some(StopReason::Quiet)),
        ("13:14:59", G, turn(Some("13:14:58"), false, false), none.clone()),
        ("13:15:00", G, turn(Some("13:14:59"), false, false), Some(StopReason::DeadlineReached)),
        ("13:15:00", G, turn(Some("13:14:59"), true, true), Some(StopReason::DeadlineReached)),
        ("13:15:00", G, turn(Some("13:14:59"), true, false), Some(StopReason::DeadlineReached)),
    ];
    for (now, mode, obs, stop) in rows {
        let out = close_step(mon(now), mode, None, close_at, &obs);
        assert_eq!(
            out,
            CloseStepOutcome {
                deadline: mon("13:15:00"),
                stop: stop.clone()
            },
            "{now} {mode:?} {obs:?}"
        );
    }
    assert_eq!(StopReason::Immediate.to_string(), "hours_shutdown=immediate");
    // HR-64: the timeout when positive, else the default; a reload applies to a close in progress.
    assert_eq!(
        close_deadline(close_at, Some(TimeDelta::minutes(45))),
        mon("13:45:00")
    );
    assert_eq!(close_deadline(close_at, Some(TimeDelta::zero())), mon("13:15:00"));
    assert_eq!(
        close_deadline(close_at, Some(TimeDelta::minutes(-5))),
        mon("13:15:00")
    );
    assert_eq!(close_deadline(close_at, None), mon("13:15:00"));
    let late = close_step(
        mon("13:20:00"),
        G,
        Some(TimeDelta::minutes(30)),
        close_at,
        &turn(Some("13:19:59"), true, false),
    );
    assert_eq!(late.stop, None);
    assert_eq!(
        close_deadline(utc("2026-11-01T05:30:00Z"), None),
        utc("2026-11-01T05:45:00Z")
    );
    assert_eq!(
        close_deadline(DateTime::<Utc>::MAX_UTC, None),
        DateTime::<Utc>::MAX_UTC,
        "HR-7: saturates"
    );
}

/// HR-65: the release plan.
#[test]
fn hr65_release_plan() {
    use ProcState::*;
    #[rustfmt::skip]
    let rows = [
        (false, true, Stopped, false, ReleasePlan::NoOp),
        (true, true, Stopped, false, ReleasePlan::ClearAndStart),
        (true, false, Stopped, false, ReleasePlan::ClearOnly),
        (true, true, Failed, false, ReleasePlan::ClearOnly),
        (true, true, Running, true, ReleasePlan::ClearOnly),
        (true, true, Stopped, true, ReleasePlan::ClearOnly),
    ];
    for (held, enabled, state, has_process, plan) in rows {
        assert_eq!(release_plan(held, enabled, state, has_process), plan);
    }
}

/// HR-66, HR-67: start routes; a second start while leased computes from the current `now`.
#[test]
fn hr66_hr67_start_route() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let day = HarnessGate::Gated(&expr.bind(tz("UTC")));
    assert_eq!(
        start_route(mon("10:00:00"), "day", None, day),
        Ok(StartRoute::Plain)
    );
    assert_eq!(
        start_route(mon("10:00:00"), "plain", None, HarnessGate::Ungated),
        Ok(StartRoute::Plain)
    );
    assert_eq!(
        start_route(mon("20:00:00"), "day", None, day),
        Ok(StartRoute::Leased {
            until: mon("21:00:00")
        })
    );
    assert_eq!(
        start_route(mon("20:40:00"), "day", None, day),
        Ok(StartRoute::Leased {
            until: mon("21:40:00")
        })
    );
    assert_eq!(
        start_route(mon("20:00:00"), "day", Some(TimeDelta::seconds(1)), day),
        Ok(StartRoute::Leased {
            until: mon("20:00:01")
        })
    );
    assert_eq!(
        start_route(mon("13:00:00"), "day", Some(TimeDelta::hours(1)), day),
        Ok(StartRoute::Leased {
            until: mon("14:00:00")
        }),
        "out at the end instant"
    );
    assert_eq!(
        start_route(
            DateTime::<Utc>::MAX_UTC,
            "day",
            Some(TimeDelta::hours(1)),
            HarnessGate::Gated(&Expr::parse("TZ=UTC Mon 09:00-10:00").unwrap().bind(tz("UTC")))
        )
        .map(|r| matches!(r, StartRoute::Leased { .. })),
        Ok(true),
        "HR-7: saturates"
    );
}

/// HR-69: boot routes.
#[test]
fn hr69_boot_route() {
    let now = mon("20:30:00");
    #[rustfmt::skip]
    let rows = [
        (false, false, None, BootRoute::LeaveStopped),
        (false, true, Some(mon("21:00:00")), BootRoute::LeaveStopped),
        (true, false, None, BootRoute::Start),
        (true, false, Some(mon("20:00:00")), BootRoute::Start),
        (true, true, Some(mon("21:00:00")), BootRoute::Start),
        (true, true, Some(now), BootRoute::BeginHeld),
        (true, true, Some(mon("20:00:00")), BootRoute::BeginHeld),
        (true, true, None, BootRoute::BeginHeld),
    ];
    for (enabled, gated, lease_until, route) in rows {
        assert_eq!(
            boot_route(enabled, gated, lease_until, now),
            route,
            "{enabled} {gated} {lease_until:?}"
        );
    }
}

/// HR-70: ungating releases a harness held for its hours and forgets everything.
#[test]
fn hr70_ungate() {
    let lease = LeaseState {
        until: Some(mon("21:00:00")),
        expired_end: None,
    };
    let held = GateStatus {
        held: true,
        ..GateStatus::default()
    };
    assert_eq!(
        ungate(held, lease),
        (
            Some(GateAction::Release { ungated: true }),
            GateMemory::default(),
            LeaseState::default(),
            Some(LeaseChange::DiscardedUngated)
        )
    );
    let running = GateStatus {
        up: true,
        ..GateStatus::default()
    };
    assert_eq!(
        ungate(running, LeaseState::default()),
        (None, GateMemory::default(), LeaseState::default(), None)
    );
    let expired_only = LeaseState {
        until: None,
        expired_end: Some(mon("21:00:00")),
    };
    assert_eq!(ungate(running, expired_only).3, None);
}

/// HR-52: the gate is a pure function of its arguments — the same inputs give the same outputs.
#[test]
fn hr52_stateless() {
    let expr = Expr::parse(DAY_EXPR).unwrap();
    let up = GateStatus {
        up: true,
        ..GateStatus::default()
    };
    let run = || {
        tick(
            input(mon("13:00:00"), &expr.bind(tz("UTC")), up, LeaseState::default()),
            GateMemory::default(),
        )
    };
    assert_eq!(run(), run());
}
