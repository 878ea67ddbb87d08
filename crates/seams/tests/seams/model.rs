//! `MemFs` against `OsFs`: the same random sequence of operations on both, in a small universe of
//! names, gives the same observable results (contents, kinds, error classes). This is the oracle that
//! keeps the in-memory double honest.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use shiftwork_seams::{FileKind, Fs, MemFs, OsFs};

const NAMES: [&str; 6] = ["a", "b", "d/a", "d/b", "l", "d/l"];

#[derive(Debug, Clone)]
enum Step {
    CreateNew(usize, Vec<u8>),
    CreateDirAll(usize),
    Append(usize, Vec<u8>, bool),
    Rename(usize, usize),
    Remove(usize),
    Symlink(usize, usize),
    Read(usize),
    Stat(usize),
    Lstat(usize),
    Canonicalize(usize),
    List(bool),
}

fn step() -> impl Strategy<Value = Step> {
    let i = 0..NAMES.len();
    let bytes = proptest::collection::vec(any::<u8>(), 0..8);
    prop_oneof![
        (i.clone(), bytes.clone()).prop_map(|(i, b)| Step::CreateNew(i, b)),
        i.clone().prop_map(Step::CreateDirAll),
        (i.clone(), bytes, any::<bool>()).prop_map(|(i, b, c)| Step::Append(i, b, c)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Step::Rename(a, b)),
        i.clone().prop_map(Step::Remove),
        (i.clone(), i.clone()).prop_map(|(t, l)| Step::Symlink(t, l)),
        i.clone().prop_map(Step::Read),
        i.clone().prop_map(Step::Stat),
        i.clone().prop_map(Step::Lstat),
        i.prop_map(Step::Canonicalize),
        any::<bool>().prop_map(Step::List),
    ]
}

/// What an operation showed, in terms both filesystems share.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Ok,
    Bytes(Vec<u8>),
    Kind(FileKind, u64),
    Path(String),
    Names(BTreeMap<String, Option<FileKind>>),
    Err(ErrorKind),
}

fn err(e: std::io::Error) -> Seen {
    Seen::Err(e.kind())
}

fn run(fs: &dyn Fs, root: &Path, s: &Step) -> Seen {
    let at = |i: usize| root.join(NAMES[i]);
    let kind = |r: std::io::Result<shiftwork_seams::Metadata>| match r {
        // Directory sizes differ between filesystems; only files report their length.
        Ok(m) => Seen::Kind(m.kind, if m.kind == FileKind::File { m.len } else { 0 }),
        Err(e) => err(e),
    };
    match s {
        Step::CreateNew(i, b) => match fs.create_new(&at(*i), 0o644) {
            Ok(mut w) => w.write_all(b).map(|_| Seen::Ok).unwrap_or_else(err),
            Err(e) => err(e),
        },
        Step::Append(i, b, create) => match fs.open_append(&at(*i), *create) {
            Ok(mut w) => w.write_all(b).map(|_| Seen::Ok).unwrap_or_else(err),
            Err(e) => err(e),
        },
        Step::CreateDirAll(i) => fs
            .create_dir_all(&at(*i), 0o700)
            .map(|_| Seen::Ok)
            .unwrap_or_else(err),
        // MemFs does not rename directories (no core needs it); a directory is left where it is.
        Step::Rename(a, _)
            if fs
                .symlink_metadata(&at(*a))
                .is_ok_and(|m| m.kind == FileKind::Dir) =>
        {
            Seen::Ok
        }
        Step::Rename(a, b) => fs.rename(&at(*a), &at(*b)).map(|_| Seen::Ok).unwrap_or_else(err),
        Step::Remove(i) => fs.remove_file(&at(*i)).map(|_| Seen::Ok).unwrap_or_else(err),
        // Links are made by `make_link`, on each side's own terms.
        Step::Symlink(..) => Seen::Ok,
        Step::Read(i) => fs.read(&at(*i)).map(Seen::Bytes).unwrap_or_else(err),
        Step::Stat(i) => kind(fs.metadata(&at(*i))),
        Step::Lstat(i) => kind(fs.symlink_metadata(&at(*i))),
        Step::Canonicalize(i) => match fs.canonicalize(&at(*i)) {
            Ok(p) => Seen::Path(
                p.strip_prefix(root)
                    .map(|r| r.display().to_string())
                    .unwrap_or_default(),
            ),
            Err(e) => err(e),
        },
        Step::List(sub) => {
            let dir = if *sub { root.join("d") } else { root.to_path_buf() };
            match fs.list_dir(&dir) {
                Ok(entries) => Seen::Names(
                    entries
                        .into_iter()
                        .map(|e| (e.name.into_string().unwrap(), e.metadata.ok().map(|m| m.kind)))
                        .collect(),
                ),
                Err(e) => err(e),
            }
        }
    }
}

/// The symlink target that points from `link`'s directory at `target`.
fn relative_target(target: &str, link: &str) -> PathBuf {
    let up = link.matches('/').count();
    let mut p = PathBuf::new();
    for _ in 0..up {
        p.push("..");
    }
    p.push(target);
    p
}

fn make_link(os_root: &Path, mem: &MemFs, mem_root: &Path, t: usize, l: usize) -> (bool, bool) {
    let target = relative_target(NAMES[t], NAMES[l]);
    let os = std::os::unix::fs::symlink(&target, os_root.join(NAMES[l])).is_ok();
    // MemFs::symlink is set-up: it overwrites nothing only if the entry is free, as symlink(2) does.
    let free = mem.symlink_metadata(&mem_root.join(NAMES[l])).is_err()
        && mem
            .metadata(mem_root.join(NAMES[l]).parent().unwrap())
            .is_ok_and(|m| m.kind == FileKind::Dir);
    if free {
        mem.symlink(&target, mem_root.join(NAMES[l]));
    }
    (os, free)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn memfs_behaves_like_osfs(steps in proptest::collection::vec(step(), 1..25)) {
        let dir = tempfile::tempdir().unwrap();
        let os_root = dir.path().join("w");
        std::fs::create_dir_all(os_root.join("d")).unwrap();
        let mem = MemFs::new();
        let mem_root = PathBuf::from("/w");
        mem.make_dirs("/w/d");
        for s in &steps {
            if let Step::Symlink(t, l) = s {
                let (os, memfs) = make_link(&os_root, &mem, &mem_root, *t, *l);
                prop_assert_eq!(os, memfs, "symlink {:?}", s);
                continue;
            }
            let a = run(&OsFs, &os_root, s);
            let b = run(&mem, &mem_root, s);
            prop_assert_eq!(a, b, "step {:?} of {:?}", s, steps);
        }
    }
}
