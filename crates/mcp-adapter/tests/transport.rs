//! The stdio transport in process (`shiftwork_mcp::stdio`), with test-only tools registered through
//! `Registry::from_tools`: the raw `arguments` text handed to the handler (issue 12 item 6, issue 16
//! item 1), cancellation and progress through the call's context (issue 14), the bound on requests in
//! flight (issue 12 item 8), and the answers of malformed requests (issue 12 item 12, issue 16 item 5).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shiftwork_mcp::registry::{Answered, Arguments, Hints, Outcome, Registry, TextStyle, ToolDef};
use shiftwork_mcp::{Server, wire};
use support::Peer;

fn refuse(_tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    Answered::tool_error(
        Some(shiftwork_mcp::registry::UNKNOWN_ARGUMENT),
        shiftwork_mcp::registry::unknown_argument_sentence(key, known),
    )
}

/// A test tool declaring `properties` (all strings), answering what `handler` makes of the call (a
/// tool error as one, anything else as a result).
fn tool(
    name: &'static str,
    properties: &[&str],
    handler: impl Fn(&Arguments) -> Outcome + Send + Sync + 'static,
) -> ToolDef {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string"})))
        .collect();
    ToolDef {
        name,
        title: name,
        description: "A test tool of the transport's tests.",
        input_schema: json!({"type": "object", "properties": props, "additionalProperties": false}),
        output_schema: json!({"type": "object"}),
        hints: Hints::READ_ONLY,
        unknown_argument: refuse,
        handler: Arc::new(move |args| match handler(args) {
            Outcome::ToolError(message) => Answered::tool_error(None, message),
            outcome => Answered::result(outcome),
        }),
        prefetch: None,
    }
}

fn peer(tools: Vec<ToolDef>) -> Peer {
    let mut peer = Peer::new(Server::new(Registry::from_tools(tools), String::from("test")));
    peer.initialize();
    peer
}

fn call(id: Value, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

/// Issue 12 item 6, issue 16 item 1: the handler gets the exact text of `arguments` (number tokens,
/// spacing, key order), the keys in arrival order, and a map decoded only when asked for.
#[test]
fn raw_arguments_reach_the_handler_as_sent() {
    let echo = tool("echo", &["b", "a"], |args| {
        Outcome::Answer(
            json!({"raw": args.raw(), "keys": args.keys().collect::<Vec<_>>(), "a": args.map().get("a")}),
            TextStyle::Compact,
        )
    });
    let mut peer = peer(vec![echo]);
    let raw = r#"{"b" : 18446744073709551617 , "a":1.50e0}"#;
    peer.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{raw}}}}}"#
    ));
    let answer = peer.receive();
    let structured = &answer["result"]["structuredContent"];
    assert_eq!(structured["raw"], raw);
    assert_eq!(structured["keys"], json!(["b", "a"]));
    assert_eq!(structured["a"], json!(1.5));
    // Absent and null arguments are the empty object (WL-82).
    for params in [
        json!({"name": "echo"}),
        json!({"name": "echo", "arguments": null}),
    ] {
        peer.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}));
        assert_eq!(peer.receive()["result"]["structuredContent"]["raw"], "{}");
    }
}

