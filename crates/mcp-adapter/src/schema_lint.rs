//! The rules a tool's `inputSchema` must keep so that every major client loads the tool.
//!
//! OpenAI's function calling rejects an `array` without `items` ("array schema missing items"), as
//! does VS Code's Copilot; Gemini's function declarations reject a `type` that is an array
//! (`["string", "null"]`); every client expects an object at the root. We also keep MC-7's closed
//! root (`additionalProperties: false`) and require every property to say what it takes, so that a
//! free-form object is declared as `"type": "object"` rather than left blank.
//!
//! ```
//! use serde_json::json;
//! use shiftwork_mcp::schema_lint::lint;
//!
//! let broken = json!({"type": "object", "properties": {"ids": {"type": "array"}}, "additionalProperties": false});
//! assert_eq!(lint(&broken)[0].pointer, "/properties/ids");
//! ```

use serde_json::Value;

/// One broken rule, at a JSON pointer into the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where: a JSON pointer (RFC 6901) into the schema; `""` is the root.
    pub pointer: String,
    /// Which rule, as a sentence.
    pub rule: &'static str,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.rule)
    }
}

/// The root must be `"type": "object"`.
pub const ROOT_OBJECT: &str = "the root must be \"type\": \"object\" (every client)";
/// The root must be closed.
pub const ROOT_CLOSED: &str = "the root must have \"additionalProperties\": false (MC-7)";
/// No type arrays.
pub const NO_TYPE_ARRAY: &str = "\"type\" must be one string, not an array (Gemini)";
/// Arrays need `items`.
pub const ARRAY_ITEMS: &str = "an array schema must have \"items\" (OpenAI, VS Code)";
/// Properties need a type.
pub const PROPERTY_TYPED: &str = "a property must say what it takes: \"type\", \"enum\", \"const\" or \"anyOf\" (free-form objects are \"type\": \"object\")";

/// Every violation in `schema`, in document order.
pub fn lint(schema: &Value) -> Vec<Violation> {
    let mut found = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        found.push(Violation {
            pointer: String::new(),
            rule: ROOT_OBJECT,
        });
    }
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        found.push(Violation {
            pointer: String::new(),
            rule: ROOT_CLOSED,
        });
    }
    walk(schema, String::new(), &mut found);
    found
}

fn walk(schema: &Value, pointer: String, found: &mut Vec<Violation>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    match object.get("type") {
        Some(Value::Array(_)) => found.push(Violation {
            pointer: pointer.clone(),
            rule: NO_TYPE_ARRAY,
        }),
        Some(Value::String(t)) if t == "array" && !object.contains_key("items") => found.push(Violation {
            pointer: pointer.clone(),
            rule: ARRAY_ITEMS,
        }),
        _ => {}
    }
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (key, property) in properties {
            let at = format!("{pointer}/properties/{}", escape(key));
            let typed = property.as_object().is_some_and(|p| {
                ["type", "enum", "const", "anyOf", "oneOf"]
                    .iter()
                    .any(|k| p.contains_key(*k))
            });
            if !typed {
                found.push(Violation {
                    pointer: at.clone(),
                    rule: PROPERTY_TYPED,
                });
            }
            walk(property, at, found);
        }
    }
    if let Some(items) = object.get("items") {
        walk(items, format!("{pointer}/items"), found);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            for (i, branch) in branches.iter().enumerate() {
                walk(branch, format!("{pointer}/{key}/{i}"), found);
            }
        }
    }
    if let Some(extra @ Value::Object(_)) = object.get("additionalProperties") {
        walk(extra, format!("{pointer}/additionalProperties"), found);
    }
}

/// RFC 6901: `~` as `~0`, `/` as `~1`.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, expected: &[(&str, &str)]) {
        let got: Vec<(String, &str)> = lint(&schema).into_iter().map(|v| (v.pointer, v.rule)).collect();
        let want: Vec<(String, &str)> = expected.iter().map(|(p, r)| ((*p).to_owned(), *r)).collect();
        assert_eq!(got, want, "{schema}");
    }

    #[test]
    fn a_portable_schema_passes() {
        check(
            json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "string"}},
                "status": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "mode": {"enum": ["a", "b"]},
                "extra": {"type": "object"},
            }, "additionalProperties": false}),
            &[],
        );
    }

    #[test]
    fn each_broken_rule_is_named_with_its_pointer() {
        check(json!({"type": "string"}), &[("", ROOT_OBJECT), ("", ROOT_CLOSED)]);
        check(
            json!({"type": "object", "additionalProperties": false, "properties": {
                "unit_id": {"type": ["string", "null"]},
                "nodes": {"type": "array"},
                "free": {"description": "anything"},
                "a/b": {"type": "array", "items": {"type": "object", "properties": {"deps": {"type": "array"}}}},
                "either": {"anyOf": [{"type": "array"}]},
            }}),
            &[
                ("/properties/unit_id", NO_TYPE_ARRAY),
                ("/properties/nodes", ARRAY_ITEMS),
                ("/properties/free", PROPERTY_TYPED),
                ("/properties/a~1b/items/properties/deps", ARRAY_ITEMS),
                ("/properties/either/anyOf/0", ARRAY_ITEMS),
            ],
        );
    }
}
