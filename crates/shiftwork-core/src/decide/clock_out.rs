//! Judging a clock-out on what was gathered: its checks in bantamkit's order, the change of the
//! document, the cursor rule and the accounting line. The result is a [`Commit`] — the bytes the
//! shell writes — or the first check's [`ShiftworkRefusal`].
//!
//! The checks, in order (before them the lock is taken and the checkpoint read; after them the
//! ledger line and the checkpoint are written and the answer given):
//!
//! 1. the unit is in the plan;
//! 2. it is the cursor, or was briefed since its last clock-out;
//! 3. the model: a role that `job.roles` names allows only its models;
//! 4. the accounting line's shape, 5. its keys (none of the runtime's own), 6. zero tokens under a
//!    budget only as an estimate;
//! 7. the shapes of `agent_id` (the family's agent-id grammar), `agreements`, `conclusion` and
//!    `follow_ups`;
//! 8. a conclusion only from a concluding unit, and a resolved one with its evidence;
//! 9. a run unit clocked out done with its run output;
//! 10. the agreements to retire are on the list, and at most 20 remain;
//! 11. the follow-ups: new ids, briefs that are files, known dependencies, no cycle, declared roles;
//! 12. the change of the document, then its validation against the schema.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::json::{self, Json, Object};
use crate::ledger::LedgerSummary;
use crate::model::{UnitId, UnitStatus};
use crate::planner::{self, PlanNode, Priority};
use crate::records;
use crate::refusal::{ShiftworkRefusal, Written};
use crate::results::ClockedOut;
use crate::schema::{self, ArgumentShape};
use crate::view::{Checkpoint, Unit, is_zero};

/// The keys an accounting line may not set, in the order the sentence names them.
pub const RESERVED_KEYS: [&str; 6] = ["unit", "role", "status", "ts", "event", "agent_id"];
/// The most agreements `job.agreements` keeps.
pub const MAX_AGREEMENTS: usize = 20;
/// The history ring's size.
pub const HISTORY_RING: usize = 5;
/// Attempts kept per unit.
pub const ATTEMPTS_KEPT: usize = 3;

/// The clock-out's arguments under their former name.
#[deprecated(
    since = "0.2.0",
    note = "renamed to `ClockOutArguments` (the JSON arguments of the tool); a program builds the typed `shiftwork_core::ClockOut`"
)]
pub type ClockOut = ClockOutArguments;

/// The arguments of the clock-out as an MCP client sends them: JSON values, each judged by the gate
/// that judges it, in the tool's order, so that a server answers any of them — a status outside the
/// five, an accounting line of the wrong shape — with bantamkit 0.36.2's sentence. A program builds a
/// typed [`crate::ClockOut`] instead, which converts into this ([`crate::ClockOut::to_arguments`]).
///
/// ```
/// use shiftwork_core::ClockOutArguments;
/// use shiftwork_core::json::{self, Json};
/// let mut args = ClockOutArguments::new(
///     ".shiftwork/checkpoint.json",
///     "lexer",
///     "done",
///     json::Object::default(),
///     json::object([("unit", Json::str("lexer")), ("outcome", Json::str("done"))]),
/// );
/// args.accounting = Some(json::parse(r#"{"tokens": 41250, "duration_ms": 95000}"#).unwrap());
/// assert_eq!(args.unit_id, "lexer");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClockOutArguments {
    /// The checkpoint path.
    pub checkpoint: PathBuf,
    /// The unit being clocked out.
    pub unit_id: String,
    /// Its new status (any string; the whole-document validation judges it).
    pub status: String,
    /// Shallow-merged into `handoff`.
    pub handoff_patch: Object,
    /// Pushed onto the history ring.
    pub history_entry: Object,
    /// The cost line, or `None` for null.
    pub accounting: Option<Json>,
    /// The agent's id, or `None` for null.
    pub agent_id: Option<Json>,
    /// `{adopt?, retire?}`, or `None`.
    pub agreements: Option<Json>,
    /// `{outcome, evidence, supported?}`, or `None`.
    pub conclusion: Option<Json>,
    /// New units, or `None`.
    pub follow_ups: Option<Json>,
}

