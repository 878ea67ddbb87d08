//! The release `shiftwork-mcp serve --http` of the HTTP benches, on a port the system chose.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `serve --http 127.0.0.1:0 --tools contracts,hours`, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Server {
    /// Starts the server in `cwd` with `args` and `env` besides, and waits for it to say where it
    /// listens (at info, its default level over HTTP).
    pub fn start(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Server {
        let mut command = Command::new(super::server_binary());
        command
            .args(["serve", "--http", "127.0.0.1:0", "--tools", "contracts,hours"])
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
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
