//! The third hostile round on pointers and artifacts (issue 34 item 12; threat class "secrets by
//! content, not only by name"), on every store: the credential names the round found accepted and
//! their backup forms are refused by name, and a file whose first bytes are a private key is refused
//! whatever it is called — as a pointer at dispatch and as an artifact at fulfil — with nothing stored
//! and no byte of the key in the answer.

use serde_json::{Value, json};

use crate::scenarios;
use crate::support;

const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";

fn call(c: &shiftwork_contracts::Contracts, tool: &str, args: Value) -> Value {
    shiftwork_contracts::args::call(c, tool, args.as_object().unwrap(), &Default::default())
}

/// Checks that `answer` refuses `path` as `SENSITIVE_FILE` with `pattern` under `code`, and that it
/// quotes none of the file.
fn check_refused(answer: &Value, code: &str, path: &str, pattern: &str) {
    assert_eq!(answer["error"]["code"], code, "{path}: {answer}");
    assert_eq!(
        answer["error"]["details"],
        json!({"path": path, "reason": "SENSITIVE_FILE", "pattern": pattern}),
        "{path}"
    );
    let text = answer.to_string();
    assert!(!text.contains(KEY_BODY), "{path}: the key is quoted: {text}");
}

/// The kind of key with the article the refusal reads it with.
fn label_with_article(label: &str) -> String {
    let article = if label.starts_with("OpenSSH") { "an" } else { "a" };
    format!("{article} {label}")
}

/// Issue 34 item 12: on every store, the names and the contents.
#[test]
fn issue34_item12_secrets_are_refused_by_name_and_by_content_on_every_store() {
    let pem = |label: &str| format!("-----BEGIN {label}-----\n{KEY_BODY}\n-----END {label}-----\n");
    let mut names = shiftwork_contracts::testing::CREDENTIAL_NAMES.to_vec();
    names.extend([(".id_rsa.swp", "id_rsa"), ("deploy/.env.prod.orig", ".env.*")]);
    let contents = [
        ("notes.txt", pem("OPENSSH PRIVATE KEY"), "OpenSSH private key"),
        ("deploy/tls.txt", pem("RSA PRIVATE KEY"), "PEM private key"),
        (
            "keys/export.txt",
            pem("PGP PRIVATE KEY BLOCK"),
            "PGP private key block",
        ),
        (
            "project-7f3a2b.json",
            format!(
                "{{\"type\": \"service_account\", \"private_key_id\": \"1\", \"private_key\": \"{}\"}}",
                pem("PRIVATE KEY").replace('\n', "\\n")
            ),
            "service account key",
        ),
    ];
    for kind in support::store_kinds() {
        let fx = scenarios::fixture();
        let ts = support::store(kind, &fx.clock);
        let c = support::facade(&ts.store, &fx.fs, false);
        for (path, _) in &names {
            fx.fs.write_file(format!("/w/{path}"), b"secret\n");
        }
        for (path, bytes, _) in &contents {
            fx.fs.write_file(format!("/w/{path}"), bytes.as_bytes());
        }
        let dispatch = |pointers: &[&str]| {
            call(
                &c,
                "dispatch_contract",
                json!({"requester_agent": "alice", "target_agent": "bob", "title": "t",
                       "workspace_root": "/w", "pointers": pointers}),
            )
        };
        for (path, pattern) in &names {
            check_refused(&dispatch(&["src/lib.rs", path]), "POINTER_REFUSED", path, pattern);
        }
        for (path, _, label) in &contents {
            let answer = dispatch(&["src/lib.rs", path]);
            check_refused(&answer, "POINTER_REFUSED", path, label);
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("its first bytes are {}", label_with_article(label))),
                "{kind} {path}: {message}"
            );
        }
        let listed = call(&c, "inspect_mesh_state", json!({}));
        assert_eq!(listed["total_returned"], 0, "{kind}: nothing stored: {listed}");
        // As artifacts: the fulfil is refused and the claim stays the worker's.
        let sent = dispatch(&["src/lib.rs"]);
        assert_eq!(sent["ok"], true, "{kind}: {sent}");
        let id = sent["contract_id"].as_str().unwrap().to_owned();
        let polled = call(&c, "poll_next_task", json!({"agent_id": "bob"}));
        assert_eq!(polled["has_task"], true, "{kind}: {polled}");
        for (path, pattern) in [("notes.txt", "OpenSSH private key"), ("id_rsa~", "id_rsa")] {
            let answer = call(
                &c,
                "fulfill_contract",
                json!({"contract_id": id, "agent_id": "bob", "claim_epoch": 1,
                       "result_summary": "done", "artifacts_pointers": [path]}),
            );
            check_refused(&answer, "ARTIFACT_REFUSED", path, pattern);
        }
        let record = ts.store.get(&support::cid(&id)).unwrap().expect("the contract");
        assert_eq!(record.status, shiftwork_contracts::Status::Claimed, "{kind}");
        // A source file that quotes a PEM header inside a line is no key.
        fx.fs.write_file(
            "/w/src/pem.rs",
            b"const HEADER: &str = \"-----BEGIN PRIVATE KEY-----\";\n",
        );
        let answer = call(
            &c,
            "fulfill_contract",
            json!({"contract_id": id, "agent_id": "bob", "claim_epoch": 1,
                   "result_summary": "done", "artifacts_pointers": ["src/pem.rs"]}),
        );
        assert_eq!(answer["ok"], true, "{kind}: {answer}");
    }
}
