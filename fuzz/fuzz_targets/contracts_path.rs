//! CT-169 `contracts_path`: arbitrary strings through pointer-path normalization and the sensitive
//! test, and through the full acceptance of CT-34 over a `MemFs` workspace. Invariants: nothing
//! panics; an accepted path has no `..` component, does not start with `/`, matches no sensitive
//! pattern, and normalizing it again returns it unchanged.
#![no_main]

use shiftwork_contracts::fingerprint::{Accepted, accept_paths};
use shiftwork_contracts::paths::{normalize, sensitive};
use libfuzzer_sys::fuzz_target;
use shiftwork_seams::MemFs;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = sensitive(text);
    if let Ok(p) = normalize(text, "/w/./", "/w") {
        assert!(!p.starts_with('/'), "{p}");
        assert!(!p.split('/').any(|c| c == ".." || c == "." || c.is_empty()), "{p}");
        assert!(p.len() <= shiftwork_contracts::limits::MAX_PATH_BYTES);
        assert_eq!(normalize(&p, "/w", "/w").as_deref(), Ok(p.as_str()), "normalization is idempotent");
        if sensitive(&p).is_none() {
            // Accepted by name: it must stay accepted by name whatever case it is written in.
            assert!(sensitive(&p.to_ascii_uppercase()).is_none() || p.to_ascii_uppercase() == p);
        }
    }
    let fs = MemFs::new();
    fs.write_file("/w/src/lib.rs", b"fn main() {}\n");
    fs.write_file("/w/.env", b"K=1\n");
    fs.write_file("/outside/x", b"x\n");
    fs.symlink("/outside/x", "/w/out");
    fs.symlink("src/lib.rs", "/w/in");
    fs.symlink(".env", "/w/env_link");
    let paths: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if let Accepted::Pointers(pointers) = accept_paths(&fs, &paths, "/w", "/w") {
        for p in pointers {
            assert!(!p.path.starts_with('/'));
            assert!(!p.path.split('/').any(|c| c == ".."));
            assert!(sensitive(&p.path).is_none(), "{}", p.path);
            assert_eq!(p.size, 13);
        }
    }
});
