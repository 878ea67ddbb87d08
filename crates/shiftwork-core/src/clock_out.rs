//! `shiftwork_clock_out` (§10): the gates in their contractual order, the mutation, the accounting
//! line and the durable commit. Every refusal writes nothing.

use std::collections::HashSet;
use std::path::Path;

use shiftwork_seams::FileKind;

use crate::answer::{self, refusal};
use crate::checkpoint::{self, is_terminal, str_of, strs_of, units};
use crate::commit::{self, Commit};
use crate::env::Env;
use crate::error::Error;
use crate::json::{self, Json, Number, Object, python_str};
use crate::ledger;
use crate::lock::{self, Acquired};
use crate::paths::{self, CheckpointPaths};
use crate::planner::{self, PlanNode, Priority};
use crate::schema::{self, ArgumentShape};

/// The keys an accounting line may not set (SW-81), in the order the sentence names them.
pub const RESERVED_KEYS: [&str; 6] = ["unit", "role", "status", "ts", "event", "agent_id"];
/// The most agreements `job.agreements` keeps (SW-122).
pub const MAX_AGREEMENTS: usize = 20;
/// The ring's size (SW-83 step 8).
pub const HISTORY_RING: usize = 5;
/// Attempts kept per unit (SW-115).
pub const ATTEMPTS_KEPT: usize = 3;

/// The arguments of `shiftwork_clock_out` (SW-76), decoded by the caller.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClockOut {
    /// The checkpoint path.
    pub checkpoint: String,
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

/// Runs `shiftwork_clock_out` (§10): gates 0–17 in order.
pub fn clock_out(env: &Env, args: &ClockOut) -> Json {
    let paths = CheckpointPaths::new(&args.checkpoint);
    let target = paths::lock_target(env.fs.as_ref(), &paths.given);
    // Gate 0.
    let mut acquired = lock::acquire(env, &target);
    if let Acquired::TimedOut(holder) = &acquired {
        return refusal(&locked_reason(holder));
    }
    let result = judge_and_write(env, args, &paths, &target, &mut acquired);
    if let Acquired::Held(lock) = acquired {
        lock.release();
    }
    match result {
        Ok(answer) => answer,
        Err(reason) => refusal(&reason),
    }
}

/// Gate 0's refusal (SW-100), naming who holds the lock, since when, and the file to remove should
/// that holder be gone (issue 12 item 13): `checkpoint locked by another clock-out, nothing written:
/// <lock path> (held by process <pid> on host <host> since <ts>; if that holder is gone, the lock is
/// stale: remove <lock path>)`.
fn locked_reason(holder: &crate::lock::LockHolder) -> String {
    let path = shiftwork_seams::echo::clip_echo(&holder.path.to_string_lossy());
    let mut who = match holder.pid {
        Some(pid) => format!("process {pid}"),
        None => String::from("an unknown process"),
    };
    if let Some(host) = &holder.host {
        who.push_str(&format!(" on host {}", shiftwork_seams::echo::clip_echo(host)));
    }
    if let Some(since) = holder.since {
        who.push_str(&format!(" since {}", ledger::timestamp(since)));
    }
    format!(
        "checkpoint locked by another clock-out, nothing written: {path} (held by {who}; if that holder is gone, the lock is stale: remove {path})"
    )
}

