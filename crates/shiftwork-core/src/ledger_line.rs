//! What the ledger pass reads from one line: whether it is a JSON object, and
//! its top-level `unit`, `event` and `tokens`.
//!
//! Two readers give the same answer. A *plain* line — printable ASCII, no `\` escape, nesting of at
//! most [`PLAIN_DEPTH`] levels, which is every line this crate and 0.36.2 write (both escape all
//! non-ASCII) — is read by a byte scanner that builds no value and allocates nothing. Every other
//! line, and every line the scanner does not fully accept (junk, another line break Python recognises inside the
//! piece, invalid UTF-8, trailing data), goes through the full reader ([`ledger_facts`]
//! over the lossily decoded, split text), which stays the reference. The scanner accepts only what
//! it can prove the full reader reads the same way: on success it has checked every byte, so the
//! piece holds none of the other line breaks Python recognises and is one line.

use crate::json::{Json, Number, pick_members};

/// What the full reader takes from one ledger line that is a JSON object: its top-level `unit`,
/// `event` and `tokens` (the last occurrence of each), other members checked but never built.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LineFacts {
    /// `unit`, when the line has that key.
    pub unit: Option<Json>,
    /// `event`, when the line has that key.
    pub event: Option<Json>,
    /// `tokens`, when the line has that key.
    pub tokens: Option<Json>,
}

/// Reads one ledger line: `None` when it is not a JSON object in the ledger's JSON dialect (junk, blank,
/// an array, a BOM-prefixed line), else its facts.
pub(crate) fn ledger_facts(line: &str) -> Option<LineFacts> {
    let [unit, event, tokens] = pick_members(line, ["unit", "event", "tokens"])?;
    Some(LineFacts { unit, event, tokens })
}

/// The deepest nesting the plain scanner follows before leaving the line to the full reader.
pub(crate) const PLAIN_DEPTH: usize = 32;

/// The `event` of a line, as `briefed` and the budget read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// No `event` key: an accounting line.
    Absent,
    /// `"brief"`.
    Brief,
    /// `"uncommitted"`.
    Uncommitted,
    /// Any other value.
    Other,
}

/// The facts of one ledger line that is a JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineView<'l> {
    /// `unit` when it is a string, as UTF-8 bytes (a line without a string `unit` names no unit and
    /// is ignored).
    pub unit: Option<&'l [u8]>,
    /// `event`.
    pub event: Event,
    /// `tokens` when it is a whole number, of any sign, saturated to 128 bits.
    pub tokens: Option<i128>,
}

