//! Normalization of the description.

use super::text::{collapse_ws, is_ws};

/// The boxes the second step of normalizing removes.
const BOXES: [&str; 3] = ["[ ]", "[x]", "[X]"];

/// Normalizes a description: runs of W (line breaks included) become one space and the
/// ends are trimmed; then, once, a leading bullet followed by W and, once, a box followed by any W are
/// removed; then the ends are trimmed again. Nothing else changes.
///
/// ```
/// use shiftwork_worklog::core::normalize;
/// assert_eq!(normalize("  - [ ] Fixed   the\nbug.  "), "Fixed the bug.");
/// assert_eq!(normalize("* [ ] - [x] y"), "- [x] y");
/// assert_eq!(normalize("- "), "-");
/// assert_eq!(normalize("[x]"), "");
/// ```
pub fn normalize(description: &str) -> String {
    let collapsed = collapse_ws(description);
    let mut rest: &str = &collapsed;
    if let Some(after) = rest.strip_prefix(['-', '*', '+'])
        && after.starts_with(is_ws)
    {
        rest = after.trim_start_matches(is_ws);
    }
    if let Some(after) = BOXES.iter().find_map(|b| rest.strip_prefix(b)) {
        rest = after.trim_start_matches(is_ws);
    }
    rest.trim_matches(is_ws).to_owned()
}
