//! The MCP path measured through the release binary over stdio, side by side with the reference,
//! bantamkit 0.36.2, in one run, on the same generated inputs:
//!
//! * `work_plan` on 3,000 nodes (target: ≥ 50× faster);
//! * `shiftwork_plan` on a 1,000-unit checkpoint (target: ≥ 100×, raised from a first ≥ 50×);
//! * `shiftwork_clock_out` on a 1,000-unit checkpoint, every fsync included (≥ 30×), and on a
//!   30-unit one, the size of most jobs (≥ 50×);
//! * a trivial call, `work_plan` of no node (target ≤ 100 µs median), and the per-call floor of the
//!   transport, `ping`; `hours_check` and `inspect_mesh_state` (one record) for the other groups.
//!
//! Samples of the two servers alternate, so that whatever else the machine does falls on both. Each
//! figure is the median round trip (request written → answer read) with p95; the ratio is of medians.
//!
//! Run with `cargo bench -p benches --bench mcp_vs_bantamkit` (it builds `target/release/shiftwork-mcp`
//! when missing). The reference is `$BANTAMKIT_MCP`, else `$BANTAMKIT_VENV/bin/bantamkit-mcp`, else
//! `target/bantamkit-0.36.2-venv/bin/bantamkit-mcp` (`scripts/setup.d/10-bantamkit.sh` installs it);
//! without it only our figures are printed. A test run (`cargo test --all-targets`) takes a few samples
//! of the debug binary to check the path.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use shiftwork_core::json as sjson;

mod common;