/// Reads every line of a `\n`-delimited piece of the ledger, calling `f` for each JSON object line.
pub(crate) fn read_piece(bytes: &[u8], mut f: impl FnMut(&LineView<'_>)) {
    if let Some(view) = scan_plain(bytes) {
        f(&view);
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    for line in text.split(is_line_break) {
        if let Some(facts) = ledger_facts(line) {
            f(&view_of(&facts));
        }
    }
}

/// Python's `str.splitlines` breaks, besides `\n` (already split): `\r`, VT, FF, FS, GS, RS, NEL,
/// LINE SEPARATOR, PARAGRAPH SEPARATOR.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// The view of the full reader's facts.
fn view_of(facts: &LineFacts) -> LineView<'_> {
    LineView {
        unit: match &facts.unit {
            Some(Json::String(u)) => Some(u.as_bytes()),
            _ => None,
        },
        event: match &facts.event {
            None => Event::Absent,
            Some(Json::String(e)) if e == "brief" => Event::Brief,
            Some(Json::String(e)) if e == "uncommitted" => Event::Uncommitted,
            Some(_) => Event::Other,
        },
        tokens: facts
            .tokens
            .as_ref()
            .and_then(Json::as_number)
            .and_then(Number::as_whole),
    }
}

/// The plain scanner: `Some` when the piece is one plain line holding a JSON object, `None` when the
/// full reader must decide.
pub(crate) fn scan_plain(line: &[u8]) -> Option<LineView<'_>> {
    let mut s = Scanner { b: line, i: 0 };
    s.ws();
    s.eat(b'{')?;
    let mut view = LineView {
        unit: None,
        event: Event::Absent,
        tokens: None,
    };
    s.ws();
    if s.peek() == Some(b'}') {
        s.i += 1;
    } else {
        loop {
            let key = s.string()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            // Duplicate keys: the last occurrence wins, as in the full reader (SW-25).
            match member(key) {
                Member::Unit => view.unit = s.string_or_skip(1)?,
                Member::Event => {
                    view.event = match s.string_or_skip(1)? {
                        Some(b"brief") => Event::Brief,
                        Some(b"uncommitted") => Event::Uncommitted,
                        _ => Event::Other,
                    }
                }
                Member::Tokens => view.tokens = s.whole_or_skip(1)?,
                // Most values are strings: scanned here rather than through the general skip.
                Member::Other if s.peek() == Some(b'"') => {
                    s.string()?;
                }
                Member::Other => s.skip_value(1)?,
            }
            s.ws();
            match s.bump()? {
                b',' => s.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.ws();
    (s.i == line.len()).then_some(view)
}

/// The members the pass reads.
enum Member {
    Unit,
    Event,
    Tokens,
    Other,
}

/// Which member a key names; the length is tested first, so each comparison is one of a known size.
fn member(key: &[u8]) -> Member {
    match key.len() {
        4 if key == b"unit" => Member::Unit,
        5 if key == b"event" => Member::Event,
        6 if key == b"tokens" => Member::Tokens,
        _ => Member::Other,
    }
}

struct Scanner<'l> {
    b: &'l [u8],
    i: usize,
}

/// Whether a byte may stand inside a plain string: printable ASCII (DEL included) but `"` and `\`.
fn plain_in_string(b: u8) -> bool {
    (0x20..0x80).contains(&b) && b != b'"' && b != b'\\'
}

/// The length of the run of [`plain_in_string`] bytes that starts `bytes`, eight bytes at a time.
#[inline]
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    // Flags the bytes of a word that stop a plain string: below 0x20, 0x80 or above, `"`, `\` (the
    // zero-byte and less-than tricks of Bit Twiddling Hacks, n ≤ 128). A borrow can flag a byte
    // *above* a true stop byte, never below one, so the lowest flag is the first stop byte.
    let stops = |w: u64| {
        let below_space = w.wrapping_sub(ONES * 0x20) & !w;
        let q = w ^ QUOTES;
        let quote = q.wrapping_sub(ONES) & !q;
        let b = w ^ BACKSLASHES;
        let backslash = b.wrapping_sub(ONES) & !b;
        (below_space | quote | backslash | w) & HIGH
    };
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let flags = stops(u64::from_le_bytes(word));
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| !plain_in_string(b))
        .unwrap_or(bytes.len() - at)
}

impl<'l> Scanner<'l> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.bump()? == want).then_some(())
    }

    /// Space and tab; any other byte the full reader treats as whitespace or a line break (`\r`)
    /// ends the scan where it stands, and the caller then fails on it.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn starts_with(&self, token: &[u8]) -> bool {
        self.b[self.i..].starts_with(token)
    }

    /// A plain string at the cursor: its bytes between the quotes.
    #[inline]
    fn string(&mut self) -> Option<&'l [u8]> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        let rest = self.b.get(start..)?;
        let len = plain_run(rest);
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        self.i = start + len + 1;
        Some(&rest[..len])
    }

    /// A value: `Some(text)` for a string, `None` for any other value (checked and skipped).
    fn string_or_skip(&mut self, depth: usize) -> Option<Option<&'l [u8]>> {
        if self.peek() == Some(b'"') {
            return self.string().map(Some);
        }
        self.skip_value(depth)?;
        Some(None)
    }

    /// A value: the whole number of a number token, or `None` for any other value.
    fn whole_or_skip(&mut self, depth: usize) -> Option<Option<i128>> {
        match self.peek()? {
            b'-' if !self.starts_with(b"-Infinity") => self.number().map(|n| whole(n.0, n.1)),
            b'0'..=b'9' => self.number().map(|n| whole(n.0, n.1)),
            _ => {
                self.skip_value(depth)?;
                Some(None)
            }
        }
    }

    /// A number token with the full reader's grammar: its text and whether it is a float.
    fn number(&mut self) -> Option<(&'l [u8], bool)> {
        let start = self.i;
        let digits = |s: &mut Self| {
            let from = s.i;
            while s.peek().is_some_and(|b| b.is_ascii_digit()) {
                s.i += 1;
            }
            s.i - from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return None;
            }
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return None;
            }
            float = true;
        }
        Some((&self.b[start..self.i], float))
    }

    /// Checks and skips one value of any kind.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' => self.skip_object(depth + 1),
            b'[' => self.skip_array(depth + 1),
            b'-' if self.starts_with(b"-Infinity") => self.literal(b"-Infinity"),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'N' => self.literal(b"NaN"),
            b'I' => self.literal(b"Infinity"),
            _ => None,
        }
    }

    fn literal(&mut self, token: &[u8]) -> Option<()> {
        if !self.starts_with(token) {
            return None;
        }
        self.i += token.len();
        Some(())
    }

    fn skip_object(&mut self, depth: usize) -> Option<()> {
        if depth > PLAIN_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Some(());
        }
        loop {
            self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.skip_value(depth)?;
            self.ws();
            match self.bump()? {
                b',' => self.ws(),
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    fn skip_array(&mut self, depth: usize) -> Option<()> {
        if depth > PLAIN_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Some(());
        }
        loop {
            self.skip_value(depth)?;
            self.ws();
            match self.bump()? {
                b',' => self.ws(),
                b']' => return Some(()),
                _ => return None,
            }
        }
    }
}

