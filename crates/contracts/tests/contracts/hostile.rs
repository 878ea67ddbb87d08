//! Hostile input, one class per test (issue 12 items 2, 7, 11, 14; issue 16 item 4): workspace roots
//! outside the allowed roots or in system directories, the credential files people have, pointer files
//! that are not what their metadata says, `$ref` bombs and catastrophic patterns, read-only and
//! special store locations, and 10 MB argument values that must not come back whole.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{
    Contracts, ContractsConfig, MemoryStore, SeededIdSource, SqliteOptions, SqliteStore, StoreError,
};
use shiftwork_seams::{DirEntry, FileWriter, Fs, LockGuard, ManualClock, MemFs, Metadata, OsFs};

use crate::scenarios::{self, T0};

fn facade_over(fs: Arc<dyn Fs>, clock: &ManualClock, roots: &[&str]) -> Contracts {
    Contracts::builder(Arc::new(MemoryStore::new(Arc::new(clock.clone()))))
        .fs(fs)
        .ids(Arc::new(SeededIdSource::new(1)))
        .config(
            ContractsConfig::builder()
                .allowed_roots(AllowedRoots::new(roots.iter().map(PathBuf::from)))
                .build()
                .unwrap(),
        )
        .build()
}

fn call(c: &Contracts, tool: &str, args: Value) -> Value {
    shiftwork_contracts::args::call(c, tool, args.as_object().unwrap(), &Default::default())
}

fn dispatch(c: &Contracts, root: &str, pointers: &[&str]) -> Value {
    call(
        c,
        "dispatch_contract",
        json!({"requester_agent": "alice", "target_agent": "bob", "title": "t",
               "workspace_root": root, "pointers": pointers}),
    )
}

fn root_refused(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], "WORKSPACE_ROOT_INVALID", "{answer}");
    answer["error"]["details"]["reason"].as_str().unwrap().to_owned()
}

/// Issue 12 item 2: a root outside the allowed roots is refused naming the rule; `/proc`, `/sys`,
/// `/dev`, `/etc`, `/boot` and anything beneath them are refused even when an allowed root holds them,
/// also when reached through a symbolic link; nothing of such a file is echoed.
#[test]
fn issue12_workspace_roots_outside_the_allowed_roots_are_refused() {
    let fx = scenarios::fixture();
    let fs = fx.fs.clone();
    fs.write_file("/etc/shadow", b"root:$6$secret:19000:0:99999:7:::\n");
    fs.write_file("/proc/self/environ", b"AWS_SECRET_ACCESS_KEY=x\0");
    fs.write_file("/home/me/project/a.rs", b"fn a() {}\n");
    fs.make_dirs("/boot/efi");
    fs.make_dirs("/dev/shm");
    fs.make_dirs("/sys/kernel");
    fs.symlink("/etc", "/home/me/etc-link");
    fs.symlink("/proc/self", "/home/me/me");
    // Every allowed root listed, "/" included: the system directories stay refused.
    let c = facade_over(Arc::new(fs.clone()), &fx.clock, &["/", "/home/me"]);
    for (root, pointer) in [
        ("/etc", "shadow"),
        ("/proc/self", "environ"),
        ("/boot/efi", "x"),
        ("/dev/shm", "x"),
        ("/sys/kernel", "x"),
        ("/home/me/etc-link", "shadow"),
        ("/home/me/me", "environ"),
    ] {
        let answer = dispatch(&c, root, &[pointer]);
        assert_eq!(root_refused(&answer), "SYSTEM_DIRECTORY", "{root}: {answer}");
        let text = answer.to_string();
        assert!(
            !text.contains("root:$6$") && !text.contains("AWS_SECRET"),
            "nothing read: {text}"
        );
        assert!(
            text.contains("/proc, /sys, /dev, /etc, /boot"),
            "names the rule: {text}"
        );
    }
    // Outside the allowed roots.
    let c = facade_over(Arc::new(fs.clone()), &fx.clock, &["/home/me"]);
    let answer = dispatch(&c, "/w", &["src/lib.rs"]);
    assert_eq!(root_refused(&answer), "OUTSIDE_ALLOWED_ROOTS", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("inside one of the allowed roots: /home/me"),
        "{message}"
    );
    assert_eq!(dispatch(&c, "/home/me/project", &["a.rs"])["ok"], true);
    assert_eq!(
        dispatch(&c, "/home/me", &["project/a.rs"])["ok"],
        true,
        "the root itself"
    );
    // At every later verification the rule holds again: a root no longer allowed reads every pointer
    // refused (as one swapped for a link into a system directory would).
    let sent = dispatch(&c, "/home/me/project", &["a.rs"]);
    let id = sent["contract_id"].as_str().unwrap();
    let narrower = Contracts::builder(c.store().clone())
        .fs(Arc::new(fs.clone()))
        .ids(Arc::new(SeededIdSource::new(9)))
        .config(
            ContractsConfig::builder()
                .allowed_roots(AllowedRoots::new(["/srv"]))
                .build()
                .unwrap(),
        )
        .build();
    let verified = call(
        &narrower,
        "verify_contract",
        json!({"contract_id": id, "agent_id": "bob"}),
    );
    assert_eq!(verified["dirty_files"][0]["reason"], "PATH_REFUSED", "{verified}");
}

