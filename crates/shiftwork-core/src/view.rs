//! A typed, borrowed read view of a validated checkpoint: [`Checkpoint`] and its [`Unit`]s. Every
//! gate reads the document through it, never by key strings of its own.
//!
//! The view is meant for a document that passed the checkpoint schema (every reader of this crate
//! validates first): a member the schema makes required is read as present, and an accessor of a
//! member that is absent anyway answers the empty value (`""`, no items) rather than failing.

use crate::json::{Json, Number};
use crate::planner::{self, BadTouches};

/// A validated checkpoint, read in place.
///
/// ```
/// let doc = shiftwork_core::json::parse(r#"{"plan": {"cursor": "U3", "units": [{"id": "U1", "status": "done", "role": "implementer", "depends_on": []}, {"id": "U3", "status": "todo", "role": "reviewer", "depends_on": ["U1"]}]}}"#).unwrap();
/// let cp = shiftwork_core::Checkpoint::new(&doc);
/// assert_eq!(cp.cursor(), "U3");
/// let u3 = cp.unit("U3").unwrap();
/// assert_eq!((u3.role(), u3.depends_on().collect::<Vec<_>>()), ("reviewer", vec!["U1"]));
/// assert!(cp.units().next().unwrap().is_terminal());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Checkpoint<'d> {
    doc: &'d Json,
}

/// One unit of `plan.units`, with its position.
#[derive(Debug, Clone, Copy)]
pub struct Unit<'d> {
    json: &'d Json,
    index: usize,
}

const EMPTY: &[Json] = &[];

fn str_of<'a>(obj: &'a Json, key: &str) -> &'a str {
    obj.get(key).and_then(Json::as_str).unwrap_or("")
}

fn strs_of<'a>(obj: &'a Json, key: &str) -> impl Iterator<Item = &'a str> + use<'a> {
    obj.get(key)
        .and_then(Json::as_array)
        .map_or(EMPTY, Vec::as_slice)
        .iter()
        .filter_map(Json::as_str)
}

impl<'d> Checkpoint<'d> {
    /// The view of `doc` (a document that passed the checkpoint schema).
    pub fn new(doc: &'d Json) -> Self {
        Checkpoint { doc }
    }

    /// The whole document.
    pub fn document(&self) -> &'d Json {
        self.doc
    }

    /// `plan.units`, in plan order.
    pub fn units(&self) -> impl ExactSizeIterator<Item = Unit<'d>> + use<'d> {
        self.unit_values()
            .iter()
            .enumerate()
            .map(|(index, json)| Unit { json, index })
    }

    /// The number of units.
    pub fn len(&self) -> usize {
        self.unit_values().len()
    }

    /// Whether `plan.units` is empty.
    pub fn is_empty(&self) -> bool {
        self.unit_values().is_empty()
    }

    /// The unit at `index` of `plan.units`.
    pub fn unit_at(&self, index: usize) -> Option<Unit<'d>> {
        self.unit_values().get(index).map(|json| Unit { json, index })
    }

    /// The first unit with this id (ids are unique in a validated checkpoint).
    pub fn unit(&self, id: &str) -> Option<Unit<'d>> {
        self.units().find(|u| u.id() == id)
    }

    /// The unit ids, in plan order.
    pub fn ids(&self) -> Vec<&'d str> {
        self.units().map(|u| u.id()).collect()
    }

    fn unit_values(&self) -> &'d [Json] {
        self.doc
            .get("plan")
            .and_then(|p| p.get("units"))
            .and_then(Json::as_array)
            .map_or(EMPTY, Vec::as_slice)
    }

    /// `plan.cursor`.
    pub fn cursor(&self) -> &'d str {
        self.doc.get("plan").map_or("", |p| str_of(p, "cursor"))
    }

    /// `job`.
    pub fn job(&self) -> Option<&'d Json> {
        self.doc.get("job")
    }

    /// `job.roles.<role>`, when `job.roles` has the role as a key (SW-79: key presence).
    pub fn role_models(&self, role: &str) -> Option<&'d Json> {
        self.job()?.get("roles")?.get(role)
    }

    /// Whether `job.roles` exists, and if so whether it declares `role` (SW-121).
    pub fn declares_role(&self, role: &str) -> Option<bool> {
        let roles = self.job()?.get("roles")?.as_object()?;
        Some(roles.contains_key(role))
    }

    /// `job.budget`, when declared.
    pub fn budget(&self) -> Option<&'d Json> {
        self.job()?.get("budget")
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
    pub fn agreements(&self) -> Option<&'d Json> {
        self.job()?.get("agreements")
    }

    /// The strings of `job.agreements` (none when absent).
    pub fn agreement_texts(&self) -> Vec<&'d str> {
        self.job()
            .map(|j| strs_of(j, "agreements").collect())
            .unwrap_or_default()
    }

    /// `job.constraints`.
    pub fn constraints(&self) -> Option<&'d Json> {
        self.job()?.get("constraints")
    }

    /// `handoff`.
    pub fn handoff(&self) -> Option<&'d Json> {
        self.doc.get("handoff")
    }

    /// `handoff.open_questions`.
    pub fn open_questions(&self) -> &'d [Json] {
        self.handoff()
            .and_then(|h| h.get("open_questions"))
            .and_then(Json::as_array)
            .map_or(EMPTY, Vec::as_slice)
    }

    /// The last entry of `history`.
    pub fn last_history(&self) -> Option<&'d Json> {
        self.doc.get("history")?.as_array()?.last()
    }

    /// `state.artifacts`.
    pub fn artifacts(&self) -> Option<&'d Json> {
        self.doc.get("state")?.get("artifacts")
    }
}

