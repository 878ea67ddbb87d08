//! Judging a clock-in (§9.1) on what was read: the open questions (step 2), the selection (steps
//! 3–6), the touches and budget gates (steps 8–9) and the brief (step 11). The shell between them runs
//! the probes, takes the lock, reads the ledger and appends the brief line.

use std::collections::{HashMap, HashSet};

use crate::budget::{self, Budget};
use crate::json::Node;
use crate::ledger::LedgerSummary;
use crate::refusal::Refusal;
use crate::results::{Brief, Escalation, FailedProbe, Upstream};
use crate::view::{Checkpoint, Unit};

/// Step 2 before any probe runs (SW-72).
#[derive(Debug, Clone, PartialEq)]
pub enum Questions<'d> {
    /// No open question: go on.
    None,
    /// Escalate now: a decision question is open (or a relay, with probes off).
    Escalate(Escalation),
    /// Every open question is a relay: run their probes in this order; the first that does not
    /// answer its relay escalates ([`relay_failed`]).
    Probe(Vec<Relay<'d>>),
}

/// A relay question and its probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relay<'d> {
    /// Its `q`.
    pub question: &'d str,
    /// Its `probe`, a shell command.
    pub probe: &'d str,
}

/// How a clock-in ends before its brief: another answer (steps 3–4), or a refusal (steps 5–6).
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Every unit is done or dropped (step 3).
    AllDone,
    /// The cursor names no unit (step 4).
    Escalate(Escalation),
    /// A refusal (steps 5–6).
    Refused(Refusal),
}

fn escalate<'d, N: Node<'d>>(
    question: &str,
    cp: &Checkpoint<'d, N>,
    probe: Option<FailedProbe>,
) -> Escalation {
    Escalation::OpenQuestion {
        question: question.to_owned(),
        open_questions: cp.open_questions().into_iter().map(N::to_json).collect(),
        probe,
    }
}

fn str_of<'d, N: Node<'d>>(item: N, key: &str) -> &'d str {
    item.get(key).and_then(N::as_str).unwrap_or("")
}

/// Step 2 (SW-72): with `probes` off, relays count as decision questions.
pub fn questions<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, probes: bool) -> Questions<'d> {
    let items = cp.open_questions();
    if items.is_empty() {
        return Questions::None;
    }
    let is_relay = |item: N| probes && item.get("kind").and_then(N::as_str) == Some("relay");
    if let Some(&decision) = items.iter().find(|i| !is_relay(**i)) {
        let q = decision.as_str().unwrap_or_else(|| str_of(decision, "q"));
        return Questions::Escalate(escalate(q, cp, None));
    }
    Questions::Probe(
        items
            .iter()
            .map(|&relay| Relay {
                question: str_of(relay, "q"),
                probe: str_of(relay, "probe"),
            })
            .collect(),
    )
}

/// The escalation of a relay whose probe did not answer it: `exit` is its exit status, or `None`
/// when it timed out, was killed or did not start.
pub fn relay_failed<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    relay: &Relay<'_>,
    exit: Option<i32>,
) -> Escalation {
    escalate(
        relay.question,
        cp,
        Some(FailedProbe {
            question: relay.question.to_owned(),
            exit,
        }),
    )
}

/// Steps 3–6: every unit terminal → success; the default unit when the cursor names none → escalate;
/// the plan checks; readiness of the selected unit (`unit_id`, else `plan.cursor`).
pub fn select<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, unit_id: Option<&str>) -> Result<Unit<'d, N>, Stop> {
    if cp.units().all(|u| u.is_terminal()) {
        return Err(Stop::AllDone);
    }
    let cursor = cp.cursor();
    if unit_id.is_none() && cp.unit(cursor).is_none() {
        return Err(Stop::Escalate(Escalation::CursorNamesNoUnit {
            cursor: cursor.to_owned(),
        }));
    }
    let view = super::plan::plan_checks(cp).map_err(Stop::Refused)?;
    let selected = unit_id.unwrap_or(cursor);
    let ready = view.ready();
    match cp.unit(selected).filter(|_| ready.contains(&selected)) {
        Some(unit) => Ok(unit),
        None => Err(Stop::Refused(Refusal::NotReady {
            unit: selected.to_owned(),
            ready: ready.into_iter().map(str::to_owned).collect(),
        })),
    }
}

/// Steps 8–9, on the ledger read under the lock: a path of the unit held by another in-flight unit
/// (SW-114), then the budget (SW-132). `ledger` kept the counted tokens when a budget is declared.
pub fn admit<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    unit: &Unit<'d, N>,
    ledger: &LedgerSummary,
) -> Result<(), Refusal> {
    let flight = budget::in_flight(cp, ledger);
    touches_hold(cp, unit, &flight)?;
    if let Some(b) = Budget::compute(cp, ledger) {
        b.admit(flight.contains(&unit.id()))?;
    }
    Ok(())
}

/// Step 8 (SW-114): one pass over the in-flight units' paths (a map from path to its first holder in
/// plan order), so the gate is linear in units × touches however many units are in flight (issue 12
/// item 10).
fn touches_hold<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    unit: &Unit<'d, N>,
    flight: &[&str],
) -> Result<(), Refusal> {
    let id = unit.id();
    let Some(mine) = unit.touches().ok().flatten() else {
        return Ok(());
    };
    let flight: HashSet<&str> = flight.iter().copied().collect();
    let mut holders: HashMap<String, &str> = HashMap::new();
    for u in cp.units() {
        if u.id() == id || !flight.contains(u.id()) {
            continue;
        }
        for path in u.touches().ok().flatten().unwrap_or_default() {
            holders.entry(path).or_insert(u.id());
        }
    }
    match mine
        .iter()
        .find_map(|path| holders.get(path).map(|other| (path, other)))
    {
        Some((path, other)) => Err(Refusal::TouchesHeld {
            unit: id.to_owned(),
            path: path.clone(),
            holder: (*other).to_owned(),
        }),
        None => Ok(()),
    }
}

/// Step 11, the brief (SW-74): the unit verbatim, its role, the job's constraints, the handoff, what
/// its dependencies produced last (SW-119).
pub fn brief<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, unit: &Unit<'d, N>) -> Brief {
    let handoff = cp.handoff().map(N::to_json).unwrap_or_default();
    let mut upstream = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for dep in unit.depends_on() {
        if seen.contains(&dep) {
            continue;
        }
        seen.push(dep);
        if let Some(d) = cp.unit(dep).filter(|d| d.has_attempts()) {
            upstream.push(Upstream {
                unit: dep.to_owned(),
                last: d.last_produced().map(N::to_json).collect(),
            });
        }
    }
    Brief {
        unit: unit.json().to_json(),
        role: unit.role().to_owned(),
        invariants: cp.constraints().map(N::to_json).unwrap_or_default(),
        do_not: handoff.get("do_not").cloned().unwrap_or_default(),
        handoff,
        files: cp.artifacts().map(N::to_json).unwrap_or_default(),
        agreements: cp.agreements().map(N::to_json),
        upstream,
    }
}
