//! `TapeNode::built_bytes` against what building the value allocates, counted by the allocator
//! (issue 27 item 7: the clock-out reserves it before it builds a checkpoint).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;
use shiftwork_json::{Json, Node, Tape};

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every call is forwarded to the system allocator with the caller's arguments; the counters
// are thread-local cells that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATED.with(|a| a.set(a.get() + layout.size()));
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATED.with(|a| a.set(a.get() + new_size));
        }
        // SAFETY: as for `dealloc`, `new_size` the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("0".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"a longer string of text\"".to_owned()),
        Just("\"esc\\n\"".to_owned()),
        Just("123456789012345678901234567890".to_owned()),
        Just("null".to_owned()),
    ];
    leaf.prop_recursive(5, 200, 30, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..30)
                .prop_map(|items| format!("[{}]", items.join(","))),
            proptest::collection::vec(("[a-z]{1,6}", inner), 0..30).prop_map(|members| {
                let members: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn built_bytes_is_what_building_allocates_issue27_item7(text in value()) {
        let tape = Tape::parse(text).unwrap();
        let estimate = tape.root().built_bytes();
        ALLOCATED.with(|a| a.set(0));
        COUNTING.with(|c| c.set(true));
        let built: Json = tape.root().to_json();
        COUNTING.with(|c| c.set(false));
        let allocated = ALLOCATED.with(Cell::get);
        drop(built);
        prop_assert!(allocated <= estimate + estimate / 4 + 64, "allocated {allocated}, estimated {estimate}");
        prop_assert!(estimate <= allocated + allocated / 4 + 64, "allocated {allocated}, estimated {estimate}");
    }
}
