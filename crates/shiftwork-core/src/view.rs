//! A typed, borrowed read view of a validated checkpoint: [`Checkpoint`] and its [`Unit`]s. Every
//! gate reads the document through it, never by key strings of its own.
//!
//! The view reads any [`Node`]: a built [`Json`] (`Checkpoint<'_>`, what a clock-out changes) or a
//! document read in place ([`crate::json::TapeNode`], what the plan, the status and the clock-in read —
//! a fraction of the memory). It is meant for a document that passed the checkpoint
//! schema (every reader of this crate validates first): a member the schema makes required is read as
//! present, and an accessor of a member that is absent anyway answers the empty value (`""`, no items)
//! rather than failing.

use crate::budget::BudgetDimension;
use crate::json::{Json, Kind, Node, Number};
use crate::model::{
    Artifact, Handoff, HistoryEntry, PlannedUnit, Produced, Question, Role, UnitStatus, read_role,
    read_status,
};
use crate::planner::{self, BadTouches};

/// A validated checkpoint, read in place.
///
/// ```
/// let doc = shiftwork_core::json::parse(r#"{"plan": {"cursor": "U3", "units": [{"id": "U1", "status": "done", "role": "implementer", "depends_on": []}, {"id": "U3", "status": "todo", "role": "reviewer", "depends_on": ["U1"]}]}}"#).unwrap();
/// let cp = shiftwork_core::Checkpoint::new(&doc);
/// assert_eq!(cp.cursor(), "U3");
/// let u3 = cp.unit("U3").unwrap();
/// assert_eq!((u3.role(), u3.depends_on().collect::<Vec<_>>()), (shiftwork_core::model::Role::Reviewer, vec!["U1"]));
/// assert!(cp.units().next().unwrap().is_terminal());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Checkpoint<'d, N: Node<'d> = &'d Json> {
    doc: N,
    plan: Option<N>,
    units: Option<N>,
    _d: std::marker::PhantomData<&'d ()>,
}

/// One unit of `plan.units`, with its position. The members every gate reads are found in one pass
/// when the unit is looked at.
#[derive(Debug, Clone, Copy)]
pub struct Unit<'d, N: Node<'d> = &'d Json> {
    json: N,
    index: usize,
    id: &'d str,
    status: &'d str,
    role: &'d str,
    depends_on: Option<N>,
    touches: Option<N>,
    reviews: Option<N>,
}

fn str_of<'d, N: Node<'d>>(obj: N, key: &str) -> &'d str {
    obj.get(key).and_then(N::as_str).unwrap_or("")
}

/// The strings among the items of `value` (none when it is absent or not an array).
fn strs<'d, N: Node<'d>>(value: Option<N>) -> impl Iterator<Item = &'d str> + use<'d, N> {
    value.into_iter().flat_map(N::items).filter_map(N::as_str)
}

