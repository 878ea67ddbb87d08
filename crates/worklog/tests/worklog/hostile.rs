//! Hostile input (issues 12 and 16): descriptions with control characters or of any size, files with
//! a stray NUL, files too large to read, special files swapped in after the listing, and names that
//! hold control characters. Every refusal writes nothing and names what was wrong.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use shiftwork_seams::{DirEntry, FileWriter, Fs, LockGuard, MemFs, Metadata, OsFs};
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::core::MAX_DESCRIPTION_BYTES;
use shiftwork_worklog::{
    AppendStatus, CheckStatus, Config, LOCK_FILE_NAME, MAX_LOG_BYTES, Worklog, WorklogError,
};

use crate::support::{DIR, NAME, file_path, has_lock_file, log, memfs_with, snapshot};

/// Checks that `description` is refused with `expected` by both kinds of append, before anything is
/// looked at: the filesystem is unchanged, no lock file appears, and an unset directory gives the same
/// refusal (it comes before `no_dir`).
fn check_refused(description: &str, expected: &WorklogError) {
    let fs = memfs_with(b"- [x] a\n");
    let before = snapshot(&fs);
    for dry_run in [false, true] {
        assert_eq!(&log(&fs).append(description, dry_run).unwrap_err(), expected);
    }
    assert_eq!(snapshot(&fs), before, "nothing written");
    assert!(!has_lock_file(&fs), "the lock is never taken");
    let unset = Worklog::new(Config::default(), MemFs::new());
    assert_eq!(&unset.append(description, false).unwrap_err(), expected);
}

/// Issue 12 item 5 (class: a control character in a description): NUL, BEL, BS, ESC, DEL and the C1
/// controls are refused, naming the character and its position in characters; nothing is written.
/// The control characters that are whitespace (TAB, LF, VT, FF, CR, U+001C–U+001F, NEL) are still
/// normalized into spaces (WL-35).
#[test]
fn issue12_item5_control_characters_in_descriptions_are_refused() {
    #[rustfmt::skip]
    let rows: &[(&str, char, usize, &str)] = &[
        ("Fixed\u{0}the bug", '\u{0}', 6, "U+0000 (NUL)"),
        ("\u{7}", '\u{7}', 1, "U+0007 (BEL)"),
        ("abc\u{8}\u{8}", '\u{8}', 4, "U+0008 (BS)"),
        ("Fixed \u{1B}[31mred\u{1B}[0m", '\u{1B}', 7, "U+001B (ESC)"),
        ("café\u{7F}", '\u{7F}', 5, "U+007F (DEL)"),
        ("- [ ] \u{9B}2J", '\u{9B}', 7, "U+009B (CSI)"),
        ("éé\u{80}", '\u{80}', 3, "U+0080 (PAD)"),
        ("\t\n a\u{E}", '\u{E}', 5, "U+000E (SO)"),
    ];
    for &(description, character, position, name) in rows {
        let expected = WorklogError::ControlCharacter { character, position };
        assert_eq!(
            expected.to_string(),
            format!(
                "the description holds the control character {name} at character {position}; a description \
                 may hold no control character other than whitespace, so nothing was written"
            )
        );
        check_refused(description, &expected);
    }
    // Whitespace controls are W: collapsed into single spaces, written as before.
    let fs = memfs_with(b"- [x] a\n");
    let result = log(&fs)
        .append("a\tb\u{B}c\u{C}d\re\u{1C}f\u{1F}g\u{85}h\ni", false)
        .unwrap();
    assert_eq!(result.status, AppendStatus::Written);
    assert_eq!(result.line.as_deref(), Some("- [x] a b c d e f g h i"));
}

/// Issue 16 item 4 (class: an oversized description): over 4,096 bytes is refused with a sentence naming
/// the limit, before anything is looked at; exactly 4,096 bytes is written. A 10 MB description costs
/// only the refusal.
#[test]
fn issue16_item4_long_descriptions_are_refused_naming_the_limit() {
    assert_eq!(MAX_DESCRIPTION_BYTES, 4_096);
    let at_limit = "é".repeat(MAX_DESCRIPTION_BYTES / 2);
    let fs = memfs_with(b"- [x] a\n");
    assert_eq!(
        log(&fs).append(&at_limit, false).unwrap().status,
        AppendStatus::Written
    );
    for bytes in [MAX_DESCRIPTION_BYTES + 1, 10 << 20] {
        let description = "a".repeat(bytes);
        let expected = WorklogError::DescriptionTooLong { bytes };
        assert_eq!(
            expected.to_string(),
            format!(
                "the description is {bytes} bytes long; a description may hold at most 4096 bytes, so \
                 nothing was written"
            )
        );
        check_refused(&description, &expected);
    }
    // The length is of the description as sent: whitespace that normalization would remove counts.
    let padded = format!("a{}", " ".repeat(MAX_DESCRIPTION_BYTES));
    check_refused(
        &padded,
        &WorklogError::DescriptionTooLong {
            bytes: MAX_DESCRIPTION_BYTES + 1,
        },
    );
}

