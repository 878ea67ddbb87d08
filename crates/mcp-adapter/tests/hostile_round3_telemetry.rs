//! The third hostile round (issue 34), telemetry that tells the truth, through the real binary on
//! stdio and over HTTP, one test per class:
//!
//! - item 1, telemetry that tells the truth: every tool's success and refusal, classified by the
//!   tool's own verdict, checked through the log line, the span a real OTLP receiver gets and the
//!   duration metric (the OTLP export on stdio; that and `GET /metrics` over HTTP);
//! - item 4, telemetry cardinality: unknown methods and tools, with long names full of ESC and BEL,
//!   are one `_OTHER` series, and the queue's target agents are bounded;
//! - item 10, a collector that never answers: SIGTERM ends the process within the grace;
//! - item 11, amplification: a 4 MB id, method, tool name or trace context costs a log line and a
//!   span a bounded size, each value written once.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/otlp.rs"]
mod otlp;
mod support;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use otlp::{BlackHole, Receiver, attribute, string};
use serde_json::{Value, json};
use shiftwork_seams::echo::is_control_or_bidi;
use support::{Binary, HttpServer};

/// The two transports every test here runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

const TRANSPORTS: [Transport; 2] = [Transport::Stdio, Transport::Http];

/// The duration histogram's name as exported (OTLP) and as scraped (Prometheus).
const DURATION: &str = "mcp.server.operation.duration";
const DURATION_COUNT: &str = "mcp_server_operation_duration_seconds_count";

/// The binary on one transport, its stderr and its collector.
struct Served {
    transport: Transport,
    stdio: Option<Binary>,
    http: Option<HttpServer>,
    /// Agent → bearer token (HTTP).
    tokens: HashMap<&'static str, String>,
    /// The thread reading stdio's stderr while the server runs (so its log never waits on the pipe).
    stderr_reader: Option<std::thread::JoinHandle<String>>,
    /// What stderr held once the server ended.
    stderr: String,
}

impl Served {
    /// Starts `serve ARGS` in `dir` on `transport` with `env`; over HTTP with tokens for alice, bob
    /// and prometheus.
    fn start(transport: Transport, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut served = Served {
            transport,
            stdio: None,
            http: None,
            tokens: HashMap::new(),
            stderr_reader: None,
            stderr: String::new(),
        };
        match transport {
            Transport::Stdio => {
                let mut binary = Binary::serve_in(Some(dir), args, env);
                let mut stderr = binary.take_stderr();
                served.stderr_reader = Some(std::thread::spawn(move || {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
                    text
                }));
                binary.initialize();
                served.stdio = Some(binary);
            }
            Transport::Http => {
                let file = dir.join("tokens");
                for agent in ["alice", "bob", "prometheus"] {
                    served.tokens.insert(agent, support::add_token(&file, agent));
                }
                let mut all = vec!["--auth-tokens", file.to_str().unwrap()];
                all.extend_from_slice(args);
                served.http = Some(HttpServer::start(dir, &all, env));
            }
        }
        served
    }

    /// [`Served::start`] with JSON logs, as alice, on the contracts store `ROOT/contracts.db`, and
    /// the arguments `extra`.
    fn logged_as_alice(transport: Transport, root: &Path, extra: &[&str], env: &[(&str, &str)]) -> Served {
        let db = root.join("contracts.db");
        let mut args = vec![
            "--log-format",
            "json",
            "--agent",
            "alice",
            "--contracts-db",
            db.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        Served::start(transport, root, &args, env)
    }

    /// Sends the JSON-RPC request `message` (its id any JSON) as `agent`; the response.
    fn send(&mut self, agent: &str, message: &Value) -> Value {
        match self.transport {
            Transport::Stdio => {
                let binary = self.stdio.as_mut().unwrap();
                binary.send(message);
                binary.receive()
            }
            Transport::Http => {
                let token = self.tokens[agent].clone();
                let answer = self
                    .http
                    .as_ref()
                    .unwrap()
                    .post(Some(&token), &[], &message.to_string());
                assert_eq!(
                    answer.status,
                    200,
                    "{}",
                    answer.body.chars().take(500).collect::<String>()
                );
                answer.json()
            }
        }
    }

    /// `tools/call` of `tool` with `arguments`, request id `id`, as `agent`: the response.
    fn call(&mut self, agent: &str, id: u64, tool: &str, arguments: Value) -> Value {
        self.send(
            agent,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
        )
    }

    /// `GET /metrics` (HTTP only).
    fn scrape(&self) -> String {
        self.http.as_ref().unwrap().scrape(&self.tokens["prometheus"])
    }

    /// Ends the server as an operator does (stdin closed; SIGTERM over HTTP) and keeps its stderr.
    fn stop(&mut self) {
        match self.transport {
            Transport::Stdio => {
                let (status, _, _) = self.stdio.take().unwrap().close();
                self.stderr = self.stderr_reader.take().unwrap().join().unwrap();
                assert!(status.success(), "{}", self.stderr);
            }
            Transport::Http => {
                let mut server = self.http.take().unwrap();
                signal(server.pid(), libc::SIGTERM);
                let status = server
                    .wait_for_exit(Duration::from_secs(30))
                    .expect("the server exits after SIGTERM");
                assert!(status.success());
                // The stderr reader has the last lines once the pipe ends.
                let lines = std::sync::Arc::clone(&server.stderr);
                drop(server);
                std::thread::sleep(Duration::from_millis(300));
                self.stderr = lines.lock().unwrap().join("\n");
            }
        }
    }

    /// The JSON log lines of the requests, by request id.
    fn request_lines(&self) -> HashMap<String, Value> {
        self.stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["target"] == "shiftwork_mcp::request")
            .map(|v| (v["request_id"].as_str().unwrap_or_default().to_owned(), v))
            .collect()
    }
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a child's pid with a valid signal number.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

/// What a call's handler must say happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Result,
    Refusal(&'static str),
    ToolError(&'static str),
}

impl Expect {
    fn outcome(self) -> &'static str {
        match self {
            Expect::Result => "result",
            Expect::Refusal(_) => "refusal",
            Expect::ToolError(_) => "tool_error",
        }
    }

    fn code(self) -> Option<&'static str> {
        match self {
            Expect::Result => None,
            Expect::Refusal(code) | Expect::ToolError(code) => Some(code),
        }
    }
}