/// Issue 12 item 2: the credential files people actually have are refused as pointers and artifacts.
#[test]
fn issue12_credential_files_are_refused_as_pointers() {
    let fx = scenarios::fixture();
    for (path, pattern) in [
        (".cargo/credentials.toml", ".cargo/credentials*"),
        (".config/gh/hosts.yml", ".config/gh/hosts.yml"),
        (".vault-token", ".vault-token"),
        (".s3cfg", ".s3cfg"),
        (".boto", ".boto"),
        (".my.cnf", ".my.cnf"),
        (".netrc", ".netrc"),
        (".pgpass", ".pgpass"),
        (".terraformrc", ".terraformrc"),
        (".bash_history", "*_history"),
        (".docker/config.json", ".docker/config.json"),
        (".kube/config", ".kube/config"),
        (".aws/credentials", ".aws"),
        (".ssh/id_rsa", ".ssh"),
        (".gnupg/secring.gpg", ".gnupg"),
    ] {
        fx.fs.write_file(format!("/w/{path}"), b"secret\n");
        let c = facade_over(Arc::new(fx.fs.clone()), &fx.clock, &["/w"]);
        let answer = dispatch(&c, "/w", &[path]);
        assert_eq!(answer["error"]["code"], "POINTER_REFUSED", "{path}: {answer}");
        assert_eq!(
            answer["error"]["details"],
            json!({"path": path, "reason": "SENSITIVE_FILE", "pattern": pattern}),
            "{path}"
        );
    }
}

/// An `Fs` whose files say one size in their metadata and stream far more when read (as `/dev/zero`
/// or a file growing under the reader would), counting the bytes handed out; and whose `special`
/// path reads as a FIFO swapped in after its metadata was taken.
struct Lying {
    inner: MemFs,
    endless: PathBuf,
    special: PathBuf,
    handed_out: AtomicU64,
}

