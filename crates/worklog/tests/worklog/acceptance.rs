//! The acceptance scenarios of §21, as tables through the pure core and through the service on
//! `MemFs` (WL-97). The texts are the specification's, transcribed literally.

use std::path::Path;

use shiftwork_worklog::NotWritten;
use shiftwork_worklog::core::{AppendPlan, normalize, plan_append};
use shiftwork_worklog::{
    AppendResult, AppendStatus, CheckResult, CheckStatus, Config, Worklog, WorklogError,
};

use crate::support::{
    DIR, M_NO_DIR, M_NO_FILE, M_NO_MATCH, Msg, NAME, at, file_path, has_lock_file, log, log_with, memfs_with,
    snapshot, temp_files,
};
use AppendStatus::{Created, Written};

const DRY_RUN: AppendStatus = AppendStatus::NotWritten(NotWritten::DryRun);
const DUPLICATE: AppendStatus = AppendStatus::NotWritten(NotWritten::Duplicate);
const EMPTY: AppendStatus = AppendStatus::NotWritten(NotWritten::Empty);

/// One row of the §21.1–§21.5 tables. `after: None` means "unchanged".
struct Row {
    id: &'static str,
    before: &'static str,
    description: &'static str,
    dry_run: bool,
    status: AppendStatus,
    line: Option<&'static str>,
    message: Msg,
    after: Option<&'static str>,
}

#[allow(clippy::too_many_arguments)]
fn row(
    id: &'static str,
    before: &'static str,
    description: &'static str,
    dry_run: bool,
    status: AppendStatus,
    line: Option<&'static str>,
    message: Msg,
    after: Option<&'static str>,
) -> Row {
    Row {
        id,
        before,
        description,
        dry_run,
        status,
        line,
        message,
        after,
    }
}

