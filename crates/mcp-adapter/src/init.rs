//! `shiftwork-mcp init PLAN.toml [--checkpoint PATH]`: a job's checkpoint written from a short TOML
//! plan, through `shiftwork-core`'s checkpoint builder — so the schema and the planner judge it (a
//! duplicate id, an unknown dependency, a cycle: the planner's own sentences) before anything is
//! written, and an existing checkpoint is never overwritten. `init --example` prints a plan to
//! start from.
//!
//! This module reads the plan file and maps its fields onto the library's types; every rule of what
//! a valid job is lives in `shiftwork_core::authoring`.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use shiftwork_core::authoring::{CheckpointBuilder, Job, RepoState, create, default_checkpoint};
use shiftwork_core::model::{PlannedUnit, Role, Text, UnitId};
use shiftwork_core::{CheckpointPaths, Env};
use toml::Spanned;

use crate::cli::{self, UsageError};
use crate::settings::Setting;
use crate::terminal::{print_err, print_out};

/// `--checkpoint PATH`: where to write the checkpoint.
pub const CHECKPOINT: Setting = Setting {
    flag: "--checkpoint",
    env: None,
    takes_value: true,
    help: "where to write it (default .shiftwork/checkpoint.json under the repository root: the nearest directory upwards holding .git, else this one)",
};

/// The largest plan file read.
pub const MAX_PLAN_BYTES: u64 = 1024 * 1024;

/// The plan `init --example` prints.
pub const EXAMPLE: &str = r#"# A job for shiftwork-mcp init: shiftwork-mcp init plan.toml
[job]
id = "parser-job"
goal = "Ship the new parser"
done_definition = "cargo test passes"
constraints = ["no new dependencies"]

[[unit]]
id = "lexer"
title = "Write the lexer"
role = "implementer"          # planner, implementer or reviewer
verify = "cargo test -p lexer"

[[unit]]
id = "parser"
title = "Write the parser"
role = "implementer"
depends_on = ["lexer"]
verify = "cargo test -p parser"
brief = "briefs/parser.md"    # optional; defaults to briefs/<id>.md

[[unit]]
id = "review"
title = "Review the parser"
role = "reviewer"
depends_on = ["parser"]
verify = "cargo clippy -- -D warnings"
"#;

/// The synopsis.
pub const SYNOPSIS: &str = "init PLAN.toml [--checkpoint PATH] | init --example";

/// `shiftwork-mcp init …`: the exit status (0 written or printed, 1 refused, 2 a usage error).
pub fn command(args: &[String]) -> u8 {
    if cli::asks_help(args) {
        print_out(&help());
        return 0;
    }
    let parsed = match cli::parse_flags(args, &[CHECKPOINT], &["--example"]) {
        Ok(parsed) => parsed,
        Err(UsageError(message)) => return usage_error(&message),
    };
    if parsed.switches.contains(&"--example") {
        if let Some(extra) = parsed.positional.first().or(parsed.flags.first().map(|f| &f.1)) {
            return usage_error(&format!(
                "init --example takes nothing else, got '{}'",
                shiftwork_seams::echo::echo(extra)
            ));
        }
        print_out(EXAMPLE);
        return 0;
    }
    let plan = match parsed.positional.as_slice() {
        [plan] => PathBuf::from(plan),
        [] => return usage_error("init needs a plan: init PLAN.toml (init --example prints one)"),
        [_, extra, ..] => {
            return usage_error(&format!(
                "init takes one plan file, got '{}' too",
                shiftwork_seams::echo::echo(extra)
            ));
        }
    };
    let checkpoint = parsed
        .flags
        .iter()
        .find(|(flag, _)| *flag == CHECKPOINT.flag)
        .map(|(_, value)| PathBuf::from(value));
    match init(&plan, checkpoint.as_deref()) {
        Ok(report) => {
            print_out(&report);
            0
        }
        Err(message) => {
            print_err(&format!("shiftwork-mcp: {message}\n"));
            1
        }
    }
}

fn help() -> String {
    crate::help::command_help(
        SYNOPSIS,
        "Writes a job's checkpoint from a short TOML plan: [job] with id, goal, done_definition and \
         constraints; one [[unit]] per unit with id, title, role (planner, implementer or reviewer), \
         depends_on, verify and brief (default briefs/<id>.md). The plan is checked as every reader \
         checks a checkpoint — a duplicate id, an unknown dependency or a cycle is refused and nothing \
         is written — and an existing checkpoint is never overwritten. Prints the plan's waves.",
        &[CHECKPOINT],
        &[("--example", "print a plan to start from")],
        "Then: shiftwork-mcp call shiftwork_plan '{\"checkpoint\": \".shiftwork/checkpoint.json\"}' --pretty\n",
    )
}

fn usage_error(message: &str) -> u8 {
    print_err(&format!(
        "shiftwork-mcp: {message}\nTry 'shiftwork-mcp init --help'.\n"
    ));
    2
}

