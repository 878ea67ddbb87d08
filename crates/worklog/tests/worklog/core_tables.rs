//! The example tables of §4, §5, §6 and §9 as tests of the pure core (WL-97). The line-by-line
//! classifiers are also tested one line at a time in the crate's unit tests (`core/grammar.rs`).

use shiftwork_worklog::core::{AppendPlan, find_checklist, is_ws, normalize, plan_append};

/// Appends `description` through the core and returns the new text (panics on a duplicate).
fn appended(text: &str, description: &str) -> (bool, String) {
    match plan_append(text, &normalize(description)) {
        AppendPlan::Insert {
            created,
            offset,
            insertion,
            ..
        } => (
            created,
            format!("{}{}{}", &text[..offset], insertion, &text[offset..]),
        ),
        AppendPlan::Duplicate { line } => panic!("unexpected duplicate {line:?} in {text:?}"),
    }
}

/// §0.1: W is exactly 29 code points, `char::is_whitespace` plus U+001C–U+001F; U+200B and U+FEFF
/// are not W.
#[test]
fn w_is_exactly_the_29_code_points() {
    let w: Vec<u32> = (0..=0x10FFFF_u32)
        .filter_map(char::from_u32)
        .filter(|c| is_ws(*c))
        .map(u32::from)
        .collect();
    let mut expected: Vec<u32> = (0x09..=0x0D).chain(0x1C..=0x20).collect();
    expected.extend([0x85, 0xA0, 0x1680]);
    expected.extend(0x2000..=0x200A);
    expected.extend([0x2028, 0x2029, 0x202F, 0x205F, 0x3000]);
    assert_eq!(w, expected);
    assert_eq!(w.len(), 29);
    assert!(!is_ws('\u{200B}') && !is_ws('\u{FEFF}'));
}

/// WL-25: the item-line table, observed through `find_checklist` (a text of that one line has a
/// checklist iff the line is an item line) and the item text through the duplicate rule.
#[test]
fn wl25_item_lines() {
    let items = [
        ("- [ ] a", "a"),
        ("- [x] a", "a"),
        ("* [X] a", "a"),
        ("+ [ ] a", "a"),
        ("     * [ ] a", "a"),
        ("\t\t+ [x] a", "a"),
        ("\u{A0}- [ ] a", "a"),
        ("- [x]a", "a"),
        ("- [x]  \t spaced  out ", "spaced out"),
    ];
    for (content, text) in items {
        let file = format!("{content}\n");
        assert_eq!(find_checklist(&file).map(|c| c.items), Some(1), "{content:?}");
        assert!(
            matches!(plan_append(&file, text), AppendPlan::Duplicate { .. }),
            "{content:?}"
        );
    }
    for empty in ["- [ ]", "- [x]   "] {
        let file = format!("{empty}\n");
        assert_eq!(find_checklist(&file).map(|c| c.items), Some(1), "{empty:?}");
    }
    let not_items = [
        "1. [ ] a",
        "* [] a",
        "- [ x] a",
        "-  [ ] a",
        "-\t[ ] a",
        "-[ ] a",
        "- [/] a",
        "- [-] a",
        "- [>] a",
        "> * [x] a",
    ];
    for content in not_items {
        assert_eq!(find_checklist(&format!("{content}\n")), None, "{content:?}");
    }
}

/// WL-26: generic list lines extend a block at or below the base; other lines at the base end it.
#[test]
fn wl26_generic_list_lines_extend_the_block() {
    for line in ["- a", "-\ta", "12. a", "3) a", "-\u{A0}a"] {
        let text = format!("- [x] a\n{line}\n");
        assert_eq!(find_checklist(&text).unwrap().last_line, 1, "{line:?} extends");
    }
    for line in ["-", "1.", "-a", "a. b", "\u{0661}. a"] {
        let text = format!("- [x] a\n{line}\n");
        assert_eq!(find_checklist(&text).unwrap().last_line, 0, "{line:?} ends");
    }
}

/// WL-27, WL-32 rule 3 (DV-5): a thematic break at or above the base ends the block even when it is
/// written like a list line; deeper, it is a continuation.
#[test]
fn wl27_thematic_breaks() {
    for brk in ["***", "* * *", "- - -", "___", "  -  -  -"] {
        let text = format!("  - [x] a\n{brk}\n- [x] later\n");
        assert_eq!(find_checklist(&text).unwrap().last_line, 0, "{brk:?} ends");
        let deeper = format!("- [x] a\n   {brk}\n");
        assert_eq!(
            find_checklist(&deeper).unwrap().last_line,
            1,
            "{brk:?} deeper extends"
        );
    }
    for not_break in ["- - a", "-  -"] {
        let text = format!("- [x] a\n{not_break}\n");
        assert_eq!(
            find_checklist(&text).unwrap().last_line,
            1,
            "{not_break:?} is a list line"
        );
    }
}

