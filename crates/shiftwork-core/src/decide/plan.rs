//! Judging a checkpoint's plan: the batch view and the plan checks, and the
//! answers of `shiftwork_plan` and `shiftwork_status` built from what was read.

use std::collections::{HashMap, HashSet};

use crate::budget::Budget;
use crate::json::Node;
use crate::ledger::LedgerSummary;
use foldhash::fast::RandomState;

use crate::model::{UnitId, UnitStatus};
use crate::planner::{self, Feed, Schedule};
use crate::refusal::{NodeField, ShiftworkRefusal};
use crate::results::HeldUnit;
use crate::results::{Plan, Status};
use crate::search::SearchResult;
use crate::view::Checkpoint;

/// The batch view: the planner over the non-terminal units.
#[derive(Debug, Clone)]
pub struct BatchView<'d> {
    /// The planner's nodes: the non-terminal units in plan order (their ids; the planner's input is
    /// not kept).
    pub nodes: Vec<BatchNode<'d>>,
    /// The position in `plan.units` of each node.
    pub unit_index: Vec<usize>,
    /// The batches and holds.
    pub schedule: Schedule,
    /// Whether some non-terminal unit has a `touches` key.
    pub has_touches: bool,
}

/// A node of the batch view: a non-terminal unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchNode<'d> {
    /// The unit's id.
    pub id: &'d str,
}

impl BatchView<'_> {
    /// `ready`: the first batch's unit ids, or none.
    pub fn ready(&self) -> Vec<&str> {
        self.schedule
            .batches
            .first()
            .map(|b| b.iter().map(|&i| self.nodes[i].id).collect())
            .unwrap_or_default()
    }

    /// The batches as unit ids.
    pub fn batch_ids(&self) -> Vec<Vec<UnitId>> {
        self.schedule
            .batches
            .iter()
            .map(|batch| batch.iter().map(|&i| UnitId::read(self.nodes[i].id)).collect())
            .collect()
    }

    /// The holds, units named by id.
    pub fn held_units(&self) -> Vec<HeldUnit> {
        self.schedule
            .held
            .iter()
            .map(|h| HeldUnit {
                id: self.nodes[h.node].id.to_owned(),
                batch: h.batch,
                by: self.nodes[h.by].id.to_owned(),
                path: h.path.clone(),
            })
            .collect()
    }
}

/// The batch view of a validated checkpoint: one node per non-terminal unit,
/// dependencies on terminal units removed, priority 0, `touches` when present. The one
/// implementation used by plan, clock-in and the cursor move. The units feed the planner directly:
/// what it keeps per unit is its id and position.
///
/// ```
/// let doc = shiftwork_core::json::parse(r#"{"plan": {"cursor": "B", "units": [{"id": "A", "status": "done", "depends_on": []}, {"id": "B", "status": "todo", "depends_on": ["A"]}, {"id": "C", "status": "todo", "depends_on": ["B"]}]}}"#).unwrap();
/// let view = shiftwork_core::decide::plan::batch_view(&shiftwork_core::Checkpoint::new(&doc)).unwrap();
/// assert_eq!(view.ready(), ["B"]);
/// ```
pub fn batch_view<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>) -> Result<BatchView<'d>, ShiftworkRefusal> {
    let terminal: Terminal<'d> = cp.units().filter(|u| u.is_terminal()).map(|u| u.id()).collect();
    batch_view_without(cp, &terminal)
}

/// The ids of the terminal units.
type Terminal<'d> = HashSet<&'d str, RandomState>;

