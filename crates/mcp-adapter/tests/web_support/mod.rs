//! A team's server for the web view's tests (issue 38): a job whose units carry hostile titles, a
//! contracts store, a work log, a token file, the real binary serving all of it over HTTP, and a
//! client that keeps a session cookie.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, HttpAnswer, HttpServer, answer};

/// A title that would be an image with a handler, if it were markup.
pub const IMG_TITLE: &str = r#"<img src=x onerror="window.__pwned=1">"#;
/// A title that would configure Mermaid, if a chart parsed it.
pub const MERMAID_TITLE: &str = r#"%%{init: {"securityLevel": "loose"}}%% click C call alert(1)"#;
/// A title that would be a link, if it were one.
pub const LINK_TITLE: &str = "javascript:window.__pwned=2";
/// A title with bidirectional controls (right-to-left override and its pop).
pub const BIDI_TITLE: &str = "\u{202e}txt.exe\u{202c} release notes";
/// The bidi title as the page shows it: each control replaced by U+FFFD.
pub const BIDI_SHOWN: &str = "\u{fffd}txt.exe\u{fffd} release notes";

/// The job: A and B touch the same file (B is held into wave 2), C after A, D after C.
fn checkpoint() -> Value {
    let unit = |id: &str, title: &str, role: &str, deps: &[&str], touches: &[&str]| {
        json!({"id": id, "title": title, "brief_path": format!("briefs/{id}.md"), "status": "todo", "role": role,
               "depends_on": deps, "verify": "true", "touches": touches})
    };
    json!({
        "version": 1,
        "job": {"id": "tour", "goal": "Ship the tour", "done_definition": "make test", "constraints": [],
                "budget": {"units": 6}},
        "plan": {"cursor": "A", "units": [
            unit("A", "Write the parser", "implementer", &[], &["src/parser.rs"]),
            unit("B", IMG_TITLE, "implementer", &[], &["src/parser.rs"]),
            unit("C", MERMAID_TITLE, "reviewer", &["A"], &[]),
            unit("D", LINK_TITLE, "planner", &["C"], &[]),
            unit("E", BIDI_TITLE, "planner", &["D"], &[]),
        ]},
        "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [], "external": []},
        "history": [], "retro": [],
        "handoff": {"next_action": "Start.", "open_questions": [], "do_not": []}
    })
}

/// The team's files and its server.
pub struct Team {
    _dir: tempfile::TempDir,
    /// The job's root (the server's `--roots`, and `HOME`).
    pub root: PathBuf,
    /// The token file.
    pub tokens: PathBuf,
    /// The server.
    pub server: HttpServer,
    /// The lead's token.
    pub lead: String,
    /// Bob's token.
    pub bob: String,
}

impl Team {
    /// The files, and the binary serving them with `extra` flags.
    pub fn start(extra: &[&str]) -> Team {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".shiftwork")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("log")).unwrap();
        std::fs::write(
            root.join(".shiftwork/checkpoint.json"),
            serde_json::to_string_pretty(&checkpoint()).unwrap(),
        )
        .unwrap();
        std::fs::write(root.join("src/parser.rs"), "pub fn parse() {}\n").unwrap();
        std::fs::write(
            root.join("log/2026-09-21.md"),
            format!(
                "# 2026-09-21\n\n- [x] Fixed the login bug\n- [x] {IMG_TITLE}\n- [ ] [docs](javascript:window.__pwned=3) {BIDI_TITLE}\n"
            ),
        )
        .unwrap();
        let tokens = root.join("tokens");
        let lead = support::add_token(&tokens, "lead");
        let bob = support::add_token(&tokens, "bob");
        let _alice = support::add_token(&tokens, "alice");
        let mut args: Vec<String> = [
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--roots",
            root.to_str().unwrap(),
            "--contracts-db",
            root.join("contracts.db").to_str().unwrap(),
            "--worklog-dir",
            root.join("log").to_str().unwrap(),
            "--worklog-pattern",
            r"\.md$",
            "--ui-hours",
            "TZ=UTC Mon-Fri 09:00-17:30",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let home = root.display().to_string();
        let server = HttpServer::start(&root, &args, &[("HOME", &home), ("TZ", "UTC")]);
        Team {
            _dir: dir,
            root,
            tokens,
            server,
            lead,
            bob,
        }
    }

    /// The checkpoint's path.
    pub fn checkpoint(&self) -> String {
        self.root.join(".shiftwork/checkpoint.json").display().to_string()
    }

    /// `shiftwork-mcp ARGS` from another process, on this team's files, as `agent`.
    pub fn run(&self, args: &[&str], agent: Option<&str>) -> Output {
        let home = self.root.display().to_string();
        let db = self.root.join("contracts.db").display().to_string();
        let mut env = vec![
            ("HOME", home.as_str()),
            ("TZ", "UTC"),
            ("SHIFTWORK_CONTRACTS_DB", db.as_str()),
        ];
        if let Some(agent) = agent {
            env.push(("AGENT_NAME", agent));
        }
        let out = support::run(args, &env);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A dispatch from `from` to `to` by another process; the contract's id.
    pub fn dispatch(&self, from: &str, to: &str, title: &str) -> String {
        let arguments = json!({
            "target_agent": to,
            "title": title,
            "workspace_root": self.root.display().to_string(),
            "pointers": ["src/parser.rs"],
        })
        .to_string();
        let out = self.run(&["call", "dispatch_contract", &arguments], Some(from));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["ok"], true, "{answer}");
        answer["contract_id"].as_str().unwrap().to_owned()
    }

    /// A clock-out of `unit` by another process.
    pub fn clock_out(&self, unit: &str) {
        let arguments = json!({
            "checkpoint": self.checkpoint(),
            "unit_id": unit,
            "status": "done",
            "handoff_patch": {},
            "history_entry": {"unit": unit, "outcome": "done", "notes": "merged"},
            "accounting": {"tokens": 1234, "duration_ms": 65000, "model": "m-1"},
            "agent_id": "agent-7",
        })
        .to_string();
        let out = self.run(&["call", "shiftwork_clock_out", &arguments], None);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(r#""result":"ok""#),
            "{out:?}"
        );
    }

    /// Revokes `agent`'s tokens in the token file.
    pub fn revoke(&self, agent: &str) {
        let out = support::run(
            &["token", "revoke", agent, "--file", self.tokens.to_str().unwrap()],
            &[],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// A browser-like client of this server without a session.
    pub fn client(&self) -> Client {
        Client::new(&self.server.base)
    }
}

/// A client that keeps the session cookie it is given, as a browser does.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    /// The cookie (`name=value`), once signed in.
    pub cookie: Option<String>,
}