/// One call of the script and what its handler must have said.
struct Step {
    id: u64,
    tool: &'static str,
    expect: Expect,
}

/// Runs the calls of the script and checks each answer by itself (its own words, not the verdict):
/// a result, a refusal naming the code in its own vocabulary, a tool error.
struct Script<'s> {
    served: &'s mut Served,
    steps: Vec<Step>,
}

impl Script<'_> {
    fn run(&mut self, agent: &str, tool: &'static str, arguments: Value, expect: Expect) -> Value {
        let id = 1000 + self.steps.len() as u64;
        let response = self.served.call(agent, id, tool, arguments);
        let result = &response["result"];
        let answer = result["structuredContent"].clone();
        let is_error = result["isError"] == true;
        let said = if is_error {
            "tool_error"
        } else if tool == "hours_check" || tool.starts_with("shiftwork_") || tool == "work_plan" {
            if answer["result"] == "error" {
                "refusal"
            } else {
                "result"
            }
        } else if tool.starts_with("worklog_") {
            let status = answer["status"].as_str().unwrap_or_default();
            if ["written", "created", "duplicate", "dry_run", "ok"].contains(&status) {
                "result"
            } else {
                assert_eq!(Some(status), expect.code(), "{tool}: {answer}");
                "refusal"
            }
        } else if answer["ok"] == true {
            "result"
        } else {
            assert_eq!(
                answer["error"]["code"].as_str(),
                expect.code(),
                "{tool}: {answer}"
            );
            "refusal"
        };
        assert_eq!(said, expect.outcome(), "{tool} answered {response}");
        self.steps.push(Step { id, tool, expect });
        answer
    }
}