fn judge_and_write(
    env: &Env,
    args: &ClockOut,
    paths: &CheckpointPaths,
    target: &Path,
    acquired: &mut Acquired<'_>,
) -> Result<Json, String> {
    // Gate 1.
    let mut doc = checkpoint::read(env.fs.as_ref(), paths).map_err(|e| e.to_string())?;
    let id = args.unit_id.as_str();
    // Gate 2.
    let Some(index) = units(&doc).iter().position(|u| str_of(u, "id") == id) else {
        return Err(format!("unit {id} is not in the plan"));
    };
    // Gate 3.
    let with_budget = crate::budget::limits(&doc).is_some();
    let ids: Vec<&str> = units(&doc).iter().map(|u| str_of(u, "id")).collect();
    let summary = ledger::scan(env.fs.as_ref(), &paths.ledger, &ids, false);
    let briefed = summary.briefed.get(index).copied().unwrap_or(false);
    let cursor = checkpoint::cursor(&doc).to_owned();
    if id != cursor && !briefed {
        return Err(format!("unit {id} is not the cursor unit {cursor}"));
    }
    let unit = &units(&doc)[index];
    let role = str_of(unit, "role").to_owned();
    let accounting = args.accounting.as_ref().filter(|a| !a.is_null());
    // Gate 4.
    model_gate(&doc, id, &role, accounting)?;
    if let Some(line) = accounting {
        // Gate 5.
        schema::validate_argument(ArgumentShape::Accounting, line).map_err(|v| {
            format!("unit {id} in role {role} reported an accounting line the schema refuses: {v}")
        })?;
        // Gate 6.
        let set: Vec<&str> = RESERVED_KEYS
            .iter()
            .copied()
            .filter(|k| line.get(k).is_some())
            .collect();
        if !set.is_empty() {
            return Err(format!(
                "unit {id} in role {role} reported an accounting line that sets the runtime's own keys: {}",
                set.join(", ")
            ));
        }
        // Gate 7.
        let zero = matches!(line.get("tokens"), Some(Json::Number(n)) if is_zero(n));
        if with_budget && zero && line.get("estimate") != Some(&Json::Bool(true)) {
            return Err(format!(
                "unit {id} in role {role} reported 0 tokens, which job.budget refuses unless the line carries estimate: true"
            ));
        }
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
            schema::validate_argument(shape, v).map_err(|violation| {
                format!(
                    "unit {id} in role {role} sent {} the schema refuses: {violation}",
                    shape.argument()
                )
            })?;
        }
    }
    let conclusion = args.conclusion.as_ref().filter(|v| !v.is_null());
    let agreements = args.agreements.as_ref().filter(|v| !v.is_null());
    let follow_ups = args.follow_ups.as_ref().filter(|v| !v.is_null());
    // Gate 9.
    if let Some(c) = conclusion {
        conclusion_gate(&doc, index, &args.status, c)?;
    }
    // Gate 10.
    if (unit.get("tests").is_some() || unit.get("replay_of").is_some()) && args.status == "done" {
        let has_output = args
            .history_entry
            .get("produced")
            .and_then(Json::as_array)
            .is_some_and(|p| {
                p.iter()
                    .any(|e| e.get("kind").and_then(Json::as_str) == Some("run-output"))
            });
        if !has_output {
            return Err(format!(
                "unit {id} is a run unit clocked out done without a run-output in history_entry.produced"
            ));
        }
    }
    // Gate 11.
    let agreement_changes = match agreements {
        Some(a) => agreements_gate(&doc, a)?,
        None => None,
    };
    // Gate 12.
    let new_units = match follow_ups {
        Some(f) => follow_ups_gate(env, &doc, &args.checkpoint, unit, f)?,
        None => Vec::new(),
    };
    // Gate 13.
    mutate(&mut doc, index, args, agreement_changes, conclusion, new_units);
    // Gate 14.
    schema::validate_checkpoint(&doc).map_err(|v| format!("refused to write: {v}"))?;
    // Gates 15–16.
    let ts = ledger::timestamp(env.clock.now());
    let line = accounting_line(
        &ts,
        id,
        &role,
        &args.status,
        accounting,
        args.agent_id.as_ref(),
        briefed,
    );
    let text = json::to_checkpoint_text(&doc);
    let commit = Commit {
        paths,
        target,
        document: &text,
        line: &line,
        last_byte: summary.last_byte,
        marker: (&role, &ts, id),
    };
    match acquired {
        Acquired::Held(lock) => commit::run(env, lock, &commit)?,
        Acquired::Unavailable(e) => return Err(commit::without_lock(env, &commit, e)),
        Acquired::TimedOut(_) => return Err(String::from("checkpoint locked")),
    }
    // Gate 17.
    let mut out = answer::start("ok");
    out.insert(String::from("unit"), Json::str(id));
    out.insert(String::from("status"), Json::str(args.status.as_str()));
    out.insert(String::from("cursor"), Json::str(checkpoint::cursor(&doc)));
    out.insert(String::from("log"), Json::str(paths.ledger_shown.as_str()));
    Ok(Json::Object(out))
}

