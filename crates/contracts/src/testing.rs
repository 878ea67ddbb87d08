//! Fixtures shared by the crate's doc examples, tests and benches. Not part of the stable API.

use crate::model::{AgentId, Contract, ContractId, EpochMs, Status};

/// A `SUBMITTED` contract from `alice` to `bob`, dispatched at `now` with the default TTLs and no
/// pointers.
pub fn sample_contract(now: EpochMs) -> Contract {
    let agent =
        |s: &str| AgentId::new(s).unwrap_or_else(|_| unreachable!("the fixture names are valid agent ids"));
    Contract {
        seq: 1,
        contract_id: ContractId::parse("0196f3a0-0000-7000-8000-000000000001")
            .unwrap_or_else(|_| unreachable!("the fixture id is a contract id")),
        requester_agent: agent("alice"),
        target_agent: agent("bob"),
        idempotency_key: None,
        payload_sha256: String::from("0").repeat(64),
        task_type: String::from("review"),
        title: String::from("Review add()"),
        context_summary: String::new(),
        workspace_root: String::from("/w"),
        pointers: Vec::new(),
        contract_schema: None,
        exec_ttl_sec: 1800,
        queue_ttl_sec: 14_400,
        status: Status::Submitted,
        created_at: now,
        queued_at: now,
        queue_expires_at: now + 14_400_000,
        lifetime_ends_at: now + 57_600_000,
        claimed_at: None,
        expires_at: None,
        completed_at: None,
        claim_epoch: 0,
        extend_count: 0,
        release_count: 0,
        retry_count: 0,
        toctou_strikes: 0,
        end_reason: None,
        dirty_files: None,
        error_reason: None,
        fail_reason: None,
        result_summary: None,
        structured_output: None,
        artifacts_pointers: None,
        salvaged_result: None,
        max_deliveries: 1,
        delivery_count: 0,
        available_at: None,
        cancel_reason: None,
    }
}

/// Credential files by names the sensitive-name list once missed, each with the pattern it is now
/// refused under: security-key and host keys, exported and keyring PGP keys, a service account's key,
/// a kubeconfig, Docker's and rclone's older files, a wallet, and credential files under the names a
/// backup gives them.
pub const CREDENTIAL_NAMES: [(&str, &str); 15] = [
    ("id_ed25519_sk", "id_ed25519_sk"),
    ("id_ecdsa_sk", "id_ecdsa_sk"),
    ("id_rsa.bak", "id_rsa"),
    ("id_rsa~", "id_rsa"),
    ("ssh_host_ed25519_key", "ssh_host_*key"),
    ("private.asc", "*private*.asc"),
    ("secring.gpg", "secring.*"),
    ("service-account.json", "*service-account*.json"),
    ("kubeconfig", "kubeconfig"),
    (".git-credentials.bak", ".git-credentials"),
    (".pgpass.old", ".pgpass"),
    (".netrc~", ".netrc"),
    (".dockercfg", ".dockercfg"),
    ("wallet.dat", "wallet.dat"),
    (".rclone.conf", ".rclone.conf"),
];

/// Runs `sql` on the SQLite database at `path` with a plain connection (tests that plant what an
/// attacker or an accident would: a trigger, a foreign table).
#[cfg(feature = "sqlite")]
pub fn sqlite_exec(path: &std::path::Path, sql: &str) -> Result<(), String> {
    let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    conn.execute_batch(sql).map_err(|e| e.to_string())
}

/// The write-ahead log of another database, with committed frames, as a live connection of that
/// database holds it (made as `<dir>/foreign.db` and removed again).
#[cfg(feature = "sqlite")]
pub fn foreign_wal(dir: &std::path::Path) -> Result<Vec<u8>, String> {
    use shiftwork_seams::Fs;
    let db = dir.join("foreign.db");
    let conn = rusqlite::Connection::open(&db).map_err(|e| e.to_string())?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
    )
    .map_err(|e| e.to_string())?;
    for i in 0..50 {
        conn.execute(
            "INSERT INTO notes (body) VALUES (?1)",
            [format!("note {i} {}", "y".repeat(300))],
        )
        .map_err(|e| e.to_string())?;
    }
    let wal = shiftwork_seams::OsFs
        .read(&dir.join("foreign.db-wal"))
        .map_err(|e| e.to_string())?;
    drop(conn);
    for f in ["foreign.db", "foreign.db-wal", "foreign.db-shm"] {
        let _ = shiftwork_seams::OsFs.remove_file(&dir.join(f));
    }
    Ok(wal)
}