/// Every tool of the four groups, each at least once as a success and once refused, in an order that
/// makes each call's state (a claim to extend, a contract to fulfil).
fn every_tool_succeeds_and_is_refused(script: &mut Script<'_>, root: &Path) {
    use Expect::{Refusal, Result, ToolError};
    // hours
    script.run(
        "alice",
        "hours_check",
        json!({"expression": "Mon-Fri 09:00-17:00"}),
        Result,
    );
    script.run(
        "alice",
        "hours_check",
        json!({"expression": "9:00-17:00"}),
        Refusal("INVALID_EXPRESSION"),
    );
    script.run(
        "alice",
        "hours_check",
        json!({"expression": 5}),
        Refusal("INVALID_ARGUMENT"),
    );
    // worklog: not started, then started
    script.run("alice", "worklog_check", json!({}), Refusal("no_file"));
    script.run(
        "alice",
        "worklog_append",
        json!({"description": "Fixed it"}),
        Refusal("no_file"),
    );
    std::fs::write(root.join("worklog").join("today.md"), "- [x] Started the day\n").unwrap();
    script.run("alice", "worklog_check", json!({}), Result);
    script.run(
        "alice",
        "worklog_append",
        json!({"description": "Fixed the telemetry"}),
        Result,
    );
    script.run(
        "alice",
        "worklog_append",
        json!({"description": "Fixed the telemetry"}),
        Result,
    );
    script.run(
        "alice",
        "worklog_append",
        json!({"description": ""}),
        Refusal("empty"),
    );
    script.run(
        "alice",
        "worklog_append",
        json!({"description": 5}),
        ToolError("INVALID_ARGUMENT"),
    );
    script.run(
        "alice",
        "worklog_append",
        json!({"description": "a\u{1b}b"}),
        ToolError("control_character"),
    );
    // shiftwork: the demo's job, whose calls all succeed
    let shiftwork = shiftwork_mcp::groups::all()
        .into_iter()
        .find(|g| g.name == "shiftwork")
        .unwrap();
    let mut checkpoint = String::new();
    for step in (shiftwork.demo)(root) {
        if let Some((tool, args)) = support::demo_call(step, &[]) {
            checkpoint = args["checkpoint"].as_str().unwrap().to_owned();
            let tool = [
                "shiftwork_plan",
                "shiftwork_clock_in",
                "shiftwork_clock_out",
                "shiftwork_status",
            ]
            .into_iter()
            .find(|t| *t == tool)
            .unwrap();
            script.run("alice", tool, args, Result);
        }
    }
    let missing = root.join("missing.json").to_str().unwrap().to_owned();
    script.run(
        "alice",
        "shiftwork_plan",
        json!({"checkpoint": missing}),
        Refusal("CHECKPOINT_UNREADABLE"),
    );
    script.run(
        "alice",
        "shiftwork_status",
        json!({"checkpoint": missing}),
        Refusal("CHECKPOINT_UNREADABLE"),
    );
    script.run(
        "alice",
        "shiftwork_clock_in",
        json!({"checkpoint": checkpoint, "unit_id": "nope"}),
        Refusal("UNKNOWN_UNIT"),
    );
    script.run(
        "alice",
        "shiftwork_clock_out",
        json!({"checkpoint": checkpoint, "unit_id": "nope", "status": "done", "handoff_patch": {}, "history_entry": {}}),
        Refusal("NOT_IN_PLAN"),
    );
    script.run(
        "alice",
        "shiftwork_status",
        json!({"checkpoint": 5}),
        ToolError("INVALID_ARGUMENT"),
    );
    // work_plan: the plain form (read while the line is decoded) and the general path
    let plain = json!({"nodes": [{"id": "a"}, {"id": "b", "depends_on": ["a"]}]});
    script.run("alice", "work_plan", plain, Result);
    script.run(
        "alice",
        "work_plan",
        json!({"nodes": [{"id": "a"}, {"id": "a"}]}),
        Refusal("DUPLICATE_ID"),
    );
    script.run(
        "alice",
        "work_plan",
        json!({"nodes": [{"id": "a", "priority": 2, "depends_on": ["b"]}, {"id": "b", "depends_on": ["a"]}]}),
        Refusal("CYCLE"),
    );
    script.run(
        "alice",
        "work_plan",
        json!({"nodes": "x"}),
        ToolError("INVALID_ARGUMENT"),
    );
    // contracts: every transition a success, then the same call refused
    let ws = root.join("ws");
    let ws = ws.to_str().unwrap();
    let dispatch = json!({"target_agent": "bob", "title": "Review add()", "workspace_root": ws, "pointers": ["src/lib.rs"]});
    let sent = script.run("alice", "dispatch_contract", dispatch.clone(), Result);
    let c1 = sent["contract_id"].as_str().unwrap().to_owned();
    script.run(
        "alice",
        "dispatch_contract",
        json!({"target_agent": "bob"}),
        Refusal("INVALID_ARGUMENT"),
    );
    let held = script.run("bob", "poll_next_task", json!({"agent_id": "bob"}), Result);
    assert_eq!(held["has_task"], true, "{held}");
    let e1 = held["contract"]["claim_epoch"].as_u64().unwrap();
    script.run(
        "bob",
        "poll_next_task",
        json!({"agent_id": "bob", "wait_sec": -1}),
        Refusal("INVALID_ARGUMENT"),
    );
    let holder = |epoch: u64| json!({"contract_id": c1, "claim_epoch": epoch, "agent_id": "bob"});
    script.run("bob", "extend_ttl", holder(e1), Result);
    script.run("bob", "extend_ttl", holder(e1 + 7), Refusal("STALE_EPOCH"));
    script.run("bob", "release_contract", holder(e1), Result);
    script.run("bob", "release_contract", holder(e1), Refusal("NOT_CLAIMED"));
    let held = script.run("bob", "poll_next_task", json!({"agent_id": "bob"}), Result);
    let e2 = held["contract"]["claim_epoch"].as_u64().unwrap();
    script.run("bob", "verify_contract", holder(e2), Result);
    script.run(
        "bob",
        "verify_contract",
        json!({"contract_id": "no-such-contract"}),
        Refusal("CONTRACT_NOT_FOUND"),
    );
    let mut delivery = holder(e2);
    delivery["result_summary"] = json!("Looks right.");
    script.run("bob", "fulfill_contract", delivery.clone(), Result);
    script.run("bob", "fulfill_contract", delivery, Refusal("ALREADY_TERMINAL"));
    let c2 = script.run("alice", "dispatch_contract", dispatch.clone(), Result)["contract_id"].clone();
    let held = script.run("bob", "poll_next_task", json!({"agent_id": "bob"}), Result);
    let failing = json!({"contract_id": c2, "claim_epoch": held["contract"]["claim_epoch"], "agent_id": "bob", "reason": "cannot"});
    script.run("bob", "fail_contract", failing.clone(), Result);
    script.run("bob", "fail_contract", failing, Refusal("ALREADY_TERMINAL"));
    let c3 = script.run("alice", "dispatch_contract", dispatch, Result)["contract_id"].clone();
    script.run(
        "alice",
        "cancel_contract",
        json!({"contract_id": c3, "reason": "Not needed."}),
        Result,
    );
    // A second cancel is answered as the first (`already_cancelled`): a result.
    script.run(
        "alice",
        "cancel_contract",
        json!({"contract_id": c3, "reason": "Again."}),
        Result,
    );
    script.run(
        "bob",
        "cancel_contract",
        json!({"contract_id": c3, "reason": "Mine now.", "agent_id": "bob"}),
        Refusal("NOT_REQUESTER"),
    );
    let nothing = script.run("bob", "poll_next_task", json!({"agent_id": "bob"}), Result);
    assert_eq!(nothing["has_task"], false, "{nothing}");
    script.run("alice", "inspect_mesh_state", json!({}), Result);
    script.run(
        "alice",
        "inspect_mesh_state",
        json!({"limit": 0}),
        Refusal("INVALID_ARGUMENT"),
    );
}