/// The whole number of a number token, exactly as [`Number::as_whole`] reads the full reader's value.
fn whole(token: &[u8], float: bool) -> Option<i128> {
    if !float && token.len() <= 18 {
        let (negative, digits) = match token.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, token),
        };
        let magnitude = digits
            .iter()
            .fold(0i128, |acc, d| acc * 10 + i128::from(d - b'0'));
        return Some(if negative { -magnitude } else { magnitude });
    }
    let text = std::str::from_utf8(token).ok()?;
    let number = if float {
        Number::Float(text.parse::<f64>().unwrap_or(f64::NAN))
    } else {
        Number::from_int_text(text)
    };
    number.as_whole()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: the full reader over the lossily decoded, split text.
    fn reference(bytes: &[u8]) -> Vec<(Option<Vec<u8>>, Event, Option<i128>)> {
        let text = String::from_utf8_lossy(bytes);
        text.split(is_line_break)
            .filter_map(ledger_facts)
            .map(|f| {
                let v = view_of(&f);
                (v.unit.map(<[u8]>::to_vec), v.event, v.tokens)
            })
            .collect()
    }

    fn check(line: &str) {
        let mut got = Vec::new();
        read_piece(line.as_bytes(), |v| {
            got.push((v.unit.map(<[u8]>::to_vec), v.event, v.tokens))
        });
        assert_eq!(got, reference(line.as_bytes()), "{line:?}");
    }

    #[test]
    fn plain_run_finds_the_first_stop_byte() {
        for len in 0..40 {
            for stop in [b'"', b'\\', 0x1f, 0x00, 0x80, 0xff, b'\t'] {
                let mut bytes = vec![b'a'; len];
                bytes.extend_from_slice(&[stop, b'b', b'"']);
                assert_eq!(plain_run(&bytes), len, "{len} {stop:#x}");
            }
            let bytes: Vec<u8> = (0..len)
                .map(|i| 0x20 + ((i * 7) % 0x60) as u8)
                .filter(|&b| b != b'"' && b != b'\\')
                .collect();
            assert_eq!(plain_run(&bytes), bytes.len());
        }
    }

    #[test]
    fn plain_lines_read_as_the_full_reader_reads_them_sw94_sw95() {
        for line in [
            r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#,
            r#"{"briefed": true, "duration": 88.2, "duration_ms": 88200, "model": "haiku", "role": "implementer", "status": "done", "tokens": 1234, "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#,
            r#"{"unit": "U3", "tokens": 1234.0}"#,
            r#"{"unit": "U3", "tokens": -0.0}"#,
            r#"{"unit": "U3", "tokens": -0}"#,
            r#"{"unit": "U3", "tokens": 1e16}"#,
            r#"{"unit": "U3", "tokens": 12.5}"#,
            r#"{"unit": "U3", "tokens": 123456789012345678901234567890}"#,
            r#"{"unit": "U3", "tokens": 999999999999999999}"#,
            r#"{"unit": "U3", "tokens": -999999999999999999}"#,
            r#"{"unit": "U3", "tokens": 1e400}"#,
            r#"{"unit": "U3", "tokens": NaN}"#,
            r#"{"unit": "U3", "tokens": -Infinity}"#,
            r#"{"unit": "U3", "tokens": "5"}"#,
            r#"{"unit": "U3", "tokens": 5, "tokens": "x"}"#,
            r#"{"unit": 5}"#,
            r#"{"unit": "A", "unit": null}"#,
            r#"{"unit": null, "unit": "B"}"#,
            r#"{"unit": "U3", "event": 7}"#,
            r#"{"unit": "U3", "event": "uncommitted"}"#,
            r#"{"unit": "U3", "event": "Brief"}"#,
            r#"{"wall": [1, {"x": "y", "z": [true, false, null, -1.5e-3]}], "unit": "U3"}"#,
            r#"  {  "unit"  :  "U3"  }  "#,
            "\t{\"unit\":\"U3\"}\t",
            "{}",
            "",
            "   ",
            "[1, 2]",
            "not json",
            r#"{"unit": "U3"} x"#,
            r#"{"unit": "U3",}"#,
            r#"{"unit": "U3" "x": 1}"#,
            r#"{"unit": "U\u0033"}"#,
            r#"{"un\u0069t": "U3"}"#,
            r#"{"unit": "é"}"#,
            "{\"unit\": \"a\u{2028}b\"}",
            "{\"junk\": \"a\u{2028}b\", \"unit\": \"U3\"}",
            "{\"unit\": \"U3\"}\r{\"unit\": \"U4\", \"event\": \"brief\"}",
            "{\"unit\": \"U3\"}\u{b}{\"unit\": \"U4\"}",
            "{\"unit\": \"U3\"}\u{85}{\"unit\": \"U4\"}",
            "{\"a\": 1.}",
            "{\"a\": 01}",
            "{\"a\": -}",
            "{\"a\": 1e}",
            "{\"a\": tru}",
            "{\"a\": nullx}",
            "{\"a\": \"tab\there\"}",
            "\u{feff}{\"unit\": \"U3\"}",
            "{\"unit\": \"U3\", \"del\": \"\u{7f}\"}",
        ] {
            check(line);
        }
        let deep = format!(r#"{{"unit": "U3", "x": {}{}}}"#, "[".repeat(40), "]".repeat(40));
        check(&deep);
        let too_deep = format!(r#"{{"unit": "U3", "x": {}{}}}"#, "[".repeat(600), "]".repeat(600));
        check(&too_deep);
        let mut invalid = br#"{"unit": "U3", "x": ""#.to_vec();
        invalid.extend_from_slice(b"\xff\"}");
        let mut got = Vec::new();
        read_piece(&invalid, |v| {
            got.push((v.unit.map(<[u8]>::to_vec), v.event, v.tokens))
        });
        assert_eq!(got, reference(&invalid));
    }

    fn value() -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::int),
            any::<f64>().prop_map(|f| Json::Number(Number::Float(f))),
            "[1-9][0-9]{18,40}".prop_map(|d| Json::Number(Number::from_int_text(&d))),
            prop_oneof![
                Just("brief"),
                Just("uncommitted"),
                Just("U1"),
                Just("U2"),
                Just("x y")
            ]
            .prop_map(Json::str),
            "[ -~é\u{2028}\u{85}\t\r]{0,6}".prop_map(Json::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                proptest::collection::vec(
                    (
                        prop_oneof![Just("unit"), Just("event"), Just("tokens"), Just("k")],
                        inner
                    ),
                    0..4
                )
                .prop_map(|m| Json::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    /// A line: members with the keys the pass reads (repeated at times), as written, then
    /// possibly damaged by a byte put in, cut, or a line break Python recognises.
    fn line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let member = (
            prop_oneof![
                Just("unit"),
                Just("event"),
                Just("tokens"),
                Just("wall"),
                Just(r"un\u0069t")
            ],
            value(),
        );
        (
            proptest::collection::vec(member, 0..6),
            any::<bool>(),
            prop_oneof![
                Just(None),
                (any::<prop::sample::Index>(), any::<u8>()).prop_map(Some)
            ],
            prop_oneof![Just(None), any::<prop::sample::Index>().prop_map(Some)],
        )
            .prop_map(|(members, spaced, insert, cut)| {
                let mut text = String::from("{");
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        text.push_str(if spaced { ", " } else { "," });
                    }
                    let key = crate::json::to_ledger_text(&Json::str(*k));
                    let key = if k.contains('\\') { format!("\"{k}\"") } else { key };
                    text.push_str(&format!("{key}: {}", crate::json::to_ledger_text(v)));
                }
                text.push('}');
                let mut bytes = text.into_bytes();
                if let Some((at, byte)) = insert {
                    let at = at.index(bytes.len() + 1);
                    bytes.insert(at, byte);
                }
                if let Some(at) = cut {
                    bytes.truncate(at.index(bytes.len() + 1));
                }
                bytes.retain(|&b| b != b'\n');
                bytes
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The plain scanner and the full reader agree on every line.
        #[test]
        fn plain_scanner_agrees_with_the_full_reader(bytes in line()) {
            let mut got = Vec::new();
            read_piece(&bytes, |v| got.push((v.unit.map(<[u8]>::to_vec), v.event, v.tokens)));
            proptest::prop_assert_eq!(got, reference(&bytes));
        }
    }
}