/// Issue 12 item 5 (class: a file holding a NUL): a log file that is valid UTF-8 with a NUL in it (as an
/// older version wrote one) is read as text like any other: `check` counts, `append` writes and keeps
/// the NUL byte. UTF-16 and UTF-32 files without a mark are still refused (AS-39).
#[test]
fn issue12_item5_file_with_a_nul_is_read_as_text() {
    let before = b"# T\n\n- [x] Fixed\0the bug\n- [ ] b\n";
    let fs = memfs_with(before);
    let check = log(&fs).check().unwrap();
    assert_eq!((check.status, check.items), (CheckStatus::Ok, Some(2)));
    assert_eq!(
        log(&fs).append("c", true).unwrap().status,
        AppendStatus::NotWritten(NotWritten::DryRun)
    );
    assert_eq!(log(&fs).append("c", false).unwrap().status, AppendStatus::Written);
    assert_eq!(
        fs.file(file_path()).unwrap(),
        b"# T\n\n- [x] Fixed\0the bug\n- [ ] b\n- [x] c\n"
    );
    // A file that is mostly NUL is UTF-16 or UTF-32 text, not UTF-8.
    let utf16: Vec<u8> = "- [x] a\nmore text\n"
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect();
    let fs = memfs_with(&utf16);
    assert_eq!(
        log(&fs).check().unwrap_err(),
        WorklogError::NotUtf8 { file: NAME.into() }
    );
}

/// Issue 12 item 7 (class: a log file too large to read whole): every read is bounded at 64 MiB; a
/// larger file is refused by both tools with a sentence naming the limit, and left as it is. A file
/// of exactly the limit is read (here it is all NUL, so it is UTF-16 or UTF-32 by WL-21).
#[test]
fn issue12_item7_log_reads_are_bounded() {
    assert_eq!(MAX_LOG_BYTES, 64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(NAME);
    let file = fs::File::create(&path).unwrap();
    let os_log = Worklog::new(Config::builder().dir(dir.path()).build(), OsFs);
    file.set_len(MAX_LOG_BYTES).unwrap(); // sparse: reads as NUL bytes
    assert_eq!(
        os_log.check().unwrap_err(),
        WorklogError::NotUtf8 { file: NAME.into() }
    );
    for len in [MAX_LOG_BYTES + 1, 3 << 30] {
        file.set_len(len).unwrap();
        let expected = WorklogError::TooLarge { file: NAME.into() };
        assert_eq!(
            expected.to_string(),
            "cannot read \"2026-09-06.md\": the file is larger than 67108864 bytes (64 MiB), the most a log \
             file may hold"
        );
        assert_eq!(os_log.check().unwrap_err(), expected);
        assert_eq!(os_log.append("x", true).unwrap_err(), expected);
        assert_eq!(os_log.append("x", false).unwrap_err(), expected);
        assert_eq!(fs::metadata(&path).unwrap().len(), len, "left as it is");
    }
    // The same bound over any `Fs`: a file that grows past the bound is refused after the bound.
    let mem = MemFs::new();
    mem.write_file(file_path(), &vec![b'a'; MAX_LOG_BYTES as usize + 1]);
    assert_eq!(
        log(&mem).check().unwrap_err(),
        WorklogError::TooLarge { file: NAME.into() }
    );
}

/// A real filesystem that, right after its `at`-th listing of the log directory, replaces the log file
/// with a FIFO or a link to a device: the swap of issue 12 item 7. The listing the read follows is the
/// first for a dry run and the second for an append, which lists again under the lock (issue 27 item 8).
struct SwapAfterListing {
    file: PathBuf,
    swap: Swap,
    at: usize,
    listed: std::sync::atomic::AtomicUsize,
}

/// What is put in the log file's place.
type Swap = fn(&Path);

impl Fs for SwapAfterListing {
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let listing = OsFs.list_dir(path)?;
        if self.listed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == self.at {
            fs::remove_file(&self.file)?;
            (self.swap)(&self.file);
        }
        Ok(listing)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        OsFs.read(path)
    }
    fn read_chunks(
        &self,
        path: &Path,
        n: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        OsFs.read_chunks(path, n, sink)
    }
    fn read_limited(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        OsFs.read_limited(path, limit)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        OsFs.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        OsFs.symlink_metadata(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        OsFs.canonicalize(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        OsFs.read_link(path)
    }
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        OsFs.create_new(path, mode)
    }
    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        OsFs.open_append(path, create)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        OsFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        OsFs.remove_file(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        OsFs.sync_dir(path)
    }
    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        OsFs.lock(path, timeout)
    }
}

