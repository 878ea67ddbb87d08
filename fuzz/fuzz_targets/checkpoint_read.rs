//! Arbitrary bytes through the checkpoint reader, the plan and the status (SW-47, SW-150): never a
//! panic, every answer an object whose first key is `result`, and a read document rewrites to a
//! fixed point (SW-14).
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use shiftwork_core::json::{self, Json};

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = shiftwork_core::checkpoint::parse_bytes(data) {
        let text = json::to_checkpoint_text(&doc);
        let again = json::to_checkpoint_text(&json::parse(&text).expect("written text parses"));
        assert_eq!(again, text);
    }
    let _ = json::ledger_facts(&String::from_utf8_lossy(data));
    let fs = seams::MemFs::new();
    fs.write_file("/r/.shiftwork/cp.json", data);
    let clock = seams::ManualClock::new(chrono::DateTime::UNIX_EPOCH);
    let env = shiftwork_core::Env::new(Arc::new(fs), Arc::new(clock), Arc::new(seams::MemHost::new(1, "h")));
    for answer in [
        shiftwork_core::plan_checkpoint(&env, "/r/.shiftwork/cp.json"),
        shiftwork_core::status(&env, "/r/.shiftwork/cp.json", Some("x")),
    ] {
        let first = answer.as_object().and_then(|o| o.keys().next().cloned());
        assert_eq!(first.as_deref(), Some("result"));
        assert!(matches!(answer.get("result"), Some(Json::String(_))));
    }
});