impl ClockOutArguments {
    /// The five required arguments; the optional ones are `None`.
    pub fn new(
        checkpoint: impl AsRef<Path>,
        unit_id: impl Into<String>,
        status: impl Into<String>,
        handoff_patch: Object,
        history_entry: Object,
    ) -> ClockOutArguments {
        ClockOutArguments {
            checkpoint: checkpoint.as_ref().to_path_buf(),
            unit_id: unit_id.into(),
            status: status.into(),
            handoff_patch,
            history_entry,
            accounting: None,
            agent_id: None,
            agreements: None,
            conclusion: None,
            follow_ups: None,
        }
    }
}

/// What the shell gathered for the gates besides the checkpoint and the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    /// The ledger path as printed, for the answer's `log`.
    pub log: String,
    /// For each follow-up `brief_path` of [`brief_paths`]: whether it names a regular file below the
    /// repo root (the follow-ups check).
    pub brief_files: HashMap<String, bool>,
    /// About how long the new checkpoint will be, in bytes (the file read): where its text starts.
    pub size_hint: usize,
}

/// What a clock-out that passed every check writes and answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The new checkpoint's bytes.
    pub document: String,
    /// The accounting line, without its LF.
    pub line: String,
    /// The uncommitted marker written if the commit fails after the line could not be withdrawn.
    pub marker: String,
    /// The answer once committed.
    pub answer: ClockedOut,
}

/// A follow-up's `brief_path` that may be looked at: relative and without `..`.
pub fn brief_path_is_inside(path: &str) -> bool {
    !path.starts_with('/') && !path.split('/').any(|s| s == "..")
}

/// The follow-up `brief_path`s the shell stats for the follow-ups check: those of `follow_ups` items that may be
/// looked at ([`brief_path_is_inside`]).
pub fn brief_paths(args: &ClockOutArguments) -> Vec<&str> {
    args.follow_ups
        .as_ref()
        .and_then(Json::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.get("brief_path").and_then(Json::as_str))
                .filter(|p| brief_path_is_inside(p))
                .collect()
        })
        .unwrap_or_default()
}

