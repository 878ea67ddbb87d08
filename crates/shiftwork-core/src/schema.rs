//! The embedded checkpoint schema and the choice and wording of the one violation a refusal
//! reports. A checkpoint is validated by the schema as code (`schema/rules.rs`, held to the
//! generic validator by a property test); the clock-out's argument shapes by the `jsonschema` crate on
//! the schema's `$defs`, compiled once.

use std::cmp::Ordering;
use std::sync::LazyLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};

use shiftwork_seams::echo::clip;

use crate::json::{Json, Node, python_repr, python_string_literal};
use crate::schema_instance::ShiftJson;

mod rules;
#[cfg(test)]
mod rules_tests;

/// The checkpoint's JSON Schema (draft 2020-12), `$id` `urn:shiftwork:checkpoint:v1`. Its `$defs` also
/// hold the shapes of the clock-out arguments (`accounting`, `agentId`, `agreementsPatch`,
/// `conclusion`, `followUps`).
///
/// ```
/// let schema: serde_json::Value = serde_json::from_str(shiftwork_core::CHECKPOINT_SCHEMA).unwrap();
/// assert_eq!(schema["$id"], "urn:shiftwork:checkpoint:v1");
/// assert_eq!(schema["title"], "Shift-work checkpoint contract v1");
/// ```
pub const CHECKPOINT_SCHEMA: &str = include_str!("../schema/checkpoint.schema.json");

/// The most code points of `<where>` and of a rendered value in a schema message.
const CLIP_WHERE: usize = 200;
/// The most code points of a schema message's detail.
const CLIP_DETAIL: usize = 1000;
/// The most code points of a value rendered in a detail.
const CLIP_VALUE: usize = CLIP_WHERE;

/// Whether a violation's detail renders the values it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quote {
    /// As 0.36.2 does (`'in-progress' is not one of […]`): for what the caller sent.
    Values,
    /// Never (`the value is not one of […]`): for a document read from a file, whatever file a caller
    /// names.
    Nothing,
}

/// One segment of the location of a violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl PartialOrd for PathSegment {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PathSegment {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathSegment::Key(a), PathSegment::Key(b)) => a.cmp(b),
            (PathSegment::Index(a), PathSegment::Index(b)) => a.cmp(b),
            (PathSegment::Index(_), PathSegment::Key(_)) => Ordering::Less,
            (PathSegment::Key(_), PathSegment::Index(_)) => Ordering::Greater,
        }
    }
}

/// The one schema violation a refusal reports.
///
/// ```
/// let doc = shiftwork_core::json::parse("[]").unwrap();
/// let v = shiftwork_core::schema::validate_to_write(&doc).unwrap_err();
/// assert_eq!(v.to_string(), "JSON does not match schema at 'root': [] is not of type 'object'");
/// assert_eq!(v.location(), "root");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JSON does not match schema at '{}': {}", clip(&self.location(), CLIP_WHERE), clip(&self.detail, CLIP_DETAIL))]
pub struct SchemaViolation {
    /// Where: object keys and array indices from the root.
    pub path: Vec<PathSegment>,
    /// What, worded as 0.36.2 words it: values in Python rendering when they are the caller's
    /// ([`validate_to_write`], the argument shapes), none when the document was read from a file
    /// ([`validate_checkpoint`]).
    pub detail: String,
}

impl SchemaViolation {
    /// The location as the message writes it: segments joined by `/`, or `root`.
    pub fn location(&self) -> String {
        if self.path.is_empty() {
            return String::from("root");
        }
        let parts: Vec<String> = self
            .path
            .iter()
            .map(|s| match s {
                PathSegment::Key(k) => k.clone(),
                PathSegment::Index(i) => i.to_string(),
            })
            .collect();
        parts.join("/")
    }
}

/// The clock-out argument shapes validated on their own (the accounting line, `agent_id`,
/// `agreements`, `conclusion`, `follow_ups`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentShape {
    /// The accounting line.
    Accounting,
    /// `agent_id`.
    AgentId,
    /// `agreements`.
    Agreements,
    /// `conclusion`.
    Conclusion,
    /// `follow_ups`.
    FollowUps,
}

