//! What the binary says about itself: the whole usage, each command's help, the list of tools, and
//! each tool's arguments as a table — all from the definitions the server serves (a tool's
//! description and input schema), so help and `tools/list` cannot disagree.

use std::fmt::Write as _;

use serde_json::Value;

use crate::registry::{Group, Registry, ToolDef};
use crate::settings::Setting;

/// The commands, with a synopsis and one line each, in the order `--help` lists them.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "serve",
        "serve [--tools LIST] [--http ADDR] [OPTIONS]",
        "serve the tools over MCP (stdio, or Streamable HTTP with --http)",
    ),
    (
        "call",
        "call TOOL [JSON | - | @FILE] [--pretty] [OPTIONS]",
        "run one tool once and print its answer as JSON",
    ),
    (
        "tools",
        "tools [--tools LIST]",
        "list the tools with their titles; call TOOL --help shows one's arguments",
    ),
    (
        "demo",
        "demo [--keep]",
        "a scripted tour in a temporary directory",
    ),
    (
        "init",
        crate::init::SYNOPSIS,
        "write a job's checkpoint from a TOML plan (init --example prints one)",
    ),
    (
        "watch",
        "watch [--checkpoint PATH]… [--hours EXPR] [--once] [OPTIONS]",
        "live view of jobs, contracts and hours",
    ),
    (
        "plan",
        "plan [--checkpoint PATH] [--format text|mermaid]",
        "a checkpoint's plan as text or a Mermaid flowchart",
    ),
    (
        "token",
        "token add AGENT | list | revoke AGENT --file FILE",
        "the bearer tokens of serve --http",
    ),
];

/// The names of the commands (for a usage error).
pub fn command_names(groups: &[&Group]) -> String {
    let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
    names.extend(groups.iter().filter(|g| g.command.is_some()).map(|g| g.name));
    names.join(", ")
}

/// The whole usage: `--help`, and what a bare `shiftwork-mcp` prints.
pub fn usage(groups: &[&Group]) -> String {
    let mut out = format!(
        "shiftwork-mcp {} — coordinate the work of AI coding agents over MCP\n\nUsage:\n",
        env!("CARGO_PKG_VERSION")
    );
    for (_, synopsis, line) in COMMANDS {
        let _ = writeln!(out, "  shiftwork-mcp {synopsis}\n      {line}");
    }
    for g in groups.iter().filter(|g| g.command.is_some()) {
        let _ = writeln!(
            out,
            "  shiftwork-mcp {} --help\n      the {} group's own commands",
            g.name, g.name
        );
    }
    out.push_str(
        "  shiftwork-mcp --version | --help\n\nEvery command answers --help (or -h) with its own options.\n",
    );
    let built: Vec<&str> = groups.iter().map(|g| g.name).collect();
    let _ = writeln!(
        out,
        "Tool groups built into this binary: {}.",
        if built.is_empty() {
            String::from("(none yet)")
        } else {
            built.join(", ")
        }
    );
    out
}