use common::stdio::StdioServer;

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let ours_exe = common::server_binary();
    let reference = reference();
    let dir = workdir();
    let ours_dir = dir.path().join("ours");
    let theirs_dir = dir.path().join("theirs");
    for d in [&ours_dir, &theirs_dir] {
        std::fs::create_dir_all(d.join(".git")).unwrap();
        std::fs::create_dir_all(d.join(".shiftwork")).unwrap();
        let text = sjson::to_checkpoint_text(&common::checkpoint(1000));
        std::fs::write(d.join(".shiftwork/plan.json"), &text).unwrap();
        std::fs::write(d.join(".shiftwork/out.json"), &text).unwrap();
        let small = sjson::to_checkpoint_text(&common::checkpoint(30));
        std::fs::write(d.join(".shiftwork/out30.json"), &small).unwrap();
    }
    let mut ours = StdioServer::start(
        Command::new(&ours_exe)
            .args(["serve", "--tools", "shiftwork,hours,contracts"])
            .arg("--contracts-db")
            .arg(dir.path().join("contracts.db"))
            .args(["--agent", "bench"])
            .current_dir(&ours_dir),
    );
    let mut theirs = reference.as_ref().map(|exe| {
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        StdioServer::start(
            Command::new(exe)
                .arg("--store")
                .arg(home.join("store"))
                .current_dir(&theirs_dir)
                .env("HOME", &home),
        )
    });
    let build = if common::benching() {
        "release"
    } else {
        "debug, a test run"
    };
    match &reference {
        Some(exe) => println!(
            "ours: {} ({build}); reference: {}",
            ours_exe.display(),
            exe.display()
        ),
        None => println!(
            "ours: {} ({build}); the reference bantamkit 0.36.2 is not installed (scripts/setup.d/10-bantamkit.sh): our figures only",
            ours_exe.display()
        ),
    }
    println!("median round trip per call over stdio (p95), ratio of medians = reference / ours");

    let plan_nodes = json!({"nodes": nodes(3_000, 6_000)});
    let plan = json!({"checkpoint": ".shiftwork/plan.json"});
    let clock_out = json!({
        "checkpoint": ".shiftwork/out.json",
        "unit_id": "U0",
        "status": "blocked",
        "handoff_patch": {},
        "history_entry": {"unit": "U0", "outcome": "blocked"},
        "accounting": {"tokens": 1234, "duration_ms": 5},
    });
    let clock_out_30 = json!({
        "checkpoint": ".shiftwork/out30.json",
        "unit_id": "U0",
        "status": "blocked",
        "handoff_patch": {},
        "history_entry": {"unit": "U0", "outcome": "blocked"},
        "accounting": {"tokens": 1234, "duration_ms": 5},
    });
    let empty = json!({"nodes": []});
    let shift_work = [
        Workload {
            name: "work_plan_3000_nodes",
            tool: "work_plan",
            arguments: &plan_nodes,
            result: "plan",
            samples: samples(40),
            target: Some(50.0),
        },
        Workload {
            name: "shiftwork_plan_1000_units",
            tool: "shiftwork_plan",
            arguments: &plan,
            result: "plan",
            samples: samples(40),
            target: Some(100.0),
        },
        Workload {
            name: "clock_out_1000_units",
            tool: "shiftwork_clock_out",
            arguments: &clock_out,
            result: "ok",
            samples: samples(40),
            target: Some(30.0),
        },
        Workload {
            name: "clock_out_30_units",
            tool: "shiftwork_clock_out",
            arguments: &clock_out_30,
            result: "ok",
            samples: samples(100),
            target: Some(50.0),
        },
        Workload {
            name: "trivial_work_plan_no_node",
            tool: "work_plan",
            arguments: &empty,
            result: "plan",
            samples: samples(2_000),
            target: None,
        },
    ];
    for Workload {
        name,
        tool,
        arguments,
        result: expected,
        samples: n,
        target,
    } in shift_work
    {
        if !wanted(name) {
            continue;
        }
        let request = |id: u64| call_line(id, tool, arguments);
        let check = |answer: &Value| {
            assert_eq!(
                answer["result"]["structuredContent"]["result"],
                expected,
                "{name}: {}",
                &answer.to_string()[..answer.to_string().len().min(300)]
            );
        };
        let (a, b) = side_by_side(&mut ours, theirs.as_mut(), n, &request, &check);
        report(name, &a, b.as_deref(), target);
    }
    if wanted("ping") {
        let (a, _) = side_by_side(&mut ours, None, samples(2_000), &|id| ping_line(id), &|a| {
            assert_eq!(a["result"], json!({}));
        });
        report("ping (the transport's floor)", &a, None, None);
    }
    if wanted("hours_check") {
        let args = json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-03-06T12:00:00Z", "zone": "UTC"});
        let (a, _) = side_by_side(
            &mut ours,
            None,
            samples(2_000),
            &|id| call_line(id, "hours_check", &args),
            &|a| {
                assert_eq!(a["result"]["structuredContent"]["result"], "hours", "{a}");
            },
        );
        report("hours_check", &a, None, None);
    }
    if wanted("inspect_mesh_state") {
        let workspace = tempfile::tempdir().unwrap();
        let dispatch = json!({"target_agent": "bench", "title": "One", "workspace_root": workspace.path(), "pointers": [], "contract_schema": {"type": "object"}});
        let dispatched = ours.call("dispatch_contract", dispatch);
        let id = dispatched["contract_id"].clone();
        assert!(id.is_string(), "{dispatched}");
        let args = json!({"contract_id": id});
        let (a, _) = side_by_side(
            &mut ours,
            None,
            samples(2_000),
            &|id| call_line(id, "inspect_mesh_state", &args),
            &|a| {
                assert!(a["result"]["structuredContent"].is_object(), "{a}");
            },
        );
        report("inspect_mesh_state (1 record)", &a, None, None);
    }
}

fn samples(n: usize) -> usize {
    if common::benching() { n } else { 3 }
}

fn warm_up(n: usize) -> usize {
    if common::benching() {
        (n / 10).clamp(3, 200)
    } else {
        1
    }
}

/// One shift-work call measured on both servers, with the ratio it should reach.
struct Workload<'a> {
    name: &'static str,
    tool: &'static str,
    arguments: &'a Value,
    /// The `result` its answer must carry.
    result: &'static str,
    samples: usize,
    /// The speed-up over the reference it should reach, when it has a target.
    target: Option<f64>,
}

