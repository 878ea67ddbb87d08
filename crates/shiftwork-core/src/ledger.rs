//! Reading the ledger: the one streaming pass that yields `briefed` for every unit,
//! the in-flight set and the budget figures. The lines written to it are built in
//! [`crate::records`].

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;

use foldhash::fast::RandomState;
use shiftwork_seams::Fs;

use crate::ledger_line::{self, Event, LineView};
use crate::line_split::LineBuffer;

/// The longest ledger line read, in bytes without its line feed: a longer line is skipped whole, as a
/// line that is not a JSON object is, and a line never holds more memory than this while it is
/// read. No line this crate writes is longer: a clock-in or clock-out whose line would
/// be is refused before it writes anything ([`crate::ShiftworkRefusal::TooLargeToWrite`]). (`shiftwork-watch`
/// reads the same lines within the same bound.)
pub const MAX_LEDGER_LINE_BYTES: usize = 64 * 1024;

/// What one pass over the ledger found for the units of a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerSummary {
    /// briefed(u) for each unit of the plan, in plan order.
    pub briefed: Vec<bool>,
    /// Counted accounting lines.
    pub spent_units: u64,
    /// Sum of the whole-number, non-negative `tokens` of the counted lines (saturating).
    pub spent_tokens: i128,
    /// Those `tokens` values, when asked for (the budget's median needs them).
    pub counted_tokens: Vec<i128>,
    /// The ledger's last byte, `None` when it is empty or absent.
    pub last_byte: Option<u8>,
}

/// What the lines naming one unit leave of `briefed`, read in order: whether the unit was briefed
/// since its last accounting line, and what that flag was just before that line (the value an
/// uncommitted marker, withdrawing the line, puts back).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub(crate) briefed: bool,
    pub(crate) before: bool,
}

impl Flags {
    /// One more line naming the unit: a brief sets `briefed`; an uncommitted marker puts back the
    /// flag the accounting line it follows cleared; any other line (an accounting line, another or
    /// no `event`) keeps the flag in `before` and clears it.
    pub(crate) fn apply(&mut self, event: Event) {
        match event {
            Event::Brief => self.briefed = true,
            Event::Uncommitted => self.briefed = self.before,
            Event::Absent | Event::Other => {
                self.before = self.briefed;
                self.briefed = false;
            }
        }
    }

    /// Both flags false: what a unit no line names has.
    pub(crate) fn is_clear(self) -> bool {
        self == Flags::default()
    }
}

/// The per-unit state of the pass.
#[derive(Debug, Clone, Copy, Default)]
struct UnitState {
    flags: Flags,
    /// The unit's last accounting line while it is not yet known to count: `Some(tokens)`.
    pending: Option<Option<i128>>,
}

/// The most units the plan does not name whose flags a [`LedgerPass`] keeps for the ledger's index
/// (when it keeps flags at all); past it the pass gives no flags and no index is written, so a
/// ledger naming millions of units costs no more memory than the units of the plan.
pub const MAX_FLAGGED_STRANGERS: usize = 100_000;

/// A streaming reader of the ledger: feed bytes, then finish. One pass yields `briefed` for every
/// unit, the in-flight set and the budget figures: O(ledger size) time, O(units) memory
/// (plus the counted `tokens` values when the budget's median needs them, and one line of at most
/// [`MAX_LEDGER_LINE_BYTES`]).
///
/// ```
/// let mut pass = shiftwork_core::ledger::LedgerPass::new(&["U3", "U4"], true);
/// pass.feed(b"{\"event\": \"brief\", \"unit\": \"U3\"}\n{\"unit\": \"U4\", \"tokens\": 7}\n");
/// let summary = pass.finish();
/// assert_eq!(summary.briefed, [true, false]);
/// assert_eq!((summary.spent_units, summary.spent_tokens), (1, 7));
/// ```
#[derive(Debug)]
pub struct LedgerPass<'u> {
    index: HashMap<&'u [u8], usize, RandomState>,
    units: Vec<UnitState>,
    /// The pending accounting line of each unit the plan does not name.
    strangers: HashMap<Vec<u8>, Option<i128>>,
    /// The flags of each unit the plan does not name whose flags are not clear, when kept for the
    /// ledger's index (`None` when not asked for, or once there were too many).
    stranger_flags: Option<HashMap<Box<str>, Flags, RandomState>>,
    keep_tokens: bool,
    lines: LineBuffer,
    summary: LedgerSummary,
}