/// WL-28, WL-29 (DV-4): the fence table: what closes a fenced block and what does not.
#[test]
fn wl28_wl29_fences() {
    let cases = [
        ("```", "```", true),
        ("```", "```  \t", true),
        ("```", "`````", true),
        ("```", "  ```", true),
        ("```", "```md", false),
        ("```", "~~~", false),
        ("````", "````", true),
        ("````", "`````", true),
        ("````", "```", false),
        ("~~~ yaml", "~~~", true),
        ("~~~ yaml", "~~~~~~", true),
        ("~~~ yaml", "```", false),
        ("\t~~~", "~~~", true),
    ];
    for (open, close, closes) in cases {
        let text = format!("{open}\n- [ ] fake\n{close}\n- [x] real\n");
        let found = find_checklist(&text).map(|c| c.first_line);
        assert_eq!(found, closes.then_some(3), "{open:?} closed by {close:?}");
    }
    // A backtick run followed by more backticks on the line is not a fence line.
    assert_eq!(find_checklist("```js```\n- [x] a\n").unwrap().first_line, 1);
    // Two backticks are not a fence.
    assert_eq!(find_checklist("``\n- [x] a\n").unwrap().first_line, 1);
    // Inside a block, a line that would open another fence is code.
    assert_eq!(find_checklist("```\n~~~\n```\n- [x] a\n").unwrap().first_line, 3);
}

/// WL-30: front matter is the lines from a first `---` through the first later `---` or `...`;
/// without a closing line, or with leading whitespace, there is none.
#[test]
fn wl30_front_matter() {
    assert_eq!(
        find_checklist("---\n- [ ] yaml\n---\n- [x] a\n")
            .unwrap()
            .first_line,
        3
    );
    assert_eq!(
        find_checklist("--- \t\n- [ ] yaml\n... \n- [x] a\n")
            .unwrap()
            .first_line,
        3
    );
    assert_eq!(
        find_checklist("---\r\n- [ ] yaml\r\n---\r\n").map(|c| c.first_line),
        None
    );
    assert_eq!(
        find_checklist("---\n- [ ] no closing line\n").unwrap().first_line,
        1
    );
    assert_eq!(find_checklist(" ---\n- [ ] a\n---\n").unwrap().first_line, 1);
    // A fence inside front matter opens nothing.
    assert_eq!(find_checklist("---\n```\n---\n- [x] a\n").unwrap().first_line, 3);
    // Only the first line can open it.
    assert_eq!(find_checklist("# T\n---\n- [ ] a\n---\n").unwrap().first_line, 2);
}

/// WL-31 … WL-34: the worked example of §5 (block lines 4–9, 2 items, the append after line 9).
#[test]
fn wl31_to_wl34_worked_example() {
    let text = "# 2026-09-06\n\nIntro paragraph.\n- [ ] first\n  - [x] nested\n    more words\n\n- plain bullet\n1. ordered\n\nClosing paragraph.\n";
    let list = find_checklist(text).unwrap();
    assert_eq!((list.first_line, list.last_line, list.items), (3, 8, 2));
    let (created, after) = appended(text, "done");
    assert!(!created);
    assert!(after.contains("1. ordered\n- [x] done\n\nClosing paragraph.\n"));
}

/// WL-31: only the first list of items is the checklist; WL-34: an item indented by four or more
/// spaces is an item, HTML and block quotes are not containers, inline markup is text.
#[test]
fn wl31_wl34_first_list_only_no_other_constructs() {
    assert_eq!(
        find_checklist("- [x] a\n\ntext\n\n- [x] b\n- [x] c\n")
            .unwrap()
            .items,
        1
    );
    assert_eq!(find_checklist("    - [ ] indented code?\n").unwrap().items, 1);
    assert_eq!(
        find_checklist("<div>\n- [ ] in html\n</div>\n")
            .unwrap()
            .first_line,
        1
    );
    assert_eq!(find_checklist("> - [ ] quoted\n"), None);
    assert!(matches!(
        plan_append("- [x] **bold** `code`\n", "**bold** `code`"),
        AppendPlan::Duplicate { .. }
    ));
    // A setext underline is a thematic break or a paragraph line, never a heading rule.
    assert_eq!(find_checklist("- [x] a\n===\n").unwrap().last_line, 0);
}

