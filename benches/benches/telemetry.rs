//! What observability costs a call. The release `shiftwork-mcp serve` over stdio,
//! measured three ways in one run (the samples of the three servers alternate, so the machine's drift
//! touches each alike): with nothing configured (the default), with a log line per request
//! (`RUST_LOG=info`, stderr discarded), and exporting a span per request over OTLP/HTTP to a local
//! receiver (`OTEL_EXPORTER_OTLP_ENDPOINT`). Each measures `ping` (the transport's floor) and a trivial
//! tool call (`hours_check`); the figures are medians and p95 of the round trip, and the difference to
//! the default.
//!
//! `cargo bench -p benches --bench telemetry`. A test run (`cargo test --all-targets`) runs a few
//! calls of each through the debug binary as a smoke test.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use common::stdio::StdioServer;
use serde_json::json;

fn main() {
    let n = if common::benching() {
        3_000 / common::quick()
    } else {
        5
    };
    let receiver = sink();
    let endpoint = format!("http://127.0.0.1:{receiver}");
    let variants: [(&str, Vec<(&str, String)>); 3] = [
        ("nothing configured", vec![]),
        ("log line per request", vec![("RUST_LOG", String::from("info"))]),
        (
            "OTLP span per request",
            vec![("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)],
        ),
    ];
    let mut servers: Vec<StdioServer> = variants
        .iter()
        .map(|(_, env)| {
            let mut cmd = Command::new(common::server_binary());
            cmd.args(["serve", "--tools", "hours"]);
            for (k, v) in env {
                cmd.env(k, v);
            }
            StdioServer::start(&mut cmd)
        })
        .collect();
    let calls = [
        ("ping", json!({"jsonrpc": "2.0", "method": "ping"})),
        (
            "trivial call (hours_check)",
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "hours_check", "arguments": {"expression": "Mon-Fri 09:00-17:00", "at": "2026-12-04T10:00:00Z"}}}),
        ),
    ];
    println!("telemetry overhead, {} samples each, {}", n, common::cpu_model());
    for (name, template) in &calls {
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
        for i in 0..(n + n / 10) {
            for (s, server) in servers.iter_mut().enumerate() {
                let mut line = template.clone();
                line["id"] = json!(server.next_id());
                let (took, answer) = server.timed(&line.to_string());
                assert!(answer.get("result").is_some(), "{answer}");
                if i >= n / 10 {
                    samples[s].push(took);
                }
            }
        }
        let base = median_p95(&samples[0]).0;
        for ((label, _), s) in variants.iter().zip(&samples) {
            let (median, p95) = median_p95(s);
            let delta = median.as_secs_f64() * 1e6 - base.as_secs_f64() * 1e6;
            println!(
                "  {name:<28} {label:<24} median {:>7.1} µs  p95 {:>7.1} µs  ({delta:+.1} µs)",
                median.as_secs_f64() * 1e6,
                p95.as_secs_f64() * 1e6
            );
        }
    }
    for server in servers {
        server.stop();
    }
}

/// A local OTLP/HTTP receiver that answers 200 to every request and keeps nothing: its port.
fn sink() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = line.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = header.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0u8; length];
                    if reader.read_exact(&mut body).is_err()
                        || writer
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                            .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn median_p95(samples: &[Duration]) -> (Duration, Duration) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank =
        |p: f64| sorted[(((p / 100.0) * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    (rank(50.0), rank(95.0))
}
