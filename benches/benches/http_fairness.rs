//! What one client's load or one hanging issuer costs the rest of the team, through the release
//! `shiftwork-mcp serve --http`.
//!
//! - **One agent holds 1,000 waiting polls.** bob opens 1,000 `poll_next_task` calls with a
//!   `wait_sec` of 60 (each on a connection of its own, sent again when answered `503` for want of a
//!   turn), and they all wait, parked; meanwhile alice calls `hours_check` on a kept-alive connection.
//!   The figure is her call's p50/p95/p99, beside the same call with nobody waiting, and the server's
//!   threads while bob's polls wait.
//! - **`/healthz` while the key set hangs.** The server's JWKS URL answers once (at start-up) and
//!   then never again; eight requests with a JWT naming an unknown key make the server fetch it
//!   again, and that fetch hangs. The figure is `/healthz`'s p50/p99 meanwhile (and with no fetch
//!   in flight).
//!
//! `cargo bench -p benches --bench http_fairness`; `SHIFTWORK_BENCH_QUICK=1` shrinks the samples
//! tenfold. A test run (`cargo test --all-targets`) drives the debug binary with 100 polls as a smoke
//! test.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::Server;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let benching = common::benching();
    let (polls, samples) = if benching {
        (1_000, 2_000 / common::quick())
    } else {
        (100, 20)
    };
    println!("{}", common::cpu_model());
    waiting_polls(polls, samples);
    stalled_key_fetch(samples.min(500));
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .new_agent()
}

