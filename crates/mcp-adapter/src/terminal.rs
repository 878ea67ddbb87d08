//! What the binary prints for people: the one way to stdout and stderr outside the JSON-RPC stream.
//!
//! Every text the binary prints passes through here, so one rule holds in one place: a control
//! character (C0, DEL, C1), a line separator or a bidirectional control that came from input (an
//! unknown option's name, a tool's refusal, a file name, a time zone) reaches the terminal as inert
//! text (`\u{1b}`, see [`shiftwork_seams::echo::escape_controls`]), never as a sequence the
//! terminal obeys (`ESC ] 52` writes the clipboard) or one that reorders the line. The line breaks
//! of a message are kept. A JSON answer ([`json_for_people`]) keeps being JSON: the characters JSON
//! does not escape itself are written as `\uXXXX` escapes, which read back as the same string.
//!
//! A reader that went away (`shiftwork-mcp call … | head -1`) ends the process quietly with status 0,
//! as ripgrep does; a stderr that is gone is ignored.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use shiftwork_seams::echo::{escape_controls, is_control_or_bidi};

/// `text` with its control and bidirectional characters escaped, its line feeds and tabs kept (a
/// terminal only moves the cursor for them).
///
/// ```
/// use shiftwork_mcp::terminal::for_people;
/// assert_eq!(for_people("unknown option '--\u{1b}]52;c;eA==\u{7}'\nTry this.\n"),
///            "unknown option '--\\u{1b}]52;c;eA==\\u{7}'\nTry this.\n");
/// assert_eq!(for_people("plain\n"), "plain\n");
/// ```
pub fn for_people(text: &str) -> Cow<'_, str> {
    let kept = |c: char| c == '\n' || c == '\t';
    if !text.contains(|c: char| !kept(c) && is_control_or_bidi(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for piece in text.split_inclusive(kept) {
        let (body, end) = match piece.char_indices().last() {
            Some((at, c)) if kept(c) => (&piece[..at], &piece[at..]),
            _ => (piece, ""),
        };
        out.push_str(&escape_controls(body));
        out.push_str(end);
    }
    Cow::Owned(out)
}

/// A JSON text with every character JSON leaves raw but a terminal obeys or reorders (DEL, C1, the
/// line separators, the bidirectional controls) written as a `\uXXXX` escape: the same JSON value,
/// inert on a terminal. JSON writers already escape C0, so only strings can hold these characters,
/// and an escape is valid wherever they stand.
///
/// ```
/// use shiftwork_mcp::terminal::json_for_people;
/// assert_eq!(json_for_people(r#"{"a":"x\u001by"}"#), r#"{"a":"x\u001by"}"#);
/// assert_eq!(json_for_people("{\"a\":\"left \u{202e}right\u{85}\"}"),
///            r#"{"a":"left \u202eright\u0085"}"#);
/// ```
pub fn json_for_people(json: &str) -> Cow<'_, str> {
    if !json.contains(is_control_or_bidi) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for ch in json.chars() {
        // Only characters past U+007E are escaped here: a C0 control in the text is the writer's own
        // layout (the newlines of `--pretty`), never inside a string.
        if u32::from(ch) > 0x7e && is_control_or_bidi(ch) {
            // Every such character is in the Basic Multilingual Plane; writing to a String cannot fail.
            let _ = write!(out, "\\u{:04x}", u32::from(ch));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// Writes `text` (escaped by [`for_people`]) to stdout and flushes. A reader that went away ends the
/// process with status 0; any other failure is reported on stderr and ends it with status 1.
pub fn print_out(text: &str) {
    write_out(for_people(text).as_bytes());
}

/// Writes a JSON answer (escaped by [`json_for_people`]) and a newline to stdout, as [`print_out`].
pub fn print_json(json: &str) {
    let mut text = json_for_people(json).into_owned();
    text.push('\n');
    write_out(text.as_bytes());
}

fn write_out(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            print_err(&format!("shiftwork-mcp: cannot write the answer: {e}\n"));
            std::process::exit(1);
        }
    }
}

/// Writes `text` (escaped by [`for_people`]) to stderr, ignoring a stderr that is gone.
pub fn print_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(for_people(text).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27 item 11 (control characters reach the terminal): no character of the class survives
    /// either form, line feeds stay line feeds, and the JSON form reads back as the same value.
    #[test]
    fn no_control_or_bidi_character_reaches_a_person_raw() {
        let every: String = (0u32..0x2100).filter_map(char::from_u32).collect();
        let text = for_people(&every);
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && c != '\t' && is_control_or_bidi(c)),
            "{text:?}"
        );
        assert_eq!(text.matches('\n').count(), 1);
        assert_eq!(text.matches('\t').count(), 1);
        let json = serde_json::to_string(&every).unwrap_or_default();
        let safe = json_for_people(&json);
        assert!(!safe.chars().any(is_control_or_bidi), "{safe}");
        let back: String = serde_json::from_str(&safe).unwrap_or_default();
        assert_eq!(back, every);
    }
}
