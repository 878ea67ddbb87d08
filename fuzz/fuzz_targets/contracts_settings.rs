//! `contracts_settings`: arbitrary bytes through two readers of what an operator or a workspace hands
//! the contracts queue: the retention of finished contracts as a person writes it
//! (`parse_retention`, the server's `--contracts-retention`) and the private-key test a pointed file's
//! first bytes go through (`private_key_in`). Invariants: nothing panics; an accepted retention lies
//! within the bounds the builder accepts and reads back the same written in seconds; the refusal's
//! text is bounded and free of control characters; the key test reads no more than its head, so
//! bytes past it never change its answer, and a PEM private-key block at the start is always found.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shiftwork_contracts::limits::{MAX_FINISHED_RETENTION_SEC, MIN_FINISHED_RETENTION_SEC, SECRET_HEAD_BYTES};
use shiftwork_contracts::parse_retention;
use shiftwork_contracts::paths::private_key_in;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        match parse_retention(text) {
            Ok(Some(kept)) => {
                let secs = kept.as_secs();
                assert!((MIN_FINISHED_RETENTION_SEC..=MAX_FINISHED_RETENTION_SEC).contains(&secs));
                assert_eq!(parse_retention(&format!("{secs}s")).ok(), Some(Some(kept)));
            }
            Ok(None) => assert_eq!(text.trim().to_ascii_lowercase(), "forever"),
            Err(refused) => {
                let sentence = refused.to_string();
                // The text given is clipped to the echo limit, then each control escaped (`\u{…}`,
                // at most ten characters).
                let bound = shiftwork_seams::echo::ECHO_LIMIT * 10 + 400;
                assert!(sentence.chars().count() <= bound, "a refusal's length is bounded");
                assert!(!sentence.chars().any(|c| c.is_control()), "{sentence:?}");
            }
        }
    }
    let found = private_key_in(data);
    let mut longer = data[..data.len().min(SECRET_HEAD_BYTES)].to_vec();
    longer.resize(SECRET_HEAD_BYTES, b' ');
    longer.extend_from_slice(data);
    if data.len() >= SECRET_HEAD_BYTES {
        assert_eq!(private_key_in(&longer), found, "bytes past the head change nothing");
    }
    let mut planted = b"-----BEGIN OPENSSH PRIVATE KEY-----\n".to_vec();
    planted.extend_from_slice(data);
    assert!(private_key_in(&planted).is_some(), "a key block at the start is found");
});
