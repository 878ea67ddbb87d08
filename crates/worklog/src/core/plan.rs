//! Planning an append: the duplicate decision, the new line, and the one run of text to
//! insert at one offset so that every existing byte stays.

use super::checklist::scan;
use super::text::{body_start, collapse_ws, is_blank, last_line};

/// The decision of [`plan_append`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendPlan {
    /// An item of the checklist already has this text: nothing is to be written. `line` is
    /// the line that would have been written.
    Duplicate {
        /// The line that would have been written, without terminator.
        line: String,
    },
    /// Insert `insertion` at byte `offset` of the text.
    Insert {
        /// True when the file had no checklist and one is started.
        created: bool,
        /// The new line, without terminator.
        line: String,
        /// Byte offset into the whole text (mark included), on a character boundary.
        offset: usize,
        /// The run to insert; it contains `line` exactly once.
        insertion: String,
    },
}

/// Decides an append of an already normalized, non-empty description.
///
/// The new file content is `text[..offset] + insertion + text[offset..]`: one run inserted at one
/// place, every existing byte kept. The text is expected to be normalized
/// ([`crate::core::normalize`]); as a safeguard its runs of whitespace are collapsed once more, so
/// the new line can never hold a line break whatever the caller passes.
///
/// Two choices about lone carriage returns (which are content and W):
///
/// * the first item's indent is copied verbatim except that a CR in it is written as a space, of the
///   same width: copying it would put a CR into the new line, which must never hold a line break,
///   and dropping it would shorten the indent and end the block before the new item;
/// * when the file ends without a line break in a line whose last character is a CR, the line break
///   added after it is CRLF whatever *E* is, so the CR stays content.
///
/// ```
/// use shiftwork_worklog::core::{plan_append, AppendPlan};
/// let text = "# 2026-09-06\n\n- [x] a\n- [ ] b\n\nNotes here\n";
/// let AppendPlan::Insert { created, line, offset, insertion } = plan_append(text, "Fixed the bug") else {
///     panic!("not a duplicate");
/// };
/// assert!(!created);
/// assert_eq!(line, "- [x] Fixed the bug");
/// let after = format!("{}{}{}", &text[..offset], insertion, &text[offset..]);
/// assert_eq!(after, "# 2026-09-06\n\n- [x] a\n- [ ] b\n- [x] Fixed the bug\n\nNotes here\n");
/// assert!(matches!(plan_append(&after, "Fixed the bug"), AppendPlan::Duplicate { .. }));
/// ```
pub fn plan_append(text: &str, normalized: &str) -> AppendPlan {
    let needle = collapse_ws(normalized);
    let Some(block) = scan(text, Some(&needle)) else {
        return plan_created(text, format!("- [x] {needle}"));
    };
    let mut line = String::with_capacity(block.indent.1 - block.indent.0 + 6 + needle.len());
    line.extend(
        text[block.indent.0..block.indent.1]
            .chars()
            .map(|c| if c == '\r' { ' ' } else { c }),
    );
    line.push(char::from(block.bullet));
    line.push_str(" [x] ");
    line.push_str(&needle);
    if block.duplicate {
        return AppendPlan::Duplicate { line };
    }
    let anchor = block.anchor;
    let (offset, insertion) = if anchor.terminated() {
        // WL-46: right after the block's last line, before any blank lines that follow it.
        (anchor.end, format!("{line}{}", anchor.terminator(text)))
    } else {
        // WL-46: the block ends the file without a line break; it still does afterwards.
        let ending = block.before_anchor.map_or("\n", |l| l.terminator(text));
        let ending = break_after(anchor.content(text.as_bytes()), ending);
        (text.len(), format!("{ending}{line}"))
    };
    AppendPlan::Insert {
        created: false,
        line,
        offset,
        insertion,
    }
}

/// The run that starts a checklist at the end of a file that has none.
fn plan_created(text: &str, line: String) -> AppendPlan {
    let body = body_start(text);
    let insertion = match last_line(text, body) {
        None => line.clone(),
        Some((last, before)) => {
            let terminator = last.terminator(text);
            let ending = if last.terminated() {
                terminator
            } else {
                before.unwrap_or("\n")
            };
            let mut run = String::with_capacity(line.len() + 3 * ending.len());
            if !last.terminated() {
                run.push_str(break_after(last.content(text.as_bytes()), ending));
            }
            if !is_blank(last.content(text.as_bytes())) {
                run.push_str(ending);
            }
            run.push_str(&line);
            run.push_str(terminator);
            run
        }
    };
    AppendPlan::Insert {
        created: true,
        line,
        offset: text.len(),
        insertion,
    }
}

/// The line break added right after an unterminated last line: the file's line ending *E* (the
/// anchor line's terminator, else the one before it, else LF), except that when the line ends with a
/// lone CR it is CRLF, so that the CR stays a lone CR in the content (lone CRs survive an append).
/// With a plain LF the CR would merge into a CRLF terminator and the line's content would lose its
/// last character, which can turn a list line such as `"1.\r"` into a paragraph line and end the
/// block before the new item (breaking the guarantee that a second append of the same item is a
/// duplicate).
fn break_after<'e>(content: &[u8], ending: &'e str) -> &'e str {
    if content.ends_with(b"\r") { "\r\n" } else { ending }
}
