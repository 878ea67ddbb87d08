//! The reader: RFC 8259 plus what Python's `json.loads` accepts (`NaN`, `Infinity`, `-Infinity`,
//! duplicate keys, integers of any length), with its decoder messages and positions.

use crate::value::{Hasher, Json, Number, Object};

/// The most arrays/objects nested inside each other that the reader accepts; deeper nesting is refused
/// (`Nesting deeper than 512 levels`) rather than exhausting the stack, where Python raises a
/// `RecursionError`.
pub const MAX_DEPTH: usize = 512;

/// A text that is not JSON, with Python's decoder message: `<what>: line <l> column <c> (char <n>)`,
/// `<n>` counting code points.
///
/// ```
/// let err = shiftwork_json::parse("{\"a\": 1} x").unwrap_err();
/// assert_eq!(err.to_string(), "Extra data: line 1 column 10 (char 9)");
/// assert_eq!((err.line, err.column, err.char_offset), (1, 10, 9));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: line {line} column {column} (char {char_offset})")]
pub struct ParseError {
    /// What was wrong (`Expecting value`, `Extra data`, …).
    pub what: &'static str,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in code points.
    pub column: usize,
    /// 0-based code-point offset in the text.
    pub char_offset: usize,
}

/// Parses one JSON value from `text` (whitespace allowed around it), as Python's `json.loads` does,
/// except that it refuses a `\u` escape that leaves a lone surrogate (`Unpaired surrogate escape`:
/// a Rust string cannot hold one) and nesting deeper than [`MAX_DEPTH`].
///
/// ```
/// use shiftwork_json::{parse, Json, Number};
/// assert_eq!(parse(" NaN ").unwrap().as_number().unwrap().as_f64().is_nan(), true);
/// assert_eq!(parse("-0").unwrap(), Json::Number(Number::Int(0)));
/// assert_eq!(parse("").unwrap_err().to_string(), "Expecting value: line 1 column 1 (char 0)");
/// ```
pub fn parse(text: &str) -> Result<Json, ParseError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        members: Vec::new(),
    };
    if text.starts_with('\u{feff}') {
        return Err(p.error_at("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    p.skip_ws();
    let value = p.value()?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error_at("Extra data", p.pos));
    }
    Ok(value)
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    depth: usize,
    /// The members of the objects being read, innermost last: an object is built at its size once
    /// its members are known.
    members: Vec<(String, Json)>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Parser<'_> {
    fn error_at(&self, what: &'static str, byte_pos: usize) -> ParseError {
        let before = &self.bytes[..byte_pos.min(self.bytes.len())];
        let char_offset = before.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let column = match before.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                let nl_char = self.bytes[..nl].iter().filter(|&&b| (b & 0xC0) != 0x80).count();
                char_offset - nl_char
            }
            None => char_offset + 1,
        };
        ParseError {
            what,
            line,
            column,
            char_offset,
        }
    }

    fn skip_ws(&mut self) {
        const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
        let bytes = self.bytes;
        let mut i = self.pos;
        while let Some(&b) = bytes.get(i) {
            if !is_ws(b) {
                break;
            }
            i += 1;
            // A checkpoint's indentation: eight spaces at a time.
            while let Some(eight) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
                if u64::from_le_bytes(*eight) != SPACES {
                    break;
                }
                i += 8;
            }
        }
        self.pos = i;
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn starts_with(&self, token: &str) -> bool {
        self.bytes[self.pos..].starts_with(token.as_bytes())
    }

    fn value(&mut self) -> Result<Json, ParseError> {
        let Some(b) = self.peek() else {
            return Err(self.error_at("Expecting value", self.pos));
        };
        match b {
            b'"' => {
                self.pos += 1;
                self.string().map(Json::String)
            }
            b'{' => self.nested(Self::object),
            b'[' => self.nested(Self::array),
            b'n' if self.starts_with("null") => {
                self.pos += 4;
                Ok(Json::Null)
            }
            b't' if self.starts_with("true") => {
                self.pos += 4;
                Ok(Json::Bool(true))
            }
            b'f' if self.starts_with("false") => {
                self.pos += 5;
                Ok(Json::Bool(false))
            }
            b'N' if self.starts_with("NaN") => {
                self.pos += 3;
                Ok(Json::Number(Number::Float(f64::NAN)))
            }
            b'I' if self.starts_with("Infinity") => {
                self.pos += 8;
                Ok(Json::Number(Number::Float(f64::INFINITY)))
            }
            b'-' if self.starts_with("-Infinity") => {
                self.pos += 9;
                Ok(Json::Number(Number::Float(f64::NEG_INFINITY)))
            }
            _ => self.number(),
        }
    }

    fn nested(&mut self, body: fn(&mut Self) -> Result<Json, ParseError>) -> Result<Json, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at("Nesting deeper than 512 levels", self.pos));
        }
        self.depth += 1;
        self.pos += 1;
        let result = body(self);
        self.depth -= 1;
        result
    }

    fn object(&mut self) -> Result<Json, ParseError> {
        let base = self.members.len();
        let result = self.object_members();
        let read = self.members.drain(base..);
        result?;
        let mut members = Object::with_capacity_and_hasher(read.len(), Hasher::default());
        // A repeated key keeps its first position and takes the last value, as a Python dict does.
        for (key, value) in read {
            members.insert(key, value);
        }
        Ok(Json::Object(members))
    }

    /// The members of an object whose `{` was consumed, onto [`Parser::members`].
    fn object_members(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error_at("Expecting property name enclosed in double quotes", self.pos));
            }
            self.pos += 1;
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error_at("Expecting ':' delimiter", self.pos));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value()?;
            self.members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
            }
        }
    }

    fn array(&mut self) -> Result<Json, ParseError> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
            }
        }
    }

    /// Reads a string whose opening quote was just consumed.
    fn string(&mut self) -> Result<String, ParseError> {
        // Most strings hold no escape: copied at their size in one allocation.
        let end = self.pos + plain_run(&self.bytes[self.pos..]);
        if self.bytes.get(end) == Some(&b'"') {
            let text = self.text[self.pos..end].to_owned();
            self.pos = end + 1;
            return Ok(text);
        }
        let mut out = String::new();
        self.string_into(Some(&mut out))?;
        Ok(out)
    }

    /// Scans a string whose opening quote was just consumed, appending its text to `out` when given.
    fn string_into(&mut self, mut out: Option<&mut String>) -> Result<(), ParseError> {
        let begin = self.pos - 1;
        loop {
            let start = self.pos;
            let stop = self.pos + plain_run(&self.bytes[self.pos..]);
            self.pos = stop;
            if self.bytes.get(stop).is_some_and(|&b| b < 0x20) {
                return Err(self.error_at("Invalid control character at", stop));
            }
            if let Some(out) = out.as_deref_mut() {
                out.push_str(&self.text[start..self.pos]);
            }
            match self.peek() {
                None => return Err(self.error_at("Unterminated string starting at", begin)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let backslash = self.pos;
                    self.pos += 1;
                    let Some(esc) = self.peek() else {
                        return Err(self.error_at("Unterminated string starting at", begin));
                    };
                    self.pos += 1;
                    let c = match esc {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape(backslash)?,
                        _ => return Err(self.error_at("Invalid \\escape", backslash)),
                    };
                    if let Some(out) = out.as_deref_mut() {
                        out.push(c);
                    }
                }
            }
        }
    }

    /// Checks one value without building it (the same grammar and limits as [`Parser::value`]).
    fn skip_value(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Some(b'"') => {
                self.pos += 1;
                self.string_into(None)
            }
            Some(b'{') | Some(b'[') => {
                if self.depth >= MAX_DEPTH {
                    return Err(self.error_at("Nesting deeper than 512 levels", self.pos));
                }
                let close = if self.peek() == Some(b'{') { b'}' } else { b']' };
                self.depth += 1;
                self.pos += 1;
                let result = self.skip_container(close);
                self.depth -= 1;
                result
            }
            _ => self.value().map(|_| ()),
        }
    }

    fn skip_container(&mut self, close: u8) -> Result<(), ParseError> {
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if close == b'}' {
                if self.peek() != Some(b'"') {
                    return Err(self.error_at("Expecting property name enclosed in double quotes", self.pos));
                }
                self.pos += 1;
                self.string_into(None)?;
                self.skip_ws();
                if self.peek() != Some(b':') {
                    return Err(self.error_at("Expecting ':' delimiter", self.pos));
                }
                self.pos += 1;
                self.skip_ws();
            }
            self.skip_value()?;
            self.skip_ws();
            match self.peek() {
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
            }
        }
    }

    /// Reads the four hex digits after `\u` (and a low surrogate escape after a high one).
    fn unicode_escape(&mut self, backslash: usize) -> Result<char, ParseError> {
        let u_pos = self.pos - 1;
        // 0.36.2 wants the four digits and at least one more character after them.
        if self.pos + 4 >= self.bytes.len() {
            return Err(self.error_at("Invalid \\uXXXX escape", u_pos));
        }
        let Some(high) = hex4(&self.bytes[self.pos..self.pos + 4]) else {
            return Err(self.error_at("Invalid \\uXXXX escape", u_pos));
        };
        self.pos += 4;
        if (0xD800..0xDC00).contains(&high) {
            if self.pos + 6 < self.bytes.len()
                && self.bytes[self.pos] == b'\\'
                && self.bytes[self.pos + 1] == b'u'
            {
                let Some(low) = hex4(&self.bytes[self.pos + 2..self.pos + 6]) else {
                    return Err(self.error_at("Invalid \\uXXXX escape", self.pos + 1));
                };
                if (0xDC00..0xE000).contains(&low) {
                    self.pos += 6;
                    let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    return char::from_u32(c)
                        .ok_or_else(|| self.error_at("Unpaired surrogate escape", backslash));
                }
            }
            return Err(self.error_at("Unpaired surrogate escape", backslash));
        }
        if (0xDC00..0xE000).contains(&high) {
            return Err(self.error_at("Unpaired surrogate escape", backslash));
        }
        char::from_u32(high).ok_or_else(|| self.error_at("Invalid \\uXXXX escape", u_pos))
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let Some((end, is_float)) = scan_number(self.bytes, start) else {
            return Err(self.error_at("Expecting value", start));
        };
        self.pos = end;
        Ok(Json::Number(number_of(&self.text[start..end], is_float)))
    }
}

