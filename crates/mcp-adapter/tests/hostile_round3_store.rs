//! The third hostile round (issue 34) on the contracts store's files, the pointers and the view,
//! through the real binary, one test per class:
//!
//! - your own past (item 2): a `-wal` of the store's own past, restored beside the newer database, is
//!   refused by `call`, `watch --once`, and a server over stdio and HTTP, naming the file, with every
//!   byte as it was. PostgreSQL keeps no log beside a file: the class is SQLite's alone.
//! - secrets by content, not only by name (item 12): the credential names the round found and a
//!   private key under an innocent name are refused as pointers, over stdio and HTTP, on SQLite and
//!   PostgreSQL, quoting nothing of the file.
//! - a promise that regressed (item 13): `watch --once` of a store that does not exist yet prints the
//!   view and exits 0; a source that cannot be read is named on stderr (exit 1).
//! - someone else's file (item 14): running as root, a root-owned store is read by another user
//!   (`setpriv` to `nobody`), by `call` and `watch --once`, and written by nobody; a store of another
//!   user is refused to a writer.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::{Binary, HttpServer, add_token};

/// Every file of `dir` (not below it) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.file_type().unwrap().is_file().then(|| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
        })
        .collect()
}

/// `<dir>/ws` holding `a.txt`.
fn workspace(dir: &Path) -> PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), b"a\n").unwrap();
    ws
}

/// `shiftwork-mcp ARGS` with `HOME` set to `home`.
fn run(home: &Path, args: &[&str]) -> Output {
    support::run(args, &[("HOME", home.to_str().unwrap())])
}

/// The JSON answer `call` printed.
fn answer(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn dispatch_args(ws: &Path, title: &str, pointers: &[&str]) -> String {
    json!({"requester_agent": "alice", "target_agent": "bob", "title": title,
           "workspace_root": ws, "pointers": pointers})
    .to_string()
}

/// A tool's answer from a `tools/call` response.
fn tool_answer(response: &Value) -> Value {
    response["result"]["structuredContent"].clone()
}

fn wal_of(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", db.display()))
}

/// Issue 34 item 2 (your own past) through the binary: a server over stdio dispatches one contract;
/// its log is copied (a backup of the directory while the server runs); three more follow and the
/// server exits, folding them in. The copied log, restored beside the database, is refused by `call`
/// (a reading and a writing tool), by `watch --once` (exit 1, the file named on stderr) and by a
/// server over HTTP, each naming `contracts.db-wal`, and no byte of the directory changes. Before,
/// every command replayed it and the three later contracts vanished.
#[test]
fn issue34_item2_a_log_of_the_stores_own_past_is_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let ws = workspace(dir.path());
    let db = dir.path().join("contracts.db");
    let db_arg = db.to_str().unwrap();
    let mut server = Binary::serve(
        &["--tools", "contracts", "--contracts-db", db_arg],
        &[("AGENT_NAME", "alice"), ("HOME", home.to_str().unwrap())],
    );
    server.initialize();
    let mut dispatch = |title: &str| {
        let r = server.request(
            "tools/call",
            json!({"name": "dispatch_contract", "arguments": {"target_agent": "bob", "title": title,
                   "workspace_root": ws, "pointers": ["a.txt"]}}),
        );
        assert_eq!(tool_answer(&r)["ok"], true, "{r}");
    };
    dispatch("copied");
    let stale = std::fs::read(wal_of(&db)).unwrap();
    for title in ["later 1", "later 2", "later 3"] {
        dispatch(title);
    }
    let (status, _, err) = server.close();
    assert!(status.success(), "{err}");
    // A writer that closes folds the log into the file (the server leaves it to the next opener).
    drop(
        shiftwork_contracts::SqliteStore::open(
            &db,
            shiftwork_contracts::SqliteOptions::default(),
            std::sync::Arc::new(shiftwork_seams::SystemClock::new()),
            &shiftwork_seams::OsFs,
        )
        .unwrap(),
    );
    assert!(!wal_of(&db).exists(), "the log was folded in");
    std::fs::write(wal_of(&db), &stale).unwrap();
    let before = snapshot(dir.path());
    let refused = |what: &str, text: &str| {
        assert!(
            text.contains("contracts.db-wal") && text.contains("older than the database"),
            "{what}: {text}"
        );
    };
    for args in [
        vec!["call", "inspect_mesh_state", "{}", "--contracts-db", db_arg],
        vec![
            "call",
            "dispatch_contract",
            &dispatch_args(&ws, "more", &[]),
            "--contracts-db",
            db_arg,
        ],
    ] {
        let out = run(home, &args);
        let v = answer(&out);
        assert_eq!(v["error"]["code"], "STORE_UNAVAILABLE", "{args:?}: {v}");
        refused(args[1], v["error"]["message"].as_str().unwrap());
        assert_eq!(snapshot(dir.path()), before, "{args:?}: every byte as it was");
    }
    let out = run(home, &["watch", "--once", "--contracts-db", db_arg]);
    assert_eq!(out.status.code(), Some(1));
    refused("watch stderr", &String::from_utf8_lossy(&out.stderr));
    refused("watch stdout", &String::from_utf8_lossy(&out.stdout));
    assert_eq!(snapshot(dir.path()), before, "watch: every byte as it was");
    // Over HTTP.
    let tokens = dir.path().join("tokens");
    let token = add_token(&tokens, "alice");
    let before = snapshot(dir.path());
    let http = HttpServer::start(
        dir.path(),
        &[
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--contracts-db",
            db_arg,
        ],
        &[("HOME", home.to_str().unwrap())],
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "inspect_mesh_state", "arguments": {}}});
    let reply = http.post(Some(&token), &[], &body.to_string());
    let v: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(tool_answer(&v)["error"]["code"], "STORE_UNAVAILABLE", "{v}");
    refused("http", tool_answer(&v)["error"]["message"].as_str().unwrap());
    drop(http);
    assert_eq!(snapshot(dir.path()), before, "http: every byte as it was");
    // Moved aside, every contract is there.
    std::fs::remove_file(wal_of(&db)).unwrap();
    let v = answer(&run(
        home,
        &["call", "inspect_mesh_state", "{}", "--contracts-db", db_arg],
    ));
    assert_eq!(v["counts"]["SUBMITTED"], 4, "{v}");
}

