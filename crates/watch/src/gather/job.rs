//! One checkpoint and its ledger, read into a [`JobPane`] through `shiftwork-core`.

use std::collections::HashMap;
use std::path::Path;

use shiftwork_core::budget;
use shiftwork_core::checkpoint;
use shiftwork_core::decide::plan::plan_checks;
use shiftwork_core::ledger::{LedgerPass, LedgerSummary};
use shiftwork_core::model::{Question as CoreQuestion, UnitStatus};
use shiftwork_core::{Checkpoint, CheckpointPaths, Unit as CoreUnit};
use shiftwork_seams::Fs;

use super::AgentScan;
use crate::display_text::clean_text;
use crate::snapshot::{
    Budget, BudgetDimension, ClockOut, HistoryEntry, Hold, Job, JobPane, Question, StatusCount, Tone, Unit,
};

/// The ledger is read in chunks of this size, whatever its length.
const LEDGER_CHUNK: usize = 256 * 1024;

/// Reads the checkpoint at `path` and its ledger (`<path>.log.jsonl`) into a pane. Never writes: it
/// reads the checkpoint once, as the shift-work tools do ([`checkpoint::read`]: bounded, regular files
/// only, never blocking), and streams the ledger once. A checkpoint that cannot be read or validated
/// gives a pane holding the shift-work tools' own refusal sentence.
pub fn job(fs: &dyn Fs, path: &Path) -> JobPane {
    let paths = CheckpointPaths::new(path);
    let checkpoint = clean_text(&paths.shown);
    let body = checkpoint::read(fs, &paths)
        .map(|doc| job_of(fs, &paths, &doc.view()))
        .map_err(|refusal| clean_text(&refusal.to_string()));
    JobPane { checkpoint, body }
}

/// The job of a validated checkpoint.
fn job_of(fs: &dyn Fs, paths: &CheckpointPaths, cp: &Checkpoint<'_>) -> Job {
    let all: Vec<CoreUnit<'_>> = cp.units().collect();
    let ids = cp.ids();
    let with_budget = cp.budget_limits().is_some();
    let (ledger, agents, clock_outs) = read_ledger(fs, &paths.ledger, &ids, with_budget);
    let cursor = cp.cursor();
    // Units are told apart by their position in `plan.units`, never by their cleaned ids (issue 27
    // item 12); a dependency names the first unit with its raw id.
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(all.len());
    for (i, u) in all.iter().enumerate() {
        position.entry(u.id()).or_insert(i);
    }
    let unit_at = |i: usize| {
        let u = &all[i];
        let id = u.id();
        Unit {
            index: i,
            id: clean_text(id),
            title: clean_text(u.title()),
            status: clean_text(u.status().as_str()),
            tone: unit_tone(u.status()),
            role: clean_text(u.role().as_str()),
            depends_on: u.depends_on().map(clean_text).collect(),
            depends_on_units: u.depends_on().filter_map(|d| position.get(d).copied()).collect(),
            agent: agents.get(id).map(|a| clean_text(a)),
            in_flight: !u.is_terminal() && ledger.briefed.get(i).copied().unwrap_or(false),
            is_cursor: id == cursor,
            is_held: false,
        }
    };
    let mut job = Job {
        id: clean_text(cp.job_id()),
        goal: clean_text(cp.goal()),
        cursor: clean_text(cursor),
        counts: unit_counts(&all),
        waves: Vec::new(),
        unplanned: Vec::new(),
        finished: (0..all.len())
            .filter(|&i| all[i].is_terminal())
            .map(unit_at)
            .collect(),
        plan_refusal: None,
        held: Vec::new(),
        budget: budget_of(cp, &ledger),
        history: history(cp),
        questions: questions(cp),
        clock_outs,
    };
    match plan_checks(cp) {
        Ok(view) => {
            let unit_of_node = |node: usize| view.unit_index[node];
            job.waves = view
                .schedule
                .batches
                .iter()
                .map(|batch| batch.iter().map(|&n| unit_at(unit_of_node(n))).collect())
                .collect();
            job.held = view
                .schedule
                .held
                .iter()
                .map(|h| Hold {
                    unit: clean_text(view.nodes[h.node].id),
                    by: clean_text(view.nodes[h.by].id),
                    unit_index: unit_of_node(h.node),
                    by_index: unit_of_node(h.by),
                    path: clean_text(&h.path),
                    wave: h.batch + 1,
                })
                .collect();
            for unit in job.waves.iter_mut().flatten() {
                unit.is_held = job.held.iter().any(|h| h.unit_index == unit.index);
            }
        }
        Err(refusal) => {
            job.plan_refusal = Some(clean_text(&refusal.to_string()));
            job.unplanned = (0..all.len())
                .filter(|&i| !all[i].is_terminal())
                .map(unit_at)
                .collect();
        }
    }
    job
}

