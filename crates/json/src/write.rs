//! The byte forms of bantamkit's files and answers: the checkpoint file, ledger lines and answer texts
//!, all from one writer.

use std::fmt::Write as _;

use crate::value::{Json, Number, Object};

/// The checkpoint file's bytes: two-space indentation, ASCII only, keys in document order,
/// one final LF.
///
/// ```
/// let doc = shiftwork_json::parse(r#"{"a": [1, 2.50, "é"], "b": {}, "c": []}"#).unwrap();
/// assert_eq!(
///     shiftwork_json::to_checkpoint_text(&doc),
///     "{\n  \"a\": [\n    1,\n    2.5,\n    \"\\u00e9\"\n  ],\n  \"b\": {},\n  \"c\": []\n}\n"
/// );
/// ```
pub fn to_checkpoint_text(doc: &Json) -> String {
    let mut out = render(doc, Style::CHECKPOINT, false, 4096);
    out.push('\n');
    out
}

/// [`to_checkpoint_text`], or `None` when the text would be longer than `limit` bytes: the writer stops
/// as soon as it knows, having held at most `limit` bytes and one token more (a string whose escaped
/// form would not fit is measured, not written). `capacity` is where the text starts (the size
/// expected). So a document whose indented form no reader of it would accept is never written out
/// whole, however much longer than its compact form its indentation makes it.
///
/// ```
/// let doc = shiftwork_json::parse(r#"{"a": [[[[1]]]]}"#).unwrap();
/// let text = shiftwork_json::to_checkpoint_text(&doc);
/// assert_eq!(shiftwork_json::to_checkpoint_text_within(&doc, text.len(), 0).as_deref(), Some(text.as_str()));
/// assert_eq!(shiftwork_json::to_checkpoint_text_within(&doc, text.len() - 1, 0), None);
/// ```
pub fn to_checkpoint_text_within(doc: &Json, limit: usize, capacity: usize) -> Option<String> {
    let mut out = String::with_capacity(capacity.min(limit.saturating_add(1)));
    let mut bounded = Bounded {
        f: Formatter::new(&mut out, Style::CHECKPOINT),
        limit: limit.saturating_sub(1),
        over: false,
    };
    walk(&mut bounded, doc, false);
    if bounded.over {
        return None;
    }
    out.push('\n');
    (out.len() <= limit).then_some(out)
}

/// A [`Formatter`] that stops writing once its text is longer than `limit`, its buffer never grown
/// past `limit` and a little more.
struct Bounded<'o> {
    f: Formatter<'o>,
    limit: usize,
    over: bool,
}

/// Room for what may be written past the bound before the writer knows: a line break with its
/// indentation (at most 1 + 2 × 512 bytes) and a short token.
const SLACK: usize = 4096;

impl Bounded<'_> {
    /// Whether a token of at least `len` bytes written now could still fit (its line break and
    /// indentation aside, which [`SLACK`] holds), making room for it.
    fn room_for(&mut self, len: usize) -> bool {
        if self.over || len > self.limit.saturating_sub(self.f.out.len()) {
            self.over = true;
            return false;
        }
        let out = &mut *self.f.out;
        let need = out.len() + len + SLACK;
        if need > out.capacity() {
            let grown = (out.capacity() * 2).min(self.limit + SLACK).max(need);
            out.reserve_exact(grown - out.len());
        }
        true
    }

    /// Whether the string `s`, quoted, could still fit. A byte escapes to at most 6 bytes (`\u00xx`; a
    /// 4-byte character to two 6-byte escapes): only a string that might not fit is measured.
    fn fits(&mut self, s: &str) -> bool {
        let room = self.limit.saturating_sub(self.f.out.len());
        let len = if 6 * s.len() + 2 > room {
            escaped_len(s, self.f.style.ascii) + 2
        } else {
            s.len() + 2
        };
        self.room_for(len)
    }

    fn check(&mut self) {
        if self.f.out.len() > self.limit {
            self.over = true;
        }
    }
}

/// The length of `s` written as a JSON string (without quotes): `\uXXXX` escapes of non-ASCII when `ascii`.
fn escaped_len(s: &str, ascii: bool) -> usize {
    s.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c if !ascii => c.len_utf8(),
            c if (c as u32) < 0x7f => 1,
            c if (c as u32) <= 0xffff => 6,
            _ => 12,
        })
        .sum()
}

