//! Resources and their subscriptions through the real binary, one suite on both transports (issue 35
//! item 2): `resources/list`, `resources/templates/list` and `resources/read` of the job's plan, its
//! status, a unit's brief, the contracts queue and one contract, the hours gate and today's work
//! log; no path in any of them; the checkpoint confined by `--roots` over HTTP; and a subscription
//! (`resources/subscribe` on stdio, `subscriptions/listen` of 2026-07-28 on stdio and as an HTTP
//! event stream) told of a clock-out or a dispatch made by another process.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/clients.rs"]
mod clients;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use clients::{Client, EX, STATELESS, Stdio, Transport, clock_out_elsewhere, dispatch, repo};
use serde_json::{Value, json};
use support::{HttpServer, run};

/// Issue 35 item 2, on stdio and HTTP: every resource and template is listed with its title,
/// description and MIME type, and each one reads what the tools that read the same state answer;
/// the texts name no path of the server's.
#[test]
fn issue35_item2_resources_are_listed_and_read_on_both_transports() {
    for transport in [Transport::Stdio, Transport::Http] {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let id = dispatch(dir.path(), "Review the parser");
        let mut client = Client::start(transport, dir.path(), &[]);
        let listed = client.request("resources/list", json!({}));
        let uris: Vec<&str> = listed["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "shiftwork://plan",
                "shiftwork://plan.mmd",
                "shiftwork://status",
                "shiftwork://contracts",
                "shiftwork://hours",
                "shiftwork://worklog/today"
            ],
            "{transport:?}"
        );
        for resource in listed["result"]["resources"].as_array().unwrap() {
            for key in ["name", "title", "description", "mimeType"] {
                assert!(
                    resource[key].as_str().is_some_and(|t| !t.is_empty()),
                    "{key} of {resource}"
                );
            }
        }
        let templates = client.request("resources/templates/list", json!({}));
        let templates: Vec<&str> = templates["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uriTemplate"].as_str().unwrap())
            .collect();
        assert_eq!(
            templates,
            [
                "shiftwork://units/{unit_id}/brief",
                "shiftwork://contracts/{contract_id}"
            ]
        );

        let plan = client.read("shiftwork://plan");
        assert!(
            plan.contains("job demo-job") && plan.contains("U3 todo"),
            "{plan}"
        );
        let chart = client.read("shiftwork://plan.mmd");
        assert!(chart.starts_with("flowchart"), "{chart}");
        let status: Value = serde_json::from_str(&client.read("shiftwork://status")).unwrap();
        assert_eq!(status["cursor"], "U3", "{status}");
        let brief: Value = serde_json::from_str(&client.read("shiftwork://units/U3/brief")).unwrap();
        assert_eq!(
            (&brief["result"], &brief["unit"]["id"]),
            (&json!("brief"), &json!("U3"))
        );
        // A preview records nothing: no ledger line, the checkpoint as it was.
        assert!(!dir.path().join(".shiftwork/checkpoint.json.log.jsonl").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".shiftwork/checkpoint.json")).unwrap(),
            EX
        );
        let queue: Value = serde_json::from_str(&client.read("shiftwork://contracts")).unwrap();
        assert_eq!(queue["counts"]["SUBMITTED"], 1, "{queue}");
        assert_eq!(queue["waiting"][0]["contract_id"], id.as_str(), "{queue}");
        let uri = format!("shiftwork://contracts/{id}");
        let one: Value = serde_json::from_str(&client.read(&uri)).unwrap();
        assert_eq!(one["contracts"][0]["title"], "Review the parser", "{one}");
        let hours: Value = serde_json::from_str(&client.read("shiftwork://hours")).unwrap();
        assert_eq!(
            hours["expression"], "TZ=Europe/London Mon-Fri 09:00-17:30",
            "{hours}"
        );
        assert!(hours["in_hours"].is_boolean(), "{hours}");
        let log: Value = serde_json::from_str(&client.read("shiftwork://worklog/today")).unwrap();
        assert_eq!(
            log,
            json!({"status": "ok", "file": "2026-09-06.md", "items": [{"checked": true, "text": "Fixed the bug"}, {"checked": false, "text": "Write the notes"}], "message": "\"2026-09-06.md\" has a checklist with 2 items"})
        );

        // What names nothing is -32602, its URI echoed bounded.
        for uri in [
            String::from("shiftwork://units/U9/brief"),
            String::from("shiftwork://contracts/00000000-0000-4000-8000-000000000000"),
            String::from("shiftwork://contracts/not-a-uuid"),
            String::from("file:///etc/passwd"),
            format!("shiftwork://units/{}/brief", "x".repeat(100_000)),
        ] {
            let refused = client.request("resources/read", json!({"uri": uri}));
            assert_eq!(
                refused["error"]["code"], -32602,
                "{transport:?} {uri:.80}: {refused}"
            );
            assert!(refused["error"]["message"].as_str().unwrap().chars().count() < 2_100);
        }
        for params in [json!({}), json!({"uri": 7}), json!([1])] {
            let refused = client.request("resources/read", params.clone());
            assert_eq!(refused["error"]["code"], -32602, "{params}: {refused}");
        }
        // The 2026-07-28 answers carry their type and the server's identity.
        let stateless = client.stateless("resources/read", json!({"uri": "shiftwork://status"}));
        assert_eq!(stateless["result"]["resultType"], "complete", "{stateless}");
        assert!(
            stateless["result"]["contents"][0]["text"].is_string(),
            "{stateless}"
        );
        drop(client);
    }
}

