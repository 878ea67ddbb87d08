//! The line classes of the checklist grammar, on a line's content bytes.
//!
//! Each function looks at the content only; terminators are never part of a match. Callers pass the
//! line's [`Indent`] when they have computed it already, so that a line is scanned once.

use super::text::{Indent, is_blank, trim_end_ws, ws_len_at};

/// The box characters an item line may hold between `[` and `]`.
const BOX_STATES: [u8; 3] = [b' ', b'x', b'X'];

/// True for the three bullets `-`, `*`, `+`.
#[inline]
pub(crate) fn is_bullet(b: u8) -> bool {
    matches!(b, b'-' | b'*' | b'+')
}

/// The bullet of an item line, or `None` when the line is not one. The item's rest starts at
/// `indent.len + 5`.
#[inline]
pub(crate) fn item_bullet(content: &[u8], indent: Indent) -> Option<u8> {
    let r = &content[indent.len..];
    match r {
        [bullet, b' ', b'[', state, b']', ..] if is_bullet(*bullet) && BOX_STATES.contains(state) => {
            Some(*bullet)
        }
        _ => None,
    }
}

/// The item text of an item line: the rest after the box, leading W not yet removed (the
/// duplicate comparison skips it).
#[inline]
pub(crate) fn item_rest(content: &[u8], indent: Indent) -> &[u8] {
    &content[indent.len + 5..]
}

/// An indent, then a bullet or ASCII digits followed by `.` or `)`, then one W character.
#[inline]
pub(crate) fn is_generic_list_line(content: &[u8], indent: Indent) -> bool {
    let r = &content[indent.len..];
    match r.first() {
        Some(&b) if is_bullet(b) => ws_len_at(r, 1) > 0,
        Some(b) if b.is_ascii_digit() => {
            let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
            matches!(r.get(digits), Some(b'.' | b')')) && ws_len_at(r, digits + 1) > 0
        }
        _ => false,
    }
}

/// At least three non-W characters, all the same one of `-`, `*`, `_`.
pub(crate) fn is_thematic_break(content: &[u8]) -> bool {
    let mut marker = None;
    let mut count = 0usize;
    let mut i = 0;
    while i < content.len() {
        let w = ws_len_at(content, i);
        if w > 0 {
            i += w;
            continue;
        }
        let b = content[i];
        if !matches!(b, b'-' | b'*' | b'_') || marker.is_some_and(|m| m != b) {
            return false;
        }
        marker = Some(b);
        count += 1;
        i += 1;
    }
    count >= 3
}

/// An open fenced block: its character and the length of its opening run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fence {
    pub ch: u8,
    pub len: usize,
}

/// The fence a fence line opens, or `None` when the line is not a fence line.
#[inline]
pub(crate) fn fence_open(content: &[u8], indent: Indent) -> Option<Fence> {
    let r = &content[indent.len..];
    let ch = *r.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = r.iter().take_while(|&&b| b == ch).count();
    if len < 3 || (ch == b'`' && memchr::memchr(b'`', &r[len..]).is_some()) {
        return None;
    }
    Some(Fence { ch, len })
}

/// Whether a line inside a fenced block closes it: an indent, a run of the opening character
/// at least as long as the opening run, then only W.
#[inline]
pub(crate) fn closes_fence(content: &[u8], indent: Indent, fence: Fence) -> bool {
    let r = &content[indent.len..];
    let run = r.iter().take_while(|&&b| b == fence.ch).count();
    run >= fence.len && is_blank(&r[run..])
}

/// Whether a line's content opens front matter (`---`, trailing W allowed).
pub(crate) fn opens_front_matter(content: &str) -> bool {
    trim_end_ws(content) == "---"
}