impl Emit for Bounded<'_> {
    fn begin_object(&mut self) {
        if self.room_for(0) {
            self.f.begin_object();
            self.check();
        }
    }

    fn key(&mut self, key: &str) {
        if self.fits(key) {
            self.f.key(key);
            self.check();
        }
    }

    fn end_object(&mut self) {
        if self.room_for(0) {
            self.f.end_object();
            self.check();
        }
    }

    fn begin_array(&mut self) {
        if self.room_for(0) {
            self.f.begin_array();
            self.check();
        }
    }

    fn end_array(&mut self) {
        if self.room_for(0) {
            self.f.end_array();
            self.check();
        }
    }

    fn string(&mut self, s: &str) {
        if self.fits(s) {
            self.f.string(s);
            self.check();
        }
    }

    fn number(&mut self, n: &Number) {
        // A number of 64 bits is short; an integer of any length is measured.
        let len = match n {
            Number::BigInt(digits) => digits.len(),
            _ => 0,
        };
        if self.room_for(len) {
            self.f.number(n);
            self.check();
        }
    }

    fn literal(&mut self, v: Literal) {
        if self.room_for(0) {
            self.f.literal(v);
            self.check();
        }
    }
}

/// One ledger line without its LF: keys sorted by code point at every level, `, ` and `: `
/// separators, ASCII only.
///
/// ```
/// let line = shiftwork_json::parse(r#"{"ts": "t", "wall": ["x", {"y": 1, "a": 2}], "é": 1}"#).unwrap();
/// assert_eq!(
///     shiftwork_json::to_ledger_text(&line),
///     r#"{"ts": "t", "wall": ["x", {"a": 2, "y": 1}], "\u00e9": 1}"#
/// );
/// ```
pub fn to_ledger_text(value: &Json) -> String {
    render(value, Style::COMPACT, true, 256)
}

/// The text block of an answer: two-space indentation, non-ASCII characters as themselves,
/// keys in the answer's order, no final newline.
///
/// ```
/// let answer = shiftwork_json::parse(r#"{"result": "plan", "ready": ["é"], "x": []}"#).unwrap();
/// assert_eq!(
///     shiftwork_json::to_answer_text(&answer),
///     "{\n  \"result\": \"plan\",\n  \"ready\": [\n    \"é\"\n  ],\n  \"x\": []\n}"
/// );
/// ```
pub fn to_answer_text(value: &Json) -> String {
    render(value, Style::ANSWER, false, 256)
}

/// One-line JSON as Python's `json.dumps` writes it: keys in order, `, ` and `: ` separators, ASCII only.
///
/// ```
/// let v = shiftwork_json::parse(r#"{"a":[1,{"b":null}]}"#).unwrap();
/// assert_eq!(shiftwork_json::to_compact_text(&v), r#"{"a": [1, {"b": null}]}"#);
/// ```
pub fn to_compact_text(value: &Json) -> String {
    render(value, Style::COMPACT, false, 64)
}

/// The answer as `structuredContent` text, rendered straight from the value: byte for byte what
/// `serde_json` writes for [`Json::to_serde`] (no spaces, non-ASCII characters as themselves, an
/// integer beyond 64 bits as its nearest double, `NaN` and the infinities as `null`), without building
/// the `serde_json::Value`.
///
/// ```
/// let v = shiftwork_json::parse(r#"{"a": [1, 2.50, 1e16, "é"], "b": 18446744073709551616}"#).unwrap();
/// assert_eq!(shiftwork_json::to_structured_text(&v), v.to_serde().to_string());
/// assert_eq!(shiftwork_json::to_structured_text(&v), r#"{"a":[1,2.5,1e+16,"é"],"b":1.8446744073709552e+19}"#);
/// ```
pub fn to_structured_text(value: &Json) -> String {
    render(value, Style::STRUCTURED, false, 4096)
}

/// A float as the reference renders it in an answer's text block: the shortest round-trip
/// digits, positional for decimal exponents in `-5..16`, else `d.ddde+X` / `d.ddde-X` without
/// padding (`0.00001`, `1e-7`, `1e+16`).
///
/// ```
/// use shiftwork_json::format_answer_float;
/// assert_eq!(format_answer_float(1e-5), "0.00001");
/// assert_eq!(format_answer_float(1.5e-7), "1.5e-7");
/// assert_eq!(format_answer_float(1e16), "1e+16");
/// assert_eq!(format_answer_float(100.0), "100.0");
/// ```
pub fn format_answer_float(f: f64) -> String {
    if !f.is_finite() {
        return format_float(f);
    }
    shortest_float(f, -5, 0)
}

