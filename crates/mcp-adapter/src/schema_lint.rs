//! The rules a tool's `inputSchema` and `outputSchema` must keep so that every major client loads
//! the tool and every client learns from it what each member is.
//!
//! OpenAI's function calling rejects an `array` without `items` ("array schema missing items"), as
//! does VS Code's Copilot; Gemini's function declarations reject a `type` that is an array
//! (`["string", "null"]`); a `$ref` is resolved by some clients and not by others; every client
//! expects an object at the root. We also keep the input schema's closed root
//! (`additionalProperties: false`) and require every property, at any depth, to say what it takes
//! (`type`, `enum`, `const`, `anyOf` or `oneOf`: a free-form object is declared as
//! `"type": "object"` rather than left blank) and what it means (`description`).
//!
//! ```
//! use serde_json::json;
//! use shiftwork_mcp::schema_lint::{lint, lint_answer, ARRAY_ITEMS, PROPERTY_DESCRIBED};
//!
//! let broken = json!({"type": "object", "properties": {"ids": {"type": "array", "description": "Ids."}}, "additionalProperties": false});
//! assert_eq!(lint(&broken)[0].pointer, "/properties/ids");
//! assert_eq!(lint(&broken)[0].rule, ARRAY_ITEMS);
//! let answer = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
//! assert_eq!(lint_answer(&answer)[0].rule, PROPERTY_DESCRIBED);
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
pub const ROOT_CLOSED: &str =
    "the root must have \"additionalProperties\": false (ours: an undeclared argument is refused)";
/// No type arrays.
pub const NO_TYPE_ARRAY: &str = "\"type\" must be one string, not an array (Gemini)";
/// Arrays need `items`.
pub const ARRAY_ITEMS: &str = "an array schema must have \"items\" (OpenAI, VS Code)";
/// Properties need a type.
pub const PROPERTY_TYPED: &str = "a property must say what it takes: \"type\", \"enum\", \"const\" or \"anyOf\" (free-form objects are \"type\": \"object\")";
/// Properties need a description.
pub const PROPERTY_DESCRIBED: &str = "a property must say what it means: a non-empty \"description\"";
/// No references.
pub const NO_REF: &str = "no \"$ref\": not every client resolves one";

/// Every violation in the input schema `schema`, in document order: the root must be a closed
/// object.
pub fn lint(schema: &Value) -> Vec<Violation> {
    let mut found = root(schema);
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        found.push(Violation {
            pointer: String::new(),
            rule: ROOT_CLOSED,
        });
    }
    walk(schema, String::new(), &mut found);
    found
}

/// Every violation in the output schema `schema`, in document order: the root must be an object,
/// open or closed.
pub fn lint_answer(schema: &Value) -> Vec<Violation> {
    let mut found = root(schema);
    walk(schema, String::new(), &mut found);
    found
}

fn root(schema: &Value) -> Vec<Violation> {
    let mut found = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        found.push(Violation {
            pointer: String::new(),
            rule: ROOT_OBJECT,
        });
    }
    found
}

fn walk(schema: &Value, pointer: String, found: &mut Vec<Violation>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if object.contains_key("$ref") {
        found.push(Violation {
            pointer: pointer.clone(),
            rule: NO_REF,
        });
    }
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
            let described = property
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !described {
                found.push(Violation {
                    pointer: at.clone(),
                    rule: PROPERTY_DESCRIBED,
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

    fn check_with(lint: fn(&Value) -> Vec<Violation>, schema: Value, expected: &[(&str, &str)]) {
        let got: Vec<(String, &str)> = lint(&schema).into_iter().map(|v| (v.pointer, v.rule)).collect();
        let want: Vec<(String, &str)> = expected.iter().map(|(p, r)| ((*p).to_owned(), *r)).collect();
        assert_eq!(got, want, "{schema}");
    }

    fn check(schema: Value, expected: &[(&str, &str)]) {
        check_with(lint, schema, expected);
    }

    #[test]
    fn a_portable_schema_passes() {
        check(
            json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "string"}, "description": "Ids."},
                "status": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "One or more."},
                "mode": {"enum": ["a", "b"], "description": "A mode."},
                "extra": {"type": "object", "description": "Anything."},
            }, "additionalProperties": false}),
            &[],
        );
    }

    #[test]
    fn each_broken_rule_is_named_with_its_pointer() {
        check(json!({"type": "string"}), &[("", ROOT_OBJECT), ("", ROOT_CLOSED)]);
        check(
            json!({"type": "object", "additionalProperties": false, "properties": {
                "unit_id": {"type": ["string", "null"], "description": "A unit."},
                "nodes": {"type": "array", "description": "Nodes."},
                "free": {"description": "anything"},
                "a/b": {"type": "array", "description": "Pairs.", "items": {"type": "object", "properties": {"deps": {"type": "array", "description": "Deps."}}}},
                "either": {"anyOf": [{"type": "array"}], "description": "Either."},
                "blank": {"type": "string", "description": " "},
                "linked": {"$ref": "#/$defs/x", "description": "Elsewhere."},
            }}),
            &[
                ("/properties/unit_id", NO_TYPE_ARRAY),
                ("/properties/nodes", ARRAY_ITEMS),
                ("/properties/free", PROPERTY_TYPED),
                ("/properties/a~1b/items/properties/deps", ARRAY_ITEMS),
                ("/properties/either/anyOf/0", ARRAY_ITEMS),
                ("/properties/blank", PROPERTY_DESCRIBED),
                ("/properties/linked", PROPERTY_TYPED),
                ("/properties/linked", NO_REF),
            ],
        );
    }

    /// Issue 35 item 1: an answer's members are held to the same rules at every depth, its root
    /// may stay open.
    #[test]
    fn issue35_item1_an_answer_member_without_a_description_or_a_type_is_named() {
        check_with(
            lint_answer,
            json!({"type": "object", "oneOf": [
                {"properties": {"ok": {"const": true, "description": "Done."}, "contract": {"type": "object", "description": "It.", "properties": {"id": {"type": "string"}}}}},
                {"properties": {"error": {}}},
            ]}),
            &[
                ("/oneOf/0/properties/contract/properties/id", PROPERTY_DESCRIBED),
                ("/oneOf/1/properties/error", PROPERTY_TYPED),
                ("/oneOf/1/properties/error", PROPERTY_DESCRIBED),
            ],
        );
    }
}
