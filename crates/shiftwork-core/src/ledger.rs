//! The ledger (§12): its lines, the one streaming pass that yields `briefed` for every unit (SW-95),
//! the in-flight set and the budget figures (SW-97, SW-98).

use std::collections::HashMap;
use std::path::Path;

use seams::Fs;

use crate::json::{Json, LineFacts, ledger_facts, to_ledger_text};

/// What one pass over the ledger found for the units of a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerSummary {
    /// briefed(u) for each unit of the plan, in plan order (SW-95).
    pub briefed: Vec<bool>,
    /// Counted accounting lines (SW-97).
    pub spent_units: u64,
    /// Sum of the whole-number, non-negative `tokens` of the counted lines (saturating).
    pub spent_tokens: i128,
    /// Those `tokens` values, when asked for (the budget's median needs them).
    pub counted_tokens: Vec<i128>,
    /// The ledger's last byte, `None` when it is empty or absent (SW-16).
    pub last_byte: Option<u8>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    briefed: bool,
    before: bool,
}

/// A streaming reader of the ledger: feed bytes, then finish.
#[derive(Debug)]
pub struct LedgerPass<'u> {
    index: HashMap<&'u str, usize>,
    flags: Vec<Flags>,
    /// Per plan unit: the tokens of its last accounting line while not yet known to be counted.
    pending_known: Vec<Option<Option<i128>>>,
    /// The same for units the plan does not name.
    pending: HashMap<String, Option<i128>>,
    keep_tokens: bool,
    partial: Vec<u8>,
    summary: LedgerSummary,
}

