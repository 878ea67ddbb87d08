//! Text primitives: the whitespace set W, the body after the byte order mark and its
//! lines.
//!
//! Everything here scans bytes. The text is valid UTF-8 and every position handed around is on a
//! character boundary, because lines are split at the ASCII byte LF and the scanners only step over
//! whole characters (or compare bytes of two valid strings in lockstep).

use std::borrow::Cow;

/// The UTF-8 byte order mark (U+FEFF).
pub(crate) const BOM: &str = "\u{FEFF}";

/// True for exactly the 29 whitespace characters this crate calls W: Rust's `char::is_whitespace`
/// plus U+001C–U+001F.
///
/// ```
/// use shiftwork_worklog::core::is_ws;
/// assert!(is_ws(' ') && is_ws('\t') && is_ws('\u{1C}') && is_ws('\u{3000}'));
/// assert!(!is_ws('\u{200B}') && !is_ws('\u{FEFF}') && !is_ws('a'));
/// ```
pub fn is_ws(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{1C}'..='\u{1F}')
}

/// The byte length of the W character that starts at byte `i` of `b`, or 0 when the character there
/// is not in W. `i` must be a character boundary of valid UTF-8, or a continuation byte (which is
/// never the start of a W character, so the answer is 0).
#[inline]
pub(crate) fn ws_len_at(b: &[u8], i: usize) -> usize {
    let Some(&lead) = b.get(i) else { return 0 };
    if lead < 0x80 {
        return usize::from(matches!(lead, 0x09..=0x0D | 0x1C..=0x20));
    }
    let next = |k: usize| b.get(i + k).copied();
    match lead {
        // U+0085, U+00A0
        0xC2 => usize::from(matches!(next(1), Some(0x85 | 0xA0))) * 2,
        // U+1680
        0xE1 => usize::from(next(1) == Some(0x9A) && next(2) == Some(0x80)) * 3,
        // U+2000–U+200A, U+2028, U+2029, U+202F; U+205F
        0xE2 => match (next(1), next(2)) {
            (Some(0x80), Some(0x80..=0x8A | 0xA8 | 0xA9 | 0xAF)) | (Some(0x81), Some(0x9F)) => 3,
            _ => 0,
        },
        // U+3000
        0xE3 => usize::from(next(1) == Some(0x80) && next(2) == Some(0x80)) * 3,
        _ => 0,
    }
}

/// True when byte `b` can start a W character (a cheap pre-filter for [`ws_len_at`]).
#[inline]
pub(crate) fn may_start_ws(b: u8) -> bool {
    matches!(b, 0x09..=0x0D | 0x1C..=0x20 | 0xC2 | 0xE1 | 0xE2 | 0xE3)
}

/// The indent of a line's content: the longest run of W at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Indent {
    /// Length in bytes.
    pub len: usize,
    /// Width in characters (a TAB counts as one).
    pub width: usize,
}

/// The indent of `content`.
#[inline]
pub(crate) fn indent(content: &[u8]) -> Indent {
    let mut len = 0;
    let mut width = 0;
    loop {
        let w = ws_len_at(content, len);
        if w == 0 {
            return Indent { len, width };
        }
        len += w;
        width += 1;
    }
}

/// True when `content` is blank: empty or W only.
#[inline]
pub(crate) fn is_blank(content: &[u8]) -> bool {
    indent(content).len == content.len()
}

/// `s` with trailing W removed.
pub(crate) fn trim_end_ws(s: &str) -> &str {
    s.trim_end_matches(is_ws)
}

/// `s` with every maximal run of W replaced by one space and leading and trailing W removed
/// (the first step of normalizing, and the item-text comparison of the duplicate rule). Borrows when
/// nothing changes.
pub(crate) fn collapse_ws(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut clean = true;
    let mut previous_space = true; // a leading space is not clean either
    while i < b.len() {
        let w = ws_len_at(b, i);
        if w == 0 {
            previous_space = false;
            i += 1;
            continue;
        }
        if w != 1 || b[i] != b' ' || previous_space {
            clean = false;
            break;
        }
        previous_space = true;
        i += 1;
    }
    if clean && !previous_space || s.is_empty() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_ws).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    Cow::Owned(out)
}

/// True when `text`, with every maximal run of W replaced by one space and leading and trailing W
/// removed, equals `needle` exactly. `needle` must already be collapsed (no W but single
/// spaces between other characters); it is compared byte for byte, without allocating.
pub(crate) fn eq_collapsed(text: &[u8], needle: &[u8]) -> bool {
    let mut i = indent(text).len;
    let mut j = 0;
    while i < text.len() {
        let w = ws_len_at(text, i);
        if w == 0 {
            if needle.get(j) != Some(&text[i]) {
                return false;
            }
            i += 1;
            j += 1;
            continue;
        }
        i += w;
        i += indent(&text[i..]).len;
        if i == text.len() {
            break; // trailing W
        }
        if needle.get(j) != Some(&b' ') {
            return false;
        }
        j += 1;
    }
    j == needle.len()
}

/// One line of the body, as byte offsets into the whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Where the content starts.
    pub start: usize,
    /// Where the content ends and the terminator (if any) starts.
    pub content_end: usize,
    /// Where the terminator ends (equal to `content_end` when there is none).
    pub end: usize,
}

impl Line {
    /// The content's bytes.
    #[inline]
    pub fn content<'t>(&self, text: &'t [u8]) -> &'t [u8] {
        &text[self.start..self.content_end]
    }

    /// The terminator: `"\n"`, `"\r\n"` or `""`.
    pub fn terminator<'t>(&self, text: &'t str) -> &'t str {
        &text[self.content_end..self.end]
    }

    /// Whether the line has a terminator.
    pub fn terminated(&self) -> bool {
        self.end > self.content_end
    }
}

