//! Arbitrary lines through the JSON-RPC reader of `shiftwork-mcp serve` (crates/mcp-adapter/src/wire.rs,
//! issue 12 item 12): never a panic; it accepts what `serde_json` accepts (within its nesting limit)
//! and refuses only with the reasons it names; the `arguments` text it hands a tool is the JSON object
//! `serde_json` reads, with the same keys in the same order; an id it recovers from a refused line is
//! one well-formed string or number; an arguments reader that reads what it claims leaves every
//! outcome as it was; the id finder answers the same however a line is cut into pieces.
//!
//! The module is included by path: it depends on nothing but `std` and `shiftwork-json`, so the
//! fuzz build does not pull the adapter's dependencies.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, missing_docs)]
#[path = "../../crates/mcp-adapter/src/wire.rs"]
mod wire;

fuzz_target!(|data: &[u8]| {
    // Also as the `params` of a call, so that the arguments path is reached often.
    check(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{text}}}}}"#
        );
        check(line.as_bytes());
    }
});

fn check(line: &[u8]) {
    // The id of a line too long to keep is found by walking it in pieces: any cut of the line finds
    // what the whole line shows (issue 27 item 15).
    let whole = wire::recover_id(line);
    for cut in [1usize, 2, 3, 7, 64] {
        let mut finder = wire::IdFinder::new();
        for piece in line.chunks(cut) {
            finder.feed(piece);
        }
        assert_eq!(finder.finish(), whole, "pieces of {cut}");
    }
    // A reader that reads what it claims (here: an empty object) changes nothing of the outcome.
    let empty = |text: &str| text.starts_with("{}").then(|| (2, Vec::new()));
    assert_eq!(
        format!("{:?}", wire::decode(line)),
        format!("{:?}", wire::decode_with(line, &mut |text| empty(text))),
    );
    let serde = serde_json::from_slice::<serde_json::Value>(line);
    match wire::decode(line) {
        Ok(None) => {
            assert!(
                line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')),
                "only a blank line is no message"
            );
        }
        Ok(Some(decoded)) => {
            if let Err(e) = &serde {
                // The reader takes numbers beyond a double outside `arguments` (they are not read), and
                // nests one level deeper than serde's limit.
                let e = e.to_string();
                assert!(
                    e.contains("number out of range") || e.contains("recursion limit"),
                    "accepted what serde refuses: {e}"
                );
            }
            if let wire::Message::Request { params, .. } | wire::Message::Notification { params, .. } = decoded
                && let Some(Ok(arguments)) = params.arguments
                && arguments.beyond_double.is_none()
            {
                let map: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(arguments.text).expect("the arguments text is an object serde reads");
                let mut first_seen: Vec<&str> = Vec::new();
                for key in &arguments.keys {
                    if !first_seen.contains(&key.as_ref()) {
                        first_seen.push(key);
                    }
                }
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                assert_eq!(first_seen, keys);
            }
        }
        Err(refusal) => {
            if refusal.code == wire::PARSE_ERROR && serde.is_ok() {
                assert!(
                    refusal.message.contains("deeper than") || refusal.message.contains("surrogate"),
                    "refused what serde accepts: {}",
                    refusal.message
                );
            }
            if let Some(id) = &refusal.id {
                let value: serde_json::Value = serde_json::from_str(id).expect("a recovered id is JSON");
                assert!(value.is_string() || value.is_number(), "{id}");
            }
        }
    }
}
