//! The HTTP benches' server and client: a `serve --http` process on a free port, a client of one agent
//! over one kept-alive connection, and a token file.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// A `serve --http` process: its base URL.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Server {
    /// `shiftwork-mcp serve --http 127.0.0.1:0 ARGS` with `env`, in `cwd` when given; waits for it
    /// to say where it listens.
    pub fn start(args: &[&str], env: &[(&str, &Path)], cwd: Option<&Path>) -> Server {
        let mut command = Command::new(super::server_binary());
        command
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (found, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            while let Some(Ok(line)) = lines.next() {
                if let Some(at) = line.find("serving MCP at ") {
                    let _ = found.send(
                        line[at + "serving MCP at ".len()..]
                            .trim_end_matches("/mcp")
                            .to_owned(),
                    );
                }
            }
        });
        // `serve --http` logs where it listens at info, its default level.
        let base = address
            .recv_timeout(Duration::from_secs(30))
            .expect("the server says where it listens");
        Server { child, base }
    }

    /// The server's threads (Linux).
    pub fn threads(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of one agent: one kept-alive connection.
pub struct Client {
    agent: ureq::Agent,
    url: String,
    token: String,
    id: u64,
}

impl Client {
    /// A client of the server at `base` with the bearer `token`.
    pub fn new(base: &str, token: &str) -> Client {
        Client {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(120)))
                .build()
                .new_agent(),
            url: format!("{base}/mcp"),
            token: token.to_owned(),
            id: 0,
        }
    }

    /// A JSON-RPC request: the response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        let mut response = self
            .agent
            .post(&self.url)
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .send(body.to_string())
            .unwrap();
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// A tool call: its `structuredContent`.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))["result"]["structuredContent"].clone()
    }
}

/// A new token file `file` with a token for each of `names`: the tokens, in order.
pub fn token_file(file: &Path, names: impl IntoIterator<Item = String>) -> Vec<String> {
    let _ = std::fs::remove_file(file);
    let mut tokens = Vec::new();
    for name in names {
        let out = Command::new(super::server_binary())
            .args(["token", "add", &name, "--file", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        tokens.push(String::from_utf8(out.stdout).unwrap().trim().to_owned());
    }
    tokens
}
