//! The Rust API of §17: names, serialization and `Display` (WL-87 … WL-90).

use std::time::Duration;

use serde_json::json;
use shiftwork_worklog::NotWritten;
use shiftwork_worklog::core::{AppendPlan, Checklist, find_checklist, plan_append};
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

/// WL-88: `AppendPlan::Insert` is a splice at a character boundary whose insertion holds the line once.
#[test]
fn wl88_plan_insert_is_a_splice() {
    let text = "é\u{2028}\n- [x] ä";
    let AppendPlan::Insert {
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
        AppendPlan::Duplicate {
            line: "- [x] ü".into()
        }
    );
}

/// Issue 28 item 5: an `Ok` answer says whether the item was written. `written()` is true for
/// `written` and `created` only; every other status is `NotWritten` with its reason, which
/// `not_written()` gives, and which serializes to the same name as before.
#[test]
fn issue28_not_written_outcomes_say_so_and_why() {
    let cases = [
        (AppendStatus::Written, true, None),
        (AppendStatus::Created, true, None),
        (NotWritten::Duplicate.into(), false, Some(NotWritten::Duplicate)),
        (NotWritten::DryRun.into(), false, Some(NotWritten::DryRun)),
        (NotWritten::Empty.into(), false, Some(NotWritten::Empty)),
        (NotWritten::NoDir.into(), false, Some(NotWritten::NoDir)),
        (NotWritten::NoFile.into(), false, Some(NotWritten::NoFile)),
    ];
    for (status, written, why) in cases {
        let result = AppendResult {
            status,
            file: None,
            line: None,
            message: String::new(),
        };
        assert_eq!(
            (result.written(), status.is_written()),
            (written, written),
            "{status:?}"
        );
        assert_eq!(result.not_written(), why, "{status:?}");
        if let Some(why) = why {
            assert_eq!(serde_json::to_value(why).unwrap(), json!(status.as_str()));
            assert_eq!(why.as_str(), status.as_str());
        }
    }
    // Through the service: a missing directory and a log not started are `Ok`, and not written.
    let unset = Worklog::new(Config::default(), shiftwork_seams::MemFs::new());
    assert_eq!(
        unset.append("a", false).unwrap().not_written(),
        Some(NotWritten::NoDir)
    );
    let empty_dir = shiftwork_seams::MemFs::new();
    empty_dir.make_dirs("/log");
    let no_file = Worklog::new(Config::builder().dir("/log").build(), empty_dir);
    assert_eq!(
        no_file.append("a", false).unwrap().not_written(),
        Some(NotWritten::NoFile)
    );
}

/// WL-89: results serialize to exactly the four keys in order, `None` as `null`; statuses to their
/// snake_case names; errors display their §14 text.
#[test]
fn wl89_serialization_and_display() {
    let append = AppendResult {
        status: AppendStatus::NotWritten(NotWritten::DryRun),
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
        (AppendStatus::NotWritten(NotWritten::Duplicate), "duplicate"),
        (AppendStatus::NotWritten(NotWritten::DryRun), "dry_run"),
        (AppendStatus::NotWritten(NotWritten::Empty), "empty"),
        (AppendStatus::NotWritten(NotWritten::NoDir), "no_dir"),
        (AppendStatus::NotWritten(NotWritten::NoFile), "no_file"),
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
