//! The third hostile round (issue 34) through the real binary, one test per class, on every transport
//! (stdio, HTTP) and store (SQLite, and PostgreSQL when `SHIFTWORK_TEST_POSTGRES_URL` names a server)
//! it applies to:
//!
//! - cancellation at every step (item 3): a poll whose client goes away at each step between its
//!   claim and its answer leaves no claim held by nobody;
//! - work done elsewhere (item 5): a key set that never answers stalls nothing but the requests that
//!   need it, and is fetched once, not once per request;
//! - fairness (item 6): one agent holding 1,024 waiting polls holds no thread for them, more are
//!   refused, and the team's calls are answered meanwhile;
//! - credentials during a wait (item 7): a token revoked, a key withdrawn or a JWT expired while a
//!   poll waits claims nothing and gets `401`;
//! - files named by options (items 8, 9): a token or key-set file made unsafe or unreadable lets no
//!   token in, at once; a device, a FIFO or a huge file named by any option is refused without
//!   blocking or reading it whole; a signal ends start-up at any step;
//! - a closed reader (item 15): every command printing into a closed pipe exits 0 quietly.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::{Binary, HttpServer, add_token, contract_stores, raw_answer, raw_post};

/// The steps a poll can be stopped at: the library's pause points, and the adapter's after the poll
/// answered (before the transport sends the answer).
const STEPS: [&str; 4] = [
    "poll-before-claim",
    "poll-after-claim",
    "poll-after-verify",
    "poll-answered",
];

/// A server in `dir` (also its `HOME` and the contracts' allowed root) with the token file `tokens`
/// and the contracts store `db`, and `env` besides.
fn token_server(dir: &Path, tokens: &Path, db: &str, env: &[(&str, &str)]) -> HttpServer {
    let home = dir.to_str().unwrap();
    let mut all = vec![("HOME", home)];
    all.extend_from_slice(env);
    HttpServer::start(
        dir,
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--contracts-db",
            db,
            "--contracts-roots",
            home,
        ],
        &all,
    )
}

fn structured(reply: &Value) -> Value {
    reply["result"]["structuredContent"].clone()
}

/// A workspace with one pointer file, inside `dir`.
fn workspace(dir: &Path) -> PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn add() {}\n").unwrap();
    ws
}

fn dispatch_args(ws: &Path) -> Value {
    json!({"target_agent": "bob", "title": "Review", "workspace_root": ws, "pointers": ["src/lib.rs"]})
}

/// A stdio server's stderr, gathered line by line on a thread.
fn gather(stderr: std::process::ChildStderr) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            seen.lock().unwrap().push(line);
        }
    });
    lines
}

