//! Python rendering of values, used by schema details and the model gate.

use unicode_general_category::{GeneralCategory, get_general_category};

use crate::value::{Json, Number};
use crate::write::python_float_repr;

/// A value "in Python rendering": `None`, `True`, `'text'`, `[1, 'a']`, `{'k': 2.5}`.
///
/// ```
/// let v = shiftwork_json::parse(r#"[null, true, 1, 1e16, "it's", {"k": "a\nb"}]"#).unwrap();
/// assert_eq!(shiftwork_json::python_repr(&v), r#"[None, True, 1, 1e+16, "it's", {'k': 'a\nb'}]"#);
/// ```
pub fn python_repr(value: &Json) -> String {
    let mut out = String::new();
    repr_into(&mut out, value);
    out
}

/// A value in Python `str` rendering: a string is its raw text, anything else as
/// [`python_repr`].
///
/// ```
/// let v = shiftwork_json::parse(r#"["a", "b"]"#).unwrap();
/// assert_eq!(shiftwork_json::python_str(&v), "['a', 'b']");
/// assert_eq!(shiftwork_json::python_str(&shiftwork_json::Json::str("x")), "x");
/// ```
pub fn python_str(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => python_repr(other),
    }
}

/// A Python string literal of `s`.
///
/// ```
/// assert_eq!(shiftwork_json::python_string_literal("a'b"), "\"a'b\"");
/// assert_eq!(shiftwork_json::python_string_literal("a'b\""), "'a\\'b\"'");
/// assert_eq!(shiftwork_json::python_string_literal("é\u{7f}"), "'é\\x7f'");
/// ```
pub fn python_string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    string_into(&mut out, s);
    out
}

fn repr_into(out: &mut String, value: &Json) {
    match value {
        Json::Null => out.push_str("None"),
        Json::Bool(true) => out.push_str("True"),
        Json::Bool(false) => out.push_str("False"),
        Json::Number(Number::Int(i)) => out.push_str(&i.to_string()),
        Json::Number(Number::BigInt(text)) => out.push_str(text),
        Json::Number(Number::Float(f)) => out.push_str(&python_float_repr(*f)),
        Json::String(s) => string_into(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(out, item);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                string_into(out, key);
                out.push_str(": ");
                repr_into(out, item);
            }
            out.push('}');
        }
    }
}

fn string_into(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let code = c as u32;
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable` for one character: not in categories Cc, Cf, Cs, Co, Cn, Zl, Zp, and
/// not a space separator other than the ASCII space.
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_ascii() {
        return !c.is_ascii_control();
    }
    !matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
    )
}