impl<'d, N: Node<'d>> Checkpoint<'d, N> {
    /// The view of `doc` (a document that passed the checkpoint schema).
    pub fn new(doc: N) -> Self {
        let plan = doc.get("plan");
        let units = plan.and_then(|p| p.get("units"));
        Checkpoint {
            doc,
            plan,
            units,
            _d: std::marker::PhantomData,
        }
    }

    /// `plan.units`, in plan order.
    pub fn units(&self) -> impl Iterator<Item = Unit<'d, N>> + use<'d, N> {
        self.units
            .into_iter()
            .flat_map(N::items)
            .enumerate()
            .map(|(index, json)| Unit::new(json, index))
    }

    /// The number of units.
    pub fn len(&self) -> usize {
        self.units.map_or(0, |u| u.items().count())
    }

    /// Whether `plan.units` is empty.
    pub fn is_empty(&self) -> bool {
        self.units.is_none_or(|u| u.items().next().is_none())
    }

    /// The unit at `index` of `plan.units`.
    pub fn unit_at(&self, index: usize) -> Option<Unit<'d, N>> {
        self.units?.items().nth(index).map(|json| Unit::new(json, index))
    }

    /// The first unit with this id (ids are unique in a validated checkpoint).
    pub fn unit(&self, id: &str) -> Option<Unit<'d, N>> {
        self.units().find(|u| u.id() == id)
    }

    /// The unit ids, in plan order.
    pub fn ids(&self) -> Vec<&'d str> {
        self.units
            .into_iter()
            .flat_map(N::items)
            .map(|u| str_of(u, "id"))
            .collect()
    }

    /// `plan.cursor`.
    pub fn cursor(&self) -> &'d str {
        self.plan.map_or("", |p| str_of(p, "cursor"))
    }

    /// `job`.
    pub(crate) fn job(&self) -> Option<N> {
        self.doc.get("job")
    }

    /// A text member of `job` (`""` when absent).
    fn job_text(&self, key: &str) -> &'d str {
        self.job().map_or("", |j| str_of(j, key))
    }

    /// The job's id.
    pub fn job_id(&self) -> &'d str {
        self.job_text("id")
    }

    /// The job's goal.
    pub fn goal(&self) -> &'d str {
        self.job_text("goal")
    }

    /// What "done" means for the job.
    pub fn done_definition(&self) -> &'d str {
        self.job_text("done_definition")
    }

    /// The models `job.roles` allows for `role`: `None` when `job.roles` does not name the role (any
    /// model then); the list in the checkpoint's order otherwise.
    pub fn models_for(&self, role: Role) -> Option<Vec<&'d str>> {
        Some(strs(self.role_models(role.as_str())).collect())
    }

    /// `job.roles.<role>`, when `job.roles` has the role as a key (key presence).
    pub(crate) fn role_models(&self, role: &str) -> Option<N> {
        self.job()?.get("roles")?.get(role)
    }

    /// Whether `job.roles` exists, and if so whether it declares `role`.
    pub fn declares_role(&self, role: &str) -> Option<bool> {
        let roles = self.job()?.get("roles")?;
        (roles.kind() == Kind::Object).then(|| roles.get(role).is_some())
    }

    /// `job.budget`, when declared.
    pub(crate) fn budget(&self) -> Option<N> {
        self.job()?.get("budget")
    }

    /// The limits `job.budget` declares, in the order tokens, units; `None` when the job declares no
    /// budget.
    pub fn budget_limits(&self) -> Option<Vec<(BudgetDimension, i128)>> {
        crate::budget::limits(self)
    }

    /// `job.kind`.
    pub fn kind(&self) -> Option<&'d str> {
        self.job()?.get("kind")?.as_str()
    }

    /// Whether `job.experiment.direction` asks for the highest score first (the default).
    pub fn ranks_descending(&self) -> bool {
        self.job()
            .and_then(|j| j.get("experiment"))
            .is_none_or(|e| str_of(e, "direction") != "min")
    }

    /// `job.agreements`, when the key exists.
    pub(crate) fn agreements(&self) -> Option<N> {
        self.job()?.get("agreements")
    }

    /// The strings of `job.agreements` (none when absent).
    pub fn agreement_texts(&self) -> Vec<&'d str> {
        strs(self.agreements()).collect()
    }

    /// `job.constraints`.
    pub(crate) fn constraints_node(&self) -> Option<N> {
        self.job()?.get("constraints")
    }

    /// The job's constraints, in order.
    pub fn constraints(&self) -> Vec<&'d str> {
        strs(self.constraints_node()).collect()
    }

    /// `handoff`.
    pub(crate) fn handoff_node(&self) -> Option<N> {
        self.doc.get("handoff")
    }

    /// The handoff to the next agent.
    pub fn handoff(&self) -> Handoff {
        Handoff::read(self.handoff_node())
    }

    /// `handoff.open_questions`, in order.
    pub(crate) fn question_nodes(&self) -> Vec<N> {
        self.handoff_node()
            .and_then(|h| h.get("open_questions"))
            .into_iter()
            .flat_map(N::items)
            .collect()
    }

    /// The open questions of the handoff, in order.
    pub fn open_questions(&self) -> Vec<Question> {
        self.question_nodes().into_iter().map(Question::read).collect()
    }

    /// The number of open questions.
    pub fn open_question_count(&self) -> usize {
        self.handoff_node()
            .and_then(|h| h.get("open_questions"))
            .map_or(0, |q| q.items().count())
    }

    /// The last entry of `history`.
    pub(crate) fn last_history_node(&self) -> Option<N> {
        self.doc.get("history")?.items().last()
    }

    /// The history ring (at most the last five outcomes), oldest first.
    pub fn history(&self) -> Vec<HistoryEntry> {
        self.doc
            .get("history")
            .into_iter()
            .flat_map(N::items)
            .map(HistoryEntry::read)
            .collect()
    }

    /// `state.artifacts`.
    pub(crate) fn artifacts_node(&self) -> Option<N> {
        self.doc.get("state")?.get("artifacts")
    }

    /// The job's files (`state.artifacts`), in order.
    pub fn artifacts(&self) -> Vec<Artifact> {
        self.artifacts_node()
            .into_iter()
            .flat_map(N::items)
            .map(Artifact::read)
            .collect()
    }
}

