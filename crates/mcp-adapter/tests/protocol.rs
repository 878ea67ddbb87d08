//! Every protocol version a client may speak, request by request (issue 29 item 1): the stateless
//! 2026-07-28 (`server/discover`, the per-request `_meta` envelope, `resultType` and the server's
//! identity on every result, `-32022` for a version not spoken) beside the `initialize` handshake
//! of 2024-11-05, 2025-06-18 and 2025-11-25, on one connection, in any order; a JSON-RPC batch,
//! which no version agreed to has, is refused.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use serde_json::{Value, json};
use shiftwork_mcp::{Registry, Server, groups, settings::Settings};
use support::Peer;

/// The envelope of a 2026-07-28 request at `version`.
fn envelope(version: &str) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}})
}

fn server_info() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "shiftwork-mcp", "version": env!("CARGO_PKG_VERSION")}})
}

/// Sends `request` (id 1) and checks the response with `expect`.
fn check(peer: &mut Peer, request: Value, expect: impl Fn(&Value)) {
    let mut message = json!({"jsonrpc": "2.0", "id": 1});
    message
        .as_object_mut()
        .unwrap()
        .extend(request.as_object().unwrap().clone());
    peer.send(&message);
    let answer = peer.receive();
    assert_eq!(answer["id"], 1, "{answer}");
    expect(&answer);
}

#[test]
fn each_request_is_answered_in_the_protocol_it_speaks() {
    let all = groups::all();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    let registry = Registry::build(&all, &["hours"], &Settings::new(Vec::new(), Vec::new())).unwrap();
    let mut peer = Peer::new(Server::new(registry, String::from("test instructions")));
    assert!(names.contains(&"hours"));
    let hours_call = |meta: Option<Value>| {
        let mut params = json!({"name": "hours_check", "arguments": {"expression": "Mon-Fri 09:00-17:00", "at": "2026-12-04T10:00:00Z"}});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        json!({"method": "tools/call", "params": params})
    };
    // No handshake first: a stateless discovery, then stateless calls.
    check(
        &mut peer,
        json!({"method": "server/discover", "params": {"_meta": envelope("2026-07-28")}}),
        |a| {
            let r = &a["result"];
            assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
            assert_eq!(r["capabilities"], json!({"tools": {}}));
            assert_eq!(r["instructions"], "test instructions");
            assert_eq!(r["resultType"], "complete");
            assert_eq!(r["cacheScope"], "private");
            assert!(r["ttlMs"].as_u64().unwrap() > 0);
            assert_eq!(r["_meta"], server_info());
        },
    );
    check(
        &mut peer,
        json!({"method": "tools/list", "params": {"_meta": envelope("2026-07-28")}}),
        |a| {
            let r = &a["result"];
            assert_eq!(r["tools"][0]["name"], "hours_check");
            assert_eq!(
                (&r["resultType"], &r["_meta"]),
                (&json!("complete"), &server_info())
            );
        },
    );
    check(&mut peer, hours_call(Some(envelope("2026-07-28"))), |a| {
        let r = &a["result"];
        assert_eq!(r["structuredContent"]["in_hours"], true);
        assert_eq!(r["isError"], false);
        assert_eq!(
            (&r["resultType"], &r["_meta"]),
            (&json!("complete"), &server_info())
        );
    });
    // A version not spoken: -32022 naming the versions; an incomplete envelope: -32602.
    check(&mut peer, hours_call(Some(envelope("2099-01-01"))), |a| {
        assert_eq!(a["error"]["code"], -32022);
        assert_eq!(
            a["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
        );
    });
    check(
        &mut peer,
        json!({"method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        |a| {
            assert_eq!(a["error"]["code"], -32602);
            assert!(
                a["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("io.modelcontextprotocol/clientCapabilities")
            );
        },
    );
    check(
        &mut peer,
        json!({"method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 7, "io.modelcontextprotocol/clientCapabilities": {}}}}),
        |a| {
            assert_eq!(a["error"]["code"], -32602);
        },
    );
    // The handshake on the same connection; a version not spoken gets the newest one older than
    // it: 2026-07-28 the newest the handshake has, 2025-03-26 (whose transport requires JSON-RPC
    // batches, which this server does not take: issue 35 item 5) 2024-11-05.
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("latest", "2025-11-25"),
    ] {
        check(
            &mut peer,
            json!({"method": "initialize", "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}, "_meta": envelope("2026-07-28")}}),
            |a| {
                assert_eq!(a["result"]["protocolVersion"], answered, "{asked}");
                assert!(a["result"].get("resultType").is_none());
            },
        );
    }
    // Requests without the envelope are of the handshake's versions: no resultType, no stamp.
    check(&mut peer, hours_call(None), |a| {
        let r = &a["result"];
        assert_eq!(r["structuredContent"]["in_hours"], true);
        assert!(r.get("resultType").is_none() && r.get("_meta").is_none(), "{r}");
    });
    check(&mut peer, json!({"method": "ping"}), |a| {
        assert_eq!(a["result"], json!({}))
    });
    check(
        &mut peer,
        json!({"method": "ping", "params": {"_meta": envelope("2026-07-28")}}),
        |a| {
            assert_eq!(a["result"]["resultType"], "complete");
        },
    );
    // A refusal in the stateless protocol carries the same stamp.
    check(
        &mut peer,
        json!({"method": "tools/call", "params": {"name": "hours_check", "arguments": {"nope": 1}, "_meta": envelope("2026-07-28")}}),
        |a| {
            assert_eq!(a["result"]["resultType"], "complete", "{a}");
        },
    );
}

/// Issue 35 item 5: no version this server agrees to has JSON-RPC batches (2025-03-26 had them; it
/// is not agreed to), so a batch is refused `-32600`, without an `id` member (an array has none), with
/// a sentence that says to send one message at a time; nothing in it runs, and the server goes on.
#[test]
fn issue35_item5_a_batch_is_refused_whole_without_an_id() {
    let registry =
        Registry::build(&groups::all(), &["hours"], &Settings::new(Vec::new(), Vec::new())).unwrap();
    let mut peer = Peer::new(Server::new(registry, String::new()));
    peer.send(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]));
    let answer = peer.receive();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer.get("id").is_none(), "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batches are not supported"),
        "{answer}"
    );
    // The next answer is the next request's: nothing of the batch ran.
    peer.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(peer.receive(), json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
}
