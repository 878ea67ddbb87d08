//! The properties of WL-98, checked on one text and one description. Used by the proptest in
//! `properties.rs` and, compiled in with `#[path]`, by the fuzz target `worklog_core` (WL-99).

use shiftwork_worklog::core::{
    AppendPlan, find_checklist, first_control_character, is_ws, normalize, plan_append,
};

use crate::model;

/// The reference model of the refused set: Unicode's control characters (Cc) and the bidirectional
/// controls (the marks U+061C, U+200E, U+200F; the embeddings and overrides U+202A–U+202E; the
/// isolates U+2066–U+2069).
fn control_or_bidi(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Checks every WL-98 property of appending `description` to `text`; panics with a message naming
/// the property that does not hold.
pub fn check_append(text: &str, description: &str) {
    let normalized = normalize(description);
    // Issue 12 item 5, issue 27 item 11: the refusal finds the first control character or
    // bidirectional control that is not W, counted in characters from 1; a description it lets through
    // normalizes to a text without any, so the new line can hold none but the first item's indent.
    let naive = description
        .chars()
        .enumerate()
        .find(|(_, c)| control_or_bidi(*c) && !is_ws(*c))
        .map(|(i, c)| (i + 1, c));
    assert_eq!(
        first_control_character(description),
        naive,
        "the control-character scan"
    );
    if naive.is_none() {
        assert!(
            !normalized.chars().any(control_or_bidi),
            "a control character survived normalization"
        );
    }
    // §6: the normal form holds no W but single spaces between other characters.
    assert_eq!(
        model::collapse(&normalized),
        normalized,
        "normalize left W runs or ends"
    );
    // The byte scanner agrees with the reference model of §5.
    let found = find_checklist(text);
    let expected = model::checklist(text);
    assert_eq!(
        found
            .as_ref()
            .map(|c| (c.first_line, c.last_line, c.indent.clone(), c.bullet, c.items)),
        expected.as_ref().map(|m| (
            m.first_line,
            m.last_line,
            m.indent.clone(),
            m.bullet,
            m.items.len()
        )),
        "find_checklist disagrees with the reference model"
    );
    if normalized.is_empty() {
        return;
    }
    let duplicate = expected
        .as_ref()
        .is_some_and(|m| m.items.iter().any(|t| model::collapse(t) == normalized));
    match plan_append(text, &normalized) {
        AppendPlan::Duplicate { line } => {
            assert!(duplicate, "Duplicate without a matching item");
            assert_eq!(
                model::append(text, &normalized),
                None,
                "the model sees no duplicate"
            );
            assert!(!line.contains(['\n', '\r']), "the new line holds a line break");
        }
        AppendPlan::Insert {
            created,
            line,
            offset,
            insertion,
        } => {
            assert!(!duplicate, "a matching item was not reported as a duplicate");
            assert_eq!(created, expected.is_none(), "created iff there is no checklist");
            assert!(!line.contains(['\n', '\r']), "the new line holds a line break");
            assert!(
                line.ends_with(&normalized),
                "the new line does not end with the description"
            );
            assert!(
                text.is_char_boundary(offset),
                "offset not on a character boundary"
            );
            assert_eq!(
                insertion.matches(line.as_str()).count(),
                1,
                "the line is not in the run once"
            );
            let (pre, post) = insertion
                .split_once(line.as_str())
                .expect("the run holds the line");
            let endings = |s: &str| s.replace("\r\n", "\n").chars().all(|c| c == '\n');
            assert!(
                endings(pre) && endings(post),
                "the run holds something besides line breaks"
            );
            let breaks = |s: &str| s.matches('\n').count();
            assert!(
                breaks(pre) <= 2 && breaks(post) <= 1,
                "the run adds too many line breaks"
            );
            let after = format!("{}{}{}", &text[..offset], insertion, &text[offset..]);
            assert_eq!(
                Some(&after),
                model::append(text, &normalized).as_ref(),
                "the model appends otherwise"
            );
            // Removing the inserted run gives back the input exactly.
            let mut back = after.clone();
            back.replace_range(offset..offset + insertion.len(), "");
            assert_eq!(back, text, "the insertion changed existing bytes");
            if !model::ends_inside_fence(&after) {
                assert!(
                    matches!(plan_append(&after, &normalized), AppendPlan::Duplicate { .. }),
                    "a second append of the same description is not a duplicate"
                );
            }
            if !created {
                let items_before = found.map_or(0, |c| c.items);
                let items_after = find_checklist(&after).map_or(0, |c| c.items);
                assert_eq!(
                    items_after,
                    items_before + 1,
                    "written did not add exactly one item"
                );
            }
            assert!(line.trim_start_matches(is_ws).starts_with(['-', '*', '+']));
        }
    }
}
