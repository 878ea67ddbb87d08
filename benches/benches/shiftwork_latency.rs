//! Latency distributions of the shift-work tools, which divan does not report:
//!
//! * `shiftwork_clock_out` on a 1,000-unit checkpoint on the real filesystem, every fsync included
//!   — p50/p95/p99 over many samples (target p95 < 25 ms; the `p4_` bench of `shiftwork`);
//! * `shiftwork_plan` and `shiftwork_clock_out` on a 1,000-unit checkpoint through the MCP server,
//!   the release binary spoken to over stdio (median of ≥ 30 calls each).
//!
//! Run with `cargo bench -p benches --bench shiftwork_latency` (it builds `target/release/shiftwork-mcp`
//! when missing). Wall-clock figures include whatever else the machine runs; the thread CPU time of
//! the in-process samples is printed beside them. Benchmarks measure; no test asserts a duration.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use shiftwork_core::json::{self, Json};
use shiftwork_core::{Answer, Env};

/// Samples of the clock-out after the warm-up (a test run, without `--bench`, takes a few to check
/// the path).
fn p4_samples() -> usize {
    if common::benching() { 400 } else { 3 }
}
/// Calls of each tool through the MCP server after the warm-up.
fn mcp_calls() -> usize {
    if common::benching() { 60 } else { 3 }
}
fn warm_up() -> usize {
    if common::benching() { 10 } else { 1 }
}

mod common;

use common::stdio::StdioServer;
use common::{checkpoint, p4_clock_out};

fn main() {
    // `cargo bench` passes `--bench`; a further argument filters by name, as divan's do.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wanted("p4_clock_out_1000_units") {
        p4_clock_out_1000_units();
    }
    if wanted("mcp_1000_units") {
        mcp_1000_units();
    }
}

/// A repository holding `.git/` and `.shiftwork/cp.json` with a 1,000-unit checkpoint.
fn repo() -> (tempfile::TempDir, PathBuf) {
    // Beside the build output rather than in /tmp, which may be a tmpfs: the clock-out is about a
    // disk.
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target");
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or(base);
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(&base).unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".shiftwork")).unwrap();
    let cp = dir.path().join(".shiftwork/cp.json");
    std::fs::write(&cp, json::to_checkpoint_text(&checkpoint(1000))).unwrap();
    (dir, cp)
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

/// p50, p95, p99 and max of `samples` (nearest rank).
fn percentiles(samples: &mut [Duration]) -> String {
    samples.sort();
    let rank = |p: f64| {
        let k = ((p / 100.0) * samples.len() as f64).ceil() as usize;
        samples[k.clamp(1, samples.len()) - 1]
    };
    format!(
        "p50 {:>8.3} ms   p95 {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms   (n = {})",
        ms(rank(50.0)),
        ms(rank(95.0)),
        ms(rank(99.0)),
        ms(samples[samples.len() - 1]),
        samples.len()
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The clock-out: the cursor unit is clocked out `blocked`, so it stays the cursor and every sample
/// does the same work: the lock, the read, every gate, the whole-document validation, the cursor
/// move, the ledger line and the durable commit with its fsyncs (temp file, intent, ledger,
/// directory).
fn p4_clock_out_1000_units() {
    let (_dir, cp) = repo();
    let env = Env::os();
    let args = p4_clock_out(&cp);
    let mut wall = Vec::with_capacity(p4_samples());
    let mut cpu = Vec::with_capacity(p4_samples());
    for i in 0..warm_up() + p4_samples() {
        let (c0, t0) = (thread_cpu(), Instant::now());
        let answer = shiftwork_core::clock_out(&env, &args).to_answer();
        let (t, c) = (t0.elapsed(), thread_cpu() - c0);
        assert_eq!(answer.get("result").and_then(Json::as_str), Some("ok"));
        if i >= warm_up() {
            wall.push(t);
            cpu.push(c);
        }
    }
    println!("p4_clock_out_1000_units (target p95 < 25 ms)");
    println!("  wall  {}", percentiles(&mut wall));
    println!("  cpu   {}", percentiles(&mut cpu));
}

/// `shiftwork_plan` and `shiftwork_clock_out` through `shiftwork-mcp serve` (the relative checkpoint
/// path a client would pass; the server's working directory is the repository).
fn mcp_1000_units() {
    let exe = common::server_binary();
    let (dir, _cp) = repo();
    let mut server = StdioServer::start(
        Command::new(&exe)
            .args(["serve", "--tools", "shiftwork"])
            .current_dir(dir.path()),
    );
    let plan = json!({"checkpoint": ".shiftwork/cp.json"});
    let out = json!({
        "checkpoint": ".shiftwork/cp.json",
        "unit_id": "U0",
        "status": "blocked",
        "handoff_patch": {},
        "history_entry": {"unit": "U0", "outcome": "blocked"},
        "accounting": {"tokens": 1234, "duration_ms": 5},
    });
    let build = if common::benching() {
        "release"
    } else {
        "debug, a test run"
    };
    println!("mcp_1000_units (the {build} over stdio; round trip per call)");
    for (tool, arguments, expected) in [
        ("shiftwork_plan", &plan, "plan"),
        ("shiftwork_clock_out", &out, "ok"),
    ] {
        let mut wall = Vec::with_capacity(mcp_calls());
        for i in 0..warm_up() + mcp_calls() {
            let t0 = Instant::now();
            let answer = server.call(tool, arguments.clone());
            let t = t0.elapsed();
            assert_eq!(answer["result"], expected, "{answer}");
            if i >= warm_up() {
                wall.push(t);
            }
        }
        println!("  {tool:<20} {}", percentiles(&mut wall));
    }
}
