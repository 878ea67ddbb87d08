//! What a description may hold before it is normalized (our decision, issues 12 and 16): a bounded
//! length and no control character other than whitespace.

use super::text::is_ws;

/// The most bytes a description may hold, as sent (before normalization).
///
/// Our decision (issue 16): a description is one sentence; 4,096 bytes hold several paragraphs of it,
/// and the bound keeps every answer that repeats the line small. A longer description is refused
/// before anything is looked at, so a 10 MB argument costs nothing but the refusal.
pub const MAX_DESCRIPTION_BYTES: usize = 4_096;

/// The first character of `description` that is a control character (Unicode category Cc: U+0000 to
/// U+001F, U+007F to U+009F) but not whitespace (W, §0.1), with its position counted in characters
/// from 1 — or `None` when there is none.
///
/// Our decision (issue 12): such a character would be written raw into the log (a NUL makes the file
/// look binary to every tool, an ESC re-colours the terminal that shows it), so a description holding
/// one is refused. TAB, LF, CR, VT, FF, U+001C–U+001F and NEL are W: normalization turns them into
/// spaces, so they are never refused.
///
/// ```
/// use shiftwork_worklog::core::first_control_character;
/// assert_eq!(first_control_character("Fixed the bug"), None);
/// assert_eq!(first_control_character("line\r\nbreaks\tand\u{85}NEL"), None);
/// assert_eq!(first_control_character("a\u{0}b\u{1B}"), Some((2, '\u{0}')));
/// assert_eq!(first_control_character("é\u{7F}"), Some((2, '\u{7F}')));
/// ```
pub fn first_control_character(description: &str) -> Option<(usize, char)> {
    description
        .chars()
        .zip(1..)
        .find(|&(c, _)| c.is_control() && !is_ws(c))
        .map(|(c, position)| (position, c))
}