/// Whether a line's content closes front matter (`---` or `...`, trailing W allowed).
pub(crate) fn closes_front_matter(content: &str) -> bool {
    matches!(trim_end_ws(content), "---" | "...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::text::indent;

    fn item(content: &str) -> Option<(char, &str)> {
        let ind = indent(content.as_bytes());
        item_bullet(content.as_bytes(), ind).map(|b| {
            let rest = std::str::from_utf8(item_rest(content.as_bytes(), ind)).unwrap();
            (char::from(b), rest.trim_start_matches(crate::core::is_ws))
        })
    }

    /// WL-25: the item-line table, line by line.
    #[test]
    fn wl25_item_line_table() {
        let yes = [
            ("- [ ] a", '-', "a"),
            ("- [x] a", '-', "a"),
            ("* [X] a", '*', "a"),
            ("+ [ ] a", '+', "a"),
            ("     * [ ] a", '*', "a"),
            ("\t\t+ [x] a", '+', "a"),
            ("\u{A0}- [ ] a", '-', "a"),
            ("- [x]a", '-', "a"),
            ("- [ ]", '-', ""),
            ("- [x]   ", '-', ""),
        ];
        for (content, bullet, text) in yes {
            assert_eq!(item(content), Some((bullet, text)), "{content:?}");
        }
        let no = [
            "1. [ ] a",
            "* [] a",
            "- [ x] a",
            "-  [ ] a",
            "-\t[ ] a",
            "-[ ] a",
            "- [/] a",
            "- [-] a",
            "- [>] a",
            "> * [x] a",
            "- [",
            "",
        ];
        for content in no {
            assert_eq!(item(content), None, "{content:?}");
        }
    }

    fn generic(content: &str) -> bool {
        is_generic_list_line(content.as_bytes(), indent(content.as_bytes()))
    }

    /// WL-26: generic list lines; every item line is one; ASCII digits only.
    #[test]
    fn wl26_generic_list_line_examples() {
        for yes in [
            "- a",
            "-\ta",
            "12. a",
            "3) a",
            "- - -",
            "  * x",
            "+\u{3000}y",
            "- [ ] item",
            "1.\u{A0}x",
        ] {
            assert!(generic(yes), "{yes:?}");
        }
        for no in ["-", "1.", "-a", "a. b", "\u{0661}. a", "1.a", "12", ""] {
            assert!(!generic(no), "{no:?}");
        }
    }

    /// WL-27: thematic breaks.
    #[test]
    fn wl27_thematic_break_examples() {
        for yes in [
            "***",
            "* * *",
            "- - -",
            "___",
            "  -  -  -",
            "-\u{A0}-\t-",
            "-----",
        ] {
            assert!(is_thematic_break(yes.as_bytes()), "{yes:?}");
        }
        for no in ["**", "- - a", "*-*", "", "   ", "__ _x"] {
            assert!(!is_thematic_break(no.as_bytes()), "{no:?}");
        }
    }

    fn open(content: &str) -> Option<(char, usize)> {
        fence_open(content.as_bytes(), indent(content.as_bytes())).map(|f| (char::from(f.ch), f.len))
    }

    /// WL-28: fence lines open fenced blocks.
    #[test]
    fn wl28_fence_lines() {
        assert_eq!(open("```"), Some(('`', 3)));
        assert_eq!(open("    ````js x"), Some(('`', 4)));
        assert_eq!(open("~~~ yaml"), Some(('~', 3)));
        assert_eq!(
            open("~~~ a`b"),
            Some(('~', 3)),
            "a tilde fence's info may hold backticks"
        );
        assert_eq!(open("```js```"), None);
        assert_eq!(open("``"), None);
        assert_eq!(open("x```"), None);
    }

    /// WL-29: the closing table.
    #[test]
    fn wl29_closing_table() {
        let closes = |opening: &str, line: &str| {
            let f = fence_open(opening.as_bytes(), indent(opening.as_bytes())).unwrap();
            closes_fence(line.as_bytes(), indent(line.as_bytes()), f)
        };
        assert!(closes("```", "```"));
        assert!(closes("```", "```` \t"));
        assert!(!closes("```", "```md"));
        assert!(!closes("```", "~~~"));
        assert!(closes("````", "````"));
        assert!(!closes("````", "```"));
        assert!(closes("~~~ yaml", "~~~~"));
        assert!(!closes("~~~ yaml", "```"));
        assert!(closes("```", "\t```"));
    }

    /// WL-30: front-matter delimiters, trailing W allowed, leading W not.
    #[test]
    fn wl30_front_matter_delimiters() {
        assert!(opens_front_matter("---") && opens_front_matter("--- \t"));
        assert!(!opens_front_matter(" ---") && !opens_front_matter("----") && !opens_front_matter("..."));
        assert!(closes_front_matter("---") && closes_front_matter("...\u{A0}"));
        assert!(!closes_front_matter(" ...") && !closes_front_matter("-- -"));
    }
}