impl ArgumentShape {
    fn def(self) -> &'static str {
        match self {
            ArgumentShape::Accounting => "accounting",
            ArgumentShape::AgentId => "agentId",
            ArgumentShape::Agreements => "agreementsPatch",
            ArgumentShape::Conclusion => "conclusion",
            ArgumentShape::FollowUps => "followUps",
        }
    }

    /// The argument's name, which is also the first segment of a violation's path.
    pub fn argument(self) -> &'static str {
        match self {
            ArgumentShape::Accounting => "accounting",
            ArgumentShape::AgentId => "agent_id",
            ArgumentShape::Agreements => "agreements",
            ArgumentShape::Conclusion => "conclusion",
            ArgumentShape::FollowUps => "follow_ups",
        }
    }

    const ALL: [ArgumentShape; 5] = [
        ArgumentShape::Accounting,
        ArgumentShape::AgentId,
        ArgumentShape::Agreements,
        ArgumentShape::Conclusion,
        ArgumentShape::FollowUps,
    ];
}

struct Compiled {
    /// The whole schema: only the tests' oracle ([`rules`] validates checkpoints).
    #[cfg(test)]
    checkpoint: Validator<ShiftJson>,
    arguments: Vec<Validator<ShiftJson>>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(compile);

fn compile() -> Compiled {
    // The schema is a constant of this crate, checked by its tests: failing here is a build defect.
    #[allow(clippy::expect_used)]
    let schema: serde_json::Value =
        serde_json::from_str(CHECKPOINT_SCHEMA).expect("the embedded checkpoint schema is valid JSON");
    let build = |s: &serde_json::Value| {
        #[allow(clippy::expect_used)]
        jsonschema::options_for::<ShiftJson>()
            .should_validate_formats(false)
            .build(s)
            .expect("the embedded checkpoint schema compiles")
    };
    let arguments = ArgumentShape::ALL
        .iter()
        .map(|shape| {
            let wrapper = serde_json::json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": schema["$defs"].clone(),
                "type": "object",
                "properties": { shape.argument(): { "$ref": format!("#/$defs/{}", shape.def()) } }
            });
            build(&wrapper)
        })
        .collect();
    Compiled {
        #[cfg(test)]
        checkpoint: build(&schema),
        arguments,
    }
}

/// Validates a checkpoint read from a file against the embedded schema: the violation
/// to report, its detail naming the rule and the schema's values but none of the document's
/// (a deliberate difference from 0.36.2's tails: a checkpoint path can name any
/// file, and its values are not the caller's). `doc` is a built [`Json`] or a [`crate::json::Tape`]'s
/// node; the walk is linear and keeps only the path of the violation it will report.
///
/// ```
/// let doc = shiftwork_core::json::parse(r#"{"version": 2}"#).unwrap();
/// let v = shiftwork_core::schema::validate_checkpoint(&doc).unwrap_err();
/// assert_eq!(v.to_string(), "JSON does not match schema at 'root': 'job' is a required property");
/// let secret = shiftwork_core::json::parse(r#""ghp_SECRET""#).unwrap();
/// assert_eq!(
///     shiftwork_core::schema::validate_checkpoint(&secret).unwrap_err().to_string(),
///     "JSON does not match schema at 'root': the value is not of type 'object'"
/// );
/// ```
pub fn validate_checkpoint<'d, N: Node<'d>>(doc: N) -> Result<(), SchemaViolation> {
    rules::checkpoint(doc, Quote::Nothing)
}

/// Validates the document a clock-out is about to write: the violation as 0.36.2 reports
/// it, values in Python rendering — they are the caller's own, from its arguments.
///
/// ```
/// let doc = shiftwork_core::json::parse("[]").unwrap();
/// let v = shiftwork_core::schema::validate_to_write(&doc).unwrap_err();
/// assert_eq!(v.to_string(), "JSON does not match schema at 'root': [] is not of type 'object'");
/// ```
pub fn validate_to_write(doc: &Json) -> Result<(), SchemaViolation> {
    rules::checkpoint(doc, Quote::Values)
}