fn wait_for_line(lines: &Mutex<Vec<String>>, needle: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !lines.lock().unwrap().iter().any(|l| l.contains(needle)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never said '{needle}': {:?}",
            lines.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Issue 34 item 3 (cancellation at every step), over stdio: bob's poll is held at each step by the
/// test build's pause point, cancelled there (`notifications/cancelled`), and the contract is not
/// left claimed by nobody: bob's next poll claims it, under the next epoch.
#[test]
fn issue34_item3_a_poll_cancelled_at_every_step_over_stdio_strands_no_claim() {
    if !shiftwork_contracts::failpoints::COMPILED {
        panic!("the tests' binary is built with the contracts' pause points (a dev-dependency feature)");
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let home = dir.path().to_str().unwrap();
    for (store, db, _keep) in contract_stores(dir.path()) {
        for step in STEPS {
            let mut server = Binary::serve(
                &[
                    "--contracts-db",
                    &db,
                    "--contracts-roots",
                    home,
                    "--agent",
                    "alice",
                ],
                &[("HOME", home), ("SHIFTWORK_TEST_PAUSE_AT", step)],
            );
            let lines = gather(server.take_stderr());
            server.initialize();
            let sent = structured(&server.request(
                "tools/call",
                json!({"name": "dispatch_contract", "arguments": dispatch_args(&ws)}),
            ));
            let id = sent["contract_id"].clone();
            assert!(id.is_string(), "{store} {step}: {sent}");
            server.send(&json!({"jsonrpc": "2.0", "id": "held", "method": "tools/call",
                "params": {"name": "poll_next_task", "arguments": {"agent_id": "bob"}}}));
            wait_for_line(&lines, &format!("test pause at {step}"));
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "held", "reason": "gone"}}));
            // The claim the held poll made (or makes, once released) goes back to the queue.
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            let next = loop {
                let next = structured(&server.request(
                    "tools/call",
                    json!({"name": "poll_next_task", "arguments": {"agent_id": "bob"}}),
                ));
                if next["has_task"] == true || std::time::Instant::now() > deadline {
                    break next;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            check_reclaimed(store, step, &next, &id);
            let (status, out, _) = server.close();
            assert!(status.success(), "{store} {step}");
            assert!(
                !out.contains("\"id\":\"held\""),
                "{store} {step}: a cancelled call is not answered: {out}"
            );
        }
    }
}

/// Issue 34 item 3 (cancellation at every step), over HTTP: bob's poll is held at each step, its
/// client goes away there (the connection closes), and the contract is not left claimed by nobody.
/// The undo is registered before the poll can claim, so it runs whenever the answer is dropped.
#[test]
fn issue34_item3_a_poll_whose_client_goes_away_at_every_step_strands_no_claim() {
    if !shiftwork_contracts::failpoints::COMPILED {
        panic!("the tests' binary is built with the contracts' pause points (a dev-dependency feature)");
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let tokens = dir.path().join("tokens");
    let alice = add_token(&tokens, "alice");
    let bob = add_token(&tokens, "bob");
    for (store, db, _keep) in contract_stores(dir.path()) {
        for step in STEPS {
            let server = token_server(dir.path(), &tokens, &db, &[("SHIFTWORK_TEST_PAUSE_AT", step)]);
            let sent = structured(&server.call(&alice, "dispatch_contract", dispatch_args(&ws)));
            let id = sent["contract_id"].clone();
            assert!(id.is_string(), "{store} {step}: {sent}");
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "poll_next_task", "arguments": {}}});
            let held = raw_post(&server.base, &bob, &body.to_string());
            server.wait_for_stderr(&format!("test pause at {step}"));
            held.shutdown(std::net::Shutdown::Both).unwrap();
            drop(held);
            // The claim the held poll made (or makes, once released) goes back to the queue.
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            let next = loop {
                let next = structured(&server.call(&bob, "poll_next_task", json!({})));
                if next["has_task"] == true || std::time::Instant::now() > deadline {
                    break next;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            check_reclaimed(store, step, &next, &id);
        }
    }
}

/// The next poll of bob claimed the contract `id` after a poll held at `step` was cancelled: the
/// held poll's claim went back to the queue (so this claim is the second), or — stopped before it
/// claimed — the held poll's claim came second and was undone.
fn check_reclaimed(store: &str, step: &str, next: &Value, id: &Value) {
    assert_eq!(next["has_task"], true, "{store} {step}: {next}");
    assert_eq!(&next["contract"]["contract_id"], id, "{store} {step}: {next}");
    if step != "poll-before-claim" {
        assert_eq!(next["contract"]["claim_epoch"], 2, "{store} {step}: {next}");
    }
}

/// A key set server: answers the first `answered` requests with the key set at `jwks`, holds every
/// later one open without answering; counts the requests, and says when a held client gave up.
struct KeyServer {
    url: String,
    requests: Arc<AtomicUsize>,
    gave_up: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
}

impl KeyServer {
    fn start(jwks: String, answered: usize) -> KeyServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let gave_up = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let (counted, quit, freed) = (Arc::clone(&requests), Arc::clone(&gave_up), Arc::clone(&release));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let n = counted.fetch_add(1, Ordering::SeqCst);
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                if n < answered {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{jwks}",
                        jwks.len()
                    );
                    continue;
                }
                let (quit, freed) = (Arc::clone(&quit), Arc::clone(&freed));
                std::thread::spawn(move || {
                    stream.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                    let mut byte = [0u8; 1];
                    while !freed.load(Ordering::SeqCst) {
                        match stream.read(&mut byte) {
                            Ok(0) => {
                                quit.store(true, Ordering::SeqCst);
                                return;
                            }
                            Ok(_) => {}
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                ) => {}
                            Err(_) => {
                                quit.store(true, Ordering::SeqCst);
                                return;
                            }
                        }
                    }
                });
            }
        });
        KeyServer {
            url,
            requests,
            gave_up,
            release,
        }
    }
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.release.store(true, Ordering::SeqCst);
    }
}

