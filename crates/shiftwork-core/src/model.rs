//! The typed model of a checkpoint's parts: ids and texts that cannot be empty, the closed sets of
//! unit statuses and roles (spelt on the wire as the checkpoint spells them), open questions, what a
//! unit produced, history entries, artifacts and planned units.
//!
//! These are the values a program reads out of a checkpoint ([`crate::Checkpoint`], the results of the
//! operations) and puts into one (a [`crate::ClockOut`], a new checkpoint built with
//! [`crate::authoring::CheckpointBuilder`]). A value of these types is valid by construction where the
//! checkpoint's format says what valid is: an id or a text has at least one character, a status is one
//! of five, a role one of three.
//!
//! Free-form members — the extra keys an accounting line or a history entry may carry beside the ones
//! the format names — are the one place JSON values appear: [`Extras`].
//!
//! ```
//! use shiftwork_core::model::{HistoryEntry, Produced, Role, Text, UnitId, UnitStatus};
//!
//! let lexer = UnitId::new("lexer").unwrap();
//! assert!(UnitId::new("").is_err());
//! assert_eq!("in_progress".parse::<UnitStatus>().unwrap(), UnitStatus::InProgress);
//! assert_eq!(Role::Reviewer.as_str(), "reviewer");
//! let entry = HistoryEntry::new(lexer, Text::new("lexer written").unwrap())
//!     .with_produced(vec![Produced::new(Text::new("commit").unwrap(), Text::new("abc1234").unwrap())]);
//! assert_eq!(entry.produced[0].reference.as_str(), "abc1234");
//! ```

use std::fmt;
use std::str::FromStr;

use crate::json::{Json, Node, Object};

/// Free-form members: the keys of an accounting line or a history entry that the checkpoint's format
/// does not name, with any JSON value. This is the model's one escape hatch into JSON; whatever it
/// holds is judged by the same rules as a client's arguments (a reserved key or a wrong shape is
/// refused by the clock-out, never written).
pub type Extras = Object;

/// Why a value of the model could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// An id or a text was empty; the checkpoint's format needs at least one character.
    #[error("{what} is empty; it needs at least one character")]
    Empty {
        /// What was empty (`a unit id`, `a text`).
        what: &'static str,
    },
    /// A text is not one of the five unit statuses.
    #[error("'{text}' is not a unit status: one of todo, in_progress, done, blocked, dropped")]
    NotAStatus {
        /// The text, clipped.
        text: String,
    },
    /// A text is not one of the three roles.
    #[error("'{text}' is not a role: one of planner, implementer, reviewer")]
    NotARole {
        /// The text, clipped.
        text: String,
    },
    /// A text is not an agent id of the family's grammar.
    #[error(transparent)]
    AgentId(#[from] shiftwork_seams::agent::AgentIdError),
}

impl ModelError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::Empty { .. } => "EMPTY_TEXT",
            ModelError::NotAStatus { .. } => "NOT_A_STATUS",
            ModelError::NotARole { .. } => "NOT_A_ROLE",
            ModelError::AgentId(inner) => inner.code(),
        }
    }
}

impl shiftwork_seams::Coded for ModelError {
    fn code(&self) -> &'static str {
        ModelError::code(self)
    }
}

fn non_empty(text: String, what: &'static str) -> Result<String, ModelError> {
    if text.is_empty() {
        Err(ModelError::Empty { what })
    } else {
        Ok(text)
    }
}

macro_rules! text_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The value of `text`; refused when it is empty.
            pub fn new(text: impl Into<String>) -> Result<$name, ModelError> {
                non_empty(text.into(), $what).map($name)
            }

            /// A value read from a document that passed the checkpoint's schema (which makes it
            /// non-empty).
            pub(crate) fn read(text: &str) -> $name {
                $name(text.to_owned())
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = ModelError;

            fn from_str(text: &str) -> Result<$name, ModelError> {
                $name::new(text)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = ModelError;

            fn try_from(text: &str) -> Result<$name, ModelError> {
                $name::new(text)
            }
        }

        impl TryFrom<String> for $name {
            type Error = ModelError;

            fn try_from(text: String) -> Result<$name, ModelError> {
                $name::new(text)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }
    };
}

text_type!(
    /// A unit's id: any text of at least one character, unique within its checkpoint.
    UnitId,
    "a unit id"
);

text_type!(
    /// A text the checkpoint needs non-empty: a title, a goal, an outcome, a command.
    Text,
    "a text"
);

macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident, $error:ident, $(($variant:ident, $wire:literal, $vdoc:literal)),+ $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(
                #[doc = $vdoc]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in the order the checkpoint's format lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling in a checkpoint.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The value spelt `text` in a checkpoint, if any.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ModelError;

            fn from_str(text: &str) -> Result<$name, ModelError> {
                $name::parse(text).ok_or_else(|| ModelError::$error {
                    text: shiftwork_seams::echo::echo(text),
                })
            }
        }
    };
}

closed_set!(
    /// A unit's status. `done` and `dropped` are terminal: the planner leaves such a unit out.
    UnitStatus,
    NotAStatus,
    (Todo, "todo", "Not started."),
    (InProgress, "in_progress", "Started and not finished."),
    (Done, "done", "Finished (terminal)."),
    (Blocked, "blocked", "Waiting for something outside the job."),
    (Dropped, "dropped", "Given up (terminal)."),
);

impl UnitStatus {
    /// Whether the status is terminal (`done` or `dropped`).
    pub fn is_terminal(self) -> bool {
        matches!(self, UnitStatus::Done | UnitStatus::Dropped)
    }
}

closed_set!(
    /// The role of the agent that does a unit.
    Role,
    NotARole,
    (Planner, "planner", "Plans work: splits, orders, briefs."),
    (Implementer, "implementer", "Does the work."),
    (Reviewer, "reviewer", "Reviews another role's work."),
);

/// An open question of the handoff: a decision for a human, or a relay that a shell probe may answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// A question given as plain text: a decision.
    Text(Text),
    /// `{"q": …, "kind": "decision"}`, optionally with a probe (which a decision never runs).
    Decision {
        /// The question.
        q: Text,
        /// A probe command, kept as written.
        probe: Option<Text>,
    },
    /// `{"q": …, "kind": "relay", "probe": …}`: answered when its probe (a shell command run from the
    /// repository root, only by a server that runs probes) exits 0.
    Relay {
        /// The question.
        q: Text,
        /// The probe command.
        probe: Text,
    },
}

impl Question {
    /// The question's text.
    pub fn text(&self) -> &str {
        match self {
            Question::Text(q) | Question::Decision { q, .. } | Question::Relay { q, .. } => q.as_str(),
        }
    }

    pub(crate) fn to_json(&self) -> Json {
        match self {
            Question::Text(q) => Json::str(q.as_str()),
            Question::Decision { q, probe } => {
                let mut o =
                    crate::json::object([("q", Json::str(q.as_str())), ("kind", Json::str("decision"))]);
                if let Some(p) = probe {
                    o.insert(String::from("probe"), Json::str(p.as_str()));
                }
                Json::Object(o)
            }
            Question::Relay { q, probe } => Json::Object(crate::json::object([
                ("q", Json::str(q.as_str())),
                ("kind", Json::str("relay")),
                ("probe", Json::str(probe.as_str())),
            ])),
        }
    }

    /// A question of a document that passed the schema.
    pub(crate) fn read<'d, N: Node<'d>>(node: N) -> Question {
        if let Some(text) = node.as_str() {
            return Question::Text(Text::read(text));
        }
        let q = Text::read(str_of(node, "q"));
        let probe = node.get("probe").and_then(N::as_str).map(Text::read);
        match (str_of(node, "kind"), probe) {
            ("relay", Some(probe)) => Question::Relay { q, probe },
            (_, probe) => Question::Decision { q, probe },
        }
    }
}

/// One thing a unit produced: `{"kind": …, "ref": …}` (a commit, a file, a run's output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    /// What it is: `commit`, `file`, `run-output`, …
    pub kind: Text,
    /// Where it is: a hash, a path, a URL (`ref` in the checkpoint).
    pub reference: Text,
}

impl Produced {
    /// A thing produced.
    pub fn new(kind: Text, reference: Text) -> Produced {
        Produced { kind, reference }
    }

    pub(crate) fn to_json(&self) -> Json {
        Json::Object(crate::json::object([
            ("kind", Json::str(self.kind.as_str())),
            ("ref", Json::str(self.reference.as_str())),
        ]))
    }

    pub(crate) fn read<'d, N: Node<'d>>(node: N) -> Produced {
        Produced {
            kind: Text::read(str_of(node, "kind")),
            reference: Text::read(str_of(node, "ref")),
        }
    }
}

