//! The adapter's mechanisms (MC-7 … MC-10, MC-12) with a test-only tool group, through the in-process MCP
//! client: the registry, the unknown-argument check, the rendering of answers and tool errors, and the
//! server's identity. Every real group is checked by `all_tools.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use shiftwork_mcp::registry::{
    Answered, DemoStep, Group, Hints, Outcome, Registry, TextStyle, ToolDef, UNKNOWN_ARGUMENT,
    unknown_argument_sentence,
};
use shiftwork_mcp::settings::{Setting, Settings};
use shiftwork_mcp::{Server, instructions};

static ECHO_SETTING: Setting = Setting {
    flag: "--echo-prefix",
    env: Some("ECHO_PREFIX"),
    takes_value: true,
    help: "prefix",
};

fn refuse_as_result(_tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    Answered::refusal(
        UNKNOWN_ARGUMENT,
        Outcome::Answer(
            json!({"result": "error", "reason": unknown_argument_sentence(key, known)}),
            TextStyle::Compact,
        ),
    )
}

fn refuse_as_tool_error(tool: &str, key: &str, _all: &[&str], known: &[&str]) -> Answered {
    Answered::tool_error(
        Some(UNKNOWN_ARGUMENT),
        format!(
            "Error executing tool {tool}: {}",
            unknown_argument_sentence(key, known)
        ),
    )
}

