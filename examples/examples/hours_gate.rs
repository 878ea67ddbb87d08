//! Embedding `hours`: a host drives the hours gate for one resident agent with a manual clock, through
//! a working day, an overnight lease and the weekend London's clocks go back.
//!
//! The crate decides; the host owns the process, the lease file, the turn-state watch and every clock
//! reading. Each tick the host passes in `now` and the state it keeps (`GateMemory`, `LeaseState`) and
//! carries out the one action it gets back. The harness owns its `Hours` and lends them to each tick.
//!
//! Run: `cargo run -p examples --example hours_gate`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use shiftwork_hours::{
    BootRoute, GateAction, GateMemory, GateStatus, HarnessGate, HoldPlan, Hours, HoursReport, LeaseState,
    Observation, ProcState, ReleasePlan, ShutdownMode, StartRoute, TurnState, Tz, boot_route, close_step,
    hold_plan, next_text_at, release_plan, start_route, state_label, tick,
};
use shiftwork_seams::{Clock, ManualClock};

/// A real host ticks every second; the example ticks every five to stay quick.
const TICK: Duration = Duration::from_secs(5);

const LONDON: Tz = chrono_tz::Europe::London;

/// What the host keeps for its one harness.
struct Harness {
    hours: Hours,
    enabled: bool,
    state: ProcState,
    held: bool,
    closing: bool,
    close_at: Option<DateTime<Utc>>,
    lease: LeaseState,
    memory: GateMemory,
    /// When the agent's current turn ends (it has turn markers when this is set).
    turn_ends_at: Option<DateTime<Utc>>,
}

fn local(t: DateTime<Utc>) -> String {
    t.with_timezone(&LONDON)
        .format("%a %d %b %H:%M:%S %Z")
        .to_string()
}

impl Harness {
    fn say(&self, now: DateTime<Utc>, what: &str) {
        let status = self.status();
        let next = next_text_at(
            now,
            &self.hours,
            status,
            self.lease.until,
            self.deadline(),
            LONDON,
        );
        let state = match self.state {
            ProcState::Running => "running",
            _ => "stopped",
        };
        println!(
            "{}  {what:<52} [{} | {next}]",
            local(now),
            state_label(state, self.held, self.closing)
        );
    }

    fn deadline(&self) -> Option<DateTime<Utc>> {
        self.closing
            .then(|| self.close_at.map(|at| shiftwork_hours::close_deadline(at, None)))
            .flatten()
    }

    fn status(&self) -> GateStatus {
        GateStatus {
            up: self.state.is_up(),
            held: self.held,
            closing: self.closing,
            other_holds: 0,
        }
    }

    /// What the turn-state watch sees now.
    fn observe(&self, now: DateTime<Utc>) -> Observation {
        Observation::Turn(match self.turn_ends_at {
            Some(end) => TurnState {
                last_event_at: Some(now.min(end)),
                turn_markers: true,
                turn_ended: now >= end,
            },
            // An agent without turn markers, quiet since two minutes before the lease ended.
            None => TurnState {
                last_event_at: self.lease.until.map(|u| u - TimeDelta::minutes(2)),
                turn_markers: false,
                turn_ended: false,
            },
        })
    }

    fn step_close(&mut self, now: DateTime<Utc>) {
        let Some(close_at) = self.close_at else { return };
        let step = close_step(now, ShutdownMode::Graceful, None, close_at, &self.observe(now));
        if let Some(reason) = step.stop {
            self.state = ProcState::Stopped;
            self.closing = false;
            self.say(now, &format!("stopped the agent: {reason}"));
        }
    }

