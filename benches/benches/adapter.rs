//! The cold start of the release binary to its `initialize` answer; and the adapter's own part of
//! every call: reading a `tools/call` line (`wire::decode`, one validating pass) and writing an
//! answer line (`server::call_result_line`), on the 3,000-node `work_plan` request of
//! `mcp_vs_bantamkit` and on a trivial one; and the core's part of that `work_plan` call (read,
//! plan, both answer texts written from the answer's tokens). Round trips through the binary are in
//! `mcp_vs_bantamkit`.
//!
//! The cold start runs `target/release/shiftwork-mcp` (building it first with `cargo build --release -p
//! shiftwork-mcp` when it is missing), so it measures what a user's MCP client waits for.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

mod common;

fn main() {
    divan::main();
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

/// Start the process, send `initialize`, read the answer; the process is then told to stop by closing
/// its stdin (not measured).
#[divan::bench(sample_count = 30)]
fn cold_start_to_initialize(bencher: divan::Bencher<'_, '_>) {
    let exe = common::server_binary();
    bencher.bench_local(|| {
        let mut child = Command::new(&exe)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{INITIALIZE}").unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("shiftwork-mcp"));
        drop(stdin);
        // Returned values are dropped after the sample is timed: the exit is waited for, unmeasured.
        Reap(child)
    });
}

struct Reap(std::process::Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.wait();
    }
}

/// A `tools/call` of `work_plan` over `n` nodes with about two dependencies each (as in
/// `mcp_vs_bantamkit`).
fn work_plan_line(n: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(16);
    let nodes: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let deps: Vec<String> = if i == 0 {
                Vec::new()
            } else {
                (0..2).map(|_| format!("n{}", rng.usize(..i))).collect()
            };
            serde_json::json!({"id": format!("n{i}"), "depends_on": deps, "priority": rng.i64(-50..50)})
        })
        .collect();
    serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "work_plan", "arguments": {"nodes": nodes}}})
        .to_string()
}

/// Reading a request line: the id, the method, the name, the `arguments` text and its keys.
#[divan::bench(args = [0, 3_000])]
fn wire_decode_tools_call(bencher: divan::Bencher<'_, '_>, nodes: usize) {
    let line = work_plan_line(nodes);
    bencher
        .counter(divan::counter::BytesCount::new(line.len()))
        .bench(|| shiftwork_mcp::wire::decode(divan::black_box(line.as_bytes())).unwrap());
}

/// Reading the 3,000-node `work_plan` request line as `serve` does: `decode_with` offers the
/// `arguments` object to `work_plan`'s reader (`PlainNodes`), which reads the nodes once in place of
/// the validation and the handler's reading (compare `wire_decode_tools_call` plus the reading in
/// `work_plan_3000_nodes_read_planned_and_rendered`).
#[divan::bench]
fn wire_decode_with_work_plan_nodes_read(bencher: divan::Bencher<'_, '_>) {
    use std::borrow::Cow;
    let line = work_plan_line(3_000);
    bencher
        .counter(divan::counter::BytesCount::new(line.len()))
        .bench(|| {
            let mut nodes = None;
            let decoded = shiftwork_mcp::wire::decode_with(divan::black_box(line.as_bytes()), &mut |text| {
                let read = shiftwork_core::planner::PlainNodes::read(text)?;
                let len = read.end();
                nodes = Some(read);
                Some((len, vec![Cow::Borrowed("nodes")]))
            });
            assert!(decoded.is_ok());
            nodes.unwrap().ids().len()
        });
}

/// Writing an answer line from a pre-rendered answer (the text block and `structuredContent` spliced
/// as they are): the answer of `work_plan` on 3,000 nodes, about 60 kB of JSON.
#[divan::bench]
fn call_result_line_prerendered_work_plan(bencher: divan::Bencher<'_, '_>) {
    let batches: Vec<Vec<String>> = (0..300)
        .map(|b| (0..10).map(|i| format!("n{}", b * 10 + i)).collect())
        .collect();
    let sequence: Vec<&String> = batches.iter().flatten().collect();
    let answer = serde_json::json!({"result": "plan", "batches": batches, "sequence": sequence, "width": 10});
    let outcome = shiftwork_mcp::Outcome::Prerendered {
        structured: answer.to_string(),
        text_json: Some(serde_json::to_string(&serde_json::to_string_pretty(&answer).unwrap()).unwrap()),
    };
    bencher.bench(|| shiftwork_mcp::server::call_result_line("7", divan::black_box(&outcome)));
}

/// The core's part of a `work_plan` call on the 3,000-node request: the plain reader and the planner
/// (`work_plan_text`), then both texts of the answer written from its tokens (`structuredContent` and
/// the text block, escaped as the message carries it), as the adapter's handler does.
#[divan::bench]
fn work_plan_3000_nodes_read_planned_and_rendered(bencher: divan::Bencher<'_, '_>) {
    use shiftwork_core::Answer;
    use shiftwork_core::json::{Formatter, Style};
    let line = work_plan_line(3_000);
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    let arguments = value["params"]["arguments"].to_string();
    bencher.bench(|| {
        let plan = shiftwork_core::planner::work_plan_text(divan::black_box(&arguments))
            .unwrap()
            .unwrap();
        let (mut structured, mut text) = (String::new(), String::new());
        plan.emit(&mut Formatter::new(&mut structured, Style::STRUCTURED));
        plan.emit(&mut Formatter::new(&mut text, Style::ANSWER.escaped()));
        (structured, text)
    });
}
