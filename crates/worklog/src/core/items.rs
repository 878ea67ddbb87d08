//! The items of the checklist: what a reader of the log (a person's client, an agent asking what was
//! done today) is shown, each with its box's state and its text.

use super::checklist;
use super::grammar::{item_bullet, item_rest};
use super::text::{Lines, body_start, indent, is_ws};

/// One item of the checklist.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Item {
    /// Its box is ticked (`[x]` or `[X]`).
    pub checked: bool,
    /// Its text after the box, leading and trailing whitespace (W) removed.
    pub text: String,
}

/// The items of the checklist of a whole file text (byte order mark included), in file order, at any
/// depth; `None` when the text has no checklist. The block is the one [`super::find_checklist`]
/// finds, so an append and a reader agree on what the checklist is.
///
/// ```
/// use shiftwork_worklog::core::checklist_items;
/// let text = "# 2026-09-06\n\n- [x] Fixed the bug\n  - [ ] nested idea\n- plain bullet\n* [X]  Merged  \n\nAfter.\n";
/// let items = checklist_items(text).unwrap();
/// let shown: Vec<(bool, &str)> = items.iter().map(|i| (i.checked, i.text.as_str())).collect();
/// assert_eq!(shown, [(true, "Fixed the bug"), (false, "nested idea"), (true, "Merged")]);
/// assert_eq!(checklist_items("no list here\n"), None);
/// ```
pub fn checklist_items(text: &str) -> Option<Vec<Item>> {
    let block = checklist::scan(text, None)?;
    let bytes = text.as_bytes();
    let mut items = Vec::with_capacity(block.items);
    for (index, line) in Lines::new(bytes, body_start(text)).enumerate() {
        if index < block.first_line {
            continue;
        }
        if index > block.last_line {
            break;
        }
        let content = line.content(bytes);
        let ind = indent(content);
        if ind.len == content.len() || item_bullet(content, ind).is_none() {
            continue;
        }
        let checked = content[ind.len + 3] != b' ';
        // The content is a slice of a `str` cut at ASCII bytes (the box's `]`, a line feed), so it
        // is UTF-8; the lossy reading is never lossy here.
        let rest = String::from_utf8_lossy(item_rest(content, ind));
        items.push(Item {
            checked,
            text: rest.trim_matches(is_ws).to_owned(),
        });
    }
    Some(items)
}
