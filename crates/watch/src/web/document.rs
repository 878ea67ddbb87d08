//! The page's data document: a [`Snapshot`] as JSON, for a page that renders it as text.
//!
//! Instants are milliseconds since the Unix epoch (the page shows them in the viewer's zone and the
//! server's, and counts down from them); every string is a snapshot string, already cleaned. Large
//! snapshots are bounded so that every page of a team gets a document of a reasonable size: at most
//! [`UNITS_LISTED`] units per job and [`CLAIMED_LISTED`] claimed contracts, with the number left out.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::snapshot::{
    Budget, ClockOut, ContractRecord, Contracts, ContractsPane, HoursLine, Job, JobPane, Snapshot,
    StatusCount, Tone, Unit,
};

/// The most units of one job the document lists (waves, then unplanned, then finished).
pub const UNITS_LISTED: usize = 300;
/// The most claimed contracts the document lists (the soonest to expire).
pub const CLAIMED_LISTED: usize = 100;

/// The document of `snapshot`: `now`, `zone` (the server's zone), `jobs`, `contracts` and `hours`
/// (`null` when not shown).
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_watch::snapshot::{JobPane, Snapshot};
/// let snapshot = Snapshot {
///     now: Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap(),
///     zone: chrono_tz::Europe::London,
///     jobs: vec![JobPane { checkpoint: "cp.json".into(), body: Err("checkpoint unreadable".into()) }],
///     contracts: None,
///     hours: None,
/// };
/// let doc = shiftwork_watch::web::document::of(&snapshot);
/// assert_eq!(doc["now"], 1_789_984_800_000_i64);
/// assert_eq!(doc["zone"], "Europe/London");
/// assert_eq!(doc["jobs"][0]["error"], "checkpoint unreadable");
/// ```
pub fn of(snapshot: &Snapshot) -> Value {
    json!({
        "now": ms(snapshot.now),
        "zone": snapshot.zone.name(),
        "jobs": snapshot.jobs.iter().map(job_pane).collect::<Vec<_>>(),
        "contracts": snapshot.contracts.as_ref().map(contracts_pane),
        "hours": snapshot.hours.as_ref().map(hours),
    })
}

/// A contract in full, for the page's detail view.
pub fn record(record: &ContractRecord) -> Value {
    json!({
        "id": record.id,
        "title": record.title,
        "task_type": record.task_type,
        "status": record.status,
        "tone": tone(record.tone),
        "past_deadline": record.past_deadline,
        "requester": record.requester,
        "target": record.target,
        "workspace_root": record.workspace_root,
        "context_summary": record.context_summary,
        "pointers": record.pointers,
        "pointer_count": record.pointer_count,
        "epoch": record.epoch,
        "deliveries": record.deliveries,
        "max_deliveries": record.max_deliveries,
        "extends": record.extends,
        "releases": record.releases,
        "retries": record.retries,
        "times": record.times.iter().map(|(name, at)| json!({"name": name, "at": ms(*at)})).collect::<Vec<_>>(),
        "end_reason": record.end_reason,
        "history": record.history,
        "fail_reason": record.fail_reason,
        "cancel_reason": record.cancel_reason,
        "result_summary": record.result_summary,
    })
}

fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// A figure as a JSON number, saturated to 64 bits.
fn figure(n: i128) -> i64 {
    i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX })
}

fn tone(tone: Tone) -> &'static str {
    match tone {
        Tone::Waiting => "waiting",
        Tone::Running => "running",
        Tone::Good => "good",
        Tone::Warn => "warn",
        Tone::Bad => "bad",
        Tone::Muted => "muted",
    }
}

fn counts(counts: &[StatusCount]) -> Vec<Value> {
    counts
        .iter()
        .map(|c| json!({"status": c.status, "count": c.count, "tone": tone(c.tone)}))
        .collect()
}

fn job_pane(pane: &JobPane) -> Value {
    match &pane.body {
        Ok(job) => json!({"checkpoint": pane.checkpoint, "job": job_of(job)}),
        Err(sentence) => json!({"checkpoint": pane.checkpoint, "error": sentence}),
    }
}

fn unit(u: &Unit) -> Value {
    json!({
        "index": u.index,
        "id": u.id,
        "title": u.title,
        "status": u.status,
        "tone": tone(u.tone),
        "role": u.role,
        "depends_on": u.depends_on,
        "agent": u.agent,
        "in_flight": u.in_flight,
        "is_cursor": u.is_cursor,
        "is_held": u.is_held,
    })
}