/// The checks of a clock-out (see the module's list) on the checkpoint `doc` (read and validated under the lock), the
/// ledger pass of its units, what was gathered, the arguments and the time: the commit, or the first
/// refusal. Nothing here touches a file.
pub fn clock_out(
    mut doc: Json,
    ledger: &LedgerSummary,
    gathered: &Gathered,
    args: &ClockOutArguments,
    now: DateTime<Utc>,
) -> Result<Commit, ShiftworkRefusal> {
    let id = args.unit_id.as_str();
    let cp = Checkpoint::new(&doc);
    // Gate 2.
    let Some(unit) = cp.unit(id) else {
        return Err(ShiftworkRefusal::NotInPlan { unit: id.to_owned() });
    };
    let index = unit.index();
    // Gate 3.
    let briefed = ledger.briefed.get(index).copied().unwrap_or(false);
    if id != cp.cursor() && !briefed {
        let (unit, cursor) = (UnitId::read(id), UnitId::read(cp.cursor()));
        return Err(if unit_is_terminal(&cp, index) {
            ShiftworkRefusal::AlreadyFinished {
                unit,
                status: unit_status(&cp, index),
                cursor,
            }
        } else {
            ShiftworkRefusal::NotCursor { unit, cursor }
        });
    }
    let role = unit.role_str().to_owned();
    let accounting = args.accounting.as_ref().filter(|a| !a.is_null());
    // Gate 4.
    model_gate(&cp, id, &role, accounting)?;
    if let Some(line) = accounting {
        accounting_gates(&cp, id, &role, line)?;
    }
    // Gate 8.
    let shapes = [
        (ArgumentShape::AgentId, &args.agent_id),
        (ArgumentShape::Agreements, &args.agreements),
        (ArgumentShape::Conclusion, &args.conclusion),
        (ArgumentShape::FollowUps, &args.follow_ups),
    ];
    for (shape, value) in shapes {
        if let Some(v) = value.as_ref().filter(|v| !v.is_null()) {
            let refused = |violation| ShiftworkRefusal::ArgumentShape {
                unit: id.to_owned(),
                role: role.clone(),
                argument: shape.argument(),
                violation,
            };
            // An agent id is judged by the family's one grammar (not the 0.38 descriptions' pattern,
            // which refuses `bob.smith`): an id both refuse keeps the pattern's sentence, one only the
            // grammar refuses (`-x`) gets the grammar's.
            if shape == ArgumentShape::AgentId
                && let Some(text) = v.as_str()
            {
                if let Err(error) = crate::request::check_agent_id(text) {
                    schema::validate_argument(shape, v).map_err(refused)?;
                    return Err(ShiftworkRefusal::AgentIdRefused {
                        unit: id.to_owned(),
                        role: role.clone(),
                        error,
                    });
                }
                continue;
            }
            schema::validate_argument(shape, v).map_err(refused)?;
        }
    }
    let conclusion = args.conclusion.as_ref().filter(|v| !v.is_null());
    let agreements = args.agreements.as_ref().filter(|v| !v.is_null());
    let follow_ups = args.follow_ups.as_ref().filter(|v| !v.is_null());
    // Gate 9.
    if let Some(c) = conclusion {
        conclusion_gate(&cp, &unit, &args.status, c)?;
    }
    // Gate 10.
    if unit.is_run() && args.status == "done" && !has_run_output(&args.history_entry) {
        return Err(ShiftworkRefusal::NoRunOutput { unit: id.to_owned() });
    }
    // Gate 11.
    let agreement_changes = match agreements {
        Some(a) => agreements_gate(&cp, a)?,
        None => None,
    };
    // Gate 12.
    let new_units = match follow_ups {
        Some(f) => follow_ups_gate(&cp, &unit, f, &gathered.brief_files)?,
        None => Vec::new(),
    };
    // Gate 13.
    let conclusion = conclusion.cloned();
    mutate(&mut doc, index, args, agreement_changes, conclusion, new_units);
    // Gate 14.
    schema::validate_to_write(&doc).map_err(ShiftworkRefusal::RefusedToWrite)?;
    // The bytes of gates 15–16 and the answer of gate 17, each within what its reader reads (issue 27
    // item 6): a checkpoint no reader takes would leave every later call refused.
    let ts = records::timestamp(now);
    let line = records::accounting_line(
        &ts,
        id,
        &role,
        &args.status,
        accounting,
        args.agent_id.as_ref(),
        briefed,
    );
    let marker = records::uncommitted_line(&role, &ts, id);
    for written in [&line, &marker] {
        records::check_line(written)?;
    }
    let limit = crate::checkpoint::MAX_CHECKPOINT_BYTES;
    let document = json::to_checkpoint_text_within(&doc, limit as usize, gathered.size_hint).ok_or(
        ShiftworkRefusal::TooLargeToWrite {
            what: Written::Checkpoint,
            size: None,
            limit,
        },
    )?;
    // Gate 14 validated the unit's new status against the schema's five statuses.
    #[allow(clippy::expect_used)]
    let status = UnitStatus::parse(&args.status)
        .expect("gate 14 validated the unit's new status against the schema's five statuses");
    Ok(Commit {
        document,
        line,
        marker,
        answer: ClockedOut {
            unit: UnitId::read(id),
            status,
            cursor: UnitId::read(Checkpoint::new(&doc).cursor()),
            log: gathered.log.clone(),
        },
    })
}

