//! One checkpoint and its ledger, read into a [`JobPane`] through `shiftwork-core`.

use std::collections::HashMap;
use std::path::Path;

use shiftwork_core::checkpoint::{self, is_terminal, str_of, strs_of, units};
use shiftwork_core::json::Json;
use shiftwork_core::ledger::{LedgerPass, LedgerSummary};
use shiftwork_core::{CheckpointPaths, budget};
use shiftwork_seams::Fs;

use super::AgentScan;
use crate::display_text::clean_text;
use crate::snapshot::{
    Budget, BudgetDimension, HistoryEntry, Hold, Job, JobPane, Question, StatusCount, Tone, Unit,
};

/// The largest checkpoint the view reads (a 1,000-unit checkpoint is about 300 KB).
pub const CHECKPOINT_LIMIT: u64 = 64 * 1024 * 1024;

/// The ledger is read in chunks of this size, whatever its length.
const LEDGER_CHUNK: usize = 256 * 1024;

/// Reads the checkpoint at `path` and its ledger (`<path>.log.jsonl`) into a pane. Never writes: it
/// reads the checkpoint once (at most [`CHECKPOINT_LIMIT`] bytes, regular files only) and streams the
/// ledger once. A checkpoint that cannot be read or validated gives a pane holding the shift-work
/// tools' own refusal sentence.
pub fn job(fs: &dyn Fs, path: &Path) -> JobPane {
    let paths = CheckpointPaths::new(path);
    let checkpoint = clean_text(&paths.shown);
    // PORT: the typed `Checkpoint` read view replaces the bounded read and `parse_bytes`.
    let body = fs
        .read_limited(&paths.given, CHECKPOINT_LIMIT)
        .map_err(|e| {
            shiftwork_core::Error::Unreadable {
                tail: shiftwork_core::paths::os_error_tail(&e, &paths.shown),
            }
            .to_string()
        })
        .and_then(|bytes| checkpoint::parse_bytes(&bytes).map_err(|e| e.to_string()))
        .map(|doc| job_of(fs, &paths, &doc))
        .map_err(|sentence| clean_text(&sentence));
    JobPane { checkpoint, body }
}

/// The job of a validated checkpoint document.
fn job_of(fs: &dyn Fs, paths: &CheckpointPaths, doc: &Json) -> Job {
    let all = units(doc);
    let ids: Vec<&str> = all.iter().map(|u| str_of(u, "id")).collect();
    let with_budget = budget::limits(doc).is_some();
    let (ledger, agents) = read_ledger(fs, &paths.ledger, &ids, with_budget);
    let cursor = checkpoint::cursor(doc);
    let unit_at = |i: usize| {
        let u = &all[i];
        let id = str_of(u, "id");
        Unit {
            id: clean_text(id),
            title: clean_text(str_of(u, "title")),
            status: clean_text(str_of(u, "status")),
            tone: unit_tone(str_of(u, "status")),
            role: clean_text(str_of(u, "role")),
            depends_on: strs_of(u, "depends_on").into_iter().map(clean_text).collect(),
            agent: agents.get(id).map(|a| clean_text(a)),
            in_flight: !is_terminal(u) && ledger.briefed.get(i).copied().unwrap_or(false),
            is_cursor: id == cursor,
            is_held: false,
        }
    };
    let mut job = Job {
        id: clean_text(doc.get("job").map(|j| str_of(j, "id")).unwrap_or("")),
        goal: clean_text(doc.get("job").map(|j| str_of(j, "goal")).unwrap_or("")),
        cursor: clean_text(cursor),
        counts: unit_counts(all),
        waves: Vec::new(),
        unplanned: Vec::new(),
        finished: (0..all.len())
            .filter(|&i| is_terminal(&all[i]))
            .map(unit_at)
            .collect(),
        plan_refusal: None,
        held: Vec::new(),
        budget: budget_of(doc, &ledger),
        history: history(doc),
        questions: questions(doc),
    };
    // PORT: the typed `Plan` replaces the batch view's indices.
    match checkpoint::plan_checks(doc) {
        Ok(view) => {
            let unit_of_node = |node: usize| view.unit_index[node];
            job.waves = view
                .plan
                .batches
                .iter()
                .map(|batch| batch.iter().map(|&n| unit_at(unit_of_node(n))).collect())
                .collect();
            job.held = view
                .plan
                .held
                .iter()
                .map(|h| Hold {
                    unit: clean_text(view.nodes[h.node].id),
                    by: clean_text(view.nodes[h.by].id),
                    path: clean_text(&h.path),
                    wave: h.batch + 1,
                })
                .collect();
            for unit in job.waves.iter_mut().flatten() {
                unit.is_held = job.held.iter().any(|h| h.unit == unit.id);
            }
        }
        Err(sentence) => {
            job.plan_refusal = Some(clean_text(&sentence));
            job.unplanned = (0..all.len())
                .filter(|&i| !is_terminal(&all[i]))
                .map(unit_at)
                .collect();
        }
    }
    job
}