fn make_fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn link_to_dev_zero(path: &Path) {
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// Issue 12 item 7 (class: a special file swapped in between listing and reading): a FIFO (which
/// nobody writes to) or a link to `/dev/zero` put in place of the log file after the listing is
/// refused as "Not a regular file" at once — also by an append holding `.worklog.lock` — and the lock
/// is free again afterwards.
#[test]
fn issue12_item7_special_file_swapped_in_never_blocks() {
    let swaps: [(&str, Swap); 2] = [("a FIFO", make_fifo), ("/dev/zero", link_to_dev_zero)];
    for (what, swap) in swaps {
        for dry_run in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(NAME);
            fs::write(&file, "- [x] a\n").unwrap();
            let fs = SwapAfterListing {
                file: file.clone(),
                swap,
                at: if dry_run { 1 } else { 2 },
                listed: Default::default(),
            };
            let log = Worklog::new(Config::builder().dir(dir.path()).build(), fs);
            let (done, answer) = mpsc::channel();
            std::thread::spawn(move || done.send(log.append("b", dry_run)).unwrap());
            // A guard against a hang, not a speed assertion: a blocked read never answers.
            let result = answer
                .recv_timeout(Duration::from_secs(60))
                .expect("the append blocked");
            assert_eq!(
                result.unwrap_err().to_string(),
                "cannot read \"2026-09-06.md\": Not a regular file",
                "{what}"
            );
            let lock = dir.path().join(LOCK_FILE_NAME);
            if !dry_run {
                drop(OsFs.lock(&lock, Duration::ZERO).expect("the lock was released"));
            }
        }
    }
    // The same through the in-memory seam, with the swap made while the read is held.
    let fs = memfs_with(b"- [x] a\n");
    let hold = fs.hold_reads(file_path());
    let worker = {
        let fs = fs.clone();
        std::thread::spawn(move || log(&fs).append("b", false))
    };
    assert!(hold.wait_entered(Duration::from_secs(60)));
    fs.create_special(file_path());
    hold.release();
    assert_eq!(
        worker.join().unwrap().unwrap_err().to_string(),
        "cannot read \"2026-09-06.md\": Not a regular file"
    );
    fs.write_file(Path::new(DIR).join("b.md"), b"- [x] a\n");
    assert_eq!(log(&fs).append("b", false).unwrap().status, AppendStatus::Written);
}

/// Issue 12 item 7 (class: a special file where the lock file belongs): a FIFO (or a link to one) as
/// `.worklog.lock` would block the open for a writer that never comes; the append is refused with
/// `cannot write …: Not a regular file` at once, writes nothing, and `check` and a dry run (which never
/// touch the lock, WL-62) still answer.
#[test]
fn issue12_item7_special_lock_file_never_blocks() {
    for through_link in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(NAME), "- [x] a\n").unwrap();
        let lock = dir.path().join(LOCK_FILE_NAME);
        if through_link {
            make_fifo(&dir.path().join("fifo"));
            std::os::unix::fs::symlink(dir.path().join("fifo"), &lock).unwrap();
        } else {
            make_fifo(&lock);
        }
        let log = Worklog::new(Config::builder().dir(dir.path()).build(), OsFs);
        let (done, answer) = mpsc::channel();
        std::thread::spawn(move || {
            done.send((log.append("b", false), log.append("b", true), log.check()))
                .unwrap()
        });
        // A guard against a hang, not a speed assertion.
        let (append, dry_run, check) = answer
            .recv_timeout(Duration::from_secs(60))
            .expect("the append blocked");
        assert_eq!(
            append.unwrap_err().to_string(),
            "cannot write \"2026-09-06.md\": Not a regular file"
        );
        assert_eq!(
            dry_run.unwrap().status,
            AppendStatus::NotWritten(NotWritten::DryRun)
        );
        assert_eq!(check.unwrap().status, CheckStatus::Ok);
        assert_eq!(fs::read(dir.path().join(NAME)).unwrap(), b"- [x] a\n");
    }
}