/// Issue 34 item 12 (secrets by content, not only by name) through the binary, over stdio (`call`)
/// and HTTP, on SQLite and PostgreSQL: each name the round found accepted is refused with its pattern,
/// and an OpenSSH key, an RSA key and a service account's key under innocent names are refused by what
/// they hold; no answer carries a byte of a key, and nothing is stored.
#[test]
fn issue34_item12_secrets_are_refused_as_pointers_by_name_and_content_on_every_transport_and_store() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let ws = workspace(dir.path());
    let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
    let pem = |label: &str| format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n");
    let names = shiftwork_contracts::testing::CREDENTIAL_NAMES;
    for (name, _) in &names {
        std::fs::write(ws.join(name), b"secret\n").unwrap();
    }
    let contents = [
        ("notes.txt", pem("OPENSSH PRIVATE KEY"), "OpenSSH private key"),
        (
            "deploy.yaml",
            format!(
                "tls:\n  key: |\n    {}",
                pem("RSA PRIVATE KEY").replace('\n', "\n    ")
            ),
            "PEM private key",
        ),
        (
            "project-7f3a.json",
            format!(
                "{{\"type\": \"service_account\", \"private_key\": \"{}\"}}",
                pem("PRIVATE KEY").replace('\n', "\\n")
            ),
            "service account key",
        ),
    ];
    for (name, text, _) in &contents {
        std::fs::write(ws.join(name), text).unwrap();
    }
    let mut cases: Vec<(&str, &str, Option<&str>)> = names.iter().map(|(n, p)| (*n, *p, None)).collect();
    cases.extend(contents.iter().map(|(n, _, kind)| (*n, *kind, Some(*kind))));
    let check = |transport: &str, path: &str, pattern: &str, kind: Option<&str>, v: &Value| {
        assert_eq!(v["error"]["code"], "POINTER_REFUSED", "{transport} {path}: {v}");
        assert_eq!(
            v["error"]["details"],
            json!({"path": path, "reason": "SENSITIVE_FILE", "pattern": pattern}),
            "{transport} {path}"
        );
        if let Some(kind) = kind {
            let message = v["error"]["message"].as_str().unwrap();
            let article = if kind.starts_with("OpenSSH") { "an" } else { "a" };
            assert!(
                message.contains(&format!("its first bytes are {article} {kind}")),
                "{message}"
            );
        }
        assert!(
            !v.to_string().contains(body),
            "{transport} {path}: a key is quoted: {v}"
        );
    };
    let mut stores = vec![dir.path().join("contracts.db").display().to_string()];
    let pg = support::postgres_url()
        .filter(|_| cfg!(feature = "postgres"))
        .map(|url| support::PgSchema::new(&url));
    if let Some(schema) = &pg {
        stores.push(schema.location.clone());
    }
    let tokens = dir.path().join("tokens");
    let token = add_token(&tokens, "alice");
    for store in &stores {
        for (path, pattern, kind) in &cases {
            let out = run(
                home,
                &[
                    "call",
                    "dispatch_contract",
                    &dispatch_args(&ws, "t", &["a.txt", path]),
                    "--contracts-db",
                    store,
                ],
            );
            check("stdio", path, pattern, *kind, &answer(&out));
        }
        let http = HttpServer::start(
            dir.path(),
            &["--auth-tokens", tokens.to_str().unwrap(), "--contracts-db", store],
            &[("HOME", home.to_str().unwrap())],
        );
        for (path, pattern, kind) in &cases {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "dispatch_contract", "arguments": {"target_agent": "bob", "title": "t",
                "workspace_root": ws, "pointers": ["a.txt", path]}}});
            let reply = http.post(Some(&token), &[], &body.to_string());
            let v: Value = serde_json::from_str(&reply.body).unwrap();
            check("http", path, pattern, *kind, &tool_answer(&v));
        }
        drop(http);
        let v = answer(&run(
            home,
            &["call", "inspect_mesh_state", "{}", "--contracts-db", store],
        ));
        assert_eq!(v["total_returned"], 0, "{store}: nothing stored: {v}");
    }
    drop(pg);
}