/// An entry of the history ring (the last five outcomes): which unit, how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The unit it is about.
    pub unit: UnitId,
    /// How it went.
    pub outcome: Text,
    /// Notes, when given.
    pub notes: Option<String>,
    /// What the unit produced (none: no `produced` key).
    pub produced: Vec<Produced>,
    /// Other members, free-form ([`Extras`]).
    pub extras: Extras,
}

impl HistoryEntry {
    /// An entry for `unit` with its `outcome`, no notes, nothing produced.
    pub fn new(unit: UnitId, outcome: Text) -> HistoryEntry {
        HistoryEntry {
            unit,
            outcome,
            notes: None,
            produced: Vec::new(),
            extras: Extras::default(),
        }
    }

    /// This entry with notes.
    pub fn with_notes(mut self, notes: impl Into<String>) -> HistoryEntry {
        self.notes = Some(notes.into());
        self
    }

    /// This entry with what the unit produced (a run unit clocked out done needs an entry of kind
    /// `run-output`).
    pub fn with_produced(mut self, produced: Vec<Produced>) -> HistoryEntry {
        self.produced = produced;
        self
    }

    /// The entry as the checkpoint holds it: `unit`, `outcome`, `notes`, `produced`, then the extras.
    pub(crate) fn to_object(&self) -> Object {
        let mut o = crate::json::object([
            ("unit", Json::str(self.unit.as_str())),
            ("outcome", Json::str(self.outcome.as_str())),
        ]);
        if let Some(notes) = &self.notes {
            o.insert(String::from("notes"), Json::str(notes.as_str()));
        }
        if !self.produced.is_empty() {
            o.insert(
                String::from("produced"),
                Json::Array(self.produced.iter().map(Produced::to_json).collect()),
            );
        }
        for (k, v) in &self.extras {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
        o
    }

    pub(crate) fn read<'d, N: Node<'d>>(node: N) -> HistoryEntry {
        let mut entry = HistoryEntry::new(
            UnitId::read(str_of(node, "unit")),
            Text::read(str_of(node, "outcome")),
        );
        for (key, value) in node.members() {
            match key {
                "unit" | "outcome" => {}
                "notes" if value.as_str().is_some() => entry.notes = value.as_str().map(str::to_owned),
                "produced" if value.items().all(|p| p.get("kind").is_some()) => {
                    entry.produced = value.items().map(Produced::read).collect();
                }
                _ => {
                    entry.extras.insert(key.to_owned(), value.to_json());
                }
            }
        }
        entry
    }
}

/// A file of the job's state: `{"path": …, "role": …}` (a spec, a design note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Its path.
    pub path: Text,
    /// What it is to the job (free text: `spec`, `design`, …).
    pub role: Text,
}

impl Artifact {
    pub(crate) fn read<'d, N: Node<'d>>(node: N) -> Artifact {
        Artifact {
            path: Text::read(str_of(node, "path")),
            role: Text::read(str_of(node, "role")),
        }
    }
}

/// The handoff to the next agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// What to do next.
    pub next_action: Text,
    /// The open questions, in order.
    pub open_questions: Vec<Question>,
    /// What not to do.
    pub do_not: Vec<Text>,
    /// Notes, when given.
    pub notes: Option<String>,
}

impl Handoff {
    pub(crate) fn read<'d, N: Node<'d>>(node: Option<N>) -> Handoff {
        let field = |key: &str| node.and_then(|h| h.get(key));
        Handoff {
            next_action: Text::read(field("next_action").and_then(N::as_str).unwrap_or("")),
            open_questions: field("open_questions")
                .into_iter()
                .flat_map(N::items)
                .map(Question::read)
                .collect(),
            do_not: texts(field("do_not")),
            notes: field("notes").and_then(N::as_str).map(str::to_owned),
        }
    }
}

/// One attempt of a unit (the last three are kept): its status and outcome when it was clocked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The status it was clocked out with.
    pub status: UnitStatus,
    /// The history entry's outcome.
    pub outcome: Text,
    /// The history entry's notes.
    pub notes: Option<String>,
    /// What it produced (none: no `produced` key).
    pub produced: Vec<Produced>,
}