/// The help of one command, with its options.
pub fn command_help(
    synopsis: &str,
    about: &str,
    options: &[Setting],
    switches: &[(&str, &str)],
    notes: &str,
) -> String {
    let mut out = format!("Usage: shiftwork-mcp {synopsis}\n\n{about}\n");
    if !options.is_empty() || !switches.is_empty() {
        out.push_str(
            "\nOptions (a flag wins over its environment variable; a blank value counts as unset):\n",
        );
    }
    for (flag, help) in switches {
        let _ = writeln!(out, "  {flag:<28} {help}");
    }
    for s in options {
        let flag = if s.takes_value {
            format!("{} VALUE", s.flag)
        } else {
            s.flag.to_owned()
        };
        let env = s.env.map(|e| format!(" [env {e}]")).unwrap_or_default();
        let _ = writeln!(out, "  {flag:<28} {}{env}", s.help);
    }
    if !notes.is_empty() {
        let _ = write!(out, "\n{notes}");
        if !notes.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The first sentence of a description (up to its first `. ` or its end).
pub fn first_sentence(text: &str) -> &str {
    let mut end = text.len();
    for (at, _) in text.match_indices(". ") {
        // "e.g. " and "i.e. " do not end a sentence.
        let before = &text[..at];
        if before.ends_with("e.g") || before.ends_with("i.e") || before.ends_with("vs") {
            continue;
        }
        end = at + 1;
        break;
    }
    text[..end].trim()
}

/// `shiftwork-mcp tools`: every tool of `registry` with its title and the first sentence of its
/// description.
pub fn tools(registry: &Registry) -> String {
    let width = registry.tools().iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for t in registry.tools() {
        let _ = writeln!(
            out,
            "{:<width$}  {} — {}",
            t.name,
            t.title,
            first_sentence(t.description)
        );
    }
    out.push_str("\nshiftwork-mcp call TOOL --help shows a tool's arguments.\n");
    out
}

/// One argument of a tool, or one member of its answer, as its schema declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    /// Its name; a member of an object argument or answer member is named by its path
    /// (`handoff_patch.next_action`, `contract.pointers[].sha256`).
    pub name: String,
    /// Its type in words, with the bounds, format and pattern its schema states (`string 1–200
    /// chars`, `integer 0–60`, `array of string, ≤ 32`, `one of: a, b`, `agent id`).
    pub kind: String,
    /// Whether the schema requires it (of the object holding it).
    pub required: bool,
    /// Its default, when the schema names one.
    pub default: Option<String>,
    /// Its description.
    pub meaning: String,
}

/// The arguments of `tool`, in schema order, each followed by the members of an object it takes.
pub fn arguments(tool: &ToolDef) -> Vec<Argument> {
    rows(&tool.input_schema)
}

/// The members of the object schema `schema` in order, each followed by the members of an object it
/// holds (directly, as an array's items, or as the object of a value that may be null): the rows any
/// definition's table is printed from — a tool's arguments, an answer's members.
pub fn rows(schema: &Value) -> Vec<Argument> {
    let mut rows = Vec::new();
    members(schema, "", &mut rows);
    rows
}

/// One shape of a tool's answer: which one it is, and its members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The members that tell this shape apart, as `name: value` (`result: "plan"`, `ok: true`);
    /// empty for a tool with one shape.
    pub label: String,
    /// What the shape means: its discriminating member's description.
    pub meaning: String,
    /// Its members in schema order, each followed by its own members.
    pub members: Vec<Argument>,
}

/// The shapes of `tool`'s answer, in schema order ([`shapes`] of its output schema).
pub fn answers(tool: &ToolDef) -> Vec<Answer> {
    shapes(&tool.output_schema)
}

/// The shapes an object schema admits, in order: its `oneOf` branches, each labelled by the members
/// its `const`s fix, or the schema itself when it has one shape.
pub fn shapes(schema: &Value) -> Vec<Answer> {
    let Some(branches) = schema.get("oneOf").and_then(Value::as_array) else {
        return vec![Answer {
            label: String::new(),
            meaning: String::new(),
            members: rows(schema),
        }];
    };
    branches
        .iter()
        .map(|branch| {
            let constants: Vec<(&String, &Value)> = branch
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().filter(|(_, m)| m.get("const").is_some()).collect())
                .unwrap_or_default();
            let label = constants
                .iter()
                .map(|(name, m)| format!("{name}: {}", m["const"]))
                .collect::<Vec<_>>()
                .join(", ");
            let meaning = constants
                .iter()
                .filter_map(|(_, m)| m.get("description").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            let mut members = rows(branch);
            members.retain(|row| !constants.iter().any(|(name, _)| **name == row.name));
            Answer {
                label,
                meaning,
                members,
            }
        })
        .collect()
}

/// The members of the object schema `schema`, named under `prefix`, each followed by its own.
fn members(schema: &Value, prefix: &str, rows: &mut Vec<Argument>) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, member) in properties {
        let path = format!("{prefix}{name}");
        rows.push(Argument {
            name: path.clone(),
            kind: kind(member),
            required: required.contains(&name.as_str()),
            default: member.get("default").map(Value::to_string),
            meaning: member
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        });
        // The members of an object it holds: directly, as the items of an array, or as the one
        // object of an `anyOf` (a value that may be null).
        let inner = [member]
            .into_iter()
            .chain(
                member
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .find_map(|s| {
                if s.get("properties").is_some() {
                    Some((s, format!("{path}.")))
                } else {
                    s.get("items")
                        .filter(|i| i.get("properties").is_some())
                        .map(|i| (i, format!("{path}[].")))
                }
            });
        if let Some((object, prefix)) = inner {
            members(object, &prefix, rows);
        }
    }
}