/// Whether the unit at `index` is terminal, as read (before this clock-out changes it).
fn unit_is_terminal(cp: &Checkpoint<'_>, index: usize) -> bool {
    cp.unit_at(index).is_some_and(|u| u.is_terminal())
}

/// The status of the unit at `index`, as written.
fn unit_status(cp: &Checkpoint<'_>, index: usize) -> UnitStatus {
    cp.unit_at(index).map_or(UnitStatus::Done, |u| u.status())
}

/// The model check: a role `job.roles` names allows only its models.
fn model_gate(
    cp: &Checkpoint<'_>,
    id: &str,
    role: &str,
    accounting: Option<&Json>,
) -> Result<(), ShiftworkRefusal> {
    let Some(allowed) = cp.role_models(role) else {
        return Ok(());
    };
    let Some(names) = allowed
        .as_array()
        .and_then(|a| a.iter().map(Json::as_str).collect::<Option<Vec<&str>>>())
    else {
        return Err(ShiftworkRefusal::RolesNotAList {
            unit: id.to_owned(),
            role: role.to_owned(),
        });
    };
    let model = accounting.and_then(|a| a.get("model")).filter(|m| !m.is_null());
    let allowed = || names.iter().map(|n| (*n).to_owned()).collect();
    match model {
        None => Err(ShiftworkRefusal::NoModel {
            unit: id.to_owned(),
            role: role.to_owned(),
            allowed: allowed(),
        }),
        Some(Json::String(m)) if names.contains(&m.as_str()) => Ok(()),
        Some(m) => Err(ShiftworkRefusal::ModelNotAllowed {
            unit: id.to_owned(),
            role: role.to_owned(),
            model: Box::new(m.clone()),
            allowed: allowed(),
        }),
    }
}

/// The checks of a non-null accounting line: its shape, the runtime's own keys, zero
/// tokens under a budget.
fn accounting_gates(cp: &Checkpoint<'_>, id: &str, role: &str, line: &Json) -> Result<(), ShiftworkRefusal> {
    schema::validate_argument(ArgumentShape::Accounting, line).map_err(|violation| {
        ShiftworkRefusal::AccountingShape {
            unit: id.to_owned(),
            role: role.to_owned(),
            violation,
        }
    })?;
    let keys: Vec<&'static str> = RESERVED_KEYS
        .iter()
        .copied()
        .filter(|k| line.get(k).is_some())
        .collect();
    if !keys.is_empty() {
        return Err(ShiftworkRefusal::ReservedKeys {
            unit: id.to_owned(),
            role: role.to_owned(),
            keys,
        });
    }
    let zero = matches!(line.get("tokens"), Some(Json::Number(n)) if is_zero(n));
    if cp.budget().is_some() && zero && line.get("estimate") != Some(&Json::Bool(true)) {
        return Err(ShiftworkRefusal::ZeroTokens {
            unit: id.to_owned(),
            role: role.to_owned(),
        });
    }
    Ok(())
}

/// Whether `history_entry.produced` has an entry of kind `run-output`.
fn has_run_output(history_entry: &Object) -> bool {
    history_entry
        .get("produced")
        .and_then(Json::as_array)
        .is_some_and(|p| {
            p.iter()
                .any(|e| e.get("kind").and_then(Json::as_str) == Some("run-output"))
        })
}

