//! `shiftwork-mcp demo`: a scripted tour through the same handlers as `serve`, inside a temporary
//! directory.

use std::io::Write;

use crate::registry::{DemoStep, Group, Registry, TextStyle};

// The lines the demo prints at its end must work as printed: `tests/demo.rs` runs every one.
use crate::settings::Settings;

/// Runs the demo of every group in `groups`, writing to `out`. Returns the process exit code.
pub fn run(groups: &[&Group], keep: bool, out: &mut dyn Write) -> std::io::Result<i32> {
    let dir = tempfile::Builder::new().prefix("shiftwork-demo-").tempdir()?;
    let root = dir.path().to_path_buf();
    writeln!(
        out,
        "shiftwork-mcp demo — every call below runs through the same handlers as `serve`."
    )?;
    writeln!(out, "Working in {}\n", root.display())?;
    if groups.is_empty() {
        writeln!(
            out,
            "This build holds no tool group yet, so there is nothing to show."
        )?;
    }
    let mut settings = Settings::new(Vec::new(), Vec::new());
    for group in groups {
        for (setting, value) in (group.demo_settings)(&root) {
            settings.set_flag(setting, value);
        }
    }
    let names: Vec<&str> = groups.iter().map(|g| g.name).collect();
    let registry = Registry::build(groups, &names, &settings).map_err(std::io::Error::other)?;
    let mut failures = 0;
    for group in groups {
        let mut answers: Vec<serde_json::Value> = Vec::new();
        writeln!(out, "== {} ==", group.name)?;
        for step in (group.demo)(&root) {
            match step {
                DemoStep::Say(text) => writeln!(out, "{text}")?,
                DemoStep::Prepare(what, action) => {
                    writeln!(out, "# {what}")?;
                    if let Err(e) = action() {
                        writeln!(out, "  (set-up failed: {e})")?;
                        failures += 1;
                    }
                }
                DemoStep::Call(tool, args) => {
                    failures += call(&registry, tool, &args, &mut answers, out)?;
                }
                DemoStep::CallWith(tool, make) => {
                    let args = make(&answers);
                    failures += call(&registry, tool, &args, &mut answers, out)?;
                }
            }
        }
        writeln!(out)?;
    }
    writeln!(out, "Try next:")?;
    writeln!(out, "  shiftwork-mcp --help")?;
    for group in groups {
        for line in group.try_next {
            writeln!(out, "  {line}")?;
        }
    }
    if keep {
        let kept = dir.keep();
        writeln!(
            out,
            "\nThe demo's files are kept in {}. Go on there; every line below works as printed:\n",
            kept.display()
        )?;
        for line in continue_there(groups, &kept) {
            writeln!(out, "  {line}")?;
        }
    } else {
        writeln!(
            out,
            "  shiftwork-mcp demo --keep   # keeps the demo's files and shows how to go on in them"
        )?;
    }
    Ok(if failures == 0 { 0 } else { 1 })
}

/// The lines that go on in the demo's kept directory `dir`: a `cd`, an `export` of the environment the
/// demo gave its groups (each setting by its environment variable), then each group's
/// `try_in_demo` commands.
pub fn continue_there(groups: &[&Group], dir: &std::path::Path) -> Vec<String> {
    let quote = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    let mut exports = Vec::new();
    for group in groups {
        for (setting, value) in (group.demo_settings)(dir) {
            // Every setting a demo sets has a variable (a test checks); one without would be a flag.
            if let Some(variable) = setting.env {
                exports.push(format!("{variable}={}", quote(&value)));
            }
        }
    }
    let mut lines = vec![format!("cd {}", quote(&dir.display().to_string()))];
    if !exports.is_empty() {
        lines.push(format!("export {}", exports.join(" ")));
    }
    for group in groups {
        lines.extend(group.try_in_demo.iter().map(|l| (*l).to_owned()));
    }
    lines
}

/// Runs one demo call and prints it with its answer; returns the number of failures (0 or 1).
fn call(
    registry: &Registry,
    tool: &str,
    args: &serde_json::Value,
    answers: &mut Vec<serde_json::Value>,
    out: &mut dyn Write,
) -> std::io::Result<i32> {
    writeln!(out, "$ shiftwork-mcp call {tool} '{args}'")?;
    let Some(def) = registry.get(tool) else {
        writeln!(out, "  (tool {tool} is not in this build)")?;
        return Ok(1);
    };
    let outcome = def
        .call(args.as_object().unwrap_or(&serde_json::Map::new()))
        .outcome;
    let answer = match &outcome {
        crate::registry::Outcome::ToolError(message) => {
            answers.push(serde_json::Value::Null);
            format!("tool error: {message}")
        }
        crate::registry::Outcome::Answer(value, _) => {
            answers.push(value.clone());
            crate::registry::Outcome::Answer(value.clone(), TextStyle::Pretty).text()
        }
        _ => {
            answers.push(outcome.structured().unwrap_or_default());
            outcome.text()
        }
    };
    writeln!(out, "{answer}\n")?;
    Ok(0)
}
