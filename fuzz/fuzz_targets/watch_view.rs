//! Arbitrary checkpoints and ledgers through the live view (issue 15): the snapshot never panics and
//! holds no control character, the drawing never panics at any terminal size, the plain-text report
//! and the Mermaid chart never panic, every Mermaid label keeps its text inside its quotes, and the
//! ledger's agent reader answers the same whatever the chunks it is fed in.
//!
//! Input layout: byte 0 picks the mode (even: the rest is the checkpoint file and, after the first
//! `\n\0\n`, its ledger; odd: the rest, split at `0xff`, gives the ids, titles and touched paths of a
//! valid checkpoint's units, so the view gets past the reader); bytes 1 and 2 are the terminal's size.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use shiftwork_watch::display_text::is_clean;
use shiftwork_watch::gather::AgentScan;
use shiftwork_watch::picture::{PlanFormat, render};
use shiftwork_watch::snapshot::{Job, JobPane, Snapshot};
use shiftwork_watch::view::ViewState;

const CP: &str = "/r/.shiftwork/cp.json";
const LEDGER: &str = "/r/.shiftwork/cp.json.log.jsonl";

fuzz_target!(|data: &[u8]| {
    let [mode, w, h, rest @ ..] = data else {
        return;
    };
    let (checkpoint, ledger) = if mode % 2 == 0 {
        split(rest)
    } else {
        (generate(rest).into_bytes(), rest.to_vec())
    };
    agents_are_chunk_independent(&ledger, usize::from(*w % 17) + 1);
    let fs = shiftwork_seams::MemFs::new();
    fs.make_dirs("/r/.shiftwork");
    fs.write_file(CP, &checkpoint);
    fs.write_file(LEDGER, &ledger);
    let pane = shiftwork_watch::gather::job(&fs, Path::new(CP));
    clean_pane(&pane);
    if let Ok(job) = &pane.body {
        labels_stay_quoted(&render(job, PlanFormat::Mermaid));
        let _ = render(job, PlanFormat::Text);
    }
    let snapshot = Snapshot {
        now: chrono::DateTime::UNIX_EPOCH,
        zone: chrono_tz::UTC,
        jobs: vec![pane],
        contracts: None,
        hours: None,
    };
    let _ = shiftwork_watch::report::render(&snapshot, true);
    let mut terminal = Terminal::new(TestBackend::new(u16::from(*w) + 1, u16::from(*h % 80) + 1)).expect("a test backend");
    let mut view = ViewState::new(1);
    view.rows[0] = u16::from(*h);
    view.columns[0] = u16::from(*w % 5);
    terminal
        .draw(|frame| shiftwork_watch::draw::draw(frame, &snapshot, &mut view))
        .expect("drawing into a test backend cannot fail");
});

fn split(data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    match data.windows(3).position(|w| w == b"\n\0\n") {
        Some(at) => (data[..at].to_vec(), data[at + 3..].to_vec()),
        None => (data.to_vec(), Vec::new()),
    }
}

/// A valid checkpoint whose units take their ids, titles and touched paths from `data`.
fn generate(data: &[u8]) -> String {
    let pieces: Vec<String> = data.split(|&b| b == 0xff).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    let text = |i: usize| serde_json::to_string(pieces.get(i).map_or("x", |s| if s.is_empty() { "x" } else { s })).expect("a string");
    let units: Vec<String> = (0..pieces.len().div_ceil(3).min(8))
        .map(|k| {
            let deps = if k > 0 { format!("[{}]", text(3 * (k - 1))) } else { String::from("[]") };
            format!(
                r#"{{"id": {}, "title": {}, "brief_path": "b.md", "status": "{}", "role": "implementer", "depends_on": {deps}, "verify": "v", "touches": [{}]}}"#,
                text(3 * k),
                text(3 * k + 1),
                ["todo", "in_progress", "done", "blocked", "dropped"][k % 5],
                text(3 * k + 2),
            )
        })
        .collect();
    format!(
        r#"{{"version": 1, "job": {{"id": {}, "goal": "g", "done_definition": "d", "constraints": [], "budget": {{"units": 3}}}}, "plan": {{"cursor": {}, "units": [{}]}}, "state": {{"repo": {{"branch": "m", "head_sha": "a", "dirty": false}}, "artifacts": [], "external": []}}, "history": [{{"unit": {}, "outcome": {}}}], "retro": [], "handoff": {{"next_action": "n", "open_questions": [{}], "do_not": []}}}}"#,
        text(1),
        text(0),
        units.join(", "),
        text(0),
        text(2),
        text(1),
    )
}

fn agents_are_chunk_independent(ledger: &[u8], size: usize) {
    let mut whole = AgentScan::default();
    whole.feed(ledger);
    let mut chunked = AgentScan::default();
    for chunk in ledger.chunks(size) {
        chunked.feed(chunk);
    }
    assert_eq!(whole.finish(), chunked.finish());
}

fn clean_pane(pane: &JobPane) {
    assert!(is_clean(&pane.checkpoint));
    match &pane.body {
        Err(sentence) => assert!(is_clean(sentence), "{sentence:?}"),
        Ok(job) => clean_job(job),
    }
}

fn clean_job(job: &Job) {
    let mut texts: Vec<&str> = vec![&job.id, &job.goal, &job.cursor];
    for u in job.open_units().chain(&job.finished) {
        texts.extend([u.id.as_str(), &u.title, &u.status, &u.role]);
        texts.extend(u.depends_on.iter().map(String::as_str));
        texts.extend(u.agent.as_deref());
    }
    for h in &job.held {
        texts.extend([h.unit.as_str(), &h.by, &h.path]);
    }
    for h in &job.history {
        texts.extend([h.unit.as_str(), &h.outcome]);
        texts.extend(h.notes.as_deref());
    }
    for q in &job.questions {
        texts.extend([q.text.as_str(), &q.kind]);
    }
    texts.extend(job.plan_refusal.as_deref());
    for t in texts {
        assert!(is_clean(t), "{t:?} reached the snapshot");
    }
}

/// Every node line holds exactly its label's two quotes, every dashed edge its label's two, and no
/// line of the chart carries a control character.
fn labels_stay_quoted(chart: &str) {
    for line in chart.lines() {
        assert!(!line.chars().any(char::is_control), "{line:?}");
        let quotes = line.matches('"').count();
        let trimmed = line.trim_start();
        if trimmed.starts_with('n') && trimmed.contains("[\"") || trimmed.starts_with("subgraph") || trimmed.contains("-.->") {
            assert_eq!(quotes, 2, "{line:?}");
        } else {
            assert_eq!(quotes, 0, "{line:?}");
        }
    }
}