/// Issue 34 item 13 (a promise that regressed): `watch --once` pointed at a contracts store that does
/// not exist yet — by `--contracts-db` or `SHIFTWORK_CONTRACTS_DB` — prints the view with the empty
/// queue and a note, writes nothing on stderr, creates nothing and exits 0 (before: exit 1, silently).
/// A source that really cannot be read exits 1 and names it on stderr: a missing checkpoint, a file
/// that is no contracts store.
#[test]
fn issue34_item13_watch_once_of_a_store_not_made_yet_prints_the_view_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let db = dir.path().join("sub").join("contracts.db");
    let db_arg = db.to_str().unwrap();
    for out in [
        support::run(&["watch", "--once", "--contracts-db", db_arg], &[("HOME", home)]),
        support::run(
            &["watch", "--once"],
            &[("HOME", home), ("SHIFTWORK_CONTRACTS_DB", db_arg)],
        ),
    ] {
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{text}{err}");
        assert_eq!(err, "", "nothing on stderr");
        assert!(
            text.contains(&format!(
                "contracts · {db_arg}\n  no contracts store at {db_arg} yet"
            )) && text.contains("  0 SUBMITTED, 0 CLAIMED"),
            "{text}"
        );
        assert!(!db.parent().unwrap().exists(), "nothing created");
    }
    // Sources that cannot be read: each named on stderr, one line, exit 1.
    let missing = dir.path().join("missing.json");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"my notes\n".repeat(20)).unwrap();
    let (missing, notes) = (missing.to_str().unwrap(), notes.to_str().unwrap());
    for (args, line, why) in [
        (
            vec!["--contracts-db", db_arg, "--checkpoint", missing],
            format!("shiftwork-mcp: watch: checkpoint {missing}: "),
            "checkpoint unreadable",
        ),
        (
            vec!["--contracts-db", notes],
            format!("shiftwork-mcp: watch: contracts store {notes}: "),
            "not an SQLite database",
        ),
    ] {
        let out = support::run(&[&["watch", "--once"][..], &args].concat(), &[("HOME", home)]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(&line) && err.contains(why), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one source: {err}");
    }
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `shiftwork-mcp ARGS` as the user `nobody`, with `HOME` at `home`.
fn run_as_nobody(home: &Path, args: &[&str]) -> Output {
    std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .args(args)
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("setpriv runs")
}

/// Issue 34 item 14 (someone else's file) through the binary. Running as root: a store root made
/// (0644, in a 0755 directory) is read by `nobody` — `call inspect_mesh_state` answers its contracts,
/// `watch --once` shows them and exits 0 (before: "belongs to another user (uid 0)") — and a writing
/// tool run by `nobody` is refused as read-only, with no byte changed; a store of another user is
/// refused to root's writer, naming the owner and the fix. Without root there is no other user's file
/// to make: the rule itself is tested in the library.
#[test]
fn issue34_item14_a_root_owned_store_is_read_by_another_user_and_written_by_none() {
    if effective_uid() != 0 {
        eprintln!("skipped: not root, so no store of another user can be made (the library tests the rule)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    chmod(dir.path(), 0o755);
    let ws = workspace(dir.path());
    let db = dir.path().join("contracts.db");
    let db_arg = db.to_str().unwrap();
    for title in ["one", "two"] {
        let v = answer(&run(
            home,
            &[
                "call",
                "dispatch_contract",
                &dispatch_args(&ws, title, &["a.txt"]),
                "--contracts-db",
                db_arg,
            ],
        ));
        assert_eq!(v["ok"], true, "{v}");
    }
    chmod(&db, 0o644);
    let before = snapshot(dir.path());
    let out = run_as_nobody(
        home,
        &["call", "inspect_mesh_state", "{}", "--contracts-db", db_arg],
    );
    let v = answer(&out);
    assert_eq!(v["counts"]["SUBMITTED"], 2, "{v}");
    let out = run_as_nobody(home, &["watch", "--once", "--contracts-db", db_arg]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("  2 SUBMITTED"), "{text}");
    let out = run_as_nobody(
        home,
        &[
            "call",
            "dispatch_contract",
            &dispatch_args(&ws, "three", &[]),
            "--contracts-db",
            db_arg,
        ],
    );
    let v = answer(&out);
    assert_eq!(v["error"]["code"], "STORE_UNAVAILABLE", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("read-only"),
        "{v}"
    );
    assert_eq!(snapshot(dir.path()), before, "nobody wrote nothing");
    // Another user's store, opened by root to write: refused, left as it was.
    std::os::unix::fs::chown(&db, Some(65534), Some(65534)).unwrap();
    let before = snapshot(dir.path());
    let v = answer(&run(
        home,
        &[
            "call",
            "dispatch_contract",
            &dispatch_args(&ws, "three", &[]),
            "--contracts-db",
            db_arg,
        ],
    ));
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("belongs to another user (uid 65534)") && message.contains("read-only"),
        "{v}"
    );
    assert_eq!(snapshot(dir.path()), before);
}