/// Issue 35 item 2 (THREATS "whose path", "echoes"): no resource names a path of the server's — a
/// store not created yet, a log directory that is not there, a checkpoint that cannot be read name
/// the file at most.
#[test]
fn issue35_item2_no_resource_names_a_path_of_the_server() {
    for transport in [Transport::Stdio, Transport::Http] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        let mut client = Client::start(transport, dir.path(), &[]);
        let root = dir.path().to_str().unwrap().to_owned();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        for uri in [
            "shiftwork://plan",
            "shiftwork://plan.mmd",
            "shiftwork://status",
            "shiftwork://units/U3/brief",
            "shiftwork://contracts",
            "shiftwork://worklog/today",
            "shiftwork://hours",
        ] {
            let response = client.request("resources/read", json!({"uri": uri}));
            let text = response.to_string();
            assert!(
                !text.contains(&root) && !text.contains(real.to_str().unwrap()),
                "{transport:?} {uri}: {text}"
            );
        }
        // The store was never created by a read.
        assert!(!dir.path().join("contracts.db").exists());
    }
}

/// Issue 35 item 2 (identity and roots, as the tools): over HTTP a request without a valid token
/// reads nothing, and a checkpoint outside `--roots` is refused, as shiftwork_plan refuses it.
#[test]
fn issue35_item2_reads_over_http_are_confined_like_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let other = tempfile::tempdir().unwrap();
    let Client::Http { server, token } = Client::start(
        Transport::Http,
        dir.path(),
        &["--roots", other.path().to_str().unwrap()],
    ) else {
        unreachable!()
    };
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "shiftwork://plan"}});
    assert_eq!(server.post(None, &[], &body.to_string()).status, 401);
    assert_eq!(
        server.post(Some("not-a-token"), &[], &body.to_string()).status,
        401
    );
    let read = server.post(Some(&token), &[], &body.to_string()).json();
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    let tool = server.call(
        &token,
        "shiftwork_plan",
        json!({"checkpoint": ".shiftwork/checkpoint.json"}),
    );
    let reason = tool["result"]["structuredContent"]["reason"].as_str().unwrap();
    assert!(reason.contains("outside"), "{tool}");
    assert!(text.contains("outside") && !text.contains("U3"), "{text}");
    assert!(!text.contains(dir.path().to_str().unwrap()), "{text}");
}

/// What a subscriber waits with: the binary's stdout, or an HTTP event stream.
enum Listener {
    Stdio(Stdio),
    Stream(BufReader<std::net::TcpStream>),
}

impl Listener {
    /// The next notification, or `None` when none comes within `timeout`.
    fn next(&mut self, timeout: Duration) -> Option<Value> {
        match self {
            Listener::Stdio(binary) => {
                let deadline = Instant::now() + timeout;
                loop {
                    let left = deadline.checked_duration_since(Instant::now())?;
                    let message = binary.receive_within(left)?;
                    if message.get("method").is_some() {
                        return Some(message);
                    }
                }
            }
            Listener::Stream(reader) => {
                reader.get_ref().set_read_timeout(Some(timeout)).unwrap();
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return None,
                        Ok(_) => {}
                    }
                    if let Some(data) = line.trim_end().strip_prefix("data: ") {
                        return Some(serde_json::from_str(data).unwrap());
                    }
                }
            }
        }
    }
}

