//! What a description may hold before it is normalized: a bounded
//! length and no control character (nor bidirectional control) other than whitespace.

use shiftwork_seams::echo::is_control_or_bidi;

use super::text::is_ws;

/// The most bytes a description may hold, as sent (before normalization).
///
/// Why this bound: a description is one sentence; 4,096 bytes hold several paragraphs of it,
/// and the bound keeps every answer that repeats the line small. A longer description is refused
/// before anything is looked at, so a 10 MB argument costs nothing but the refusal.
pub const MAX_DESCRIPTION_BYTES: usize = 4_096;

/// The first character of `description` that is a control character or a bidirectional control but
/// not whitespace ([`is_ws`](crate::core::is_ws)), with its position counted in characters from 1 —
/// or `None` when there is none. The set is the workspace's one rule for text that reaches a person, [`is_control_or_bidi`]:
/// C0, DEL, C1, the line and paragraph separators, and the bidirectional marks, embeddings, overrides
/// and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
///
/// Why: such a character would be written raw into the log (a NUL makes the
/// file look binary to every tool, an ESC re-colours the terminal that shows it, a U+202E shows the
/// rest of the line reversed), so a description holding one is refused. TAB, LF, CR, VT, FF,
/// U+001C–U+001F, NEL and the line and paragraph separators U+2028 and U+2029 are W: normalization
/// turns them into spaces, so they are never refused.
///
/// ```
/// use shiftwork_worklog::core::first_control_character;
/// assert_eq!(first_control_character("Fixed the bug"), None);
/// assert_eq!(first_control_character("line\r\nbreaks\tand\u{85}NEL\u{2028}"), None);
/// assert_eq!(first_control_character("a\u{0}b\u{1B}"), Some((2, '\u{0}')));
/// assert_eq!(first_control_character("é\u{7F}"), Some((2, '\u{7F}')));
/// assert_eq!(first_control_character("Fixed the \u{202E}gub"), Some((11, '\u{202E}')));
/// ```
pub fn first_control_character(description: &str) -> Option<(usize, char)> {
    description
        .chars()
        .zip(1..)
        .find(|&(c, _)| is_control_or_bidi(c) && !is_ws(c))
        .map(|(c, position)| (position, c))
}
