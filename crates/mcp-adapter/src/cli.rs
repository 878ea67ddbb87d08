//! The command line: `serve` and the other subcommands, the global flags, and the usage errors
//! (exit status 2).
//!
//! [`parse`] turns the arguments into a [`Command`]; each subcommand is one arm of its `match` and
//! one variant of [`Command`], and `main.rs` runs it. The groups known to `--tools` are the groups
//! built into the binary ([`crate::groups::all`]), never a second list.

use crate::registry::Group;
use crate::settings::Setting;

/// The `--tools` setting: which tool groups `serve` offers; `--help` appends the groups built into
/// the binary.
pub const TOOLS: Setting = Setting {
    flag: "--tools",
    env: None,
    takes_value: true,
    help: "comma list of tool groups to serve (default: all)",
};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `serve`: the MCP server over stdio.
    Serve {
        /// The selected groups.
        groups: Vec<&'static str>,
    },
    /// `call TOOL [JSON | - | @FILE]`.
    Call {
        /// The selected groups.
        groups: Vec<&'static str>,
        /// The tool's name.
        tool: String,
        /// Where the arguments' JSON text comes from (default `{}`).
        arguments: ArgumentsSource,
        /// Pretty-print the answer.
        pretty: bool,
    },
    /// `call TOOL --help`: the tool's description and arguments.
    ToolHelp {
        /// The selected groups.
        groups: Vec<&'static str>,
        /// The tool's name.
        tool: String,
    },
    /// `tools`: every tool with its title.
    Tools {
        /// The selected groups.
        groups: Vec<&'static str>,
        /// `--markdown`: the user guide's tool reference instead.
        markdown: bool,
    },

    /// `demo`.
    Demo {
        /// Keep the demo's temporary directory.
        keep: bool,
    },
    /// `<group> ARGS…`: a group's own command line.
    Group {
        /// The group's name.
        group: &'static str,
        /// The arguments after the group's name.
        args: Vec<String>,
    },
    /// `watch [OPTIONS]`: the live terminal view; the options are parsed by its command.
    Watch {
        /// The arguments after `watch`.
        args: Vec<String>,
    },
    /// `token add|list|revoke …`: the bearer tokens of `serve --http`.
    Token {
        /// The arguments after `token`.
        args: Vec<String>,
    },
    /// `init PLAN.toml [--checkpoint PATH]`: a job's checkpoint from a TOML plan; the options are
    /// parsed by its command.
    Init {
        /// The arguments after `init`.
        args: Vec<String>,
    },
    /// `plan [OPTIONS]`: a checkpoint's plan as a picture.
    Plan {
        /// The arguments after `plan`.
        args: Vec<String>,
    },
    /// `--help`, or a command's `--help`: the text to print (exit 0).
    Help(String),
    /// No command at all: the whole usage on stderr (exit 2).
    Usage,
    /// `--version`.
    Version,
}

/// A parsed command line: the command and the settings (flags, plus the environment read now).
#[derive(Debug, Clone)]
pub struct Invocation {
    /// What to do.
    pub command: Command,
    /// The flags given.
    pub flags: Vec<(&'static str, String)>,
}

/// A usage error: printed on stderr with the usage, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

/// Whether `args` ask for help (`--help` or `-h` before any `--`).
pub fn asks_help(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || a == "-h")
}

fn help_of(text: String) -> Result<Invocation, UsageError> {
    Ok(Invocation {
        command: Command::Help(text),
        flags: Vec::new(),
    })
}

