//! The command line (mcp.md "Command line", MC-2, MC-4).
//!
//! [`parse`] turns the arguments into a [`Command`]; each subcommand is one arm of its `match` and
//! one variant of [`Command`], and `main.rs` runs it. The groups known to `--tools` are the groups
//! built into the binary ([`crate::groups::all`]), never a second list.

use crate::registry::Group;
use crate::settings::Setting;

/// The `--tools` setting (MC-2); `--help` appends the groups built into the binary.
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
    /// `call TOOL [JSON]`.
    Call {
        /// The selected groups.
        groups: Vec<&'static str>,
        /// The tool's name.
        tool: String,
        /// The arguments' JSON text (default `{}`).
        arguments: String,
        /// Pretty-print the answer.
        pretty: bool,
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
    /// `watch [OPTIONS]`: the live terminal view (issue 15); the options are parsed by its command.
    Watch {
        /// The arguments after `watch`.
        args: Vec<String>,
    },
    /// `token add|list|revoke …`: the bearer tokens of `serve --http` (issue 29).
    Token {
        /// The arguments after `token`.
        args: Vec<String>,
    },
    /// `plan [OPTIONS]`: a checkpoint's plan as a picture (issue 15).
    Plan {
        /// The arguments after `plan`.
        args: Vec<String>,
    },
    /// `--help`.
    Help,
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

/// Parses `args` (without the program name).
pub fn parse(args: &[String], groups: &[&Group]) -> Result<Invocation, UsageError> {
    let Some(first) = args.first() else {
        return Err(UsageError(String::from(
            "a command is required: serve, call, demo",
        )));
    };
    let rest = &args[1..];
    match first.as_str() {
        "--help" | "-h" | "help" => Ok(Invocation {
            command: Command::Help,
            flags: Vec::new(),
        }),
        "--version" | "-V" => Ok(Invocation {
            command: Command::Version,
            flags: Vec::new(),
        }),
        "serve" => {
            let ParsedFlags {
                flags, positional, ..
            } = parse_flags(rest, &serve_settings(groups), &[])?;
            if let Some(p) = positional.first() {
                return Err(UsageError(format!(
                    "serve takes no positional argument, got '{p}'"
                )));
            }
            let groups = select_groups(tools_flag(&flags), groups)?;
            Ok(Invocation {
                command: Command::Serve { groups },
                flags,
            })
        }
        "call" => {
            let ParsedFlags {
                flags,
                positional,
                switches,
            } = parse_flags(rest, &settings_of(groups, true), &["--pretty"])?;
            let tool = match positional.first() {
                Some(t) => t.clone(),
                None => {
                    return Err(UsageError(String::from(
                        "call needs a tool name: call TOOL [JSON]",
                    )));
                }
            };
            if positional.len() > 2 {
                return Err(UsageError(format!(
                    "call takes TOOL and one JSON argument, got '{}'",
                    positional[2]
                )));
            }
            let arguments = positional.get(1).cloned().unwrap_or_else(|| String::from("{}"));
            let groups = select_groups(tools_flag(&flags), groups)?;
            Ok(Invocation {
                command: Command::Call {
                    groups,
                    tool,
                    arguments,
                    pretty: switches.contains(&"--pretty"),
                },
                flags,
            })
        }
        "demo" => {
            let ParsedFlags {
                positional, switches, ..
            } = parse_flags(rest, &[], &["--keep"])?;
            if let Some(p) = positional.first() {
                return Err(UsageError(format!("demo takes no argument, got '{p}'")));
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
                "unknown command '{other}'; commands: serve, call, demo"
            ))),
        },
    }
}

/// The settings `serve` accepts: those of [`settings_of`] and the HTTP transport's.
pub fn serve_settings(groups: &[&Group]) -> Vec<Setting> {
    let mut all = settings_of(groups, true);
    all.extend_from_slice(crate::http::SETTINGS);
    all
}

/// The settings the `serve` and `call` commands accept: `--tools` and every group's.
pub fn settings_of(groups: &[&Group], with_tools: bool) -> Vec<Setting> {
    let mut all: Vec<Setting> = if with_tools { vec![TOOLS] } else { Vec::new() };
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

/// Resolves `--tools` (MC-2): a comma list of the groups built into the binary (`groups`, in
/// `tools/list` order); absent means all of them. Issue 11 item 4: the groups are known from the
/// registry of built groups alone.
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

/// The text of `--help`.
pub fn help(groups: &[&Group]) -> String {
    let mut out = format!(
        "shiftwork-mcp {} — coordinate the work of AI coding agents over MCP\n\n\
         Usage:\n  shiftwork-mcp serve [--tools LIST] [OPTIONS]   serve the tools over stdio (MCP)\n  \
         shiftwork-mcp call TOOL [JSON] [--pretty] [OPTIONS]   run one tool once and print its answer\n  \
         shiftwork-mcp demo [--keep]   run a scripted tour in a temporary directory\n  \
         shiftwork-mcp watch [--checkpoint PATH]… [--hours EXPR] [--once] [OPTIONS]   live view of jobs, contracts, hours\n  \
         shiftwork-mcp plan [--checkpoint PATH] [--format text|mermaid]   a checkpoint's plan as a picture\n",
        env!("CARGO_PKG_VERSION")
    );
    for g in groups.iter().filter(|g| g.command.is_some()) {
        out.push_str(&format!(
            "  shiftwork-mcp {} --help   the {} group's own commands\n",
            g.name, g.name
        ));
    }
    let built: Vec<&str> = groups.iter().map(|g| g.name).collect();
    let built = if built.is_empty() {
        String::from("(none yet)")
    } else {
        built.join(", ")
    };
    out.push_str("  shiftwork-mcp --version | --help\n\nOptions (serve and call; a flag wins over its environment variable):\n");
    for s in settings_of(groups, true) {
        let flag = if s.takes_value {
            format!("{} VALUE", s.flag)
        } else {
            s.flag.to_owned()
        };
        let env = s.env.map(|e| format!(" [env {e}]")).unwrap_or_default();
        let help = if s.flag == TOOLS.flag {
            format!("{}: {}", s.help, built)
        } else {
            s.help.to_owned()
        };
        out.push_str(&format!("  {flag:<28} {help}{env}\n"));
    }
    out.push_str(&format!(
        "\nTool groups built into this binary: {built}.\n\
         A switch's variable takes 1, true, yes, on or 0, false, no, off (any case); a blank value counts as unset.\n\
         serve: at most {} requests run at once (reading waits meanwhile); SIGTERM or SIGINT lets the calls in\n\
         flight finish (at most {} s) and exits 0, a second signal exits at once.\n\
         Logs go to stderr; RUST_LOG filters them (default: warn); lines stderr cannot take are dropped and counted.\n",
        crate::stdio::MAX_IN_FLIGHT,
        crate::shutdown::GRACE.as_secs()
    ));
    out
}