/// MC-8 through the transport: one rendering serves the text block and `structuredContent`, for
/// every kind of outcome, including the pre-rendered one whose text is spliced unparsed.
#[test]
fn every_outcome_renders_one_text_block_and_the_same_structured_content() {
    let outcomes: Vec<(&'static str, Outcome)> = vec![
        (
            "compact",
            Outcome::Answer(json!({"result": "ok", "n": [1, 2]}), TextStyle::Compact),
        ),
        (
            "pretty",
            Outcome::Answer(json!({"result": "ok", "é": "\n"}), TextStyle::Pretty),
        ),
        (
            "spliced",
            Outcome::Prerendered {
                structured: String::from(
                    "{\n\"result\": \"ok\",\r\n\"big\": 123456789012345678901234567890}",
                ),
                text_json: None,
            },
        ),
        (
            "spliced_with_text",
            Outcome::Prerendered {
                structured: String::from(r#"{"result":"ok","é":"\u0001"}"#),
                text_json: Some(String::from(
                    r#""{\n  \"result\": \"ok\",\n  \"é\": \"\\u0001\"\n}""#,
                )),
            },
        ),
        ("failed", Outcome::ToolError(String::from("it failed\nbadly"))),
    ];
    let tools = outcomes
        .iter()
        .map(|(name, outcome)| {
            let outcome = outcome.clone();
            tool(name, &[], move |_| outcome.clone())
        })
        .collect();
    let mut peer = peer(tools);
    for (i, (name, outcome)) in outcomes.iter().enumerate() {
        peer.send(&call(json!(i), name, json!({})));
        let answer = peer.receive();
        let result = &answer["result"];
        assert_eq!(result["content"].as_array().unwrap().len(), 1, "{name}");
        assert_eq!(result["content"][0]["text"], outcome.text(), "{name}");
        match outcome {
            Outcome::ToolError(_) => {
                assert_eq!(result["isError"], true, "{name}");
                assert!(result.get("structuredContent").is_none(), "{name}");
            }
            _ => {
                assert_eq!(result["isError"], false, "{name}");
                let text: Value = serde_json::from_str(&outcome.text()).unwrap();
                assert_eq!(result["structuredContent"], text, "{name}");
            }
        }
    }
    // The big integer of the spliced answer kept its token on the wire.
    peer.send(&call(json!(9), "spliced", json!({})));
    let line = peer.receive_line(Duration::from_secs(10)).unwrap();
    assert!(
        line.contains(r#""big": 123456789012345678901234567890}"#),
        "{line}"
    );
    assert_eq!(line.matches('\n').count(), 1, "one line: {line:?}");
}

/// A latch a handler waits on.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
}

impl Gate {
    fn wait(&self, timeout: Duration) -> bool {
        let open = self.open.lock().unwrap();
        let (open, _) = self.changed.wait_timeout_while(open, timeout, |o| !*o).unwrap();
        *open
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }
}

/// Issue 14: `notifications/cancelled` cancels the call's context (the handler's wait ends) and its
/// answer is never sent; the server answers the next request as usual.
#[test]
fn a_cancelled_call_is_cancelled_in_its_context_and_not_answered() {
    let seen_cancel = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&seen_cancel);
    let wait = tool("wait", &[], move |args| {
        let gate = Arc::new(Gate::default());
        let opener = Arc::clone(&gate);
        args.context().on_cancel(move || opener.open());
        let woken = gate.wait(Duration::from_secs(10));
        seen.store(woken && args.context().is_cancelled(), Ordering::SeqCst);
        Outcome::Answer(json!({"result": "waited"}), TextStyle::Compact)
    });
    let mut peer = peer(vec![wait]);
    peer.send(&call(json!("w-1"), "wait", json!({})));
    // The cancel names the id as a string with an escape: the same id.
    peer.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w\u002d1","reason":"no longer needed"}}"#);
    peer.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(peer.receive(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen_cancel.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        seen_cancel.load(Ordering::SeqCst),
        "the handler saw the cancellation"
    );
    assert_eq!(
        peer.receive_within(Duration::from_millis(300)),
        None,
        "a cancelled call is not answered"
    );
    // A cancel for an id that is not in flight changes nothing.
    peer.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}"#);
    peer.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(peer.receive()["id"], 3);
}

