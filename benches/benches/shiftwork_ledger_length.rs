//! A clock-out's cost does not grow with the ledger's length. `shiftwork_clock_out`
//! (the library, on the real filesystem, every fsync included) next to a ledger of 0, 100,000 and
//! 1,000,000 lines, on a 30-unit and a 1,000-unit checkpoint (target: 1,000,000 lines within 1.2× of
//! an empty ledger).
//!
//! Each configuration clocks the cursor unit out `blocked` (it stays the cursor, so every sample does
//! the same work) and prints the median and p95 of the wall time and of the thread's CPU time, and
//! their ratio to the empty ledger. Two more figures per configuration:
//!
//! * `first`: the first clock-out next to a ledger no call of ours has written, which has no index
//!   yet and reads the ledger whole to build it;
//! * `after a foreign line`: a clock-out after another program (bantamkit, a person) appended a line
//!   to the ledger, which no longer matches its index, so it is read whole again (median of a few).
//!
//! Run with `cargo bench -p benches --bench shiftwork_ledger_length` (an argument filters by
//! configuration name, e.g. `1000_units`). The ledgers are written beside the build output (not in
//! /tmp, which may be a tmpfs): 1,000,000 lines take about 100 MB while their configuration runs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shiftwork_core::json::{self, Json};
use shiftwork_core::{Answer, Env};

mod common;

use common::{checkpoint, p4_clock_out};

fn samples(lines: usize) -> usize {
    match (common::benching(), lines) {
        (false, _) => 2,
        (true, 0..=100_000) => 200,
        (true, _) => 100,
    }
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let lengths: &[usize] = if common::benching() {
        &[0, 100_000, 1_000_000]
    } else {
        &[0, 1_000]
    };
    println!(
        "clock-out next to a ledger of n lines (wall and thread CPU per call; ratio of medians to n = 0)"
    );
    for units in [30, 1000] {
        let name = format!("clock_out_{units}_units");
        if !wanted(&name) {
            continue;
        }
        println!("{name}");
        let mut empty: Option<(Duration, Duration)> = None;
        for &lines in lengths {
            let figures = configuration(units, lines);
            let base = *empty.get_or_insert((figures.wall_p50, figures.cpu_p50));
            println!(
                "  {lines:>9} lines ({:>6.1} MB): wall p50 {:>7.3} ms p95 {:>7.3} ms ({:.2}×)   cpu p50 {:>7.3} ms ({:.2}×)   first {:>8.3} ms   after a foreign line {:>8.3} ms",
                figures.ledger_bytes as f64 / 1e6,
                ms(figures.wall_p50),
                ms(figures.wall_p95),
                ratio(figures.wall_p50, base.0),
                ms(figures.cpu_p50),
                ratio(figures.cpu_p50, base.1),
                ms(figures.first),
                ms(figures.after_foreign),
            );
        }
    }
}

struct Figures {
    ledger_bytes: u64,
    first: Duration,
    wall_p50: Duration,
    wall_p95: Duration,
    cpu_p50: Duration,
    after_foreign: Duration,
}

/// One configuration: a repository with a checkpoint of `units` units and a ledger of `lines` lines.
fn configuration(units: usize, lines: usize) -> Figures {
    let dir = workdir();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&checkpoint(units))).unwrap();
    let ledger = PathBuf::from(format!("{}.log.jsonl", cp.display()));
    if lines > 0 {
        write_ledger(&ledger, units, lines);
    }
    let ledger_bytes = std::fs::metadata(&ledger).map_or(0, |m| m.len());
    let env = Env::os();
    let args = p4_clock_out(&cp);
    let call = || {
        let (c0, t0) = (thread_cpu(), Instant::now());
        let answer = shiftwork_core::clock_out(&env, &args).to_answer();
        let (t, c) = (t0.elapsed(), thread_cpu() - c0);
        assert_eq!(
            answer.get("result").and_then(Json::as_str),
            Some("ok"),
            "{}",
            json::to_compact_text(&answer)
        );
        (t, c)
    };
    let (first, _) = call();
    let n = samples(lines);
    let mut wall = Vec::with_capacity(n);
    let mut cpu = Vec::with_capacity(n);
    for _ in 0..3 {
        call();
    }
    for _ in 0..n {
        let (t, c) = call();
        wall.push(t);
        cpu.push(c);
    }
    // Another program appends a brief line, as bantamkit's clock-in does: the next clock-out reads
    // the ledger whole.
    let mut foreign = Vec::new();
    for _ in 0..if common::benching() { 5 } else { 1 } {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&ledger)
            .unwrap();
        file.write_all(b"{\"event\": \"brief\", \"role\": \"implementer\", \"ts\": \"2026-01-02T03:04:05Z\", \"unit\": \"U0\"}\n")
            .unwrap();
        drop(file);
        foreign.push(call().0);
    }
    Figures {
        ledger_bytes,
        first,
        wall_p50: median(&mut wall),
        wall_p95: percentile(&mut wall, 95.0),
        cpu_p50: median(&mut cpu),
        after_foreign: median(&mut foreign),
    }
}

/// `lines` ledger lines over the units `U0..U<units>`, as clock-ins and clock-outs write them: each
/// unit in turn briefed, then clocked out with its accounting.
fn write_ledger(path: &Path, units: usize, lines: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..lines {
        let u = (i / 2) % units;
        if i % 2 == 0 {
            writeln!(
                out,
                r#"{{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U{u}"}}"#
            )
            .unwrap();
        } else {
            writeln!(
                out,
                r#"{{"briefed": true, "duration_ms": 88200, "role": "implementer", "status": "done", "tokens": {}, "ts": "2026-01-02T03:04:06Z", "unit": "U{u}"}}"#,
                i * 7 % 90_000
            )
            .unwrap();
        }
    }
    out.flush().unwrap();
}

/// A directory beside the build output (not /tmp, which may be a tmpfs: clock-out is about a disk).
fn workdir() -> tempfile::TempDir {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(&base).unwrap()
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux and macOS.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let k = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    samples[k.clamp(1, samples.len()) - 1]
}

fn median(samples: &mut [Duration]) -> Duration {
    percentile(samples, 50.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