/// §21.1 – §21.5, every row (AS-28 once per description). They cover the message table (WL-72), the
/// duplicate outcome that writes nothing and reports the line (WL-40), and the insertions of WL-46 and
/// WL-47.
fn rows() -> Vec<Row> {
    vec![
        row(
            "AS-01",
            "# 2026-09-06\n\n- [x] a\n- [ ] b\n\nNotes here\n",
            "Fixed the bug",
            false,
            Written,
            Some("- [x] Fixed the bug"),
            Msg::Written,
            Some("# 2026-09-06\n\n- [x] a\n- [ ] b\n- [x] Fixed the bug\n\nNotes here\n"),
        ), // after the last item, before the blank line
        row(
            "AS-02",
            "## Done\n- [x] a\n\n## Todo\n- [ ] t\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("## Done\n- [x] a\n- [x] c\n\n## Todo\n- [ ] t\n"),
        ), // two checklists: the first wins
        row(
            "AS-03",
            "- plain\n- [ ] x\n- plain2\n\ntext\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- plain\n- [ ] x\n- plain2\n- [x] c\n\ntext\n"),
        ), // plain bullets belong to the block
        row(
            "AS-04",
            "- [ ] a\n  - [x] a1\n  - [ ] a2\n- [ ] b\n    continuation\n\nPara\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [ ] a\n  - [x] a1\n  - [ ] a2\n- [ ] b\n    continuation\n- [x] c\n\nPara\n"),
        ), // nested items, continuation line
        row(
            "AS-05",
            "- a\n  - [ ] b\n- [ ] c\n",
            "new",
            false,
            Written,
            Some("  - [x] new"),
            Msg::Written,
            Some("- a\n  - [ ] b\n  - [x] new\n- [ ] c\n"),
        ), // nested first item: indent copied; shallower line ends the block
        row(
            "AS-06",
            "Intro\n\n  * [X] a\n  * [ ] b\n",
            "c",
            false,
            Written,
            Some("  * [x] c"),
            Msg::Written,
            Some("Intro\n\n  * [X] a\n  * [ ] b\n  * [x] c\n"),
        ), // bullet and indent copied; box always `[x]`
        row(
            "AS-07a",
            "- [x] a\n\n- [x] b\n\ntext\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [x] a\n\n- [x] b\n- [x] c\n\ntext\n"),
        ), // blank line inside the block
        row(
            "AS-07b",
            "- [x] a\n## Next\n",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("- [x] a\n- [x] b\n## Next\n"),
        ), // heading right after the list
        row(
            "AS-07c",
            "Intro text\n- [ ] a\nmore\n",
            "new",
            false,
            Written,
            Some("- [x] new"),
            Msg::Written,
            Some("Intro text\n- [ ] a\n- [x] new\nmore\n"),
        ), // unindented line right after an item ends the block
        row(
            "AS-08",
            "- [ ]\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [ ]\n- [x] c\n"),
        ), // an item with no text is an item
        row(
            "AS-09a",
            "- [x] a",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("- [x] a\n- [x] b"),
        ), // no final line break
        row(
            "AS-09b",
            "# T\r\n- [x] a",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("# T\r\n- [x] a\r\n- [x] b"),
        ), // no final line break, CRLF
        row(
            "AS-10",
            "# T\r\n\r\n- [x] a\r\n\r\nend\r\n",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("# T\r\n\r\n- [x] a\r\n- [x] b\r\n\r\nend\r\n"),
        ), // CRLF
        row(
            "AS-11",
            "# T\r\n- [x] a\nend\n",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("# T\r\n- [x] a\n- [x] b\nend\n"),
        ), // mixed endings: copy the line followed
        row(
            "AS-12a",
            "- [x] a\rb\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [x] a\rb\n- [x] c\n"),
        ), // lone CR is text
        row(
            "AS-12b",
            "text\u{2028}more\n- [x] a\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("text\u{2028}more\n- [x] a\n- [x] c\n"),
        ), // U+2028 is text
        row(
            "AS-13a",
            "# 2026-09-06\n",
            "Fixed the bug",
            false,
            Created,
            Some("- [x] Fixed the bug"),
            Msg::Created,
            Some("# 2026-09-06\n\n- [x] Fixed the bug\n"),
        ), // blank line inserted before the new list
        row(
            "AS-13b",
            "# T\n\n",
            "x",
            false,
            Created,
            Some("- [x] x"),
            Msg::Created,
            Some("# T\n\n- [x] x\n"),
        ), // file already ends with a blank line
        row(
            "AS-14a",
            "",
            "Fixed the bug",
            false,
            Created,
            Some("- [x] Fixed the bug"),
            Msg::Created,
            Some("- [x] Fixed the bug"),
        ), // empty file
        row(
            "AS-14b",
            "\u{FEFF}",
            "x",
            false,
            Created,
            Some("- [x] x"),
            Msg::Created,
            Some("\u{FEFF}- [x] x"),
        ), // file holding only a BOM
        row(
            "AS-15a",
            "# T",
            "x",
            false,
            Created,
            Some("- [x] x"),
            Msg::Created,
            Some("# T\n\n- [x] x"),
        ), // no final line break
        row(
            "AS-15b",
            "# T\r\n\r\nText",
            "x",
            false,
            Created,
            Some("- [x] x"),
            Msg::Created,
            Some("# T\r\n\r\nText\r\n\r\n- [x] x"),
        ), // no final line break, CRLF
        row(
            "AS-16a",
            "1. [ ] a\n2. [x] b\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("1. [ ] a\n2. [x] b\n\n- [x] c\n"),
        ), // ordered task lines are not items
        row(
            "AS-16b",
            "- [/] a\n- [-] b\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("- [/] a\n- [-] b\n\n- [x] c\n"),
        ), // custom box states are not items
        row(
            "AS-17",
            "```\n- [ ] fake\n```\n\n- [x] real\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("```\n- [ ] fake\n```\n\n- [x] real\n- [x] c\n"),
        ), // fenced items are skipped
        row(
            "AS-18",
            "```\n- [ ] fake\n```\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("```\n- [ ] fake\n```\n\n- [x] c\n"),
        ), // only fenced items
        row(
            "AS-19",
            "```\n- [ ] fake\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("```\n- [ ] fake\n\n- [x] c\n"),
        ), // unclosed fence runs to the end
        row(
            "AS-20a",
            "````\n- [ ] fake\n```\n- [ ] real?\n````\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("````\n- [ ] fake\n```\n- [ ] real?\n````\n\n- [x] c\n"),
        ), // a shorter run does not close
        row(
            "AS-20b",
            "```md\n- [ ] fake\n```md\n- [ ] after\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("```md\n- [ ] fake\n```md\n- [ ] after\n\n- [x] c\n"),
        ), // a run with an info string does not close
        row(
            "AS-21",
            "- [x] a\n  ```\n  code\n  ```\n- [x] b\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [x] a\n- [x] c\n  ```\n  code\n  ```\n- [x] b\n"),
        ), // a fence line ends the block, even inside an item
        row(
            "AS-22",
            "---\ntasks:\n- [ ] yaml\n---\n# T\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("---\ntasks:\n- [ ] yaml\n---\n# T\n\n- [x] c\n"),
        ), // front matter is skipped
        row(
            "AS-23",
            "- [x] a\n* * *\n",
            "c",
            false,
            Written,
            Some("- [x] c"),
            Msg::Written,
            Some("- [x] a\n- [x] c\n* * *\n"),
        ), // thematic break ends the block
        row(
            "AS-24",
            "\u{FEFF}- [x] a\n- [x] b\n",
            "a",
            false,
            DUPLICATE,
            Some("- [x] a"),
            Msg::Duplicate,
            None,
        ), // BOM: item on line 1 is seen
        row(
            "AS-25",
            "\u{FEFF}---\n- [ ] yaml\n---\n# T\n",
            "c",
            false,
            Created,
            Some("- [x] c"),
            Msg::Created,
            Some("\u{FEFF}---\n- [ ] yaml\n---\n# T\n\n- [x] c\n"),
        ), // BOM: front matter recognised, BOM kept
        row(
            "AS-26",
            "- [x] a\n",
            "  - [ ] Fixed   the\nbug.  ",
            false,
            Written,
            Some("- [x] Fixed the bug."),
            Msg::Written,
            Some("- [x] a\n- [x] Fixed the bug.\n"),
        ), // whitespace collapsed, marker and box stripped
        row(
            "AS-27",
            "- [x] a\n",
            "- ",
            false,
            Written,
            Some("- [x] -"),
            Msg::Written,
            Some("- [x] a\n- [x] -\n"),
        ), // bullet without following space stays
        row("AS-28", "- [x] a\n", "   ", false, EMPTY, None, Msg::Empty, None), // blank descriptions
        row(
            "AS-28",
            "- [x] a\n",
            "- [ ]",
            false,
            EMPTY,
            None,
            Msg::Empty,
            None,
        ), // blank descriptions
        row("AS-28", "- [x] a\n", "[x]", false, EMPTY, None, Msg::Empty, None), // blank descriptions
        row("AS-28", "- [x] a\n", "\t\n", false, EMPTY, None, Msg::Empty, None), // blank descriptions
        row("AS-28", "- [x] a\n", "", false, EMPTY, None, Msg::Empty, None),    // blank descriptions
        row(
            "AS-29a",
            "- [ ] Fixed the bug\n",
            "Fixed the bug",
            false,
            DUPLICATE,
            Some("- [x] Fixed the bug"),
            Msg::Duplicate,
            None,
        ), // unchecked item
        row(
            "AS-29b",
            "- [X] Done it\n",
            "Done it",
            false,
            DUPLICATE,
            Some("- [x] Done it"),
            Msg::Duplicate,
            None,
        ), // `[X]` item
        row(
            "AS-29c",
            "- [x] a\n  - [ ] b\n",
            "b",
            false,
            DUPLICATE,
            Some("- [x] b"),
            Msg::Duplicate,
            None,
        ), // nested item
        row(
            "AS-30a",
            "- [x] Fixed the bug.\n",
            "Fixed the bug",
            false,
            Written,
            Some("- [x] Fixed the bug"),
            Msg::Written,
            Some("- [x] Fixed the bug.\n- [x] Fixed the bug\n"),
        ), // punctuation matters
        row(
            "AS-30b",
            "- [x] a\n\ntext\n\n- [x] b\n",
            "b",
            false,
            Written,
            Some("- [x] b"),
            Msg::Written,
            Some("- [x] a\n- [x] b\n\ntext\n\n- [x] b\n"),
        ), // a later list does not count
        row(
            "AS-31",
            "- [x] a\n",
            "a",
            true,
            DUPLICATE,
            Some("- [x] a"),
            Msg::Duplicate,
            None,
        ), // duplicate beats dry_run
        row(
            "AS-32",
            "- [x] a\n",
            "b",
            true,
            DRY_RUN,
            Some("- [x] b"),
            Msg::Dry,
            None,
        ), // preview only
    ]
}