/// Parses `args` (without the program name).
pub fn parse(args: &[String], groups: &[&Group]) -> Result<Invocation, UsageError> {
    use crate::help::command_help;
    let Some(first) = args.first() else {
        return Ok(Invocation {
            command: Command::Usage,
            flags: Vec::new(),
        });
    };
    let rest = &args[1..];
    match first.as_str() {
        "--help" | "-h" | "help" => help_of(crate::help::usage(groups)),
        "--version" | "-V" => Ok(Invocation {
            command: Command::Version,
            flags: Vec::new(),
        }),
        "serve" => {
            if asks_help(rest) {
                return help_of(command_help(
                    "serve [--tools LIST] [--http ADDR] [OPTIONS]",
                    "Serves the tools over MCP: newline-delimited JSON-RPC on stdin and stdout (what an MCP client starts), \
                     or Streamable HTTP at POST /mcp with --http, where every request needs a bearer token or a JWT.",
                    &serve_settings(groups),
                    &[],
                    &serve_notes(groups),
                ));
            }
            let ParsedFlags {
                flags, positional, ..
            } = parse_flags(rest, &serve_settings(groups), &[])?;
            if let Some(p) = positional.first() {
                return Err(UsageError(format!(
                    "serve takes no positional argument, got '{}'",
                    shiftwork_seams::echo::echo(p)
                )));
            }
            let groups = select_groups(tools_flag(&flags), groups)?;
            Ok(Invocation {
                command: Command::Serve { groups },
                flags,
            })
        }
        "call" => {
            let wants_help = asks_help(rest);
            let without_help: Vec<String> = rest
                .iter()
                .filter(|a| !(wants_help && (*a == "--help" || *a == "-h")))
                .cloned()
                .collect();
            let ParsedFlags {
                flags,
                positional,
                switches,
            } = parse_flags(&without_help, &settings_of(groups, true), &["--pretty"])?;
            let selected = select_groups(tools_flag(&flags), groups)?;
            let tool = match positional.first() {
                Some(t) if wants_help => {
                    return Ok(Invocation {
                        command: Command::ToolHelp {
                            groups: selected,
                            tool: t.clone(),
                        },
                        flags,
                    });
                }
                Some(t) => t.clone(),
                None if wants_help => {
                    return help_of(command_help(
                        "call TOOL [JSON | - | @FILE] [--pretty] [OPTIONS]",
                        "Runs one tool once through the same handler as serve and prints its answer as one JSON object. \
                         The arguments are a JSON object: given inline, read from stdin with -, or from a file with @FILE \
                         (default {}). Exit 0 when the tool answered (a refusal included), 1 on a tool error (on stderr), \
                         2 on a usage error. shiftwork-mcp tools lists the tools; call TOOL --help shows one's arguments.",
                        &settings_of(groups, true),
                        &[("--pretty", "print the answer indented")],
                        "",
                    ));
                }
                None => {
                    return Err(UsageError(String::from(
                        "call needs a tool name: call TOOL [JSON | - | @FILE] (shiftwork-mcp tools lists them)",
                    )));
                }
            };
            if positional.len() > 2 {
                return Err(UsageError(format!(
                    "call takes TOOL and one JSON argument, got '{}'",
                    shiftwork_seams::echo::echo(&positional[2])
                )));
            }
            let arguments = match positional.get(1).map(String::as_str) {
                None => ArgumentsSource::Inline(String::from("{}")),
                Some("-") => ArgumentsSource::Stdin,
                Some(text) if text.starts_with('@') => ArgumentsSource::File(text[1..].into()),
                Some(text) => ArgumentsSource::Inline(text.to_owned()),
            };
            Ok(Invocation {
                command: Command::Call {
                    groups: selected,
                    tool,
                    arguments,
                    pretty: switches.contains(&"--pretty"),
                },
                flags,
            })
        }
        "tools" => {
            if asks_help(rest) {
                return help_of(command_help(
                    "tools [--tools LIST] [--markdown]",
                    "Lists every tool with its title and the first sentence of its description.",
                    &[TOOLS],
                    &[(
                        "--markdown",
                        "print the user guide's tool reference (docs/src/reference/tools.md) instead",
                    )],
                    "shiftwork-mcp call TOOL --help shows a tool's arguments.\n",
                ));
            }
            let ParsedFlags {
                flags,
                positional,
                switches,
            } = parse_flags(rest, &[TOOLS], &["--markdown"])?;
            if let Some(p) = positional.first() {
                return Err(UsageError(format!(
                    "tools takes no positional argument, got '{}'",
                    shiftwork_seams::echo::echo(p)
                )));
            }
            let groups = select_groups(tools_flag(&flags), groups)?;
            Ok(Invocation {
                command: Command::Tools {
                    groups,
                    markdown: switches.contains(&"--markdown"),
                },
                flags,
            })
        }
        "demo" => {
            if asks_help(rest) {
                return help_of(command_help(
                    "demo [--keep]",
                    "A scripted tour through the same handlers as serve, in a temporary directory: a job planned, a unit \
                     clocked in and out, a work log, a contract handed over and fulfilled, an hours check. Without --keep \
                     nothing is left anywhere.",
                    &[],
                    &[("--keep", "keep the demo's directory and print how to go on in it")],
                    "",
                ));
            }
            let ParsedFlags {
                positional, switches, ..
            } = parse_flags(rest, &[], &["--keep"])?;
            if let Some(p) = positional.first() {
                return Err(UsageError(format!(
                    "demo takes no argument, got '{}'",
                    shiftwork_seams::echo::echo(p)
                )));
            }
            Ok(Invocation {
                command: Command::Demo {
                    keep: switches.contains(&"--keep"),
                },
                flags: Vec::new(),
            })
        }
        "watch" => Ok(Invocation {
            command: Command::Watch { args: rest.to_vec() },
            flags: Vec::new(),
        }),
        "plan" => Ok(Invocation {
            command: Command::Plan { args: rest.to_vec() },
            flags: Vec::new(),
        }),
        "init" => Ok(Invocation {
            command: Command::Init { args: rest.to_vec() },
            flags: Vec::new(),
        }),
        "token" => Ok(Invocation {
            command: Command::Token { args: rest.to_vec() },
            flags: Vec::new(),
        }),
        other => match groups.iter().find(|g| g.name == other && g.command.is_some()) {
            Some(group) => Ok(Invocation {
                command: Command::Group {
                    group: group.name,
                    args: rest.to_vec(),
                },
                flags: Vec::new(),
            }),
            None => Err(UsageError(format!(
                "unknown command '{}'; commands: {}",
                shiftwork_seams::echo::clip(other, 100),
                crate::help::command_names(groups)
            ))),
        },
    }
}

