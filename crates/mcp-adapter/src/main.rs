//! The `shiftwork-mcp` binary: see the crate documentation of the `shiftwork_mcp` library.

mod view_command;

use std::io::Write;
use std::process::ExitCode;

use serde_json::{Map, Value};
use shiftwork_mcp::cli::{self, Command};
use shiftwork_mcp::registry::{Arguments, Outcome, Registry};
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::{Server, groups, instructions};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let groups = groups::all();
    let invocation = match cli::parse(&args, &groups) {
        Ok(inv) => inv,
        Err(cli::UsageError(message)) => return usage_error(&message),
    };
    let settings = Settings::from_process(invocation.flags.clone());
    match invocation.command {
        Command::Help => {
            print!("{}", cli::help(&groups));
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("shiftwork-mcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Serve { groups: selected } => {
            init_logging();
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            let server = Server::new(registry, instructions(&groups, &selected));
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(rt) => rt,
                Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
            };
            match runtime.block_on(shiftwork_mcp::server::serve_stdio(server)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&format!("the MCP session ended with an error: {e}")),
            }
        }
        Command::Call {
            tool,
            arguments,
            pretty,
        } => {
            init_logging();
            let selected = match cli::select_groups(
                invocation
                    .flags
                    .iter()
                    .find(|(f, _)| *f == cli::TOOLS.flag)
                    .map(|(_, v)| v.as_str()),
            ) {
                Ok(s) => s,
                Err(cli::UsageError(message)) => return usage_error(&message),
            };
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            let Some(def) = registry.get(&tool) else {
                let names: Vec<&str> = registry.tools().iter().map(|t| t.name).collect();
                let names = if names.is_empty() {
                    String::from("(none)")
                } else {
                    names.join(", ")
                };
                return usage_error(&format!("unknown tool '{tool}'; tools: {names}"));
            };
            let map: Map<String, Value> = match serde_json::from_str::<Value>(&arguments) {
                Ok(Value::Object(map)) => map,
                Ok(_) => return usage_error("the arguments must be a JSON object"),
                Err(e) => return usage_error(&format!("the arguments are not valid JSON: {e}")),
            };
            let outcome = def.invoke(&Arguments::with_raw(map, arguments));
            match &outcome {
                Outcome::Answer(value, _) | Outcome::Rendered(value, _) => {
                    let text = match (&outcome, pretty) {
                        (Outcome::Rendered(_, text), true) => text.clone(),
                        (_, true) => {
                            serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
                        }
                        (_, false) => value.to_string(),
                    };
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Outcome::ToolError(message) => {
                    eprintln!("{message}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Demo { keep } => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match shiftwork_mcp::demo::run(&groups, keep, &mut out) {
                Ok(code) => {
                    let _ = out.flush();
                    ExitCode::from(u8::try_from(code).unwrap_or(1))
                }
                Err(e) => fail(&format!("the demo failed: {e}")),
            }
        }
        Command::Watch { args } => view_command::watch(&args),
        Command::Plan { args } => view_command::plan(&args),
        Command::Group { group, args } => {
            let code = groups
                .iter()
                .find(|g| g.name == group)
                .and_then(|g| g.command)
                .map(|command| command(&args, &settings))
                .unwrap_or(2);
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("shiftwork-mcp: {message}");
    eprintln!("Try 'shiftwork-mcp --help'.");
    ExitCode::from(2)
}

fn fail(message: &str) -> ExitCode {
    eprintln!("shiftwork-mcp: {message}");
    ExitCode::from(1)
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
