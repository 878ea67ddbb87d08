//! Configuration (§2): blank values, `~` expansion, and relative directories (WL-5 … WL-9).

use std::path::PathBuf;

use shiftwork_worklog::Config;

/// WL-8 (DV-17): a blank value — empty or W only, including U+001C–U+001F, which Rust's `trim` keeps —
/// is unset for both settings.
#[test]
fn wl8_blank_values_are_unset() {
    for blank in ["", " ", "\t\n", "\u{1C}", "\u{A0}\u{3000}"] {
        let c = Config::builder()
            .dir(blank)
            .pattern(blank)
            .home("/home/me")
            .build();
        assert_eq!(c, Config::default(), "{blank:?}");
    }
}

/// WL-9 (DV-20): a non-blank directory is used as given except a leading `~` alone or before `/`,
/// replaced by a non-blank HOME; `~user` is never expanded.
#[test]
fn wl9_home_expansion() {
    let cases = [
        ("~", Some("/home/me"), "/home/me"),
        ("~/notes/log", Some("/home/me"), "/home/me/notes/log"),
        ("~user/notes", Some("/home/me"), "~user/notes"),
        ("~", None, "~"),
        ("~/x", Some(" "), "~/x"),
        ("/abs/~/x", Some("/home/me"), "/abs/~/x"),
        (" spaced dir ", Some("/home/me"), " spaced dir "),
        ("relative/dir", None, "relative/dir"),
    ];
    for (value, home, expected) in cases {
        let c = home
            .map_or(Config::builder().dir(value), |h| {
                Config::builder().dir(value).home(h)
            })
            .build();
        assert_eq!(
            c.dir,
            Some(PathBuf::from(expected)),
            "{value:?} with HOME {home:?}"
        );
    }
}

/// WL-6, WL-11: the pattern is kept verbatim (no trimming), including surrounding whitespace.
#[test]
fn wl6_pattern_kept_verbatim() {
    let c = Config::builder().pattern(r" \.md$").build();
    assert_eq!(c.pattern.as_deref(), Some(r" \.md$"));
}