fn token(file: &Path, name: &str) -> String {
    let out = Command::new(common::server_binary())
        .args(["token", "add", name, "--file", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A raw `POST /mcp` on a connection of its own, its answer left unread.
fn raw_post(base: &str, token: &str, body: &str) -> TcpStream {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
         Authorization: Bearer {token}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

/// True when the answer on `stream` has come and is a `503`.
fn answered_503(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut head = [0u8; 12];
    let refused = matches!(stream.peek(&mut head), Ok(12) if &head[9..12] == b"503");
    stream.set_nonblocking(false).unwrap();
    refused
}

/// The value of the waiting-poll counter in the server's metrics.
fn waiting_polls_started(agent: &ureq::Agent, base: &str, token: &str) -> usize {
    let text = agent
        .get(format!("{base}/metrics"))
        .header("authorization", format!("Bearer {token}"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(r#"shiftwork_contracts_events_total{event="waiting_poll"} "#))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0) as usize
}

/// `n` timings (µs) of `call`, after a tenth as many unmeasured.
fn timings(n: usize, mut call: impl FnMut()) -> Vec<f64> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let started = Instant::now();
        call();
        if i >= n / 10 {
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    samples.sort_by(f64::total_cmp);
    samples
}

fn pct(samples: &[f64], q: f64) -> f64 {
    samples[((samples.len() as f64 - 1.0) * q) as usize]
}

fn waiting_polls(polls: usize, samples: usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    let alice = token(&file, "alice");
    let bob = token(&file, "bob");
    let db = dir.path().join("contracts.db");
    let server = Server::start(
        &[
            "--tools",
            "contracts,hours",
            "--auth-tokens",
            file.to_str().unwrap(),
            "--contracts-db",
            db.to_str().unwrap(),
        ],
        &[("HOME", dir.path())],
        Some(dir.path()),
    );
    let client = agent();
    let url = format!("{}/mcp", server.base);
    let hours = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hours_check","arguments":{"expression":"Mon-Fri 09:00-17:00","at":"2026-12-04T10:00:00Z"}}}"#;
    let mut call = || {
        let mut answer = client
            .post(&url)
            .header("authorization", format!("Bearer {alice}"))
            .header("content-type", "application/json")
            .send(hours)
            .unwrap();
        assert_eq!(answer.status(), 200);
        let _ = answer.body_mut().read_to_string().unwrap();
    };
    // The store exists before bob waits.
    let inspect = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_mesh_state","arguments":{}}}"#;
    let _ = client
        .post(&url)
        .header("authorization", format!("Bearer {alice}"))
        .header("content-type", "application/json")
        .send(inspect)
        .unwrap()
        .body_mut()
        .read_to_string();
    let idle = timings(samples, &mut call);
    let threads_idle = server.threads();
    let poll = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"poll_next_task","arguments":{"wait_sec":60}}}"#;
    let opening = Instant::now();
    let mut waiting: Vec<TcpStream> = Vec::new();
    let mut refused = 0;
    while waiting.len() < polls {
        let batch = (polls - waiting.len()).min(100);
        let mut pending: Vec<TcpStream> = (0..batch).map(|_| raw_post(&server.base, &bob, poll)).collect();
        loop {
            pending.retain(|s| {
                let busy = answered_503(s);
                refused += usize::from(busy);
                !busy
            });
            if waiting_polls_started(&client, &server.base, &alice) == waiting.len() + pending.len() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        waiting.extend(pending);
    }
    let opened_in = opening.elapsed();
    let threads_waiting = server.threads();
    let loaded = timings(samples, &mut call);
    for stream in &waiting {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        assert!(
            matches!(stream.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "every poll of bob still waits"
        );
    }
    println!(
        "alice's hours_check over HTTP, nobody waiting: p50 {:.0} µs, p95 {:.0} µs, p99 {:.0} µs ({threads_idle} server threads)",
        pct(&idle, 0.5),
        pct(&idle, 0.95),
        pct(&idle, 0.99)
    );
    println!(
        "alice's hours_check over HTTP while bob holds {polls} waiting polls: p50 {:.0} µs, p95 {:.0} µs, p99 {:.0} µs \
         ({threads_waiting} server threads; bob's polls opened in {:.2} s, {refused} sent again after a 503 for a turn)",
        pct(&loaded, 0.5),
        pct(&loaded, 0.95),
        pct(&loaded, 0.99),
        opened_in.as_secs_f64()
    );
}

/// A key-set server answering the first request with `jwks` and holding every later one open.
fn hanging_issuer(jwks: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { break };
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            if n == 0 {
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{jwks}",
                    jwks.len()
                );
            } else {
                held.push(stream);
            }
        }
    });
    url
}

/// A JWT whose header names the key `kid` (its signature is never looked at: the key is unknown).
fn unsigned_jwt(kid: &str) -> String {
    let b64 = |bytes: &[u8]| {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            }
        }
        out
    };
    let header = format!(r#"{{"alg":"RS256","typ":"JWT","kid":"{kid}"}}"#);
    format!(
        "{}.{}.{}",
        b64(header.as_bytes()),
        b64(br#"{"sub":"carol"}"#),
        b64(b"signature")
    )
}

fn jwks_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/mcp-adapter/tests/fixtures/jwt/jwks.json")
}

fn stalled_key_fetch(samples: usize) {
    let dir = tempfile::tempdir().unwrap();
    let url = hanging_issuer(std::fs::read_to_string(jwks_fixture()).unwrap());
    let db = dir.path().join("contracts.db");
    let server = Server::start(
        &[
            "--tools",
            "contracts,hours",
            "--auth-jwt-jwks",
            &url,
            "--auth-jwt-issuer",
            "https://issuer.example",
            "--auth-jwt-audience",
            "http://127.0.0.1/mcp",
            "--contracts-db",
            db.to_str().unwrap(),
        ],
        &[("HOME", dir.path())],
        Some(dir.path()),
    );
    let client = agent();
    let health = format!("{}/healthz", server.base);
    let mut probe = || {
        let mut answer = client.get(&health).call().unwrap();
        assert_eq!(answer.status(), 200);
        let _ = answer.body_mut().read_to_string().unwrap();
    };
    let calm = timings(samples, &mut probe);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let unknown = unsigned_jwt("rotated-in");
    let stalled: Vec<TcpStream> = (0..8).map(|_| raw_post(&server.base, &unknown, ping)).collect();
    std::thread::sleep(Duration::from_millis(50));
    let hanging = timings(samples, &mut probe);
    let mut refused = 0;
    for mut stream in stalled {
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        refused += usize::from(text.starts_with("HTTP/1.1 401"));
    }
    println!(
        "/healthz, no key fetch in flight: p50 {:.0} µs, p99 {:.0} µs",
        pct(&calm, 0.5),
        pct(&calm, 0.99)
    );
    println!(
        "/healthz while the key set's URL hangs (8 requests naming an unknown key wait for the one fetch): \
         p50 {:.0} µs, p99 {:.0} µs; the 8 were refused 401 ({refused} of 8) once their wait for the fetch ended",
        pct(&hanging, 0.5),
        pct(&hanging, 0.99)
    );
}
