//! The Rust API of §17: names, serialization and `Display` (WL-87 … WL-90).

use std::time::Duration;

use serde_json::json;
use shiftwork_worklog::core::{Checklist, Plan, find_checklist, plan_append};
use shiftwork_worklog::{
    AppendResult, AppendStatus, CheckResult, CheckStatus, Config, LOCK_FILE_NAME, LOCK_TIMEOUT, Worklog,
    WorklogError,
};

/// WL-87: the normative items exist with their names and meanings.
#[test]
fn wl87_api_names() {
    assert_eq!(LOCK_FILE_NAME, ".worklog.lock");
    assert_eq!(LOCK_TIMEOUT, Duration::from_secs(10));
    let list: Checklist = find_checklist("x\n\t* [ ] a\n").unwrap();
    assert_eq!(
        list,
        Checklist {
            first_line: 1,
            last_line: 1,
            indent: "\t".into(),
            bullet: '*',
            items: 1
        }
    );
    let config = Config {
        dir: Some("/x".into()),
        pattern: None,
    };
    let log: Worklog<shiftwork_seams::MemFs> = Worklog::new(config.clone(), shiftwork_seams::MemFs::new());
    assert_eq!(log.config(), &config);
}

/// WL-88: `Plan::Insert` is a splice at a character boundary whose insertion holds the line once.
#[test]
fn wl88_plan_insert_is_a_splice() {
    let text = "é\u{2028}\n- [x] ä";
    let Plan::Insert {
        created,
        line,
        offset,
        insertion,
    } = plan_append(text, "ü")
    else {
        panic!("expected an insertion")
    };
    assert!(!created && text.is_char_boundary(offset));
    assert_eq!(
        (line.as_str(), offset, insertion.as_str()),
        ("- [x] ü", text.len(), "\n- [x] ü")
    );
    assert_eq!(
        plan_append("- [x] ü\n", "ü"),
        Plan::Duplicate {
            line: "- [x] ü".into()
        }
    );
}

/// WL-89: results serialize to exactly the four keys in order, `None` as `null`; statuses to their
/// snake_case names; errors display their §14 text.
#[test]
fn wl89_serialization_and_display() {
    let append = AppendResult {
        status: AppendStatus::DryRun,
        file: Some("a.md".into()),
        line: None,
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_string(&append).unwrap(),
        r#"{"status":"dry_run","file":"a.md","line":null,"message":"m"}"#
    );
    let check = CheckResult {
        status: CheckStatus::NoChecklist,
        file: None,
        items: Some(3),
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_string(&check).unwrap(),
        r#"{"status":"no_checklist","file":null,"items":3,"message":"m"}"#
    );
    let statuses = [
        (AppendStatus::Written, "written"),
        (AppendStatus::Created, "created"),
        (AppendStatus::Duplicate, "duplicate"),
        (AppendStatus::DryRun, "dry_run"),
        (AppendStatus::Empty, "empty"),
        (AppendStatus::NoDir, "no_dir"),
        (AppendStatus::NoFile, "no_file"),
    ];
    for (status, name) in statuses {
        assert_eq!(serde_json::to_value(status).unwrap(), json!(name));
        assert_eq!(status.as_str(), name);
    }
    for (status, name) in [
        (CheckStatus::Ok, "ok"),
        (CheckStatus::NoDir, "no_dir"),
        (CheckStatus::NoFile, "no_file"),
        (CheckStatus::NoChecklist, "no_checklist"),
    ] {
        assert_eq!(serde_json::to_value(status).unwrap(), json!(name));
        assert_eq!(status.as_str(), name);
    }
    let errors = [
        (
            WorklogError::NotUtf8 { file: "a.md".into() },
            "\"a.md\" is not valid UTF-8",
        ),
        (
            WorklogError::Read {
                file: "a.md".into(),
                reason: "Permission denied".into(),
            },
            "cannot read \"a.md\": Permission denied",
        ),
        (
            WorklogError::Write {
                file: "a.md".into(),
                reason: "No space left on device".into(),
            },
            "cannot write \"a.md\": No space left on device",
        ),
        (
            WorklogError::LockTimeout { file: "a.md".into() },
            "cannot write \"a.md\": timed out waiting for another append to finish",
        ),
        (
            WorklogError::List {
                reason: "Permission denied".into(),
            },
            "cannot list the worklog directory: Permission denied",
        ),
        (
            WorklogError::Pattern,
            "the configured file pattern is not a valid regular expression",
        ),
    ];
    for (error, text) in errors {
        assert_eq!(error.to_string(), text);
    }
}

/// WL-90: `Worklog` is `Send + Sync`, and `append`/`check` take `&self` from many threads at once.
#[test]
fn wl90_send_sync_and_shared() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Worklog<shiftwork_seams::OsFs>>();
    assert_send_sync::<Worklog<shiftwork_seams::MemFs>>();
    let fs = crate::support::memfs_with(b"- [x] a\n");
    let log = crate::support::log(&fs);
    std::thread::scope(|s| {
        for t in 0..8 {
            let log = &log;
            s.spawn(move || {
                assert_eq!(
                    log.append(&format!("thread {t}"), false).unwrap().status,
                    AppendStatus::Written
                );
                assert_eq!(log.check().unwrap().status, CheckStatus::Ok);
            });
        }
    });
    assert_eq!(log.check().unwrap().items, Some(9));
}