impl Client {
    pub fn new(base: &str) -> Client {
        Client {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .new_agent(),
            base: base.to_owned(),
            cookie: None,
        }
    }

    /// The server's own origin, as a browser sends it.
    pub fn origin(&self) -> String {
        self.base.clone()
    }

    fn keep(&mut self, answer: &HttpAnswer) {
        if let Some(set) = answer.header("set-cookie") {
            let pair = set.split(';').next().unwrap_or("").trim();
            if pair.ends_with('=') {
                self.cookie = None;
            } else {
                self.cookie = Some(pair.to_owned());
            }
        }
    }

    /// `GET path` with the session cookie.
    pub fn get(&mut self, path: &str) -> HttpAnswer {
        let mut request = self.agent.get(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie.as_str());
        }
        let answer = answer(request.call().expect("the request failed"));
        self.keep(&answer);
        answer
    }

    /// `POST path` with a form body and `headers` (an `Origin` of the server's own unless given).
    pub fn post_form(&mut self, path: &str, body: &str, headers: &[(&str, &str)]) -> HttpAnswer {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("origin")) {
            request = request.header("origin", self.origin().as_str());
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie.as_str());
        }
        let answer = answer(request.send(body).expect("the request failed"));
        self.keep(&answer);
        answer
    }

    /// Signs in with `token`; the answer.
    pub fn sign_in(&mut self, token: &str) -> HttpAnswer {
        let body = format!("token={}", form_encode(token));
        self.post_form("/ui/sign-in", &body, &[])
    }

    /// Opens the event stream; each event as `(name, data)` on the receiver.
    pub fn events(&self) -> Receiver<(String, String)> {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let mut request = agent.get(format!("{}/ui/events", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie.as_str());
        }
        let response = request.call().expect("the stream failed");
        assert_eq!(response.status().as_u16(), 200, "the event stream");
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let reader = BufReader::new(response.into_body().into_reader());
            let mut name = String::from("message");
            for line in reader.lines() {
                let Ok(line) = line else { return };
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(data) = line.strip_prefix("data: ") {
                    if send.send((name.clone(), data.to_owned())).is_err() {
                        return;
                    }
                    name = String::from("message");
                }
            }
        });
        receive
    }
}

/// The next event named `name` whose data satisfies `accept`, within `within`.
pub fn next_event(
    events: &Receiver<(String, String)>,
    name: &str,
    within: Duration,
    accept: impl Fn(&Value) -> bool,
) -> Option<Value> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok((n, data)) if n == name => {
                let value: Value = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}"));
                if accept(&value) {
                    return Some(value);
                }
            }
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// `application/x-www-form-urlencoded` of a value.
pub fn form_encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The path of an artifact of the tests (kept under `target/`).
pub fn artifact(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/web-view");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}