/// The slots of a [`crate::Tape`] as the reader records them.
#[derive(Debug, Default)]
pub(crate) struct TapeParts {
    pub(crate) words: Vec<u32>,
    /// The text of the strings that have escapes, decoded one after another.
    pub(crate) decoded: String,
    /// Where each decoded string starts in `decoded`, and (last) where the last one ends.
    pub(crate) starts: Vec<u32>,
}

/// A slot's first word: where its token starts in the text (the low [`OFFSET_BITS`] bits) and what it
/// is (the high bits, one of the `KIND_*`).
pub(crate) const OFFSET_BITS: u32 = 29;
/// The offset part of a slot's first word.
pub(crate) const OFFSET_MASK: u32 = (1 << OFFSET_BITS) - 1;
/// The kinds of slot. A string takes two words (the second its length in the text, or for a string
/// with escapes the index of its decoded text), an array or object two (the second how many words its
/// contents take), anything else one.
pub(crate) const KIND_NULL: u32 = 0;
pub(crate) const KIND_FALSE: u32 = 1;
pub(crate) const KIND_TRUE: u32 = 2;
pub(crate) const KIND_NUMBER: u32 = 3;
pub(crate) const KIND_STRING: u32 = 4;
pub(crate) const KIND_ESCAPED: u32 = 5;
pub(crate) const KIND_ARRAY: u32 = 6;
pub(crate) const KIND_OBJECT: u32 = 7;
/// The high bit of a container's second word: an object that repeats a key.
pub(crate) const REPEATS: u32 = 1 << 31;

