//! The read-mostly tools: `shiftwork_plan` (§7), `shiftwork_status` (§8) and `shiftwork_clock_in` (§9).

use std::path::Path;

use shiftwork_seams::ProbeStatus;

use crate::answer::{self, refusal, with_reason};
use crate::budget::{self, Budget};
use crate::checkpoint::{self, is_terminal, str_of, strs_of, units};
use crate::env::Env;
use crate::json::Json;
use crate::ledger;
use crate::lock::{self, Acquired};
use crate::paths::{self, CheckpointPaths};
use crate::planner::{self, held_json};
use crate::ranking;

/// `shiftwork_plan(checkpoint)` (SW-62): the batch view of the checkpoint, never writing.
pub fn plan_checkpoint(env: &Env, checkpoint: &str) -> Json {
    let paths = CheckpointPaths::new(checkpoint);
    let doc = match checkpoint::read(env.fs.as_ref(), &paths) {
        Ok(doc) => doc,
        Err(e) => return refusal(&e.to_string()),
    };
    let view = match checkpoint::plan_checks(&doc) {
        Ok(view) => view,
        Err(reason) => return refusal(&reason),
    };
    let mut out = answer::start("plan");
    planner::plan_members(&view.nodes, &view.plan, &mut out, true);
    out.insert(String::from("cursor"), Json::str(checkpoint::cursor(&doc)));
    if view.has_touches {
        out.insert(String::from("held"), held_json(&view.nodes, &view.plan));
    }
    if budget::limits(&doc).is_some() {
        let summary = scan_ledger(env, &paths, &doc, true);
        if let Some(b) = Budget::compute(&doc, &summary) {
            out.insert(String::from("budget"), b.to_json());
        }
    }
    if doc.get("job").and_then(|j| j.get("kind")).and_then(Json::as_str) == Some("experimentation") {
        let (ranking, winner) = ranking::ranking(&doc);
        out.insert(String::from("ranking"), ranking);
        out.insert(String::from("winner"), winner);
    }
    Json::Object(out)
}

/// One ledger pass for the units of `doc`.
pub(crate) fn scan_ledger(
    env: &Env,
    paths: &CheckpointPaths,
    doc: &Json,
    keep_tokens: bool,
) -> ledger::LedgerSummary {
    let ids: Vec<&str> = units(doc).iter().map(|u| str_of(u, "id")).collect();
    ledger::scan(env.fs.as_ref(), &paths.ledger, &ids, keep_tokens)
}