/// A unit of the plan, as the checkpoint holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedUnit {
    /// Its id, unique in the plan.
    pub id: UnitId,
    /// What it is, in a few words.
    pub title: Text,
    /// The brief an agent reads, relative to the repository root (`briefs/<id>.md` by convention).
    pub brief_path: Text,
    /// Its status.
    pub status: UnitStatus,
    /// The role of the agent that does it.
    pub role: Role,
    /// The units it waits for.
    pub depends_on: Vec<UnitId>,
    /// The command that says whether it is done.
    pub verify: Text,
    /// Its commits (none: no `commits` key).
    pub commits: Vec<Text>,
    /// The repository-relative paths it writes, when it declares them: no two units of a wave write
    /// the same path.
    pub touches: Option<Vec<String>>,
    /// The units it reviews (each must be a dependency of another role).
    pub reviews: Vec<UnitId>,
    /// The hypothesis it tests (a run unit of an experiment).
    pub tests: Option<Text>,
    /// The run it replays (a replay unit of an experiment).
    pub replay_of: Option<UnitId>,
    /// Whether it may send the job's conclusion (`None`: no `concludes` key).
    pub concludes: Option<bool>,
    /// Its last attempts, oldest first.
    pub attempts: Vec<Attempt>,
}

impl PlannedUnit {
    /// A new unit to do: status `todo`, brief `briefs/<id>.md`, no dependencies.
    ///
    /// ```
    /// use shiftwork_core::model::{PlannedUnit, Role, Text, UnitId, UnitStatus};
    /// let unit = PlannedUnit::new(UnitId::new("lexer").unwrap(), Text::new("Write the lexer").unwrap(), Role::Implementer, Text::new("cargo test -p lexer").unwrap());
    /// assert_eq!((unit.brief_path.as_str(), unit.status), ("briefs/lexer.md", UnitStatus::Todo));
    /// ```
    pub fn new(id: UnitId, title: Text, role: Role, verify: Text) -> PlannedUnit {
        let brief_path = Text(format!("briefs/{id}.md"));
        PlannedUnit {
            id,
            title,
            brief_path,
            status: UnitStatus::Todo,
            role,
            depends_on: Vec::new(),
            verify,
            commits: Vec::new(),
            touches: None,
            reviews: Vec::new(),
            tests: None,
            replay_of: None,
            concludes: None,
            attempts: Vec::new(),
        }
    }

    /// This unit waiting for `units`.
    pub fn depends_on(mut self, units: impl IntoIterator<Item = UnitId>) -> PlannedUnit {
        self.depends_on = units.into_iter().collect();
        self
    }

    /// This unit with its brief at `path`.
    pub fn brief_path(mut self, path: Text) -> PlannedUnit {
        self.brief_path = path;
        self
    }

    /// This unit declaring the repository-relative paths it writes.
    pub fn touches(mut self, paths: impl IntoIterator<Item = String>) -> PlannedUnit {
        self.touches = Some(paths.into_iter().collect());
        self
    }

    /// This unit with the status `status` (a new unit is `todo`).
    ///
    /// ```
    /// use shiftwork_core::model::{PlannedUnit, Role, Text, UnitId, UnitStatus};
    /// let (id, text) = (|t: &str| UnitId::new(t).unwrap(), |t: &str| Text::new(t).unwrap());
    /// let review = PlannedUnit::new(id("review"), text("Review"), Role::Reviewer, text("make review"))
    ///     .depends_on([id("build")])
    ///     .reviews([id("build")])
    ///     .status(UnitStatus::Blocked)
    ///     .concludes(true);
    /// assert_eq!((review.reviews.as_slice(), review.status, review.concludes), (&[id("build")][..], UnitStatus::Blocked, Some(true)));
    /// ```
    pub fn status(mut self, status: UnitStatus) -> PlannedUnit {
        self.status = status;
        self
    }

    /// This unit reviewing `units` (each among its dependencies, of another role).
    pub fn reviews(mut self, units: impl IntoIterator<Item = UnitId>) -> PlannedUnit {
        self.reviews = units.into_iter().collect();
        self
    }

    /// This unit allowed (`true`) to send the job's conclusion in its clock-out.
    pub fn concludes(mut self, concludes: bool) -> PlannedUnit {
        self.concludes = Some(concludes);
        self
    }

    /// This unit testing the hypothesis `hypothesis` (a run of an experimentation job).
    pub fn tests(mut self, hypothesis: Text) -> PlannedUnit {
        self.tests = Some(hypothesis);
        self
    }

    /// This unit replaying the run `run`.
    pub fn replay_of(mut self, run: UnitId) -> PlannedUnit {
        self.replay_of = Some(run);
        self
    }