fn job_of(job: &Job) -> Value {
    let mut budget_left = UNITS_LISTED;
    let mut left_out = 0usize;
    let mut list = |units: &[Unit]| -> Vec<Value> {
        let take = units.len().min(budget_left);
        budget_left -= take;
        left_out += units.len() - take;
        units[..take].iter().map(unit).collect()
    };
    let waves: Vec<Vec<Value>> = job.waves.iter().map(|w| list(w)).collect();
    let unplanned = list(&job.unplanned);
    let finished = list(&job.finished);
    let mut out = Map::new();
    out.insert("id".into(), json!(job.id));
    out.insert("goal".into(), json!(job.goal));
    out.insert("cursor".into(), json!(job.cursor));
    out.insert("counts".into(), json!(counts(&job.counts)));
    out.insert("plan_refusal".into(), json!(job.plan_refusal));
    out.insert("waves".into(), json!(waves));
    out.insert("unplanned".into(), json!(unplanned));
    out.insert("finished".into(), json!(finished));
    out.insert("units_left_out".into(), json!(left_out));
    out.insert(
        "held".into(),
        json!(
            job.held
                .iter()
                .map(|h| json!({"unit": h.unit, "by": h.by, "path": h.path, "wave": h.wave}))
                .collect::<Vec<_>>()
        ),
    );
    out.insert("budget".into(), json!(job.budget.as_ref().map(budget)));
    out.insert(
        "history".into(),
        json!(
            job.history
                .iter()
                .map(|h| json!({"unit": h.unit, "outcome": h.outcome, "notes": h.notes}))
                .collect::<Vec<_>>()
        ),
    );
    out.insert(
        "questions".into(),
        json!(
            job.questions
                .iter()
                .map(|q| json!({"text": q.text, "kind": q.kind}))
                .collect::<Vec<_>>()
        ),
    );
    out.insert(
        "clock_outs".into(),
        json!(job.clock_outs.iter().map(clock_out).collect::<Vec<_>>()),
    );
    Value::Object(out)
}

fn budget(b: &Budget) -> Value {
    json!({
        "dimensions": b.dimensions.iter().map(|d| json!({
            "name": d.name,
            "limit": figure(d.limit),
            "spent": figure(d.spent),
            "in_flight": figure(d.in_flight),
            "left": figure(d.left),
        })).collect::<Vec<_>>(),
        "in_flight": b.in_flight,
        "per_unit": figure(b.per_unit),
        "affordable": figure(b.affordable),
    })
}

fn clock_out(c: &ClockOut) -> Value {
    json!({
        "unit": c.unit,
        "status": c.status,
        "agent": c.agent,
        "tokens": c.tokens.map(figure),
        "duration_ms": c.duration_ms.map(figure),
        "model": c.model,
        "at": c.at,
    })
}

fn contracts_pane(pane: &ContractsPane) -> Value {
    match &pane.body {
        Ok(c) => contracts(c),
        Err(sentence) => json!({"error": sentence}),
    }
}

fn contracts(c: &Contracts) -> Value {
    let claimed: Vec<Value> = c
        .claimed
        .iter()
        .take(CLAIMED_LISTED)
        .map(|x| {
            json!({
                "id": x.id, "title": x.title, "holder": x.holder, "requester": x.requester,
                "epoch": x.epoch, "lease_ends": x.lease_ends.map(ms), "deliveries": x.deliveries,
            })
        })
        .collect();
    json!({
        "counts": counts(&c.counts),
        "past_deadline": c.past_deadline,
        "claimed": claimed,
        "claimed_left_out": c.claimed.len().saturating_sub(CLAIMED_LISTED),
        "waiting": c.waiting.iter().map(|x| json!({
            "id": x.id, "title": x.title, "target": x.target, "requester": x.requester,
            "queued_at": ms(x.queued_at), "deliveries": x.deliveries, "max_deliveries": x.max_deliveries,
            "available_at": x.available_at.map(ms),
        })).collect::<Vec<_>>(),
        "ended": c.ended.iter().map(|x| json!({
            "id": x.id, "title": x.title, "target": x.target, "requester": x.requester,
            "status": x.status, "tone": tone(x.tone), "reason": x.reason, "why": x.why,
            "ended_at": x.ended_at.map(ms),
        })).collect::<Vec<_>>(),
    })
}

fn hours(h: &HoursLine) -> Value {
    json!({
        "expression": h.expression,
        "in_hours": h.in_hours,
        "next_change": h.next_change.map(ms),
    })
}
