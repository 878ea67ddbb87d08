//! `shiftwork-mcp watch` and `shiftwork-mcp plan`: their options, resolved as the server resolves
//! the same ones (`--contracts-db`, `--agent`, `--zone` and their variables), then one call into
//! `shiftwork-watch`.
//!
//! What they print goes through the binary's own writers: standard output through `print_out`, so a
//! reader that went away (`plan … | head -1`) ends the command quietly with status 0 as it does
//! `call`; and every sentence on standard error through `shiftwork_seams::echo::escape_controls`,
//! so no value given (a `--format`, a positional argument, a path in an error) reaches the terminal
//! with a control or bidirectional character in it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use shiftwork_contracts::location::Location;
use shiftwork_mcp::cli::{self, ParsedFlags};
use shiftwork_mcp::groups::{contracts, hours};
use shiftwork_mcp::settings::{Setting, Settings};
use shiftwork_seams::echo::{echo, escape_controls};
use shiftwork_watch::gather::StoreLocation;
use shiftwork_watch::{PlanFormat, WatchError, WatchOptions};

/// `--checkpoint PATH`: a checkpoint to show (repeatable for `watch`).
const CHECKPOINT: Setting = Setting {
    flag: "--checkpoint",
    env: None,
    takes_value: true,
    help: "a checkpoint to show, one pane each (repeatable; default .shiftwork/checkpoint.json when it exists)",
};

/// `--hours EXPR`: the operating hours the hours line shows.
const HOURS: Setting = Setting {
    flag: "--hours",
    env: None,
    takes_value: true,
    help: "an operating-hours expression for the hours line (e.g. 'TZ=Europe/London Mon-Fri 09:00-17:30')",
};

/// `--agent NAME` as `watch` reads it.
const AGENT: Setting = Setting {
    help: "show only the contracts sent by or to this agent (default: all)",
    ..contracts::AGENT
};

/// `--zone IANA` as `watch` reads it.
const ZONE: Setting = Setting {
    help: "the zone times are shown in, and of --hours without TZ= (default: TZ, else the system zone, else UTC)",
    ..hours::ZONE
};

/// `--checkpoint PATH` of `plan`.
const PLAN_CHECKPOINT: Setting = Setting {
    help: "the checkpoint to draw (default .shiftwork/checkpoint.json when it exists)",
    ..CHECKPOINT
};

/// `--format text|mermaid` of `plan`.
const FORMAT: Setting = Setting {
    flag: "--format",
    env: None,
    takes_value: true,
    help: "text (default) or mermaid (a flowchart for Markdown)",
};

/// Where a job's checkpoint is by convention.
const DEFAULT_CHECKPOINT: &str = ".shiftwork/checkpoint.json";

/// `shiftwork-mcp watch`.
pub fn watch(args: &[String]) -> ExitCode {
    let declared = [CHECKPOINT, HOURS, contracts::CONTRACTS_DB, AGENT, ZONE];
    if cli::asks_help(args) {
        super::print_out(&help("watch [--once]", &declared));
        return ExitCode::SUCCESS;
    }
    let parsed = match cli::parse_flags(args, &declared, &["--once"]) {
        Ok(p) => p,
        Err(cli::UsageError(message)) => return usage_error(&message),
    };
    if let Some(p) = parsed.positional.first() {
        return usage_error(&format!("watch takes no positional argument, got '{}'", echo(p)));
    }
    let settings = Settings::from_process(parsed.flags.clone());
    let options = match options(&parsed, &settings) {
        Ok(o) => o,
        Err(message) => return usage_error(&message),
    };
    if parsed.switches.contains(&"--once") {
        let colour = std::io::stdout().is_terminal() && settings.env("NO_COLOR").is_none();
        // The snapshot is written whole, then printed as `call` prints: a closed reader ends quietly.
        let mut text = Vec::new();
        let unread = match shiftwork_watch::once(&options, colour, &mut text) {
            Ok(unread) => unread,
            Err(e) => return failure(e),
        };
        super::print_out(&String::from_utf8_lossy(&text));
        // A source that could not be read is named on stderr as well as in the view (exit 1); a store
        // that does not exist yet is an empty queue, read.
        for sentence in &unread {
            super::print_err(&format!("shiftwork-mcp: watch: {}\n", escape_controls(sentence)));
        }
        return if unread.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    match shiftwork_watch::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => failure(e),
    }
}