    /// The unit as the checkpoint holds it, keys in the format's order.
    pub(crate) fn to_json(&self) -> Json {
        let ids = |ids: &[UnitId]| Json::strings(ids.iter().map(UnitId::as_str));
        let mut o = crate::json::object([
            ("id", Json::str(self.id.as_str())),
            ("title", Json::str(self.title.as_str())),
            ("brief_path", Json::str(self.brief_path.as_str())),
            ("status", Json::str(self.status.as_str())),
            ("role", Json::str(self.role.as_str())),
            ("depends_on", ids(&self.depends_on)),
            ("verify", Json::str(self.verify.as_str())),
        ]);
        if !self.commits.is_empty() {
            o.insert(
                String::from("commits"),
                Json::strings(self.commits.iter().map(Text::as_str)),
            );
        }
        if let Some(touches) = &self.touches {
            o.insert(String::from("touches"), Json::strings(touches));
        }
        if !self.reviews.is_empty() {
            o.insert(String::from("reviews"), ids(&self.reviews));
        }
        if let Some(t) = &self.tests {
            o.insert(String::from("tests"), Json::str(t.as_str()));
        }
        if let Some(r) = &self.replay_of {
            o.insert(String::from("replay_of"), Json::str(r.as_str()));
        }
        if let Some(c) = self.concludes {
            o.insert(String::from("concludes"), Json::Bool(c));
        }
        if !self.attempts.is_empty() {
            let attempts = self
                .attempts
                .iter()
                .map(|a| {
                    let mut o = crate::json::object([
                        ("status", Json::str(a.status.as_str())),
                        ("outcome", Json::str(a.outcome.as_str())),
                    ]);
                    if let Some(n) = &a.notes {
                        o.insert(String::from("notes"), Json::str(n.as_str()));
                    }
                    if !a.produced.is_empty() {
                        o.insert(
                            String::from("produced"),
                            Json::Array(a.produced.iter().map(Produced::to_json).collect()),
                        );
                    }
                    Json::Object(o)
                })
                .collect();
            o.insert(String::from("attempts"), Json::Array(attempts));
        }
        Json::Object(o)
    }

    /// A unit of a document that passed the schema.
    pub(crate) fn read<'d, N: Node<'d>>(node: N) -> PlannedUnit {
        let text = |key: &str| node.get(key).and_then(N::as_str).map(Text::read);
        let ids = |key: &str| texts(node.get(key)).into_iter().map(|t| UnitId(t.0)).collect();
        PlannedUnit {
            id: UnitId::read(str_of(node, "id")),
            title: Text::read(str_of(node, "title")),
            brief_path: Text::read(str_of(node, "brief_path")),
            status: read_status(str_of(node, "status")),
            role: read_role(str_of(node, "role")),
            depends_on: ids("depends_on"),
            verify: Text::read(str_of(node, "verify")),
            commits: texts(node.get("commits")),
            touches: node
                .get("touches")
                .filter(|t| !t.is_null())
                .map(|t| t.items().filter_map(N::as_str).map(str::to_owned).collect()),
            reviews: ids("reviews"),
            tests: text("tests"),
            replay_of: text("replay_of").map(|t| UnitId(t.0)),
            concludes: node.get("concludes").and_then(N::as_bool),
            attempts: node
                .get("attempts")
                .into_iter()
                .flat_map(N::items)
                .map(|a| Attempt {
                    status: read_status(str_of(a, "status")),
                    outcome: Text::read(str_of(a, "outcome")),
                    notes: a.get("notes").and_then(N::as_str).map(str::to_owned),
                    produced: a
                        .get("produced")
                        .into_iter()
                        .flat_map(N::items)
                        .map(Produced::read)
                        .collect(),
                })
                .collect(),
        }
    }
}

/// The status of a document that passed the schema (which allows only the five).
pub(crate) fn read_status(text: &str) -> UnitStatus {
    UnitStatus::parse(text).unwrap_or(UnitStatus::Todo)
}

/// The role of a document that passed the schema (which allows only the three).
pub(crate) fn read_role(text: &str) -> Role {
    Role::parse(text).unwrap_or(Role::Implementer)
}

fn str_of<'d, N: Node<'d>>(node: N, key: &str) -> &'d str {
    node.get(key).and_then(N::as_str).unwrap_or("")
}

/// The strings of an array value (none when absent).
pub(crate) fn texts<'d, N: Node<'d>>(value: Option<N>) -> Vec<Text> {
    value
        .into_iter()
        .flat_map(N::items)
        .filter_map(N::as_str)
        .map(Text::read)
        .collect()
}
