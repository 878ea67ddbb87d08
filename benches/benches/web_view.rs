//! The web view cannot hurt the server. The release `shiftwork-mcp serve --http`
//! serves a job, a contracts store and the web view; one client makes tool calls over a kept-alive
//! connection, and the figure is their p50/p99 with no page open and with 200 open pages, the two
//! phases alternating in four rounds (so a change of the machine's load hits both): 200 signed-in
//! event streams of which 50 never read what they are sent (slow readers), one page that asks for
//! the data document as fast as it can, and the job changing ten times a second (an accounting line
//! appended to its ledger). Each page is a session of its own (20 agents, 10 sessions each). It also
//! reports how long a change takes to reach an open page (ledger line written → event received).
//!
//! `cargo bench -p benches --bench web_view`; `SHIFTWORK_BENCH_QUICK=1` shrinks the workload tenfold.
//! A test run (`cargo test --all-targets`) drives the debug binary with 20 pages as a smoke test.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::http::{Client, Server, token_file};
use serde_json::{Value, json};

const CHECKPOINT: &str = r#"{"version": 1, "job": {"id": "bench", "goal": "Measure the view", "done_definition": "make", "constraints": [], "budget": {"units": 60}}, "plan": {"cursor": "A", "units": [
{"id": "A", "title": "Write the parser", "brief_path": "b/A.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "true", "touches": ["src/p.rs"]},
{"id": "B", "title": "Parser errors", "brief_path": "b/B.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "true", "touches": ["src/p.rs"]},
{"id": "C", "title": "Review the parser", "brief_path": "b/C.md", "status": "todo", "role": "reviewer", "depends_on": ["A"], "verify": "true"},
{"id": "D", "title": "Release notes", "brief_path": "b/D.md", "status": "todo", "role": "planner", "depends_on": ["C"], "verify": "true"}]},
"state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "Start.", "open_questions": [], "do_not": []}}
"#;