/// The conclusion check, judged on the document with this clock-out's status change applied.
fn conclusion_gate(
    cp: &Checkpoint<'_>,
    unit: &Unit<'_>,
    status: &str,
    conclusion: &Json,
) -> Result<(), ShiftworkRefusal> {
    if !unit.concludes() {
        return Err(ShiftworkRefusal::NotConcluder {
            unit: unit.id().to_owned(),
        });
    }
    if conclusion.get("outcome").and_then(Json::as_str) != Some("resolved") {
        return Ok(());
    }
    let Some(h) = conclusion.get("supported").and_then(Json::as_str) else {
        return Err(ShiftworkRefusal::ResolvedWithoutSupported);
    };
    let done = |u: &Unit<'_>| {
        if u.index() == unit.index() {
            status == "done"
        } else {
            u.status_str() == "done"
        }
    };
    let runs: Vec<Unit<'_>> = cp.units().filter(|u| done(u) && u.tests() == Some(h)).collect();
    let Some(first_run) = runs.first() else {
        return Err(ShiftworkRefusal::NoDoneRun {
            hypothesis: h.to_owned(),
        });
    };
    let mut pairs = Vec::new();
    for run in &runs {
        for replay in cp.units() {
            if done(&replay) && replay.replay_of() == Some(run.id()) && replay.role_str() != run.role_str() {
                pairs.push((run.id(), replay.id()));
            }
        }
    }
    let Some(first_pair) = pairs.first() else {
        return Err(ShiftworkRefusal::NoReplay {
            hypothesis: h.to_owned(),
            run: first_run.id().to_owned(),
        });
    };
    let reviewed = pairs.iter().any(|(run, replay)| {
        cp.units()
            .any(|reviewer| done(&reviewer) && reviewer.reviews().any(|r| r == *run || r == *replay))
    });
    if !reviewed {
        return Err(ShiftworkRefusal::NoReview {
            hypothesis: h.to_owned(),
            run: first_pair.0.to_owned(),
            replay: first_pair.1.to_owned(),
        });
    }
    Ok(())
}

/// The changes an `agreements` argument makes: the new list, the retired and the adopted texts.
#[derive(Debug, Clone, Default)]
struct AgreementChanges {
    list: Vec<String>,
    retired: Vec<String>,
    adopted: Vec<String>,
}

fn texts<'a>(patch: &'a Json, key: &str) -> impl Iterator<Item = &'a str> + use<'a> {
    patch
        .get(key)
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(Json::as_str)
}

/// The agreements check: applies `retire` then `adopt` to a copy of `job.agreements`.
fn agreements_gate(cp: &Checkpoint<'_>, patch: &Json) -> Result<Option<AgreementChanges>, ShiftworkRefusal> {
    let mut list: Vec<String> = cp.agreement_texts().into_iter().map(str::to_owned).collect();
    let mut changes = AgreementChanges::default();
    for text in texts(patch, "retire") {
        match list.iter().position(|a| a == text) {
            Some(i) => {
                list.remove(i);
                changes.retired.push(text.to_owned());
            }
            None => {
                return Err(ShiftworkRefusal::RetireUnknown {
                    agreement: text.to_owned(),
                });
            }
        }
    }
    for text in texts(patch, "adopt") {
        if !list.iter().any(|a| a == text) {
            list.push(text.to_owned());
            changes.adopted.push(text.to_owned());
        }
    }
    if list.len() > MAX_AGREEMENTS {
        return Err(ShiftworkRefusal::TooManyAgreements { count: list.len() });
    }
    if changes.retired.is_empty() && changes.adopted.is_empty() {
        return Ok(None);
    }
    changes.list = list;
    Ok(Some(changes))
}