/// Issue 14: a `_meta.progressToken` gives the handler a context that sends `notifications/progress`
/// with that token (before the answer); without one the context takes no progress.
#[test]
fn a_progress_token_gives_progress_notifications_with_that_token() {
    let report = tool("report", &[], |args| {
        let wanted = args.context().wants_progress();
        args.context().progress(1.0, Some(2.0), Some("half way"));
        args.context().progress(2.0, None, None);
        Outcome::Answer(json!({"result": "ok", "wanted": wanted}), TextStyle::Compact)
    });
    let mut peer = peer(vec![report]);
    peer.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "report", "arguments": {}, "_meta": {"progressToken": 42}}}));
    assert_eq!(
        peer.receive(),
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 42, "progress": 1.0, "total": 2.0, "message": "half way"}})
    );
    assert_eq!(
        peer.receive(),
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 42, "progress": 2.0}})
    );
    let answer = peer.receive();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["structuredContent"]["wanted"], true);
    peer.send(&call(json!(2), "report", json!({})));
    let answer = peer.receive();
    assert_eq!(answer["id"], 2, "no progress without a token: {answer}");
    assert_eq!(answer["result"]["structuredContent"]["wanted"], false);
}

/// Issue 12 item 8 (a client that sends without reading): at most 64 requests run at once, and the
/// others wait unread until one ends; then every one is answered.
#[test]
fn requests_in_flight_are_bounded_to_64() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Gate::default());
    let (r, m, g) = (Arc::clone(&running), Arc::clone(&most), Arc::clone(&gate));
    let block = tool("block", &[], move |_| {
        let now = r.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(now, Ordering::SeqCst);
        g.wait(Duration::from_secs(20));
        r.fetch_sub(1, Ordering::SeqCst);
        Outcome::Answer(json!({"result": "ok"}), TextStyle::Compact)
    });
    let mut peer = peer(vec![block]);
    for i in 0..100 {
        peer.send(&call(json!(i), "block", json!({})));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while running.load(Ordering::SeqCst) < shiftwork_mcp::stdio::MAX_IN_FLIGHT && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(running.load(Ordering::SeqCst), 64, "64 run, the rest wait unread");
    gate.open();
    let mut ids: Vec<u64> = (0..100).map(|_| peer.receive()["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
    assert_eq!(most.load(Ordering::SeqCst), 64);
}

/// Issue 27 item 3 (cancellation at every step): a call cancelled after its answer was made has that
/// answer dropped, and what the call registered to undo (`on_undelivered`) runs; an answer that is
/// sent undoes nothing.
#[test]
fn an_answer_dropped_for_a_cancel_undoes_what_the_call_did() {
    let undone = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&undone);
    let gate = Arc::new(Gate::default());
    let waiting = Arc::clone(&gate);
    let claim = tool("claim", &["wait"], move |args| {
        let counter = Arc::clone(&counter);
        args.context().on_undelivered(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        if args.map().get("wait").is_some() {
            // The answer is made only after the cancel arrived, whatever the handler saw of it.
            let opener = Arc::clone(&waiting);
            args.context().on_cancel(move || opener.open());
            waiting.wait(Duration::from_secs(10));
        }
        Outcome::Answer(json!({"result": "claimed"}), TextStyle::Compact)
    });
    let mut peer = peer(vec![claim]);
    peer.send(&call(json!(1), "claim", json!({})));
    assert_eq!(peer.receive()["id"], 1);
    assert_eq!(
        undone.load(Ordering::SeqCst),
        0,
        "a delivered answer undoes nothing"
    );
    peer.send(&call(json!(2), "claim", json!({"wait": "yes"})));
    std::thread::sleep(Duration::from_millis(200));
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}));
    peer.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(peer.receive()["id"], 3, "the cancelled call's answer is not sent");
    let deadline = Instant::now() + Duration::from_secs(5);
    while undone.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        undone.load(Ordering::SeqCst),
        1,
        "the dropped answer's work was undone"
    );
}

