//! The durable replace and the line append, on both filesystems, with a failure and a crash injected at
//! every step: the target is byte-identical to before (or, after a crash, wholly old or wholly new) and no
//! temporary file remains after a failure.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use shiftwork_seams::durable::{
    Alphabet, ReplaceOptions, ReplaceStep, TempName, append_line, prepare_replace, replace_durably,
};
use shiftwork_seams::{Fs, MemFs, Op, OsFs};

const OLD: &[u8] = b"# Today\n- [x] first\n";
const NEW: &[&[u8]] = &[b"# Today\n", b"- [x] first\n", b"- [x] second\n"];

fn opts() -> ReplaceOptions {
    ReplaceOptions::hidden(".test-", ".tmp")
}

fn fixture() -> MemFs {
    let fs = MemFs::new();
    fs.write_file("/log/today.md", OLD);
    fs.set_mode("/log/today.md", 0o640);
    fs.set_owner("/log/today.md", 1000, 1001);
    fs
}

/// One row per step of the replace: the operation failed and the step the error names.
const STEPS: &[(Op, ReplaceStep)] = &[
    (Op::Create, ReplaceStep::CreateTemp),
    (Op::Write, ReplaceStep::Write),
    (Op::SetOwner, ReplaceStep::Owner),
    (Op::SetMode, ReplaceStep::Mode),
    (Op::Fsync, ReplaceStep::Fsync),
    (Op::Rename, ReplaceStep::Rename),
];

#[test]
fn a_failure_at_each_step_leaves_the_target_as_it_was_and_no_temp_file() {
    for &(op, step) in STEPS {
        for errno in [libc::ENOSPC, libc::EACCES, libc::EIO] {
            let fs = fixture();
            let before = fs.paths();
            fs.fail_nth(op, 1, errno);
            let err = replace_durably(&fs, Path::new("/log/today.md"), NEW, &opts()).unwrap_err();
            assert_eq!(err.step, step, "{op:?}");
            assert_eq!(err.source.raw_os_error(), Some(errno), "{op:?}");
            assert_eq!(fs.file("/log/today.md").unwrap(), OLD, "{op:?}: target changed");
            assert_eq!(fs.paths(), before, "{op:?}: a file was left behind");
        }
    }
}

#[test]
fn a_failed_directory_flush_still_counts_as_replaced() {
    let fs = fixture();
    fs.fail_nth(Op::SyncDir, 1, libc::EIO);
    let done = replace_durably(&fs, Path::new("/log/today.md"), NEW, &opts()).unwrap();
    assert_eq!(done.dir_sync_error.unwrap().raw_os_error(), Some(libc::EIO));
    assert_eq!(fs.file("/log/today.md").unwrap(), NEW.concat());
}

#[test]
fn a_crash_at_any_step_leaves_the_old_or_the_new_content_whole() {
    // Count the mutating operations of one clean run, then crash at each of them in turn.
    let probe = fixture();
    replace_durably(&probe, Path::new("/log/today.md"), NEW, &opts()).unwrap();
    let mut crash_points = 0;
    for op in Op::MUTATING.into_iter().chain([Op::SetOwner, Op::SetMode]) {
        for n in 1..=probe.count(op) {
            let fs = fixture();
            fs.crash_at(op, n);
            let result = replace_durably(&fs, Path::new("/log/today.md"), NEW, &opts());
            assert!(fs.crashed(), "{op:?} #{n} never happened");
            fs.restart();
            let content = fs.file("/log/today.md").unwrap();
            assert!(
                content == OLD || content == NEW.concat(),
                "{op:?} #{n}: torn content {content:?}"
            );
            if result.is_ok() {
                assert_eq!(content, NEW.concat());
            }
            crash_points += 1;
        }
    }
    assert!(crash_points >= 6, "only {crash_points} crash points");
}

#[test]
fn the_new_file_keeps_mode_and_owner_and_a_symlink_is_written_through() {
    let fs = fixture();
    fs.symlink("today.md", "/log/link.md");
    fs.symlink("/log/link.md", "/other/outer.md");
    let done = replace_durably(&fs, Path::new("/other/outer.md"), NEW, &opts()).unwrap();
    assert_eq!(done.target, Path::new("/log/today.md"));
    let meta = fs.metadata(Path::new("/log/today.md")).unwrap();
    assert_eq!((meta.mode, meta.uid, meta.gid), (0o640, 1000, 1001));
    assert_eq!(
        fs.read_link(Path::new("/log/link.md")).unwrap(),
        Path::new("today.md")
    );
    assert_eq!(fs.file("/other/outer.md").unwrap(), NEW.concat());
}

#[test]
fn a_new_target_gets_mode_if_new() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    replace_durably(&fs, Path::new("/d/new.json"), &[b"{}"], &opts()).unwrap();
    assert_eq!(fs.metadata(Path::new("/d/new.json")).unwrap().mode, 0o644);
}