impl<'u> LedgerPass<'u> {
    /// A pass for the units `unit_ids` (plan order); `keep_tokens` keeps the counted `tokens` values.
    pub fn new(unit_ids: &[&'u str], keep_tokens: bool) -> Self {
        let mut index = HashMap::with_capacity_and_hasher(unit_ids.len(), RandomState::default());
        for (i, id) in unit_ids.iter().enumerate() {
            index.entry(id.as_bytes()).or_insert(i);
        }
        LedgerPass {
            index,
            units: vec![UnitState::default(); unit_ids.len()],
            strangers: HashMap::new(),
            stranger_flags: None,
            keep_tokens,
            lines: LineBuffer::skipping_longer_than(MAX_LEDGER_LINE_BYTES),
            summary: LedgerSummary::default(),
        }
    }

    /// The same pass keeping the flags of every unit the ledger names, the plan's and any other
    /// (at most [`MAX_FLAGGED_STRANGERS`] others), for [`LedgerPass::finish_with_flags`]: what the
    /// ledger's index holds.
    pub(crate) fn keeping_flags(mut self) -> Self {
        self.stranger_flags = Some(HashMap::default());
        self
    }

    /// Feeds the next bytes of the ledger.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.summary.last_byte = Some(last);
        }
        let mut lines = std::mem::take(&mut self.lines);
        let _ = lines.feed(bytes, |piece| {
            self.piece(piece);
            ControlFlow::Continue(())
        });
        self.lines = lines;
    }

    /// Ends the pass.
    pub fn finish(self) -> LedgerSummary {
        self.finish_with_flags().0
    }

    /// Ends the pass, with the flags of every unit whose flags are not clear when they were kept
    /// ([`LedgerPass::keeping_flags`]) and did not overflow.
    pub(crate) fn finish_with_flags(
        mut self,
    ) -> (LedgerSummary, Option<HashMap<Box<str>, Flags, RandomState>>) {
        let rest = self.lines.take_rest();
        self.piece(&rest);
        let mut pending: Vec<Option<i128>> = self.strangers.drain().map(|(_, t)| t).collect();
        pending.extend(self.units.iter_mut().filter_map(|u| u.pending.take()));
        for tokens in pending {
            self.count(tokens);
        }
        self.summary.briefed = self.units.iter().map(|u| u.flags.briefed).collect();
        let flags = self.stranger_flags.take().map(|mut all| {
            for (id, &i) in &self.index {
                let flags = self.units[i].flags;
                if !flags.is_clear() {
                    // Plan ids are strings, so their bytes are UTF-8.
                    all.insert(String::from_utf8_lossy(id).into(), flags);
                }
            }
            all
        });
        (self.summary, flags)
    }

    /// One `\n`-delimited piece: one line, or several when it holds another line break Python recognises.
    fn piece(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        ledger_line::read_piece(bytes, |view| self.line(view));
    }

    fn line(&mut self, view: &LineView<'_>) {
        let Some(unit) = view.unit else {
            return;
        };
        let event = view.event;
        // The budget's accounting lines (SW-97): the next line naming the same unit decides whether
        // the pending one counts.
        let previous = match self.index.get(unit) {
            Some(&i) => {
                let state = &mut self.units[i];
                state.flags.apply(event);
                let previous = state.pending.take();
                if event == Event::Absent {
                    state.pending = Some(view.tokens);
                }
                previous
            }
            None => {
                self.stranger_line(unit, event);
                let previous = self.strangers.remove(unit);
                if event == Event::Absent {
                    self.strangers.insert(unit.to_vec(), view.tokens);
                }
                previous
            }
        };
        if let Some(tokens) = previous
            && event != Event::Uncommitted
        {
            self.count(tokens);
        }
    }

    /// Keeps the flags of a unit the plan does not name, when they are kept.
    fn stranger_line(&mut self, unit: &[u8], event: Event) {
        let Some(all) = self.stranger_flags.as_mut() else {
            return;
        };
        // A unit read from a line is a JSON string, decoded: valid UTF-8.
        let Ok(id) = std::str::from_utf8(unit) else {
            return;
        };
        if let Some(flags) = all.get_mut(id) {
            flags.apply(event);
            if flags.is_clear() {
                all.remove(id);
            }
            return;
        }
        let mut flags = Flags::default();
        flags.apply(event);
        if flags.is_clear() {
            return;
        }
        if all.len() >= MAX_FLAGGED_STRANGERS {
            self.stranger_flags = None;
            return;
        }
        all.insert(id.into(), flags);
    }

    fn count(&mut self, tokens: Option<i128>) {
        self.summary.spent_units += 1;
        if let Some(t) = tokens.filter(|t| *t >= 0) {
            self.summary.spent_tokens = self.summary.spent_tokens.saturating_add(t);
            if self.keep_tokens {
                self.summary.counted_tokens.push(t);
            }
        }
    }
}

/// Reads the ledger at `path` in one streaming pass for the units `unit_ids`. A missing or
/// unreadable ledger reads as empty.
pub fn scan<F: Fs + ?Sized>(fs: &F, path: &Path, unit_ids: &[&str], keep_tokens: bool) -> LedgerSummary {
    let mut pass = LedgerPass::new(unit_ids, keep_tokens);
    let read = fs.read_chunks(path, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
        pass.feed(chunk);
        Ok(())
    });
    match read {
        Ok(_) => pass.finish(),
        Err(_) => LedgerPass::new(unit_ids, keep_tokens).finish(),
    }
}
