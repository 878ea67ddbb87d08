//! `shiftwork-mcp` — the one binary that serves the shiftwork crates as MCP tools.
//!
//! It is the thin adapter of ARCHITECTURE.md: it reads flags and environment variables, builds the
//! real seams, decodes tool arguments, calls a core crate and encodes the answer. Three ways in share
//! one set of handlers: `serve` (MCP over stdio: [`stdio`] reads and runs the requests, [`wire`]
//! decodes them, [`server`] answers them, with rmcp's model types for what it describes; beside the
//! tools, [`resources`], [`prompts`] and their [`subscriptions`]), `call TOOL
//! JSON` (one call from a shell) and `demo` (a scripted tour).
//!
//! # What this crate never does
//!
//! It holds no business rule of any group: a rule found here is a bug, to be moved into the group's
//! core crate so that embedders get it too. It writes nothing on stdout but JSON-RPC while serving;
//! logs go to stderr.
//!
//! # Adding a tool group
//!
//! A group is one module under `groups/` that defines a [`registry::Group`] — its settings (flags and
//! environment variables), a `build` function returning its [`registry::ToolDef`]s, and its part of the
//! demo — and one line in [`groups::all`]. Nothing else changes.

pub mod cli;
pub mod demo;
pub mod groups;
pub mod help;
pub mod http;
pub mod init;
pub mod log;
pub mod prompts;
pub mod registry;
pub mod resources;
pub mod schema;
pub mod schema_lint;
pub mod server;
pub mod settings;
pub mod shutdown;
pub mod stdio;
pub mod subscriptions;
pub mod telemetry;
pub mod terminal;
pub mod tokens;
pub mod watched_file;
pub mod wire;

pub use registry::{Group, Outcome, Registry, ToolDef};
pub use server::Server;

/// The `instructions` of the `initialize` answer: one line per group served.
pub fn instructions(groups: &[&Group], selected: &[&str]) -> String {
    let mut text =
        String::from("shiftwork coordinates the work of several AI coding agents. Tool groups served here:");
    let mut any = false;
    for group in groups.iter().filter(|g| selected.contains(&g.name)) {
        text.push_str("\n- ");
        text.push_str(group.instructions);
        any = true;
    }
    if !any {
        text.push_str("\n- (none: this build holds no tool group for the selection)");
    }
    text
}

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