/// Issue 12 item 14 (class: a file name holding control characters): every message quotes the name
/// with control characters escaped, so a line feed or an ESC in a name never reaches a terminal raw;
/// the `file` field keeps the name itself. A plain name reads exactly as §14 writes it.
#[test]
fn issue12_item14_names_with_control_characters_are_quoted() {
    let fs = MemFs::new();
    let name = "day\n2\u{1B}[2J.md";
    fs.write_file(Path::new(DIR).join(name), b"- [x] a\n");
    let check = log(&fs).check().unwrap();
    assert_eq!(check.file.as_deref(), Some(name));
    assert_eq!(
        check.message,
        r#""day\n2\u{1b}[2J.md" has a checklist with 1 items"#
    );
    let written = log(&fs).append("b", false).unwrap();
    assert_eq!(
        written.message,
        r#"one item was appended to the checklist in "day\n2\u{1b}[2J.md""#
    );
    fs.write_file(Path::new(DIR).join(name), b"- [x] caf\xE9\n");
    assert_eq!(
        log(&fs).check().unwrap_err().to_string(),
        r#""day\n2\u{1b}[2J.md" is not valid UTF-8"#
    );
    assert_eq!(shiftwork_worklog::quoted_name(NAME), "\"2026-09-06.md\"");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Issue 12 item 5 and issue 27 item 11, as a property over descriptions biased towards control
    /// characters and bidirectional controls: an append either refuses the description (naming the
    /// first one that is not whitespace) and writes nothing, or the file afterwards holds none but
    /// whitespace.
    #[test]
    fn issue12_item5_no_control_character_is_ever_written(
        description in "([\u{0}-\u{20}\u{7F}-\u{A0}\u{61C}\u{200B}-\u{200F}\u{2028}-\u{202F}\u{2060}-\u{206F}]|[a-z ]|\\PC){0,40}",
    ) {
        use shiftwork_seams::echo::is_control_or_bidi;
        let fs = memfs_with(b"- [x] a\n");
        match log(&fs).append(&description, false) {
            Ok(_) => {
                let after = String::from_utf8(fs.file(file_path()).unwrap()).unwrap();
                proptest::prop_assert!(
                    !after.chars().any(|c| is_control_or_bidi(c) && !shiftwork_worklog::core::is_ws(c)),
                    "{after:?}"
                );
            }
            Err(WorklogError::ControlCharacter { character, position }) => {
                proptest::prop_assert_eq!(description.chars().nth(position - 1), Some(character));
                proptest::prop_assert!(description.chars().take(position - 1).all(|c| !is_control_or_bidi(c) || shiftwork_worklog::core::is_ws(c)));
                proptest::prop_assert_eq!(fs.file(file_path()).unwrap(), b"- [x] a\n".to_vec());
            }
            Err(other) => proptest::prop_assert!(false, "{other}"),
        }
    }
}

/// Issue 27 item 11 (class: control characters reach a terminal or a file): a bidirectional control
/// (the embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F
/// and U+061C) reorders the text a person sees around it, in the log and on a terminal; a description
/// holding one is refused like one holding a control character, in the same sentence, and nothing is
/// written. The line and paragraph separators are whitespace (W): they become spaces (WL-35).
#[test]
fn issue27_item11_bidi_controls_in_descriptions_are_refused() {
    #[rustfmt::skip]
    let rows: &[(&str, char, usize, &str)] = &[
        ("left \u{202A}x", '\u{202A}', 6, "U+202A (LRE)"),
        ("\u{202B}", '\u{202B}', 1, "U+202B (RLE)"),
        ("a\u{202C}", '\u{202C}', 2, "U+202C (PDF)"),
        ("a\u{202D}b", '\u{202D}', 2, "U+202D (LRO)"),
        ("Fixed the \u{202E}gub", '\u{202E}', 11, "U+202E (RLO)"),
        ("é\u{2066}", '\u{2066}', 2, "U+2066 (LRI)"),
        ("é\u{2067}", '\u{2067}', 2, "U+2067 (RLI)"),
        ("é\u{2068}", '\u{2068}', 2, "U+2068 (FSI)"),
        ("é\u{2069}", '\u{2069}', 2, "U+2069 (PDI)"),
        ("- [ ] \u{200E}x", '\u{200E}', 7, "U+200E (LRM)"),
        ("\u{200F}", '\u{200F}', 1, "U+200F (RLM)"),
        ("\u{61C}١", '\u{61C}', 1, "U+061C (ALM)"),
    ];
    for &(description, character, position, name) in rows {
        let expected = WorklogError::ControlCharacter { character, position };
        assert_eq!(
            expected.to_string(),
            format!(
                "the description holds the control character {name} at character {position}; a description \
                 may hold no control character other than whitespace, so nothing was written"
            )
        );
        check_refused(description, &expected);
    }
    let fs = memfs_with(b"- [x] a\n");
    let result = log(&fs).append("a\u{2028}b\u{2029}c", false).unwrap();
    assert_eq!(result.line.as_deref(), Some("- [x] a b c"));
    // Every character of the shared rule (`shiftwork_seams::echo::is_control_or_bidi`) that is not
    // whitespace is refused; every other character up to U+2100 is not.
    for cp in 0u32..=0x2100 {
        let Some(c) = char::from_u32(cp) else { continue };
        let refused = log(&memfs_with(b"- [x] a\n"))
            .append(&format!("a{c}b"), true)
            .is_err();
        let rule = shiftwork_seams::echo::is_control_or_bidi(c) && !shiftwork_worklog::core::is_ws(c);
        assert_eq!(refused, rule, "U+{cp:04X}");
    }
}