/// The follow-ups check: the follow-up units to append, or the first refusal.
fn follow_ups_gate(
    cp: &Checkpoint<'_>,
    unit: &Unit<'_>,
    items: &Json,
    brief_files: &HashMap<String, bool>,
) -> Result<Vec<Json>, ShiftworkRefusal> {
    let items: &[Json] = items.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let field = |item: &Json, key: &str| item.get(key).and_then(Json::as_str).unwrap_or("").to_owned();
    let existing: HashSet<&str> = cp.units().map(|u| u.id()).collect();
    // 1. Duplicates.
    let mut seen = HashSet::new();
    for item in items {
        let fid = item.get("id").and_then(Json::as_str).unwrap_or("");
        if existing.contains(fid) || !seen.insert(fid) {
            return Err(ShiftworkRefusal::DuplicateId { id: fid.to_owned() });
        }
    }
    // 2. Brief files under the repo root.
    for item in items {
        let brief = item.get("brief_path").and_then(Json::as_str).unwrap_or("");
        let is_file = brief_path_is_inside(brief) && brief_files.get(brief).copied().unwrap_or(false);
        if !is_file {
            return Err(ShiftworkRefusal::FollowUpBriefNotAFile {
                id: field(item, "id"),
                path: brief.to_owned(),
            });
        }
    }
    // 3. Dependencies: an item without `depends_on` depends on the unit clocked out.
    let deps_of = |item: &Json| -> Vec<String> {
        match item.get("depends_on") {
            Some(_) => texts(item, "depends_on").map(str::to_owned).collect(),
            None => vec![unit.id().to_owned()],
        }
    };
    let all_deps: Vec<Vec<String>> = items.iter().map(deps_of).collect();
    for (item, deps) in items.iter().zip(&all_deps) {
        for dep in deps {
            if !existing.contains(dep.as_str()) && !seen.contains(dep.as_str()) {
                return Err(ShiftworkRefusal::UnknownDependency {
                    node: field(item, "id"),
                    dependency: dep.clone(),
                });
            }
        }
    }
    // 4. Cycles among the items (existing units count as dependency-free).
    let nodes: Vec<PlanNode<'_>> = items
        .iter()
        .zip(all_deps.iter())
        .map(|(item, deps)| PlanNode {
            id: item.get("id").and_then(Json::as_str).unwrap_or(""),
            depends_on: deps
                .iter()
                .map(String::as_str)
                .filter(|d| seen.contains(d))
                .collect(),
            priority: Priority::default(),
            touches: None,
        })
        .collect();
    planner::plan(&nodes)?;
    // 5. Roles.
    for item in items {
        let r = item.get("role").and_then(Json::as_str).unwrap_or("");
        if cp.declares_role(r) == Some(false) {
            return Err(ShiftworkRefusal::FollowUpRoleUndeclared {
                id: field(item, "id"),
                role: r.to_owned(),
            });
        }
    }
    let verify = unit.verify();
    Ok(items
        .iter()
        .zip(all_deps)
        .map(|(item, deps)| {
            let mut u = Object::default();
            u.insert(String::from("id"), Json::String(field(item, "id")));
            u.insert(String::from("title"), Json::String(field(item, "title")));
            u.insert(
                String::from("brief_path"),
                Json::String(field(item, "brief_path")),
            );
            u.insert(String::from("status"), Json::str("todo"));
            u.insert(String::from("role"), Json::String(field(item, "role")));
            u.insert(String::from("depends_on"), Json::strings(&deps));
            u.insert(
                String::from("verify"),
                item.get("verify").cloned().unwrap_or_else(|| Json::str(verify)),
            );
            if let Some(t) = item.get("touches") {
                u.insert(String::from("touches"), t.clone());
            }
            Json::Object(u)
        })
        .collect())
}

/// The change of the document, in bantamkit's order: the unit's status and attempts, the
/// agreements, the conclusion, the follow-ups, the cursor, the handoff, the history ring.
fn mutate(
    doc: &mut Json,
    index: usize,
    args: &ClockOutArguments,
    agreements: Option<AgreementChanges>,
    conclusion: Option<Json>,
    new_units: Vec<Json>,
) {
    let unit_id = args.unit_id.as_str();
    if let Some(root) = doc.as_object_mut() {
        apply_unit_and_job(root, index, args, agreements, conclusion, new_units);
    }
    // 6. The cursor rule (§11) on the document as changed so far.
    let new_cursor = next_cursor(doc, unit_id);
    let Some(root) = doc.as_object_mut() else {
        return;
    };
    if let Some(Json::Object(plan)) = root.get_mut("plan") {
        plan.insert(String::from("cursor"), Json::String(new_cursor));
    }
    // 7. Handoff patch.
    if let Some(Json::Object(handoff)) = root.get_mut("handoff") {
        for (k, v) in &args.handoff_patch {
            handoff.insert(k.clone(), v.clone());
        }
    }
    // 8. History ring.
    if let Some(Json::Array(history)) = root.get_mut("history") {
        history.push(Json::Object(args.history_entry.clone()));
        let excess = history.len().saturating_sub(HISTORY_RING);
        history.drain(..excess);
    }
}

