//! A clock-out as a program asks for it: [`ClockOut`], built from its required parts and typed
//! options, which cannot be built with a part missing or a status or role outside their sets. It is
//! judged by the same gates as the MCP tool's arguments ([`crate::ClockOutArguments`], the form a
//! server decodes from a client's JSON), into which it converts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::decide::clock_out::ClockOutArguments;
use crate::json::{Json, Object};
use crate::model::{Extras, HistoryEntry, Question, Role, Text, UnitId, UnitStatus};
use crate::refusal::ShiftworkRefusal;

/// An agent's id: the family's one agent id ([`shiftwork_seams::agent::AgentId`]), 1 to 64
/// characters of `A-Z a-z 0-9 . _ @ : -`, starting with a letter or a digit (`alice`, `bob.smith`,
/// `ci-runner-7`), shared with `shiftwork-contracts`.
///
/// ```
/// use shiftwork_core::AgentId;
/// assert_eq!(AgentId::new("bob.smith").unwrap().as_str(), "bob.smith");
/// assert_eq!(
///     AgentId::new("-x").unwrap_err().to_string(),
///     "an agent id starts with a letter or a digit, not '-'"
/// );
/// ```
pub use shiftwork_seams::agent::{AgentId, AgentIdError};

/// What a unit cost, written on its accounting line in the ledger (`<checkpoint>.log.jsonl`).
///
/// ```
/// use std::time::Duration;
/// use shiftwork_core::Accounting;
/// let cost = Accounting::new(41_250, Duration::from_secs(95)).with_model("claude-sonnet-4");
/// assert_eq!(cost.model.as_deref(), Some("claude-sonnet-4"));
/// assert_eq!(cost.duration.as_millis(), 95_000);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Accounting {
    /// Tokens spent.
    pub tokens: u64,
    /// Wall time, written as whole milliseconds (`duration_ms`, rounded down; past `u64::MAX`
    /// milliseconds, that).
    pub duration: Duration,
    /// Tokens read from a cache.
    pub cache_read_tokens: Option<u64>,
    /// Tool calls made.
    pub tool_uses: Option<u64>,
    /// The model that did the work (a job whose `roles` names models for the unit's role requires
    /// one of them).
    pub model: Option<String>,
    /// A note.
    pub note: Option<String>,
    /// Whether the figures are an estimate (zero tokens under a budget need `true`).
    pub estimate: Option<bool>,
    /// Other members, free-form ([`Extras`]); a key named above is ignored here, and the runtime's own
    /// keys (`unit`, `role`, `status`, `ts`, `event`, `agent_id`) are refused by the clock-out.
    pub extras: Extras,
}

impl Accounting {
    /// A cost of `tokens` over `duration` of wall time.
    pub fn new(tokens: u64, duration: Duration) -> Accounting {
        Accounting {
            tokens,
            duration,
            cache_read_tokens: None,
            tool_uses: None,
            model: None,
            note: None,
            estimate: None,
            extras: Extras::default(),
        }
    }

    /// This cost with the model that did the work.
    pub fn with_model(mut self, model: impl Into<String>) -> Accounting {
        self.model = Some(model.into());
        self
    }

    fn to_json(&self) -> Json {
        let number = |n: u64| crate::budget::int(i128::from(n));
        let mut o = crate::json::object([
            ("tokens", number(self.tokens)),
            (
                "duration_ms",
                number(u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX)),
            ),
        ]);
        let mut put = |key: &str, value: Option<Json>| {
            if let Some(v) = value {
                o.insert(key.to_owned(), v);
            }
        };
        put("cache_read_tokens", self.cache_read_tokens.map(number));
        put("tool_uses", self.tool_uses.map(number));
        put("model", self.model.as_deref().map(Json::str));
        put("note", self.note.as_deref().map(Json::str));
        put("estimate", self.estimate.map(Json::Bool));
        for (k, v) in &self.extras {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Json::Object(o)
    }
}

/// What a clock-out changes in the handoff: each member given replaces the handoff's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandoffPatch {
    /// The next action.
    pub next_action: Option<Text>,
    /// The open questions (all of them: the list replaces the handoff's).
    pub open_questions: Option<Vec<Question>>,
    /// What not to do (the list replaces the handoff's).
    pub do_not: Option<Vec<Text>>,
    /// Notes.
    pub notes: Option<String>,
}

impl HandoffPatch {
    fn to_object(&self) -> Object {
        let mut o = Object::default();
        if let Some(n) = &self.next_action {
            o.insert(String::from("next_action"), Json::str(n.as_str()));
        }
        if let Some(q) = &self.open_questions {
            o.insert(
                String::from("open_questions"),
                Json::Array(q.iter().map(Question::to_json).collect()),
            );
        }
        if let Some(d) = &self.do_not {
            o.insert(String::from("do_not"), Json::strings(d.iter().map(Text::as_str)));
        }
        if let Some(n) = &self.notes {
            o.insert(String::from("notes"), Json::str(n.as_str()));
        }
        o
    }
}