/// Opens `subscriptions/listen` for `uris` on an HTTP server: the stream, past its headers.
fn listen_over_http(server: &HttpServer, token: &str, uris: &[&str]) -> BufReader<std::net::TcpStream> {
    let address = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": uris},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}},
    }})
    .to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {STATELESS}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "{status}");
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        if header.trim().is_empty() {
            break;
        }
    }
    reader
}

/// How a subscription is made.
#[derive(Debug, Clone, Copy)]
enum Way {
    /// `resources/subscribe` on stdio (the handshake versions).
    Subscribe,
    /// `subscriptions/listen` on stdio (2026-07-28).
    ListenStdio,
    /// `subscriptions/listen` as an HTTP event stream (2026-07-28).
    ListenHttp,
}

/// Subscribes to `uris` the given way; the listener, and the server (to keep it alive).
fn subscribe(way: Way, dir: &Path, uris: &[&str]) -> (Listener, Option<HttpServer>) {
    match way {
        Way::Subscribe => {
            let Client::Stdio(mut binary) = Client::start(Transport::Stdio, dir, &[]) else {
                unreachable!()
            };
            for uri in uris {
                let answer = binary.request("resources/subscribe", json!({"uri": uri}));
                assert_eq!(answer["result"], json!({}), "{answer}");
            }
            (Listener::Stdio(binary), None)
        }
        Way::ListenStdio => {
            let Client::Stdio(mut binary) = Client::start(Transport::Stdio, dir, &[]) else {
                unreachable!()
            };
            binary.send(&json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {
                "notifications": {"resourceSubscriptions": uris},
                "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}},
            }}));
            let mut listener = Listener::Stdio(binary);
            let ack = listener.next(Duration::from_secs(10)).unwrap();
            assert_acknowledged(&ack, uris);
            (listener, None)
        }
        Way::ListenHttp => {
            let Client::Http { server, token } = Client::start(Transport::Http, dir, &[]) else {
                unreachable!()
            };
            let mut listener = Listener::Stream(listen_over_http(&server, &token, uris));
            let ack = listener.next(Duration::from_secs(10)).unwrap();
            assert_acknowledged(&ack, uris);
            (listener, Some(server))
        }
    }
}

fn assert_acknowledged(ack: &Value, uris: &[&str]) {
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(uris),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1",
        "{ack}"
    );
}