fn is_zero(n: &Number) -> bool {
    match n {
        Number::Int(i) => *i == 0,
        Number::BigInt(_) => false,
        Number::Float(f) => *f == 0.0,
    }
}

/// Gate 4, the model gate (SW-79).
fn model_gate(doc: &Json, id: &str, role: &str, accounting: Option<&Json>) -> Result<(), String> {
    let Some(allowed) = doc
        .get("job")
        .and_then(|j| j.get("roles"))
        .and_then(|r| r.get(role))
    else {
        return Ok(());
    };
    let Some(names) = allowed
        .as_array()
        .and_then(|a| a.iter().map(Json::as_str).collect::<Option<Vec<&str>>>())
    else {
        return Err(format!(
            "unit {id} in role {role} cannot clock out: job.roles.{role} is not a list of model identifiers, so it allows no model"
        ));
    };
    let list = names.join(", ");
    let model = accounting.and_then(|a| a.get("model")).filter(|m| !m.is_null());
    match model {
        None => Err(format!(
            "unit {id} in role {role} reported no model, but job.roles.{role} allows only: {list}"
        )),
        Some(Json::String(m)) if names.contains(&m.as_str()) => Ok(()),
        Some(m) => Err(format!(
            "unit {id} in role {role} reported model {}, which job.roles.{role} does not allow: {list}",
            python_str(m)
        )),
    }
}

/// Gate 9 (SW-125, SW-126), judged on the document with this clock-out's status change applied.
fn conclusion_gate(doc: &Json, index: usize, status: &str, conclusion: &Json) -> Result<(), String> {
    let all = units(doc);
    let unit = &all[index];
    let id = str_of(unit, "id");
    if unit.get("concludes") != Some(&Json::Bool(true)) {
        return Err(format!(
            "unit {id} cannot send a conclusion: only a unit with concludes: true may"
        ));
    }
    if str_of(conclusion, "outcome") != "resolved" {
        return Ok(());
    }
    let Some(h) = conclusion.get("supported").and_then(Json::as_str) else {
        return Err(String::from(
            "conclusion resolved needs supported: the hypothesis id its evidence supports",
        ));
    };
    let done = |i: usize, u: &Json| {
        if i == index {
            status == "done"
        } else {
            str_of(u, "status") == "done"
        }
    };
    let runs: Vec<(usize, &Json)> = all
        .iter()
        .enumerate()
        .filter(|(i, u)| done(*i, u) && u.get("tests").and_then(Json::as_str) == Some(h))
        .collect();
    let Some(first_run) = runs.first() else {
        return Err(format!(
            "conclusion resolved for {h} needs a done run: no done unit tests {h}"
        ));
    };
    let mut pairs = Vec::new();
    for (_, run) in &runs {
        let run_id = str_of(run, "id");
        for (j, replay) in all.iter().enumerate() {
            if done(j, replay)
                && replay.get("replay_of").and_then(Json::as_str) == Some(run_id)
                && str_of(replay, "role") != str_of(run, "role")
            {
                pairs.push((run_id, str_of(replay, "id")));
            }
        }
    }
    let Some(first_pair) = pairs.first() else {
        return Err(format!(
            "conclusion resolved for {h} needs a done replay of run {} in another role",
            str_of(first_run.1, "id")
        ));
    };
    let reviewed = pairs.iter().any(|(run, replay)| {
        all.iter().enumerate().any(|(k, reviewer)| {
            done(k, reviewer)
                && strs_of(reviewer, "reviews")
                    .iter()
                    .any(|r| r == run || r == replay)
        })
    });
    if !reviewed {
        return Err(format!(
            "conclusion resolved for {h} needs a done review of run {} or of its replay {}",
            first_pair.0, first_pair.1
        ));
    }
    Ok(())
}

