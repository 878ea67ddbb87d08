//! CT-169 `contracts_transition`: arbitrary command sequences and JSON inputs (pointer lists,
//! `contract_schema`, `structured_output`, every other argument) through the facade over
//! `MemoryStore` and `MemFs`, with clock moves and sweeps between them. Invariants: nothing panics,
//! every answer is an `ok` object or a refusal with a code of Appendix B, and CT-27 holds after every
//! step.
#![no_main]

use std::sync::Arc;

use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{Contracts, ContractsConfig, DefaultAgent, MemoryStore, RefusalCode, SeededIdSource};
use libfuzzer_sys::fuzz_target;
use shiftwork_seams::{ManualClock, MemFs};
use serde_json::{Map, Value};


fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let clock = ManualClock::new(chrono::DateTime::from_timestamp_millis(1_767_225_600_000).unwrap());
    let fs = MemFs::new();
    fs.write_file("/w/src/lib.rs", b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    fs.write_file("/w/README.md", b"# Demo\n");
    fs.write_file("/w/.env", b"K=1\n");
    fs.symlink("/etc/passwd", "/w/out");
    let store = Arc::new(MemoryStore::new(Arc::new(clock.clone())));
    let config = ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/w"])).build().unwrap();
    let c = Contracts::builder(store.clone()).fs(Arc::new(fs.clone())).ids(Arc::new(SeededIdSource::new(1))).config(config).build();
    let bob = DefaultAgent::from_value(Some("bob"), "AGENT_NAME");
    let mut ids: Vec<String> = Vec::new();
    // One step per line: `<tool digit><json object>`; `+<ms>` moves the clock; `s` sweeps; `e` edits
    // src/lib.rs.
    for line in text.lines().take(64) {
        let mut chars = line.chars();
        match chars.next() {
            Some('+') => {
                let ms: i64 = chars.as_str().parse().unwrap_or(0);
                clock.advance(std::time::Duration::from_millis(ms.clamp(0, 40 * 86_400_000) as u64));
            }
            Some('s') => {
                c.sweep(shiftwork_seams::Clock::now(&clock)).unwrap();
            }
            Some('e') => fs.write_file("/w/src/lib.rs", chars.as_str().as_bytes()),
            Some(d) if d.is_ascii_digit() => {
                let tools = &shiftwork_contracts::args::TOOLS;
                let tool = tools[d.to_digit(10).unwrap_or(0) as usize % tools.len()].name;
                let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(chars.as_str()) else { continue };
                // `$n` stands for the n-th contract id seen, so the fuzzer reaches real records.
                if let Some(Value::String(s)) = args.get("contract_id")
                    && let Some(n) = s.strip_prefix('$').and_then(|n| n.parse::<usize>().ok())
                    && !ids.is_empty()
                {
                    args.insert("contract_id".into(), Value::String(ids[n % ids.len()].clone()));
                }
                let answer = shiftwork_contracts::args::call(&c, tool, &args, &bob);
                check(&answer);
                if let Some(id) = answer.get("contract_id").and_then(Value::as_str) {
                    ids.push(id.to_owned());
                }
                if let Some(id) = answer.pointer("/contract/contract_id").and_then(Value::as_str) {
                    ids.push(id.to_owned());
                }
            }
            _ => {}
        }
        let report = c.check_integrity().unwrap();
        assert!(report.is_clean(), "{:?}", report.violations);
    }
});

fn check(answer: &Value) {
    let obj: &Map<String, Value> = answer.as_object().expect("an object");
    match obj.get("ok") {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            let code = answer["error"]["code"].as_str().expect("a code");
            let known = RefusalCode::ALL.iter().find(|c| c.as_str() == code).expect("a code of Appendix B");
            let keys: Vec<&str> = answer["error"]["details"].as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, known.detail_keys(), "details of {code}");
        }
        _ => panic!("no ok field: {answer}"),
    }
}