const ISSUER: &str = "https://issuer.example";
const AUDIENCE: &str = "http://127.0.0.1/mcp";

fn jwt_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jwt")
        .join(name)
}

/// A JWT for `sub` signed by the fixture key `key` (RS256), naming the key id `kid`, expiring at `exp`.
fn jwt(key: &str, kid: &str, sub: &str, exp: i64) -> String {
    let pem = std::fs::read(jwt_fixture(&format!("{key}.pem"))).unwrap();
    let (alg, encoding) = if key.ends_with("-ec") {
        (
            jsonwebtoken::Algorithm::ES256,
            jsonwebtoken::EncodingKey::from_ec_pem(&pem).unwrap(),
        )
    } else {
        (
            jsonwebtoken::Algorithm::RS256,
            jsonwebtoken::EncodingKey::from_rsa_pem(&pem).unwrap(),
        )
    };
    let mut header = jsonwebtoken::Header::new(alg);
    header.kid = Some(kid.to_owned());
    let now = chrono::Utc::now().timestamp();
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": exp, "nbf": now - 10, "iat": now});
    jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
}

/// The fixture key set with only the keys `kids`.
fn key_set(kids: &[&str]) -> String {
    let mut set: Value = serde_json::from_slice(&std::fs::read(jwt_fixture("jwks.json")).unwrap()).unwrap();
    set["keys"]
        .as_array_mut()
        .unwrap()
        .retain(|k| kids.contains(&k["kid"].as_str().unwrap_or("")));
    set.to_string()
}

fn jwt_args<'a>(jwks: &'a str, db: &'a str) -> Vec<&'a str> {
    vec![
        "--auth-jwt-jwks",
        jwks,
        "--auth-jwt-issuer",
        ISSUER,
        "--auth-jwt-audience",
        AUDIENCE,
        "--contracts-db",
        db,
    ]
}

/// Issue 34 item 5 (work done elsewhere): the key set is fetched on a thread of its own, one fetch at
/// a time, at most once a minute. While a fetch hangs — the issuer's URL never answers — eight
/// requests naming an unknown key wait for that one fetch (then are refused, without a thread held),
/// and `/healthz` and a valid token's call are answered before the hanging fetch has given up.
#[test]
fn issue34_item5_a_key_fetch_that_never_answers_stalls_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let keys = KeyServer::start(key_set(&["issuer-rsa", "issuer-ec"]), 1);
    let db = dir.path().join("contracts.db");
    let server = HttpServer::start(
        dir.path(),
        &jwt_args(&keys.url, db.to_str().unwrap()),
        &[("HOME", dir.path().to_str().unwrap())],
    );
    assert_eq!(
        keys.requests.load(Ordering::SeqCst),
        1,
        "fetched once at start-up"
    );
    let now = chrono::Utc::now().timestamp();
    let unknown = jwt("other-rsa", "rotated-in", "carol", now + 600);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let stalled: Vec<TcpStream> = (0..8).map(|_| raw_post(&server.base, &unknown, &ping)).collect();
    // One fetch starts, and hangs.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while keys.requests.load(Ordering::SeqCst) < 2 {
        assert!(std::time::Instant::now() < deadline, "no fetch started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let health = server.get("/healthz");
    assert_eq!(health.status, 200, "{health:?}");
    let valid = jwt("issuer-rsa", "issuer-rsa", "carol", now + 600);
    let answered = server.post(Some(&valid), &[], &ping);
    assert_eq!(answered.status, 200, "{answered:?}");
    assert!(
        !keys.gave_up.load(Ordering::SeqCst),
        "the server was answered while its key fetch still hung"
    );
    for stream in stalled {
        let (status, body) = raw_answer(stream);
        assert_eq!(status, 401, "{body}");
        assert!(body.contains("no key of the issuer signed it"), "{body}");
    }
    assert_eq!(
        keys.requests.load(Ordering::SeqCst),
        2,
        "eight requests, one fetch"
    );
    // Within the minute, an unknown key is refused at once, without another fetch.
    let again = server.post(Some(&unknown), &[], &ping);
    assert_eq!(again.status, 401, "{again:?}");
    assert_eq!(keys.requests.load(Ordering::SeqCst), 2);
}

