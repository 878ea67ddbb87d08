//! An MCP client over a server's stdio, for the benches that measure through the real binary
//! (`mcp_vs_bantamkit`, `shiftwork_latency`, `contracts_serve`): spawn, `initialize`, one request
//! line at a time, the answer matched by its id.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running MCP server spoken to over its stdin and stdout (stderr discarded).
pub struct StdioServer {
    child: Child,
    /// `None` once [`StdioServer::stop`] closed it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    /// Spawns `command` and completes the MCP handshake.
    pub fn start(command: &mut Command) -> StdioServer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = StdioServer {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        );
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Writes one line (a notification, or a request whose answer is read with [`Self::timed`]).
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open until stop");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes the request `line` and reads until its answer: the round trip (request written →
    /// answer read, decoding excluded) and the answer.
    pub fn timed(&mut self, line: &str) -> (Duration, Value) {
        let id: Value = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
        let started = Instant::now();
        self.send(line);
        let mut text = String::new();
        loop {
            text.clear();
            assert!(
                self.stdout.read_line(&mut text).unwrap() > 0,
                "the server closed stdout"
            );
            if text.contains("\"id\"") {
                let took = started.elapsed();
                let answer: Value = serde_json::from_str(&text).unwrap();
                if answer["id"] == id {
                    return (took, answer);
                }
            }
        }
    }

    /// One request of `method` with `params`: the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.timed(&line.to_string()).1
    }

    /// One `tools/call`: the structured answer.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        response["result"]["structuredContent"].clone()
    }

    /// Closes stdin and waits for the server to end.
    pub fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
