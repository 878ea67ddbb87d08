//! Text that is safe to put on a terminal: every string a snapshot holds passes through [`clean`].
//!
//! Checkpoints, ledgers and contracts are written by other programs; a title may hold an escape
//! sequence that would repaint the terminal, a newline that would break a row, or ten megabytes. The
//! view never sends any of that to the terminal.

use shiftwork_seams::echo::is_control_or_bidi;

/// The most code points of one text the view keeps (a title, a note, a path).
pub const TEXT_LIMIT: usize = 200;

/// `text` with every character of the workspace's one rule for text that reaches a person
/// ([`shiftwork_seams::echo::is_control_or_bidi`]: C0, DEL, C1, the line and paragraph separators, the
/// bidirectional marks, embeddings, overrides and isolates) replaced — tabs and line breaks by a
/// space, the others by U+FFFD — and cut to `max` code points, the cut marked with `…`.
///
/// ```
/// use shiftwork_watch::display_text::clean;
/// assert_eq!(clean("fix\tthe\nlogin", 50), "fix the login");
/// assert_eq!(clean("\u{1b}[2Jboom", 50), "\u{fffd}[2Jboom");
/// assert_eq!(clean("abcdef", 4), "abc…");
/// assert_eq!(clean("\u{200f}\u{202e}evil", 50), "\u{fffd}\u{fffd}evil");
/// ```
pub fn clean(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    for (n, ch) in text.chars().enumerate() {
        if n + 1 > max {
            out.pop();
            out.push('…');
            break;
        }
        out.push(replacement(ch));
    }
    if max == 0 {
        out.clear();
    }
    out
}

/// [`clean`] at [`TEXT_LIMIT`].
pub fn clean_text(text: &str) -> String {
    clean(text, TEXT_LIMIT)
}

/// What `ch` is shown as: the characters of the shared rule are replaced (the ones that break or
/// space a line by a space, the others by U+FFFD), every other character is itself.
fn replacement(ch: char) -> char {
    if !is_control_or_bidi(ch) {
        return ch;
    }
    match ch {
        '\t' | '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
        _ => '\u{fffd}',
    }
}

/// The number of terminal columns `text` takes.
pub fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` cut to at most `columns` terminal columns (the cut marked with `…`), then padded with spaces
/// to exactly `columns`.
///
/// ```
/// use shiftwork_watch::display_text::fit;
/// assert_eq!(fit("U3", 4), "U3  ");
/// assert_eq!(fit("Review", 4), "Rev…");
/// assert_eq!(fit("日本語", 5), "日本…");
/// ```
pub fn fit(text: &str, columns: usize) -> String {
    let mut out = cut(text, columns);
    let used = width(&out);
    out.extend(std::iter::repeat_n(' ', columns.saturating_sub(used)));
    out
}

/// `text` cut to at most `columns` terminal columns, the cut marked with `…` (no padding).
pub fn cut(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_owned();
    }
    if columns == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w > columns - 1 {
            break;
        }
        used += w;
        out.push(ch);
    }
    out.push('…');
    out
}

/// Whether `text` is what [`clean`] lets through (used by tests and the fuzz target).
pub fn is_clean(text: &str) -> bool {
    text.chars().all(|ch| replacement(ch) == ch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15 (hostile input): control characters never reach the terminal, lengths are bounded.
    #[test]
    fn clean_replaces_controls_and_cuts_at_the_limit() {
        let check = |text: &str, max: usize, expected: &str| {
            assert_eq!(clean(text, max), expected, "{text:?} at {max}");
            assert!(is_clean(&clean(text, max)));
        };
        check("", 5, "");
        check("plain", 5, "plain");
        check("plains", 5, "plai…");
        check("a\u{7}b", 5, "a\u{fffd}b");
        check("\u{9b}31m", 9, "\u{fffd}31m");
        check("\u{202e}evil", 9, "\u{fffd}evil");
        check(
            "a\u{200e}\u{200f}\u{61c}\u{2066}b",
            9,
            "a\u{fffd}\u{fffd}\u{fffd}\u{fffd}b",
        );
        check("line\r\nbreak", 20, "line  break");
        check("日本語のタイトル", 4, "日本語…");
        check("x", 0, "");
        check("xy", 1, "…");
    }

    /// Issue 27 item 11 (class: control characters reach a terminal): `clean` follows the workspace's
    /// one rule — every character `shiftwork_seams::echo::is_control_or_bidi` names is replaced, and
    /// no other character is touched.
    #[test]
    fn issue27_item11_clean_replaces_exactly_the_shared_rule() {
        for cp in 0u32..=0x3000 {
            let Some(ch) = char::from_u32(cp) else { continue };
            let shown = clean(&ch.to_string(), 5);
            if is_control_or_bidi(ch) {
                assert!(shown == " " || shown == "\u{fffd}", "U+{cp:04X}: {shown:?}");
            } else {
                assert_eq!(shown, ch.to_string(), "U+{cp:04X}");
            }
            assert_eq!(is_clean(&ch.to_string()), !is_control_or_bidi(ch), "U+{cp:04X}");
        }
    }

    #[test]
    fn fit_pads_and_cuts_by_terminal_columns() {
        let check = |text: &str, columns: usize, expected: &str| {
            assert_eq!(fit(text, columns), expected, "{text:?} in {columns}");
            assert_eq!(width(&fit(text, columns)), columns);
        };
        check("", 3, "   ");
        check("abc", 3, "abc");
        check("abcd", 3, "ab…");
        check("abcd", 1, "…");
        check("abcd", 0, "");
        check("日本", 4, "日本");
        check("日本語", 4, "日… ");
    }
}
