//! Benchmarks of `worklog`, on one fixture: a 10 MB Markdown log generated deterministically (fixed
//! seed) whose 10,000-item checklist sits near the end, with LF and with CRLF line endings.
//!
//! | bench | what it measures | target |
//! |---|---|---|
//! | `append_10mb` | `Worklog::append` on `OsFs` (lock, read, UTF-8, parse, duplicate test, write, both flushes) | median < 50 ms |
//! | `check_10mb` | `Worklog::check` on `OsFs` | median < 20 ms |
//! | `parse_10mb` | `find_checklist` plus the duplicate test (`plan_append`), UTF-8 already checked | ≥ 200 MB/s |
//!
//! Run with `cargo bench -p benches --bench worklog`. The temporary directory is the system's
//! (`TMPDIR`); the append target assumes ext4 on a local SSD.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;

use divan::{Bencher, counter::BytesCount};
use shiftwork_seams::OsFs;
use shiftwork_worklog::core::{AppendPlan, find_checklist, plan_append};
use shiftwork_worklog::{AppendStatus, Config, Worklog};

fn main() {
    divan::main();
}

const ENDINGS: [&str; 2] = ["lf", "crlf"];

/// Target size of the fixture (10,000,000 bytes ± 1 %).
const TARGET_LEN: usize = 10_000_000;
const ITEMS: usize = 10_000;

const WORDS: [&str; 40] = [
    "the",
    "work",
    "log",
    "checklist",
    "agent",
    "merged",
    "branch",
    "review",
    "fixed",
    "bug",
    "cache",
    "index",
    "release",
    "notes",
    "café",
    "naïve",
    "déjà",
    "vu",
    "Zürich",
    "meeting",
    "deploy",
    "service",
    "latency",
    "error",
    "handler",
    "request",
    "parser",
    "benchmark",
    "test",
    "build",
    "straße",
    "résumé",
    "über",
    "data",
    "queue",
    "lease",
    "clock",
    "shift",
    "plan",
    "wave",
];

fn words(rng: &mut fastrand::Rng, min_len: usize) -> String {
    let mut s = String::new();
    while s.len() < min_len {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(WORDS[rng.usize(..WORDS.len())]);
    }
    s
}

/// The fixture with LF endings: front matter, a heading, prose with headings, fenced blocks holding
/// item-like lines and plain and ordered lists; then the checklist; then a closing paragraph.
fn fixture_lf() -> String {
    let mut rng = fastrand::Rng::with_seed(0x5EED_2026_0906);
    let mut checklist = String::new();
    for i in 0..ITEMS {
        if i > 0 && i % 500 == 0 {
            checklist.push('\n');
        }
        let indent = if i % 5 == 4 { "  " } else { "" };
        let state = if rng.bool() { 'x' } else { ' ' };
        let text = words(&mut rng, 44);
        checklist.push_str(&format!("{indent}- [{state}] {i:05} {text}\n"));
    }
    let closing = "\nClosing paragraph: the day ended with every item above reviewed.\n";
    let mut out = String::from("---\ntitle: Work log\ndate: 2026-09-06\n---\n# 2026-09-06\n\n");
    let prose_end = TARGET_LEN - checklist.len() - closing.len() - 200;
    let mut n = 0u64;
    while out.len() < prose_end {
        n += 1;
        match n % 40 {
            0 => out.push_str(&format!("## Section {n}\n\n")),
            13 => {
                out.push_str("```text\n");
                for k in 0..18 {
                    out.push_str(&format!("- [ ] not an item {k} inside a fence\n"));
                }
                out.push_str("```\n\n");
            }
            21 => {
                for k in 0..4 {
                    out.push_str(&format!("- plain bullet {k} {}\n", words(&mut rng, 30)));
                }
                out.push('\n');
            }
            29 => {
                for k in 1..=4 {
                    out.push_str(&format!("{k}. ordered step {}\n", words(&mut rng, 30)));
                }
                out.push('\n');
            }
            _ => {
                out.push_str(&words(&mut rng, 400));
                out.push_str("\n\n");
            }
        }
    }
    out.push_str("## Done\n\n");
    out.push_str(&checklist);
    out.push_str(closing);
    out
}

fn fixture(ending: &str) -> String {
    let lf = fixture_lf();
    if ending == "crlf" {
        lf.replace('\n', "\r\n")
    } else {
        lf
    }
}

/// The fixture on disk, in a fresh temporary directory.
fn on_disk(ending: &str) -> (tempfile::TempDir, Worklog<OsFs>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2026-09-06.md"), fixture(ending)).unwrap();
    let log = Worklog::new(Config::builder().dir(dir.path()).pattern(r"\.md$").build(), OsFs);
    (dir, log)
}

/// Append a sentence not yet in the checklist (outcome `written`), page cache warm (target:
/// median < 50 ms).
#[divan::bench(args = ENDINGS, sample_count = 30, sample_size = 1)]
fn append_10mb(bencher: Bencher<'_, '_>, ending: &str) {
    let (dir, log) = on_disk(ending);
    assert_eq!(log.check().unwrap().items, Some(ITEMS as u64));
    let counter = Cell::new(0u64);
    bencher.bench_local(|| {
        counter.set(counter.get() + 1);
        let result = log
            .append(&format!("Benchmarked append number {}", counter.get()), false)
            .unwrap();
        assert_eq!(result.status, AppendStatus::Written);
    });
    drop(dir);
}

/// `check` on the fixture (target: median < 20 ms).
#[divan::bench(args = ENDINGS, sample_count = 50)]
fn check_10mb(bencher: Bencher<'_, '_>, ending: &str) {
    let (_dir, log) = on_disk(ending);
    bencher.bench_local(|| {
        let result = log.check().unwrap();
        assert_eq!(result.items, Some(ITEMS as u64));
    });
}

/// `find_checklist` plus the duplicate test over the whole text — `plan_append` does both in one
/// scan — with a sentence that is not in the checklist, so every item is compared (target
/// ≥ 200 MB/s).
#[divan::bench(args = ENDINGS, sample_count = 50)]
fn parse_10mb(bencher: Bencher<'_, '_>, ending: &str) {
    let text = fixture(ending);
    bencher.counter(BytesCount::of_str(&text)).bench_local(|| {
        let plan = plan_append(divan::black_box(&text), "A sentence that is not in the checklist");
        assert!(matches!(plan, AppendPlan::Insert { created: false, .. }));
    });
}

/// `find_checklist` alone (the `check` path's parse).
#[divan::bench(args = ENDINGS, sample_count = 50)]
fn find_checklist_10mb(bencher: Bencher<'_, '_>, ending: &str) {
    let text = fixture(ending);
    bencher.counter(BytesCount::of_str(&text)).bench_local(|| {
        assert_eq!(
            find_checklist(divan::black_box(&text)).map(|c| c.items),
            Some(ITEMS)
        );
    });
}

/// The fixture has the shape described above: 10,000,000 bytes ± 1 %, a 10,000-item checklist in
/// its last tenth (checked once, when the benches start).
#[divan::bench(sample_count = 1, sample_size = 1)]
fn fixture_shape() {
    let text = fixture_lf();
    assert!(
        text.len().abs_diff(TARGET_LEN) <= TARGET_LEN / 100,
        "{} bytes",
        text.len()
    );
    let list = find_checklist(&text).unwrap();
    assert_eq!(list.items, ITEMS);
    let start = text.find("## Done\n").unwrap();
    assert!(start > text.len() * 9 / 10, "the checklist sits near the end");
}