/// Through the pure core: `normalize` and `plan_append`, the splice applied by hand (WL-88, WL-97).
fn check_core(r: &Row) {
    let normalized = normalize(r.description);
    if r.status == EMPTY {
        assert!(
            normalized.is_empty(),
            "{}: {:?} normalized to {normalized:?}",
            r.id,
            r.description
        );
        return;
    }
    match plan_append(r.before, &normalized) {
        AppendPlan::Duplicate { line } => {
            assert_eq!(r.status, DUPLICATE, "{}", r.id);
            assert_eq!(Some(line.as_str()), r.line, "{}", r.id);
        }
        AppendPlan::Insert {
            created,
            line,
            offset,
            insertion,
        } => {
            let status = match (r.dry_run, created) {
                (true, _) => DRY_RUN,
                (false, true) => Created,
                (false, false) => Written,
            };
            assert_eq!(status, r.status, "{}", r.id);
            assert_eq!(Some(line.as_str()), r.line, "{}", r.id);
            if let Some(after) = r.after {
                let spliced = format!("{}{}{}", &r.before[..offset], insertion, &r.before[offset..]);
                assert_eq!(spliced, after, "{}", r.id);
            }
        }
    }
}

/// Through the service on `MemFs`: the whole result, the file's bytes, and nothing else touched.
fn check_service(r: &Row) {
    let fs = memfs_with(r.before.as_bytes());
    let before = snapshot(&fs);
    let result = log(&fs).append(r.description, r.dry_run).unwrap();
    let reached = r.status != EMPTY;
    assert_eq!(
        result,
        AppendResult {
            status: r.status,
            file: reached.then(|| NAME.to_owned()),
            line: r.line.map(str::to_owned),
            message: r.message.text().to_owned(),
        },
        "{}",
        r.id
    );
    match r.after {
        Some(after) => assert_eq!(fs.file(file_path()).unwrap(), after.as_bytes(), "{}", r.id),
        None => {
            // "Unchanged": bytes and modification time; and nothing else in the directory changed
            // either, apart from the lock file that a non-dry-run append may create (WL-42).
            let mut now = snapshot(&fs);
            now.retain(|e| !e.path.ends_with(shiftwork_worklog::LOCK_FILE_NAME));
            assert_eq!(now, before, "{}", r.id);
        }
    }
    assert!(temp_files(&fs).is_empty(), "{}: a temporary file remains", r.id);
    if r.dry_run || r.status == EMPTY {
        assert!(!has_lock_file(&fs), "{}: the lock file was touched (WL-62)", r.id);
    }
}