/// The generic validator's verdict on a whole checkpoint, worded as [`validate_to_write`] words it:
/// the oracle the schema as code is held to.
#[cfg(test)]
fn validate_generic(doc: &Json) -> Result<(), SchemaViolation> {
    let validator = &COMPILED.checkpoint;
    if validator.is_valid(doc) {
        return Ok(());
    }
    Err(choose(doc, validator.iter_errors(doc)))
}

/// Validates one clock-out argument as the value of a key named after it, so paths read
/// `accounting/tokens`.
///
/// ```
/// use shiftwork_core::schema::{validate_argument, ArgumentShape};
/// let line = shiftwork_core::json::parse(r#"{"tokens": "1234", "duration_ms": 1}"#).unwrap();
/// let v = validate_argument(ArgumentShape::Accounting, &line).unwrap_err();
/// assert_eq!(v.to_string(), "JSON does not match schema at 'accounting/tokens': '1234' is not of type 'integer'");
/// ```
pub fn validate_argument(shape: ArgumentShape, value: &Json) -> Result<(), SchemaViolation> {
    let index = ArgumentShape::ALL.iter().position(|s| *s == shape).unwrap_or(0);
    let Some(validator) = COMPILED.arguments.get(index) else {
        return Ok(());
    };
    let mut wrapper = crate::json::Object::default();
    wrapper.insert(shape.argument().to_owned(), value.clone());
    let doc = Json::Object(wrapper);
    if validator.is_valid(&doc) {
        return Ok(());
    }
    Err(choose(&doc, validator.iter_errors(&doc)))
}

/// Picks the violation 0.36.2 reports and words it. The errors are looked at one by one and
/// only the one to report so far is kept: the shallowest, then the greatest path, then the first in
/// evaluation order.
fn choose<'i>(doc: &Json, errors: impl Iterator<Item = ValidationError<'i>>) -> SchemaViolation {
    let mut best: Option<(ValidationError<'i>, Vec<PathSegment>)> = None;
    for error in errors {
        let path = resolve_path(doc, &error);
        let better = match &best {
            None => true,
            Some((_, b)) => path.len() < b.len() || (path.len() == b.len() && path > *b),
        };
        if better {
            best = Some((error, path));
        }
    }
    let Some((error, path)) = best else {
        return SchemaViolation {
            path: Vec::new(),
            detail: String::from("the document does not match the schema"),
        };
    };
    let (path, detail) = report(doc, &error, path);
    SchemaViolation { path, detail }
}

/// Inside an `anyOf` failure, report the deepest branch failure unless two branches tie;
/// returns the reported path and its detail.
fn report(doc: &Json, error: &ValidationError<'_>, path: Vec<PathSegment>) -> (Vec<PathSegment>, String) {
    let ValidationErrorKind::AnyOf { context } = error.kind() else {
        let detail = detail(doc, error, &path);
        return (path, detail);
    };
    struct Branchy<'e> {
        error: &'e ValidationError<'static>,
        path: Vec<PathSegment>,
        type_matched: bool,
    }
    let mut all: Vec<Branchy<'_>> = Vec::new();
    for branch in context {
        let type_matched = !branch
            .iter()
            .any(|e| matches!(e.kind(), ValidationErrorKind::Type { .. }) && resolve_path(doc, e) == path);
        for e in branch {
            all.push(Branchy {
                error: e,
                path: resolve_path(doc, e),
                type_matched,
            });
        }
    }
    all.sort_by(|a, b| {
        b.path
            .len()
            .cmp(&a.path.len())
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| b.type_matched.cmp(&a.type_matched))
    });
    match all.as_slice() {
        [first, second, ..] if first.path == second.path && first.type_matched == second.type_matched => {
            let detail = detail(doc, error, &path);
            (path, detail)
        }
        [first, ..] => report(doc, first.error, first.path.clone()),
        [] => {
            let detail = detail(doc, error, &path);
            (path, detail)
        }
    }
}

