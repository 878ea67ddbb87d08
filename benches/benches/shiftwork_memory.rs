//! The memory a shift-work call takes, as a multiple of the checkpoint's size.
//!
//! For checkpoints of 100,000 and 1,000,000 units (the units of the other benches, written compact:
//! 19 MB and 191 MB), each operation is run once from the file on disk and the peak of the bytes it
//! holds allocated at once is measured by a counting global allocator (requested bytes, the
//! allocator's own overhead not included), then printed with its ratio to the file's size. The
//! target: `shiftwork_plan`, its answer rendered as the server renders it, at most 4× the file.
//! These ratios are also the factors of the memory admission (`shiftwork_core::env::MemoryBudget`).
//!
//! Run with `cargo bench -p benches --bench shiftwork_memory` (release; about a minute and 3 GB at
//! 1,000,000 units). `SHIFTWORK_BENCH_QUICK=1` stops at 100,000 units; a test run (`cargo test
//! --all-targets`) measures 2,000 units only.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use shiftwork_core::json::{Formatter, Style};
use shiftwork_core::{Answer, ClockOut, Env};

mod common;

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator with the caller's own arguments; the
// counters are only read and written with atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout, as `GlobalAlloc::alloc` requires.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            held(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes through here).
        unsafe { System.dealloc(ptr, layout) };
        held(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and `new_size` is the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            held(new_size as isize - layout.size() as isize);
        }
        p
    }
}

fn held(delta: isize) {
    let now = if delta >= 0 {
        HELD.fetch_add(delta as usize, Ordering::Relaxed) + delta as usize
    } else {
        HELD.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed) - delta.unsigned_abs()
    };
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak of the bytes `f` held allocated beyond what was held before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

/// The checkpoint of `common::checkpoint(n)` as compact text, written without building it.
fn compact_checkpoint(n: usize) -> String {
    let mut text = String::with_capacity(n * 200 + 512);
    text.push_str(r#"{"version": 1, "job": {"id": "bench", "goal": "Go.", "done_definition": "make", "constraints": ["c"]}, "plan": {"cursor": "U0", "units": ["#);
    for i in 0..n {
        if i > 0 {
            text.push_str(", ");
        }
        let deps = if i >= 10 {
            format!(r#"["U{}", "U{}"]"#, i - 10, i - 7)
        } else {
            String::from("[]")
        };
        text.push_str(&format!(
            r#"{{"id": "U{i}", "title": "Unit {i} of the job", "brief_path": "briefs/U{i}.md", "status": "todo", "role": "implementer", "depends_on": {deps}, "verify": "make test-{i}"}}"#
        ));
    }
    text.push_str(r#"]}, "state": {"repo": {"branch": "main", "head_sha": "abc", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "Go.", "open_questions": [], "do_not": []}}"#);
    text
}

/// What the server does with an answer: its `structuredContent` and its escaped text block.
fn render(answer: &impl Answer) -> usize {
    let mut structured = String::with_capacity(answer.size_hint());
    answer.emit(&mut Formatter::new(&mut structured, Style::STRUCTURED));
    let mut text = String::with_capacity(structured.len() * 5 / 2 + 64);
    answer.emit(&mut Formatter::new(&mut text, Style::ANSWER.escaped()));
    structured.len() + text.len()
}

fn main() {
    let sizes: &[usize] = if !common::benching() {
        &[2_000]
    } else if common::quick() > 1 {
        &[100_000]
    } else {
        &[100_000, 1_000_000]
    };
    println!("peak bytes held at once by one call (counting allocator), and its ratio to the file's size");
    for &n in sizes {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
        let cp = dir.path().join(".shiftwork/cp.json");
        let text = compact_checkpoint(n);
        std::fs::write(&cp, &text).unwrap();
        let size = text.len();
        drop(text);
        let env = Env::os();
        let report = |what: &str, peak: usize, outcome: &str| {
            println!(
                "  {n:>9} units ({:>6.1} MB)  {what:<36} peak {:>8.1} MB  {:>5.2}× the file   {outcome}",
                size as f64 / 1e6,
                peak as f64 / 1e6,
                peak as f64 / size as f64
            );
        };
        let (rendered, peak) = peak_of(|| {
            let plan = shiftwork_core::plan_checkpoint(&env, &cp);
            let result = if plan.is_ok() { "plan" } else { "refused" };
            (render(&plan), result)
        });
        report(
            "shiftwork_plan, answer rendered",
            peak,
            &format!("{} ({} answer bytes)", rendered.1, rendered.0),
        );
        let (status, peak) = peak_of(|| render(&shiftwork_core::status(&env, &cp, None)));
        report("shiftwork_status", peak, &format!("{status} answer bytes"));
        let (brief, peak) = peak_of(|| render(&shiftwork_core::clock_in(&env, &cp, None)));
        report("shiftwork_clock_in", peak, &format!("{brief} answer bytes"));
        let args: ClockOut = common::p4_clock_out(&cp);
        let (out, peak) = peak_of(|| {
            let out = shiftwork_core::clock_out(&env, &args);
            match &out {
                Ok(_) => String::from("ok"),
                Err(refusal) => refusal.to_string().chars().take(90).collect(),
            }
        });
        report("shiftwork_clock_out", peak, &out);
    }
}