/// A directory with the demo's checkpoint, an empty work log directory and a contracts workspace, and
/// the flags and environment of a server over them reporting to `endpoint`.
fn workspace(dir: &Path) {
    std::fs::create_dir(dir.join("worklog")).unwrap();
    std::fs::create_dir_all(dir.join("ws").join("src")).unwrap();
    std::fs::write(dir.join("ws").join("src").join("lib.rs"), "pub fn add() {}\n").unwrap();
}

/// The name of every tool the binary serves.
fn every_tool(home: &Path) -> Vec<&'static str> {
    let groups = shiftwork_mcp::groups::all();
    let names: Vec<&str> = groups.iter().map(|g| g.name).collect();
    let env = [(String::from("HOME"), home.to_str().unwrap().to_owned())];
    let settings = shiftwork_mcp::settings::Settings::new(Vec::new(), env);
    let registry = shiftwork_mcp::registry::Registry::build(&groups, &names, &settings).unwrap();
    registry.tools().iter().map(|t| t.name).collect()
}

/// The label keys of a tool and of an error type: as exported, and as Prometheus spells them.
const OTLP_KEYS: (&str, &str) = ("gen_ai.tool.name", "error.type");
const PROMETHEUS_KEYS: (&str, &str) = ("gen_ai_tool_name", "error_type");

/// The duration histogram's points of a Prometheus scrape: label set → count.
fn scraped_counts(text: &str) -> BTreeMap<Vec<(String, String)>, u64> {
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(DURATION_COUNT) else {
            continue;
        };
        let (labels, value) = rest.rsplit_once(' ').unwrap();
        let labels = labels.trim_start_matches('{').trim_end_matches('}');
        let mut set: Vec<(String, String)> = labels
            .split("\",")
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once("=\"").unwrap();
                (k.to_owned(), v.trim_end_matches('"').to_owned())
            })
            .collect();
        set.sort();
        counts.insert(set, value.parse().unwrap());
    }
    counts
}

/// The count of `tool`'s calls in `counts` with the error type `code` (none for results), the
/// labels named by `keys` (tool, error type).
fn count_of(
    counts: &BTreeMap<Vec<(String, String)>, u64>,
    keys: (&str, &str),
    tool: &str,
    code: Option<&str>,
) -> u64 {
    counts
        .iter()
        .filter(|(set, _)| {
            let get = |key: &str| set.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
            get(keys.0) == Some(tool) && get(keys.1) == code
        })
        .map(|(_, count)| *count)
        .sum()
}

