//! Shared helpers of the adapter's tests: an in-process MCP client (rmcp's) speaking to the server's
//! own stdio transport over a Unix socket pair, a raw in-process JSON-RPC peer, the real binary spoken
//! to over its stdio, and the outputSchema validator.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use shiftwork_mcp::Server;

/// Starts `server` on its stdio transport (`shiftwork_mcp::stdio`) over one end of a socket pair, on
/// threads of its own; returns the other end.
pub fn serve_in_process(server: Server) -> UnixStream {
    let (server_end, client_end) = UnixStream::pair().unwrap();
    let output = server_end.try_clone().unwrap();
    std::thread::spawn(move || shiftwork_mcp::stdio::serve(server, server_end, output));
    client_end
}

/// An rmcp client connected in process to `server`.
pub async fn connect(server: Server) -> RunningService<RoleClient, ()> {
    let client_end = serve_in_process(server);
    client_end.set_nonblocking(true).unwrap();
    let stream = tokio::net::UnixStream::from_std(client_end).unwrap();
    ().serve(stream).await.expect("the client could not initialize")
}

/// A raw JSON-RPC peer of an in-process server: every line it sends and receives is its test's own.
pub struct Peer {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Peer {
    /// A peer of `server` (not initialized: call [`Peer::initialize`] when the test needs it).
    pub fn new(server: Server) -> Peer {
        let stream = serve_in_process(server);
        Peer {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    /// Sends one line (a newline is added).
    pub fn send_line(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).unwrap();
        self.writer.write_all(b"\n").unwrap();
    }

    /// Sends one JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// A second handle on the sending side (to send from another thread).
    pub fn writer(&self) -> UnixStream {
        self.writer.try_clone().unwrap()
    }

    /// The next line as sent (with its newline), or `None` when none arrives within `timeout`.
    pub fn receive_line(&mut self, timeout: Duration) -> Option<String> {
        self.reader.get_ref().set_read_timeout(Some(timeout)).unwrap();
        let mut line = String::new();
        let got = match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("cannot read: {e}"),
        };
        self.reader.get_ref().set_read_timeout(None).unwrap();
        got
    }

    /// The next message, or `None` when none arrives within `timeout`.
    pub fn receive_within(&mut self, timeout: Duration) -> Option<Value> {
        let line = self.receive_line(timeout)?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}")))
    }

    /// The next message (waiting up to 10 s).
    pub fn receive(&mut self) -> Value {
        self.receive_within(Duration::from_secs(10))
            .expect("no message within 10 s")
    }

    /// `initialize` and `notifications/initialized`.
    pub fn initialize(&mut self) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}));
        let answer = self.receive();
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes the sending side (the server's input ends).
    pub fn close_input(&mut self) {
        self.writer.shutdown(std::net::Shutdown::Write).unwrap();
    }
}

/// Calls `tool` with `arguments` (a JSON object) and returns the MCP result.
pub async fn call(client: &RunningService<RoleClient, ()>, tool: &str, arguments: Value) -> CallToolResult {
    let args: Map<String, Value> = arguments
        .as_object()
        .cloned()
        .expect("arguments must be an object");
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool} failed at the protocol level: {e}"))
}

/// The single text block of a result (MC-8 requires exactly one).
pub fn only_text(result: &CallToolResult) -> String {
    assert_eq!(
        result.content.len(),
        1,
        "expected exactly one content block: {result:?}"
    );
    match result.content[0].as_text() {
        Some(t) => t.text.clone(),
        None => panic!("expected a text block, got {:?}", result.content[0]),
    }
}

/// Validates `instance` against the JSON Schema `schema`; the error lists every violation.
pub fn validate(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| format!("the schema does not compile: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// MC-8: an answer carries `structuredContent` valid against the tool's `outputSchema`, and one text
/// block holding the same JSON. Returns the structured content.
pub fn assert_valid_answer(tool: &Tool, result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "{}: unexpected tool error: {result:?}",
        tool.name
    );
    let structured = result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{}: no structuredContent", tool.name));
    let schema = Value::Object(
        tool.output_schema
            .as_deref()
            .cloned()
            .unwrap_or_else(|| panic!("{}: no outputSchema", tool.name)),
    );
    if let Err(e) = validate(&schema, &structured) {
        panic!(
            "{}: structuredContent does not match its outputSchema: {e}\n{structured}",
            tool.name
        );
    }
    let text: Value = serde_json::from_str(&only_text(result)).expect("the text block is not JSON");
    assert_eq!(
        text, structured,
        "{}: the text block differs from structuredContent",
        tool.name
    );
    structured
}

/// The real `shiftwork-mcp` binary, spoken to over its stdio (newline-delimited JSON-RPC).
pub struct Binary {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Binary {
    /// Starts `shiftwork-mcp serve ARGS` with extra environment variables.
    pub fn serve(args: &[&str], env: &[(&str, &str)]) -> Binary {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
        cmd.arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("cannot start shiftwork-mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Binary {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    /// Sends one JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one line of stdout as JSON (every stdout line must be JSON-RPC).
    pub fn receive(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    /// Sends a request and returns the response with its id.
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

    /// `initialize` followed by `notifications/initialized`; returns the `initialize` result.
    pub fn initialize(&mut self) -> Value {
        let response = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response["result"].clone()
    }

    /// Closes stdin and waits for the exit status; returns it with everything left on stdout and stderr.
    pub fn close(mut self) -> (ExitStatus, String, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        (self.child.wait().unwrap(), rest, err)
    }
}

/// Runs `shiftwork-mcp ARGS` to completion.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"));
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cannot run shiftwork-mcp")
}