#[test]
fn as01_to_as32_through_the_core() {
    for r in rows() {
        check_core(&r);
    }
}

#[test]
fn as01_to_as32_through_the_service_on_memfs() {
    for r in rows() {
        check_service(&r);
    }
}

/// AS-28: `empty` also when the log directory is unset (WL-41 step 1 before step 2).
#[test]
fn as28_empty_wins_over_no_dir() {
    let log = Worklog::new(Config::builder().build(), shiftwork_seams::MemFs::new());
    for d in ["   ", "- [ ]", "[x]", "\t\n", ""] {
        assert_eq!(log.append(d, false).unwrap().status, EMPTY);
    }
}

fn no_dir_both_tools(log: &Worklog<shiftwork_seams::MemFs>) {
    assert_eq!(
        log.append("x", false).unwrap(),
        AppendResult {
            status: AppendStatus::NotWritten(NotWritten::NoDir),
            file: None,
            line: None,
            message: M_NO_DIR.to_owned()
        }
    );
    assert_eq!(
        log.check().unwrap(),
        CheckResult {
            status: CheckStatus::NoDir,
            file: None,
            items: None,
            message: M_NO_DIR.to_owned()
        }
    );
}

/// AS-33 (a), (c), and a regular file or a dangling link configured as the directory (WL-14). Nothing
/// is created anywhere. (b) and (d), the blank values, are in `config.rs` and the adapter's tests.
#[test]
fn as33_no_directory() {
    let fs = memfs_with(b"- [x] a\n");
    fs.symlink("/nowhere", "/dangling");
    let before = snapshot(&fs);
    for dir in [
        None,
        Some("/missing"),
        Some("/log/2026-09-06.md"),
        Some("/dangling"),
    ] {
        no_dir_both_tools(&Worklog::new(
            dir.map_or(Config::builder(), |d| Config::builder().dir(d))
                .build(),
            fs.clone(),
        ));
    }
    assert_eq!(snapshot(&fs), before);
}

