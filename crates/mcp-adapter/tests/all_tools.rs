//! Every tool of every group built into the binary: its descriptor (MC-7), the size of `tools/list`
//! (MC-11), the unknown-argument refusal (MC-9), and every call of the group's demo script through MCP
//! with its `structuredContent` validated against the tool's `outputSchema` (MC-8). A group is covered
//! here as soon as it is listed in `groups::all()`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use serde_json::{Value, json};
use shiftwork_mcp::registry::Registry;
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::{Server, groups, instructions};

/// Settings for every group as the demo gives them, inside `root`.
fn demo_settings(root: &std::path::Path) -> Settings {
    let mut settings = Settings::new(Vec::new(), Vec::new());
    for group in groups::all() {
        for (setting, value) in (group.demo_settings)(root) {
            settings.set_flag(setting, value);
        }
    }
    settings
}

/// MC-2's groups, in its order: the binary builds exactly these (the registry is the only list the
/// binary holds; issue 11 item 4).
const MC2_GROUPS: [&str; 4] = ["shiftwork", "worklog", "contracts", "hours"];

#[test]
fn every_group_is_a_known_group_listed_in_order() {
    let names: Vec<&str> = groups::all().iter().map(|g| g.name).collect();
    assert_eq!(names, MC2_GROUPS);
}

/// Issue 16, issue 35 item 1: every tool's `inputSchema` and `outputSchema` load in every major
/// client (OpenAI: arrays need `items`; Gemini: no type arrays; no `$ref`; all: an object root), the
/// input stays closed (MC-7), and every property says its type and meaning.
#[test]
fn every_schema_passes_the_client_lint() {
    let tmp = tempfile::tempdir().unwrap();
    let settings = demo_settings(tmp.path());
    let all = groups::all();
    let registry = Registry::build(&all, &MC2_GROUPS, &settings).unwrap();
    let mut broken = Vec::new();
    for tool in registry.tools() {
        let descriptor = serde_json::to_value(shiftwork_mcp::server::descriptor(tool)).unwrap();
        for violation in shiftwork_mcp::schema_lint::lint(&descriptor["inputSchema"]) {
            broken.push(format!("{} inputSchema: {violation}", tool.name));
        }
        for violation in shiftwork_mcp::schema_lint::lint_answer(&descriptor["outputSchema"]) {
            broken.push(format!("{} outputSchema: {violation}", tool.name));
        }
    }
    assert!(
        broken.is_empty(),
        "schemas that some client rejects or that leave a member undescribed:\n{}",
        broken.join("\n")
    );
}

/// MC-7 and MC-11 (with `support::LISTING_BOUNDS`, which says where they miss MC-11): every descriptor
/// is complete, and `tools/list` stays within its bounds, per group and for every group.
#[test]
fn mc7_mc11_every_descriptor_is_complete_and_the_list_is_within_its_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let settings = demo_settings(tmp.path());
    let all = groups::all();
    let bounds = support::LISTING_BOUNDS;
    let mut total = Vec::new();
    for group in &all {
        let registry = Registry::build(&all, &[group.name], &settings).unwrap();
        let descriptors: Vec<Value> = registry
            .tools()
            .iter()
            .map(|t| serde_json::to_value(shiftwork_mcp::server::descriptor(t)).unwrap())
            .collect();
        for d in &descriptors {
            let name = d["name"].as_str().unwrap();
            assert!(
                d["title"].as_str().is_some_and(|t| !t.is_empty()),
                "{name}: title"
            );
            assert!(
                d["description"].as_str().is_some_and(|t| t.len() > 20),
                "{name}: description"
            );
            assert_eq!(d["inputSchema"]["type"], "object", "{name}");
            assert_eq!(
                d["inputSchema"]["additionalProperties"], false,
                "{name}: inputSchema must be closed"
            );
            assert_eq!(d["outputSchema"]["type"], "object", "{name}: outputSchema root");
            for hint in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(d["annotations"][hint].is_boolean(), "{name}: {hint} must be set");
            }
            // The output schema itself must compile.
            jsonschema::validator_for(&d["outputSchema"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let (full, for_models) = support::listing_sizes(registry.tools());
        eprintln!(
            "tools/list of the {} group: {full} bytes, {for_models} without outputSchema",
            group.name
        );
        assert!(
            for_models < bounds.for_models(group.name) && full < bounds.full_group,
            "MC-11: the {} group's tools/list is {full} bytes, {for_models} without outputSchema",
            group.name
        );
        total.extend(registry.tools().iter().cloned());
    }
    let (full, for_models) = support::listing_sizes(&total);
    eprintln!("tools/list of every group: {full} bytes, {for_models} without outputSchema");
    assert!(
        for_models < bounds.for_models_all && full < bounds.full_all,
        "MC-11: the full tools/list is {full} bytes, {for_models} without outputSchema"
    );
}

#[test]
fn mc9_every_tool_refuses_an_undeclared_argument_with_the_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let all = groups::all();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    let registry = Registry::build(&all, &names, &demo_settings(tmp.path())).unwrap();
    for tool in registry.tools() {
        let known = tool.known_arguments();
        let args = json!({"zz_not_an_argument": 1, "zz_second": 2});
        let answered = tool.call(args.as_object().unwrap());
        let outcome = &answered.outcome;
        let sentence = shiftwork_mcp::registry::unknown_argument_sentence("zz_not_an_argument", &known);
        assert!(
            outcome.text().contains(&sentence),
            "{}: {}",
            tool.name,
            outcome.text()
        );
        // Issue 34 item 1: what the telemetry reads is the group's own verdict, with the code.
        assert_eq!(
            answered.verdict.code(),
            Some(shiftwork_mcp::registry::UNKNOWN_ARGUMENT),
            "{}",
            tool.name
        );
        assert_ne!(answered.verdict.kind(), "result", "{}", tool.name);
    }
}

#[tokio::test]
async fn mc8_every_demo_call_validates_against_its_output_schema_through_mcp() {
    let tmp = tempfile::tempdir().unwrap();
    let all = groups::all();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    let registry = Registry::build(&all, &names, &demo_settings(tmp.path())).unwrap();
    let client = support::connect(Server::new(registry, instructions(&all, &names))).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut calls = 0;
    let mut expected_calls = 0;
    for group in &all {
        let mut answers: Vec<Value> = Vec::new();
        for step in (group.demo)(tmp.path()) {
            let Some((tool, args)) = support::demo_call(step, &answers) else {
                continue;
            };
            expected_calls += 1;
            let def = tools
                .iter()
                .find(|t| t.name == tool)
                .unwrap_or_else(|| panic!("{tool} not listed"));
            let result = support::call(&client, tool, args).await;
            answers.push(support::assert_valid_answer(def, &result));
            calls += 1;
        }
    }
    assert_eq!(calls, expected_calls);
}