/// True when the answer on `stream` has come and is a `503` (a poll refused a turn, to be sent again).
fn answered_503(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut head = [0u8; 12];
    let refused = matches!(stream.peek(&mut head), Ok(12) if &head[9..12] == b"503");
    stream.set_nonblocking(false).unwrap();
    refused
}

/// Issue 34 item 6 (fairness between identities), on every store: bob holds 1,024 waiting polls —
/// parked as state, with no thread each (the server's threads stay far below one per poll) — and
/// his next one is refused `503` naming the bound; meanwhile alice's calls are answered while every
/// poll of bob still waits, and her dispatch wakes one of them.
#[test]
fn issue34_item6_one_agent_cannot_starve_the_team() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let tokens = dir.path().join("tokens");
    let alice = add_token(&tokens, "alice");
    let bob = add_token(&tokens, "bob");
    for (store, db, _keep) in contract_stores(dir.path()) {
        let server = token_server(dir.path(), &tokens, &db, &[]);
        // The store exists before the polls wait.
        structured(&server.call(&alice, "inspect_mesh_state", json!({})));
        let before = server.scrape(&alice);
        let already = support::sample(
            &before,
            r#"shiftwork_contracts_events_total{event="waiting_poll"}"#,
        )
        .unwrap_or(0.0);
        let bound = shiftwork_mcp::http::MAX_PARKED_PER_AGENT;
        let poll = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "poll_next_task", "arguments": {"wait_sec": 60}}})
        .to_string();
        let mut waiting: Vec<TcpStream> = Vec::new();
        // Bob opens his polls a batch at a time; a poll refused because his calls wait for a turn
        // (503, Retry-After) is sent again.
        while waiting.len() < bound {
            let batch = (bound - waiting.len()).min(100);
            let mut pending: Vec<TcpStream> =
                (0..batch).map(|_| raw_post(&server.base, &bob, &poll)).collect();
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                pending.retain(|stream| !answered_503(stream));
                let parked = support::sample(
                    &server.scrape(&alice),
                    r#"shiftwork_contracts_events_total{event="waiting_poll"}"#,
                )
                .unwrap_or(0.0)
                    - already;
                if parked as usize == waiting.len() + pending.len() {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{store}: the polls never settled"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            waiting.extend(pending);
        }
        // Every poll of bob waits, each parked: far fewer threads than polls.
        let threads = server.threads();
        assert!(
            threads < 200,
            "{store}: {threads} threads for {bound} waiting polls"
        );
        let over = raw_post(&server.base, &bob, &poll);
        let (status, body) = raw_answer(over);
        assert_eq!(status, 503, "{store}: {body}");
        assert!(
            body.contains(&format!("already has {bound} waiting polls")),
            "{store}: {body}"
        );
        // Alice is served while all of bob's polls still wait.
        let hours = server.call(
            &alice,
            "hours_check",
            json!({"expression": "Mon-Fri 09:00-17:00"}),
        );
        assert!(
            hours["result"]["structuredContent"].is_object(),
            "{store}: {hours}"
        );
        let looked = structured(&server.call(&alice, "inspect_mesh_state", json!({})));
        assert_eq!(looked["ok"], true, "{store}: {looked}");
        for stream in &waiting {
            stream.set_nonblocking(true).unwrap();
            let mut byte = [0u8; 1];
            let unanswered =
                matches!(stream.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
            assert!(
                unanswered,
                "{store}: a poll of bob answered before alice was served"
            );
            stream.set_nonblocking(false).unwrap();
        }
        // Her dispatch wakes one of them.
        let sent = structured(&server.call(&alice, "dispatch_contract", dispatch_args(&ws)));
        let id = sent["contract_id"].clone();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let claimed = loop {
            let seen = structured(&server.call(&alice, "inspect_mesh_state", json!({"contract_id": id})));
            if seen["contracts"][0]["status"] == "CLAIMED" || std::time::Instant::now() > deadline {
                break seen;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(claimed["contracts"][0]["status"], "CLAIMED", "{store}: {claimed}");
        drop(waiting);
    }
}

/// Issue 34 item 7 (credentials during a wait), on every store: bob's poll waits; his token is
/// revoked; alice then dispatches to bob. The poll wakes, claims nothing (its credentials are judged
/// before a claim) and answers `401`; the contract stays waiting for an agent that may take it.
#[test]
fn issue34_item7_a_token_revoked_while_its_poll_waits_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    for (store, db, _keep) in contract_stores(dir.path()) {
        let tokens = dir.path().join(format!("tokens-{store}"));
        let alice = add_token(&tokens, "alice");
        let bob = add_token(&tokens, "bob");
        let server = token_server(dir.path(), &tokens, &db, &[]);
        structured(&server.call(&alice, "inspect_mesh_state", json!({})));
        let poll = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "poll_next_task", "arguments": {"wait_sec": 60}}})
        .to_string();
        let waiting = raw_post(&server.base, &bob, &poll);
        server.wait_for_waiting_polls(&alice, 1.0);
        let out = support::run(
            &["token", "revoke", "bob", "--file", tokens.to_str().unwrap()],
            &[],
        );
        assert!(out.status.success(), "{store}");
        let sent = structured(&server.call(&alice, "dispatch_contract", dispatch_args(&ws)));
        let (status, body) = raw_answer(waiting);
        assert_eq!(status, 401, "{store}: {body}");
        assert!(body.contains("revoked"), "{store}: {body}");
        let seen = structured(&server.call(
            &alice,
            "inspect_mesh_state",
            json!({"contract_id": sent["contract_id"]}),
        ));
        assert_eq!(seen["contracts"][0]["status"], "SUBMITTED", "{store}: {seen}");
        assert_eq!(seen["contracts"][0]["claim_epoch"], 0, "{store}: {seen}");
    }
}