impl<'d> Unit<'d> {
    /// The unit's JSON object, verbatim.
    pub fn json(&self) -> &'d Json {
        self.json
    }

    /// Its position in `plan.units`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// `id`.
    pub fn id(&self) -> &'d str {
        str_of(self.json, "id")
    }

    /// `title`.
    pub fn title(&self) -> &'d str {
        str_of(self.json, "title")
    }

    /// `status`.
    pub fn status(&self) -> &'d str {
        str_of(self.json, "status")
    }

    /// Whether its status is terminal (`done` or `dropped`).
    pub fn is_terminal(&self) -> bool {
        matches!(self.status(), "done" | "dropped")
    }

    /// `role`.
    pub fn role(&self) -> &'d str {
        str_of(self.json, "role")
    }

    /// `depends_on`, in declared order.
    pub fn depends_on(&self) -> impl Iterator<Item = &'d str> + use<'d> {
        strs_of(self.json, "depends_on")
    }

    /// `reviews`.
    pub fn reviews(&self) -> impl Iterator<Item = &'d str> + use<'d> {
        strs_of(self.json, "reviews")
    }

    /// Whether it has a `touches` key.
    pub fn has_touches(&self) -> bool {
        self.json.get("touches").is_some()
    }

    /// `touches`, normalized (SW-50): `None` when absent or null.
    pub fn touches(&self) -> Result<Option<Vec<String>>, BadTouches> {
        planner::touches_of(self.json.get("touches"))
    }

    /// `tests`: the hypothesis a run unit tests.
    pub fn tests(&self) -> Option<&'d str> {
        self.json.get("tests")?.as_str()
    }

    /// `replay_of`: the run a replay unit replays.
    pub fn replay_of(&self) -> Option<&'d str> {
        self.json.get("replay_of")?.as_str()
    }

    /// Whether it is a run unit: it has a `tests` or a `replay_of` key (SW-128).
    pub fn is_run(&self) -> bool {
        self.json.get("tests").is_some() || self.json.get("replay_of").is_some()
    }

    /// Whether it has `concludes: true`.
    pub fn concludes(&self) -> bool {
        self.json.get("concludes") == Some(&Json::Bool(true))
    }

    /// `verify`.
    pub fn verify(&self) -> &'d str {
        str_of(self.json, "verify")
    }

    /// Whether it has an `attempts` array.
    pub fn has_attempts(&self) -> bool {
        matches!(self.json.get("attempts"), Some(Json::Array(_)))
    }

    /// The newest attempt's `produced` list (none when there is none).
    pub fn last_produced(&self) -> &'d [Json] {
        self.json
            .get("attempts")
            .and_then(Json::as_array)
            .and_then(|a| a.last())
            .and_then(|a| a.get("produced"))
            .and_then(Json::as_array)
            .map_or(EMPTY, Vec::as_slice)
    }
}

/// The `ref` of the first entry of kind `kind` in a `produced` list.
pub(crate) fn first_ref<'a>(produced: &'a [Json], kind: &str) -> Option<&'a str> {
    produced
        .iter()
        .find(|p| p.get("kind").and_then(Json::as_str) == Some(kind))
        .and_then(|p| p.get("ref").and_then(Json::as_str))
}

/// Whether a number is zero (an integer `0`, or a float `0.0`/`-0.0`).
pub(crate) fn is_zero(n: &Number) -> bool {
    match n {
        Number::Int(i) => *i == 0,
        Number::BigInt(_) => false,
        Number::Float(f) => *f == 0.0,
    }
}