    fn tick(&mut self, now: DateTime<Utc>) {
        let input = shiftwork_hours::TickInput {
            now,
            hours: &self.hours,
            status: self.status(),
            mode: ShutdownMode::Graceful,
            lease: self.lease,
            in_flight: false,
        };
        let out = tick(input, self.memory);
        self.memory = out.memory;
        self.lease = out.lease;
        if let Some(change) = out.lease_change {
            self.say(now, &format!("lease {change:?}: rewrite lease_until"));
        }
        match out.action {
            None => {}
            Some(GateAction::Arm { close_at }) => self.say(
                now,
                &format!("warm the turn watch for the close at {}", local(close_at)),
            ),
            Some(GateAction::CloseStep { now }) => self.step_close(now),
            Some(GateAction::Hold {
                mode,
                close_at,
                step_now,
                ..
            }) => {
                let has_process = self.state == ProcState::Running;
                match hold_plan(mode, close_at, self.enabled, self.state, has_process, false) {
                    HoldPlan::BeginClose { close_at } => {
                        self.held = true;
                        self.closing = true;
                        self.close_at = Some(close_at);
                        self.say(now, "out of hours: graceful close begins");
                        if step_now {
                            self.step_close(now);
                        }
                    }
                    HoldPlan::StopNow => {
                        self.held = true;
                        self.state = ProcState::Stopped;
                        self.say(now, "out of hours: stopped at once");
                    }
                    HoldPlan::MarkHeld => self.held = true,
                    HoldPlan::Ignore => {}
                }
            }
            Some(GateAction::AddHoursHold { .. }) => self.held = true,
            Some(GateAction::Release { .. }) => {
                let plan = release_plan(
                    self.held,
                    self.enabled,
                    self.state,
                    self.state == ProcState::Running,
                );
                if plan != ReleasePlan::NoOp {
                    self.held = false;
                    self.closing = false;
                }
                if plan == ReleasePlan::ClearAndStart {
                    self.state = ProcState::Running;
                    self.say(now, "hours open: agent started");
                }
            }
        }
        // The host publishes events after carrying out the action (e.g. as `harness_hours_changed`).
        for event in &out.events {
            self.say(now, &format!("publish {event:?}"));
        }
    }
}

/// Ticks until `until`, sleeping on the manual clock between ticks.
fn run_until(clock: &ManualClock, harness: &mut Harness, until: DateTime<Utc>) {
    while clock.now() < until {
        harness.tick(clock.now());
        clock.sleep(TICK);
    }
}

fn main() {
    // The host decides the default zone; this expression names its own, so UTC is never used.
    let hours = Hours::parse("TZ=Europe/London Mon-Fri 09:00-17:30", Tz::UTC).unwrap();
    let at = |y, mo, d, h, mi| Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap();
    println!("Schedule: {}\n", hours.expr());

    // Friday 2026-10-23, 08:55 BST: the daemon boots; outside hours the harness begins held.
    let clock = ManualClock::new(at(2026, 10, 23, 7, 55));
    let boot = boot_route(true, true, None, clock.now());
    assert_eq!(boot, BootRoute::BeginHeld);
    let mut harness = Harness {
        hours,
        enabled: true,
        state: ProcState::Stopped,
        held: true,
        closing: false,
        close_at: None,
        lease: LeaseState::default(),
        memory: GateMemory::default(),
        turn_ends_at: None,
    };
    harness.say(clock.now(), "daemon boot: begin held");

    // A working day: released at 09:00, the watch warmed at 17:29, a graceful close at 17:30 that waits
    // for the agent's turn to end (17:33:20) plus ten seconds.
    harness.turn_ends_at = Some(at(2026, 10, 23, 16, 33) + TimeDelta::seconds(20));
    run_until(&clock, &mut harness, at(2026, 10, 23, 17, 0));

    // 22:00 BST: the operator starts it for three hours — an overnight lease.
    clock.set(at(2026, 10, 23, 21, 0));
    harness.turn_ends_at = None;
    let route = start_route(
        clock.now(),
        "night-owl",
        Some(TimeDelta::hours(3)),
        HarnessGate::Gated(&harness.hours),
    );
    let Ok(StartRoute::Leased { until }) = route else {
        panic!("a lease applies outside hours: {route:?}");
    };
    harness.lease = LeaseState {
        until: Some(until),
        expired_end: None,
    };
    harness.held = false;
    harness.state = ProcState::Running;
    harness.say(
        clock.now(),
        "operator: start --for 3h (lease_until written first)",
    );
    run_until(&clock, &mut harness, at(2026, 10, 24, 1, 0));

    // The weekend: on Sunday 02:00 BST the clocks go back to 01:00 GMT, so Monday 09:00 is 09:00Z where
    // last Friday's 09:00 was 08:00Z. The gate needs nothing special for it.
    let monday = harness.hours.next_open(clock.now()).unwrap();
    println!(
        "\nNext opening: {} = {monday} (Friday's was 08:00:00 UTC)",
        local(monday)
    );
    // The whole answer of `hours_check`, as a status line would show it.
    let report = HoursReport::of(&harness.hours, clock.now());
    println!(
        "hours_check's answer: in hours {}, next change {:?}, summary {:?}\n",
        report.in_hours,
        report.next_change.map(|t| t.to_rfc3339()),
        report.summary
    );
    clock.set(at(2026, 10, 26, 8, 58));
    run_until(&clock, &mut harness, at(2026, 10, 26, 9, 1));
}
