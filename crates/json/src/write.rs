//! The byte forms of §3: the checkpoint file (SW-8..SW-14), ledger lines (SW-15) and answer texts
//! (SW-44), all from one writer.

use std::fmt::Write as _;

use crate::value::{Json, Number};

/// The checkpoint file's bytes (§3.1): two-space indentation, ASCII only, keys in document order,
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
    let mut out = String::with_capacity(4096);
    Writer {
        out: &mut out,
        indent: Some(2),
        ascii: true,
        sort: false,
        answer_floats: false,
        structured: false,
    }
    .value(doc, 0);
    out.push('\n');
    out
}

/// One ledger line without its LF (SW-15): keys sorted by code point at every level, `, ` and `: `
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
    let mut out = String::with_capacity(256);
    Writer {
        out: &mut out,
        indent: None,
        ascii: true,
        sort: true,
        answer_floats: false,
        structured: false,
    }
    .value(value, 0);
    out
}

/// The text block of an answer (SW-44): two-space indentation, non-ASCII characters as themselves,
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
    let mut out = String::with_capacity(256);
    Writer {
        out: &mut out,
        indent: Some(2),
        ascii: false,
        sort: false,
        answer_floats: true,
        structured: false,
    }
    .value(value, 0);
    out
}

/// One-line JSON as the spec shows answers: keys in order, `, ` and `: ` separators, ASCII only.
///
/// ```
/// let v = shiftwork_json::parse(r#"{"a":[1,{"b":null}]}"#).unwrap();
/// assert_eq!(shiftwork_json::to_compact_text(&v), r#"{"a": [1, {"b": null}]}"#);
/// ```
pub fn to_compact_text(value: &Json) -> String {
    let mut out = String::new();
    Writer {
        out: &mut out,
        indent: None,
        ascii: true,
        sort: false,
        answer_floats: false,
        structured: false,
    }
    .value(value, 0);
    out
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
    let mut out = String::with_capacity(4096);
    Writer {
        out: &mut out,
        indent: None,
        ascii: false,
        sort: false,
        answer_floats: false,
        structured: true,
    }
    .value(value, 0);
    out
}

/// A float as the reference renders it in an answer's text block (SW-44): the shortest round-trip
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

/// A float as 0.36.2 writes it (SW-13): the shortest round-trip digits, positional for exponents
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

/// Writes a number token as §3 does (SW-12, SW-13).
pub fn format_number(n: &Number) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        Number::BigInt(text) => text.to_string(),
        Number::Float(f) => format_float(*f),
    }
}

struct Writer<'o> {
    out: &'o mut String,
    indent: Option<usize>,
    ascii: bool,
    sort: bool,
    /// Floats as the reference's answer texts write them ([`format_answer_float`]).
    answer_floats: bool,
    /// `structuredContent` form ([`to_structured_text`]): `,` and `:` without spaces, numbers as
    /// [`Json::to_serde`] holds them.
    structured: bool,
}

impl Writer<'_> {
    fn newline(&mut self, level: usize) {
        if let Some(step) = self.indent {
            const SPACES: &str = "                                                                ";
            self.out.push('\n');
            let mut left = step * level;
            while left > 0 {
                let run = left.min(SPACES.len());
                self.out.push_str(&SPACES[..run]);
                left -= run;
            }
        }
    }

    fn separator(&mut self) {
        self.out.push(',');
        if self.indent.is_none() && !self.structured {
            self.out.push(' ');
        }
    }

    fn value(&mut self, v: &Json, level: usize) {
        match v {
            Json::Null => self.out.push_str("null"),
            Json::Bool(true) => self.out.push_str("true"),
            Json::Bool(false) => self.out.push_str("false"),
            Json::Number(n) => self.number(n),
            Json::String(s) => write_string(self.out, s, self.ascii),
            Json::Array(items) => {
                if items.is_empty() {
                    self.out.push_str("[]");
                    return;
                }
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.separator();
                    }
                    self.newline(level + 1);
                    self.value(item, level + 1);
                }
                self.newline(level);
                self.out.push(']');
            }
            Json::Object(members) => {
                if members.is_empty() {
                    self.out.push_str("{}");
                    return;
                }
                self.out.push('{');
                let mut entries: Vec<(&String, &Json)> = members.iter().collect();
                if self.sort {
                    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                }
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        self.separator();
                    }
                    self.newline(level + 1);
                    write_string(self.out, key, self.ascii);
                    self.out.push_str(if self.structured { ":" } else { ": " });
                    self.value(item, level + 1);
                }
                self.newline(level);
                self.out.push('}');
            }
        }
    }

    fn number(&mut self, n: &Number) {
        if self.structured && !matches!(n, Number::Int(_)) {
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
            Number::Float(f) if self.answer_floats => self.out.push_str(&format_answer_float(*f)),
            Number::Float(f) => self.out.push_str(&format_float(*f)),
        }
    }
}

/// Writes `s` as a JSON string: SW-11's escapes when `ascii`, else only `"`, `\` and controls.
///
/// Scans bytes: an ASCII byte is judged alone, and only under `ascii` does a byte of a multi-byte
/// character (≥ 0x80) stop the run, to be escaped as the UTF-16 units of its character.
fn write_string(out: &mut String, s: &str, ascii: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let plain = match b {
            b'"' | b'\\' => false,
            0..0x20 => false,
            0x7f.. => !ascii,
            _ => true,
        };
        if plain {
            i += 1;
            continue;
        }
        out.push_str(&s[start..i]);
        // `i` is on a character boundary: every byte before it in this run was ASCII or passed whole.
        let c = s[i..].chars().next().unwrap_or('\u{fffd}');
        i += c.len_utf8();
        start = i;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str("\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(char::from(HEX[usize::from((*unit >> shift) & 0xf)]));
                    }
                }
            }
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}
