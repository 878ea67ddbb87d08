//! Property tests (WL-98) over texts biased towards the characters the grammar cares about, and over
//! arbitrary descriptions. The properties themselves live in `invariants.rs`, shared with the fuzz
//! target `worklog_core` (WL-99).

use proptest::prelude::*;
use shiftwork_worklog::core::{checklist_items, find_checklist, is_ws, normalize};

use crate::invariants::check_append;

/// Pieces of Markdown-ish text, weighted towards list markers, boxes, fences, front matter, blanks,
/// line endings and the byte order mark.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "-", "*", "+", "[", "]", "x", "X", " ", "  ", "    ", "\t", "\r", "\n", "\n", "\n", "\r\n",
            "```", "~~~", "````", "---", "...", "\u{FEFF}", "1.", "2)", "_", "`", "~", "#", "a", "b",
            "- [ ] ", "- [x] ", "* [X] ", "+ [ ] ", "- ", "\u{A0}", "\u{2028}", "\u{85}", "\u{1C}",
            "\u{0B}", "é", "🎉", "\u{200B}",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..60).prop_map(|v| v.concat())
}

fn description() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(piece(), 0..8).prop_map(|v| v.concat()),
        1 => any::<String>(),
    ]
}

/// 4000 cases per property by default; `PROPTEST_CASES` asks for an extended run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// WL-98: the core never panics; an insertion removes back to the input; it adds only the line
    /// breaks of §9; the new line holds no LF or CR; a second append is a duplicate unless the body
    /// ends inside an unclosed fence; after `written` the item count grew by one. And the byte scanner
    /// agrees with the reference model of §5.
    #[test]
    fn wl98_append_properties(text in text(), description in description()) {
        check_append(&text, &description);
    }

    /// WL-98 on texts built from two lists: appending to the result of an append keeps every property.
    #[test]
    fn wl98_repeated_appends(text in text(), descriptions in prop::collection::vec(description(), 1..5)) {
        let mut current = text;
        for d in descriptions {
            check_append(&current, &d);
            let normalized = normalize(&d);
            if normalized.is_empty() {
                continue;
            }
            if let shiftwork_worklog::core::AppendPlan::Insert { offset, insertion, .. } =
                shiftwork_worklog::core::plan_append(&current, &normalized)
            {
                current.insert_str(offset, &insertion);
            }
        }
    }

    /// WL-35 … WL-37: the normal form has no W but single inner spaces, and normalizing never panics.
    #[test]
    fn wl35_normal_form(description in description()) {
        let n = normalize(&description);
        prop_assert!(!n.starts_with(is_ws) && !n.ends_with(is_ws));
        prop_assert!(!n.contains("  "));
        prop_assert!(n.chars().all(|c| c == ' ' || !is_ws(c)));
    }

    /// Issue 38: the items a person's view lists are the items the checklist counts, each trimmed of
    /// W, the first at depth 0; after an append the last item is the appended line.
    #[test]
    fn issue38_the_listed_items_are_the_counted_items(text in text(), description in description()) {
        let items = checklist_items(&text);
        prop_assert_eq!(items.len(), find_checklist(&text).map_or(0, |c| c.items));
        prop_assert!(items.iter().all(|i| !i.text.starts_with(is_ws) && !i.text.ends_with(is_ws)));
        prop_assert!(items.first().is_none_or(|i| i.depth == 0));
        let normalized = normalize(&description);
        if let (false, shiftwork_worklog::core::AppendPlan::Insert { offset, insertion, .. }) =
            (normalized.is_empty(), shiftwork_worklog::core::plan_append(&text, &normalized))
        {
            let mut after = text.clone();
            after.insert_str(offset, &insertion);
            let last = checklist_items(&after).pop();
            prop_assume!(last.as_ref().is_some_and(|l| l.depth == 0));
            let last = last.unwrap();
            prop_assert!(last.checked);
            prop_assert_eq!(last.text, normalized);
        }
    }

    /// WL-22: one mark at offset 0 is not part of the first line: with or without it, the same
    /// checklist is found at the same line indexes.
    #[test]
    fn wl22_mark_is_not_a_line(text in text()) {
        let body = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
        prop_assume!(!body.starts_with('\u{FEFF}'));
        let with_mark = format!("\u{FEFF}{body}");
        prop_assert_eq!(find_checklist(&with_mark), find_checklist(body));
    }
}