fn no_file_both_tools(log: &Worklog<shiftwork_seams::MemFs>, message: &str) {
    let append = log.append("x", false).unwrap();
    assert_eq!(
        (append.status, append.file, append.line),
        (AppendStatus::NotWritten(NotWritten::NoFile), None, None)
    );
    assert_eq!(append.message, message);
    let check = log.check().unwrap();
    assert_eq!(
        (check.status, check.file, check.items),
        (CheckStatus::NoFile, None, None)
    );
    assert_eq!(check.message, message);
}

/// AS-34, WL-19, WL-4 (a missing prerequisite is reported, nothing is created): (a) an empty directory; (b) only a link to a subdirectory, the subdirectory and a dangling
/// link; (c) a pattern that matches nothing. Nothing is written, not even the lock file (WL-62).
#[test]
fn as34_no_file() {
    let fs = shiftwork_seams::MemFs::new();
    fs.make_dirs(DIR);
    no_file_both_tools(&log(&fs), M_NO_FILE);

    fs.make_dirs("/log/sub");
    fs.symlink("sub", "/log/to-sub");
    fs.symlink("missing.md", "/log/gone.md");
    let before = snapshot(&fs);
    no_file_both_tools(&log(&fs), M_NO_FILE);
    assert_eq!(snapshot(&fs), before);

    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/notes.txt", b"hi\n");
    no_file_both_tools(&log_with(&fs, Some(r"\.md$")), M_NO_MATCH);
    assert!(!has_lock_file(&fs));
}

/// AS-35: the newest candidate, with and without a pattern (WL-17, WL-11).
#[test]
fn as35_newest_file_and_pattern() {
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/2026-09-06.md", b"- [x] old\n");
    fs.write_file("/log/2026-09-07.md", b"- [x] new\n");
    fs.write_file("/log/notes.txt", b"hi\n");
    fs.set_mtime("/log/2026-09-06.md", at(0));
    fs.set_mtime("/log/2026-09-07.md", at(100));
    fs.set_mtime("/log/notes.txt", at(200));
    assert_eq!(
        log(&fs).check().unwrap(),
        CheckResult {
            status: CheckStatus::NoChecklist,
            file: Some("notes.txt".into()),
            items: None,
            message: "\"notes.txt\" has no checklist yet; the next append will start one".into()
        }
    );
    assert_eq!(
        log_with(&fs, Some(r"^\d{4}-\d{2}-\d{2}\.md$")).check().unwrap(),
        CheckResult {
            status: CheckStatus::Ok,
            file: Some("2026-09-07.md".into()),
            items: Some(1),
            message: "\"2026-09-07.md\" has a checklist with 1 items".into()
        }
    );
}

/// AS-36 (a) a newer editor backup wins without a pattern; (b) a tie on the same nanosecond goes to
/// the greater name whatever the creation order (WL-17, WL-20).
#[test]
fn as36_ties_and_backups() {
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/2026-09-06.md", b"- [x] a\n");
    fs.write_file("/log/2026-09-06.md~", b"- [x] a\n");
    fs.set_mtime("/log/2026-09-06.md", at(0));
    fs.set_mtime("/log/2026-09-06.md~", at(100));
    assert_eq!(log(&fs).check().unwrap().file.as_deref(), Some("2026-09-06.md~"));

    for order in [["a.md", "b.md"], ["b.md", "a.md"]] {
        let fs = shiftwork_seams::MemFs::new();
        for name in order {
            fs.write_file(Path::new(DIR).join(name), b"- [x] a\n");
        }
        let same = at(50) + std::time::Duration::from_nanos(123_456_789);
        fs.set_mtime("/log/a.md", same);
        fs.set_mtime("/log/b.md", same);
        assert_eq!(
            log(&fs).check().unwrap().file.as_deref(),
            Some("b.md"),
            "{order:?}"
        );
        assert_eq!(log(&fs).append("z", false).unwrap().file.as_deref(), Some("b.md"));
        assert_eq!(fs.file("/log/a.md").unwrap(), b"- [x] a\n");
    }
}