impl<'d, N: Node<'d>> Unit<'d, N> {
    /// The unit `json` at `index` of `plan.units`, its common members found in one pass.
    fn new(json: N, index: usize) -> Self {
        let mut unit = Unit {
            json,
            index,
            id: "",
            status: "",
            role: "",
            depends_on: None,
            touches: None,
            reviews: None,
        };
        for (key, value) in json.members() {
            match key {
                "id" => unit.id = value.as_str().unwrap_or(""),
                "status" => unit.status = value.as_str().unwrap_or(""),
                "role" => unit.role = value.as_str().unwrap_or(""),
                "depends_on" => unit.depends_on = Some(value),
                "touches" => unit.touches = Some(value),
                "reviews" => unit.reviews = Some(value),
                _ => {}
            }
        }
        unit
    }

    /// The unit's JSON object, verbatim.
    pub(crate) fn json(&self) -> N {
        self.json
    }

    /// Its position in `plan.units`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// `id`.
    pub fn id(&self) -> &'d str {
        self.id
    }

    /// `title`.
    pub fn title(&self) -> &'d str {
        str_of(self.json, "title")
    }

    /// Its status (in a document that passed the checkpoint's schema, one of the five).
    pub fn status(&self) -> UnitStatus {
        read_status(self.status)
    }

    /// `status`, as written.
    pub(crate) fn status_str(&self) -> &'d str {
        self.status
    }

    /// Whether its status is terminal (`done` or `dropped`).
    pub fn is_terminal(&self) -> bool {
        matches!(self.status, "done" | "dropped")
    }

    /// The role of the agent that does it (in a document that passed the checkpoint's schema, one
    /// of the three).
    pub fn role(&self) -> Role {
        read_role(self.role)
    }

    /// `role`, as written.
    pub(crate) fn role_str(&self) -> &'d str {
        self.role
    }

    /// The unit, typed.
    pub fn to_planned(&self) -> PlannedUnit {
        PlannedUnit::read(self.json)
    }

    /// `depends_on`, in declared order.
    pub fn depends_on(&self) -> impl Iterator<Item = &'d str> + use<'d, N> {
        strs(self.depends_on)
    }

    /// `reviews`.
    pub fn reviews(&self) -> impl Iterator<Item = &'d str> + use<'d, N> {
        strs(self.reviews)
    }

    /// Whether it has a `touches` key.
    pub fn has_touches(&self) -> bool {
        self.touches.is_some()
    }

    /// `touches`, normalized: `None` when absent or null.
    pub fn touches(&self) -> Result<Option<Vec<String>>, BadTouches> {
        planner::touches_of(self.touches)
    }

    /// `tests`: the hypothesis a run unit tests.
    pub fn tests(&self) -> Option<&'d str> {
        self.json.get("tests")?.as_str()
    }

    /// `replay_of`: the run a replay unit replays.
    pub fn replay_of(&self) -> Option<&'d str> {
        self.json.get("replay_of")?.as_str()
    }

    /// Whether it is a run unit: it has a `tests` or a `replay_of` key.
    pub fn is_run(&self) -> bool {
        self.json.get("tests").is_some() || self.json.get("replay_of").is_some()
    }

    /// Whether it has `concludes: true`.
    pub fn concludes(&self) -> bool {
        self.json.get("concludes").and_then(N::as_bool) == Some(true)
    }

    /// `verify`.
    pub fn verify(&self) -> &'d str {
        str_of(self.json, "verify")
    }

    /// Whether it has an `attempts` array.
    pub fn has_attempts(&self) -> bool {
        self.json.get("attempts").is_some_and(|a| a.kind() == Kind::Array)
    }

    /// What the newest attempt produced, in order (none when it has no attempt).
    pub fn last_produced(&self) -> Vec<Produced> {
        self.last_produced_nodes().map(Produced::read).collect()
    }

    /// The newest attempt's `produced` list, in order (none when there is none).
    pub(crate) fn last_produced_nodes(&self) -> impl Iterator<Item = N> + use<'d, N> {
        self.json
            .get("attempts")
            .and_then(|a| a.items().last())
            .and_then(|a| a.get("produced"))
            .into_iter()
            .flat_map(N::items)
    }
}

/// The `ref` of the first entry of kind `kind` in a `produced` list.
pub(crate) fn first_ref<'d, N: Node<'d>>(
    produced: impl IntoIterator<Item = N>,
    kind: &str,
) -> Option<&'d str> {
    produced
        .into_iter()
        .find(|p| p.get("kind").and_then(N::as_str) == Some(kind))
        .and_then(|p| p.get("ref").and_then(N::as_str))
}

/// Whether a number is zero (an integer `0`, or a float `0.0`/`-0.0`).
pub(crate) fn is_zero(n: &Number) -> bool {
    match n {
        Number::Int(i) => *i == 0,
        Number::BigInt(_) => false,
        Number::Float(f) => *f == 0.0,
    }
}