/// The shortest round-trip digits of a finite `f`: positional for decimal exponents in
/// `min_exp..16`, else `d.ddde±X` with the exponent padded to `exp_width` digits.
fn shortest_float(f: f64, min_exp: i32, exp_width: usize) -> String {
    let (negative, digits, exp) = shortest_digits(f);
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if (min_exp..16).contains(&exp) {
        positional(&mut out, &digits, exp);
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:0exp_width$}", exp.unsigned_abs());
    }
    out
}

/// The sign, the shortest round-trip digits and the decimal exponent of a finite float.
fn shortest_digits(f: f64) -> (bool, String, i32) {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    (
        negative,
        mantissa.chars().filter(char::is_ascii_digit).collect(),
        exp,
    )
}

fn positional(out: &mut String, digits: &str, exp: i32) {
    if exp >= 0 {
        let int_len = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-exp - 1).unwrap_or(0)));
        out.push_str(digits);
    }
}

/// A float as 0.36.2 writes it: the shortest round-trip digits, positional for exponents
/// in `-4..16`, else `d.ddde±XX`; `NaN`, `Infinity`, `-Infinity`.
///
/// ```
/// use shiftwork_json::format_float;
/// assert_eq!(format_float(5.0), "5.0");
/// assert_eq!(format_float(1e16), "1e+16");
/// assert_eq!(format_float(1e-5), "1e-05");
/// assert_eq!(format_float(0.0001), "0.0001");
/// assert_eq!(format_float(-0.0), "-0.0");
/// assert_eq!(format_float(1.2345678901234568e16), "1.2345678901234568e+16");
/// assert_eq!(format_float(f64::NEG_INFINITY), "-Infinity");
/// ```
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return String::from("NaN");
    }
    if f.is_infinite() {
        return String::from(if f > 0.0 { "Infinity" } else { "-Infinity" });
    }
    python_float_repr(f)
}

/// Python's `repr` of a finite float (`inf`, `-inf`, `nan` for the others).
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return String::from("nan");
    }
    if f.is_infinite() {
        return String::from(if f > 0.0 { "inf" } else { "-inf" });
    }
    shortest_float(f, -4, 2)
}

/// Writes a number token as Python's `json` writes it.
pub fn format_number(n: &Number) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        Number::BigInt(text) => text.to_string(),
        Number::Float(f) => format_float(*f),
    }
}

/// How a [`Formatter`] lays out its tokens: the five byte forms of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    indent: Option<usize>,
    ascii: bool,
    /// Floats as the reference's answer texts write them ([`format_answer_float`]).
    answer_floats: bool,
    /// `structuredContent` form ([`to_structured_text`]): `,` and `:` without spaces, numbers as
    /// [`Json::to_serde`] holds them.
    structured: bool,
    /// The text is written as the contents of a JSON string (every `"`, `\` and line break of it
    /// escaped once more), for a text block spliced into a message.
    escaped: bool,
}

impl Style {
    /// [`to_checkpoint_text`]'s form (without the final newline).
    pub const CHECKPOINT: Style = Style {
        indent: Some(2),
        ascii: true,
        answer_floats: false,
        structured: false,
        escaped: false,
    };
    /// The form of [`to_compact_text`] and, with sorted keys, [`to_ledger_text`].
    pub const COMPACT: Style = Style {
        indent: None,
        ..Style::CHECKPOINT
    };
    /// [`to_answer_text`]'s form: an answer's text block.
    pub const ANSWER: Style = Style {
        indent: Some(2),
        ascii: false,
        answer_floats: true,
        structured: false,
        escaped: false,
    };
    /// [`to_structured_text`]'s form: `structuredContent`.
    pub const STRUCTURED: Style = Style {
        indent: None,
        ascii: false,
        answer_floats: false,
        structured: true,
        escaped: false,
    };

