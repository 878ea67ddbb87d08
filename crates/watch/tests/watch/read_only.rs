//! A view never writes (issue 15 item 4): every file is byte-identical after it, and a store that
//! does not exist is not created.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use shiftwork_contracts::{AgentId, Contracts, DispatchRequest, SqliteOptions, SqliteStore};
use shiftwork_seams::{OsFs, SystemClock};
use shiftwork_watch::gather::StoreLocation;
use shiftwork_watch::{Sources, WatchOptions};

use crate::fixture;

/// Every file under `dir` with its bytes.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

/// Issue 15 item 4: the checkpoint, its ledger and the SQLite store are byte-identical after a view
/// has read them (several times, as the live view does), and no file appears or disappears.
#[test]
fn a_view_leaves_every_file_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".shiftwork")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join(".shiftwork/checkpoint.json"), fixture::checkpoint()).unwrap();
    std::fs::write(
        root.join(".shiftwork/checkpoint.json.log.jsonl"),
        fixture::ledger(),
    )
    .unwrap();
    std::fs::write(root.join("src/parser.rs"), "pub fn parse() {}\n").unwrap();
    let db = root.join("contracts.db");
    {
        let clock = Arc::new(SystemClock::new());
        let store = SqliteStore::open(&db, SqliteOptions::default(), clock.clone(), &OsFs).unwrap();
        let queue = Contracts::builder(Arc::new(store)).real_fs().real_ids().build();
        for agent in ["bob", "carol"] {
            queue
                .dispatch(
                    &DispatchRequest::new(
                        AgentId::new("alice").unwrap(),
                        AgentId::new(agent).unwrap(),
                        "Review the parser diff",
                        root.display().to_string(),
                    )
                    .pointers(["src/parser.rs"]),
                )
                .unwrap();
        }
        queue.poll_next_task(&AgentId::new("bob").unwrap()).unwrap();
    }
    let before = files(root);
    let options = WatchOptions {
        checkpoints: vec![root.join(".shiftwork/checkpoint.json")],
        store: Some(StoreLocation::Sqlite(db.clone())),
        agent: None,
        hours: Some(fixture::HOURS.into()),
        zone: chrono_tz::UTC,
    };
    {
        let mut sources = Sources::new(&options, Arc::new(OsFs), Arc::new(SystemClock::new())).unwrap();
        for _ in 0..3 {
            let snapshot = sources.snapshot();
            assert!(shiftwork_watch::all_read(&snapshot), "{snapshot:?}");
            let c = snapshot.contracts.unwrap().body.unwrap();
            assert_eq!((c.claimed.len(), c.waiting.len()), (1, 1));
        }
    }
    let after = files(root);
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|name| before.get(*name) != after.get(*name))
        .collect();
    assert!(
        changed.is_empty(),
        "a view changed, created or removed {changed:?}"
    );
}

/// A store that does not exist yet is waited for, never created, and read as an empty queue with a
/// note saying so (issue 34 item 13: not a failure); an empty file (a store another process is
/// creating) is not initialised by the view; a file that is no contracts database is named.
#[test]
fn a_missing_or_foreign_store_is_never_created_or_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub/contracts.db");
    let body = |db: &Path| {
        let options = WatchOptions {
            checkpoints: Vec::new(),
            store: Some(StoreLocation::Sqlite(db.to_path_buf())),
            agent: None,
            hours: None,
            zone: chrono_tz::UTC,
        };
        let mut sources = Sources::new(&options, Arc::new(OsFs), Arc::new(SystemClock::new())).unwrap();
        sources.snapshot().contracts.unwrap().body
    };
    let read = |db: &Path| body(db).unwrap_err();
    let empty = body(&db).unwrap();
    assert_eq!(
        empty.note.as_deref(),
        Some(
            format!(
                "no contracts store at {} yet; the first call that writes creates it",
                db.display()
            )
            .as_str()
        )
    );
    assert!(empty.counts.iter().all(|c| c.count == 0) && !empty.counts.is_empty());
    assert!(!db.parent().unwrap().exists());
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, b"").unwrap();
    assert!(
        read(&db).starts_with(&format!(
            "the contracts store at {} cannot be read: ",
            db.display()
        )) && read(&db).contains("is empty, so it is not a contracts database"),
        "{}",
        read(&db)
    );
    assert_eq!(std::fs::read(&db).unwrap(), b"");
    std::fs::write(
        &db,
        b"not a database at all, just text that is long enough to be a header of one",
    )
    .unwrap();
    assert!(
        read(&db).contains("cannot be read") && read(&db).contains("not an SQLite database"),
        "{}",
        read(&db)
    );
}

/// Issue 34 item 13 (a promise that regressed): a view of a contracts store that does not exist yet
/// — the demo's and the README's first state — is complete: `once` prints the pane, with a note and
/// the counts of an empty queue, and reports no source unread (before: the view counted the store as
/// unread, and `watch --once` exited 1 with nothing on stderr). A source that really cannot be read
/// is named, one sentence each: a checkpoint, and a store refused.
#[test]
fn issue34_item13_a_store_that_does_not_exist_yet_is_an_empty_queue_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("contracts.db");
    let once = |checkpoints: Vec<std::path::PathBuf>| {
        let options = WatchOptions {
            checkpoints,
            store: Some(StoreLocation::Sqlite(db.clone())),
            agent: None,
            hours: None,
            zone: chrono_tz::UTC,
        };
        let mut text = Vec::new();
        let unread = shiftwork_watch::once(&options, false, &mut text).unwrap();
        (String::from_utf8(text).unwrap(), unread)
    };
    let (text, unread) = once(Vec::new());
    assert_eq!(unread, Vec::<String>::new(), "{text}");
    assert!(
        text.contains(&format!(
            "  no contracts store at {} yet; the first call that writes creates it\n  0 SUBMITTED, 0 CLAIMED",
            db.display()
        )),
        "{text}"
    );
    assert!(!db.exists(), "nothing created");
    let missing = dir.path().join("missing.json");
    let (_, unread) = once(vec![missing.clone()]);
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(
        unread[0].starts_with(&format!(
            "checkpoint {}: checkpoint unreadable",
            missing.display()
        )),
        "{unread:?}"
    );
    std::fs::write(&db, b"").unwrap();
    let (_, unread) = once(Vec::new());
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(
        unread[0].starts_with(&format!("contracts store {}: ", db.display()))
            && unread[0].contains("is empty"),
        "{unread:?}"
    );
}
