//! Privacy (§13, WL-70, WL-71, WL-101, AS-44): no result field, message or error — in its `Display`
//! or its `Debug` form — holds the log directory's name, any absolute path, a link's target, a
//! temporary or lock file's name, or file content other than the call's own line.

use std::path::Path;

use shiftwork_seams::{MemFs, Op, OsFs};
use shiftwork_worklog::{AppendResult, CheckResult, Config, Worklog, WorklogError};

const SECRET_DIR: &str = "/srv/secret-notes-7f3a";
const HIDDEN_TARGET: &str = "/srv/hidden-target-9c1d/real-2026-09-06.md";
const FORBIDDEN: [&str; 8] = [
    "secret-notes-7f3a",
    "hidden-target-9c1d",
    "real-2026-09-06",
    "/srv",
    ".worklog",
    ".tmp",
    "private-content",
    "os error",
];

/// Every text a caller can see of one outcome.
fn texts(outcome: Result<serde_json::Value, WorklogError>) -> Vec<String> {
    match outcome {
        Ok(value) => vec![value.to_string(), format!("{value:?}")],
        Err(e) => vec![e.to_string(), format!("{e:?}")],
    }
}

fn append(
    log: &Worklog<impl shiftwork_seams::Fs>,
    d: &str,
    dry: bool,
) -> Result<serde_json::Value, WorklogError> {
    log.append(d, dry)
        .map(|r: AppendResult| serde_json::to_value(r).unwrap())
}

fn check(log: &Worklog<impl shiftwork_seams::Fs>) -> Result<serde_json::Value, WorklogError> {
    log.check().map(|r: CheckResult| serde_json::to_value(r).unwrap())
}

fn assert_private(all: &[(String, String)], forbidden: &[&str]) {
    for (what, text) in all {
        for word in forbidden {
            assert!(!text.contains(word), "{what}: {text:?} contains {word:?}");
        }
    }
}

fn status_of(outcome: &Result<serde_json::Value, WorklogError>) -> String {
    match outcome {
        Ok(v) => v["status"].as_str().unwrap().to_owned(),
        Err(e) => format!("error {:?}", std::mem::discriminant(e)),
    }
}

/// WL-101, AS-44 on `MemFs`: every status of both tools and every tool error, the log file a link to a
/// file in `hidden-target-9c1d`, the directory `secret-notes-7f3a` configured by its absolute path.
#[test]
fn wl101_as44_every_status_and_error_on_memfs() {
    let fs = MemFs::new();
    let link = Path::new(SECRET_DIR).join("2026-09-06.md");
    let new_log = |dir: &str, pattern: Option<&str>| {
        Worklog::new(
            pattern
                .map_or(Config::builder().dir(dir), |p| {
                    Config::builder().dir(dir).pattern(p)
                })
                .build(),
            fs.clone(),
        )
    };
    let log = new_log(SECRET_DIR, None);
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut statuses = std::collections::BTreeSet::new();
    let mut run = |what: &str, outcome: Result<serde_json::Value, WorklogError>| {
        statuses.insert(status_of(&outcome));
        seen.extend(texts(outcome).into_iter().map(|t| (what.to_owned(), t)));
    };

    fs.make_dirs(SECRET_DIR);
    run("no_file append", append(&log, "x", false));
    run("no_file check", check(&log));
    run(
        "no_match append",
        append(&new_log(SECRET_DIR, Some("^z")), "x", false),
    );
    run("no_match check", check(&new_log(SECRET_DIR, Some("^z"))));
    run(
        "no_dir append",
        append(&new_log("/srv/secret-notes-7f3a/missing", None), "x", false),
    );
    run(
        "no_dir check",
        check(&new_log("/srv/secret-notes-7f3a/missing", None)),
    );
    run("empty", append(&log, " ", false));

    fs.write_file(HIDDEN_TARGET, b"# private-content\n");
    fs.symlink(HIDDEN_TARGET, &link);
    run("no_checklist", check(&log));
    run("dry_run new", append(&log, "x", true));
    run("created", append(&log, "x", false));
    run("written", append(&log, "y", false));
    run("duplicate", append(&log, "y", false));
    run("dry_run", append(&log, "z", true));
    run("ok", check(&log));

    run("E-pattern", check(&new_log(SECRET_DIR, Some("("))));
    fs.fail_nth(Op::List, 1, libc::EACCES);
    run("E-list", check(&log));
    fs.fail_nth(Op::Read, 1, libc::EACCES);
    run("E-read", check(&log));
    for op in [
        Op::Resolve,
        Op::Create,
        Op::Write,
        Op::SetMode,
        Op::Fsync,
        Op::Rename,
    ] {
        fs.fail_nth(op, 1, libc::EACCES);
        run("E-write", append(&log, "w", false));
    }
    fs.fail_nth(Op::Lock, 1, libc::EACCES);
    run("E-write (lock)", append(&log, "w", false));
    fs.lock_times_out(Path::new(SECRET_DIR).join(shiftwork_worklog::LOCK_FILE_NAME));
    run("E-lock", append(&log, "w", false));
    fs.write_file(HIDDEN_TARGET, b"- [x] private-content \xFF\n");
    run("E-utf8", check(&log));

    assert_private(&seen, &FORBIDDEN);
    let expected = [
        "created",
        "dry_run",
        "duplicate",
        "empty",
        "no_checklist",
        "no_dir",
        "no_file",
        "ok",
        "written",
    ];
    for status in expected {
        assert!(statuses.contains(status), "{status} was not produced");
    }
    assert_eq!(
        statuses.iter().filter(|s| s.starts_with("error")).count(),
        6,
        "{statuses:?}"
    );
}

/// WL-101, AS-44 on the real filesystem: a temporary directory named `secret-notes-7f3a`, configured
/// by its absolute path, and a log file linked into `hidden-target-9c1d`.
#[test]
fn wl101_as44_on_the_real_filesystem() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("secret-notes-7f3a");
    let hidden = root.path().join("hidden-target-9c1d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&hidden).unwrap();
    let absolute = root.path().to_str().unwrap().to_owned();
    let log = Worklog::new(Config::builder().dir(&dir).build(), OsFs);
    let mut seen = Vec::new();
    let mut run = |what: &str, outcome| seen.extend(texts(outcome).into_iter().map(|t| (what.to_owned(), t)));
    run("no_file", check(&log));
    std::fs::write(hidden.join("real-2026-09-06.md"), "# private-content\n").unwrap();
    std::os::unix::fs::symlink(hidden.join("real-2026-09-06.md"), dir.join("2026-09-06.md")).unwrap();
    run("no_checklist", check(&log));
    run("created", append(&log, "x", false));
    run("written", append(&log, "y", false));
    run("duplicate", append(&log, "y", false));
    run("ok", check(&log));
    std::fs::write(hidden.join("real-2026-09-06.md"), b"\xFF").unwrap();
    run("E-utf8", append(&log, "z", false));
    let missing = Worklog::new(Config::builder().dir(dir.join("missing")).build(), OsFs);
    run("no_dir", check(&missing));
    assert_private(&seen, &FORBIDDEN);
    assert_private(&seen, &[absolute.as_str()]);
}
