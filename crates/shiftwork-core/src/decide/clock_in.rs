//! Judging a clock-in on what was read. A clock-in's steps, in order:
//!
//! 1. read the checkpoint;
//! 2. the open questions: a decision question (or a relay whose probe does not answer it) escalates;
//! 3. every unit done or dropped: success;
//! 4. without a `unit_id`, a cursor that names no unit escalates;
//! 5. the plan checks;
//! 6. the selected unit (`unit_id`, else the cursor) must be ready;
//! 7. take the lock and read the ledger;
//! 8. no path the unit touches is held by a unit in flight;
//! 9. the budget has room for one more unit;
//! 10. append the brief line;
//! 11. answer the brief.
//!
//! This module judges steps 2–6, 8–9 and 11. The shell between them runs
//! the probes, takes the lock, reads the ledger and appends the brief line.

use std::collections::{HashMap, HashSet};

use crate::budget::{self, Budget};
use crate::json::Json;
use crate::json::Node;
use crate::ledger::LedgerSummary;
use crate::model::{Text, UnitId, texts};
use crate::refusal::ShiftworkRefusal;
use crate::results::{Brief, Escalation, FailedProbe, OpenQuestions, Upstream};
use crate::view::{Checkpoint, Unit};

/// Step 2 before any probe runs.
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
    Refused(ShiftworkRefusal),
}

impl Stop {
    /// What a clock-in that stopped here answers: success when all is done, the escalation, or the
    /// refusal.
    pub(crate) fn answer(self) -> Result<crate::results::ClockIn, ShiftworkRefusal> {
        match self {
            Stop::AllDone => Ok(crate::results::ClockIn::AllDone),
            Stop::Escalate(escalation) => Ok(crate::results::ClockIn::Escalate(escalation)),
            Stop::Refused(refusal) => Err(refusal),
        }
    }
}

fn escalate<'d, N: Node<'d>>(
    question: &str,
    cp: &Checkpoint<'d, N>,
    probe: Option<FailedProbe>,
) -> Escalation {
    Escalation::OpenQuestion {
        question: question.to_owned(),
        open_questions: OpenQuestions::new(cp.question_nodes().into_iter().map(N::to_json).collect()),
        probe,
    }
}

fn str_of<'d, N: Node<'d>>(item: N, key: &str) -> &'d str {
    item.get(key).and_then(N::as_str).unwrap_or("")
}

/// Step 2: with `probes` off, relays count as decision questions.
pub fn questions<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, probes: bool) -> Questions<'d> {
    let items = cp.question_nodes();
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
    let ready_ids = || ready.iter().map(|r| UnitId::read(r)).collect();
    match cp.unit(selected) {
        Some(unit) if ready.contains(&selected) => Ok(unit),
        Some(_) => Err(Stop::Refused(ShiftworkRefusal::NotReady {
            unit: UnitId::read(selected),
            ready: ready_ids(),
        })),
        None => Err(Stop::Refused(ShiftworkRefusal::UnknownUnit {
            unit: UnitId::read(selected),
            ready: ready_ids(),
        })),
    }
}

/// Steps 8–9, on the ledger read under the lock: a path of the unit held by another in-flight unit
///, then the budget. `ledger` kept the counted tokens when a budget is declared.
pub fn admit<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    unit: &Unit<'d, N>,
    ledger: &LedgerSummary,
) -> Result<(), ShiftworkRefusal> {
    let flight = budget::in_flight(cp, ledger);
    touches_hold(cp, unit, &flight)?;
    if let Some(b) = Budget::compute(cp, ledger) {
        b.admit(flight.contains(&unit.id()))?;
    }
    Ok(())
}

/// Step 8: one pass over the in-flight units' paths (a map from path to its first holder in
/// plan order), so the check is linear in units × touches however many units are in flight.
fn touches_hold<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    unit: &Unit<'d, N>,
    flight: &[&str],
) -> Result<(), ShiftworkRefusal> {
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
        Some((path, other)) => Err(ShiftworkRefusal::TouchesHeld {
            unit: id.to_owned(),
            path: path.clone(),
            holder: (*other).to_owned(),
        }),
        None => Ok(()),
    }
}

/// Step 11, the brief: the unit verbatim, its role, the job's constraints, the handoff, what
/// its dependencies produced last.
pub fn brief<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, unit: &Unit<'d, N>) -> Brief {
    let handoff = cp.handoff_node().map(N::to_json).unwrap_or_default();
    let mut upstream = Vec::new();
    let mut upstream_json = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for dep in unit.depends_on() {
        if seen.contains(&dep) {
            continue;
        }
        seen.push(dep);
        if let Some(d) = cp.unit(dep).filter(|d| d.has_attempts()) {
            upstream.push(Upstream {
                unit: UnitId::read(dep),
                last: d.last_produced(),
            });
            upstream_json.push(Json::Object(crate::json::object([
                ("unit", Json::str(dep)),
                (
                    "last",
                    Json::Array(d.last_produced_nodes().map(N::to_json).collect()),
                ),
            ])));
        }
    }
    let do_not = handoff.get("do_not").cloned().unwrap_or_default();
    let mut answer = crate::json::object([
        ("result", Json::str("brief")),
        ("unit", unit.json().to_json()),
        ("role", Json::str(unit.role_str())),
        (
            "invariants",
            cp.constraints_node().map(N::to_json).unwrap_or_default(),
        ),
        ("handoff", handoff),
        ("do_not", do_not),
        ("files", cp.artifacts_node().map(N::to_json).unwrap_or_default()),
    ]);
    let agreements = cp.agreements();
    if let Some(a) = agreements {
        answer.insert(String::from("agreements"), a.to_json());
    }
    if !upstream_json.is_empty() {
        answer.insert(String::from("upstream"), Json::Array(upstream_json));
    }
    Brief::new(
        unit.to_planned(),
        cp.constraints().into_iter().map(Text::read).collect(),
        cp.handoff(),
        cp.artifacts(),
        agreements.map(|a| texts(Some(a))),
        upstream,
        Json::Object(answer),
    )
}