/// The longest text read into a tape: its offsets take [`OFFSET_BITS`] bits.
pub(crate) const MAX_TAPE_TEXT: usize = 1 << OFFSET_BITS;

/// A key of the object being read: the word where its slot starts.
type KeyAt = u32;

/// Reads `text` into tape slots with the grammar, the limits and the errors of [`parse`].
pub(crate) fn parse_tape(text: &str) -> Result<TapeParts, ParseError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        members: Vec::new(),
    };
    if text.starts_with('\u{feff}') {
        return Err(p.error_at("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    if text.len() >= MAX_TAPE_TEXT {
        return Err(p.error_at("Text too long to read in place (512 MiB or more)", 0));
    }
    // About one word per five bytes of a typical document; the vector grows past that when needed.
    let mut parts = TapeParts {
        words: Vec::with_capacity(text.len() / 5 + 16),
        ..TapeParts::default()
    };
    let mut keys = Vec::new();
    p.skip_ws();
    p.tape_value(&mut parts, &mut keys)?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error_at("Extra data", p.pos));
    }
    parts.starts.push(parts.decoded.len() as u32);
    if parts.words.capacity() > parts.words.len() + parts.words.len() / 8 + 16 {
        parts.words.shrink_to_fit();
    }
    Ok(parts)
}