/// Where `call` reads its arguments from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentsSource {
    /// Given on the command line.
    Inline(String),
    /// `-`: standard input.
    Stdin,
    /// `@FILE`: a file.
    File(std::path::PathBuf),
}

/// The largest arguments text `call` reads from stdin or a file (the server's line limit).
pub const MAX_ARGUMENTS: u64 = crate::wire::MAX_LINE as u64;

impl ArgumentsSource {
    /// The arguments' text; the error names the source and what is wrong.
    pub fn read(&self) -> Result<String, String> {
        use std::io::Read as _;
        let bytes = match self {
            ArgumentsSource::Inline(text) => return Ok(text.clone()),
            ArgumentsSource::Stdin => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .take(MAX_ARGUMENTS + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read the arguments from stdin: {e}"))?;
                if bytes.len() as u64 > MAX_ARGUMENTS {
                    return Err(format!(
                        "the arguments on stdin are over {MAX_ARGUMENTS} bytes (16 MiB)"
                    ));
                }
                bytes
            }
            ArgumentsSource::File(path) => {
                crate::settings::read_named_file(path, MAX_ARGUMENTS).map_err(|why| {
                    format!(
                        "cannot read the arguments from {}: {why}",
                        shiftwork_seams::echo::echo(&path.display().to_string())
                    )
                })?
            }
        };
        String::from_utf8(bytes).map_err(|_| String::from("the arguments are not UTF-8 text"))
    }
}

/// What `serve --help` says after the options.
fn serve_notes(groups: &[&Group]) -> String {
    let built: Vec<&str> = groups.iter().map(|g| g.name).collect();
    format!(
        "Tool groups built into this binary: {}.\n\
         A switch's variable takes 1, true, yes, on or 0, false, no, off (any case).\n\
         stdio: at most {} requests run at once (new work waits; cancels and pings are read whatever the bound);\n\
         SIGTERM or SIGINT lets the calls in flight finish and exits 0 within {} s (the last export of telemetry included), a second signal exits at once.\n\
         Logs go to stderr; RUST_LOG filters them (default: warn on stdio, info over HTTP).\n",
        built.join(", "),
        crate::stdio::MAX_IN_FLIGHT,
        crate::shutdown::GRACE.as_secs()
    )
}