/// Issue 34 item 7 for JWTs: a poll whose key the issuer withdrew from its key set (a key-set file,
/// read again when it changes), or whose JWT expired while it waited, claims nothing and gets `401`.
#[test]
fn issue34_item7_a_jwt_withdrawn_or_expired_while_its_poll_waits_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let home = dir.path().to_str().unwrap();
    let jwks = dir.path().join("jwks.json");
    let now = chrono::Utc::now().timestamp();
    let alice = jwt("issuer-ec", "issuer-ec", "alice", now + 3600);
    for (store, db, _keep) in contract_stores(dir.path()) {
        for case in ["withdrawn", "expired"] {
            std::fs::write(&jwks, key_set(&["issuer-rsa", "issuer-ec"])).unwrap();
            let mut args = jwt_args(jwks.to_str().unwrap(), &db);
            args.extend(["--contracts-roots", home]);
            let server = HttpServer::start(dir.path(), &args, &[("HOME", home)]);
            structured(&server.call(&alice, "inspect_mesh_state", json!({})));
            let before = support::sample(
                &server.scrape(&alice),
                r#"shiftwork_contracts_events_total{event="waiting_poll"}"#,
            )
            .unwrap_or(0.0);
            let poll = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "poll_next_task", "arguments": {"wait_sec": 60}}})
            .to_string();
            let now = chrono::Utc::now().timestamp();
            // Expiring: with the 60 s of leeway, valid for 3 s more.
            let exp = if case == "expired" { now - 57 } else { now + 3600 };
            let token = jwt("issuer-rsa", "issuer-rsa", "bob", exp);
            let waiting = raw_post(&server.base, &token, &poll);
            server.wait_for_waiting_polls(&alice, before + 1.0);
            if case == "withdrawn" {
                std::fs::write(&jwks, key_set(&["issuer-ec"])).unwrap();
            } else {
                std::thread::sleep(Duration::from_secs(4));
            }
            let sent = structured(&server.call(&alice, "dispatch_contract", dispatch_args(&ws)));
            let (status, body) = raw_answer(waiting);
            assert_eq!(status, 401, "{store} {case}: {body}");
            let seen = structured(&server.call(
                &alice,
                "inspect_mesh_state",
                json!({"contract_id": sent["contract_id"]}),
            ));
            assert_eq!(
                seen["contracts"][0]["status"], "SUBMITTED",
                "{store} {case}: {seen}"
            );
            assert_eq!(seen["contracts"][0]["claim_epoch"], 0, "{store} {case}: {seen}");
            // Clear the queue for the next case: alice withdraws her contract.
            structured(&server.call(
                &alice,
                "cancel_contract",
                json!({"contract_id": sent["contract_id"], "reason": "test"}),
            ));
        }
    }
}

