//! The crate's own rules (§18; SW-148, SW-149): pure logic over the seams, and one public operation
//! per tool plus the reader, writer, schema, batch view and ledger reader for embedders.

use std::path::{Path, PathBuf};

use shiftwork_core::json::{self, Json};

use super::support::*;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a source file without comments and without its `#[cfg(test)]` module.
fn code_of(text: &str) -> String {
    let body = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_crate_reaches_files_time_and_processes_only_through_the_seams_sw148() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 10, "sources not found");
    let forbidden = [
        "std::fs",
        "File::",
        "OpenOptions",
        "SystemTime::now",
        "Utc::now",
        "Local::now",
        "Instant::now",
        "std::process",
        "Command::",
        "std::env",
        "env::var",
        "thread::spawn",
        "tokio",
        "rmcp",
        "OsFs",
        "SystemClock",
        "OsHost",
    ];
    let mut found = Vec::new();
    for file in &files {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for word in forbidden {
            // `Env::os()` is the documented constructor of the real seams for embedders.
            let allowed = file.ends_with("env.rs") && matches!(word, "OsFs" | "SystemClock" | "OsHost");
            if code.contains(word) && !allowed {
                found.push(format!("{}: {word}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "direct I/O, clock or process calls: {found:?}");
}

#[test]
fn one_public_operation_per_tool_and_the_parts_for_embedding_sw149() {
    // The planner, usable without any seam.
    let nodes = json::parse(r#"[{"id": "a"}, {"id": "b", "depends_on": ["a"]}]"#).unwrap();
    assert_eq!(
        compact(&shiftwork_core::work_plan(&nodes)),
        r#"{"result": "plan", "batches": [["a"], ["b"]], "sequence": ["a", "b"], "width": 1}"#
    );
    let typed = shiftwork_core::planner::plan(&[shiftwork_core::planner::PlanNode {
        id: "a",
        ..Default::default()
    }])
    .unwrap();
    assert_eq!(typed.batches, vec![vec![0]]);
    // The reader, the writer and the embedded schema.
    let text = json::to_checkpoint_text(&ex());
    let doc = shiftwork_core::checkpoint::parse_bytes(text.as_bytes()).unwrap();
    assert_eq!(doc.to_text(), text);
    assert!(shiftwork_core::schema::validate_checkpoint(&ex()).is_ok());
    assert!(shiftwork_core::CHECKPOINT_SCHEMA.contains("urn:shiftwork:checkpoint:v1"));
    // The batch view and the ledger reader.
    let view = shiftwork_core::decide::plan::batch_view(&doc.view()).unwrap();
    assert_eq!(view.ready(), ["U3"]);
    let mut pass = shiftwork_core::ledger::LedgerPass::new(&["U3"], false);
    pass.feed(br#"{"event": "brief", "unit": "U3"}"#);
    assert_eq!(pass.finish().briefed, [true]);
    // The four checkpoint tools, each answering the object of its section.
    let fx = Fx::new(&ex());
    let results: Vec<Json> = vec![
        shiftwork_core::plan_checkpoint(&fx.env, std::path::Path::new(CP)).answer(),
        shiftwork_core::status(&fx.env, std::path::Path::new(CP), None).answer(),
        shiftwork_core::clock_in_arguments(&fx.env, std::path::Path::new(CP), None).answer(),
        shiftwork_core::clock_out_arguments(&fx.env, &out_args("U3", "done")).answer(),
    ];
    let kinds: Vec<&str> = results
        .iter()
        .map(|a| a.get("result").and_then(Json::as_str).unwrap())
        .collect();
    assert_eq!(kinds, ["plan", "status", "brief", "ok"]);
}