#[test]
fn prepare_then_abort_leaves_nothing_and_temp_names_follow_the_pattern() {
    let fs = fixture();
    let before = fs.paths();
    let options = ReplaceOptions {
        temp: TempName {
            prefix: String::from("today.md.4242."),
            suffix: String::from(".tmp"),
            random_len: 8,
            alphabet: Alphabet::LowerHex,
        },
        keep_owner: false,
        mode_if_new: 0o600,
    };
    let prepared = prepare_replace(&fs, Path::new("/log/today.md"), None, NEW, &options).unwrap();
    let name = prepared.temp_name().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("today.md.4242.") && name.ends_with(".tmp"),
        "{name}"
    );
    let random = &name["today.md.4242.".len()..name.len() - 4];
    assert!(
        random.len() == 8
            && random
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    assert_eq!(fs.file(prepared.temp_path()).unwrap(), NEW.concat());
    prepared.abort(&fs);
    assert_eq!(fs.paths(), before);
}

#[test]
fn temp_name_collisions_draw_another_name() {
    let fs = fixture();
    // Occupy every one-character name the alphabet can draw but one.
    let options = ReplaceOptions {
        temp: TempName {
            prefix: String::from("."),
            suffix: String::new(),
            random_len: 1,
            alphabet: Alphabet::LowerHex,
        },
        keep_owner: true,
        mode_if_new: 0o644,
    };
    for d in "0123456789abcde".chars() {
        fs.write_file(format!("/log/.{d}"), b"occupied");
    }
    replace_durably(&fs, Path::new("/log/today.md"), NEW, &options).unwrap();
    for d in "0123456789abcde".chars() {
        assert_eq!(fs.file(format!("/log/.{d}")).unwrap(), b"occupied");
    }
    assert!(fs.file("/log/.f").is_none(), "the temp file was renamed away");
}

#[test]
fn append_line_is_one_write_and_one_fsync() {
    let fs = MemFs::new();
    fs.make_dirs("/d");
    let (w, s) = (fs.count(Op::Append), fs.count(Op::Fsync));
    append_line(&fs, Path::new("/d/l.jsonl"), b"{\"a\":1}\n", true).unwrap();
    assert_eq!((fs.count(Op::Append) - w, fs.count(Op::Fsync) - s), (1, 1));
    assert!(append_line(&fs, Path::new("/d/missing.jsonl"), b"x\n", false).is_err());
    fs.fail_nth(Op::Append, 1, libc::ENOSPC);
    assert!(append_line(&fs, Path::new("/d/l.jsonl"), b"{\"a\":2}\n", true).is_err());
    assert_eq!(fs.file("/d/l.jsonl").unwrap(), b"{\"a\":1}\n");
}

// ----- on the real filesystem -----

fn os_fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("today.md");
    std::fs::write(&path, OLD).unwrap();
    (dir, path)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn os_replace_keeps_mode_owner_and_symlink_and_leaves_no_temp() {
    let (dir, path) = os_fixture();
    let is_root = unsafe_free_is_root();
    if is_root {
        std::os::unix::fs::chown(&path, Some(1234), Some(5678)).unwrap();
    }
    // After the chown, which clears set-user-ID.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4640)).unwrap();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink("today.md", &link).unwrap();
    let done = replace_durably(&OsFs, &link, NEW, &opts()).unwrap();
    assert!(done.dir_sync_error.is_none());
    assert_eq!(std::fs::read(&path).unwrap(), NEW.concat());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o4640);
    if is_root {
        assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
    }
    assert_eq!(names(dir.path()), ["link.md", "today.md"]);
}

#[test]
fn os_replace_failing_to_create_its_temp_changes_nothing() {
    let (dir, path) = os_fixture();
    // The temp file cannot be created when the target's directory is missing.
    let bogus = dir.path().join("missing").join("inside.md");
    let err = replace_durably(&OsFs, &bogus, NEW, &opts()).unwrap_err();
    assert_eq!(err.step, ReplaceStep::CreateTemp);
    assert_eq!(err.source.raw_os_error(), Some(libc::ENOENT));
    // A path through a regular file fails while inspecting the target.
    let err = replace_durably(&OsFs, &path.join("inside.md"), NEW, &opts()).unwrap_err();
    assert_eq!(err.step, ReplaceStep::Inspect);
    assert_eq!(err.source.raw_os_error(), Some(libc::ENOTDIR));
    assert_eq!(std::fs::read(&path).unwrap(), OLD);
    assert_eq!(names(dir.path()), ["today.md"]);
}

#[test]
fn os_replace_over_a_directory_fails_at_rename_and_removes_its_temp() {
    let (dir, _) = os_fixture();
    let target = dir.path().join("adir");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"k").unwrap();
    let err = replace_durably(&OsFs, &target, NEW, &opts()).unwrap_err();
    assert_eq!(err.step, ReplaceStep::Rename);
    assert_eq!(names(dir.path()), ["adir", "today.md"]);
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"k");
}

#[test]
fn os_append_and_hash_agree_with_std() {
    let (dir, _) = os_fixture();
    let log = dir.path().join("l.jsonl");
    for i in 0..3 {
        append_line(&OsFs, &log, format!("{{\"i\":{i}}}\n").as_bytes(), true).unwrap();
    }
    let bytes = std::fs::read(&log).unwrap();
    assert_eq!(bytes, b"{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    let mut seen = Vec::new();
    let digest = shiftwork_seams::hash::sha256_file(&OsFs, &log, &mut |c| seen.extend_from_slice(c)).unwrap();
    assert_eq!(seen, bytes);
    assert_eq!(digest.len, bytes.len() as u64);
    assert_eq!(digest.sha256, shiftwork_seams::hash::sha256(&bytes));
}

fn unsafe_free_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}
