//! The `shiftwork-mcp` binary: see the crate documentation of the `shiftwork_mcp` library.

mod view_command;

use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::Duration;

use shiftwork_mcp::cli::{self, Command};
use shiftwork_mcp::registry::{Arguments, Outcome, Registry};
use shiftwork_mcp::settings::Settings;
use shiftwork_mcp::stdio::Session;
use shiftwork_mcp::terminal::{print_err, print_json, print_out};
use shiftwork_mcp::{Server, groups, instructions, log, shutdown};

/// The server's allocator: a call builds and drops many small values (argument trees, plans, answer
/// texts), and mimalloc's thread-local free lists make that a fraction of what the system allocator
/// costs on this path.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Asks Linux not to back this process's memory with transparent huge pages. mimalloc advises them
/// (`MADV_HUGEPAGE`) on its arenas, and once it has given a freed run back to the system between
/// two calls, the next call's first touch faults in and zeroes a whole 2 MiB page for what needs a
/// few 4 KiB ones. A client calling `work_plan` on 3,000 nodes every 40 ms cost 2.2 ms of server
/// CPU a call with huge pages and 1.3 ms without. The flag is the kernel's, so a command the server
/// starts (a relay probe) inherits it.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and sets a flag of this process only; its
    // failure (an old kernel) leaves things as they were, which is correct too.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    no_huge_pages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let groups = groups::all();
    let invocation = match cli::parse(&args, &groups) {
        Ok(inv) => inv,
        Err(cli::UsageError(message)) => return usage_error(&message),
    };
    let settings = Settings::from_process(invocation.flags.clone());
    match invocation.command {
        Command::Help(text) => {
            print_out(&text);
            ExitCode::SUCCESS
        }
        Command::Usage => {
            print_err(&shiftwork_mcp::help::usage(&groups));
            ExitCode::from(2)
        }
        Command::Tools {
            groups: selected,
            markdown,
        } => {
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            print_out(&if markdown {
                shiftwork_mcp::help::tools_markdown(&registry)
            } else {
                shiftwork_mcp::help::tools(&registry)
            });
            ExitCode::SUCCESS
        }
        Command::ToolHelp {
            groups: selected,
            tool,
        } => {
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            match registry.get(&tool) {
                Some(def) => {
                    print_out(&shiftwork_mcp::help::tool_help(def));
                    ExitCode::SUCCESS
                }
                None => unknown_tool(&registry, &tool),
            }
        }

        Command::Version => {
            print_out(&format!("shiftwork-mcp {}\n", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Command::Serve { groups: selected } => {
            // Before any thread starts, so that every thread inherits the blocked signals, and before
            // any file is read, so that a signal ends start-up at any step.
            let signals = shutdown::Signals::take();
            let over_http = settings.value(&shiftwork_mcp::http::HTTP).is_some();
            let format = match shiftwork_mcp::telemetry::LogFormat::of(&settings) {
                Ok(format) => format,
                Err(message) => return usage_error(&message),
            };
            shiftwork_mcp::telemetry::init(shiftwork_mcp::telemetry::Options {
                default_level: if over_http { "info" } else { "warn" },
                format,
                metrics_endpoint: over_http,
            });
            // A panic's message can quote what a request carried: bounded and escaped like any
            // logged sentence.
            std::panic::set_hook(Box::new(|info| {
                tracing::error!("{}", shiftwork_seams::echo::echo(&info.to_string()));
            }));
            test_pause(&settings);
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            let selected_names: Vec<&str> = selected.iter().map(|s| s.as_ref()).collect();
            let views = match shiftwork_mcp::resources::Views::build(&selected_names, &settings) {
                Ok(views) => views,
                Err(message) => return usage_error(&message),
            };
            let checkpoint = settings
                .value(&shiftwork_mcp::resources::CHECKPOINT)
                .unwrap_or(shiftwork_mcp::resources::DEFAULT_CHECKPOINT)
                .to_owned();
            let server = Server::with_resources(
                registry,
                instructions(&groups, &selected),
                views,
                &selected_names,
                checkpoint,
            );
            match shiftwork_mcp::http::HttpConfig::from_settings(&settings) {
                Err(message) => return usage_error(&message),
                Ok(Some(config)) => return serve_http(server, config, signals),
                Ok(None) => {}
            }
            let (input, output) = match (
                std::io::stdin().as_fd().try_clone_to_owned(),
                std::io::stdout().as_fd().try_clone_to_owned(),
            ) {
                (Ok(input), Ok(output)) => (std::fs::File::from(input), std::fs::File::from(output)),
                (Err(e), _) | (_, Err(e)) => return fail(&format!("cannot use stdin and stdout: {e}")),
            };
            shiftwork_mcp::stdio::enlarge_pipe(input.as_fd());
            shiftwork_mcp::stdio::enlarge_pipe(output.as_fd());
            let session = Session::start(server, input, output);
            if let Some(signals) = &signals {
                signals.drain(session.clone());
            }
            session.wait();
            shiftwork_mcp::telemetry::shutdown(shutdown::GRACE);
            log::flush(Duration::from_millis(200));
            ExitCode::SUCCESS
        }
        Command::Call {
            groups: selected,
            tool,
            arguments,
            pretty,
        } => {
            log::init();
            let registry = match Registry::build(&groups, &selected, &settings) {
                Ok(r) => r,
                Err(message) => return usage_error(&message),
            };
            let Some(def) = registry.get(&tool) else {
                return unknown_tool(&registry, &tool);
            };
            let arguments = match arguments.read() {
                Ok(text) => text,
                Err(message) => return usage_error(&message),
            };
            let arguments = match Arguments::parse(arguments) {
                Ok(arguments) => arguments,
                Err(message) => return usage_error(&message),
            };
            let outcome = def.invoke(&arguments).outcome;
            let text = match (&outcome, pretty) {
                (Outcome::ToolError(message), _) => {
                    print_err(&format!("shiftwork-mcp: {message}\n"));
                    log::flush(Duration::from_millis(200));
                    return ExitCode::from(1);
                }
                (Outcome::Prerendered { .. }, true) => outcome.text(),
                (Outcome::Answer(value, _), true) => {
                    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
                }
                (Outcome::Answer(value, _), false) => value.to_string(),
                (Outcome::Prerendered { structured, .. }, false) => structured.clone(),
            };
            print_json(&text);
            log::flush(Duration::from_millis(200));
            ExitCode::SUCCESS
        }
        Command::Demo { keep } => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match shiftwork_mcp::demo::run(&groups, keep, &mut out)
                .and_then(|code| out.flush().map(|()| code))
            {
                Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
                // The reader went away (`demo | head`): the demo has cleaned up; end quietly.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => fail(&format!("the demo failed: {e}")),
            }
        }
        Command::Token { args } => {
            ExitCode::from(u8::try_from(shiftwork_mcp::tokens::command(&args)).unwrap_or(1))
        }
        Command::Watch { args } => view_command::watch(&args),
        Command::Plan { args } => view_command::plan(&args),
        Command::Init { args } => ExitCode::from(shiftwork_mcp::init::command(&args)),
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

/// A usage error naming the tools there are.
fn unknown_tool(registry: &Registry, tool: &str) -> ExitCode {
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name).collect();
    let names = if names.is_empty() {
        String::from("(none)")
    } else {
        names.join(", ")
    };
    usage_error(&format!(
        "unknown tool '{}'; tools: {names}",
        shiftwork_seams::echo::clip_echo(tool)
    ))
}

/// `serve --http`: binds, takes the signals, serves until the first signal has drained it.
fn serve_http(
    server: Server,
    config: shiftwork_mcp::http::HttpConfig,
    signals: Option<shutdown::Signals>,
) -> ExitCode {
    let http = match shiftwork_mcp::http::HttpServer::bind(server, config) {
        Ok(http) => http,
        Err(message) => return fail(&message),
    };
    if let Some(signals) = &signals {
        signals.drain(http.handle());
    }
    match http.url() {
        Ok(url) => tracing::info!("serving MCP at {url}"),
        Err(e) => tracing::warn!("the listening address is unknown: {e}"),
    }
    if let Some(url) = http.ui_url() {
        tracing::info!("serving the web view at {url}");
    }
    let served = http.run();
    shiftwork_mcp::telemetry::shutdown(shutdown::GRACE);
    log::flush(Duration::from_millis(200));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

/// In a build for the tests only (the contracts' `test-failpoints` feature): holds the first poll
/// that reaches the pause point named in `SHIFTWORK_TEST_PAUSE_AT` until its call is cancelled (and,
/// at `poll-answered`, until its answer is dropped), saying `test pause at POINT` on stderr, so a test
/// cancels a call at that very step. A release build has no pause point and reads no such variable.
fn test_pause(settings: &Settings) {
    use shiftwork_contracts::failpoints;
    use shiftwork_seams::{Clock, Signal, SystemClock};
    if !failpoints::COMPILED {
        return;
    }
    let Some(point) = settings.env("SHIFTWORK_TEST_PAUSE_AT").map(str::to_owned) else {
        return;
    };
    let fired = std::sync::atomic::AtomicBool::new(false);
    failpoints::on_pause(Box::new(move |name, cancel| {
        if name != point || fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        tracing::warn!("test pause at {name}");
        let clock = SystemClock::new();
        let wake = Signal::new();
        cancel.attach(&wake);
        clock.wait_until(&wake, clock.monotonic() + Duration::from_secs(30));
        if name == "poll-answered" {
            let deadline = clock.monotonic() + Duration::from_secs(2);
            while !cancel.is_undelivered() && clock.monotonic() < deadline {
                clock.sleep(Duration::from_millis(10));
            }
        }
    }));
}

fn usage_error(message: &str) -> ExitCode {
    print_err(&format!(
        "shiftwork-mcp: {message}\nTry 'shiftwork-mcp --help'.\n"
    ));
    ExitCode::from(2)
}

fn fail(message: &str) -> ExitCode {
    print_err(&format!("shiftwork-mcp: {message}\n"));
    ExitCode::from(1)
}