/// Issue 34 item 1 (telemetry that tells the truth), on stdio and over HTTP: every tool's successes
/// are `result` and its refusals `refusal` with their code — in the log line, on the span (no
/// `error.type`, no error status for a success) and in the duration metric's `error.type` label —
/// as the tool's own verdict says, never guessed from the answer's JSON (a claimed contract's
/// `status: "CLAIMED"` is a success).
#[test]
fn issue34_item1_every_tools_success_and_refusal_are_classified_by_its_own_outcome() {
    for transport in TRANSPORTS {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        workspace(root);
        let home = root.to_str().unwrap().to_owned();
        let endpoint = receiver.endpoint();
        let worklog = root.join("worklog");
        let mut served = Served::logged_as_alice(
            transport,
            root,
            &[
                "--contracts-roots",
                &home,
                "--worklog-dir",
                worklog.to_str().unwrap(),
            ],
            &[
                ("HOME", &home),
                ("TMPDIR", &home),
                ("RUST_LOG", "info"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ],
        );
        let mut script = Script {
            served: &mut served,
            steps: Vec::new(),
        };
        every_tool_succeeds_and_is_refused(&mut script, root);
        let steps = std::mem::take(&mut script.steps);
        let tools = every_tool(root);
        for tool in &tools {
            let of_tool = || steps.iter().filter(|s| s.tool == *tool);
            assert!(
                of_tool().any(|s| s.expect == Expect::Result),
                "no success of {tool}"
            );
            assert!(
                of_tool().any(|s| s.expect != Expect::Result),
                "no refusal of {tool}"
            );
        }
        let scraped = (transport == Transport::Http).then(|| scraped_counts(&served.scrape()));
        served.stop();
        // The log line.
        let lines = served.request_lines();
        for step in &steps {
            let line = lines.get(&step.id.to_string()).unwrap_or_else(|| {
                panic!(
                    "{transport:?}: no log line for {} ({}): {}",
                    step.id, step.tool, served.stderr
                )
            });
            assert_eq!(line["tool"], step.tool, "{line}");
            assert_eq!(
                line["outcome"],
                step.expect.outcome(),
                "{transport:?} {}: {line}",
                step.tool
            );
            assert_eq!(
                line["code"].as_str(),
                step.expect.code(),
                "{transport:?} {}: {line}",
                step.tool
            );
        }
        // The span.
        receiver.wait_for("every call's span", |r| {
            let spans = r.spans();
            steps.iter().all(|s| {
                spans.iter().any(|span| {
                    string(attribute(&span.attributes, "jsonrpc.request.id")) == Some(&s.id.to_string())
                })
            })
        });
        let spans = receiver.spans();
        for step in &steps {
            let span = spans
                .iter()
                .find(|span| {
                    string(attribute(&span.attributes, "jsonrpc.request.id")) == Some(&step.id.to_string())
                })
                .unwrap();
            assert_eq!(span.name, format!("tools/call {}", step.tool));
            let error = string(attribute(&span.attributes, "error.type"));
            let status = span.status.as_ref().map_or(0, |s| s.code);
            match step.expect {
                Expect::Result => {
                    assert_eq!(
                        error, None,
                        "{transport:?} {}: a success has no error.type",
                        step.tool
                    );
                    assert_ne!(
                        status, 2,
                        "{transport:?} {}: a success is not an ERROR span",
                        step.tool
                    );
                }
                other => {
                    assert_eq!(error, other.code(), "{transport:?} {}", step.tool);
                    assert_eq!(status, 2, "{transport:?} {}: status ERROR", step.tool);
                }
            }
        }
        // The metric: exported over OTLP, and scraped over HTTP.
        receiver.wait_for("the duration metric", |r| {
            !r.histogram_counts(DURATION).is_empty()
        });
        let exported = receiver.histogram_counts(DURATION);
        let mut sources = vec![("OTLP", OTLP_KEYS, exported)];
        sources.extend(scraped.map(|s| ("/metrics", PROMETHEUS_KEYS, s)));
        for (source, keys, counts) in &sources {
            for tool in &tools {
                let mut expected: BTreeMap<Option<&str>, u64> = BTreeMap::new();
                for step in steps.iter().filter(|s| s.tool == *tool) {
                    *expected.entry(step.expect.code()).or_default() += 1;
                }
                for (code, n) in expected {
                    assert_eq!(
                        count_of(counts, *keys, tool, code),
                        n,
                        "{transport:?} {source}: {tool} with error.type {code:?}: {counts:?}"
                    );
                }
            }
        }
    }
}

/// The characters of the class (control and bidirectional) in `text`, line feeds aside.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| *c != '\n' && is_control_or_bidi(*c))
        .collect()
}

/// A name as a hostile client writes it: long, with an OSC 52 sequence (ESC … BEL) in it.
fn hostile_name(i: usize) -> String {
    format!("evil{i}\u{1b}]52;c;Zm9v\u{7}{}", "x".repeat(600))
}

/// Sends `n` requests of unknown methods and `n` calls of unknown tools, from `first` on.
fn send_unknown_names(served: &mut Served, first: usize, n: usize) {
    for i in first..first + n {
        let method = served.send(
            "alice",
            &json!({"jsonrpc": "2.0", "id": i, "method": hostile_name(i)}),
        );
        assert_eq!(method["error"]["code"], -32601, "{method}");
        let tool = served.call("alice", i as u64, &hostile_name(i), json!({}));
        assert_eq!(tool["error"]["code"], -32602, "{tool}");
    }
}

/// The label sets of every sample of a Prometheus text (the part between the braces).
fn series(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').map(|(name, _)| name.to_owned()))
        .collect()
}

