//! PORT: which agent each unit's ledger lines name. The core's ledger pass does not report `agent_id`
//! (only accounting lines carry it), so this narrow reader looks for it beside the core's
//! pass, over the same chunks. Replace it with the typed ledger API once `shiftwork-core` exposes the
//! agent of a unit's lines.

use std::collections::HashMap;

use shiftwork_core::json::{self, Json};

/// A ledger line longer than this is skipped here (the core's pass still reads it): no line either
/// implementation writes comes near it, and it bounds the memory of a hostile ledger.
pub const MAX_LINE: usize = 64 * 1024;

/// The agent of each unit: the `agent_id` of the latest line naming the unit that carries one.
///
/// ```
/// use shiftwork_watch::gather::AgentScan;
/// let mut scan = AgentScan::default();
/// scan.feed(b"{\"event\": \"brief\", \"unit\": \"U3\"}\n{\"agent_id\": \"agent-7\", \"unit\": \"U3\"}\n");
/// assert_eq!(scan.finish().get("U3").map(String::as_str), Some("agent-7"));
/// ```
#[derive(Debug, Default)]
pub struct AgentScan {
    partial: Vec<u8>,
    overlong: bool,
    agents: HashMap<String, String>,
}

impl AgentScan {
    /// Feeds the next bytes of the ledger.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            self.take(&bytes[..nl]);
            self.end_line();
            bytes = &bytes[nl + 1..];
        }
        self.take(bytes);
    }

    /// Ends the pass: unit id → agent.
    pub fn finish(mut self) -> HashMap<String, String> {
        self.end_line();
        self.agents
    }

    fn take(&mut self, piece: &[u8]) {
        if self.overlong || self.partial.len() + piece.len() > MAX_LINE {
            self.overlong = true;
            self.partial.clear();
        } else {
            self.partial.extend_from_slice(piece);
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.partial);
        let overlong = std::mem::replace(&mut self.overlong, false);
        if overlong || !contains(&line, b"\"agent_id\"") {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        for piece in text.split('\r') {
            if let Some((unit, agent)) = agent_of(piece) {
                self.agents.insert(unit, agent);
            }
        }
    }
}

/// The `unit` and `agent_id` strings of one line that is a JSON object holding both.
fn agent_of(line: &str) -> Option<(String, String)> {
    let value = json::parse(line).ok()?;
    let unit = value.get("unit").and_then(Json::as_str)?;
    let agent = value.get("agent_id").and_then(Json::as_str)?;
    Some((unit.to_owned(), agent.to_owned()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agents(ledger: &[u8], chunk: usize) -> Vec<(String, String)> {
        let mut scan = AgentScan::default();
        for piece in ledger.chunks(chunk.max(1)) {
            scan.feed(piece);
        }
        let mut out: Vec<_> = scan.finish().into_iter().collect();
        out.sort();
        out
    }

    /// Issue 15 (the agent that holds a unit): the latest line naming an agent wins, whatever the
    /// chunking; junk, arrays, other units' lines and lines without an agent change nothing.
    #[test]
    fn the_latest_agent_of_each_unit_wins_in_any_chunking() {
        let ledger = b"{\"agent_id\": \"a1\", \"unit\": \"U1\"}\njunk \"agent_id\"\n[\"agent_id\"]\n\
{\"event\": \"brief\", \"unit\": \"U1\"}\n{\"agent_id\": \"a2\", \"unit\": \"U1\"}\r{\"agent_id\": \"b\", \"unit\": \"U2\"}\n\
{\"agent_id\": 7, \"unit\": \"U3\"}\n{\"agent_id\": \"c\", \"unit\": \"U3\"}";
        let expected = vec![
            (String::from("U1"), String::from("a2")),
            (String::from("U2"), String::from("b")),
            (String::from("U3"), String::from("c")),
        ];
        for chunk in 1..=ledger.len() {
            assert_eq!(agents(ledger, chunk), expected, "chunk {chunk}");
        }
    }

    /// Hostile input: a line past the bound is skipped without keeping it in memory.
    #[test]
    fn overlong_lines_are_skipped() {
        let mut ledger = b"{\"agent_id\": \"x\", \"unit\": \"U1\", \"pad\": \"".to_vec();
        ledger.extend(std::iter::repeat_n(b'p', MAX_LINE));
        ledger.extend_from_slice(b"\"}\n{\"agent_id\": \"y\", \"unit\": \"U2\"}\n");
        assert_eq!(
            agents(&ledger, 4096),
            vec![(String::from("U2"), String::from("y"))]
        );
    }
}