/// The changes an `agreements` argument makes (SW-122): the retired and the adopted texts.
#[derive(Debug, Clone, Default)]
struct AgreementChanges {
    list: Vec<String>,
    retired: Vec<String>,
    adopted: Vec<String>,
}

/// Gate 11: applies `retire` then `adopt` to a copy of `job.agreements`.
fn agreements_gate(doc: &Json, patch: &Json) -> Result<Option<AgreementChanges>, String> {
    let current = doc.get("job").and_then(|j| j.get("agreements"));
    let mut list: Vec<String> = current
        .map(|_| strs_of(doc.get("job").unwrap_or(&Json::Null), "agreements"))
        .unwrap_or_default()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut changes = AgreementChanges::default();
    for text in strs_of(patch, "retire") {
        match list.iter().position(|a| a == text) {
            Some(i) => {
                list.remove(i);
                changes.retired.push(text.to_owned());
            }
            None => return Err(format!("agreement to retire is not on job.agreements: {text}")),
        }
    }
    for text in strs_of(patch, "adopt") {
        if !list.iter().any(|a| a == text) {
            list.push(text.to_owned());
            changes.adopted.push(text.to_owned());
        }
    }
    if list.len() > MAX_AGREEMENTS {
        return Err(format!(
            "job.agreements would hold {} agreements; at most {MAX_AGREEMENTS} are kept",
            list.len()
        ));
    }
    if changes.retired.is_empty() && changes.adopted.is_empty() {
        return Ok(None);
    }
    changes.list = list;
    Ok(Some(changes))
}

