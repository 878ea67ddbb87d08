//! WL-99: arbitrary bytes (as a text when they are UTF-8) and an arbitrary description through the
//! pure core of `worklog`, checking every property of WL-98 — the core never panics, an insertion
//! removes back to the input and adds only the line breaks of §9, the new line holds no LF or CR, a
//! second append is a duplicate (unless the body ends inside an unclosed fence), `written` adds
//! exactly one item — and that the byte scanner agrees with the naive reference model of §5.
//!
//! Issue 6 calls this target `worklog_checklist`; the specification (WL-99) names it `worklog_core`,
//! which is the name used here.
//!
//! Input layout: the first byte splits the rest — `data[1..1 + k]` is the description, where `k` is
//! the first byte modulo the rest's length plus one, and the remainder is the file text.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/worklog/tests/worklog/model.rs"]
mod model;

#[path = "../../crates/worklog/tests/worklog/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let k = usize::from(split) % (rest.len() + 1);
    let (description, text) = rest.split_at(k);
    let description = String::from_utf8_lossy(description);
    match std::str::from_utf8(text) {
        Ok(text) => invariants::check_append(text, &description),
        // Bytes that are not UTF-8 never reach the core in the product (WL-21); the lossy text still
        // exercises it.
        Err(_) => invariants::check_append(&String::from_utf8_lossy(text), &description),
    }
});