impl Fs for Lying {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_chunks(
        &self,
        path: &Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        if path == self.special {
            return Err(shiftwork_seams::not_regular_file());
        }
        if path != self.endless {
            return self.inner.read_chunks(path, chunk_size, sink);
        }
        let chunk = vec![b'z'; chunk_size.min(64 * 1024)];
        let mut total = 0u64;
        // 64 MiB in all: far more than any bound the verification may use.
        for _ in 0..1024 {
            self.handed_out.fetch_add(chunk.len() as u64, Ordering::SeqCst);
            total += chunk.len() as u64;
            sink(&chunk)?;
        }
        Ok(total)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.symlink_metadata(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.inner.list_dir(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        self.inner.create_new(path, mode)
    }
    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        self.inner.open_append(path, create)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        self.inner.lock(path, timeout)
    }
}

/// Issue 12 item 7: every pointer and artifact is read with the seam's non-blocking regular-file read
/// and within the limits: a file that streams more than its baseline is a size mismatch after at most
/// one chunk past the baseline, and a path that turns out not to be a regular file when opened is
/// `NOT_A_FILE`, not an I/O failure.
#[test]
fn issue12_pointer_files_are_read_within_bounds_and_only_when_regular() {
    let fx = scenarios::fixture();
    let lying = Arc::new(Lying {
        inner: fx.fs.clone(),
        endless: PathBuf::from("/w/src/lib.rs"),
        special: PathBuf::from("/w/README.md"),
        handed_out: AtomicU64::new(0),
    });
    // Dispatch through the honest file system, then verify through the lying one.
    let honest = facade_over(Arc::new(fx.fs.clone()), &fx.clock, &["/w"]);
    let sent = dispatch(&honest, "/w", &["src/lib.rs"]);
    let id = sent["contract_id"].as_str().unwrap().to_owned();
    let c = Contracts::builder(honest.store().clone())
        .fs(lying.clone())
        .ids(Arc::new(SeededIdSource::new(2)))
        .config(crate::support::config(false))
        .build();
    let verified = call(
        &c,
        "verify_contract",
        json!({"contract_id": id, "agent_id": "bob"}),
    );
    assert_eq!(
        verified["dirty_files"][0]["reason"], "SIZE_MISMATCH",
        "{verified}"
    );
    let read = lying.handed_out.load(Ordering::SeqCst);
    assert!(
        read <= 48 + 64 * 1024,
        "at most one chunk past the 48-byte baseline is read, not {read} bytes"
    );
    // A FIFO swapped in after the metadata: refused as not a file at dispatch.
    let answer = dispatch(&c, "/w", &["README.md"]);
    assert_eq!(
        answer["error"]["details"],
        json!({"path": "README.md", "reason": "NOT_A_FILE", "pattern": null}),
        "{answer}"
    );
}

/// A chain of `allOf`s with two refs to the level below, `levels` deep.
fn ref_bomb(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    defs.insert("l0".into(), json!({"type": "object"}));
    for i in 1..=levels {
        let below = format!("#/$defs/l{}", i - 1);
        defs.insert(
            format!("l{i}"),
            json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    json!({"$defs": defs, "$ref": format!("#/$defs/l{levels}")})
}

/// Issue 12 item 11: a `$ref` bomb is refused at dispatch with `CONTRACT_SCHEMA_INVALID`; a delivery
/// whose validation hits the regex engine's backtracking limit uses none of the three schema
/// attempts and changes nothing.
#[test]
fn issue12_schema_bombs_are_refused_and_backtracking_costs_no_attempt() {
    let fx = scenarios::fixture();
    let c = facade_over(Arc::new(fx.fs.clone()), &fx.clock, &["/w"]);
    let mut args = json!({"requester_agent": "alice", "target_agent": "bob", "title": "t",
                          "workspace_root": "/w", "contract_schema": ref_bomb(40)});
    let started = std::time::Instant::now();
    let answer = call(&c, "dispatch_contract", args.clone());
    assert_eq!(answer["error"]["code"], "CONTRACT_SCHEMA_INVALID", "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused quickly");
    args["contract_schema"] = json!({"type": "object", "properties": {
        "v": {"type": "string", "pattern": "^((?=a)a+)+$"}}});
    let sent = call(&c, "dispatch_contract", args);
    let id = sent["contract_id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(&c, "poll_next_task", json!({"agent_id": "bob"}))["has_task"],
        true
    );
    let holder = json!({"contract_id": id, "claim_epoch": 1, "agent_id": "bob", "result_summary": "x",
                        "structured_output": {"v": format!("{}!", "a".repeat(40))}});
    for _ in 0..4 {
        let answer = call(&c, "fulfill_contract", holder.clone());
        assert_eq!(answer["error"]["code"], "CONTRACT_SCHEMA_INVALID", "{answer}");
    }
    let detail = call(&c, "inspect_mesh_state", json!({"contract_id": id}));
    assert_eq!(detail["contracts"][0]["retry_count"], 0, "{detail}");
    assert_eq!(detail["contracts"][0]["status"], "CLAIMED");
    let mut valid = holder.clone();
    valid["structured_output"] = json!({"v": "aaa"});
    assert_eq!(call(&c, "fulfill_contract", valid)["status"], "COMPLETED");
}

/// Issue 12 item 14: a store location that is neither a regular file nor absent (`/dev/null`, a FIFO,
/// a directory) is refused and nothing is created beside it.
#[test]
fn issue12_store_locations_that_are_not_regular_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo(3) call on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    let clock: Arc<dyn shiftwork_seams::Clock> = Arc::new(shiftwork_seams::SystemClock::new());
    for location in [PathBuf::from("/dev/null"), fifo.clone(), folder.clone()] {
        match SqliteStore::open(&location, SqliteOptions::default(), clock.clone(), &OsFs) {
            Err(StoreError::Unavailable { reason: why, .. }) => {
                assert!(
                    why.contains("not a regular file"),
                    "{}: {why}",
                    location.display()
                )
            }
            other => panic!("{}: {:?}", location.display(), other.map(|_| ())),
        }
        for suffix in ["-journal", "-wal", "-shm"] {
            let beside = PathBuf::from(format!("{}{suffix}", location.display()));
            assert!(!beside.exists(), "{} was created", beside.display());
        }
    }
}

/// Makes `path` unwritable for this process: mode 0444, and for root (who ignores modes) the
/// immutable attribute. `None` when neither can be done here.
fn make_read_only(path: &Path) -> Option<Box<dyn FnOnce()>> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).ok()?;
    let restore_mode = {
        let p = path.to_path_buf();
        move || {
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
        }
    };
    if std::fs::OpenOptions::new().append(true).open(path).is_err() {
        return Some(Box::new(restore_mode));
    }
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .args([flag, path.to_str().unwrap()])
            .status()
            .is_ok_and(|s| s.success())
    };
    if chattr("+i") && std::fs::OpenOptions::new().append(true).open(path).is_err() {
        let p = path.to_path_buf();
        return Some(Box::new(move || {
            let _ = std::process::Command::new("chattr")
                .args(["-i", p.to_str().unwrap()])
                .status();
            restore_mode();
        }));
    }
    restore_mode();
    None
}

