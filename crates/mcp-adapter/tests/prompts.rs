//! Prompts and completion through the real binary, one suite on both transports (issue 35 item 3):
//! `prompts/list` with every argument described, `prompts/get` of every prompt with and without its
//! arguments, the state it needs embedded as resources, hostile argument values refused or made
//! inert; `completion/complete` of unit ids, statuses, agent names, contract ids and zones.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/clients.rs"]
mod clients;
mod support;

use clients::{Client, Transport, dispatch, repo};
use serde_json::{Value, json};

/// The prompts of a server of every group, in listing order.
const PROMPTS: [&str; 5] = [
    "start_unit",
    "finish_unit",
    "hand_review",
    "take_contract",
    "day_summary",
];

/// The texts of a `prompts/get` result's messages (a text block's text, an embedded resource's URI
/// and text).
fn texts(result: &Value) -> Vec<String> {
    result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert_eq!(m["role"], "user", "{m}");
            let content = &m["content"];
            match content["type"].as_str() {
                Some("text") => content["text"].as_str().unwrap().to_owned(),
                Some("resource") => format!(
                    "{}\n{}",
                    content["resource"]["uri"].as_str().unwrap(),
                    content["resource"]["text"].as_str().unwrap()
                ),
                other => panic!("unexpected content {other:?}: {m}"),
            }
        })
        .collect()
}

/// Issue 35 item 3, on stdio and HTTP: every prompt is listed with its title, description and
/// described arguments; each one gets its instruction, naming the tools to call with the arguments
/// given, and the state it needs embedded (the plan, the status, the queue, today's log).
#[test]
fn issue35_item3_every_prompt_is_listed_and_got_on_both_transports() {
    for transport in [Transport::Stdio, Transport::Http] {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let mut client = Client::start(transport, dir.path(), &[]);
        let listed = client.request("prompts/list", json!({}));
        let prompts = listed["result"]["prompts"].as_array().unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, PROMPTS, "{transport:?}");
        for prompt in prompts {
            assert!(
                prompt["title"].as_str().is_some_and(|t| !t.is_empty()),
                "{prompt}"
            );
            assert!(
                prompt["description"].as_str().is_some_and(|t| t.len() > 40),
                "{prompt}"
            );
            for argument in prompt["arguments"].as_array().unwrap() {
                assert!(
                    argument["description"].as_str().is_some_and(|t| t.len() > 20),
                    "every argument described: {argument}"
                );
                assert!(argument["required"].is_boolean(), "{argument}");
            }
        }

        let get = |client: &mut Client, name: &str, arguments: Value| {
            let response = client.request("prompts/get", json!({"name": name, "arguments": arguments}));
            assert!(response.get("error").is_none(), "{name}: {response}");
            texts(&response["result"])
        };
        let start = get(&mut client, "start_unit", json!({}));
        assert!(
            start[0].contains("shiftwork_clock_in") && start[0].contains("'.shiftwork/checkpoint.json'"),
            "{start:?}"
        );
        assert!(
            start[1].starts_with("shiftwork://plan\n") && start[1].contains("U3 todo"),
            "{start:?}"
        );
        let start = get(&mut client, "start_unit", json!({"unit_id": "U4"}));
        assert!(start[0].contains("unit_id 'U4'"), "{start:?}");
        let finish = get(
            &mut client,
            "finish_unit",
            json!({"unit_id": "U3", "status": "blocked"}),
        );
        assert!(
            finish[0].contains("shiftwork_clock_out") && finish[0].contains("status: 'blocked'"),
            "{finish:?}"
        );
        assert!(finish[1].starts_with("shiftwork://status\n"), "{finish:?}");
        let review = get(
            &mut client,
            "hand_review",
            json!({"agent": "bob", "focus": "the parser"}),
        );
        assert!(
            review[0].contains("target_agent 'bob'") && review[0].contains("the parser"),
            "{review:?}"
        );
        assert!(review[1].starts_with("shiftwork://contracts\n"), "{review:?}");
        let take = get(&mut client, "take_contract", json!({"wait_sec": "30"}));
        assert!(take[0].contains("poll_next_task with wait_sec 30"), "{take:?}");
        let day = get(&mut client, "day_summary", json!({"zone": "Europe/London"}));
        assert!(
            day[0].contains("worklog_append") && day[0].contains("Europe/London"),
            "{day:?}"
        );
        assert!(day[1].contains("Fixed the bug"), "{day:?}");
        // No path of the server's in any prompt.
        for text in start.iter().chain(&finish).chain(&review).chain(&day) {
            assert!(!text.contains(dir.path().to_str().unwrap()), "{text}");
        }
        // A prompts/get of 2026-07-28 carries its type.
        let stateless = client.stateless("prompts/get", json!({"name": "take_contract"}));
        assert_eq!(stateless["result"]["resultType"], "complete", "{stateless}");
        // Nothing was written: a prompt only asks the model to call the tools.
        assert!(!dir.path().join(".shiftwork/checkpoint.json.log.jsonl").exists());
    }
}