fn main() {
    let benching = common::benching();
    let quick = std::env::var("SHIFTWORK_BENCH_QUICK").is_ok_and(|v| v == "1");
    let (calls, pages, slow) = match (benching, quick) {
        (true, false) => (5_000, 200, 50),
        (true, true) => (500, 200, 50),
        (false, _) => (50, 20, 5),
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".shiftwork")).unwrap();
    std::fs::write(root.join(".shiftwork/checkpoint.json"), CHECKPOINT).unwrap();
    let agents = 20;
    let file = root.join("tokens");
    let tokens = token_file(
        &file,
        (0..agents)
            .map(|i| format!("viewer{i:02}"))
            .chain([String::from("caller")]),
    );
    let server = Server::start(
        &[
            "--tools",
            "shiftwork,contracts,hours",
            "--auth-tokens",
            file.to_str().unwrap(),
            "--roots",
            root.to_str().unwrap(),
            "--contracts-db",
            root.join("c.db").to_str().unwrap(),
        ],
        &[("HOME", &root)],
        Some(&root),
    );
    let mut client = Client::new(&server.base, &tokens[agents]);
    let checkpoint = root.join(".shiftwork/checkpoint.json").display().to_string();
    let tools: [(&str, Value); 2] = [
        (
            "hours_check",
            json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-12-04T10:00:00Z"}),
        ),
        ("shiftwork_status", json!({"checkpoint": checkpoint})),
    ];
    // 200 pages: sessions, streams (some never read), a page asking as fast as it can, a changing job.
    let cookies = sign_in(&server.base, &tokens[..agents], pages);
    // The two phases alternate, so a change of the machine's load hits both.
    let rounds = if benching { 4 } else { 1 };
    let mut without: Vec<Vec<u64>> = vec![Vec::new(); tools.len()];
    let mut with: Vec<Vec<u64>> = vec![Vec::new(); tools.len()];
    let (mut events, mut delays) = (0u64, Vec::new());
    for _ in 0..rounds {
        for ((tool, args), samples) in tools.iter().zip(&mut without) {
            samples.extend(timed_calls(&mut client, tool, args, calls / rounds));
        }
        let open = Pages::open(&server.base, &cookies, slow, &root);
        std::thread::sleep(Duration::from_secs(2));
        for ((tool, args), samples) in tools.iter().zip(&mut with) {
            samples.extend(timed_calls(&mut client, tool, args, calls / rounds));
        }
        let (sent, waited) = open.close();
        events += sent;
        delays.extend(waited);
        // The server notices the closed streams before the next phase without pages.
        std::thread::sleep(Duration::from_millis(1500));
    }
    delays.sort_unstable();
    for (((tool, _), before), during) in tools.iter().zip(without).zip(with) {
        let ((p50, p99), (q50, q99)) = (percentiles(before), percentiles(during));
        println!(
            "{tool} over HTTP: p50 {p50} µs, p99 {p99} µs with no page open; p50 {q50} µs, p99 {q99} µs with {pages} open pages ({slow} never reading, one asking as fast as it can, the job changing 10 times a second; {rounds} alternating rounds): p99 {:+.1} %",
            (q99 as f64 - p99 as f64) * 100.0 / p99.max(1) as f64
        );
    }
    if !delays.is_empty() {
        let at = |q: f64| delays[((delays.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
        println!(
            "a change reaches an open page (ledger line written → event received): median {:.0} ms, p99 {:.0} ms over {} changes; {events} events sent to the reading pages",
            at(0.5),
            at(0.99),
            delays.len(),
        );
    }
}

/// The open pages of one phase: their threads, the streams that never read, and what they saw.
struct Pages {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    held: Vec<TcpStream>,
    events: Arc<AtomicU64>,
    delays: Arc<Mutex<Vec<u64>>>,
}

impl Pages {
    /// Opens a page per cookie (the first `slow` never read), one page asking for the data document
    /// as fast as it can, and a writer appending a line to the job's ledger ten times a second.
    fn open(base: &str, cookies: &[String], slow: usize, root: &std::path::Path) -> Pages {
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(AtomicU64::new(0));
        let changed_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        let delays: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(Vec::new()));
        let mut held: Vec<TcpStream> = Vec::new();
        let mut threads = Vec::new();
        for (i, cookie) in cookies.iter().enumerate() {
            let stream = open_stream(base, cookie);
            if i < slow {
                // A slow reader: it asked, and never reads.
                held.push(stream);
                continue;
            }
            let stop = Arc::clone(&stop);
            let events = Arc::clone(&events);
            let timing = (i == slow).then(|| (Arc::clone(&changed_at), Arc::clone(&delays)));
            stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
            threads.push(std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while !stop.load(Ordering::Relaxed) {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) => return,
                        Ok(_) if line.starts_with("event: state") => {
                            events.fetch_add(1, Ordering::Relaxed);
                            if let Some((changed_at, delays)) = &timing
                                && let Some(at) = changed_at.lock().unwrap().take()
                            {
                                delays.lock().unwrap().push(at.elapsed().as_micros() as u64);
                            }
                        }
                        _ => {}
                    }
                }
            }));
        }
        {
            let stop = Arc::clone(&stop);
            let base = base.to_owned();
            let cookie = cookies[cookies.len() - 1].clone();
            threads.push(std::thread::spawn(move || {
                let agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .new_agent();
                while !stop.load(Ordering::Relaxed) {
                    let _ = agent
                        .get(format!("{base}/ui/state"))
                        .header("cookie", cookie.as_str())
                        .call()
                        .map(|mut r| r.body_mut().read_to_vec());
                }
            }));
        }
        {
            let stop = Arc::clone(&stop);
            let ledger = root.join(".shiftwork/checkpoint.json.log.jsonl");
            let changed_at = Arc::clone(&changed_at);
            threads.push(std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let line = format!(
                        "{{\"ts\": \"2026-09-21T10:00:00Z\", \"unit\": \"A\", \"role\": \"implementer\", \"status\": \"blocked\", \"tokens\": {n}, \"duration_ms\": 1, \"briefed\": false}}\n"
                    );
                    let mut file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&ledger)
                        .unwrap();
                    file.write_all(line.as_bytes()).unwrap();
                    drop(file);
                    changed_at.lock().unwrap().get_or_insert_with(Instant::now);
                    std::thread::sleep(Duration::from_millis(100));
                }
            }));
        }
        Pages {
            stop,
            threads,
            held,
            events,
            delays,
        }
    }

    /// Closes every page: the events the reading pages received, and each change's delay (µs).
    fn close(self) -> (u64, Vec<u64>) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().unwrap();
        }
        drop(self.held);
        let delays = self.delays.lock().unwrap().clone();
        (self.events.load(Ordering::Relaxed), delays)
    }
}

/// The times of `n` calls of `tool` (after `n / 10` to warm up), in µs.
fn timed_calls(client: &mut Client, tool: &str, arguments: &Value, n: usize) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let started = Instant::now();
        let answer = client.call(tool, arguments.clone());
        let took = started.elapsed().as_micros() as u64;
        assert!(answer.is_object(), "{tool}: {answer}");
        if i >= n / 10 {
            samples.push(took);
        }
    }
    samples
}

/// p50 and p99 of `samples`.
fn percentiles(mut samples: Vec<u64>) -> (u64, u64) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99))
}

/// `pages` sessions, spread over the viewers' tokens: their cookies (`name=value`).
fn sign_in(base: &str, tokens: &[String], pages: usize) -> Vec<String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .new_agent();
    let mut cookies = Vec::new();
    while cookies.len() < pages {
        let token = &tokens[cookies.len() % tokens.len()];
        let response = agent
            .post(format!("{base}/ui/sign-in"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", base)
            .send(format!("token={token}"))
            .unwrap();
        match response.status().as_u16() {
            303 => {
                let set = response.headers().get("set-cookie").unwrap().to_str().unwrap();
                cookies.push(set.split(';').next().unwrap().to_owned());
            }
            429 => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("sign-in answered {other}"),
        }
    }
    cookies
}

/// An event stream opened with `cookie`, its headers read.
fn open_stream(base: &str, cookie: &str) -> TcpStream {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /ui/events HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}
