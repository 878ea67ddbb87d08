//! The vocabulary the tool groups write their schemas in: JSON Schema fragments that carry a type
//! and a description from the moment they are made, so that every argument and every member of an
//! answer says what it takes and what it means. `tools/list`, `call TOOL --help`, `tools --markdown`
//! and the guide's tool reference are all read from the schemas made here ([`crate::help`]).
//!
//! The fragments keep to what every major client loads: one `type` string (a value that may be
//! `null` is an `anyOf` of its type and `null`, [`nullable`]), `items` on every array, no `$ref`. An
//! answer with several shapes is a [`variants`] schema: an object whose `oneOf` branches each fix
//! the discriminating member with a `const`, so a validating client learns which shape it holds and
//! the types of its members. [`crate::schema_lint`] checks both rules on every tool.
//!
//! ```
//! use shiftwork_mcp::schema::{branch, constant, integer, one_of, string, variants};
//!
//! let answer = variants(
//!     "result",
//!     one_of(&["done", "error"], "What the call did."),
//!     vec![
//!         branch(vec![("result", constant("done", "Finished.")), ("count", integer("How many."))], &["result", "count"]),
//!         branch(vec![("result", constant("error", "Refused.")), ("reason", string("Why."))], &["result", "reason"]),
//!     ],
//! );
//! assert_eq!(answer["oneOf"][1]["properties"]["reason"]["type"], "string");
//! assert!(shiftwork_mcp::schema_lint::lint_answer(&answer).is_empty());
//! ```

use serde_json::{Map, Value, json};

/// A named member of an object schema: its name and its schema.
pub type Member = (&'static str, Value);

/// The family's agent-id grammar (`shiftwork_seams::agent`) as a pattern: 1 to 64 of
/// `A-Z a-z 0-9 . _ @ : -`, starting with a letter or a digit.
pub const AGENT_ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._@:-]{0,63}$";

/// An agent id: a string of the agent-id grammar ([`AGENT_ID_PATTERN`]).
pub fn agent_id(description: impl Into<String>) -> Value {
    with(string(description), "pattern", AGENT_ID_PATTERN)
}

/// A string.
pub fn string(description: impl Into<String>) -> Value {
    typed("string", description)
}

/// An integer.
pub fn integer(description: impl Into<String>) -> Value {
    typed("integer", description)
}

/// A boolean.
pub fn boolean(description: impl Into<String>) -> Value {
    typed("boolean", description)
}

/// An object of any members (a JSON Schema, a free-form result).
pub fn any_object(description: impl Into<String>) -> Value {
    typed("object", description)
}

/// A string that is one of `values`.
pub fn one_of(values: &[&str], description: impl Into<String>) -> Value {
    json!({"type": "string", "enum": values, "description": description.into()})
}

/// A member that always holds `value` (a variant's discriminator).
pub fn constant(value: impl Into<Value>, description: impl Into<String>) -> Value {
    let value = value.into();
    let mut schema = Map::new();
    if let Some(kind) = json_type(&value) {
        schema.insert(String::from("type"), Value::from(kind));
    }
    schema.insert(String::from("const"), value);
    schema.insert(String::from("description"), Value::String(description.into()));
    Value::Object(schema)
}

/// An array of `items` (a schema without a description of its own: the array's says what the
/// items are).
pub fn array(items: Value, description: impl Into<String>) -> Value {
    json!({"type": "array", "items": items, "description": description.into()})
}

/// An array of strings.
pub fn strings(description: impl Into<String>) -> Value {
    array(json!({"type": "string"}), description)
}

/// An object whose members are named only at run time (counts per status, a budget per dimension),
/// each holding `values`.
pub fn map_of(values: Value, description: impl Into<String>) -> Value {
    json!({"type": "object", "additionalProperties": values, "description": description.into()})
}

/// An object with `members` in order, of which `required` must be present; open: members it does
/// not name are allowed (a unit as the checkpoint holds it).
pub fn object(members: Vec<Member>, required: &[&str], description: impl Into<String>) -> Value {
    let mut schema = shape(members, required);
    schema["description"] = Value::String(description.into());
    schema
}

/// [`object`], closed: no member but `members`.
pub fn record(members: Vec<Member>, required: &[&str], description: impl Into<String>) -> Value {
    let mut schema = object(members, required, description);
    schema["additionalProperties"] = Value::Bool(false);
    schema
}

/// An object without a description of its own, for an array's `items`: `members` in order,
/// `required` present, closed.
pub fn item(members: Vec<Member>, required: &[&str]) -> Value {
    let mut schema = shape(members, required);
    schema["additionalProperties"] = Value::Bool(false);
    schema
}

/// `schema`, or `null`: `{"anyOf": [schema, {"type": "null"}]}` with `schema`'s description moved
/// up (clients that refuse a `type` array read this).
pub fn nullable(mut schema: Value) -> Value {
    let description = schema
        .as_object_mut()
        .and_then(|s| s.remove("description"))
        .unwrap_or_default();
    json!({"anyOf": [schema, {"type": "null"}], "description": description})
}

/// One shape of an answer: `members` in order, `required` present; other members allowed (an
/// answer may grow a member without breaking a client).
pub fn branch(members: Vec<Member>, required: &[&str]) -> Value {
    shape(members, required)
}

/// [`branch`], closed: no member but `members`.
pub fn closed_branch(members: Vec<Member>, required: &[&str]) -> Value {
    item(members, required)
}

/// An answer of several shapes told apart by `discriminator` (whose schema, every value it takes,
/// is `schema`): an object that requires it and admits exactly one of `branches` (each fixes it
/// with a [`constant`]).
pub fn variants(discriminator: &str, schema: Value, branches: Vec<Value>) -> Value {
    json!({
        "type": "object",
        "properties": {discriminator: schema},
        "required": [discriminator],
        "oneOf": branches,
    })
}

/// `schema` with `keyword` set to `value` (a bound, a pattern, a default).
pub fn with(mut schema: Value, keyword: &str, value: impl Into<Value>) -> Value {
    schema[keyword] = value.into();
    schema
}

fn typed(kind: &str, description: impl Into<String>) -> Value {
    json!({"type": kind, "description": description.into()})
}

fn shape(members: Vec<Member>, required: &[&str]) -> Value {
    let properties: Map<String, Value> = members
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The JSON Schema type of a constant.
fn json_type(value: &Value) -> Option<&'static str> {
    Some(match value {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Null => "null",
        Value::Array(_) | Value::Object(_) => return None,
    })
}