impl Parser<'_> {
    /// One value into `t` (the same grammar, limits and errors as [`Parser::value`]).
    fn tape_value(&mut self, t: &mut TapeParts, keys: &mut Vec<KeyAt>) -> Result<(), ParseError> {
        let Some(b) = self.peek() else {
            return Err(self.error_at("Expecting value", self.pos));
        };
        // The text is shorter than `MAX_TAPE_TEXT`, so every offset fits in `OFFSET_BITS`.
        let at = self.pos as u32;
        let (len, kind) = match b {
            b'"' => {
                self.pos += 1;
                return self.tape_string(t, at);
            }
            b'{' | b'[' => return self.tape_nested(t, keys, b == b'{'),
            b'n' if self.starts_with("null") => (4, KIND_NULL),
            b't' if self.starts_with("true") => (4, KIND_TRUE),
            b'f' if self.starts_with("false") => (5, KIND_FALSE),
            b'N' if self.starts_with("NaN") => (3, KIND_NUMBER),
            b'I' if self.starts_with("Infinity") => (8, KIND_NUMBER),
            b'-' if self.starts_with("-Infinity") => (9, KIND_NUMBER),
            _ => match scan_number(self.bytes, self.pos) {
                Some((end, _)) => (end - self.pos, KIND_NUMBER),
                None => return Err(self.error_at("Expecting value", self.pos)),
            },
        };
        self.pos += len;
        t.words.push(at | kind << OFFSET_BITS);
        Ok(())
    }

    /// A string whose opening quote (at `at`) was just consumed.
    fn tape_string(&mut self, t: &mut TapeParts, at: u32) -> Result<(), ParseError> {
        let start = self.pos;
        let end = start + plain_run(&self.bytes[start..]);
        if self.bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            t.words.push(at | KIND_STRING << OFFSET_BITS);
            t.words.push((end - start) as u32);
            return Ok(());
        }
        let from = t.decoded.len();
        self.string_into(Some(&mut t.decoded))?;
        // The decoded text is never longer than the text it was read from.
        t.words.push(at | KIND_ESCAPED << OFFSET_BITS);
        t.words.push(t.starts.len() as u32);
        t.starts.push(from as u32);
        Ok(())
    }

    fn tape_nested(
        &mut self,
        t: &mut TapeParts,
        keys: &mut Vec<KeyAt>,
        object: bool,
    ) -> Result<(), ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at("Nesting deeper than 512 levels", self.pos));
        }
        self.depth += 1;
        let head = t.words.len();
        let kind = if object { KIND_OBJECT } else { KIND_ARRAY };
        t.words.push(self.pos as u32 | kind << OFFSET_BITS);
        t.words.push(0);
        self.pos += 1;
        let result = if object {
            self.tape_members(t, keys)
        } else {
            self.tape_items(t, keys)
        };
        self.depth -= 1;
        let repeats = result?;
        // Fewer slots than bytes of text, so the count fits in 31 bits.
        let skip = (t.words.len() - head - 2) as u32;
        t.words[head + 1] = if repeats { skip | REPEATS } else { skip };
        Ok(())
    }

    /// The members of an object whose `{` was consumed; whether a key repeats.
    fn tape_members(&mut self, t: &mut TapeParts, keys: &mut Vec<KeyAt>) -> Result<bool, ParseError> {
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(false);
        }
        let base = keys.len();
        let result = self.tape_members_from(t, keys);
        let repeats = result.is_ok() && repeats(self.text, t, &keys[base..]);
        keys.truncate(base);
        result.map(|()| repeats)
    }

    fn tape_members_from(&mut self, t: &mut TapeParts, keys: &mut Vec<KeyAt>) -> Result<(), ParseError> {
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error_at("Expecting property name enclosed in double quotes", self.pos));
            }
            let at = self.pos as u32;
            self.pos += 1;
            let key = t.words.len() as u32;
            self.tape_string(t, at)?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error_at("Expecting ':' delimiter", self.pos));
            }
            self.pos += 1;
            self.skip_ws();
            self.tape_value(t, keys)?;
            keys.push(key);
            self.skip_ws();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
            }
        }
    }

    fn tape_items(&mut self, t: &mut TapeParts, keys: &mut Vec<KeyAt>) -> Result<bool, ParseError> {
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(false);
        }
        loop {
            self.tape_value(t, keys)?;
            self.skip_ws();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(false);
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
            }
        }
    }
}