/// `shiftwork-mcp plan`.
pub fn plan(args: &[String]) -> ExitCode {
    let declared = [PLAN_CHECKPOINT, FORMAT];
    if cli::asks_help(args) {
        super::print_out(&help("plan", &declared));
        return ExitCode::SUCCESS;
    }
    let parsed = match cli::parse_flags(args, &declared, &[]) {
        Ok(p) => p,
        Err(cli::UsageError(message)) => return usage_error(&message),
    };
    if let Some(p) = parsed.positional.first() {
        return usage_error(&format!("plan takes no positional argument, got '{}'", echo(p)));
    }
    let checkpoints = checkpoints(&parsed);
    let checkpoint = match checkpoints.as_slice() {
        [one] => one.clone(),
        [] => {
            return usage_error(&format!(
                "plan needs --checkpoint PATH (there is no {DEFAULT_CHECKPOINT} here)"
            ));
        }
        _ => return usage_error("plan draws one checkpoint; give --checkpoint once"),
    };
    let format = match last(&parsed, &FORMAT) {
        None => PlanFormat::Text,
        Some(name) => match PlanFormat::parse(name) {
            Some(f) => f,
            None => {
                return usage_error(&format!("--format must be text or mermaid, not '{}'", echo(name)));
            }
        },
    };
    match shiftwork_watch::plan(&checkpoint, format) {
        Ok(picture) => {
            super::print_out(&picture);
            ExitCode::SUCCESS
        }
        Err(e) => failure(e),
    }
}

/// The binary's usage error (exit 2), its sentence escaped (no control character of a value reaches
/// the terminal raw).
fn usage_error(message: &str) -> ExitCode {
    super::usage_error(&escape_controls(message))
}

/// The binary's failure (exit 1), its sentence escaped, as a usage error's.
fn fail(message: &str) -> ExitCode {
    super::fail(&escape_controls(message))
}

/// The options of `watch`, resolved as the server resolves the same settings.
fn options(parsed: &ParsedFlags, settings: &Settings) -> Result<WatchOptions, String> {
    let config = contracts::config(settings)?;
    // The default store is shown once it exists; a store that was named is shown (and waited for)
    // in any case.
    let named = settings.value(&contracts::CONTRACTS_DB).is_some();
    let store = match config.location {
        Ok(Location::File(path)) if !named && !path.exists() => None,
        Ok(Location::File(path)) => Some(StoreLocation::Sqlite(path)),
        Ok(Location::Postgres(url)) => Some(StoreLocation::Postgres(url)),
        Err(_) => None,
    };
    let zone = hours::server_zone(settings, &ZONE, "the view")?;
    Ok(WatchOptions {
        checkpoints: checkpoints(parsed),
        store,
        // The raw value: the view refuses one that is not an agent name, naming it.
        agent: settings
            .value(&contracts::AGENT)
            .filter(|v| !v.is_empty())
            .map(str::to_owned),
        hours: last(parsed, &HOURS).map(str::to_owned),
        zone,
    })
}

/// Every `--checkpoint` in order, or the conventional one when none is given and it exists.
fn checkpoints(parsed: &ParsedFlags) -> Vec<PathBuf> {
    let given: Vec<PathBuf> = parsed
        .flags
        .iter()
        .filter(|(f, _)| *f == CHECKPOINT.flag)
        .map(|(_, v)| PathBuf::from(v))
        .collect();
    if given.is_empty() && std::path::Path::new(DEFAULT_CHECKPOINT).is_file() {
        return vec![PathBuf::from(DEFAULT_CHECKPOINT)];
    }
    given
}

fn last<'a>(parsed: &'a ParsedFlags, setting: &Setting) -> Option<&'a str> {
    parsed
        .flags
        .iter()
        .rev()
        .find(|(f, _)| *f == setting.flag)
        .map(|(_, v)| v.as_str())
}

/// The exit of a library error, with the flag that caused it named where there is one.
fn failure(e: WatchError) -> ExitCode {
    match e {
        WatchError::Hours(_) => usage_error(&format!("--hours: {e}")),
        WatchError::Agent(_) => usage_error(&format!("--agent / AGENT_NAME: {e}")),
        WatchError::NotATerminal => {
            usage_error(&format!("watch: {e}; use --once for one snapshot as plain text"))
        }
        WatchError::Plan(sentence) => fail(&sentence),
        other => fail(&other.to_string()),
    }
}

fn help(command: &str, declared: &[Setting]) -> String {
    let mut out = format!("Usage: shiftwork-mcp {command} [OPTIONS]\n\nOptions:\n");
    if command.starts_with("watch") {
        out.push_str(&format!(
            "  {:<28} print one snapshot as plain text and exit (1 when a source could not be read)\n",
            "--once"
        ));
    }
    for s in declared {
        let flag = format!("{} VALUE", s.flag);
        let env = s.env.map(|e| format!(" [env {e}]")).unwrap_or_default();
        out.push_str(&format!("  {flag:<28} {}{env}\n", s.help));
    }
    if command.starts_with("watch") {
        out.push_str(
            "\nKeys: q quit · tab next pane · arrows scroll · / filter by unit or agent (Enter keep, Esc clear).\n",
        );
    }
    out
}