/// AS-37: counting (WL-33, WL-49 step 7, the M-ok message with "1 items").
#[test]
fn as37_counting() {
    let cases: [(&str, u64); 3] = [
        (
            "# T\n\n- [x] a\n- [ ] b\n  - [ ] nested\n- plain\n\n- [x] other list\n",
            4,
        ),
        ("- [x] a\n", 1),
        ("\u{FEFF}- [x] a\n- [x] b\n", 2),
    ];
    for (text, items) in cases {
        let fs = memfs_with(text.as_bytes());
        assert_eq!(
            log(&fs).check().unwrap(),
            CheckResult {
                status: CheckStatus::Ok,
                file: Some(NAME.into()),
                items: Some(items),
                message: format!("\"2026-09-06.md\" has a checklist with {items} items")
            }
        );
    }
}

/// AS-38: `no_checklist` touches nothing: bytes, modification time, no lock, no temporary file (WL-50).
#[test]
fn as38_no_checklist_nothing_touched() {
    let fs = memfs_with(b"# T\n");
    let before = snapshot(&fs);
    assert_eq!(
        log(&fs).check().unwrap(),
        CheckResult {
            status: CheckStatus::NoChecklist,
            file: Some(NAME.into()),
            items: None,
            message: "\"2026-09-06.md\" has no checklist yet; the next append will start one".into()
        }
    );
    assert_eq!(snapshot(&fs), before);
}

/// AS-39: a file that is not UTF-8 fails both tools, even with the bad byte after the checklist, and
/// is left untouched (WL-21) — UTF-16 and UTF-32 with or without a mark included (our decision: a NUL
/// byte makes a file "not UTF-8", which is what catches them without a mark).
#[test]
fn as39_not_utf8() {
    let utf16_without_mark: Vec<u8> = "- [x] a\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let utf32_without_mark: Vec<u8> = "- [x] a\n"
        .chars()
        .flat_map(|c| u32::from(c).to_be_bytes())
        .collect();
    let cases: [&[u8]; 5] = [
        b"- [x] caf\xE9\n",
        b"- [x] a\n\ntext \xFF\n",
        b"\xFF\xFE-\0 \0[\0x\0]\0",
        &utf16_without_mark,
        &utf32_without_mark,
    ];
    for bytes in cases {
        let fs = memfs_with(bytes);
        let before = snapshot(&fs);
        let expected = WorklogError::NotUtf8 { file: NAME.into() };
        assert_eq!(log(&fs).check().unwrap_err(), expected);
        assert_eq!(log(&fs).append("x", false).unwrap_err(), expected);
        assert_eq!(log(&fs).append("x", true).unwrap_err(), expected);
        assert_eq!(expected.to_string(), "\"2026-09-06.md\" is not valid UTF-8");
        let mut now = snapshot(&fs);
        now.retain(|e| !e.path.ends_with(shiftwork_worklog::LOCK_FILE_NAME));
        assert_eq!(now, before);
    }
}

/// AS-40: a failure at each write step leaves the file as it was, removes the temporary file and
/// reports `cannot write "a.md": Permission denied`; a failed directory flush after the rename does not
/// fail the call (WL-54, WL-55).
#[test]
fn as40_failed_write() {
    use shiftwork_seams::Op;
    let steps = [
        ("a) create", Op::Create),
        ("b) write", Op::Write),
        ("c) owner", Op::SetOwner),
        ("d) flush", Op::Fsync),
        ("e) rename", Op::Rename),
    ];
    for (what, op) in steps {
        let fs = shiftwork_seams::MemFs::new();
        fs.write_file("/log/a.md", b"- [x] a\n");
        fs.set_owner("/log/a.md", 1234, 5678); // a user other than the writer (uid 0 in MemFs)
        let before = fs.file("/log/a.md");
        fs.fail_nth(op, 1, libc::EACCES);
        let err = log(&fs).append("b", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot write \"a.md\": Permission denied",
            "{what}"
        );
        assert_eq!(fs.file("/log/a.md"), before, "{what}");
        assert!(temp_files(&fs).is_empty(), "{what}");
    }
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/a.md", b"- [x] a\n");
    fs.fail_nth(Op::SyncDir, 1, libc::EACCES);
    assert_eq!(
        log(&fs).append("b", false).unwrap().status,
        Written,
        "f) directory flush"
    );
    assert_eq!(fs.file("/log/a.md").unwrap(), b"- [x] a\n- [x] b\n");
    assert_eq!(fs.count(Op::SyncDir), 1);
}

