//! The pure core: text in, decision out. No I/O, no clock, no environment, no global state.
//!
//! * [`is_ws`] — the whitespace set W;
//! * [`first_control_character`] and [`MAX_DESCRIPTION_BYTES`] — what a description may hold;
//! * [`normalize`] — the description's normal form;
//! * [`find_checklist`] — the checklist of a file text, and [`checklist_items`] — its items;
//! * [`plan_append`] — the duplicate decision and the byte splice of an append.
//!
//! The parser scans bytes with `memchr` and stops at the end of the checklist's block.

mod checklist;
mod description;
mod grammar;
mod normalize;
mod plan;
mod text;

pub use description::{MAX_DESCRIPTION_BYTES, first_control_character};
pub use normalize::normalize;
pub use plan::{AppendPlan, plan_append};

/// The append plan's former name.
#[deprecated(since = "0.2.0", note = "renamed to `AppendPlan`")]
pub type Plan = AppendPlan;
pub use text::is_ws;

/// The checklist of a file text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checklist {
    /// 0-based index of the first item among the body's lines (the mark is not a line; front matter
    /// lines count).
    pub first_line: usize,
    /// 0-based index of the block's last line.
    pub last_line: usize,
    /// The first item's indent, verbatim.
    pub indent: String,
    /// The first item's bullet: `'-'`, `'*'` or `'+'`.
    pub bullet: char,
    /// How many items the block holds, at any depth, checked or not.
    pub items: usize,
}

/// The checklist of a whole file text (byte order mark included), or `None` when it has none.
///
/// ```
/// use shiftwork_worklog::core::find_checklist;
/// let text = "# 2026-09-06\n\nIntro paragraph.\n- [ ] first\n  - [x] nested\n    more words\n\n\
///             - plain bullet\n1. ordered\n\nClosing paragraph.\n";
/// let list = find_checklist(text).unwrap();
/// assert_eq!((list.first_line, list.last_line, list.items), (3, 8, 2));
/// assert_eq!((list.indent.as_str(), list.bullet), ("", '-'));
/// assert_eq!(find_checklist("```\n- [ ] fake\n```\n"), None);
/// ```
pub fn find_checklist(text: &str) -> Option<Checklist> {
    checklist::scan(text, None).map(|block| Checklist {
        first_line: block.first_line,
        last_line: block.last_line,
        indent: text[block.indent.0..block.indent.1].to_owned(),
        bullet: char::from(block.bullet),
        items: block.items,
    })
}

/// One item of a checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecklistItem {
    /// Its box is checked (`[x]` or `[X]`).
    pub checked: bool,
    /// How deep it is nested: its indent width less the first item's (a TAB counts as one).
    pub depth: usize,
    /// Its text after the box, without leading and trailing W characters.
    pub text: String,
}

/// The items of the checklist of a whole file text, in order (empty when it has none): the lines
/// [`find_checklist`] counts, read by the same scan.
///
/// ```
/// use shiftwork_worklog::core::checklist_items;
/// let items = checklist_items("# Today\n\n- [x] Fixed the bug\n  - [ ] nested  \n- plain\n\nAfter.\n- [x] later list\n");
/// assert_eq!(items.len(), 2);
/// assert!(items[0].checked && items[0].text == "Fixed the bug" && items[0].depth == 0);
/// assert!(!items[1].checked && items[1].text == "nested" && items[1].depth == 2);
/// ```
pub fn checklist_items(text: &str) -> Vec<ChecklistItem> {
    let mut items = Vec::new();
    let mut base: Option<usize> = None;
    checklist::scan_with(text, None, &mut |content: &[u8], indent: text::Indent| {
        let base = *base.get_or_insert(indent.width);
        let rest = grammar::item_rest(content, indent);
        let rest = String::from_utf8_lossy(rest);
        items.push(ChecklistItem {
            checked: matches!(content.get(indent.len + 3), Some(b'x' | b'X')),
            depth: indent.width.saturating_sub(base),
            text: rest.trim_matches(is_ws).to_owned(),
        });
    });
    items
}