/// `shiftwork_status(checkpoint, search?)` (SW-65): counts, never writing, never reading the ledger.
pub fn status(env: &Env, checkpoint: &str, search: Option<&str>) -> Json {
    let paths = CheckpointPaths::new(checkpoint);
    let doc = match checkpoint::read(env.fs.as_ref(), &paths) {
        Ok(doc) => doc,
        Err(e) => return refusal(&e.to_string()),
    };
    let mut counts: Vec<(&str, i64)> = Vec::new();
    for unit in units(&doc) {
        let s = str_of(unit, "status");
        match counts.iter_mut().find(|(k, _)| *k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((s, 1)),
        }
    }
    let questions = doc
        .get("handoff")
        .and_then(|h| h.get("open_questions"))
        .and_then(Json::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let last = doc
        .get("history")
        .and_then(Json::as_array)
        .and_then(|h| h.last())
        .cloned()
        .unwrap_or(Json::Null);
    let mut out = answer::start("status");
    out.insert(String::from("cursor"), Json::str(checkpoint::cursor(&doc)));
    out.insert(
        String::from("units"),
        Json::Object(
            counts
                .into_iter()
                .map(|(k, n)| (k.to_owned(), Json::int(n)))
                .collect(),
        ),
    );
    out.insert(String::from("open_questions"), Json::int(questions as i64));
    out.insert(String::from("last_history"), last);
    if let Some(query) = search {
        let archive = paths::shiftwork_dir(env.fs.as_ref(), Path::new(checkpoint)).join("archive");
        let root = paths::repo_root(env.fs.as_ref(), Path::new(checkpoint));
        out.insert(
            String::from("search"),
            crate::search::search(env.fs.as_ref(), &root, &archive, query),
        );
    }
    Json::Object(out)
}

/// `shiftwork_clock_in(checkpoint, unit_id?)` (§9): the brief of a ready unit, recorded in the ledger.
pub fn clock_in(env: &Env, checkpoint: &str, unit_id: Option<&str>) -> Json {
    let paths = CheckpointPaths::new(checkpoint);
    let doc = match checkpoint::read(env.fs.as_ref(), &paths) {
        Ok(doc) => doc,
        Err(e) => return refusal(&e.to_string()),
    };
    if let Some(escalate) = open_questions(env, &doc, checkpoint) {
        return escalate;
    }
    let all = units(&doc);
    if all.iter().all(is_terminal) {
        return with_reason("success", "all units done or dropped");
    }
    let cursor = checkpoint::cursor(&doc);
    if unit_id.is_none() && !all.iter().any(|u| str_of(u, "id") == cursor) {
        return with_reason("escalate", &format!("cursor {cursor} names no unit"));
    }
    let view = match checkpoint::plan_checks(&doc) {
        Ok(view) => view,
        Err(reason) => return refusal(&reason),
    };
    let selected = unit_id.unwrap_or(cursor);
    let ready = view.ready();
    let Some(unit) = all
        .iter()
        .find(|u| str_of(u, "id") == selected)
        .filter(|_| ready.contains(&selected))
    else {
        return refusal(&format!(
            "unit {selected} is not ready; ready is {}",
            ready.join(", ")
        ));
    };
    let role = str_of(unit, "role");
    let target = paths::lock_target(env.fs.as_ref(), &paths.given);
    let held = match lock::acquire(env, &target) {
        Acquired::Held(lock) => Some(lock),
        Acquired::TimedOut(_) | Acquired::Unavailable(_) => None,
    };
    let with_budget = budget::limits(&doc).is_some();
    let summary = scan_ledger(env, &paths, &doc, with_budget);
    let flight = budget::in_flight(&doc, &summary);
    if let Some(reason) = touches_hold(&doc, unit, &flight) {
        return refusal(&reason);
    }
    if with_budget
        && let Some(b) = Budget::compute(&doc, &summary)
        && let Some(reason) = b.refuse_brief(flight.contains(&selected))
    {
        return refusal(&reason);
    }
    let ts = ledger::timestamp(env.clock.now());
    let mut line = String::new();
    if summary.last_byte.is_some_and(|b| b != b'\n') {
        line.push('\n');
    }
    line.push_str(&ledger::brief_line(role, &ts, selected));
    line.push('\n');
    // Best-effort (SW-93): the brief is answered even when its record cannot be written.
    let _ = shiftwork_seams::durable::append_line(env.fs.as_ref(), &paths.ledger, line.as_bytes(), true);
    drop(held);
    brief(&doc, unit)
}

/// Step 2 of the clock-in (SW-72): the escalation, if any.
fn open_questions(env: &Env, doc: &Json, checkpoint: &str) -> Option<Json> {
    let items = doc
        .get("handoff")
        .and_then(|h| h.get("open_questions"))
        .and_then(Json::as_array)?;
    if items.is_empty() {
        return None;
    }
    let escalate = |q: &str, probe: Option<Json>| {
        let mut out = answer::start("escalate");
        out.insert(
            String::from("reason"),
            Json::String(crate::schema::clip(
                &format!("open question: {q}"),
                answer::MAX_REASON,
            )),
        );
        out.insert(String::from("open_questions"), Json::Array(items.clone()));
        if let Some(p) = probe {
            out.insert(String::from("probe"), p);
        }
        Json::Object(out)
    };
    let is_relay = |item: &Json| env.probes && item.get("kind").and_then(Json::as_str) == Some("relay");
    if let Some(decision) = items.iter().find(|i| !is_relay(i)) {
        let q = decision.as_str().unwrap_or_else(|| str_of(decision, "q"));
        return Some(escalate(q, None));
    }
    let root = paths::repo_root(env.fs.as_ref(), Path::new(checkpoint));
    // One budget for every probe of this clock-in (issue 12 item 4): each gets what is left of it.
    let start = env.clock.monotonic();
    for relay in items {
        let q = str_of(relay, "q");
        let left = env
            .probe_timeout
            .saturating_sub(env.clock.monotonic().saturating_sub(start));
        let status = if left.is_zero() {
            ProbeStatus::TimedOut
        } else {
            env.host.run_probe(str_of(relay, "probe"), &root, left).status
        };
        if status == ProbeStatus::Exited(0) {
            continue;
        }
        let exit = match status {
            ProbeStatus::Exited(code) => Json::int(i64::from(code)),
            _ => Json::Null,
        };
        let probe = Json::Object(crate::json::object([("q", Json::str(q)), ("exit", exit)]));
        return Some(escalate(q, Some(probe)));
    }
    None
}

/// Step 8 (SW-114): a path of the selected unit held by another in-flight unit.
///
/// One pass over the in-flight units' paths (a map from path to its first holder in plan order), so
/// the gate is linear in units × touches however many units are in flight (issue 12 item 10).
fn touches_hold(doc: &Json, unit: &Json, flight: &[&str]) -> Option<String> {
    let id = str_of(unit, "id");
    let mine = planner::touches_of(unit.get("touches")).ok().flatten()?;
    let flight: std::collections::HashSet<&str> = flight.iter().copied().collect();
    let mut holders: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for u in units(doc) {
        let uid = str_of(u, "id");
        if uid == id || !flight.contains(uid) {
            continue;
        }
        for path in planner::touches_of(u.get("touches"))
            .ok()
            .flatten()
            .unwrap_or_default()
        {
            holders.entry(path).or_insert(uid);
        }
    }
    mine.iter().find_map(|path| {
        holders
            .get(path)
            .map(|other| format!("unit {id} touches {path}, which {other} holds until its clock-out"))
    })
}

/// The brief answer (SW-74).
fn brief(doc: &Json, unit: &Json) -> Json {
    let job = doc.get("job").cloned().unwrap_or_default();
    let handoff = doc.get("handoff").cloned().unwrap_or_default();
    let mut out = answer::start("brief");
    out.insert(String::from("unit"), unit.clone());
    out.insert(String::from("role"), Json::str(str_of(unit, "role")));
    out.insert(
        String::from("invariants"),
        job.get("constraints").cloned().unwrap_or_default(),
    );
    out.insert(String::from("handoff"), handoff.clone());
    out.insert(
        String::from("do_not"),
        handoff.get("do_not").cloned().unwrap_or_default(),
    );
    out.insert(
        String::from("files"),
        doc.get("state")
            .and_then(|s| s.get("artifacts"))
            .cloned()
            .unwrap_or_default(),
    );
    if let Some(agreements) = job.get("agreements") {
        out.insert(String::from("agreements"), agreements.clone());
    }
    let all = units(doc);
    let mut upstream = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for dep in strs_of(unit, "depends_on") {
        if seen.contains(&dep) {
            continue;
        }
        seen.push(dep);
        if let Some(d) = all.iter().find(|u| str_of(u, "id") == dep)
            && d.get("attempts").is_some_and(|a| matches!(a, Json::Array(_)))
        {
            let last = Json::Array(ranking::last_produced(d).to_vec());
            upstream.push(Json::Object(crate::json::object([
                ("unit", Json::str(dep)),
                ("last", last),
            ])));
        }
    }
    if !upstream.is_empty() {
        out.insert(String::from("upstream"), Json::Array(upstream));
    }
    Json::Object(out)
}