    /// This form written as the contents of a JSON string: what a JSON writer makes of the text when
    /// it writes the text as a string value, without its quotes (`\"` for `"`, `\\` for `\`, `\n` for
    /// a line break). The text block of an MCP answer is written this way straight into the message.
    ///
    /// ```
    /// use shiftwork_json::{Emit, Formatter, Style};
    /// let v = shiftwork_json::parse(r#"{"a": ["x\"y"]}"#).unwrap();
    /// let mut out = String::new();
    /// Formatter::new(&mut out, Style::ANSWER.escaped()).value(&v);
    /// assert_eq!(out, r#"{\n  \"a\": [\n    \"x\\\"y\"\n  ]\n}"#);
    /// let text = shiftwork_json::to_answer_text(&v);
    /// assert_eq!(format!("\"{out}\""), serde_json::to_string(&text).unwrap());
    /// ```
    #[must_use]
    pub const fn escaped(self) -> Style {
        Style {
            escaped: true,
            ..self
        }
    }
}

/// A receiver of JSON tokens in document order: [`Formatter`] writes them as text, [`Builder`]
/// builds a [`Json`] value. Producers of large values (an answer with thousands of ids) write their
/// tokens straight to a text this way, with no value in between; [`Emit::value`] writes a whole
/// value.
///
/// A key is followed by exactly one value; containers nest as the calls do.
pub trait Emit {
    /// `{`.
    fn begin_object(&mut self);
    /// A member's key; its value follows.
    fn key(&mut self, key: &str);
    /// `}`.
    fn end_object(&mut self);
    /// `[`.
    fn begin_array(&mut self);
    /// `]`.
    fn end_array(&mut self);
    /// A string value.
    fn string(&mut self, s: &str);
    /// A number value.
    fn number(&mut self, n: &Number);
    /// `null`, `true` or `false`.
    fn literal(&mut self, v: Literal);

    /// An integer value.
    fn int(&mut self, i: i64) {
        self.number(&Number::Int(i));
    }

    /// A count or an index, as an integer.
    fn count(&mut self, n: usize) {
        match i64::try_from(n) {
            Ok(i) => self.int(i),
            Err(_) => self.number(&Number::BigInt(n.to_string().into())),
        }
    }

    /// An array of strings.
    fn strings<'s>(&mut self, items: impl IntoIterator<Item = &'s str>)
    where
        Self: Sized,
    {
        self.begin_array();
        for item in items {
            self.string(item);
        }
        self.end_array();
    }

    /// A whole value, keys in document order.
    fn value(&mut self, v: &Json)
    where
        Self: Sized,
    {
        walk(self, v, false);
    }
}

/// The values without content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true`.
    True,
    /// `false`.
    False,
}

/// Feeds `v` to `e`; `sort` orders the keys of every object by code point.
fn walk<E: Emit>(e: &mut E, v: &Json, sort: bool) {
    match v {
        Json::Null => e.literal(Literal::Null),
        Json::Bool(true) => e.literal(Literal::True),
        Json::Bool(false) => e.literal(Literal::False),
        Json::Number(n) => e.number(n),
        Json::String(s) => e.string(s),
        Json::Array(items) => {
            e.begin_array();
            for item in items {
                walk(e, item, sort);
            }
            e.end_array();
        }
        Json::Object(members) => {
            e.begin_object();
            if sort {
                let mut entries: Vec<(&String, &Json)> = members.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (key, item) in entries {
                    e.key(key);
                    walk(e, item, sort);
                }
            } else {
                for (key, item) in members {
                    e.key(key);
                    walk(e, item, sort);
                }
            }
            e.end_object();
        }
    }
}

/// Writes tokens as text in one of the [`Style`]s: the one home of this crate's byte forms.
///
/// ```
/// use shiftwork_json::{Emit, Formatter, Style};
/// let mut out = String::new();
/// let mut f = Formatter::new(&mut out, Style::STRUCTURED);
/// f.begin_object();
/// f.key("ids");
/// f.strings(["a", "é"]);
/// f.key("n");
/// f.int(2);
/// f.end_object();
/// assert_eq!(out, r#"{"ids":["a","é"],"n":2}"#);
/// ```
pub struct Formatter<'o> {
    out: &'o mut String,
    style: Style,
    level: usize,
    /// No item yet in the innermost open container.
    first: bool,
    /// A key was written; its value needs no separator.
    after_key: bool,
}

impl<'o> Formatter<'o> {
    /// A formatter appending to `out`.
    pub fn new(out: &'o mut String, style: Style) -> Self {
        Formatter {
            out,
            style,
            level: 0,
            first: true,
            after_key: false,
        }
    }

    fn newline(&mut self, level: usize) {
        line_break(self.out, self.style, level);
    }