impl<'u> LedgerPass<'u> {
    /// A pass for the units `unit_ids` (plan order); `keep_tokens` keeps the counted `tokens` values.
    pub fn new(unit_ids: &[&'u str], keep_tokens: bool) -> Self {
        LedgerPass {
            index: unit_ids.iter().enumerate().map(|(i, id)| (*id, i)).collect(),
            flags: vec![Flags::default(); unit_ids.len()],
            pending_known: vec![None; unit_ids.len()],
            pending: HashMap::new(),
            keep_tokens,
            partial: Vec::new(),
            summary: LedgerSummary::default(),
        }
    }

    /// Feeds the next bytes of the ledger.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.summary.last_byte = Some(last);
        }
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            if self.partial.is_empty() {
                self.piece(&bytes[..nl]);
            } else {
                let mut piece = std::mem::take(&mut self.partial);
                piece.extend_from_slice(&bytes[..nl]);
                self.piece(&piece);
            }
            bytes = &bytes[nl + 1..];
        }
        self.partial.extend_from_slice(bytes);
    }

    /// Ends the pass.
    pub fn finish(mut self) -> LedgerSummary {
        let rest = std::mem::take(&mut self.partial);
        self.piece(&rest);
        let mut pending: Vec<Option<i128>> = self.pending.drain().map(|(_, t)| t).collect();
        pending.extend(self.pending_known.iter_mut().filter_map(Option::take));
        for tokens in pending {
            self.count(tokens);
        }
        self.summary.briefed = self.flags.iter().map(|f| f.briefed).collect();
        self.summary
    }

    /// One `\n`-delimited piece: decoded with replacement and split as 0.36.2 splits lines (SW-94).
    fn piece(&mut self, bytes: &[u8]) {
        // Fast path: no other line break can hide in bytes free of these (SW-94's break set).
        let plain = !bytes
            .iter()
            .any(|&b| matches!(b, b'\r' | 0x0b | 0x0c | 0x1c..=0x1e | 0xc2 | 0xe2));
        if plain && let Ok(line) = std::str::from_utf8(bytes) {
            if let Some(facts) = ledger_facts(line) {
                self.line(&facts);
            }
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        for line in text.split(is_line_break) {
            if let Some(facts) = ledger_facts(line) {
                self.line(&facts);
            }
        }
    }

    fn line(&mut self, facts: &LineFacts) {
        let Some(Json::String(unit)) = &facts.unit else {
            return;
        };
        let event = match &facts.event {
            None => Event::Absent,
            Some(Json::String(e)) if e == "brief" => Event::Brief,
            Some(Json::String(e)) if e == "uncommitted" => Event::Uncommitted,
            Some(_) => Event::Other,
        };
        let known = self.index.get(unit.as_str()).copied();
        if let Some(i) = known {
            let f = &mut self.flags[i];
            match event {
                Event::Brief => f.briefed = true,
                Event::Uncommitted => f.briefed = f.before,
                Event::Absent | Event::Other => {
                    f.before = f.briefed;
                    f.briefed = false;
                }
            }
        }
        // The budget's accounting lines (SW-97): a line naming the same unit decides whether the
        // pending one counts.
        let previous = match known {
            Some(i) => self.pending_known[i].take(),
            None => self.pending.remove(unit.as_str()),
        };
        if let Some(tokens) = previous
            && event != Event::Uncommitted
        {
            self.count(tokens);
        }
        if event == Event::Absent {
            let tokens = facts
                .tokens
                .as_ref()
                .and_then(Json::as_number)
                .and_then(|n| n.as_whole())
                .filter(|t| *t >= 0);
            match known {
                Some(i) => self.pending_known[i] = Some(tokens),
                None => {
                    self.pending.insert(unit.clone(), tokens);
                }
            }
        }
    }

    fn count(&mut self, tokens: Option<i128>) {
        self.summary.spent_units += 1;
        if let Some(t) = tokens {
            self.summary.spent_tokens = self.summary.spent_tokens.saturating_add(t);
            if self.keep_tokens {
                self.summary.counted_tokens.push(t);
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Absent,
    Brief,
    Uncommitted,
    Other,
}

/// Python's `str.splitlines` breaks, besides `\n` (already split): `\r`, VT, FF, FS, GS, RS, NEL,
/// LINE SEPARATOR, PARAGRAPH SEPARATOR.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Reads the ledger at `path` in one streaming pass for the units `unit_ids`. A missing or
/// unreadable ledger reads as empty (SW-94).
pub fn scan<F: Fs + ?Sized>(fs: &F, path: &Path, unit_ids: &[&str], keep_tokens: bool) -> LedgerSummary {
    let mut pass = LedgerPass::new(unit_ids, keep_tokens);
    let read = fs.read_chunks(path, seams::hash::CHUNK_SIZE, &mut |chunk| {
        pass.feed(chunk);
        Ok(())
    });
    match read {
        Ok(_) => pass.finish(),
        Err(_) => LedgerPass::new(unit_ids, keep_tokens).finish(),
    }
}

/// The brief line of a clock-in (SW-92), without its LF.
///
/// ```
/// assert_eq!(
///     shiftwork_core::ledger::brief_line("implementer", "2026-01-02T03:04:05Z", "U3"),
///     r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#
/// );
/// ```
pub fn brief_line(role: &str, ts: &str, unit: &str) -> String {
    event_line("brief", role, ts, unit)
}

/// The uncommitted marker (SW-92), without its LF.
pub fn uncommitted_line(role: &str, ts: &str, unit: &str) -> String {
    event_line("uncommitted", role, ts, unit)
}

fn event_line(event: &str, role: &str, ts: &str, unit: &str) -> String {
    to_ledger_text(&Json::Object(crate::json::object([
        ("event", Json::str(event)),
        ("role", Json::str(role)),
        ("ts", Json::str(ts)),
        ("unit", Json::str(unit)),
    ])))
}

/// A `ts` value (SW-17): UTC, whole seconds, the fraction floored.
///
/// ```
/// use chrono::TimeZone;
/// let t = chrono::Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap() + chrono::Duration::milliseconds(750);
/// assert_eq!(shiftwork_core::ledger::timestamp(t), "2026-01-02T03:04:05Z");
/// ```
pub fn timestamp(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}