/// The first steps of the change: status, attempts, agreements, conclusion, follow-ups.
fn apply_unit_and_job(
    root: &mut Object,
    index: usize,
    args: &ClockOutArguments,
    agreements: Option<AgreementChanges>,
    conclusion: Option<Json>,
    new_units: Vec<Json>,
) {
    let unit_id = args.unit_id.as_str();
    if let Some(Json::Object(unit)) = units_mut(root).and_then(|u| u.get_mut(index)) {
        unit.insert(String::from("status"), Json::str(args.status.as_str()));
        let mut attempt = Object::default();
        attempt.insert(String::from("status"), Json::str(args.status.as_str()));
        for key in ["outcome", "notes", "produced"] {
            if let Some(v) = args.history_entry.get(key) {
                attempt.insert(key.to_owned(), v.clone());
            }
        }
        let attempts = unit
            .entry(String::from("attempts"))
            .or_insert_with(|| Json::Array(Vec::new()));
        if let Json::Array(list) = attempts {
            list.push(Json::Object(attempt));
            let excess = list.len().saturating_sub(ATTEMPTS_KEPT);
            list.drain(..excess);
        } else {
            *attempts = Json::Array(vec![Json::Object(attempt)]);
        }
    }
    if let Some(changes) = agreements {
        if let Some(Json::Object(job)) = root.get_mut("job") {
            job.insert(String::from("agreements"), Json::strings(&changes.list));
        }
        if let Some(Json::Array(retro)) = root.get_mut("retro") {
            let record = |change: &str, text: &str| {
                Json::Object(json::object([
                    ("trigger", Json::String(format!("unit {unit_id} clocked out"))),
                    ("patch_applied_to", Json::str("job.agreements")),
                    ("change", Json::str(change)),
                    ("agreement", Json::str(text)),
                ]))
            };
            retro.extend(changes.retired.iter().map(|t| record("retire", t)));
            retro.extend(changes.adopted.iter().map(|t| record("adopt", t)));
        }
    }
    if let Some(c) = conclusion
        && let Some(Json::Object(job)) = root.get_mut("job")
    {
        job.insert(String::from("conclusion"), c);
    }
    if let Some(list) = units_mut(root) {
        list.extend(new_units);
    }
}

/// `plan.units`, to change.
fn units_mut(root: &mut Object) -> Option<&mut Vec<Json>> {
    root.get_mut("plan")?
        .as_object_mut()?
        .get_mut("units")?
        .as_array_mut()
}

/// The cursor rule: `ready[0]`, else the first non-terminal unit, else the unit itself.
///
/// ```
/// let doc = shiftwork_core::json::parse(r#"{"plan": {"cursor": "A", "units": [{"id": "A", "status": "done", "depends_on": []}, {"id": "B", "status": "todo", "depends_on": ["C"]}, {"id": "C", "status": "todo", "depends_on": ["B"]}]}}"#).unwrap();
/// assert_eq!(shiftwork_core::next_cursor(&doc, "A"), "B");
/// ```
pub fn next_cursor(doc: &Json, unit_id: &str) -> String {
    let cp = Checkpoint::new(doc);
    if let Ok(view) = super::plan::batch_view(&cp)
        && let Some(first) = view.ready().first()
    {
        return (*first).to_owned();
    }
    cp.units()
        .find(|u| !u.is_terminal())
        .map(|u| u.id().to_owned())
        .unwrap_or_else(|| unit_id.to_owned())
}
