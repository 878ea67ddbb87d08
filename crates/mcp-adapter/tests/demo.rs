//! The demo leaves a working setup (issue 31 item 3, issue 27 item 18): `demo --keep` ends with the
//! exact lines to go on in its directory, and every one of them — and every "Try next" line — works
//! as printed (exit 0, a non-empty answer); the lines that work anywhere create nothing, in the
//! working directory or in `HOME`; without `--keep` nothing is left anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::path::Path;
use std::process::Command;

/// Runs `line` with `sh -c` in `cwd` with a fresh `HOME` and the binary first on `PATH`.
fn sh(line: &str, cwd: &Path, home: &Path) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_shiftwork-mcp")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("sh")
        .args(["-c", line])
        .current_dir(cwd)
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("SHIFTWORK_CONTRACTS_DB")
        .env_remove("WORKLOG_DIR")
        .env_remove("AGENT_NAME")
        .output()
        .unwrap()
}

#[test]
fn every_line_the_demo_prints_works_as_printed() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = support::run(&["demo", "--keep"], &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (before, after) = text
        .split_once("Go on there; every line below works as printed:")
        .unwrap_or_else(|| panic!("no continuation lines: {text}"));
    let try_next: Vec<&str> = before
        .split_once("Try next:")
        .unwrap()
        .1
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("shiftwork-mcp"))
        .collect();
    assert!(try_next.len() >= 3, "{before}");
    for line in &try_next {
        let out = sh(line, elsewhere.path(), home.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{line} answered nothing");
    }
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "a Try next line created a file"
    );
    assert!(
        !home.path().join(".shiftwork").exists(),
        "a Try next line created ~/.shiftwork"
    );
    let lines: Vec<&str> = after.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let cd = lines[0];
    assert!(cd.starts_with("cd '"), "{cd}");
    let export = lines[1];
    assert!(export.starts_with("export "), "{export}");
    let kept = cd.trim_start_matches("cd '").trim_end_matches('\'').to_owned();
    for line in &lines[2..] {
        let out = sh(
            &format!("{cd} && {export} && {line}"),
            elsewhere.path(),
            home.path(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{line}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{line} answered nothing");
    }
    let joined = lines[2..].join("\n");
    for command in [
        "shiftwork_plan",
        "plan --checkpoint",
        "watch --once",
        "worklog",
        "poll_next_task",
    ] {
        assert!(
            joined.contains(command),
            "the continuation mentions {command}: {joined}"
        );
    }
    assert!(
        !home.path().join(".shiftwork").exists(),
        "nothing outside the demo's directory"
    );
    std::fs::remove_dir_all(kept).unwrap();
}

/// Every setting a demo gives its group has an environment variable, so the `export` line carries the
/// whole environment the demo used.
#[test]
fn every_demo_setting_can_be_exported() {
    let dir = tempfile::tempdir().unwrap();
    for group in shiftwork_mcp::groups::all() {
        for (setting, _) in (group.demo_settings)(dir.path()) {
            assert!(
                setting.env.is_some(),
                "{}: {} has no variable",
                group.name,
                setting.flag
            );
        }
    }
}
