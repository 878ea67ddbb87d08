//! `shiftwork-mcp init` through the real binary (issue 31 item 2): a TOML plan becomes a checkpoint
//! that `shiftwork_plan` answers with the plan's waves; a duplicate id, an unknown dependency, a cycle,
//! a TOML error and an existing checkpoint are refused with their sentences, and nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Runs the binary in `dir` with `args`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shiftwork-mcp"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file below `dir` with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                out.push((path, Vec::new()));
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A repository (a `.git` directory) holding `plan.toml` with `plan`.
fn repo(plan: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    dir
}

const JOB: &str = "[job]\nid = \"parser-job\"\ngoal = \"Ship the new parser\"\ndone_definition = \"cargo test passes\"\nconstraints = [\"no new dependencies\"]\n";

fn unit(id: &str, deps: &[&str]) -> String {
    format!(
        "\n[[unit]]\nid = \"{id}\"\ntitle = \"Write the {id}\"\nrole = \"implementer\"\ndepends_on = {}\nverify = \"cargo test -p {id}\"\n",
        json!(deps)
    )
}

/// Issue 31 item 2: the issue's plan is written to `.shiftwork/checkpoint.json` under the repository
/// root (from a directory below it), its waves printed; `shiftwork_plan` then answers those waves, and
/// each unit's brief is `briefs/<id>.md` unless the plan names one.
#[test]
fn issue31_item2_init_writes_a_checkpoint_that_plans_as_its_waves() {
    let plan = format!(
        "{JOB}{}{}brief = \"docs/parser-brief.md\"\n",
        unit("lexer", &[]),
        unit("parser", &["lexer"])
    );
    let dir = repo(&plan);
    let below = dir.path().join("src/deep");
    std::fs::create_dir_all(&below).unwrap();
    let out = run_in(&below, &["init", "../../plan.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("waves:\n  1. lexer\n  2. parser\n"), "{printed}");
    let checkpoint = dir.path().join(".shiftwork/checkpoint.json");
    assert!(checkpoint.is_file(), "{printed}");
    let answer = run_in(
        dir.path(),
        &[
            "call",
            "shiftwork_plan",
            r#"{"checkpoint": ".shiftwork/checkpoint.json"}"#,
        ],
    );
    assert_eq!(answer.status.code(), Some(0), "{}", stderr(&answer));
    let answer: Value = serde_json::from_str(&stdout(&answer)).unwrap();
    assert_eq!(answer["result"], "plan");
    assert_eq!(answer["batches"], json!([["lexer"], ["parser"]]));
    assert_eq!(answer["cursor"], "lexer");
    let doc: Value = serde_json::from_slice(&std::fs::read(&checkpoint).unwrap()).unwrap();
    assert_eq!(doc["plan"]["units"][0]["brief_path"], "briefs/lexer.md");
    assert_eq!(doc["plan"]["units"][1]["brief_path"], "docs/parser-brief.md");
    assert_eq!(doc["job"]["constraints"], json!(["no new dependencies"]));
    // The checkpoint passes the schema: a status call reads it.
    let status = run_in(
        dir.path(),
        &[
            "call",
            "shiftwork_status",
            r#"{"checkpoint": ".shiftwork/checkpoint.json"}"#,
        ],
    );
    assert!(
        stdout(&status).contains(r#""result":"status""#),
        "{}",
        stdout(&status)
    );
}

/// Issue 31 item 2: a plan the planner refuses, a plan that is not TOML, a field the model refuses, an
/// existing checkpoint: each refused with its sentence (a TOML error with its line), status 1, and
/// nothing written anywhere.
#[test]
fn issue31_item2_init_refuses_bad_plans_and_writes_nothing() {
    let check = |plan: &str, says: &str| {
        let dir = repo(plan);
        let before = tree(dir.path());
        let out = run_in(dir.path(), &["init", "plan.toml"]);
        assert_eq!(out.status.code(), Some(1), "{plan}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{plan}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        assert_eq!(tree(dir.path()), before, "{plan}: nothing written");
    };
    check(
        &format!("{JOB}{}{}", unit("lexer", &[]), unit("lexer", &[])),
        "shiftwork-mcp: duplicate node id lexer\n",
    );
    check(
        &format!("{JOB}{}{}", unit("lexer", &[]), unit("parser", &["ghost"])),
        "shiftwork-mcp: node parser depends on ghost, which no node declares\n",
    );
    check(
        &format!("{JOB}{}{}", unit("a", &["b"]), unit("b", &["a"])),
        "shiftwork-mcp: the graph has a cycle: a -> b -> a\n",
    );
    check(
        "[job]\nid = \"j\"\ngoal = \"g\"\ndone_definition = \"d\"\n\n[[unit]]\nid = \"a\"\ntitle = \"t\"\nrole = \"implementer\"\nverify = \n",
        "plan.toml: line 10, column 10: string values must be quoted",
    );
    check(
        &format!("{JOB}\n[[unit]]\nid = \"a\"\ntitle = \"t\"\nrole = \"tester\"\nverify = \"v\"\n"),
        "plan.toml: line 10, column 8: unit.role: 'tester' is not a role: one of planner, implementer, reviewer",
    );
    check(
        &format!("{JOB}{}colour = \"red\"\n", unit("a", &[])),
        "plan.toml: line 13, column 1: unknown field `colour`",
    );
    check(JOB, "refused: a new checkpoint needs at least one unit");
    // An existing checkpoint is never overwritten.
    let dir = repo(&format!("{JOB}{}", unit("lexer", &[])));
    std::fs::create_dir(dir.path().join(".shiftwork")).unwrap();
    std::fs::write(dir.path().join(".shiftwork/checkpoint.json"), b"mine").unwrap();
    let before = tree(dir.path());
    let out = run_in(dir.path(), &["init", "plan.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refused: a checkpoint already exists at"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree(dir.path()), before);
    // Nor a file named with --checkpoint.
    std::fs::write(dir.path().join("cp.json"), b"mine too").unwrap();
    let out = run_in(dir.path(), &["init", "plan.toml", "--checkpoint", "cp.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.path().join("cp.json")).unwrap(), b"mine too");
}

/// Issue 31 items 1 and 2: `init --example` prints a plan that `init` accepts; `--help` and `-h`
/// exit 0; no plan, two plans and an unknown option are usage errors (status 2).
#[test]
fn issue31_item2_init_example_help_and_usage() {
    let dir = repo("");
    let example = run_in(dir.path(), &["init", "--example"]);
    assert_eq!(example.status.code(), Some(0));
    std::fs::write(dir.path().join("plan.toml"), &example.stdout).unwrap();
    let out = run_in(dir.path(), &["init", "plan.toml", "--checkpoint", "jobs/cp.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("wrote jobs/cp.json: 3 units, cursor lexer\n"),
        "{}",
        stdout(&out)
    );
    assert!(dir.path().join("jobs/cp.json").is_file());
    for help in ["--help", "-h"] {
        let out = run_in(dir.path(), &["init", help]);
        assert_eq!(out.status.code(), Some(0), "{help}");
        assert!(
            stdout(&out).starts_with("Usage: shiftwork-mcp init PLAN.toml"),
            "{}",
            stdout(&out)
        );
    }
    for args in [
        &["init"][..],
        &["init", "a.toml", "b.toml"],
        &["init", "a.toml", "--force"],
        &["init", "--example", "a.toml"],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("Try 'shiftwork-mcp init --help'."),
            "{}",
            stderr(&out)
        );
    }
    let usage = run_in(dir.path(), &["--help"]);
    assert!(
        stdout(&usage).contains("shiftwork-mcp init PLAN.toml"),
        "{}",
        stdout(&usage)
    );
}

/// Threat class "not a regular file" and "size": a plan that is a directory, a FIFO or too large is
/// refused without blocking or reading it whole.
#[test]
fn issue31_item2_init_reads_only_a_bounded_regular_plan_file() {
    let dir = repo("");
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    let fifo = dir.path().join("fifo.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::write(dir.path().join("big.toml"), vec![b'#'; 2 * 1024 * 1024]).unwrap();
    for (plan, says) in [
        ("adir", "cannot read the plan adir"),
        ("fifo.toml", "cannot read the plan fifo.toml"),
        (
            "big.toml",
            "cannot read the plan big.toml: it is larger than 1048576 bytes",
        ),
        ("missing.toml", "cannot read the plan missing.toml"),
    ] {
        let out = run_in(dir.path(), &["init", plan]);
        assert_eq!(out.status.code(), Some(1), "{plan}");
        assert!(stderr(&out).contains(says), "{plan}: {}", stderr(&out));
    }
    assert!(!dir.path().join(".shiftwork").exists());
}

/// Threat class "text that reaches a person": a plan's ids and titles may hold control and
/// bidirectional characters; the waves and refusals printed escape them, and the checkpoint keeps them
/// as JSON escapes.
#[test]
fn issue31_item2_init_prints_no_control_character() {
    let plan = format!(
        "{JOB}\n[[unit]]\nid = \"a\\u001b]52;c;eA==\\u0007\"\ntitle = \"left \\u202e right\"\nrole = \"implementer\"\nverify = \"v\"\n"
    );
    let dir = repo(&plan);
    let out = run_in(dir.path(), &["init", "plan.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(
        !printed.contains('\u{1b}') && !printed.contains('\u{7}'),
        "{printed:?}"
    );
    assert!(printed.contains("\\u{1b}]52;c;eA==\\u{7}"), "{printed:?}");
    let doc = std::fs::read_to_string(dir.path().join(".shiftwork/checkpoint.json")).unwrap();
    assert!(doc.contains(r#""id": "a\u001b]52;c;eA==\u0007""#), "{doc}");
    // A refusal quoting the same id is escaped on stderr too.
    let twice = format!(
        "{JOB}\n[[unit]]\nid = \"\\u001b[2J\"\ntitle = \"t\"\nrole = \"implementer\"\nverify = \"v\"\n\n[[unit]]\nid = \"\\u001b[2J\"\ntitle = \"t\"\nrole = \"implementer\"\nverify = \"v\"\n"
    );
    let dir = repo(&twice);
    let out = run_in(dir.path(), &["init", "plan.toml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).contains('\u{1b}'), "{:?}", stderr(&out));
    assert!(
        stderr(&out).contains("duplicate node id \\u{1b}[2J"),
        "{:?}",
        stderr(&out)
    );
}