/// Issue 27 item 4 (control under load): with 64 calls in flight waiting to be cancelled, a `ping` is
/// answered and a `notifications/cancelled` ends its call while every slot is still taken; a request
/// read meanwhile is parked, a parked request cancelled before it starts is never run nor answered,
/// and the others run, oldest first, as slots free.
#[test]
fn control_messages_are_handled_while_every_slot_is_taken() {
    let started = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&started);
    let wait = tool("wait", &["name"], move |args| {
        let name = args
            .map()
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        seen.lock().unwrap().push(name.clone());
        let gate = Arc::new(Gate::default());
        let opener = Arc::clone(&gate);
        args.context().on_cancel(move || opener.open());
        gate.wait(Duration::from_secs(60));
        Outcome::Answer(json!({"result": "ended", "name": name}), TextStyle::Compact)
    });
    let mut peer = peer(vec![wait]);
    let max = shiftwork_mcp::stdio::MAX_IN_FLIGHT;
    for i in 0..max {
        peer.send(&call(json!(i), "wait", json!({"name": format!("w{i}")})));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while started.lock().unwrap().len() < max && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(started.lock().unwrap().len(), max, "every slot is taken");
    // Two requests of new work are parked; the first is then cancelled before it starts.
    peer.send(&call(json!("p1"), "wait", json!({"name": "parked-1"})));
    peer.send(&call(json!("p2"), "wait", json!({"name": "parked-2"})));
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "p1"}}));
    peer.send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    let pong = peer
        .receive_line(Duration::from_secs(10))
        .expect("the ping is answered while every slot is taken");
    assert_eq!(
        serde_json::from_str::<Value>(&pong).unwrap(),
        json!({"jsonrpc": "2.0", "id": "ping", "result": {}})
    );
    // A cancel read while every slot is taken ends its call (whose answer is not sent).
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}));
    // The freed slot goes to the oldest parked request that was not cancelled.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !started.lock().unwrap().iter().any(|n| n == "parked-2") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let names = started.lock().unwrap().clone();
    assert!(names.iter().any(|n| n == "parked-2"), "the parked request ran");
    assert!(
        !names.iter().any(|n| n == "parked-1"),
        "a cancelled parked request never runs"
    );
    // Cancelling the rest ends them all; every answer but the cancelled ones' is sent.
    for i in (0..max).filter(|i| *i != 3) {
        peer.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}}),
        );
    }
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "p2"}}));
    peer.send(&json!({"jsonrpc": "2.0", "id": "last", "method": "ping"}));
    let last = peer
        .receive_line(Duration::from_secs(10))
        .expect("the last ping is answered");
    assert_eq!(
        serde_json::from_str::<Value>(&last).unwrap()["id"],
        "last",
        "no cancelled call was answered"
    );
}