/// The error's location as typed segments, resolving digit segments against the document.
fn resolve_path(doc: &Json, error: &ValidationError<'_>) -> Vec<PathSegment> {
    let mut node = Some(doc);
    let mut out = Vec::new();
    for raw in error.instance_path().segments() {
        let text = raw.to_string();
        let segment = match node {
            Some(Json::Array(items)) => match text.parse::<usize>() {
                Ok(i) => {
                    node = items.get(i);
                    PathSegment::Index(i)
                }
                Err(_) => {
                    node = None;
                    PathSegment::Key(text)
                }
            },
            Some(Json::Object(members)) => {
                node = members.get(&text);
                PathSegment::Key(text)
            }
            _ => {
                node = None;
                PathSegment::Key(text)
            }
        };
        out.push(segment);
    }
    out
}

fn node_at<'d>(doc: &'d Json, path: &[PathSegment]) -> Option<&'d Json> {
    let mut node = doc;
    for seg in path {
        node = match (node, seg) {
            (Json::Object(o), PathSegment::Key(k)) => o.get(k)?,
            (Json::Array(a), PathSegment::Index(i)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

fn type_name(kind: &TypeKind) -> String {
    let name = |t: &JsonType| match t {
        JsonType::Array => "array",
        JsonType::Boolean => "boolean",
        JsonType::Integer => "integer",
        JsonType::Null => "null",
        JsonType::Number => "number",
        JsonType::Object => "object",
        JsonType::String => "string",
    };
    match kind {
        TypeKind::Single(t) => format!("'{}'", name(t)),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| format!("'{}'", name(&t))).collect();
            format!("[{}]", names.join(", "))
        }
    }
}

/// The detail of a violation, values in Python rendering, each clipped.
fn detail(doc: &Json, error: &ValidationError<'_>, path: &[PathSegment]) -> String {
    let value = || {
        let rendered = match node_at(doc, path) {
            Some(node) => python_repr(node),
            None => python_repr(&Json::from_serde(error.instance())),
        };
        clip(&rendered, CLIP_WHERE)
    };
    let limit_repr = |v: &serde_json::Value| python_repr(&Json::from_serde(v));
    match error.kind() {
        ValidationErrorKind::Type { kind } => format!("{} is not of type {}", value(), type_name(kind)),
        ValidationErrorKind::Enum { options } => {
            format!(
                "{} is not one of {}",
                value(),
                clip(&limit_repr(options), CLIP_WHERE)
            )
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{} was expected", limit_repr(expected_value))
        }
        ValidationErrorKind::Required { property } => {
            format!("{} is a required property", limit_repr(property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let mut keys = unexpected.clone();
            keys.sort();
            let listed: Vec<String> = keys.iter().map(|k| python_string_literal(k)).collect();
            let verb = if keys.len() == 1 { "was" } else { "were" };
            format!(
                "Additional properties are not allowed ({} {verb} unexpected)",
                listed.join(", ")
            )
        }
        ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MinProperties { limit } => {
            if *limit == 1 {
                format!("{} should be non-empty", value())
            } else {
                format!("{} is too short", value())
            }
        }
        ValidationErrorKind::MaxLength { .. } | ValidationErrorKind::MaxItems { .. } => {
            format!("{} is too long", value())
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{} is less than the minimum of {}", value(), limit_repr(limit))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{} does not match {}", value(), python_string_literal(pattern))
        }
        ValidationErrorKind::AnyOf { .. } => {
            format!("{} is not valid under any of the given schemas", value())
        }
        ValidationErrorKind::PropertyNames { error: inner } => {
            let key = python_repr(&Json::from_serde(inner.instance()));
            match inner.kind() {
                ValidationErrorKind::Enum { options } => {
                    format!("{} is not one of {}", clip(&key, CLIP_WHERE), limit_repr(options))
                }
                _ => format!("{} is not a valid property name", clip(&key, CLIP_WHERE)),
            }
        }
        _ => error.to_string(),
    }
}