/// Issue 34 item 4 (telemetry cardinality), on stdio and over HTTP: requests of unknown methods and
/// calls of unknown tools — 600-character names holding an OSC 52 sequence — are counted under one
/// `_OTHER` label whatever their number, so `/metrics` does not grow with them and no label value
/// carries a raw control character; the same names reach spans and log lines cut and escaped; and
/// the queue gauge names at most 50 target agents, the rest under `_OTHER`.
#[test]
fn issue34_item4_names_a_client_chooses_never_become_metric_series() {
    for transport in TRANSPORTS {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        workspace(root);
        let home = root.to_str().unwrap().to_owned();
        let endpoint = receiver.endpoint();
        let mut served = Served::logged_as_alice(
            transport,
            root,
            &["--contracts-roots", &home],
            &[
                ("HOME", &home),
                ("RUST_LOG", "info"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ],
        );
        // 60 target agents, each with one contract waiting.
        let ws = root.join("ws");
        for i in 0..60 {
            let sent = served.call(
                "alice",
                5_000 + i,
                "dispatch_contract",
                json!({"target_agent": format!("agent{i:02}"), "title": "t", "workspace_root": ws}),
            );
            assert_eq!(sent["result"]["structuredContent"]["ok"], true, "{sent}");
        }
        send_unknown_names(&mut served, 0, 20);
        if transport == Transport::Http {
            let before = served.scrape();
            send_unknown_names(&mut served, 20, 300);
            let after = served.scrape();
            assert_eq!(
                series(&before),
                series(&after),
                "300 more unknown names made new series"
            );
            assert!(after.contains("mcp_method_name=\"_OTHER\""), "{after}");
            assert!(after.contains("gen_ai_tool_name=\"_OTHER\""), "{after}");
            assert_eq!(raw_controls(&after), [], "a raw control in the scrape");
            assert!(!after.contains("evil"), "a client's name became a label");
            let targets: std::collections::BTreeSet<&str> = after
                .lines()
                .filter(|l| l.starts_with("shiftwork_contracts_queue{"))
                .filter_map(|l| l.split("target_agent=\"").nth(1))
                .filter_map(|rest| rest.split('"').next())
                .collect();
            assert_eq!(targets.len(), 51, "50 agents and _OTHER: {targets:?}");
            assert!(targets.contains("_OTHER"), "{targets:?}");
        } else {
            send_unknown_names(&mut served, 20, 300);
        }
        served.stop();
        // The exported metric: the method and tool labels are the server's own names.
        receiver.wait_for("the duration metric", |r| {
            !r.histogram_counts(DURATION).is_empty()
        });
        let tools = every_tool(root);
        let counts = receiver.histogram_counts(DURATION);
        for set in counts.keys() {
            for (key, value) in set {
                let allowed = match key.as_str() {
                    "mcp.method.name" => shiftwork_mcp::server::METHODS.contains(&value.as_str()),
                    "gen_ai.tool.name" => tools.contains(&value.as_str()),
                    _ => true,
                };
                assert!(
                    allowed || value == "_OTHER",
                    "{transport:?}: {key}={value:?} is a label"
                );
                assert!(value.len() <= 64, "{transport:?}: {key}={value:?}");
            }
        }
        let other_methods: u64 = counts
            .iter()
            .filter(|(set, _)| set.contains(&(String::from("mcp.method.name"), String::from("_OTHER"))))
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            other_methods, 320,
            "{transport:?}: every unknown method counted once"
        );
        // Spans and log lines: the names cut and escaped.
        receiver.wait_for("the unknown names' spans", |r| r.spans().len() >= 640);
        for span in receiver.spans() {
            assert!(
                !span.name.contains("evil"),
                "{transport:?}: a span named {:?}",
                span.name
            );
            for (key, value) in otlp::attributes(&span.attributes) {
                assert!(
                    value.chars().count() <= 200,
                    "{transport:?}: span {key} is {} long",
                    value.len()
                );
                assert_eq!(raw_controls(&value), [], "{transport:?}: span {key}={value:?}");
            }
        }
        let lines: Vec<&str> = served.stderr.lines().filter(|l| l.contains("evil")).collect();
        assert_eq!(lines.len(), 640, "{transport:?}: one line per request");
        for line in lines {
            assert!(line.len() < 1024, "{transport:?}: a {} byte line", line.len());
            assert_eq!(raw_controls(line), [], "{line}");
            let line: Value = serde_json::from_str(line).unwrap();
            let named = line["method"].as_str().unwrap().to_owned() + line["tool"].as_str().unwrap_or("");
            assert!(
                named.contains("evil") && named.contains("\\u{1b}]52") && named.contains("more)"),
                "{line}"
            );
        }
    }
}