/// Gate 12 (SW-121): the follow-up units to append, or the first refusal.
fn follow_ups_gate(
    env: &Env,
    doc: &Json,
    checkpoint: &str,
    unit: &Json,
    items: &Json,
) -> Result<Vec<Json>, String> {
    let items: &[Json] = items.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let existing: HashSet<&str> = units(doc).iter().map(|u| str_of(u, "id")).collect();
    let unit_id = str_of(unit, "id");
    // 1. Duplicates.
    let mut seen = HashSet::new();
    for item in items {
        let fid = str_of(item, "id");
        if existing.contains(fid) || !seen.insert(fid) {
            return Err(Error::DuplicateId(fid.to_owned()).to_string());
        }
    }
    // 2. Brief files under the repo root.
    let root = paths::repo_root(env.fs.as_ref(), Path::new(checkpoint));
    for item in items {
        let brief = str_of(item, "brief_path");
        let bad = brief.starts_with('/')
            || brief.split('/').any(|s| s == "..")
            || env
                .fs
                .metadata(&root.join(brief))
                .map(|m| m.kind != FileKind::File)
                .unwrap_or(true);
        if bad {
            return Err(format!(
                "follow-up {} brief {brief} is not a file",
                str_of(item, "id")
            ));
        }
    }
    // 3. Dependencies.
    let deps_of = |item: &Json| -> Vec<String> {
        match item.get("depends_on") {
            Some(_) => strs_of(item, "depends_on")
                .into_iter()
                .map(str::to_owned)
                .collect(),
            None => vec![unit_id.to_owned()],
        }
    };
    for item in items {
        for dep in deps_of(item) {
            if !existing.contains(dep.as_str()) && !seen.contains(dep.as_str()) {
                return Err(Error::UnknownDependency {
                    node: str_of(item, "id").to_owned(),
                    dependency: dep,
                }
                .to_string());
            }
        }
    }
    // 4. Cycles among the items (existing units count as dependency-free).
    let all_deps: Vec<Vec<String>> = items.iter().map(deps_of).collect();
    let nodes: Vec<PlanNode<'_>> = items
        .iter()
        .zip(all_deps.iter())
        .map(|(item, deps)| PlanNode {
            id: str_of(item, "id"),
            depends_on: deps
                .iter()
                .map(String::as_str)
                .filter(|d| seen.contains(d))
                .collect(),
            priority: Priority::default(),
            touches: None,
        })
        .collect();
    planner::plan(&nodes).map_err(|e| e.to_string())?;
    // 5. Roles.
    if let Some(roles) = doc
        .get("job")
        .and_then(|j| j.get("roles"))
        .and_then(Json::as_object)
    {
        for item in items {
            let r = str_of(item, "role");
            if !roles.contains_key(r) {
                return Err(format!(
                    "follow-up {} has role {r}, which job.roles does not declare",
                    str_of(item, "id")
                ));
            }
        }
    }
    let verify = str_of(unit, "verify");
    Ok(items
        .iter()
        .zip(all_deps)
        .map(|(item, deps)| {
            let mut u = Object::new();
            u.insert(String::from("id"), Json::str(str_of(item, "id")));
            u.insert(String::from("title"), Json::str(str_of(item, "title")));
            u.insert(String::from("brief_path"), Json::str(str_of(item, "brief_path")));
            u.insert(String::from("status"), Json::str("todo"));
            u.insert(String::from("role"), Json::str(str_of(item, "role")));
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

/// Gate 13, the mutation (SW-83), in its contractual order.
fn mutate(
    doc: &mut Json,
    index: usize,
    args: &ClockOut,
    agreements: Option<AgreementChanges>,
    conclusion: Option<&Json>,
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

/// Steps 1–5 of SW-83: status, attempts, agreements, conclusion, follow-ups.
fn apply_unit_and_job(
    root: &mut Object,
    index: usize,
    args: &ClockOut,
    agreements: Option<AgreementChanges>,
    conclusion: Option<&Json>,
    new_units: Vec<Json>,
) {
    let unit_id = args.unit_id.as_str();
    if let Some(Json::Object(unit)) = root
        .get_mut("plan")
        .and_then(|p| p.as_object_mut())
        .and_then(|p| p.get_mut("units"))
        .and_then(Json::as_array_mut)
        .and_then(|u| u.get_mut(index))
    {
        unit.insert(String::from("status"), Json::str(args.status.as_str()));
        let mut attempt = Object::new();
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
        job.insert(String::from("conclusion"), c.clone());
    }
    if let Some(Json::Array(list)) = root
        .get_mut("plan")
        .and_then(|p| p.as_object_mut())
        .and_then(|p| p.get_mut("units"))
    {
        list.extend(new_units);
    }
}

/// The cursor rule (SW-87): `ready[0]`, else the first non-terminal unit, else the unit itself.
pub fn next_cursor(doc: &Json, unit_id: &str) -> String {
    if let Ok(view) = checkpoint::batch_view(doc)
        && let Some(first) = view.ready().first()
    {
        return (*first).to_owned();
    }
    units(doc)
        .iter()
        .find(|u| !is_terminal(u))
        .map(|u| str_of(u, "id").to_owned())
        .unwrap_or_else(|| unit_id.to_owned())
}

/// The accounting line (SW-85), without its LF.
fn accounting_line(
    ts: &str,
    unit: &str,
    role: &str,
    status: &str,
    accounting: Option<&Json>,
    agent_id: Option<&Json>,
    briefed: bool,
) -> String {
    let mut line = Object::new();
    line.insert(String::from("ts"), Json::str(ts));
    line.insert(String::from("unit"), Json::str(unit));
    line.insert(String::from("role"), Json::str(role));
    line.insert(String::from("status"), Json::str(status));
    if let Some(Json::Object(a)) = accounting {
        for (k, v) in a {
            line.insert(k.clone(), v.clone());
        }
    }
    if let Some(agent) = agent_id.filter(|a| !a.is_null()) {
        line.insert(String::from("agent_id"), agent.clone());
    }
    line.insert(String::from("briefed"), Json::Bool(briefed));
    json::to_ledger_text(&Json::Object(line))
}