/// Issue 12 item 12, issue 16 item 5, issue 35 item 5: malformed requests are answered with a
/// JSON-RPC error, with the request's id when it can be read and without an `id` member otherwise;
/// the server goes on serving.
#[test]
fn malformed_requests_get_an_error_with_the_id_when_it_can_be_read() {
    let mut peer = peer(vec![tool("t", &["x"], |_| {
        Outcome::Answer(json!({"result": "ok"}), TextStyle::Compact)
    })]);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"t","arguments":{{"x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let cases: Vec<(String, i64, Value, &str)> = vec![
        (String::from("not json"), -32700, Value::Null, "not JSON"),
        (
            String::from(r#"{"jsonrpc":"2.0","id":3,"method":"#),
            -32700,
            json!(3),
            "not JSON",
        ),
        (deep, -32700, json!(5), "deeper than 128"),
        (
            String::from(
                r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"t","arguments":{"x":"\ud800"}}}"#,
            ),
            -32700,
            json!("s"),
            "lone UTF-16 surrogate",
        ),
        (
            String::from(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            -32600,
            Value::Null,
            "batches",
        ),
        (
            String::from(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
            -32600,
            Value::Null,
            "id",
        ),
        (
            String::from(r#"{"jsonrpc":"2.0","id":6}"#),
            -32600,
            json!(6),
            "method",
        ),
        (
            String::from(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":[1,2]}}"#,
            ),
            -32602,
            json!(7),
            "params.arguments must be an object, not an array",
        ),
        (
            String::from(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","arguments":{"x":1e999}}}"#,
            ),
            -32602,
            json!(8),
            "beyond the range of a double",
        ),
        (
            String::from(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#),
            -32602,
            json!(9),
            "params.name",
        ),
        (
            String::from(r#"{"jsonrpc":"2.0","id":10,"method":"no/such"}"#),
            -32601,
            json!(10),
            "no/such",
        ),
    ];
    for (line, code, id, says) in cases {
        peer.send_line(&line);
        let answer = peer.receive();
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(
            answer["error"]["code"],
            code,
            "{}: {answer}",
            &line[..line.len().min(80)]
        );
        assert_eq!(
            answer.get("id"),
            (!id.is_null()).then_some(&id),
            "{}: {answer}",
            &line[..line.len().min(80)]
        );
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    // A blank line and a client's response are no requests: nothing is answered for them.
    peer.send_line("   ");
    peer.send_line(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    peer.send(&json!({"jsonrpc": "2.0", "id": 11, "method": "ping"}));
    assert_eq!(peer.receive()["id"], 11);
}

/// Issue 12 item 12: a line over 16 MiB is skipped and refused with its id; the next line is served.
/// Issue 27 item 15 (an id anywhere in a message, however long): the id is found wherever it stands,
/// also after 16 MiB of arguments.
#[test]
fn a_line_over_16_mib_is_refused_with_its_id_and_the_next_is_served() {
    let big = "x".repeat(wire::MAX_LINE + 1);
    for line in [
        format!(
            r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"t","arguments":{{"x":"{big}"}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"t","arguments":{{"x":"{big}","id":"no"}}}},"id":"big"}}"#
        ),
    ] {
        a_long_line_is_refused_with_its_id(line);
    }
}

fn a_long_line_is_refused_with_its_id(line: String) {
    let mut peer = peer(vec![tool("t", &["x"], |_| {
        Outcome::Answer(json!({"result": "ok"}), TextStyle::Compact)
    })]);
    let mut writer = peer.writer();
    let sender = std::thread::spawn(move || {
        std::io::Write::write_all(&mut writer, line.as_bytes()).unwrap();
        std::io::Write::write_all(
            &mut writer,
            b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
        )
        .unwrap();
    });
    // Answers may come in any order (JSON-RPC matches them by id).
    let (first, second) = (peer.receive(), peer.receive());
    let (answer, ping) = if first["id"] == "big" {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(answer["id"], "big");
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("16 MiB"));
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    sender.join().unwrap();
}

/// MC-9 with a 10 MB key: the adapter's own echo of a key is clipped (issue 16 item 4), and an unknown
/// tool's name too.
#[test]
fn the_adapter_clips_what_it_echoes_of_a_key_or_a_tool_name() {
    let mut peer = peer(vec![tool("t", &["x"], |_| {
        Outcome::Answer(json!({"result": "ok"}), TextStyle::Compact)
    })]);
    let huge = "k".repeat(10_000_000);
    peer.send(&call(json!(1), "t", json!({ huge.clone(): 1 })));
    let answer = peer.receive();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() < 3_000, "{} bytes", text.len());
    assert!(text.starts_with("unknown argument 'kkk"), "{}", &text[..40]);
    assert!(text.contains("…(9998000 more)"), "{}", &text[text.len() - 60..]);
    peer.send(&call(json!(2), &huge, json!({})));
    let answer = peer.receive();
    assert!(answer.to_string().len() < 3_000);
    assert_eq!(answer["error"]["code"], -32602);
}

/// A handler that panics is answered with a JSON-RPC internal error (-32603) naming the panic, and the
/// server goes on serving (the panic takes neither the worker nor the process down).
#[test]
fn a_handler_panic_is_an_internal_error_and_the_server_goes_on() {
    let mut peer = peer(vec![tool("boom", &[], |_| panic!("the handler broke"))]);
    for id in 1..=3 {
        peer.send(&call(json!(id), "boom", json!({})));
        let answer = peer.receive();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], -32603);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the handler broke")
        );
    }
    peer.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(peer.receive()["id"], 4);
}