/// Changes to the job's working agreements: retire these texts, then adopt those (at most 20 kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgreementsPatch {
    /// Agreements to add (one already on the list is not added twice).
    pub adopt: Vec<Text>,
    /// Agreements to remove (each must be on the list).
    pub retire: Vec<Text>,
}

/// How an investigation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConclusionOutcome {
    /// A hypothesis is supported (needs a done run, a done replay of it in another role, and a done
    /// review of one of them).
    Resolved,
    /// No hypothesis is supported.
    Inconclusive,
    /// The investigation was stopped.
    Stopped,
}

impl ConclusionOutcome {
    /// The spelling in a checkpoint.
    pub fn as_str(self) -> &'static str {
        match self {
            ConclusionOutcome::Resolved => "resolved",
            ConclusionOutcome::Inconclusive => "inconclusive",
            ConclusionOutcome::Stopped => "stopped",
        }
    }
}

/// The job's conclusion, sent by the unit that may conclude (`concludes: true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    /// How it ended.
    pub outcome: ConclusionOutcome,
    /// The evidence.
    pub evidence: Vec<Text>,
    /// The hypothesis the evidence supports (required when resolved).
    pub supported: Option<Text>,
}

/// A unit added to the plan by a clock-out (it starts `todo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// Its id, new to the plan.
    pub id: UnitId,
    /// What it is.
    pub title: Text,
    /// Its role (declared in `job.roles` when the job has roles).
    pub role: Role,
    /// Its brief: a regular file below the repository root, given relative to it.
    pub brief_path: Text,
    /// The units it waits for; `None`: the unit clocked out.
    pub depends_on: Option<Vec<UnitId>>,
    /// The repository-relative paths it writes.
    pub touches: Option<Vec<String>>,
    /// Its verify command; `None`: the clocked-out unit's.
    pub verify: Option<Text>,
}

impl FollowUp {
    fn to_json(&self) -> Json {
        let mut o = crate::json::object([
            ("id", Json::str(self.id.as_str())),
            ("title", Json::str(self.title.as_str())),
            ("role", Json::str(self.role.as_str())),
            ("brief_path", Json::str(self.brief_path.as_str())),
        ]);
        if let Some(d) = &self.depends_on {
            o.insert(
                String::from("depends_on"),
                Json::strings(d.iter().map(UnitId::as_str)),
            );
        }
        if let Some(t) = &self.touches {
            o.insert(String::from("touches"), Json::strings(t));
        }
        if let Some(v) = &self.verify {
            o.insert(String::from("verify"), Json::str(v.as_str()));
        }
        Json::Object(o)
    }
}

/// A clock-out: the end of one unit, with its new status, its history entry and what it cost. Its
/// required parts are the arguments of [`ClockOut::new`]; the rest are options. The clock-out's gates
/// judge it as they judge the MCP tool's arguments, so it can still be refused for what only the
/// checkpoint can tell (the unit is not the cursor, the model is not allowed, …).
///
/// ```
/// use std::time::Duration;
/// use shiftwork_core::model::{HistoryEntry, Text, UnitId, UnitStatus};
/// use shiftwork_core::{Accounting, ClockOut};
///
/// let lexer = UnitId::new("lexer").unwrap();
/// let out = ClockOut::new(
///     ".shiftwork/checkpoint.json",
///     lexer.clone(),
///     UnitStatus::Done,
///     HistoryEntry::new(lexer, Text::new("lexer written").unwrap()),
/// )
/// .with_accounting(Accounting::new(41_250, Duration::from_secs(95)));
/// assert_eq!(out.unit().as_str(), "lexer");
/// assert_eq!(out.to_arguments().status, "done");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClockOut {
    checkpoint: PathBuf,
    unit: UnitId,
    status: UnitStatus,
    history: HistoryEntry,
    handoff: HandoffPatch,
    accounting: Option<Accounting>,
    agent: Option<AgentId>,
    agreements: Option<AgreementsPatch>,
    conclusion: Option<Conclusion>,
    follow_ups: Option<Vec<FollowUp>>,
}

impl ClockOut {
    /// The clock-out of `unit` of the checkpoint at `checkpoint`, with its new `status` and the entry
    /// pushed onto the history ring.
    pub fn new(
        checkpoint: impl Into<PathBuf>,
        unit: UnitId,
        status: UnitStatus,
        history: HistoryEntry,
    ) -> ClockOut {
        ClockOut {
            checkpoint: checkpoint.into(),
            unit,
            status,
            history,
            handoff: HandoffPatch::default(),
            accounting: None,
            agent: None,
            agreements: None,
            conclusion: None,
            follow_ups: None,
        }
    }

    /// This clock-out changing the handoff.
    pub fn with_handoff(mut self, patch: HandoffPatch) -> ClockOut {
        self.handoff = patch;
        self
    }