impl Listener {
    /// Whether the stream ends (its server closed it) within `timeout`; notifications before the end
    /// are skipped.
    fn ends_within(&mut self, timeout: Duration) -> bool {
        let Listener::Stream(reader) = self else {
            panic!("only an HTTP stream ends")
        };
        let deadline = Instant::now() + timeout;
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            reader
                .get_ref()
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .unwrap();
            let mut line = String::new();
            match reader.read_line(&mut line) {
                // The connection closed, or the chunked body's last chunk came.
                Ok(0) => return true,
                Ok(_) if line.trim_end() == "0" => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
    }
}

/// Waits for the update of `uri`; how long it took since `since`.
fn updated(listener: &mut Listener, uri: &str, since: Instant, way: Way) -> Duration {
    loop {
        let message = listener
            .next(Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{way:?}: no update of {uri} within 10 s"));
        if message["method"] == "notifications/resources/updated" && message["params"]["uri"] == uri {
            if !matches!(way, Way::Subscribe) {
                assert_eq!(
                    message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1",
                    "{message}"
                );
            }
            return since.elapsed();
        }
    }
}

/// Issue 35 item 2: a subscriber — by `resources/subscribe` on stdio, by `subscriptions/listen` on
/// stdio and over HTTP — is told of a clock-out and of a dispatch made by another process (the
/// status, the plan, the queue), and of nothing it did not follow. The time from the other
/// process's exit to the notification is printed (the issue asks for under 1 s; the server reads
/// every 200 ms).
#[test]
fn issue35_item2_subscribers_hear_of_changes_made_by_another_process() {
    for way in [Way::Subscribe, Way::ListenStdio, Way::ListenHttp] {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let (mut listener, _server) =
            subscribe(way, dir.path(), &["shiftwork://status", "shiftwork://contracts"]);
        let started = Instant::now();
        clock_out_elsewhere(dir.path());
        let exited = Instant::now();
        let took = updated(&mut listener, "shiftwork://status", exited, way);
        eprintln!(
            "{way:?}: the clock-out's notification came {took:?} after the other process ended ({:?} after it started)",
            started.elapsed()
        );
        dispatch(dir.path(), "Review the core");
        let took = updated(&mut listener, "shiftwork://contracts", Instant::now(), way);
        eprintln!("{way:?}: the dispatch's notification came {took:?} after the other process ended");
        // The work log was not followed: its change is not told.
        std::fs::write(dir.path().join("logs/2026-09-06.md"), "# Today\n\n- [x] One\n").unwrap();
        if let Some(message) = listener.next(Duration::from_millis(800)) {
            panic!("{way:?}: told of what it did not follow: {message}");
        }
    }
}

/// Issue 35 item 2: `resources/unsubscribe` stops the notifications; a subscription to what is not
/// served is refused; `subscriptions/listen` is of 2026-07-28 and left out of what it follows what
/// the server does not serve; over HTTP, `resources/subscribe` (which needs a session) is refused
/// with the way to listen instead.
#[test]
fn issue35_item2_subscriptions_refuse_what_they_cannot_keep() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let Client::Stdio(mut binary) = Client::start(Transport::Stdio, dir.path(), &[]) else {
        unreachable!()
    };
    let refused = binary.request("resources/subscribe", json!({"uri": "shiftwork://nothing"}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let refused = binary.request("subscriptions/listen", json!({"notifications": {}}));
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert_eq!(
        binary.request("resources/subscribe", json!({"uri": "shiftwork://status"}))["result"],
        json!({})
    );
    assert_eq!(
        binary.request("resources/unsubscribe", json!({"uri": "shiftwork://status"}))["result"],
        json!({})
    );
    clock_out_elsewhere(dir.path());
    let mut listener = Listener::Stdio(binary);
    if let Some(message) = listener.next(Duration::from_millis(800)) {
        panic!("told after unsubscribing: {message}");
    }
    let Listener::Stdio(mut binary) = listener else {
        unreachable!()
    };
    binary.send(&json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["shiftwork://plan", "shiftwork://nothing"], "toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}},
    }}));
    let ack = binary.receive();
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["shiftwork://plan"]}),
        "{ack}"
    );
    // A cancelled listen is over: no answer, no notification.
    binary.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(
        dir.path().join(".shiftwork/checkpoint.json"),
        EX.replace("Build core", "Build the core"),
    )
    .unwrap();
    let pong = binary.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    let mut listener = Listener::Stdio(binary);
    if let Some(message) = listener.next(Duration::from_millis(800)) {
        panic!("told after cancelling: {message}");
    }

    let Client::Http { server, token } = Client::start(Transport::Http, dir.path(), &[]) else {
        unreachable!()
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "shiftwork://status"}});
    let refused = server.post(Some(&token), &[], &body.to_string()).json();
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("subscriptions/listen"),
        "{refused}"
    );
    // A listen that does not accept an event stream is refused.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["shiftwork://plan"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}},
    }});
    let answer = server.post(
        Some(&token),
        &[
            ("accept", "application/json"),
            ("mcp-protocol-version", STATELESS),
        ],
        &body.to_string(),
    );
    assert_eq!(answer.status, 406, "{answer:?}");
    let _ = run(&["--version"], &[]);
}

/// Issue 35 item 2 (THREATS "size", "fairness"): an HTTP listener that goes away ends its
/// subscription; the server keeps answering, and a fresh listener is told of the next change.
#[test]
fn issue35_item2_a_listener_that_goes_away_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let Client::Http { server, token } = Client::start(Transport::Http, dir.path(), &[]) else {
        unreachable!()
    };
    for _ in 0..20 {
        drop(listen_over_http(&server, &token, &["shiftwork://status"]));
    }
    let mut listener = Listener::Stream(listen_over_http(&server, &token, &["shiftwork://status"]));
    let ack = listener.next(Duration::from_secs(10)).unwrap();
    assert_acknowledged(&ack, &["shiftwork://status"]);
    clock_out_elsewhere(dir.path());
    updated(
        &mut listener,
        "shiftwork://status",
        Instant::now(),
        Way::ListenHttp,
    );
    let status = server.get("/healthz").status;
    assert_eq!(status, 200);
}