/// The test prefetch: reads exactly `{"fast":"yes"}` at the start of the text.
fn read_fast(text: &str) -> Option<shiftwork_mcp::registry::Prefetched<'_>> {
    let object = r#"{"fast":"yes"}"#;
    text.starts_with(object)
        .then(|| shiftwork_mcp::registry::Prefetched {
            len: object.len(),
            keys: vec![std::borrow::Cow::Borrowed("fast")],
            run: Box::new(|| {
                Answered::result(Outcome::Answer(json!({"by": "prefetch"}), TextStyle::Compact))
            }),
        })
}

/// Issue 16 item 1: a tool's `prefetch` reads its arguments while the line is decoded, and its work
/// answers in place of the handler only when the call is that tool's with exactly the object it
/// read; the argument names are still checked, and the rest of the line is still validated (a line
/// that is not JSON after the object read is a parse error, with no answer of the tool).
#[test]
fn a_prefetched_reading_answers_only_for_its_tool_and_its_object() {
    let by_handler = |_: &Arguments| Outcome::Answer(json!({"by": "handler"}), TextStyle::Compact);
    let fast = ToolDef {
        prefetch: Some(read_fast),
        ..tool("fast", &["fast"], by_handler)
    };
    let narrow = ToolDef {
        prefetch: Some(read_fast),
        ..tool("narrow", &["other"], by_handler)
    };
    let mut peer = peer(vec![fast, narrow, tool("plain", &["fast"], by_handler)]);
    let line =
        |params: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
    let check = |peer: &mut Peer, params: &str, expected: Value| {
        peer.send_line(&line(params));
        let answer = peer.receive();
        let got = match answer.get("error") {
            Some(error) => json!({"code": error["code"], "id": answer["id"]}),
            None => answer["result"]["structuredContent"].clone(),
        };
        assert_eq!(got, expected, "{params}");
    };
    let prefetch = json!({"by": "prefetch"});
    let handler = json!({"by": "handler"});
    let parse_error = json!({"code": -32700, "id": 1});
    let cases = [
        (r#"{"name":"fast","arguments":{"fast":"yes"}}"#, &prefetch),
        // The name may come after the arguments.
        (r#"{"arguments":{"fast":"yes"},"name":"fast"}"#, &prefetch),
        // Another tool's call with the same object runs that tool's handler.
        (r#"{"arguments":{"fast":"yes"},"name":"plain"}"#, &handler),
        // An object the prefetch does not read goes to the handler.
        (r#"{"name":"fast","arguments":{"fast" : "yes"}}"#, &handler),
        // A repeated `arguments` member replaces the one read.
        (
            r#"{"arguments":{"fast":"yes"},"name":"fast","arguments":{"fast":"no"}}"#,
            &handler,
        ),
        (
            r#"{"arguments":{"fast":"yes"},"name":"fast","arguments":"x"}"#,
            &json!({"code": -32602, "id": 1}),
        ),
        // The rest of the line is still validated.
        (
            r#"{"name":"fast","arguments":{"fast":"yes"},"x":[1,}"#,
            &parse_error,
        ),
        (r#"{"name":"fast","arguments":{"fast":"yes"}"#, &parse_error),
    ];
    for (params, expected) in cases {
        check(&mut peer, params, expected.clone());
    }
    // Argument names are checked before the prefetched work runs.
    peer.send_line(&line(r#"{"name":"narrow","arguments":{"fast":"yes"}}"#));
    let refused = peer.receive();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        refused.to_string().contains("unknown argument 'fast'"),
        "{refused}"
    );
}