/// Where the body starts: after a byte order mark at offset 0, if any.
pub(crate) fn body_start(text: &str) -> usize {
    if text.starts_with(BOM) { BOM.len() } else { 0 }
}

/// The lines of the body, split at LF only.
#[derive(Debug, Clone)]
pub(crate) struct Lines<'t> {
    text: &'t [u8],
    pos: usize,
}

impl<'t> Lines<'t> {
    /// The lines of `text` from byte `start` (the body's start).
    pub fn new(text: &'t [u8], start: usize) -> Self {
        Lines { text, pos: start }
    }
}

impl Iterator for Lines<'_> {
    type Item = Line;

    #[inline]
    fn next(&mut self) -> Option<Line> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let line = match memchr::memchr(b'\n', &self.text[start..]) {
            Some(k) => {
                let lf = start + k;
                let content_end = if lf > start && self.text[lf - 1] == b'\r' {
                    lf - 1
                } else {
                    lf
                };
                Line {
                    start,
                    content_end,
                    end: lf + 1,
                }
            }
            None => Line {
                start,
                content_end: self.text.len(),
                end: self.text.len(),
            },
        };
        self.pos = line.end;
        Some(line)
    }
}

/// The body's last line and the terminator of the line before it, found from the end of the text
/// without scanning the rest. `None` when the body is empty.
pub(crate) fn last_line(text: &str, body: usize) -> Option<(Line, Option<&str>)> {
    let b = text.as_bytes();
    if b.len() <= body {
        return None;
    }
    let end = b.len();
    let (content_end, search_end) = if b[end - 1] == b'\n' {
        let lf = end - 1;
        let ce = if lf > body && b[lf - 1] == b'\r' {
            lf - 1
        } else {
            lf
        };
        (ce, ce)
    } else {
        (end, end)
    };
    let start = memchr::memrchr(b'\n', &b[body..search_end]).map_or(body, |k| body + k + 1);
    let line = Line {
        start,
        content_end,
        end,
    };
    let before = (start > body).then(|| {
        let lf = start - 1;
        if lf > body && b[lf - 1] == b'\r' {
            "\r\n"
        } else {
            "\n"
        }
    });
    Some((line, before))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §0.1: the byte scanner recognises exactly the characters `is_ws` accepts, at their full length.
    #[test]
    fn ws_len_at_agrees_with_is_ws_for_every_char() {
        for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf);
            let expected = if is_ws(c) { s.len() } else { 0 };
            assert_eq!(ws_len_at(s.as_bytes(), 0), expected, "{c:?}");
            assert!(may_start_ws(s.as_bytes()[0]) || expected == 0, "{c:?}");
        }
    }

    /// WL-23: lines, contents and terminators.
    #[test]
    fn lines_split_at_lf_only() {
        let text = "\u{FEFF}a\r\nb\rc\n\r\nlast\r";
        let lines: Vec<(&str, &str)> = Lines::new(text.as_bytes(), body_start(text))
            .map(|l| (&text[l.start..l.content_end], l.terminator(text)))
            .collect();
        assert_eq!(
            lines,
            [("a", "\r\n"), ("b\rc", "\n"), ("", "\r\n"), ("last\r", "")]
        );
        assert_eq!(Lines::new(b"", 0).count(), 0);
        assert_eq!(Lines::new(b"x\n", 0).count(), 1);
    }

    /// The last line and the terminator before it, found from the end.
    #[test]
    fn last_line_from_the_end() {
        fn last(t: &str) -> Option<(&str, &str, Option<&str>)> {
            last_line(t, body_start(t)).map(|(l, b)| (&t[l.start..l.content_end], l.terminator(t), b))
        }
        assert_eq!(last(""), None);
        assert_eq!(last("\u{FEFF}"), None);
        assert_eq!(last("\u{FEFF}\r\n"), Some(("", "\r\n", None)));
        assert_eq!(last("a\r\nb"), Some(("b", "", Some("\r\n"))));
        assert_eq!(last("a\nb\r\n"), Some(("b", "\r\n", Some("\n"))));
        assert_eq!(last("\r\n"), Some(("", "\r\n", None)));
        assert_eq!(last("\rx"), Some(("\rx", "", None)));
    }

    /// WL-38: the comparison with runs of W collapsed, without allocating.
    #[test]
    fn eq_collapsed_cases() {
        let cases = [
            (" a \t b\u{3000}", "a b", true),
            ("a b", "a b", true),
            ("ab", "a b", false),
            ("a  b c", "a b", false),
            ("", "", true),
            ("   ", "", true),
            ("é\u{85}ü", "é ü", true),
            ("a", "", false),
            ("", "a", false),
        ];
        for (text, needle, eq) in cases {
            assert_eq!(
                eq_collapsed(text.as_bytes(), needle.as_bytes()),
                eq,
                "{text:?} vs {needle:?}"
            );
        }
    }

    /// Step 1 of WL-35: collapsing borrows when there is nothing to do.
    #[test]
    fn collapse_ws_cases() {
        assert!(matches!(collapse_ws("a b"), Cow::Borrowed("a b")));
        assert_eq!(collapse_ws(" a\u{A0}\u{A0}b\n"), "a b");
        assert_eq!(collapse_ws("a\tb"), "a b");
        assert_eq!(collapse_ws("a "), "a");
        assert_eq!(collapse_ws("\u{2028}"), "");
    }
}