/// WL-32: a block's rules in order — blank lines skipped, fence ends, list lines at or below the base
/// extend, deeper lines continue, shallower lines end; blank lines after the block are not in it.
#[test]
fn wl32_block_rules() {
    let cases: [(&str, usize); 8] = [
        ("- [x] a\n\n\n- [x] b\n\n\n", 3),
        ("- [x] a\n  ```\n- [x] b\n", 0),
        ("- [x] a\n  ~~~\n", 0),
        ("  - [x] a\n- [x] b\n", 0),
        ("  - [x] a\n   deeper\n  - b\n  c\n", 2),
        ("- [x] a\n\tcontinued\n", 1),
        ("- [x] a\n# heading\n- [x] b\n", 0),
        ("- [x] a\n\u{2028}text\n", 1),
    ];
    for (text, last) in cases {
        assert_eq!(find_checklist(text).unwrap().last_line, last, "{text:?}");
    }
}

/// WL-33: items at any depth and any box state are counted; list lines without a box are not.
#[test]
fn wl33_items_in_the_block() {
    let text = "- [ ] a\n  * [X] b\n    + [x] c\n  - plain\n  1. ordered\n- [/] custom\n";
    assert_eq!(find_checklist(text).unwrap().items, 3);
}

/// WL-22 (DV-1): the mark is not part of line 1 and stays; U+FEFF elsewhere is an ordinary character.
#[test]
fn wl22_byte_order_mark() {
    assert_eq!(find_checklist("\u{FEFF}- [x] a\n").unwrap().first_line, 0);
    assert_eq!(find_checklist("\u{FEFF}\u{FEFF}- [x] a\n"), None);
    assert_eq!(find_checklist("x\n\u{FEFF}- [x] a\n"), None);
    let (_, after) = appended("\u{FEFF}- [x] a\n", "b");
    assert_eq!(after, "\u{FEFF}- [x] a\n- [x] b\n");
}

/// WL-23 (DV-2): lines break at LF only; CR before LF belongs to the terminator; lone CR, VT, FF,
/// NEL, U+2028, U+2029 and U+001C–U+001E are content.
#[test]
fn wl23_lines_break_at_lf_only() {
    for sep in [
        "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", "\u{1C}", "\u{1D}", "\u{1E}",
    ] {
        let text = format!("intro{sep}- [x] a\n");
        assert_eq!(find_checklist(&text), None, "{sep:?} is not a line break");
        let text = format!("- [x] a{sep}- [x] b\n");
        assert_eq!(find_checklist(&text).unwrap().items, 1, "{sep:?}");
    }
    assert_eq!(find_checklist("a\r\n- [x] b\r\n").unwrap().first_line, 1);
}

/// WL-24 (DV-3): the write inserts one run; trailing whitespace, mixed endings and lone CRs survive.
#[test]
fn wl24_every_existing_byte_stays() {
    let text = "# T  \r\n- [x] a \t\r\n- [ ] b\rc\n\nend\r";
    let (_, after) = appended(text, "new");
    assert_eq!(after, "# T  \r\n- [x] a \t\r\n- [ ] b\rc\n- [x] new\n\nend\r");
}

/// §6, WL-35 … WL-37: the normalization table.
#[test]
fn wl35_to_wl37_normalization() {
    let cases = [
        ("  - [ ] Fixed   the\nbug.  ", "Fixed the bug."),
        ("* [X]  Done", "Done"),
        ("+\t[x]\tDone", "Done"),
        ("-\u{A0}Done", "Done"),
        ("[x]abc", "abc"),
        ("- ", "-"),
        ("-[x] a", "-[x] a"),
        ("3. Shipped", "3. Shipped"),
        ("* [ ] - [x] y", "- [x] y"),
        ("a\u{A0}\u{3000}b", "a b"),
        ("a\u{200B}b", "a\u{200B}b"),
        ("Fixed the bug.", "Fixed the bug."),
        ("ÉCOLE 🎉 *x*", "ÉCOLE 🎉 *x*"),
        ("e\u{301}", "e\u{301}"),
        ("", ""),
        ("   ", ""),
        ("\t\n", ""),
        ("- [ ]", ""),
        ("[x]", ""),
    ];
    for (description, normalized) in cases {
        assert_eq!(normalize(description), normalized, "{description:?}");
    }
    let long = "word ".repeat(100_000);
    assert_eq!(normalize(&long).len(), long.len() - 1, "WL-36: no length limit");
}