/// Whether two of an object's keys (their slots' words) are the same text: pairwise for the few keys
/// of most objects, sorted beyond that (O(k log k), whatever a hostile text holds).
fn repeats(text: &str, t: &TapeParts, keys: &[KeyAt]) -> bool {
    let bytes = |k: &KeyAt| -> &[u8] {
        let word = t.words[*k as usize];
        let second = t.words[*k as usize + 1] as usize;
        if word >> OFFSET_BITS == KIND_ESCAPED {
            // The last decoded string ends where the text decoded so far ends.
            let end = t.starts.get(second + 1).map_or(t.decoded.len(), |&e| e as usize);
            &t.decoded.as_bytes()[t.starts[second] as usize..end]
        } else {
            let start = (word & OFFSET_MASK) as usize + 1;
            &text.as_bytes()[start..start + second]
        }
    };
    if keys.len() <= 16 {
        return keys
            .iter()
            .enumerate()
            .any(|(i, a)| keys[..i].iter().any(|b| bytes(a) == bytes(b)));
    }
    let mut sorted: Vec<&[u8]> = keys.iter().map(bytes).collect();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// Where the number token that starts at `start` ends, and whether it is a float (a fraction or an
/// exponent): `None` when no number starts there. The one grammar of number tokens, for the value
/// reader and the [`crate::Tape`] alike.
pub(crate) fn scan_number(b: &[u8], start: usize) -> Option<(usize, bool)> {
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'1'..=b'9') => {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        Some(b'0') => i += 1,
        _ => return None,
    }
    let mut is_float = false;
    if b.get(i) == Some(&b'.') && digit(i + 1) {
        is_float = true;
        i += 2;
        while digit(i) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let digits_start = j;
        while digit(j) {
            j += 1;
        }
        if j > digits_start {
            is_float = true;
            i = j;
        }
    }
    Some((i, is_float))
}