    /// What comes before an item: nothing after a key or at the top, else the separator (after the
    /// first item) and the line break.
    fn item(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if self.level == 0 {
            return;
        }
        if !self.first {
            self.out.push(',');
            if self.style.indent.is_none() && !self.style.structured {
                self.out.push(' ');
            }
        }
        self.first = false;
        self.newline(self.level);
    }

    fn open(&mut self, bracket: char) {
        self.item();
        self.out.push(bracket);
        self.level += 1;
        self.first = true;
    }

    fn close(&mut self, bracket: char) {
        self.level = self.level.saturating_sub(1);
        if !self.first {
            self.newline(self.level);
        }
        self.out.push(bracket);
        self.first = false;
    }

    fn text(&mut self, s: &str) {
        if self.style.escaped {
            write_string_escaped(self.out, s, self.style.ascii);
        } else {
            write_string(self.out, s, self.style.ascii);
        }
    }
}

/// The line break and indentation before an item at `level` (nothing in the one-line styles).
fn line_break(out: &mut String, style: Style, level: usize) {
    if let Some(step) = style.indent {
        const SPACES: &str = "                                                                ";
        out.push_str(if style.escaped { "\\n" } else { "\n" });
        let mut left = step * level;
        while left > 0 {
            let run = left.min(SPACES.len());
            out.push_str(&SPACES[..run]);
            left -= run;
        }
    }
}

impl Emit for Formatter<'_> {
    fn begin_object(&mut self) {
        self.open('{');
    }

    fn key(&mut self, key: &str) {
        self.item();
        self.text(key);
        self.out.push_str(if self.style.structured { ":" } else { ": " });
        self.after_key = true;
    }

    fn end_object(&mut self) {
        self.close('}');
    }

    fn begin_array(&mut self) {
        self.open('[');
    }

    fn end_array(&mut self) {
        self.close(']');
    }

    fn string(&mut self, s: &str) {
        self.item();
        self.text(s);
    }

    fn number(&mut self, n: &Number) {
        self.item();
        if self.style.structured && !matches!(n, Number::Int(_)) {
            // The rendering of `to_serde`'s value, by serde_json's own number formatting.
            match Json::Number(n.clone()).to_serde() {
                serde_json::Value::Number(n) => {
                    let _ = write!(self.out, "{n}");
                }
                _ => self.out.push_str("null"),
            }
            return;
        }
        match n {
            Number::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Number::BigInt(text) => self.out.push_str(text),
            Number::Float(f) if self.style.answer_floats => self.out.push_str(&format_answer_float(*f)),
            Number::Float(f) => self.out.push_str(&format_float(*f)),
        }
    }

    /// The same bytes as the default, with the separator built once per array: a plan's answer is
    /// mostly arrays of ids, and an id that needs no escape is written with its separator and
    /// quotes in a few fixed-size moves.
    fn strings<'s>(&mut self, items: impl IntoIterator<Item = &'s str>) {
        self.open('[');
        let quote = if self.style.escaped { "\\\"" } else { "\"" };
        let mut first = String::new();
        line_break(&mut first, self.style, self.level);
        let mut later = String::from(",");
        if self.style.indent.is_none() && !self.style.structured {
            later.push(' ');
        }
        later.push_str(&first);
        first.push_str(quote);
        later.push_str(quote);
        let ascii = self.style.ascii;
        let mut opening = Pieces::new(&first);
        let closing = Pieces::new(quote);
        for item in items {
            // Plain: no quote, backslash or control byte (`plain_run`, a word at a time), and under
            // ASCII escapes nothing past 0x7e.
            let plain = crate::plain_run(item.as_bytes()) == item.len()
                && (!ascii || item.bytes().all(|b| PLAIN[usize::from(b)] & 1 != 0));
            match (&opening, &closing) {
                (Some(before), Some(after)) if plain => Pieces::push(self.out, before, item, after),
                _ => {
                    let before = if self.first { &first } else { &later };
                    self.out.push_str(&before[..before.len() - quote.len()]);
                    self.text(item);
                }
            }
            if self.first {
                opening = Pieces::new(&later);
            }
            self.first = false;
        }
        self.close(']');
    }

    fn literal(&mut self, v: Literal) {
        self.item();
        self.out.push_str(match v {
            Literal::Null => "null",
            Literal::True => "true",
            Literal::False => "false",
        });
    }
}