/// The reference server, when installed.
fn reference() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("BANTAMKIT_MCP").map(PathBuf::from),
        std::env::var_os("BANTAMKIT_VENV").map(|v| PathBuf::from(v).join("bin/bantamkit-mcp")),
        Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/bantamkit-0.36.2-venv/bin/bantamkit-mcp"),
        ),
    ];
    candidates.into_iter().flatten().find(|p| p.exists())
}

/// A directory beside the build output (not /tmp, which may be a tmpfs: clock-out is about a disk).
fn workdir() -> tempfile::TempDir {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(&base).unwrap()
}

/// `n` nodes `n0 … n{n-1}` with `edges` dependencies on earlier nodes and priorities -50 … 49, the same
/// for both servers (seeded).
fn nodes(n: usize, edges: usize) -> Vec<Value> {
    let mut rng = fastrand::Rng::with_seed(16);
    let mut deps: Vec<Vec<String>> = vec![Vec::new(); n];
    for _ in 0..edges {
        let to = rng.usize(1..n);
        deps[to].push(format!("n{}", rng.usize(..to)));
    }
    deps.into_iter()
        .enumerate()
        .map(|(i, depends_on)| json!({"id": format!("n{i}"), "depends_on": depends_on, "priority": rng.i64(-50..50)}))
        .collect()
}

fn call_line(id: u64, tool: &str, arguments: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}).to_string()
}

fn ping_line(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()
}

/// Alternating samples of the two servers: round trips of ours and of the reference.
fn side_by_side(
    ours: &mut StdioServer,
    mut theirs: Option<&mut StdioServer>,
    n: usize,
    request: &dyn Fn(u64) -> String,
    check: &dyn Fn(&Value),
) -> (Vec<Duration>, Option<Vec<Duration>>) {
    let mut a = Vec::with_capacity(n);
    let mut b = theirs.as_ref().map(|_| Vec::with_capacity(n));
    for i in 0..warm_up(n) + n {
        let line = request(ours.next_id());
        let (took, answer) = ours.timed(&line);
        check(&answer);
        if i >= warm_up(n) {
            a.push(took);
        }
        if let (Some(server), Some(b)) = (theirs.as_deref_mut(), b.as_mut()) {
            let line = request(server.next_id());
            let (took, answer) = server.timed(&line);
            check(&answer);
            if i >= warm_up(n) {
                b.push(took);
            }
        }
    }
    (a, b)
}

fn report(name: &str, ours: &[Duration], theirs: Option<&[Duration]>, target: Option<f64>) {
    let (a50, a95) = median_p95(ours);
    let line = match theirs {
        Some(theirs) => {
            let (b50, b95) = median_p95(theirs);
            let ratio = b50.as_secs_f64() / a50.as_secs_f64();
            // A test run measures debug builds a few times: its ratios say nothing of the targets,
            // so only a measuring run gives a verdict.
            let verdict = match target {
                Some(t) if !common::benching() => format!("(target ≥ {t}×, judged by cargo bench only)"),
                Some(t) if ratio >= t => format!("target ≥ {t}×: met"),
                Some(t) => format!("target ≥ {t}×: NOT met"),
                None => String::new(),
            };
            format!(
                "ours {} ({})   bantamkit {} ({})   {ratio:>6.1}×   {verdict}",
                fmt(a50),
                fmt(a95),
                fmt(b50),
                fmt(b95)
            )
        }
        None => format!("ours {} ({})", fmt(a50), fmt(a95)),
    };
    println!("  {name:<30} {line}   (n = {})", ours.len());
}

fn median_p95(samples: &[Duration]) -> (Duration, Duration) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank =
        |p: f64| sorted[(((p / 100.0) * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    (rank(50.0), rank(95.0))
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:>7.1} µs")
    } else {
        format!("{:>7.2} ms", us / 1000.0)
    }
}
