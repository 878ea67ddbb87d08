//! Bounded echoes of untrusted text: how much of an input value an answer, an error or a log line may
//! repeat.
//!
//! Every crate that quotes a caller's value back (a path in a refusal, a zone, an expression, a reason)
//! clips it here, so that a 10 MB argument never becomes a 10 MB answer.
//!
//! It also holds the one rule for text that reaches a person ([`escape_controls`]): a terminal obeys
//! control characters (an `ESC ] 52` sequence writes the clipboard) and bidirectional controls reorder
//! what follows them on screen, so every text an answer, an error, a log line or a written file
//! repeats has them escaped as `\u{1b}`, the form Rust's `{:?}` gives.
//!
//! ```
//! use shiftwork_seams::echo::{clip, escape_controls};
//!
//! assert_eq!(clip("abcdef", 4), "abcd…(2 more)");
//! assert_eq!(clip("abc", 4), "abc");
//! assert_eq!(escape_controls("a\u{1b}]52;c;x\u{7}b"), "a\\u{1b}]52;c;x\\u{7}b");
//! assert_eq!(escape_controls("left \u{202e}right"), "left \\u{202e}right");
//! assert_eq!(escape_controls("plain café"), "plain café");
//! ```

use std::borrow::Cow;
use std::fmt::Write as _;

/// The most code points of any one input value that an answer or an error repeats.
pub const ECHO_LIMIT: usize = 2_000;

/// Keeps the first `max` code points of `text`, appending `…(<k> more)` when `k` were cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let more = text[cut..].chars().count();
            format!("{}…({more} more)", &text[..cut])
        }
    }
}

/// [`clip`] at [`ECHO_LIMIT`].
pub fn clip_echo(text: &str) -> String {
    clip(text, ECHO_LIMIT)
}

/// True for a character a terminal acts on or that reorders text on screen: C0 controls, DEL, C1
/// controls, the line and paragraph separators, and the bidirectional marks, embeddings, overrides
/// and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
pub fn is_control_or_bidi(ch: char) -> bool {
    matches!(ch,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `text` with every character of [`is_control_or_bidi`] written as `\u{<hex>}` (lower-case hex, no
/// leading zeros: `\u{1b}`, `\u{202e}`), so it shows as inert text on a terminal and in a file. A
/// text without such a character is borrowed as it is. A backslash is not escaped: the form is for
/// people, not a reversible encoding.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_control_or_bidi) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for ch in text[first..].chars() {
        if is_control_or_bidi(ch) {
            // Writing into a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(ch));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// [`clip_echo`], then [`escape_controls`]: how an input value is repeated to a person.
pub fn echo(text: &str) -> String {
    escape_controls(&clip_echo(text)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_and_bidi_character_is_escaped_and_nothing_else() {
        for cp in 0u32..=0x2100 {
            let Some(ch) = char::from_u32(cp) else { continue };
            let text = ch.to_string();
            let escaped = escape_controls(&text);
            if is_control_or_bidi(ch) {
                assert_eq!(escaped, format!("\\u{{{cp:x}}}"), "U+{cp:04X}");
                assert!(!escaped.chars().any(is_control_or_bidi));
            } else {
                assert_eq!(escaped, text, "U+{cp:04X}");
            }
        }
        for cp in 0x2000u32..=0x2100 {
            let ch = char::from_u32(cp).unwrap_or(' ');
            let expected =
                matches!(cp, 0x200e | 0x200f | 0x2028 | 0x2029 | 0x202a..=0x202e | 0x2066..=0x2069);
            assert_eq!(is_control_or_bidi(ch), expected, "U+{cp:04X}");
        }
        assert_eq!(echo(&"\u{1b}".repeat(2_001)).matches("\\u{1b}").count(), 2_000);
    }

    #[test]
    fn clip_counts_code_points_not_bytes() {
        for (text, max, expected) in [
            ("", 0, ""),
            ("a", 0, "…(1 more)"),
            ("ééé", 2, "éé…(1 more)"),
            ("ééé", 3, "ééé"),
            ("👍👍", 1, "👍…(1 more)"),
        ] {
            assert_eq!(clip(text, max), expected, "{text:?} at {max}");
        }
        assert_eq!(
            clip_echo(&"x".repeat(2_001)).chars().count(),
            2_000 + "…(1 more)".chars().count()
        );
    }
}