fn echo_tools(settings: &Settings) -> Result<Vec<ToolDef>, String> {
    let prefix = settings.value(&ECHO_SETTING).unwrap_or("").to_owned();
    if prefix == "bad" {
        return Err(String::from("--echo-prefix must not be 'bad'"));
    }
    let output = json!({"type": "object", "properties": {"result": {"type": "string"}, "text": {"type": "string"}}, "required": ["result"]});
    Ok(vec![
        ToolDef {
            name: "echo_text",
            title: "Echo text",
            description: "Echoes its text.",
            input_schema: json!({"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "string"}}, "additionalProperties": false}),
            output_schema: output.clone(),
            hints: Hints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            unknown_argument: refuse_as_result,
            handler: Arc::new(move |args| {
                let text = args.map().get("zeta").and_then(Value::as_str).unwrap_or("");
                Answered::result(Outcome::Answer(
                    json!({"result": "ok", "text": format!("{prefix}{text}")}),
                    TextStyle::Pretty,
                ))
            }),
            prefetch: None,
        },
        ToolDef {
            name: "echo_fail",
            title: "Fail",
            description: "Always fails.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: output,
            hints: Hints {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
            },
            unknown_argument: refuse_as_tool_error,
            handler: Arc::new(|_| Answered::tool_error(None, String::from("it failed, as it always does"))),
            prefetch: None,
        },
    ])
}

fn no_demo_settings(_: &Path) -> Vec<(&'static Setting, String)> {
    Vec::new()
}

fn echo_demo(_: &Path) -> Vec<DemoStep> {
    vec![DemoStep::Call("echo_text", json!({"zeta": "hi"}))]
}

static ECHO: Group = Group {
    name: "echo",
    instructions: "echo: test tools.",
    settings: &[ECHO_SETTING],
    build: echo_tools,
    demo_settings: no_demo_settings,
    demo: echo_demo,
    try_next: &[],
    try_in_demo: &[],
    command: None,
};

fn server(env: &[(&str, &str)]) -> Server {
    let settings = Settings::new(
        Vec::new(),
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let registry = Registry::build(&[&ECHO], &["echo"], &settings).unwrap();
    Server::new(registry, instructions(&[&ECHO], &["echo"]))
}

#[tokio::test]
async fn mc12_server_info_names_shiftwork_mcp_and_its_version_with_instructions() {
    let client = support::connect(server(&[])).await;
    let info = client.peer_info().unwrap();
    let server_info = info.server_info.as_ref().unwrap();
    assert_eq!(server_info.name, "shiftwork-mcp");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .contains("echo: test tools.")
    );
    assert!(info.capabilities.tools.is_some());
}

#[tokio::test]
async fn mc7_descriptors_carry_title_schemas_and_all_four_hints() {
    let client = support::connect(server(&[])).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["echo_text", "echo_fail"]);
    let listed = serde_json::to_value(&tools[1]).unwrap();
    assert_eq!(listed["title"], "Fail");
    assert_eq!(
        listed["annotations"],
        json!({"title": "Fail", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true})
    );
    assert_eq!(listed["inputSchema"]["additionalProperties"], false);
    assert_eq!(listed["outputSchema"]["type"], "object");
}

#[tokio::test]
async fn mc8_an_answer_is_structured_content_plus_one_text_block_of_the_same_json() {
    let client = support::connect(server(&[("ECHO_PREFIX", "> ")])).await;
    let tools = client.list_all_tools().await.unwrap();
    let result = support::call(&client, "echo_text", json!({"zeta": "héllo"})).await;
    assert_eq!(result.is_error, Some(false));
    let structured = support::assert_valid_answer(&tools[0], &result);
    assert_eq!(structured, json!({"result": "ok", "text": "> héllo"}));
    // Pretty: two-space indentation, non-ASCII as itself.
    assert_eq!(
        support::only_text(&result),
        "{\n  \"result\": \"ok\",\n  \"text\": \"> héllo\"\n}"
    );
}

#[tokio::test]
async fn mc9_unknown_arguments_name_the_first_in_arrival_order_and_the_known_in_schema_order() {
    let client = support::connect(server(&[])).await;
    let result = support::call(&client, "echo_text", json!({"zeta": "x", "omega": 1, "beta": 2})).await;
    assert_eq!(result.is_error, Some(false), "this group's frame is a result");
    assert_eq!(
        result.structured_content.unwrap(),
        json!({"result": "error", "reason": "unknown argument 'omega'; known: zeta, alpha"})
    );
    let result = support::call(&client, "echo_fail", json!({"x": 1})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        support::only_text(&result),
        "Error executing tool echo_fail: unknown argument 'x'; known: (none)"
    );
}

#[tokio::test]
async fn mc10_tool_errors_are_is_error_results_and_unknown_tools_are_protocol_errors() {
    let client = support::connect(server(&[])).await;
    let result = support::call(&client, "echo_fail", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none());
    assert_eq!(support::only_text(&result), "it failed, as it always does");
    let err = client
        .call_tool(rmcp::model::CallToolRequestParams::new("no_such_tool"))
        .await
        .expect_err("an unknown tool must be a JSON-RPC error");
    assert!(err.to_string().contains("no_such_tool"), "{err}");
}

#[test]
fn mc2_build_selects_groups_and_surfaces_a_group_settings_error() {
    let bad = Settings::new(vec![("--echo-prefix", String::from("bad"))], Vec::new());
    assert_eq!(
        Registry::build(&[&ECHO], &["echo"], &bad).unwrap_err(),
        "--echo-prefix must not be 'bad'"
    );
    // Not selected: the group is not built, so its settings are not judged.
    let registry = Registry::build(&[&ECHO], &["worklog"], &bad).unwrap();
    assert!(registry.tools().is_empty());
}

#[test]
fn mc3_a_flag_wins_over_its_variable_and_blank_counts_as_unset() {
    let env = vec![(String::from("ECHO_PREFIX"), String::from("env"))];
    let check = |flags: Vec<(&'static str, String)>, expected: Option<&str>| {
        let settings = Settings::new(flags, env.clone());
        assert_eq!(settings.value(&ECHO_SETTING), expected);
    };
    check(vec![], Some("env"));
    check(vec![("--echo-prefix", String::from("flag"))], Some("flag"));
    check(vec![("--echo-prefix", String::from("  "))], None);
    let blank_env = Settings::new(Vec::new(), vec![(String::from("ECHO_PREFIX"), String::from(" "))]);
    assert_eq!(blank_env.value(&ECHO_SETTING), None);
}

#[test]
fn mc5_the_demo_runs_a_group_script_through_the_handlers() {
    let mut out = Vec::new();
    let code = shiftwork_mcp::demo::run(&[&ECHO], false, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("$ shiftwork-mcp call echo_text '{\"zeta\":\"hi\"}'"),
        "{out}"
    );
    assert!(out.contains("\"text\": \"hi\""), "{out}");
    assert!(out.contains("Try next:"), "{out}");
}