/// [`batch_view`], the ids of the terminal units known.
fn batch_view_without<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    terminal: &Terminal<'d>,
) -> Result<BatchView<'d>, ShiftworkRefusal> {
    let units = cp.len();
    let mut feed = Feed::with_capacity(units, 2 * units);
    let mut nodes = Vec::with_capacity(units);
    let mut unit_index = Vec::with_capacity(units);
    let mut has_touches = false;
    for unit in cp.units() {
        if unit.is_terminal() {
            continue;
        }
        let touches = unit
            .touches()
            .map_err(|planner::BadTouches| ShiftworkRefusal::NodeShape {
                index: unit.index(),
                field: Some(NodeField::Touches),
            })?;
        has_touches |= unit.has_touches();
        let depends_on = unit.depends_on();
        if terminal.is_empty() {
            feed.node(unit.id(), depends_on, touches.as_deref());
        } else {
            feed.node(
                unit.id(),
                depends_on.filter(|d| !terminal.contains(d)),
                touches.as_deref(),
            );
        }
        nodes.push(BatchNode { id: unit.id() });
        unit_index.push(unit.index());
    }
    let schedule = feed.plan()?;
    Ok(BatchView {
        nodes,
        unit_index,
        schedule,
        has_touches,
    })
}

/// The plan checks, in order: `touches` of every unit, the batch view's refusals,
/// review independence. Returns the batch view when all pass. One pass over the units finds
/// the first bad `touches`, the terminal units and whether any unit reviews; a second feeds the
/// planner; a third, only when some unit reviews, checks the reviews.
pub fn plan_checks<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>) -> Result<BatchView<'d>, ShiftworkRefusal> {
    let mut terminal = Terminal::default();
    let mut reviews = false;
    for unit in cp.units() {
        if unit.touches().is_err() {
            return Err(ShiftworkRefusal::NodeShape {
                index: unit.index(),
                field: Some(NodeField::Touches),
            });
        }
        if unit.is_terminal() {
            terminal.insert(unit.id());
        }
        reviews |= unit.reviews().next().is_some();
    }
    let view = batch_view_without(cp, &terminal)?;
    drop(terminal);
    if !reviews {
        return Ok(view);
    }
    // The reviewed units by id (the first unit with an id, as ids are unique): role only.
    let mut roles: HashMap<&str, &str, RandomState> = HashMap::default();
    for unit in cp.units() {
        roles.entry(unit.id()).or_insert(unit.role_str());
    }
    for unit in cp.units() {
        for r in unit.reviews() {
            let Some(reviewed_role) = roles.get(r) else {
                return Err(ShiftworkRefusal::ReviewsUnknownUnit {
                    unit: unit.id().to_owned(),
                    reviewed: r.to_owned(),
                });
            };
            if !unit.depends_on().any(|d| d == r) {
                return Err(ShiftworkRefusal::ReviewsNonDependency {
                    unit: unit.id().to_owned(),
                    reviewed: r.to_owned(),
                });
            }
            if *reviewed_role == unit.role_str() {
                return Err(ShiftworkRefusal::ReviewsOwnRole {
                    unit: unit.id().to_owned(),
                    reviewed: r.to_owned(),
                    role: unit.role_str().to_owned(),
                });
            }
        }
    }
    Ok(view)
}

/// `shiftwork_plan`'s answer from a checkpoint that passed the plan checks, its batch view,
/// and — when it declares `job.budget` — the ledger pass that kept the counted tokens.
pub fn plan<'d, N: Node<'d>>(
    cp: &Checkpoint<'d, N>,
    view: &BatchView<'_>,
    ledger: Option<&LedgerSummary>,
) -> Plan {
    Plan {
        batches: view.batch_ids(),
        cursor: UnitId::read(cp.cursor()),
        held: view.has_touches.then(|| view.held_units()),
        budget: ledger.and_then(|summary| Budget::compute(cp, summary)),
        ranking: (cp.kind() == Some("experimentation")).then(|| crate::ranking::ranking(cp)),
    }
}

/// `shiftwork_status`'s answer: counts per status in order of first appearance, the number of
/// open questions, the last history entry, and the archive search when one was made.
pub fn status<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, search: Option<SearchResult>) -> Status {
    let mut units: Vec<(UnitStatus, usize)> = Vec::new();
    for unit in cp.units() {
        let status = unit.status();
        match units.iter_mut().find(|(k, _)| *k == status) {
            Some((_, n)) => *n += 1,
            None => units.push((status, 1)),
        }
    }
    Status::new(
        UnitId::read(cp.cursor()),
        units,
        cp.open_question_count(),
        cp.last_history_node().map(N::to_json),
        search,
    )
}
