//! The plain-text report of `--once` (issue 15 item 2).

use shiftwork_watch::report::render;

use crate::fixture::{mid_flight, options, sources};

/// Issue 15 `--once`: the same snapshot as plain text, without colours unless asked.
#[test]
fn the_report_of_the_mid_flight_job() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let plain = render(&snapshot, false);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/watch/screens/once.txt");
    if std::env::var_os("UPDATE_SCREENS").is_some() {
        std::fs::write(&path, &plain).unwrap();
    }
    assert_eq!(plain, std::fs::read_to_string(&path).unwrap(), "{plain}");
    assert!(!plain.contains('\u{1b}'), "no escape sequence without colour");
    let coloured = render(&snapshot, true);
    assert!(
        coloured.contains("\u{1b}[1;31m40s left\u{1b}[0m"),
        "the expiring lease is red"
    );
    let stripped = strip_ansi(&coloured);
    assert_eq!(stripped, plain, "colour changes nothing but colour");
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