/// Issue 12 item 14: a database file that is not writable opens read-only: reading tools work, and a
/// writing tool says the store is read-only (before, every tool answered "the database header cannot
/// be read: ReadOnly").
#[test]
fn issue12_read_only_database_serves_reads_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), b"a\n").unwrap();
    let clock = ManualClock::new(chrono::DateTime::from_timestamp_millis(T0).unwrap());
    let open = || SqliteStore::open(&path, SqliteOptions::default(), Arc::new(clock.clone()), &OsFs);
    let facade = |store: SqliteStore| {
        Contracts::builder(Arc::new(store))
            .fs(Arc::new(OsFs))
            .ids(Arc::new(SeededIdSource::new(1)))
            .config(crate::support::config(false))
            .build()
    };
    let c = facade(open().unwrap());
    let root = ws.to_str().unwrap();
    let id = dispatch(&c, root, &["a.txt"])["contract_id"]
        .as_str()
        .unwrap()
        .to_owned();
    drop(c);
    let Some(restore) = make_read_only(&path) else {
        eprintln!("skipped: this process can write every file and chattr is unavailable");
        return;
    };
    let store = open();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let store = store.unwrap();
        assert!(store.is_read_only());
        let c = facade(store);
        let seen = call(&c, "inspect_mesh_state", json!({"contract_id": id}));
        assert_eq!(seen["total_returned"], 1, "{seen}");
        let verified = call(
            &c,
            "verify_contract",
            json!({"contract_id": id, "agent_id": "bob"}),
        );
        assert_eq!(verified["valid"], true, "{verified}");
        for (tool, args) in [
            ("poll_next_task", json!({"agent_id": "bob"})),
            (
                "dispatch_contract",
                json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": root}),
            ),
        ] {
            let answer = call(&c, tool, args);
            assert_eq!(answer["error"]["code"], "STORE_UNAVAILABLE", "{tool}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains("read-only"), "{tool}: {message}");
        }
    }));
    restore();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// Issue 16 item 4: no answer or refusal echoes more than 2,000 code points of one input value: a
/// 10 MB string in every string argument of every tool comes back clipped, and every answer stays
/// under 64 KB.
#[test]
fn issue16_no_answer_echoes_more_than_2000_code_points_of_one_value() {
    let fx = scenarios::fixture();
    let c = facade_over(Arc::new(fx.fs.clone()), &fx.clock, &["/w"]);
    let huge = "é".repeat(5 * 1024 * 1024);
    for tool in shiftwork_contracts::args::TOOLS {
        for arg in tool.args {
            let mut args = json!({"requester_agent": "alice", "target_agent": "bob", "title": "t",
                                  "workspace_root": "/w", "contract_id": "x", "reason": "r",
                                  "result_summary": "r"});
            let known = tool.names();
            args.as_object_mut()
                .unwrap()
                .retain(|k, _| known.contains(&k.as_str()));
            args[arg.name] = json!(huge);
            for value in [json!(huge), json!([huge.clone()])] {
                args[arg.name] = value;
                let answer = call(&c, tool.name, args.clone()).to_string();
                assert!(
                    answer.len() < 64 * 1024,
                    "{} {}: {} bytes",
                    tool.name,
                    arg.name,
                    answer.len()
                );
            }
        }
        // The key itself, 10 MB long.
        let answer = call(&c, tool.name, json!({ huge.clone(): 1 })).to_string();
        assert!(
            answer.len() < 64 * 1024,
            "{}: unknown key echoed whole",
            tool.name
        );
    }
}
