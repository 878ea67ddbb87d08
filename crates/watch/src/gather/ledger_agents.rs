//! PORT: which agent each unit's ledger lines name, and the last clock-outs with their cost. The
//! core's ledger pass reports neither `agent_id` (only accounting lines carry it) nor the accounting
//! lines themselves, so this narrow reader looks for them beside the core's pass, over the same
//! chunks. Replace it with the typed ledger API once `shiftwork-core` exposes the agent of a unit's
//! lines and its accounting lines.

use std::collections::{HashMap, VecDeque};

use shiftwork_core::json::{self, Json};

use crate::display_text::clean_text;
use crate::snapshot::{CLOCK_OUTS_SHOWN, ClockOut};

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
    clock_outs: VecDeque<ClockOut>,
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
    pub fn finish(self) -> HashMap<String, String> {
        self.finish_with_clock_outs().0
    }

    /// Ends the pass: unit id → agent, and the last [`CLOCK_OUTS_SHOWN`] clock-outs (the accounting
    /// lines: an object naming a `unit` and a `status`, without an `event`), newest first.
    ///
    /// ```
    /// use shiftwork_watch::gather::AgentScan;
    /// let mut scan = AgentScan::default();
    /// scan.feed(b"{\"event\": \"brief\", \"unit\": \"U3\"}\n");
    /// scan.feed(b"{\"ts\": \"2026-09-21T10:00:00Z\", \"unit\": \"U3\", \"role\": \"r\", \"status\": \"done\", \"tokens\": 1200, \"duration_ms\": 5000, \"agent_id\": \"a7\", \"briefed\": true}\n");
    /// let (_, clock_outs) = scan.finish_with_clock_outs();
    /// assert_eq!((clock_outs[0].unit.as_str(), clock_outs[0].tokens), ("U3", Some(1200)));
    /// assert_eq!(clock_outs[0].agent.as_deref(), Some("a7"));
    /// ```
    pub fn finish_with_clock_outs(mut self) -> (HashMap<String, String>, Vec<ClockOut>) {
        self.end_line();
        (self.agents, self.clock_outs.into_iter().rev().collect())
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
        if overlong || !(contains(&line, b"\"agent_id\"") || contains(&line, b"\"status\"")) {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        for piece in text.split('\r') {
            let Ok(value) = json::parse(piece) else {
                continue;
            };
            let Some(unit) = value.get("unit").and_then(Json::as_str) else {
                continue;
            };
            if let Some(agent) = value.get("agent_id").and_then(Json::as_str) {
                self.agents.insert(unit.to_owned(), agent.to_owned());
            }
            if let Some(clock_out) = clock_out_of(&value, unit) {
                if self.clock_outs.len() == CLOCK_OUTS_SHOWN {
                    self.clock_outs.pop_front();
                }
                self.clock_outs.push_back(clock_out);
            }
        }
    }
}

/// The clock-out an accounting line records: a line naming a `status` and no `event`.
fn clock_out_of(value: &Json, unit: &str) -> Option<ClockOut> {
    if value.get("event").is_some() {
        return None;
    }
    let status = value.get("status").and_then(Json::as_str)?;
    let text = |key: &str| value.get(key).and_then(Json::as_str).map(clean_text);
    let whole = |key: &str| {
        value
            .get(key)
            .and_then(Json::as_number)
            .and_then(|n| n.as_whole())
    };
    Some(ClockOut {
        unit: clean_text(unit),
        status: clean_text(status),
        agent: text("agent_id"),
        tokens: whole("tokens"),
        duration_ms: whole("duration_ms"),
        model: text("model"),
        at: text("ts").unwrap_or_default(),
    })
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