/// One pass over the ledger feeding the core's pass (briefed, budget) and the agent reader.
fn read_ledger(
    fs: &dyn Fs,
    ledger: &Path,
    ids: &[&str],
    keep_tokens: bool,
) -> (LedgerSummary, HashMap<String, String>) {
    let mut pass = LedgerPass::new(ids, keep_tokens);
    let mut agents = AgentScan::default();
    let read = fs.read_chunks(ledger, LEDGER_CHUNK, &mut |chunk| {
        pass.feed(chunk);
        agents.feed(chunk);
        Ok(())
    });
    match read {
        Ok(_) => (pass.finish(), agents.finish()),
        // A missing or unreadable ledger reads as empty (SW-94).
        Err(_) => (LedgerPass::new(ids, keep_tokens).finish(), HashMap::new()),
    }
}

/// The colour of a unit status; a status this build does not know is muted.
fn unit_tone(status: &str) -> Tone {
    match status {
        "todo" => Tone::Waiting,
        "in_progress" => Tone::Running,
        "done" => Tone::Good,
        "blocked" => Tone::Warn,
        _ => Tone::Muted,
    }
}

/// Units per status in order of first appearance (as `shiftwork_status` counts them, SW-65).
fn unit_counts(all: &[Json]) -> Vec<StatusCount> {
    let mut counts: Vec<StatusCount> = Vec::new();
    for unit in all {
        let status = str_of(unit, "status");
        match counts.iter_mut().find(|c| c.status == status) {
            Some(c) => c.count += 1,
            None => counts.push(StatusCount {
                status: clean_text(status),
                count: 1,
                tone: unit_tone(status),
            }),
        }
    }
    counts
}

fn budget_of(doc: &Json, ledger: &LedgerSummary) -> Option<Budget> {
    let b = budget::Budget::compute(doc, ledger)?;
    Some(Budget {
        dimensions: b
            .limits
            .iter()
            .map(|&(dim, limit)| BudgetDimension {
                name: dim.to_owned(),
                limit,
                spent: b.spent(dim),
                in_flight: b.reserved(dim),
                left: b.remaining(dim, limit),
            })
            .collect(),
        in_flight: b.in_flight.iter().map(|id| clean_text(id)).collect(),
        per_unit: b.per_unit,
        affordable: b.affordable(),
    })
}

fn history(doc: &Json) -> Vec<HistoryEntry> {
    let ring = doc
        .get("history")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    ring.iter()
        .rev()
        .map(|entry| HistoryEntry {
            unit: clean_text(str_of(entry, "unit")),
            outcome: clean_text(str_of(entry, "outcome")),
            notes: entry
                .get("notes")
                .and_then(Json::as_str)
                .filter(|n| !n.is_empty())
                .map(clean_text),
        })
        .collect()
}

fn questions(doc: &Json) -> Vec<Question> {
    let items = doc
        .get("handoff")
        .and_then(|h| h.get("open_questions"))
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    items
        .iter()
        .map(|q| match q.as_str() {
            Some(text) => Question {
                text: clean_text(text),
                kind: String::from("decision"),
            },
            None => Question {
                text: clean_text(str_of(q, "q")),
                kind: clean_text(str_of(q, "kind")),
            },
        })
        .collect()
}