/// The user a server runs as in the tests that need a file to be unreadable to it: as root nothing
/// is unreadable, so a root test runs the server as `nobody` (65534) and hands it its files.
fn server_user() -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } == 0).then_some(65534)
}

fn chown(path: &Path, uid: Option<u32>) {
    if let Some(uid) = uid {
        std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Issue 34 item 8 (files named by options: safety re-checked on every reload): a token file made
/// writable by others, a directory made writable by others, a file made unreadable, a file replaced
/// by a link — each lets no token in at the next request, without a restart; put right, the tokens
/// work again. The same for a key-set file.
#[test]
fn issue34_item8_a_credential_file_made_unsafe_or_unreadable_lets_no_token_in() {
    let base = tempfile::tempdir().unwrap();
    let uid = server_user();
    chmod(base.path(), 0o755);
    let dir = base.path().join("keys");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    let tokens = dir.join("tokens");
    let alice = add_token(&tokens, "alice");
    chown(&tokens, uid);
    chown(&dir, uid);
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, key_set(&["issuer-rsa", "issuer-ec"])).unwrap();
    chmod(&jwks, 0o600);
    chown(&jwks, uid);
    let now = chrono::Utc::now().timestamp();
    let carol = jwt("issuer-rsa", "issuer-rsa", "carol", now + 3600);
    let work = base.path().join("work");
    std::fs::create_dir(&work).unwrap();
    chown(&work, uid);
    let db = work.join("contracts.db");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let ways: [(&str, &Path, &String, Vec<&str>); 2] = [
        (
            "token file",
            &tokens,
            &alice,
            vec!["--auth-tokens", tokens.to_str().unwrap()],
        ),
        (
            "key set file",
            &jwks,
            &carol,
            jwt_args(jwks.to_str().unwrap(), db.to_str().unwrap()),
        ),
    ];
    for (what, file, token, args) in ways {
        let server = HttpServer::start_as(
            &work,
            "127.0.0.1:0",
            &args,
            &[("HOME", work.to_str().unwrap())],
            ureq::tls::TlsConfig::default(),
            uid,
        );
        let status = || server.post(Some(token), &[], &ping).status;
        assert_eq!(status(), 200, "{what}");
        let link = dir.join("elsewhere");
        std::fs::copy(file, &link).unwrap();
        chown(&link, uid);
        type Change<'a> = (&'a str, Box<dyn Fn() + 'a>, Box<dyn Fn() + 'a>);
        let changes: Vec<Change<'_>> = vec![
            (
                "chmod o+w",
                Box::new(|| chmod(file, 0o602)),
                Box::new(|| chmod(file, 0o600)),
            ),
            (
                "chmod g+w",
                Box::new(|| chmod(file, 0o620)),
                Box::new(|| chmod(file, 0o600)),
            ),
            (
                "a directory others may write",
                Box::new(|| chmod(&dir, 0o777)),
                Box::new(|| chmod(&dir, 0o700)),
            ),
            (
                "unreadable",
                Box::new(|| chmod(file, 0o000)),
                Box::new(|| chmod(file, 0o600)),
            ),
            (
                "replaced by a link",
                Box::new(|| {
                    std::fs::rename(file, dir.join("kept")).unwrap();
                    std::os::unix::fs::symlink(&link, file).unwrap();
                }),
                Box::new(|| {
                    std::fs::remove_file(file).unwrap();
                    std::fs::rename(dir.join("kept"), file).unwrap();
                }),
            ),
        ];
        for (change, make, undo) in changes {
            make();
            assert_eq!(status(), 401, "{what}, {change}: still accepted");
            undo();
            assert_eq!(status(), 200, "{what}, {change}: put right, accepted again");
        }
        std::fs::remove_file(&link).unwrap();
    }
}