/// The settings `serve` accepts: those of [`settings_of`] and the HTTP transport's.
pub fn serve_settings(groups: &[&Group]) -> Vec<Setting> {
    let mut all = settings_of(groups, true);
    all.extend_from_slice(crate::http::SETTINGS);
    all.extend_from_slice(crate::http::ui::SETTINGS);
    all
}

/// The settings the `serve` and `call` commands accept: `--tools` and every group's.
pub fn settings_of(groups: &[&Group], with_tools: bool) -> Vec<Setting> {
    let mut all: Vec<Setting> = if with_tools {
        vec![TOOLS, crate::telemetry::LOG_FORMAT]
    } else {
        Vec::new()
    };
    for group in groups {
        for s in group.settings {
            if !all.iter().any(|a| a.flag == s.flag) {
                all.push(*s);
            }
        }
    }
    all
}

/// Splits `args` into the declared flags with their values, the positional arguments and the given
/// switches of `switches`. `--flag VALUE` and `--flag=VALUE` are both accepted.
pub fn parse_flags(
    args: &[String],
    declared: &[Setting],
    switches: &[&'static str],
) -> Result<ParsedFlags, UsageError> {
    let mut flags = Vec::new();
    let mut positional = Vec::new();
    let mut on = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if !arg.starts_with("--") || arg == "--" {
            positional.push(arg.clone());
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (arg.as_str(), None),
        };
        if let Some(s) = switches.iter().find(|s| **s == name) {
            if inline.is_some() {
                return Err(UsageError(format!("{name} takes no value")));
            }
            on.push(*s);
            continue;
        }
        let Some(setting) = declared.iter().find(|s| s.flag == name) else {
            let mut known: Vec<&str> = declared.iter().map(|s| s.flag).collect();
            known.extend(switches.iter().copied());
            let known = if known.is_empty() {
                String::from("(none)")
            } else {
                known.join(", ")
            };
            return Err(UsageError(format!("unknown option '{name}'; known: {known}")));
        };
        if !setting.takes_value {
            if inline.is_some() {
                return Err(UsageError(format!("{name} takes no value")));
            }
            flags.push((setting.flag, String::new()));
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None if i < args.len() => {
                i += 1;
                args[i - 1].clone()
            }
            None => return Err(UsageError(format!("{name} needs a value"))),
        };
        flags.push((setting.flag, value));
    }
    Ok(ParsedFlags {
        flags,
        positional,
        switches: on,
    })
}

/// What [`parse_flags`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedFlags {
    /// Declared flags with their values (an empty value for a switch-like setting).
    pub flags: Vec<(&'static str, String)>,
    /// Positional arguments, in order.
    pub positional: Vec<String>,
    /// The extra switches that were given.
    pub switches: Vec<&'static str>,
}

/// The value of `--tools` among the parsed flags.
fn tools_flag<'a>(flags: &'a [(&'static str, String)]) -> Option<&'a str> {
    flags
        .iter()
        .find(|(f, _)| *f == TOOLS.flag)
        .map(|(_, v)| v.as_str())
}

/// Resolves `--tools`: a comma list of the groups built into the binary (`groups`, in `tools/list`
/// order); absent means all of them. The groups are known from the registry of built groups alone,
/// so a group left out of the build is unknown rather than silently empty.
pub fn select_groups(list: Option<&str>, groups: &[&Group]) -> Result<Vec<&'static str>, UsageError> {
    let known: Vec<&'static str> = groups.iter().map(|g| g.name).collect();
    let Some(list) = list else {
        return Ok(known);
    };
    let named = |known: &[&str]| {
        if known.is_empty() {
            String::from("(none)")
        } else {
            known.join(", ")
        }
    };
    let mut selected = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match known.iter().find(|g| **g == name) {
            Some(g) if !selected.contains(g) => selected.push(*g),
            Some(_) => {}
            None => {
                return Err(UsageError(format!(
                    "unknown tool group '{}'; known groups: {}",
                    shiftwork_seams::echo::clip(name, 100),
                    named(&known)
                )));
            }
        }
    }
    if selected.is_empty() {
        return Err(UsageError(format!(
            "--tools names no group; known groups: {}",
            named(&known)
        )));
    }
    Ok(selected)
}