/// Builds the [`Json`] value of the tokens it receives.
///
/// ```
/// use shiftwork_json::{Builder, Emit};
/// let mut b = Builder::default();
/// b.begin_object();
/// b.key("a");
/// b.strings(["x"]);
/// b.end_object();
/// assert_eq!(shiftwork_json::to_compact_text(&b.finish()), r#"{"a": ["x"]}"#);
/// ```
#[derive(Debug, Default)]
pub struct Builder {
    /// The open containers, each with the key its next value goes under (objects).
    open: Vec<(Json, Option<String>)>,
    done: Option<Json>,
}

impl Builder {
    /// The value built (`null` when no value was received).
    pub fn finish(self) -> Json {
        self.done.unwrap_or(Json::Null)
    }

    fn put(&mut self, v: Json) {
        match self.open.last_mut() {
            Some((Json::Array(items), _)) => items.push(v),
            Some((Json::Object(members), key)) => {
                members.insert(key.take().unwrap_or_default(), v);
            }
            Some(_) | None => self.done = Some(v),
        }
    }
}

impl Emit for Builder {
    fn begin_object(&mut self) {
        self.open.push((Json::Object(Object::default()), None));
    }

    fn key(&mut self, key: &str) {
        if let Some((_, slot)) = self.open.last_mut() {
            *slot = Some(key.to_owned());
        }
    }

    fn end_object(&mut self) {
        if let Some((v, _)) = self.open.pop() {
            self.put(v);
        }
    }

    fn begin_array(&mut self) {
        self.open.push((Json::Array(Vec::new()), None));
    }

    fn end_array(&mut self) {
        self.end_object();
    }

    fn string(&mut self, s: &str) {
        self.put(Json::String(s.to_owned()));
    }

    fn number(&mut self, n: &Number) {
        self.put(Json::Number(n.clone()));
    }

    fn literal(&mut self, v: Literal) {
        self.put(match v {
            Literal::Null => Json::Null,
            Literal::True => Json::Bool(true),
            Literal::False => Json::Bool(false),
        });
    }
}

/// `v` as text in `style`, keys sorted when `sort`.
fn render(v: &Json, style: Style, sort: bool, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    walk(&mut Formatter::new(&mut out, style), v, sort);
    out
}

/// Writes `s` as a JSON string: `\uXXXX` escapes of non-ASCII when `ascii`, else only `"`, `\` and controls.
fn write_string(out: &mut String, s: &str, ascii: bool) {
    write_string_in::<false>(out, s, ascii);
}

/// What [`write_string`] writes, written again as the contents of a JSON string (its quotes and
/// backslashes escaped once more; it holds no control character).
fn write_string_escaped(out: &mut String, s: &str, ascii: bool) {
    write_string_in::<true>(out, s, ascii);
}

/// A short constant piece of text (a separator with its quote, or a quote), kept in a 16-byte
/// buffer so that it is always written as one 16-byte move: a plan's answer is thousands of short
/// ids, each between the same separator and quote, and calls to `memcpy` for them cost more than
/// the copies.
struct Pieces {
    bytes: [u8; 16],
    len: usize,
}

impl Pieces {
    /// `text` when it is at most 16 bytes long.
    fn new(text: &str) -> Option<Pieces> {
        let mut bytes = [0; 16];
        bytes.get_mut(..text.len())?.copy_from_slice(text.as_bytes());
        Some(Pieces {
            bytes,
            len: text.len(),
        })
    }

    /// Appends `before`, `item` and `after` to `out`.
    #[inline(always)]
    fn push(out: &mut String, before: &Pieces, item: &str, after: &Pieces) {
        let len = out.len();
        let total = before.len + item.len() + after.len;
        // Room for the text and for the 16-byte moves that end past it (at most 16 bytes past).
        out.reserve(total + 16);
        // SAFETY: only whole `str`s are appended (`Pieces` are built from `&str`), so the string
        // stays UTF-8. Every write lies within `len + total + 16` bytes, which `reserve` made room
        // for: `before` at `len` (16 bytes, `before.len` ≤ 16), the item after it (`copy_short`
        // writes exactly its length when short), `after` after that (16 bytes). The length is then
        // set over the `total` bytes written; what lies past them is spare capacity.
        unsafe {
            let bytes = out.as_mut_vec();
            let mut at = bytes.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(before.bytes.as_ptr(), at, 16);
            at = at.add(before.len);
            if item.len() <= 16 {
                copy_short(item.as_bytes(), at);
            } else {
                std::ptr::copy_nonoverlapping(item.as_ptr(), at, item.len());
            }
            at = at.add(item.len());
            std::ptr::copy_nonoverlapping(after.bytes.as_ptr(), at, 16);
            bytes.set_len(len + total);
        }
    }
}