/// The plan file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    job: JobTable,
    #[serde(default, rename = "unit")]
    units: Vec<UnitTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobTable {
    id: Spanned<String>,
    goal: Spanned<String>,
    done_definition: Spanned<String>,
    #[serde(default)]
    constraints: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnitTable {
    id: Spanned<String>,
    title: Spanned<String>,
    role: Spanned<String>,
    #[serde(default)]
    depends_on: Vec<Spanned<String>>,
    verify: Spanned<String>,
    brief: Option<Spanned<String>>,
}

/// Reads the plan at `plan`, writes its checkpoint at `checkpoint` (default: the repository's), and
/// says what it wrote; the error is the sentence to print.
fn init(plan: &Path, checkpoint: Option<&Path>) -> Result<String, String> {
    let fs = shiftwork_seams::OsFs;
    let shown = plan.display().to_string();
    let bytes = crate::settings::read_named_file(plan, MAX_PLAN_BYTES)
        .map_err(|why| format!("cannot read the plan {shown}: {why}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: not UTF-8 text (a bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let file: PlanFile = toml::from_str(&text).map_err(|e| at(&shown, &text, e.span(), e.message()))?;
    let builder = builder(&shown, &text, file)?;
    let cwd = std::env::current_dir().map_err(|e| format!("the working directory cannot be read: {e}"))?;
    let path = match checkpoint {
        Some(path) => path.to_path_buf(),
        None => default_checkpoint(&fs, &cwd),
    };
    let root = CheckpointPaths::new(&path).repo_root(&fs);
    let new = builder
        .repo(RepoState::read(&fs, &root).unwrap_or_else(RepoState::unknown))
        .build()
        .map_err(|refused| refused.to_string())?;
    let env = Env::os();
    create(&env, &path, &new).map_err(|refused| refused.to_string())?;
    let plan = new.plan();
    let units: usize = plan.batches.iter().map(Vec::len).sum();
    let shown_path = shown_relative(&path, &cwd);
    let mut out = format!(
        "wrote {shown_path}: {units} unit{}, cursor {}\nwaves:\n",
        if units == 1 { "" } else { "s" },
        plan.cursor
    );
    for (i, wave) in plan.batches.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, wave.join(", "));
    }
    let _ = writeln!(
        out,
        "next: shiftwork-mcp call shiftwork_clock_in '{}'",
        serde_json::json!({ "checkpoint": shown_path })
    );
    Ok(out)
}

/// `path` as the user gave it, or relative to `cwd` when it is below it.
fn shown_relative(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The builder of the plan's job and units; a field the library refuses (an empty text, a role
/// outside the three) is named with its line.
fn builder(shown: &str, text: &str, file: PlanFile) -> Result<CheckpointBuilder, String> {
    let field = |value: &Spanned<String>, what: &str| -> Result<Text, String> {
        Text::new(value.get_ref().as_str())
            .map_err(|e| at(shown, text, Some(value.span()), &format!("{what}: {e}")))
    };
    let id = |value: &Spanned<String>, what: &str| -> Result<UnitId, String> {
        UnitId::new(value.get_ref().as_str())
            .map_err(|e| at(shown, text, Some(value.span()), &format!("{what}: {e}")))
    };
    let job = Job::new(
        field(&file.job.id, "job.id")?,
        field(&file.job.goal, "job.goal")?,
        field(&file.job.done_definition, "job.done_definition")?,
    )
    .with_constraints(
        file.job
            .constraints
            .iter()
            .map(|c| field(c, "job.constraints"))
            .collect::<Result<_, _>>()?,
    );
    let mut builder = CheckpointBuilder::new(job);
    for unit in &file.units {
        let role: Role = unit
            .role
            .get_ref()
            .parse()
            .map_err(|e| at(shown, text, Some(unit.role.span()), &format!("unit.role: {e}")))?;
        let mut planned = PlannedUnit::new(
            id(&unit.id, "unit.id")?,
            field(&unit.title, "unit.title")?,
            role,
            field(&unit.verify, "unit.verify")?,
        )
        .depends_on(
            unit.depends_on
                .iter()
                .map(|d| id(d, "unit.depends_on"))
                .collect::<Result<Vec<_>, _>>()?,
        );
        if let Some(brief) = &unit.brief {
            planned = planned.brief_path(field(brief, "unit.brief")?);
        }
        builder = builder.unit(planned);
    }
    Ok(builder)
}

/// `<file>: line L, column C: <message>` for the byte `span` of `text` (its start), or without a
/// place when there is none.
fn at(shown: &str, text: &str, span: Option<Range<usize>>, message: &str) -> String {
    let message = message.trim_end();
    match span {
        Some(span) => {
            let start = span.start.min(text.len());
            let before = text.get(..start).unwrap_or("");
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("{shown}: line {line}, column {column}: {message}")
        }
        None => format!("{shown}: {message}"),
    }
}