/// A FIFO at `path`.
fn fifo(path: &Path) {
    let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// Issue 34 item 9 (files named by options): every file an option names — a certificate, a key, a
/// token file, a key set, a plan, `call @FILE` — is opened without blocking, refused unless it is a
/// regular file, and read within a bound: `/dev/zero`, a FIFO and a file larger than its bound are
/// each refused at once with a sentence naming the file, and nothing is read whole.
#[test]
fn issue34_item9_a_file_named_by_an_option_is_read_bounded_and_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tokens = d.join("tokens");
    add_token(&tokens, "alice");
    let pipe = d.join("fifo");
    fifo(&pipe);
    let huge = d.join("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(64 * 1024 * 1024)
        .unwrap();
    let good_cert = d.join("cert.pem");
    std::fs::write(
        &good_cert,
        "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let t = tokens.to_str().unwrap();
    for (bad, says) in [
        ("/dev/zero", "not a regular file"),
        (pipe.to_str().unwrap(), "not a regular file"),
        (huge.to_str().unwrap(), "larger than"),
    ] {
        let http = |extra: &[&str]| {
            let mut args = vec!["serve", "--http", "127.0.0.1:0"];
            args.extend(extra);
            args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>()
        };
        let cases: Vec<(&str, Vec<String>)> = vec![
            (
                "--tls-cert",
                http(&["--auth-tokens", t, "--tls-cert", bad, "--tls-key", t]),
            ),
            (
                "--tls-key",
                http(&[
                    "--auth-tokens",
                    t,
                    "--tls-cert",
                    good_cert.to_str().unwrap(),
                    "--tls-key",
                    bad,
                ]),
            ),
            ("--auth-tokens", http(&["--auth-tokens", bad])),
            (
                "--auth-jwt-jwks",
                http(&[
                    "--auth-jwt-jwks",
                    bad,
                    "--auth-jwt-issuer",
                    ISSUER,
                    "--auth-jwt-audience",
                    AUDIENCE,
                ]),
            ),
            ("init", vec![String::from("init"), bad.to_owned()]),
            (
                "call @FILE",
                vec![
                    String::from("call"),
                    String::from("hours_check"),
                    format!("@{bad}"),
                ],
            ),
        ];
        for (option, args) in cases {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = support::run(&args, &[("HOME", d.to_str().unwrap())]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{option} {bad}: {stderr}");
            assert!(
                stderr.contains(bad) && stderr.to_lowercase().contains(says),
                "{option} {bad}: {stderr}"
            );
        }
    }
}

/// Issue 34 item 9 (start-up and shutdown): a signal ends start-up at any step. The server waits for
/// a key set whose URL never answers; SIGTERM ends it there at once (exit 0: nothing was in flight),
/// not after the fetch gives up.
#[test]
fn issue34_item9_a_signal_ends_start_up_at_any_step() {
    let dir = tempfile::tempdir().unwrap();
    let keys = KeyServer::start(String::new(), 0);
    let db = dir.path().join("contracts.db");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
    cmd.args(["serve", "--http", "127.0.0.1:0"])
        .args(jwt_args(&keys.url, db.to_str().unwrap()))
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while keys.requests.load(Ordering::SeqCst) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "start-up never fetched the key set"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on the child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("cannot be fetched"),
        "it ended before the fetch gave up: {stderr}"
    );
}

/// Issue 34 item 15 (a closed reader): every command that prints into a pipe whose reader is gone
/// exits 0 and says nothing on stderr — `worklog check` included.
#[test]
fn issue34_item15_every_command_into_a_closed_reader_exits_0_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    std::fs::create_dir(&log).unwrap();
    std::fs::write(log.join("2026-12-04.md"), "# log\n\n- [x] first\n").unwrap();
    let tokens = dir.path().join("tokens");
    add_token(&tokens, "alice");
    let home = dir.path().to_str().unwrap();
    let log = log.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["worklog", "check", "--worklog-dir", log],
        vec!["worklog", "check", "--help"],
        vec!["call", "hours_check", r#"{"expression": "Mon-Fri 09:00-17:00"}"#],
        vec!["tools"],
        vec!["--help"],
        vec!["--version"],
        vec!["init", "--example"],
        vec!["token", "list", "--file", tokens.to_str().unwrap()],
    ];
    for args in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .args(&args)
            .env("HOME", home)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
