//! Finding the checklist: front matter, fenced blocks, the first item line and the
//! block that follows it, with the item count and the duplicate test done in the same pass.
//!
//! The scan stops at the end of the block. Before the checklist starts, a line whose first byte can
//! start neither W, a fence nor a bullet is skipped after one byte comparison, so the cost of the
//! prose before the checklist is little more than finding its line feeds.

use super::grammar::{
    Fence, closes_fence, closes_front_matter, fence_open, is_generic_list_line, is_thematic_break,
    item_bullet, item_rest, opens_front_matter,
};
use super::text::{Indent, Line, Lines, body_start, eq_collapsed, indent, may_start_ws};

/// What the scan found: the block and what an append needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// 0-based index of the first item among the body's lines.
    pub first_line: usize,
    /// 0-based index of the block's last line.
    pub last_line: usize,
    /// Byte range of the first item's indent in the text.
    pub indent: (usize, usize),
    /// The first item's bullet.
    pub bullet: u8,
    /// Items in the block.
    pub items: usize,
    /// The block's last line: the anchor of a `written` append.
    pub anchor: Line,
    /// The line right before the anchor, if any.
    pub before_anchor: Option<Line>,
    /// Whether an item's text equals the needle; false without a needle.
    pub duplicate: bool,
}

/// Bytes that may begin a line that matters before the checklist starts: a possible W character, a
/// fence character or a bullet. Any other first byte makes a line plain text.
const fn interesting_first_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = matches!(byte, 0x09..=0x0D | 0x1C..=0x20 | 0xC2 | 0xE1 | 0xE2 | 0xE3 | b'`' | b'~' | b'-' | b'*' | b'+');
        b += 1;
    }
    table
}

static INTERESTING: [bool; 256] = interesting_first_bytes();

/// Scans `text` (the whole file text, mark included) for the checklist. With a `needle` (a collapsed,
/// normalized description), also tells whether one of its items has that text.
pub(crate) fn scan(text: &str, needle: Option<&str>) -> Option<Block> {
    scan_with(text, needle, &mut |_, _| {})
}

/// [`scan`], telling `on_item` of each item line of the checklist in order (its content and
/// indent).
pub(crate) fn scan_with<F: FnMut(&[u8], Indent)>(
    text: &str,
    needle: Option<&str>,
    on_item: &mut F,
) -> Option<Block> {
    let bytes = text.as_bytes();
    let start = body_start(text);
    let mut lines = Lines::new(bytes, start);
    let (mut index, mut previous) = skip_front_matter(text, &mut lines);
    let mut fence: Option<Fence> = None;
    for line in lines.by_ref() {
        let content = line.content(bytes);
        let this = index;
        index += 1;
        let Some(&first) = content.first() else {
            previous = Some(line);
            continue;
        };
        if let Some(open) = fence {
            // A closing line starts with W or the fence character.
            if (first == open.ch || may_start_ws(first)) && closes_fence(content, indent(content), open) {
                fence = None;
            }
            previous = Some(line);
            continue;
        }
        if !INTERESTING[usize::from(first)] {
            previous = Some(line);
            continue;
        }
        let ind = indent(content);
        if let Some(open) = fence_open(content, ind) {
            fence = Some(open);
            previous = Some(line);
            continue;
        }
        if let Some(bullet) = item_bullet(content, ind) {
            on_item(content, ind);
            let duplicate = needle.is_some_and(|n| eq_collapsed(item_rest(content, ind), n.as_bytes()));
            let block = Block {
                first_line: this,
                last_line: this,
                indent: (line.start, line.start + ind.len),
                bullet,
                items: 1,
                anchor: line,
                before_anchor: previous,
                duplicate,
            };
            return Some(extend_block(bytes, lines, block, ind.width, needle, on_item));
        }
        previous = Some(line);
    }
    None
}

/// Skips front matter when the first line opens it and a later line closes it. Returns the
/// index of the first line after it and the closing line (`(0, None)` when there is none).
fn skip_front_matter(text: &str, lines: &mut Lines<'_>) -> (usize, Option<Line>) {
    let mut look = lines.clone();
    let Some(first) = look.next() else {
        return (0, None);
    };
    if !opens_front_matter(&text[first.start..first.content_end]) {
        return (0, None);
    }
    for (k, line) in look.enumerate() {
        if closes_front_matter(&text[line.start..line.content_end]) {
            let skipped = k + 2;
            for _ in 0..skipped {
                lines.next();
            }
            return (skipped, Some(line));
        }
    }
    (0, None)
}

/// Examines the lines after the first item and extends the block through the last line that
/// extends it; counts the items and runs the duplicate test on them.
fn extend_block<F: FnMut(&[u8], Indent)>(
    bytes: &[u8],
    lines: Lines<'_>,
    mut block: Block,
    base: usize,
    needle: Option<&str>,
    on_item: &mut F,
) -> Block {
    let mut index = block.first_line;
    let mut previous = block.anchor;
    for line in lines {
        index += 1;
        let content = line.content(bytes);
        let ind = indent(content);
        if ind.len == content.len() {
            previous = line; // 1. blank: neither extends nor ends
            continue;
        }
        let first = content[ind.len];
        if (first == b'`' || first == b'~') && fence_open(content, ind).is_some() {
            break; // 2. a fence line ends the block
        }
        if ind.width <= base && matches!(first, b'-' | b'*' | b'_') && is_thematic_break(content) {
            break; // 3. a thematic break at or above the base ends it
        }
        if ind.width >= base && is_generic_list_line(content, ind) {
            // 4. a list line at or below the base extends it
            if item_bullet(content, ind).is_some() {
                on_item(content, ind);
                block.items += 1;
                if !block.duplicate
                    && let Some(n) = needle
                {
                    block.duplicate = eq_collapsed(item_rest(content, ind), n.as_bytes());
                }
            }
        } else if ind.width <= base {
            break; // 6. anything else at or above the base ends it
        }
        // 5. (or 4.) the line extends the block
        block.last_line = index;
        block.anchor = line;
        block.before_anchor = Some(previous);
        previous = line;
    }
    block
}