/// Issue 27 item 11 (class: control characters reach a terminal or a file): a file name is quoted in
/// every message with every character of the shared rule escaped (C0, DEL, C1, the line and paragraph
/// separators, the bidirectional controls), as `\u{…}`, so no name reorders or drives a terminal.
#[test]
fn issue27_item11_quoted_names_escape_every_control_and_bidi_character() {
    for cp in 0u32..=0x2100 {
        let Some(c) = char::from_u32(cp) else { continue };
        if !shiftwork_seams::echo::is_control_or_bidi(c) {
            continue;
        }
        let quoted = shiftwork_worklog::quoted_name(&format!("a{c}.md"));
        assert!(
            !quoted.chars().any(shiftwork_seams::echo::is_control_or_bidi),
            "U+{cp:04X}: {quoted:?}"
        );
        assert!(
            quoted.starts_with("\"a\\") && quoted.ends_with(".md\""),
            "{quoted}"
        );
    }
    let fs = MemFs::new();
    fs.write_file(Path::new(DIR).join("a\u{202E}dm.txt"), b"- [x] a\n");
    assert_eq!(
        log(&fs).check().unwrap().message,
        r#""a\u{202e}dm.txt" has a checklist with 1 items"#
    );
}

/// Issue 27 item 6 (class: every writer checks its readers' limits first): an append that would make
/// the log file larger than the reader's bound ([`MAX_LOG_BYTES`], 64 MiB) is refused with a sentence
/// naming the limit, and writes nothing (no temporary file either); a dry run says the same. An append
/// that brings the file exactly to the limit is written, and the file is still readable. A duplicate
/// writes nothing, so it is never refused.
#[test]
fn issue27_item6_an_append_never_makes_the_file_larger_than_its_reader_reads() {
    use crate::support::temp_files;

    let head = b"- [x] a\n\n";
    let line = b"- [x] b\n";
    let mut content = head.to_vec();
    content.resize(MAX_LOG_BYTES as usize - line.len() - 1, b'x');
    content.push(b'\n');
    let fs = memfs_with(&content);
    // Exactly at the limit: written, and `check` still reads it.
    assert_eq!(log(&fs).append("b", false).unwrap().status, AppendStatus::Written);
    assert_eq!(fs.file(file_path()).unwrap().len() as u64, MAX_LOG_BYTES);
    assert_eq!(log(&fs).check().unwrap().items, Some(2));
    // One byte more is refused, before anything is written.
    let before = snapshot(&fs);
    let expected = WorklogError::WouldBeTooLarge { file: NAME.into() };
    assert_eq!(
        expected.to_string(),
        "cannot write \"2026-09-06.md\": the file would be larger than 67108864 bytes (64 MiB), the most a \
         log file may hold, so nothing was written"
    );
    for dry_run in [false, true] {
        assert_eq!(log(&fs).append("c", dry_run).unwrap_err(), expected);
    }
    assert!(snapshot(&fs) == before, "nothing written");
    assert!(temp_files(&fs).is_empty());
    assert_eq!(
        log(&fs).append("b", false).unwrap().status,
        AppendStatus::NotWritten(NotWritten::Duplicate)
    );
}