/// One pass over the ledger feeding the core's pass (briefed, budget) and the agent reader (the
/// agents of the units and the last clock-outs).
fn read_ledger(
    fs: &dyn Fs,
    ledger: &Path,
    ids: &[&str],
    keep_tokens: bool,
) -> (LedgerSummary, HashMap<String, String>, Vec<ClockOut>) {
    let mut pass = LedgerPass::new(ids, keep_tokens);
    let mut agents = AgentScan::default();
    let read = fs.read_chunks(ledger, LEDGER_CHUNK, &mut |chunk| {
        pass.feed(chunk);
        agents.feed(chunk);
        Ok(())
    });
    match read {
        Ok(_) => {
            let (agents, clock_outs) = agents.finish_with_clock_outs();
            (pass.finish(), agents, clock_outs)
        }
        // A missing or unreadable ledger reads as empty (SW-94).
        Err(_) => (
            LedgerPass::new(ids, keep_tokens).finish(),
            HashMap::new(),
            Vec::new(),
        ),
    }
}

/// The colour of a unit status.
fn unit_tone(status: UnitStatus) -> Tone {
    match status {
        UnitStatus::Todo => Tone::Waiting,
        UnitStatus::InProgress => Tone::Running,
        UnitStatus::Done => Tone::Good,
        UnitStatus::Blocked => Tone::Warn,
        UnitStatus::Dropped => Tone::Muted,
    }
}

/// Units per status in order of first appearance (as the `shiftwork_status` tool counts them).
fn unit_counts(all: &[CoreUnit<'_>]) -> Vec<StatusCount> {
    let mut counts: Vec<StatusCount> = Vec::new();
    for unit in all {
        let status = unit.status();
        match counts.iter_mut().find(|c| c.status == status.as_str()) {
            Some(c) => c.count += 1,
            None => counts.push(StatusCount {
                status: clean_text(status.as_str()),
                count: 1,
                tone: unit_tone(status),
            }),
        }
    }
    counts
}

fn budget_of(cp: &Checkpoint<'_>, ledger: &LedgerSummary) -> Option<Budget> {
    let b = budget::Budget::compute(cp, ledger)?;
    Some(Budget {
        dimensions: b
            .limits
            .iter()
            .map(|&(dim, limit)| BudgetDimension {
                name: dim.as_str().to_owned(),
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

fn history(cp: &Checkpoint<'_>) -> Vec<HistoryEntry> {
    cp.history()
        .iter()
        .rev()
        .map(|entry| HistoryEntry {
            unit: clean_text(entry.unit.as_str()),
            outcome: clean_text(entry.outcome.as_str()),
            notes: entry.notes.as_deref().filter(|n| !n.is_empty()).map(clean_text),
        })
        .collect()
}

fn questions(cp: &Checkpoint<'_>) -> Vec<Question> {
    cp.open_questions()
        .iter()
        .map(|q| Question {
            text: clean_text(q.text()),
            kind: String::from(match q {
                CoreQuestion::Relay { .. } => "relay",
                CoreQuestion::Text(_) | CoreQuestion::Decision { .. } => "decision",
            }),
        })
        .collect()
}
