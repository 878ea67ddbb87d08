//! The tool registry: every tool's descriptor and handler, the argument-key check of MC-9 and the
//! rendering of outcomes (MC-8, MC-10).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::settings::{Setting, Settings};

/// The four tool groups, in `tools/list` order (MC-2).
pub const KNOWN_GROUPS: [&str; 4] = ["shiftwork", "worklog", "contracts", "hours"];

/// The four MCP annotation hints, always all set (MC-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: bool,
    /// `idempotentHint`.
    pub idempotent: bool,
    /// `openWorldHint`.
    pub open_world: bool,
}

impl Hints {
    /// A tool that only reads: read-only, not destructive, idempotent, closed world.
    pub const READ_ONLY: Hints = Hints::local(true, false, true);

    /// Hints of a tool that touches only local state (`openWorldHint` false, as every tool here).
    pub const fn local(read_only: bool, destructive: bool, idempotent: bool) -> Hints {
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world: false,
        }
    }
}

/// How an answer's text block renders its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// Two-space indentation, non-ASCII characters as themselves (`serde_json::to_string_pretty`).
    Pretty,
    /// One line.
    Compact,
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A result object (including a domain refusal): `structuredContent` plus one text block.
    Answer(Value, TextStyle),
    /// A result object whose text block the group rendered itself, for groups whose answers hold
    /// what `serde_json::Value` cannot (integers beyond 64 bits, `NaN`, Python float forms).
    Rendered(Value, String),
    /// An MCP tool error (`isError: true`) with one text block.
    ToolError(String),
}

impl Outcome {
    /// The JSON text of the text block (or the error message).
    pub fn text(&self) -> String {
        match self {
            Outcome::Answer(value, TextStyle::Pretty) => {
                serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
            }
            Outcome::Answer(value, TextStyle::Compact) => value.to_string(),
            Outcome::Rendered(_, text) => text.clone(),
            Outcome::ToolError(message) => message.clone(),
        }
    }
}

/// A tool call's arguments as they reached the server: the decoded object (keys in arrival order) and,
/// when the way in kept it, the JSON text of the `arguments` object exactly as the client sent it.
///
/// A group whose answers must keep the client's number tokens (shift work, SW-43) reads [`Arguments::raw`]
/// with its own JSON reader; every other group reads [`Arguments::map`].
///
/// It also carries the call's [`CallContext`]: its cancellation and its progress reports.
#[derive(Debug, Clone, Default)]
pub struct Arguments {
    map: Map<String, Value>,
    raw: Option<String>,
    context: CallContext,
}

impl Arguments {
    /// Arguments known only as a decoded object (tests, the demo).
    pub fn decoded(map: Map<String, Value>) -> Self {
        Arguments {
            map,
            raw: None,
            context: CallContext::default(),
        }
    }

    /// Arguments with the exact text of the `arguments` object they were decoded from.
    pub fn with_raw(map: Map<String, Value>, raw: String) -> Self {
        Arguments {
            map,
            raw: Some(raw),
            context: CallContext::default(),
        }
    }

    /// The same arguments under `context`.
    pub fn in_context(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }

    /// The call's context: cancellation and progress.
    pub fn context(&self) -> &CallContext {
        &self.context
    }

    /// The decoded object, keys in arrival order.
    pub fn map(&self) -> &Map<String, Value> {
        &self.map
    }

    /// The exact JSON text of the `arguments` object, when the way in kept it.
    pub fn raw(&self) -> Option<&str> {
        self.raw.as_deref()
    }
}

/// Sends one progress report of a call to the client: `(progress, total, message)` (MCP
/// `notifications/progress`; `progress` increases with every report).
pub type ProgressFn = Box<dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync>;

/// What a long-running handler can learn from, and tell, the way in: whether the client cancelled the
/// call (MCP `notifications/cancelled`), and a channel for progress reports when the client asked for
/// them (a `progressToken`). The default context is never cancelled and takes no progress.
///
/// ```
/// use shiftwork_mcp::registry::CallContext;
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
///
/// let context = CallContext::new(None);
/// let woken = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&woken);
/// context.on_cancel(move || flag.store(true, Ordering::SeqCst));
/// assert!(!context.is_cancelled());
/// context.cancel();
/// assert!(context.is_cancelled() && woken.load(Ordering::SeqCst));
/// ```
#[derive(Clone, Default)]
pub struct CallContext {
    inner: Arc<ContextInner>,
}

#[derive(Default)]
struct ContextInner {
    cancelled: std::sync::atomic::AtomicBool,
    on_cancel: std::sync::Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.wants_progress())
            .finish()
    }
}

impl CallContext {
    /// A context that reports progress through `progress` (when the client sent a `progressToken`).
    pub fn new(progress: Option<ProgressFn>) -> Self {
        CallContext {
            inner: Arc::new(ContextInner {
                progress,
                ..ContextInner::default()
            }),
        }
    }

    /// Marks the call cancelled and runs every registered [`CallContext::on_cancel`] callback once.
    pub fn cancel(&self) {
        use std::sync::atomic::Ordering;
        if self.inner.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        let callbacks = std::mem::take(&mut *self.callbacks());
        for callback in callbacks {
            callback();
        }
    }