/// Issue 35 item 3 (THREATS "control characters", "size", "echoes"): an unknown prompt or argument,
/// a missing required one, a value that is no string, too long or not of its format is refused
/// with -32602, its echo bounded; control and bidirectional characters of a value reach the
/// message escaped.
#[test]
fn issue35_item3_hostile_prompt_arguments_are_refused_or_made_inert() {
    for transport in [Transport::Stdio, Transport::Http] {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let mut client = Client::start(transport, dir.path(), &[]);
        let long = "x".repeat(100_000);
        for (name, arguments, says) in [
            ("nothing", json!({}), "unknown prompt"),
            (long.as_str(), json!({}), "unknown prompt"),
            ("hand_review", json!({}), "needs the argument 'agent'"),
            (
                "hand_review",
                json!({"agent": "bob", "who": "x"}),
                "takes no argument 'who'",
            ),
            ("hand_review", json!({"agent": 7}), "must be a string"),
            (
                "hand_review",
                json!({"agent": "bob; rm -rf /"}),
                "must be a string",
            ),
            (
                "hand_review",
                json!({"agent": "bob", "focus": long}),
                "must be a string",
            ),
            ("take_contract", json!({"wait_sec": "86400"}), "must be a string"),
            ("take_contract", json!({"wait_sec": "-1"}), "must be a string"),
            ("start_unit", json!([1]), "must be an object"),
        ] {
            let refused = client.request("prompts/get", json!({"name": name, "arguments": arguments}));
            assert_eq!(
                refused["error"]["code"], -32602,
                "{transport:?} {name:.40} {arguments:.80}: {refused}"
            );
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{message:.200}");
            assert!(message.chars().count() < 2_100, "bounded: {}", message.len());
        }
        let refused = client.request("prompts/get", json!({}));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");

        let hostile = "\u{1b}]52;c;SGVsbG8=\u{7}\u{202e}evil\r\nline";
        let response = client.request(
            "prompts/get",
            json!({"name": "hand_review", "arguments": {"agent": "bob", "focus": hostile}}),
        );
        for text in texts(&response["result"]) {
            assert!(
                !text
                    .chars()
                    .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\u{202e}' || c == '\r'),
                "{text:?}"
            );
        }
        let response = client.request(
            "prompts/get",
            json!({"name": "start_unit", "arguments": {"unit_id": hostile}}),
        );
        let text = &texts(&response["result"])[0];
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'), "{text:?}");
    }
}

/// Issue 35 item 3: `completion/complete` offers the plan's unit ids (unfinished first), the
/// statuses of a clock-out, the agents and contracts the queue knows and the zones, filtered by
/// the prefix typed (any case), at most 100 with the total; a reference to nothing is -32602.
#[test]
fn issue35_item3_arguments_complete_from_the_state_on_both_transports() {
    for transport in [Transport::Stdio, Transport::Http] {
        let dir = tempfile::tempdir().unwrap();
        repo(dir.path());
        let id = dispatch(dir.path(), "Review the parser");
        let mut client = Client::start(transport, dir.path(), &[]);
        let mut complete = |reference: Value, name: &str, value: &str| {
            let response = client.request(
                "completion/complete",
                json!({"ref": reference, "argument": {"name": name, "value": value}}),
            );
            response["result"]["completion"].clone()
        };
        let prompt = |name: &str| json!({"type": "ref/prompt", "name": name});
        let values = |completion: &Value| -> Vec<String> {
            completion["values"]
                .as_array()
                .unwrap_or_else(|| panic!("{completion}"))
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            values(&complete(prompt("start_unit"), "unit_id", "")),
            ["U3", "U4", "U1"]
        );
        assert_eq!(values(&complete(prompt("finish_unit"), "unit_id", "u4")), ["U4"]);
        assert_eq!(
            values(&complete(prompt("finish_unit"), "status", "b")),
            ["blocked"]
        );
        assert_eq!(
            values(&complete(prompt("hand_review"), "agent", "")),
            ["bob", "carol"]
        );
        assert_eq!(
            values(&complete(prompt("hand_review"), "focus", "")),
            Vec::<String>::new()
        );
        let zones = complete(prompt("day_summary"), "zone", "europe/lon");
        assert_eq!(values(&zones), ["Europe/London"]);
        let all = complete(prompt("day_summary"), "zone", "");
        assert_eq!(values(&all).len(), 100, "at most 100");
        assert!(
            all["total"].as_u64().unwrap() > 400 && all["hasMore"] == true,
            "{all}"
        );
        let template = json!({"type": "ref/resource", "uri": "shiftwork://contracts/{contract_id}"});
        assert_eq!(values(&complete(template, "contract_id", "")), [id.as_str()]);
        let template = json!({"type": "ref/resource", "uri": "shiftwork://units/{unit_id}/brief"});
        assert_eq!(values(&complete(template, "unit_id", "U1")), ["U1"]);

        for params in [
            json!({"ref": {"type": "ref/prompt", "name": "nothing"}, "argument": {"name": "x", "value": ""}}),
            json!({"ref": {"type": "ref/resource", "uri": "shiftwork://nothing/{x}"}, "argument": {"name": "x", "value": ""}}),
            json!({"ref": {"type": "ref/other"}, "argument": {"name": "x", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "start_unit"}}),
            json!({"argument": {"name": "x", "value": ""}}),
        ] {
            let refused = client.request("completion/complete", params.clone());
            assert_eq!(
                refused["error"]["code"], -32602,
                "{transport:?} {params}: {refused}"
            );
        }
    }
}

/// Issue 35 items 2 and 3: the server says it serves resources (with subscriptions), prompts and
/// completions, in the `initialize` answer and in `server/discover`.
#[test]
fn issue35_items2_3_capabilities_are_announced() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    for transport in [Transport::Stdio, Transport::Http] {
        let mut client = Client::start(transport, dir.path(), &[]);
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        let capabilities = &init["result"]["capabilities"];
        assert_eq!(capabilities["resources"]["subscribe"], true, "{init}");
        assert!(
            capabilities["prompts"].is_object() && capabilities["completions"].is_object(),
            "{init}"
        );
        let discovered = client.stateless("server/discover", json!({}));
        let capabilities = &discovered["result"]["capabilities"];
        assert_eq!(capabilities["resources"]["subscribe"], true, "{discovered}");
        assert!(
            capabilities["prompts"].is_object() && capabilities["completions"].is_object(),
            "{discovered}"
        );
    }
}
