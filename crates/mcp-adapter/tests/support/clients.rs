//! A client of the real binary on either transport, and the job, queue and work log it serves: the
//! resources and prompts suites share them (issue 35 items 2 and 3).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{HttpServer, add_token};

/// EX of the shift-work scenarios: three units, U1 done, U3 the cursor.
pub const EX: &str = r##"{"version": 1, "job": {"id": "demo-job", "goal": "Ship the demo.", "done_definition": "make test passes", "constraints": ["keep the API stable"]}, "plan": {"cursor": "U3", "units": [{"id": "U1", "title": "Scaffold", "brief_path": "briefs/U1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make u1"}, {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, {"id": "U4", "title": "Review core", "brief_path": "briefs/U4.md", "status": "todo", "role": "reviewer", "depends_on": ["U3"], "verify": "make u4"}]}, "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": []}}"##;

/// The newest protocol, which a request names in `_meta`.
pub const STATELESS: &str = "2026-07-28";

/// A repository at `dir`: EX as `.shiftwork/checkpoint.json`, a work log with two items, a
/// workspace to dispatch from.
pub fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join(".shiftwork")).unwrap();
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::write(dir.join(".shiftwork/checkpoint.json"), EX).unwrap();
    std::fs::write(
        dir.join("logs/2026-09-06.md"),
        "# Today\n\n- [x] Fixed the bug\n- [ ] Write the notes\n",
    )
    .unwrap();
}

/// The flags of a server of every group on `dir`'s files.
pub fn flags(dir: &Path) -> Vec<String> {
    [
        "--contracts-db",
        dir.join("contracts.db").to_str().unwrap(),
        "--worklog-dir",
        dir.join("logs").to_str().unwrap(),
        "--hours",
        "TZ=Europe/London Mon-Fri 09:00-17:30",
        "--zone",
        "UTC",
    ]
    .map(String::from)
    .to_vec()
}

/// The real binary serving stdio, its stdout read by a thread of its own so that a wait for a line
/// ends by its timeout.
pub struct Stdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    next_id: u64,
}

impl Stdio {
    fn start(dir: &Path, args: &[String]) -> Stdio {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
            .current_dir(dir)
            .arg("serve")
            .args(args)
            .env("HOME", dir)
            .env("AGENT_NAME", "alice")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stdio = Stdio {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = stdio.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert!(
            init["result"]["capabilities"]["resources"]["subscribe"] == true,
            "{init}"
        );
        stdio.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        stdio
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message within `timeout`.
    pub fn receive_within(&mut self, timeout: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(timeout).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// The next message (within 20 s).
    pub fn receive(&mut self) -> Value {
        self.receive_within(Duration::from_secs(20))
            .expect("no message from the server within 20 s")
    }

    /// A request and its response (notifications before it are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which transport a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// A client of the real binary on either transport.
pub enum Client {
    Stdio(Stdio),
    Http { server: HttpServer, token: String },
}

impl Client {
    /// A server of every group started in `dir` (with `extra` flags), and a client of it.
    pub fn start(transport: Transport, dir: &Path, extra: &[&str]) -> Client {
        let mut args: Vec<String> = flags(dir);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let home = dir.to_str().unwrap();
        match transport {
            Transport::Stdio => Client::Stdio(Stdio::start(dir, &args)),
            Transport::Http => {
                let tokens = dir.join("tokens");
                let token = add_token(&tokens, "alice");
                args.extend(["--auth-tokens".to_owned(), tokens.to_str().unwrap().to_owned()]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                Client::Http {
                    server: HttpServer::start(dir, &args, &[("HOME", home)]),
                    token,
                }
            }
        }
    }

    /// A request of the handshake versions: the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        match self {
            Client::Stdio(binary) => binary.request(method, params),
            Client::Http { server, token } => {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
                let answer = server.post(Some(token), &[], &body.to_string());
                assert_eq!(answer.status, 200, "{answer:?}");
                answer.json()
            }
        }
    }

    /// A request of 2026-07-28 (the version and capabilities in `_meta`): the whole response.
    pub fn stateless(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        match self {
            Client::Stdio(binary) => binary.request(method, params),
            Client::Http { server, token } => {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
                let answer = server.post(
                    Some(token),
                    &[("mcp-protocol-version", STATELESS), ("mcp-method", method)],
                    &body.to_string(),
                );
                assert_eq!(answer.status, 200, "{answer:?}");
                answer.json()
            }
        }
    }

    /// The text of the resource at `uri` (a read that must succeed).
    pub fn read(&mut self, uri: &str) -> String {
        let response = self.request("resources/read", json!({"uri": uri}));
        let contents = &response["result"]["contents"][0];
        assert_eq!(contents["uri"], uri, "{response}");
        contents["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{response}"))
            .to_owned()
    }
}

/// Runs a tool in another process (`shiftwork-mcp call`) in `dir`, as `agent`.
pub fn elsewhere(dir: &Path, tool: &str, arguments: Value) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
    cmd.current_dir(dir)
        .args(["call", tool, &arguments.to_string()])
        .args(flags(dir))
        .env("AGENT_NAME", "carol")
        .env("HOME", dir);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A dispatch from carol to bob, made by another process; its contract id.
pub fn dispatch(dir: &Path, title: &str) -> String {
    let sent = elsewhere(
        dir,
        "dispatch_contract",
        json!({"target_agent": "bob", "title": title, "workspace_root": dir.to_str().unwrap()}),
    );
    assert_eq!(sent["ok"], true, "{sent}");
    sent["contract_id"].as_str().unwrap().to_owned()
}

/// The clock-out of U3 made by another process.
pub fn clock_out_elsewhere(dir: &Path) {
    let done = elsewhere(
        dir,
        "shiftwork_clock_out",
        json!({"checkpoint": ".shiftwork/checkpoint.json", "unit_id": "U3", "status": "done", "handoff_patch": {}, "history_entry": {"unit": "U3", "outcome": "built"}}),
    );
    assert_eq!(done["result"], "ok", "{done}");
}

/// The SDK client scripts, in `tests/sdk`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk").join(name)
}

/// The value of `variable`, or `None` after saying the test is skipped (a failure under CI).
pub fn sdk(variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{variable} is not set: scripts/setup.d/40-mcp-sdks.sh installs the SDK (CI must run this test)"
            );
            eprintln!("skipped: {variable} is not set (scripts/setup.d/40-mcp-sdks.sh installs the SDK)");
            None
        }
    }
}