/// Copies `src`, at most 16 bytes long, to `dst` with at most two fixed-size moves (overlapping when
/// the length is not their size) or, under 4 bytes, three byte moves.
///
/// # Safety
///
/// `dst` is valid for writes of `src.len()` bytes, which do not overlap `src`.
#[inline(always)]
unsafe fn copy_short(src: &[u8], dst: *mut u8) {
    use std::ptr::copy_nonoverlapping as copy;
    let n = src.len();
    debug_assert!(n <= 16);
    let p = src.as_ptr();
    // SAFETY: every move reads and writes inside `0..n` of `src` and `dst`: `[0, 8)` and `[n - 8, n)`
    // cover `0..n` for 8 ≤ n ≤ 16, `[0, 4)` and `[n - 4, n)` for 4 ≤ n < 8, and the bytes 0, n / 2
    // and n - 1 for 1 ≤ n < 4.
    unsafe {
        if n >= 8 {
            copy(p, dst, 8);
            copy(p.add(n - 8), dst.add(n - 8), 8);
        } else if n >= 4 {
            copy(p, dst, 4);
            copy(p.add(n - 4), dst.add(n - 4), 4);
        } else if n > 0 {
            *dst = *p;
            *dst.add(n / 2) = *p.add(n / 2);
            *dst.add(n - 1) = *p.add(n - 1);
        }
    }
}

/// For each byte, whether it stands for itself in a JSON string: bit 0 with ASCII escapes,
/// bit 1 without (then every byte of a multi-byte character does).
static PLAIN: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0x20;
    while b < 0x100 {
        table[b] = if b < 0x7f { 3 } else { 2 };
        b += 1;
    }
    table[b'"' as usize] = 0;
    table[b'\\' as usize] = 0;
    table
};

/// Writes `s` as a JSON string, or (`ESCAPED`) as the contents of a JSON string holding that: then
/// `\"` stands for each quote and `\\` for each backslash.
///
/// Scans bytes: an ASCII byte is judged alone, and only under `ascii` does a byte of a multi-byte
/// character (≥ 0x80) stop the run, to be escaped as the UTF-16 units of its character.
fn write_string_in<const ESCAPED: bool>(out: &mut String, s: &str, ascii: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let (quote, backslash) = if ESCAPED { ("\\\"", "\\\\") } else { ("\"", "\\") };
    let bytes = s.as_bytes();
    // Bit 0: the byte stands for itself; bit 1: it does so outside `ascii` too.
    let mask = if ascii { 1 } else { 2 };
    let plain = |b: u8| PLAIN[usize::from(b)] & mask != 0;
    out.reserve(bytes.len() + 2 * quote.len());
    out.push_str(quote);
    // Most strings (ids, keys) need no escape: one test per byte, one copy.
    let Some(mut i) = bytes.iter().position(|&b| !plain(b)) else {
        out.push_str(s);
        out.push_str(quote);
        return;
    };
    let mut start = 0;
    while i < bytes.len() {
        if plain(bytes[i]) {
            i += 1;
            continue;
        }
        out.push_str(&s[start..i]);
        // `i` is on a character boundary: every byte before it in this run was ASCII or passed whole.
        let c = s[i..].chars().next().unwrap_or('\u{fffd}');
        i += c.len_utf8();
        start = i;
        out.push_str(backslash);
        match c {
            '"' => out.push_str(quote),
            '\\' => out.push_str(backslash),
            '\n' => out.push('n'),
            '\r' => out.push('r'),
            '\t' => out.push('t'),
            '\u{8}' => out.push('b'),
            '\u{c}' => out.push('f'),
            _ => {
                let mut units = [0u16; 2];
                for (k, unit) in c.encode_utf16(&mut units).iter().enumerate() {
                    if k > 0 {
                        out.push_str(backslash);
                    }
                    out.push('u');
                    for shift in [12, 8, 4, 0] {
                        out.push(char::from(HEX[usize::from((*unit >> shift) & 0xf)]));
                    }
                }
            }
        }
    }
    out.push_str(&s[start..]);
    out.push_str(quote);
}