    /// This clock-out with its cost.
    pub fn with_accounting(mut self, accounting: Accounting) -> ClockOut {
        self.accounting = Some(accounting);
        self
    }

    /// This clock-out naming the agent that did the unit (written on the accounting line).
    pub fn with_agent(mut self, agent: AgentId) -> ClockOut {
        self.agent = Some(agent);
        self
    }

    /// This clock-out changing the job's agreements.
    pub fn with_agreements(mut self, patch: AgreementsPatch) -> ClockOut {
        self.agreements = Some(patch);
        self
    }

    /// This clock-out sending the job's conclusion.
    pub fn with_conclusion(mut self, conclusion: Conclusion) -> ClockOut {
        self.conclusion = Some(conclusion);
        self
    }

    /// This clock-out adding units to the plan.
    pub fn with_follow_ups(mut self, follow_ups: Vec<FollowUp>) -> ClockOut {
        self.follow_ups = Some(follow_ups);
        self
    }

    /// The checkpoint's path.
    pub fn checkpoint(&self) -> &Path {
        &self.checkpoint
    }

    /// The unit clocked out.
    pub fn unit(&self) -> &UnitId {
        &self.unit
    }

    /// Its new status.
    pub fn status(&self) -> UnitStatus {
        self.status
    }

    /// The clock-out as the MCP tool's arguments, which the gates judge.
    pub fn to_arguments(&self) -> ClockOutArguments {
        let mut args = ClockOutArguments::new(
            &self.checkpoint,
            self.unit.as_str(),
            self.status.as_str(),
            self.handoff.to_object(),
            self.history.to_object(),
        );
        args.accounting = self.accounting.as_ref().map(Accounting::to_json);
        args.agent_id = self.agent.as_ref().map(|a| Json::str(a.as_str()));
        args.agreements = self.agreements.as_ref().map(|a| {
            let mut o = Object::default();
            if !a.adopt.is_empty() {
                o.insert(
                    String::from("adopt"),
                    Json::strings(a.adopt.iter().map(Text::as_str)),
                );
            }
            if !a.retire.is_empty() {
                o.insert(
                    String::from("retire"),
                    Json::strings(a.retire.iter().map(Text::as_str)),
                );
            }
            Json::Object(o)
        });
        args.conclusion = self.conclusion.as_ref().map(|c| {
            let mut o = crate::json::object([
                ("outcome", Json::str(c.outcome.as_str())),
                ("evidence", Json::strings(c.evidence.iter().map(Text::as_str))),
            ]);
            if let Some(s) = &c.supported {
                o.insert(String::from("supported"), Json::str(s.as_str()));
            }
            Json::Object(o)
        });
        args.follow_ups = self
            .follow_ups
            .as_ref()
            .map(|f| Json::Array(f.iter().map(FollowUp::to_json).collect()));
        args
    }
}

impl ClockOutArguments {
    /// These arguments for a caller whose identity a server established (an authenticated request):
    /// an absent or null `agent_id` becomes `agent`, and one naming another agent is refused
    /// ([`ShiftworkRefusal::IdentityMismatch`]: an agent acts only as itself) before anything is read.
    ///
    /// ```
    /// use shiftwork_core::{AgentId, ClockOutArguments, ShiftworkRefusal};
    /// use shiftwork_core::json::{Json, Object};
    /// let args = ClockOutArguments::new("cp.json", "U1", "done", Object::default(), Object::default());
    /// let alice = AgentId::new("alice").unwrap();
    /// let mine = args.clone().acting_as(&alice).unwrap();
    /// assert_eq!(mine.agent_id, Some(Json::str("alice")));
    /// let mut theirs = args;
    /// theirs.agent_id = Some(Json::str("bob"));
    /// let refused = theirs.acting_as(&alice).unwrap_err();
    /// assert_eq!(refused.to_string(), "agent_id names bob, but this caller authenticated as alice: an agent acts only as itself.");
    /// assert_eq!(refused.code(), "IDENTITY_MISMATCH");
    /// ```
    pub fn acting_as(mut self, agent: &AgentId) -> Result<ClockOutArguments, ShiftworkRefusal> {
        match &self.agent_id {
            None | Some(Json::Null) => {
                self.agent_id = Some(Json::str(agent.as_str()));
                Ok(self)
            }
            Some(Json::String(given)) if given == agent.as_str() => Ok(self),
            Some(other) => Err(ShiftworkRefusal::IdentityMismatch {
                given: shiftwork_seams::echo::clip_echo(&match other {
                    Json::String(given) => given.clone(),
                    value => crate::json::to_compact_text(value),
                }),
                authenticated: agent.clone(),
            }),
        }
    }
}

/// The family's agent-id grammar ([`shiftwork_seams::agent::check_agent_id`]).
pub(crate) fn check_agent_id(text: &str) -> Result<(), shiftwork_seams::agent::AgentIdError> {
    shiftwork_seams::agent::check_agent_id(text)
}
