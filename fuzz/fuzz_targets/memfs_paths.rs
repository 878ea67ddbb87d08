//! Arbitrary path texts through `MemFs` path resolution (paths are untrusted input wherever a tool
//! accepts one). Invariants: nothing panics, resolution terminates, a canonical path is a fixed point of
//! `canonicalize`, `path::realpath` of an existing path is its canonical path, and a directory
//! `path::is_real_dir_inside` accepts is a real directory below the root.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use shiftwork_seams::{Fs, MemFs};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(3, '\n');
    let (Some(link_target), Some(probe)) = (parts.next(), parts.next()) else {
        return;
    };
    if link_target.contains('\0') || probe.contains('\0') {
        return;
    }
    let fs = MemFs::new();
    fs.write_file("/w/src/lib.rs", b"fn main() {}\n");
    fs.make_dirs("/w/empty");
    fs.symlink(link_target, "/w/link");
    fs.symlink("/w/loop2", "/w/loop1");
    fs.symlink("/w/loop1", "/w/loop2");
    let probe = Path::new("/w").join(probe);
    let _ = fs.metadata(&probe);
    let _ = fs.symlink_metadata(&probe);
    let _ = shiftwork_seams::path::resolve_link_chain(&fs, &probe);
    let real = shiftwork_seams::path::realpath(&fs, &probe, Path::new("/w"));
    if let Ok(canonical) = fs.canonicalize(&probe) {
        assert!(canonical.is_absolute());
        assert_eq!(
            fs.canonicalize(&canonical).ok().as_deref(),
            Some(canonical.as_path())
        );
        assert_eq!(
            real.as_deref(),
            Some(canonical.as_path()),
            "realpath of an existing path"
        );
    }
    if shiftwork_seams::path::is_real_dir_inside(&fs, Path::new("/w"), &probe) {
        assert!(probe.starts_with("/w") && probe != Path::new("/w"));
        assert_eq!(
            fs.symlink_metadata(&probe).map(|m| m.kind).ok(),
            Some(shiftwork_seams::FileKind::Dir)
        );
    }
});