/// AS-41 (a) a failed read, (b) a failed listing, (c) a lock that is not granted in time; `check` and
/// a dry run still work while the lock is held, as readers need no lock (WL-68, WL-15, WL-61, WL-62,
/// WL-64).
#[test]
fn as41_failed_read_listing_lock() {
    use shiftwork_seams::Op;
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/a.md", b"- [x] a\n");
    fs.fail_path(Op::Read, "/log/a.md", libc::EACCES);
    let read = "cannot read \"a.md\": Permission denied";
    assert_eq!(log(&fs).check().unwrap_err().to_string(), read);
    assert_eq!(log(&fs).append("x", false).unwrap_err().to_string(), read);
    assert_eq!(log(&fs).append("x", true).unwrap_err().to_string(), read);

    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/a.md", b"- [x] a\n");
    fs.fail_path(Op::List, DIR, libc::EACCES);
    let list = "cannot list the worklog directory: Permission denied";
    assert_eq!(log(&fs).check().unwrap_err().to_string(), list);
    assert_eq!(log(&fs).append("x", false).unwrap_err().to_string(), list);
    assert!(
        !has_lock_file(&fs),
        "WL-62: a listing failure never touches the lock"
    );

    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/a.md", b"- [x] a\n");
    fs.lock_times_out(Path::new(DIR).join(shiftwork_worklog::LOCK_FILE_NAME));
    let err = log(&fs).append("x", false).unwrap_err();
    assert_eq!(err, WorklogError::LockTimeout { file: "a.md".into() });
    assert_eq!(
        err.to_string(),
        "cannot write \"a.md\": timed out waiting for another append to finish"
    );
    assert_eq!(fs.file("/log/a.md").unwrap(), b"- [x] a\n");
    assert_eq!(log(&fs).check().unwrap().status, CheckStatus::Ok);
    assert_eq!(log(&fs).append("x", true).unwrap().status, DRY_RUN);
}

/// AS-42 on `MemFs`: (a) mode 0644 and owner 1234:5678 kept; (b) a symbolic link into a subdirectory
/// is written through and stays a link, and no directory holds a temporary file (WL-52, WL-54).
#[test]
fn as42_identity_kept() {
    let fs = memfs_with(b"- [x] a\n");
    fs.set_mode(file_path(), 0o644);
    fs.set_owner(file_path(), 1234, 5678);
    assert_eq!(log(&fs).append("b", false).unwrap().status, Written);
    let meta = shiftwork_seams::Fs::metadata(&fs, &file_path()).unwrap();
    assert_eq!((meta.mode, meta.uid, meta.gid), (0o644, 1234, 5678));
    assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\n- [x] b\n");

    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/archive/2026-09-06.md", b"- [x] a\n");
    fs.symlink("archive/2026-09-06.md", "/log/today.md");
    fs.set_mtime("/log/archive/2026-09-06.md", at(10));
    let result = log(&fs).append("b", false).unwrap();
    assert_eq!(result.status, Written);
    assert_eq!(result.file.as_deref(), Some("today.md"));
    assert_eq!(
        result.message,
        "one item was appended to the checklist in \"today.md\""
    );
    assert_eq!(
        shiftwork_seams::Fs::read_link(&fs, Path::new("/log/today.md")).unwrap(),
        Path::new("archive/2026-09-06.md")
    );
    assert_eq!(
        fs.file("/log/archive/2026-09-06.md").unwrap(),
        b"- [x] a\n- [x] b\n"
    );
    assert!(temp_files(&fs).is_empty());
}

/// AS-45 (a) an invalid pattern fails both tools, but an unset directory still answers `no_dir`
/// first; (b) a blank pattern is unset, so the no-pattern message applies (WL-8, WL-12, DV-17, DV-18).
#[test]
fn as45_pattern_configuration() {
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/log/a.md", b"- [x] a\n");
    let log = log_with(&fs, Some("("));
    assert_eq!(log.append("x", false).unwrap_err(), WorklogError::Pattern);
    assert_eq!(log.check().unwrap_err(), WorklogError::Pattern);
    assert_eq!(
        WorklogError::Pattern.to_string(),
        "the configured file pattern is not a valid regular expression"
    );
    no_dir_both_tools(&Worklog::new(Config::builder().pattern("(").build(), fs.clone()));
    assert!(!has_lock_file(&fs));

    let fs = shiftwork_seams::MemFs::new();
    fs.make_dirs(DIR);
    no_file_both_tools(&log_with(&fs, Some(" ")), M_NO_FILE);
}