/// WL-38, WL-39: the duplicate rule — W runs collapsed, exact code points; only checklist items.
#[test]
fn wl38_wl39_duplicate_rule() {
    let duplicate =
        |text: &str, d: &str| matches!(plan_append(text, &normalize(d)), AppendPlan::Duplicate { .. });
    assert!(duplicate("- [ ] Fixed \t the\u{A0}bug  \n", "Fixed the bug"));
    assert!(!duplicate("- [x] fixed the bug\n", "Fixed the bug"));
    assert!(!duplicate("- [x] Café\n", "Cafe"));
    assert!(!duplicate("- [x] a\n\ntext\n\n- [x] b\n", "b"), "a later list");
    assert!(
        duplicate("- [x] a\n\n- [x] b\n", "b"),
        "a blank line does not end the list"
    );
    assert!(!duplicate("```\n- [x] b\n```\n- [x] a\n", "b"), "a fenced item");
    assert!(!duplicate("---\n- [x] b\n---\n- [x] a\n", "b"), "front matter");
    assert!(!duplicate("- [x] a\n- b\n", "b"), "a list line without a box");
    assert!(!duplicate("- b\n", "b"), "no checklist, never a duplicate");
}

/// WL-44: the new line copies the first item's indent and bullet; the box is always `[x]`; without a
/// checklist it is `- [x] `. (Our decision: a CR in the indent is written as a space.)
#[test]
fn wl44_form_of_the_new_line() {
    let line = |text: &str| match plan_append(text, "new") {
        AppendPlan::Insert { line, .. } | AppendPlan::Duplicate { line } => line,
    };
    assert_eq!(line("\t\u{A0}+ [X] a\n* [ ] b\n"), "\t\u{A0}+ [x] new");
    assert_eq!(line("  * [ ] a\n  - [ ] b\n"), "  * [x] new");
    assert_eq!(line("# no list\n"), "- [x] new");
    assert_eq!(line("\r- [ ] a\n"), " - [x] new");
}

/// WL-45, WL-46, WL-47, WL-48: the ending of what is added, written and created, with the §9 examples.
#[test]
fn wl45_to_wl48_insertion() {
    let cases = [
        (
            "Notes\n- [x] a\n\n---\nfooter\n",
            "b",
            false,
            "Notes\n- [x] a\n- [x] b\n\n---\nfooter\n",
        ),
        ("# T\r\n", "x", true, "# T\r\n\r\n- [x] x\r\n"),
        ("a\n  b", "x", true, "a\n  b\n\n- [x] x"),
        ("a\r\n\t", "x", true, "a\r\n\t\r\n- [x] x"),
        // The anchor has no terminator: E from the line before, LF when there is none.
        ("x\r\n- [x] a", "b", false, "x\r\n- [x] a\r\n- [x] b"),
        ("- [x] a", "b", false, "- [x] a\n- [x] b"),
        (
            "---\r\n---\r\n- [x] a",
            "b",
            false,
            "---\r\n---\r\n- [x] a\r\n- [x] b",
        ),
        // Mixed: the anchor's own terminator wins.
        (
            "- [x] a\r\n- [x] b\n\r\n",
            "c",
            false,
            "- [x] a\r\n- [x] b\n- [x] c\n\r\n",
        ),
        // created: a blank last line without terminator gets no extra blank line.
        ("a\n \u{A0}", "x", true, "a\n \u{A0}\n- [x] x"),
        // created: the file ends inside an unclosed fence; the line lands inside it.
        ("```\ncode", "x", true, "```\ncode\n\n- [x] x"),
        ("\u{FEFF}", "x", true, "\u{FEFF}- [x] x"),
        // Our decision: a lone CR ending an unterminated last line stays a lone CR (WL-24), so the
        // break after it is CRLF; the list line "1.\r" stays a list line and the block holds the item.
        ("- [ ] a\n1.\r", "b", false, "- [ ] a\n1.\r\r\n- [x] b"),
        ("# T\r", "x", true, "# T\r\r\n\n- [x] x"),
    ];
    for (before, description, created, after) in cases {
        assert_eq!(
            appended(before, description),
            (created, after.to_owned()),
            "{before:?}"
        );
    }
}