/// A schema's type in words.
fn kind(schema: &Value) -> String {
    if let Some(value) = schema.get("const") {
        return format!("= {value}");
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of: {}", values.join(", "));
    }
    if schema.get("anyOf").is_some() || schema.get("oneOf").is_some() {
        let arms = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
            .map(|a| a.iter().map(kind).collect::<Vec<_>>().join(" or "))
            .unwrap_or_default();
        return arms;
    }
    let base = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    match base {
        "array" => {
            let items = schema.get("items").map_or_else(|| String::from("any"), kind);
            match schema.get("maxItems") {
                Some(max) => format!("array of {items}, ≤ {max}"),
                None => format!("array of {items}"),
            }
        }
        "string" => {
            // The bounds, format and pattern a schema states instead of its description.
            let mut words = String::from("string");
            let min = schema.get("minLength").and_then(Value::as_u64);
            let max = schema.get("maxLength").and_then(Value::as_u64);
            match (min, max) {
                (Some(min), Some(max)) => {
                    let _ = write!(words, " {min}–{max} chars");
                }
                (Some(min), None) => {
                    let _ = write!(words, " ≥ {min} char{}", if min == 1 { "" } else { "s" });
                }
                (None, Some(max)) => {
                    let _ = write!(words, " ≤ {max} chars");
                }
                (None, None) => {}
            }
            if let Some(format) = schema.get("format").and_then(Value::as_str) {
                let _ = write!(words, " ({format})");
            }
            match schema.get("pattern").and_then(Value::as_str) {
                Some(crate::schema::AGENT_ID_PATTERN) => return String::from("agent id"),
                Some(pattern) => {
                    let _ = write!(words, " matching `{pattern}`");
                }
                None => {}
            }
            words
        }
        "integer" | "number" => {
            let min = schema.get("minimum").map(Value::to_string);
            let max = schema.get("maximum").map(Value::to_string);
            match (min, max) {
                (Some(min), Some(max)) => format!("{base} {min}–{max}"),
                (Some(min), None) => format!("{base} ≥ {min}"),
                (None, Some(max)) => format!("{base} ≤ {max}"),
                (None, None) => base.to_owned(),
            }
        }
        other => other.to_owned(),
    }
}

/// What an argument of type `agent id` takes (the pattern of [`crate::schema::AGENT_ID_PATTERN`]).
pub const AGENT_ID_FORMAT: &str =
    "An agent id is 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or a digit.";

/// The tool's annotations in one line, as `call TOOL --help` and the reference print them.
fn hints_line(tool: &ToolDef) -> String {
    let hints = tool.hints;
    format!(
        "read-only: {} · destructive: {} · idempotent: {} · open world: {}",
        yes(hints.read_only),
        yes(hints.destructive),
        yes(hints.idempotent),
        yes(hints.open_world)
    )
}

/// `shiftwork-mcp call TOOL --help`: the tool's title, description, annotations, its arguments as a
/// table (name, type, required, default, meaning) and the shapes of its answer with their members.
pub fn tool_help(tool: &ToolDef) -> String {
    let mut out = format!("{} — {}\n\n", tool.name, tool.title);
    out.push_str(&wrap(tool.description, 100));
    let _ = writeln!(out, "\n{}", hints_line(tool));
    let args = arguments(tool);
    if args.is_empty() {
        out.push_str("\nArguments: none.\n");
    } else {
        out.push_str("\nArguments:\n");
        table_rows(&mut out, &args, true);
        if args.iter().any(|a| a.kind == "agent id") {
            let _ = writeln!(out, "  {AGENT_ID_FORMAT}");
        }
    }
    out.push_str("\nAnswers (structuredContent):\n");
    for answer in answers(tool) {
        if !answer.label.is_empty() {
            let _ = writeln!(out, "  {} — {}", answer.label, answer.meaning);
        }
        table_rows(&mut out, &answer.members, false);
    }
    let _ = write!(
        out,
        "\nRun it: shiftwork-mcp call {} '{{…}}'   (or - to read the arguments from stdin, @FILE from a file)\n",
        tool.name
    );
    out
}