    /// True once the client cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runs `callback` when the call is cancelled (at once when it already is).
    pub fn on_cancel(&self, callback: impl FnOnce() + Send + 'static) {
        let mut callbacks = self.callbacks();
        if self.is_cancelled() {
            drop(callbacks);
            callback();
        } else {
            callbacks.push(Box::new(callback));
        }
    }

    /// True when the client asked for progress reports.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// Sends a progress report when the client asked for them; otherwise does nothing.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(report) = &self.inner.progress {
            report(progress, total, message);
        }
    }

    fn callbacks(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn FnOnce() + Send>>> {
        self.inner
            .on_cancel
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A tool's handler: the call's arguments in, outcome out. Handlers block; the server runs them off
/// its async workers.
pub type Handler = Arc<dyn Fn(&Arguments) -> Outcome + Send + Sync>;

/// How a group answers an undeclared argument (MC-9): given the tool name, the first unknown key in
/// arrival order, every undeclared key in arrival order, and the known keys in schema order.
pub type UnknownArgument = fn(tool: &str, key: &str, all_unknown: &[&str], known: &[&str]) -> Outcome;

/// One tool.
#[derive(Clone)]
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// Its title (also `annotations.title`).
    pub title: &'static str,
    /// Its description.
    pub description: &'static str,
    /// Its closed input schema (an object schema with `properties` in argument order).
    pub input_schema: Value,
    /// Its output schema (root: an object).
    pub output_schema: Value,
    /// Its annotation hints.
    pub hints: Hints,
    /// How it refuses an undeclared argument.
    pub unknown_argument: UnknownArgument,
    /// What it does.
    pub handler: Handler,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// The argument names in schema order.
    pub fn known_arguments(&self) -> Vec<&str> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Runs the tool on a decoded arguments object (tests, the demo): see [`ToolDef::invoke`].
    pub fn call(&self, arguments: &Map<String, Value>) -> Outcome {
        self.invoke(&Arguments::decoded(arguments.clone()))
    }

    /// Runs the tool: the MC-9 key check, then the handler.
    pub fn invoke(&self, arguments: &Arguments) -> Outcome {
        let known = self.known_arguments();
        let unknown: Vec<&str> = arguments
            .map()
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect();
        if let Some(first) = unknown.first() {
            return (self.unknown_argument)(self.name, first, &unknown, &known);
        }
        (self.handler)(arguments)
    }
}

/// The MC-9 sentence: `unknown argument '<key>'; known: <k1>, <k2>, …` (`(none)` when empty).
pub fn unknown_argument_sentence(key: &str, known: &[&str]) -> String {
    let known = if known.is_empty() {
        String::from("(none)")
    } else {
        known.join(", ")
    };
    format!("unknown argument '{key}'; known: {known}")
}

/// Builds a demo call's arguments from the answers of the group's earlier calls.
pub type MakeArgs = Box<dyn FnOnce(&[Value]) -> Value>;

/// One step of a group's part of the demo (MC-5).
pub enum DemoStep {
    /// A line of narration.
    Say(String),
    /// Set-up the demo performs itself (write a file), described by its text.
    Prepare(String, Box<dyn FnOnce() -> std::io::Result<()>>),
    /// A tool call, printed with its answer.
    Call(&'static str, Value),
    /// A tool call whose arguments are built from the answers of the group's earlier calls (in
    /// order), for a script that must name what an earlier call created (a contract id).
    CallWith(&'static str, MakeArgs),
}

/// A tool group: its settings, how it builds its tools, and its part of the demo.
pub struct Group {
    /// The group's name (one of [`KNOWN_GROUPS`]).
    pub name: &'static str,
    /// One line for the server's `instructions` (MC-12).
    pub instructions: &'static str,
    /// The settings the group reads.
    pub settings: &'static [Setting],
    /// Builds the group's tools from the settings; an invalid setting is a start-up error (exit 2).
    pub build: fn(&Settings) -> Result<Vec<ToolDef>, String>,
    /// The settings the demo gives the group, inside the demo's temporary directory.
    pub demo_settings: fn(&Path) -> Vec<(&'static Setting, String)>,
    /// The group's demo script, inside the demo's temporary directory.
    pub demo: fn(&Path) -> Vec<DemoStep>,
    /// Commands to try after the demo.
    pub try_next: &'static [&'static str],
    /// A group command line, `shiftwork-mcp <group> …`; returns the process exit code.
    pub command: Option<fn(&[String], &Settings) -> i32>,
}

/// The tools of the selected groups, in `tools/list` order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: Vec<ToolDef>,
}

impl Registry {
    /// Builds the tools of every group whose name is in `selected`, in the order of `groups`.
    pub fn build(groups: &[&Group], selected: &[&str], settings: &Settings) -> Result<Self, String> {
        let mut tools = Vec::new();
        for group in groups.iter().filter(|g| selected.contains(&g.name)) {
            tools.extend((group.build)(settings)?);
        }
        Ok(Registry { tools })
    }

    /// A registry of the given tools (tests).
    pub fn from_tools(tools: Vec<ToolDef>) -> Self {
        Registry { tools }
    }

    /// Every tool, in order.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }
}
