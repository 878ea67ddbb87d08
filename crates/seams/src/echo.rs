//! Bounded echoes of untrusted text: how much of an input value an answer, an error or a log line may
//! repeat.
//!
//! Every crate that quotes a caller's value back (a path in a refusal, a zone, an expression, a reason)
//! clips it here, so that a 10 MB argument never becomes a 10 MB answer.
//!
//! ```
//! use shiftwork_seams::echo::clip;
//!
//! assert_eq!(clip("abcdef", 4), "abcd…(2 more)");
//! assert_eq!(clip("abc", 4), "abc");
//! ```

/// The most code points of any one input value that an answer or an error repeats.
pub const ECHO_LIMIT: usize = 2_000;

/// Keeps the first `max` code points of `text`, appending `…(<k> more)` when `k` were cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let more = text[cut..].chars().count();
            format!("{}…({more} more)", &text[..cut])
        }
    }
}

/// [`clip`] at [`ECHO_LIMIT`].
pub fn clip_echo(text: &str) -> String {
    clip(text, ECHO_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_code_points_not_bytes() {
        for (text, max, expected) in [
            ("", 0, ""),
            ("a", 0, "…(1 more)"),
            ("ééé", 2, "éé…(1 more)"),
            ("ééé", 3, "ééé"),
            ("👍👍", 1, "👍…(1 more)"),
        ] {
            assert_eq!(clip(text, max), expected, "{text:?} at {max}");
        }
        assert_eq!(
            clip_echo(&"x".repeat(2_001)).chars().count(),
            2_000 + "…(1 more)".chars().count()
        );
    }
}