/// Rows of the text table of `call TOOL --help`: name, type, required (or, for an answer member,
/// always present), default (arguments only), meaning.
fn table_rows(out: &mut String, rows: &[Argument], with_default: bool) {
    let name_w = rows
        .iter()
        .map(|a| a.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let kind_w = rows
        .iter()
        .map(|a| a.kind.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 30);
    let (flag, default) = if with_default {
        ("required", "default")
    } else {
        ("always", "")
    };
    let _ = write!(out, "    {:<name_w$}  {:<kind_w$}  {flag:<8}  ", "name", "type");
    if with_default {
        let _ = write!(out, "{default:<8}  ");
    }
    out.push_str("meaning\n");
    for a in rows {
        let _ = write!(
            out,
            "    {:<name_w$}  {:<kind_w$}  {:<8}  ",
            a.name,
            a.kind,
            if a.required { "yes" } else { "no" }
        );
        if with_default {
            let _ = write!(out, "{:<8}  ", a.default.as_deref().unwrap_or("-"));
        }
        let _ = writeln!(out, "{}", a.meaning);
    }
}

/// The tool reference of the user guide (`docs/src/reference/tools.md`): every tool of `registry`
/// with its description, hints, argument table and the members of each shape of its answer, as
/// Markdown. `shiftwork-mcp tools --markdown`
/// prints it; CI fails when the committed page differs, so the guide cannot drift from the server.
pub fn tools_markdown(registry: &Registry) -> String {
    let mut out = String::from(
        "# Tool reference\n\n\
         <!-- Generated by `shiftwork-mcp tools --markdown`; do not edit by hand. -->\n\n\
         Every tool the server lists, with what it does, its annotations and its arguments, from the same \
         definitions `tools/list` serves. From a shell, `shiftwork-mcp call TOOL --help` prints the same.\n",
    );
    let _ = writeln!(out, "\n{AGENT_ID_FORMAT}");
    // Markdown renders `<checkpoint>` as a tag: angle brackets are written as entities.
    let text = |t: &str| t.replace('<', "&lt;").replace('>', "&gt;");
    for tool in registry.tools() {
        let _ = write!(
            out,
            "\n## `{}` — {}\n\n{}\n\n",
            tool.name,
            tool.title,
            text(tool.description)
        );
        let _ = writeln!(out, "{}\n", hints_line(tool));
        let cell = |t: &str| text(t).replace('|', "\\|").replace('\n', " ");
        let args = arguments(tool);
        if args.is_empty() {
            out.push_str("Arguments: none.\n");
        } else {
            out.push_str("| argument | type | required | default | meaning |\n|---|---|---|---|---|\n");
            for a in args {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} |",
                    a.name,
                    cell(&a.kind),
                    if a.required { "yes" } else { "no" },
                    a.default
                        .as_deref()
                        .map_or_else(|| String::from("–"), |d| format!("`{}`", cell(d))),
                    cell(&a.meaning)
                );
            }
        }
        out.push_str("\nAnswers (`structuredContent`):\n");
        for answer in answers(tool) {
            if !answer.label.is_empty() {
                let _ = write!(out, "\n`{}` — {}\n", answer.label, cell(&answer.meaning));
            }
            out.push_str("\n| member | type | always | meaning |\n|---|---|---|---|\n");
            for m in &answer.members {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    m.name,
                    cell(&m.kind),
                    if m.required { "yes" } else { "no" },
                    cell(&m.meaning)
                );
            }
        }
    }
    out
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `text` wrapped at `width` columns, words kept whole.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if line > 0 && line + 1 + len > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += len;
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sentence_ends_at_the_first_full_stop_that_ends_one() {
        for (text, first) in [
            ("Plan the job. Then more.", "Plan the job."),
            ("Use e.g. this one. Then.", "Use e.g. this one."),
            ("No stop at all", "No stop at all"),
            ("Ends here.", "Ends here."),
        ] {
            assert_eq!(first_sentence(text), first);
        }
    }

    #[test]
    fn a_schema_type_reads_as_words() {
        for (schema, words) in [
            (serde_json::json!({"type": "string"}), "string"),
            (
                serde_json::json!({"type": "integer", "minimum": 0, "maximum": 60}),
                "integer 0–60",
            ),
            (
                serde_json::json!({"type": "array", "items": {"type": "string"}}),
                "array of string",
            ),
            (
                serde_json::json!({"type": "array", "items": {"type": "string"}, "maxItems": 32}),
                "array of string, ≤ 32",
            ),
            (
                serde_json::json!({"type": "string", "minLength": 1, "maxLength": 200}),
                "string 1–200 chars",
            ),
            (
                serde_json::json!({"type": "string", "minLength": 1}),
                "string ≥ 1 char",
            ),
            (
                serde_json::json!({"type": "string", "maxLength": 1000}),
                "string ≤ 1000 chars",
            ),
            (
                serde_json::json!({"type": "string", "format": "date-time"}),
                "string (date-time)",
            ),
            (
                serde_json::json!({"type": "string", "pattern": "^[a-z]+$"}),
                "string matching `^[a-z]+$`",
            ),
            (
                serde_json::json!({"type": "string", "pattern": crate::schema::AGENT_ID_PATTERN}),
                "agent id",
            ),
            (
                serde_json::json!({"enum": ["relay", "decision"]}),
                "one of: relay, decision",
            ),
            (
                serde_json::json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
                "string or object",
            ),
        ] {
            assert_eq!(kind(&schema), words, "{schema}");
        }
    }
}
