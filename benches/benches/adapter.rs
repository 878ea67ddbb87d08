//! MC-6: cold start of the release binary to its `initialize` answer, and one `tools/list` round trip.
//!
//! The bench runs `target/release/shiftwork-mcp` (building it first with `cargo build --release -p
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