/// Issue 34 item 11 (amplification), on stdio and over HTTP, in both log formats: a request whose
/// id, method, tool name or `_meta` trace context is 4 MB costs its log line a few hundred bytes —
/// each value cut to 128 characters and written once — and its span attributes as much.
#[test]
fn issue34_item11_a_4mb_id_method_tool_or_trace_context_costs_the_log_a_bounded_line() {
    let huge = "i".repeat(4 << 20);
    for transport in TRANSPORTS {
        for format in ["text", "json"] {
            let receiver = Receiver::start();
            let dir = tempfile::tempdir().unwrap();
            let home = dir.path().to_str().unwrap().to_owned();
            let endpoint = receiver.endpoint();
            let mut served = Served::start(
                transport,
                dir.path(),
                &["--log-format", format, "--tools", "hours"],
                &[
                    ("HOME", &home),
                    ("RUST_LOG", "info"),
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
                ],
            );
            let check = json!({"name": "hours_check", "arguments": {"expression": "Mon 09:00-10:00"}});
            let mut with_meta = check.clone();
            with_meta["_meta"] = json!({"traceparent": huge, "tracestate": huge, "baggage": huge});
            let requests = [
                json!({"jsonrpc": "2.0", "id": huge, "method": "ping"}),
                json!({"jsonrpc": "2.0", "id": huge, "method": "tools/call", "params": check}),
                json!({"jsonrpc": "2.0", "id": 3, "method": huge}),
                json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": huge, "arguments": {}}}),
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": with_meta}),
            ];
            for request in &requests {
                let answer = served.send("alice", request);
                assert!(answer.get("result").is_some() || answer.get("error").is_some());
            }
            served.stop();
            let lines: Vec<&str> = served
                .stderr
                .lines()
                .filter(|l| l.contains("shiftwork_mcp::request"))
                .collect();
            let expected = requests.len() + usize::from(transport == Transport::Stdio);
            assert_eq!(
                lines.len(),
                expected,
                "{transport:?} {format}: one line per request"
            );
            for line in &lines {
                assert!(
                    line.len() < 1024,
                    "{transport:?} {format}: a {} byte line",
                    line.len()
                );
            }
            assert!(
                served.stderr.len() < 16 * 1024,
                "{transport:?} {format}: {} bytes of log for {} requests",
                served.stderr.len(),
                requests.len()
            );
            let cut = format!("…({} more)", huge.len() + 2 - 128);
            assert!(
                lines.iter().any(|l| l.matches(&cut).count() == 1),
                "{transport:?} {format}: the id once: {lines:?}"
            );
            receiver.wait_for("the requests' spans", |r| r.spans().len() >= requests.len());
            for span in receiver.spans() {
                assert!(
                    span.name.len() <= 64,
                    "{transport:?}: a span named {} bytes",
                    span.name.len()
                );
                assert!(
                    span.trace_state.len() <= 512,
                    "{transport:?}: tracestate {}",
                    span.trace_state.len()
                );
                for (key, value) in otlp::attributes(&span.attributes) {
                    assert!(
                        value.chars().count() <= 200,
                        "{transport:?}: span {key} is {} long",
                        value.len()
                    );
                }
            }
        }
    }
}

/// Issue 34 item 10 (a collector that never answers), on stdio and over HTTP: with the exporters
/// pointed at a collector that accepts the connection and never answers, SIGTERM with nothing in
/// flight still ends the process within the grace the guide promises, exit 0, saying what was lost.
#[test]
fn issue34_item10_a_collector_that_never_answers_holds_shutdown_no_longer_than_the_grace() {
    let grace = shiftwork_mcp::shutdown::GRACE;
    for transport in TRANSPORTS {
        let hole = BlackHole::start();
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap().to_owned();
        let endpoint = hole.endpoint();
        let mut served = Served::start(
            transport,
            dir.path(),
            &["--tools", "hours"],
            &[("HOME", &home), ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
        );
        let answer = served.call(
            "alice",
            7,
            "hours_check",
            json!({"expression": "Mon 09:00-10:00"}),
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let (status, stderr) = match transport {
            Transport::Stdio => {
                let mut binary = served.stdio.take().unwrap();
                binary.signal(libc::SIGTERM);
                let status = binary.wait_for_exit(grace + Duration::from_secs(3));
                drop(binary);
                (status, served.stderr_reader.take().unwrap().join().unwrap())
            }
            Transport::Http => {
                let mut server = served.http.take().unwrap();
                signal(server.pid(), libc::SIGTERM);
                let status = server.wait_for_exit(grace + Duration::from_secs(3));
                std::thread::sleep(Duration::from_millis(300));
                let stderr = server.stderr.lock().unwrap().join("\n");
                (status, stderr)
            }
        };
        let status = status.unwrap_or_else(|| {
            panic!(
                "{transport:?}: still running {} s after SIGTERM",
                grace.as_secs() + 3
            )
        });
        assert_eq!(status.code(), Some(0), "{transport:?}: {stderr}");
        assert!(
            *hole.accepted.lock().unwrap() >= 1,
            "{transport:?}: the exporters never tried"
        );
        assert!(
            stderr.contains("did not take the last spans and metrics"),
            "{transport:?}: {stderr}"
        );
    }
}

/// A `subscriptions/listen` of 2026-07-28 with request id `id` and the filter `notifications`.
fn listen_message(id: &str, notifications: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": notifications,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}},
    }})
}

