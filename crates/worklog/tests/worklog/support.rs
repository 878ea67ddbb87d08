//! Shared set-up: a `MemFs` log directory and a snapshot of everything in it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use shiftwork_seams::{FileKind, Fs, MemFs};
use shiftwork_worklog::{Config, Worklog};

/// The log directory of the `MemFs` tests.
pub const DIR: &str = "/log";
/// The log file of §21 ("Unless a scenario says otherwise").
pub const NAME: &str = "2026-09-06.md";

/// `/log/2026-09-06.md` holding `content`.
pub fn memfs_with(content: &[u8]) -> MemFs {
    let fs = MemFs::new();
    fs.write_file(file_path(), content);
    fs
}

/// The path of the §21 log file.
pub fn file_path() -> PathBuf {
    Path::new(DIR).join(NAME)
}

/// A work log over `fs` with `DIR` configured and no pattern.
pub fn log(fs: &MemFs) -> Worklog<MemFs> {
    log_with(fs, None)
}

/// A work log over `fs` with `DIR` configured and `pattern`.
pub fn log_with(fs: &MemFs, pattern: Option<&str>) -> Worklog<MemFs> {
    Worklog::new(
        pattern
            .map_or(Config::builder().dir(DIR), |p| {
                Config::builder().dir(DIR).pattern(p)
            })
            .build(),
        fs.clone(),
    )
}

/// A time `secs` seconds after a fixed instant.
pub fn at(secs: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_788_000_000 + secs)
}

/// One entry of a [`snapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub kind: Option<FileKind>,
    pub mode: Option<u32>,
    pub owner: Option<(u32, u32)>,
    pub modified: Option<SystemTime>,
    pub ino: Option<u64>,
    pub link: Option<PathBuf>,
    pub content: Option<Vec<u8>>,
}

/// Everything in `fs`: every path with its kind, mode, owner, modification time, inode, link target
/// and content. Two equal snapshots mean nothing was created, changed or removed.
pub fn snapshot(fs: &MemFs) -> Vec<Entry> {
    fs.paths()
        .into_iter()
        .map(|path| {
            let meta = fs.symlink_metadata(&path).ok();
            let kind = meta.as_ref().map(|m| m.kind);
            Entry {
                link: (kind == Some(FileKind::Symlink))
                    .then(|| fs.read_link(&path).ok())
                    .flatten(),
                content: (kind == Some(FileKind::File)).then(|| fs.file(&path)).flatten(),
                mode: meta.as_ref().map(|m| m.mode),
                owner: meta.as_ref().map(|m| (m.uid, m.gid)),
                modified: meta.as_ref().map(|m| m.modified),
                ino: meta.as_ref().map(|m| m.ino),
                kind,
                path,
            }
        })
        .collect()
}

/// The names of hidden temporary files (`.worklog-*.tmp`) anywhere in `fs`.
pub fn temp_files(fs: &MemFs) -> Vec<PathBuf> {
    fs.paths()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(".worklog-") && n.ends_with(".tmp"))
        })
        .collect()
}

/// Whether the lock file exists in `DIR`.
pub fn has_lock_file(fs: &MemFs) -> bool {
    fs.paths()
        .contains(&Path::new(DIR).join(shiftwork_worklog::LOCK_FILE_NAME))
}

/// The §21 message texts with `{name}` = `2026-09-06.md`, copied from the specification's key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    Written,
    Created,
    Duplicate,
    Dry,
    DryNew,
    Empty,
}

impl Msg {
    pub fn text(self) -> &'static str {
        match self {
            Msg::Written => "one item was appended to the checklist in \"2026-09-06.md\"",
            Msg::Created => "\"2026-09-06.md\" had no checklist, so one was started with this item",
            Msg::Duplicate => "\"2026-09-06.md\" already has this item, so nothing was written",
            Msg::Dry => "one item would be appended to the checklist in \"2026-09-06.md\"",
            Msg::DryNew => "\"2026-09-06.md\" has no checklist; one would be started with this item",
            Msg::Empty => "the description is empty, so there is nothing to write",
        }
    }
}

/// §14 messages that do not name a file.
pub const M_NO_DIR: &str = "the worklog directory is not configured or does not exist";
pub const M_NO_FILE: &str = "the worklog directory holds no files";
pub const M_NO_MATCH: &str = "no file in the worklog directory matches the configured pattern";

/// The environment variable that tells a re-invoked test binary which child role to play, and the
/// one that passes it its working directory.
pub const CHILD_ROLE: &str = "WORKLOG_TEST_CHILD_ROLE";
pub const CHILD_DIR: &str = "WORKLOG_TEST_CHILD_DIR";

/// Starts this test binary again, running only the ignored test `test` (a child entry point), with
/// `role` and `dir` in its environment. Its stdout is piped so the parent can wait for a signal line.
pub fn spawn_child(test: &str, role: &str, dir: &Path) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD_ROLE, role)
        .env(CHILD_DIR, dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The role and directory of a child process, or `None` in a normal test run.
pub fn child_role() -> Option<(String, PathBuf)> {
    Some((
        std::env::var(CHILD_ROLE).ok()?,
        PathBuf::from(std::env::var_os(CHILD_DIR)?),
    ))
}

/// Sets a file's modification time (WL-100: times are set explicitly, never inferred).
pub fn set_mtime(path: &Path, secs: u64) {
    let time = filetime::FileTime::from_system_time(at(secs));
    filetime::set_file_mtime(path, time).unwrap();
}

/// Reads lines from a child's stdout until one starts with `marker` and returns the rest of that
/// line (the test harness prints its own lines around the child's).
pub fn read_marked_line(reader: &mut impl std::io::BufRead, marker: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the child ended before printing {marker:?}"
        );
        if let Some(rest) = line.strip_prefix(marker) {
            return rest.trim_end().to_owned();
        }
    }
}