/// The number of a token [`scan_number`] delimited.
pub(crate) fn number_of(token: &str, is_float: bool) -> Number {
    if is_float {
        Number::Float(token.parse::<f64>().unwrap_or(f64::NAN))
    } else if token == "-0" {
        Number::Int(0)
    } else {
        Number::from_int_text(token)
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

/// Reads `text` as one JSON object and builds only its top-level members named in `keys`, checking
/// every other member without building it: `None` when `text` is not a JSON object (junk, blank, an
/// array, a byte-order mark, trailing data), else the value of each key (the last occurrence, as
/// [`parse`] keeps it), `None` for a key the object lacks. A key is matched after its escapes are
/// decoded (`"un\u0069t"` is `unit`).
///
/// This is how a reader of JSON lines takes a few members of each line without building the rest.
///
/// ```
/// let [unit, event, tokens] = shiftwork_json::pick_members(
///     r#"{"wall": [1, {"x": "y"}], "unit": "U3", "event": "brief", "unit": "U4"}"#,
///     ["unit", "event", "tokens"],
/// ).unwrap();
/// assert_eq!((unit.unwrap().as_str(), event.unwrap().as_str(), tokens), (Some("U4"), Some("brief"), None));
/// assert!(shiftwork_json::pick_members("[1, 2]", ["unit"]).is_none());
/// assert!(shiftwork_json::pick_members(r#"{"unit": "U3"} x"#, ["unit"]).is_none());
/// ```
pub fn pick_members<const N: usize>(text: &str, keys: [&str; N]) -> Option<[Option<Json>; N]> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        members: Vec::new(),
    };
    p.skip_ws();
    if p.peek() != Some(b'{') {
        return None;
    }
    p.pos += 1;
    p.depth = 1;
    let mut found: [Option<Json>; N] = std::array::from_fn(|_| None);
    p.skip_ws();
    if p.peek() == Some(b'}') {
        p.pos += 1;
    } else {
        loop {
            if p.peek() != Some(b'"') {
                return None;
            }
            p.pos += 1;
            let key_start = p.pos;
            p.string_into(None).ok()?;
            let raw_key = &text[key_start..p.pos - 1];
            let key = if raw_key.contains('\\') {
                std::borrow::Cow::Owned(parse(&text[key_start - 1..p.pos]).ok()?.as_str()?.to_owned())
            } else {
                std::borrow::Cow::Borrowed(raw_key)
            };
            p.skip_ws();
            if p.peek() != Some(b':') {
                return None;
            }
            p.pos += 1;
            p.skip_ws();
            match keys.iter().position(|k| *k == key.as_ref()) {
                Some(slot) => found[slot] = Some(p.value().ok()?),
                None => p.skip_value().ok()?,
            }
            p.skip_ws();
            match p.peek() {
                Some(b'}') => {
                    p.pos += 1;
                    break;
                }
                Some(b',') => {
                    p.pos += 1;
                    p.skip_ws();
                }
                _ => return None,
            }
        }
    }
    p.skip_ws();
    (p.pos == p.bytes.len()).then_some(found)
}

/// How many bytes at the start of `bytes` may stand in a JSON string as themselves: the offset of
/// the first `"`, `\` or control byte (below 0x20), else the length. Readers that scan strings find
/// where one ends (or needs its escapes read) with this, eight bytes at a time.
///
/// ```
/// assert_eq!(shiftwork_json::plain_run(br#"n1234", "x""#), 5);
/// assert_eq!(shiftwork_json::plain_run(b"a long id with \\ a backslash"), 15);
/// assert_eq!(shiftwork_json::plain_run(b"tab\there"), 3);
/// assert_eq!(shiftwork_json::plain_run("é…".as_bytes()), 5);
/// ```
#[inline]
pub fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `w` that is below `n` (n ≤ 0x80); past the first such byte a
    // borrow may mark others, so only the lowest mark is read.
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let w = u64::from_le_bytes(*chunk);
        let marks =
            below(w ^ (ONES * u64::from(b'"')), 1) | below(w ^ (ONES * u64::from(b'\\')), 1) | below(w, 0x20);
        if marks != 0 {
            return i + (marks.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    // The last bytes (fewer than eight) in one word too, built in a register: a short string, such
    // as an id, costs one test and no loop whose end the processor mispredicts. From 4 bytes on, the
    // low half holds bytes 0..4 and the high half bytes r-4..r; under 4, bytes 0, r/2 and r-1 (in
    // that order, so the lowest mark is the first such byte) and a plain filler.
    let rest = &bytes[i..];
    let r = rest.len();
    let (w, position): (u64, fn(usize, usize) -> usize) = match rest.first_chunk::<4>() {
        Some(head) => {
            let tail = rest.last_chunk::<4>().unwrap_or(head);
            let w = u64::from(u32::from_le_bytes(*head)) | u64::from(u32::from_le_bytes(*tail)) << 32;
            (w, |k, r| if k < 4 { k } else { r + k - 8 })
        }
        None if r > 0 => {
            let w = u64::from(rest[0])
                | u64::from(rest[r / 2]) << 8
                | u64::from(rest[r - 1]) << 16
                | 0x6161_6161_6100_0000;
            (w, |k, r| [0, r / 2, r - 1][k.min(2)])
        }
        None => return i,
    };
    let marks =
        below(w ^ (ONES * u64::from(b'"')), 1) | below(w ^ (ONES * u64::from(b'\\')), 1) | below(w, 0x20);
    if marks == 0 {
        bytes.len()
    } else {
        i + position((marks.trailing_zeros() / 8) as usize, r)
    }
}