/// Opens a listen stream over HTTP as `token` (request id `listen-ok`): the status line, the
/// stream kept open until the caller drops it.
fn open_listen_stream(server: &HttpServer, token: &str, uris: &[&str]) -> (String, std::net::TcpStream) {
    use std::io::{BufRead, Write};
    let address = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = listen_message("listen-ok", json!({"resourceSubscriptions": uris})).to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    (status, stream)
}

/// Subscriptions are requests like any other in the telemetry (issue 35's follow-up): a
/// `resources/subscribe` and a `subscriptions/listen`, made and refused, each get their log line
/// with the method, the outcome and the code, on stdio and over HTTP.
#[test]
fn issue35_subscriptions_and_listen_streams_are_logged_with_their_outcome() {
    for transport in TRANSPORTS {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        workspace(root);
        let home = root.to_str().unwrap().to_owned();
        let mut served = Served::logged_as_alice(
            transport,
            root,
            &[],
            &[("HOME", &home), ("TMPDIR", &home), ("RUST_LOG", "info")],
        );
        let listed = served.send(
            "alice",
            &json!({"jsonrpc": "2.0", "id": "list", "method": "resources/list", "params": {}}),
        );
        let uri = listed["result"]["resources"][0]["uri"]
            .as_str()
            .unwrap_or_else(|| panic!("{transport:?}: no resource listed: {listed}"))
            .to_owned();
        let missing = "shiftwork://no-such-resource";
        // (request id, method, what became of it: None for a result, Some(code) for an error).
        let mut expected: Vec<(&str, &str, Option<i64>)> = Vec::new();
        let mut check_answer = |id: &'static str, method: &'static str, answer: &Value| {
            let code = answer["error"]["code"].as_i64();
            assert!(
                code.is_some() || answer.get("result").is_some(),
                "{transport:?} {id}: {answer}"
            );
            expected.push((id, method, code));
        };
        let mut stream = None;
        match transport {
            Transport::Stdio => {
                let ok = served.send(
                    "alice",
                    &json!({"jsonrpc": "2.0", "id": "sub-ok", "method": "resources/subscribe", "params": {"uri": uri}}),
                );
                assert_eq!(ok["result"], json!({}), "{ok}");
                check_answer("sub-ok", "resources/subscribe", &ok);
                let bad = served.send(
                    "alice",
                    &json!({"jsonrpc": "2.0", "id": "sub-bad", "method": "resources/subscribe", "params": {"uri": missing}}),
                );
                assert!(bad["error"]["code"].is_i64(), "{bad}");
                check_answer("sub-bad", "resources/subscribe", &bad);
            }
            Transport::Http => {
                let token = served.tokens["alice"].clone();
                let bad = served
                    .http
                    .as_ref()
                    .unwrap()
                    .post(
                        Some(&token),
                        &[("MCP-Protocol-Version", "2026-07-28")],
                        // A filter that is not an object.
                        &listen_message("listen-bad", json!("everything")).to_string(),
                    )
                    .json();
                assert!(bad["error"]["code"].is_i64(), "{bad}");
                check_answer("listen-bad", "subscriptions/listen", &bad);
                let sub = served.send(
                    "alice",
                    &json!({"jsonrpc": "2.0", "id": "sub-http", "method": "resources/subscribe", "params": {"uri": uri}}),
                );
                assert!(sub["error"]["code"].is_i64(), "{sub}");
                check_answer("sub-http", "resources/subscribe", &sub);
                let (status, open) = open_listen_stream(served.http.as_ref().unwrap(), &token, &[&uri]);
                assert!(status.contains(" 200 "), "{status}");
                expected.push(("listen-ok", "subscriptions/listen", None));
                stream = Some(open);
            }
        }
        drop(stream);
        served.stop();
        let lines = served.request_lines();
        for (id, method, code) in expected {
            let line = lines
                .get(&format!("\"{id}\""))
                .or_else(|| lines.get(id))
                .unwrap_or_else(|| panic!("{transport:?}: no log line for {id}: {}", served.stderr));
            assert_eq!(line["method"], method, "{transport:?} {id}: {line}");
            match code {
                None => assert_eq!(line["outcome"], "result", "{transport:?} {id}: {line}"),
                Some(code) => {
                    assert_eq!(line["outcome"], "jsonrpc_error", "{transport:?} {id}: {line}");
                    assert_eq!(line["code"], code.to_string(), "{transport:?} {id}: {line}");
                }
            }
        }
    }
}