/// Issue 35 item 2 (THREATS "fairness", "credentials during a wait"): one agent holds at most 16
/// listen streams, and another agent still gets one; a stream whose token is revoked ends.
#[test]
fn issue35_item2_listen_streams_are_fair_and_end_with_their_credentials() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let Client::Http { server, token } = Client::start(Transport::Http, dir.path(), &[]) else {
        unreachable!()
    };
    let bob = support::add_token(&dir.path().join("tokens"), "bob");
    let mut streams: Vec<Listener> = (0..16)
        .map(|_| Listener::Stream(listen_over_http(&server, &token, &["shiftwork://status"])))
        .collect();
    for stream in &mut streams {
        assert_acknowledged(
            &stream.next(Duration::from_secs(10)).unwrap(),
            &["shiftwork://status"],
        );
    }
    let body = json!({"jsonrpc": "2.0", "id": "listen-17", "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["shiftwork://status"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}},
    }});
    let refused = server.post(
        Some(&token),
        &[("mcp-protocol-version", STATELESS)],
        &body.to_string(),
    );
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("at most 16"), "{refused:?}");
    let mut other = Listener::Stream(listen_over_http(&server, &bob, &["shiftwork://status"]));
    assert_acknowledged(
        &other.next(Duration::from_secs(10)).unwrap(),
        &["shiftwork://status"],
    );

    // Alice's token is revoked: her streams end; bob's goes on and hears the next change.
    let out = run(
        &[
            "token",
            "revoke",
            "alice",
            "--file",
            dir.path().join("tokens").to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let revoked = Instant::now();
    for stream in &mut streams {
        assert!(
            stream.ends_within(Duration::from_secs(10)),
            "a revoked stream goes on"
        );
    }
    eprintln!("the revoked token's streams ended within {:?}", revoked.elapsed());
    clock_out_elsewhere(dir.path());
    updated(&mut other, "shiftwork://status", Instant::now(), Way::ListenHttp);
}

/// Issue 35 item 2 (THREATS "control characters", "markup that executes"): a checkpoint and a work log
/// whose texts hold terminal escapes, bidirectional controls, a Mermaid directive and HTML are shown
/// inert: no raw control character in any resource's text, no directive in the chart.
#[test]
fn issue35_item2_hostile_texts_reach_the_resources_inert() {
    let hostile =
        "\u{1b}]52;c;SGVsbG8=\u{7}\u{202e}evil %%{init: {'theme':'dark'}}%% <img src=x onerror=alert(1)>";
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let escaped = serde_json::to_string(hostile).unwrap();
    let escaped = &escaped[1..escaped.len() - 1];
    std::fs::write(
        dir.path().join(".shiftwork/checkpoint.json"),
        EX.replace("Build core", escaped),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("logs/2026-09-06.md"),
        format!("# Today\n\n- [x] {hostile}\n"),
    )
    .unwrap();
    for transport in [Transport::Stdio, Transport::Http] {
        let mut client = Client::start(transport, dir.path(), &[]);
        for uri in [
            "shiftwork://plan",
            "shiftwork://plan.mmd",
            "shiftwork://status",
            "shiftwork://units/U3/brief",
            "shiftwork://worklog/today",
        ] {
            let text = client.read(uri);
            assert!(
                !text
                    .chars()
                    .any(|c| c.is_control() && c != '\n' || ('\u{202a}'..='\u{202e}').contains(&c)),
                "{transport:?} {uri}: {text:?}"
            );
            if uri == "shiftwork://plan.mmd" {
                assert!(!text.contains("%%{"), "{text}");
                assert!(!text.contains("<img"), "{text}");
            }
        }
    }
}

/// Issue 35 item 2 on both stores (SQLite, and PostgreSQL when `SHIFTWORK_TEST_POSTGRES_URL` names a
/// server): a listener on one replica is told of a dispatch, a claim and a fulfil made through
/// another replica of the same store, and reads the queue each time as it now is.
#[test]
fn issue35_item2_a_listener_hears_of_the_queue_changed_through_another_replica() {
    let stores = tempfile::tempdir().unwrap();
    for (store, location, _db) in support::contract_stores(stores.path()) {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let tokens = dir.path().join("tokens");
        let alice = support::add_token(&tokens, "alice");
        let bob = support::add_token(&tokens, "bob");
        let args = [
            "--tools",
            "contracts",
            "--contracts-db",
            location.as_str(),
            "--auth-tokens",
            tokens.to_str().unwrap(),
        ];
        let home = dir.path().to_str().unwrap();
        let one = HttpServer::start(dir.path(), &args, &[("HOME", home)]);
        let other = HttpServer::start(dir.path(), &args, &[("HOME", home)]);
        let mut listener = Listener::Stream(listen_over_http(&one, &alice, &["shiftwork://contracts"]));
        assert_acknowledged(
            &listener.next(Duration::from_secs(10)).unwrap(),
            &["shiftwork://contracts"],
        );
        let read = |server: &HttpServer| -> Value {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "shiftwork://contracts"}});
            let answer = server.post(Some(&alice), &[], &body.to_string()).json();
            serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
        };

        let sent = other.call(
            &alice,
            "dispatch_contract",
            json!({"target_agent": "bob", "title": "Review", "workspace_root": dir.path().to_str().unwrap()}),
        );
        let sent = &sent["result"]["structuredContent"];
        assert_eq!(sent["ok"], true, "{store}: {sent}");
        let id = sent["contract_id"].as_str().unwrap().to_owned();
        let took = updated(
            &mut listener,
            "shiftwork://contracts",
            Instant::now(),
            Way::ListenHttp,
        );
        eprintln!("{store}: a dispatch through another replica was told in {took:?}");
        assert_eq!(read(&one)["waiting"][0]["contract_id"], id.as_str(), "{store}");

        let claimed = other.call(&bob, "poll_next_task", json!({}));
        let epoch = claimed["result"]["structuredContent"]["contract"]["claim_epoch"].clone();
        assert_eq!(epoch, 1, "{store}: {claimed}");
        let took = updated(
            &mut listener,
            "shiftwork://contracts",
            Instant::now(),
            Way::ListenHttp,
        );
        eprintln!("{store}: a claim through another replica was told in {took:?}");
        assert_eq!(read(&one)["claimed"][0]["holder"], "bob", "{store}");

        let done = other.call(
            &bob,
            "fulfill_contract",
            json!({"contract_id": id, "claim_epoch": epoch, "result_summary": "looks right"}),
        );
        assert_eq!(done["result"]["structuredContent"]["ok"], true, "{store}: {done}");
        let took = updated(
            &mut listener,
            "shiftwork://contracts",
            Instant::now(),
            Way::ListenHttp,
        );
        eprintln!("{store}: a fulfil through another replica was told in {took:?}");
        assert_eq!(read(&one)["counts"]["COMPLETED"], 1, "{store}");
    }
}

/// Issue 35 item 2 (THREATS "start-up and shutdown"): SIGTERM ends an HTTP server holding listen
/// streams promptly, the streams closed, with exit status 0.
#[test]
fn issue35_item2_sigterm_ends_the_listen_streams_and_the_server() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let Client::Http { mut server, token } = Client::start(Transport::Http, dir.path(), &[]) else {
        unreachable!()
    };
    let mut listener = Listener::Stream(listen_over_http(&server, &token, &["shiftwork://status"]));
    assert_acknowledged(
        &listener.next(Duration::from_secs(10)).unwrap(),
        &["shiftwork://status"],
    );
    // SAFETY: kill(2) on the server's pid with a valid signal number.
    assert_eq!(unsafe { libc::kill(server.pid() as i32, libc::SIGTERM) }, 0);
    assert!(
        listener.ends_within(Duration::from_secs(10)),
        "the stream outlived SIGTERM"
    );
    let status = server
        .wait_for_exit(Duration::from_secs(15))
        .expect("the server did not exit");
    assert!(status.success(), "{status:?}");
}
