//! Arbitrary argument texts through `work_plan_text`, the plain-form reader of `work_plan`'s arguments
//! (issue 16 item 1): never a panic, and whenever it answers, the answer is the general path's (parse
//! the text whole, then `work_plan`). What `PlainNodes` reads at the start of the text is valid JSON
//! and answered the same.
//!
//! Input layout: an even first byte sends the rest as the text (when it is UTF-8); an odd first byte
//! builds a plain-form text from the rest (ids, dependencies, priorities, `touches`, spacing), with
//! one byte of it possibly overwritten, so the reader gets past its first tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shiftwork_core::Answer;
use shiftwork_core::json::{self, Json};
use shiftwork_core::planner::{PlainNodes, work_plan_text};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = if mode % 2 == 0 {
        match std::str::from_utf8(rest) {
            Ok(text) => text.to_owned(),
            Err(_) => return,
        }
    } else {
        generate(rest)
    };
    // What `PlainNodes` reads at the start of a text is valid JSON, answered as the general path does
    // (the transport takes it unvalidated).
    if let Some(read) = PlainNodes::read(&text) {
        let object = &text[..read.end()];
        assert!(serde_json::from_str::<serde_json::Value>(object).is_ok(), "{object}");
        assert_eq!(general(object), Some(read.plan().to_answer()), "{object}");
    }
    let Some(fast) = work_plan_text(&text) else {
        return;
    };
    assert_eq!(Some(fast.to_answer()), general(&text), "{text}");
});

/// The general path's answer for `text`, when it reads the text as arguments with an array `nodes`.
fn general(text: &str) -> Option<Json> {
    match json::parse(text) {
        Ok(Json::Object(members)) if members.len() == 1 => {
            members.get("nodes").map(|nodes| shiftwork_core::work_plan(nodes).to_answer())
        }
        _ => None,
    }
}

/// A plain-form text: each node from up to four bytes (id and dependency, priority, touched path,
/// spacing); the last byte, when odd, overwrites one byte of the text with another of JSON's.
fn generate(bytes: &[u8]) -> String {
    const PATHS: [&str; 4] = ["src/a.rs", "./src//a.rs/", "b", "../x"];
    let mut nodes = Vec::new();
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let b = |k: usize| chunk.get(k).copied().unwrap_or(0);
        let sep = if b(3) & 1 == 1 { " \n" } else { "" };
        let mut members = vec![format!(r#""id":{sep}"n{}""#, b(0) % 16)];
        if b(0) & 0x10 != 0 && i > 0 {
            members.push(format!(r#""depends_on": ["n{}"]"#, usize::from(b(1)) % i));
        }
        if b(1) & 0x80 != 0 {
            members.push(format!(r#""priority": {}"#, i64::from(b(2) as i8)));
        }
        if b(3) & 0x6 != 0 {
            members.push(format!(r#""touches": ["{}"]"#, PATHS[usize::from(b(3) >> 4) % 4]));
        }
        nodes.push(format!("{{{sep}{}}}", members.join(",")));
    }
    let mut text = format!(r#"{{"nodes": [{}]}}"#, nodes.join(", ")).into_bytes();
    if let Some(&last) = bytes.last()
        && last & 1 == 1
        && !text.is_empty()
    {
        const JSON_BYTES: &[u8] = b"{}[],:\" \\nu0-9e.";
        let at = usize::from(last >> 1) * 7 % text.len();
        text[at] = JSON_BYTES[usize::from(last) % JSON_BYTES.len()];
    }
    String::from_utf8(text).unwrap_or_default()
}
