//! `contract_schema` acceptance (CT-64) and delivery validation (CT-69, CT-70) with the `jsonschema`
//! crate. No retriever for external documents is installed, so only `$ref`s inside the document
//! resolve; `format` keywords are annotations.
//!
//! ```
//! use serde_json::json;
//! let schema = json!({"type": "object", "required": ["verdict"]});
//! let schema = schema.as_object().unwrap();
//! assert!(shiftwork_contracts::schema::accept(schema).is_ok());
//! let errors = shiftwork_contracts::schema::validate(schema, None).unwrap_err();
//! assert_eq!(errors[0].instance_path, "");
//! ```

use jsonschema::Draft;
use serde_json::{Map, Value};

use crate::limits::{MAX_CONTRACT_SCHEMA_BYTES, MAX_VALIDATION_ERRORS};
use crate::transition::ValidationError;

fn draft_of(schema: &Map<String, Value>) -> Result<Draft, ValidationError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let uri = uri.as_str().unwrap_or_default();
    let bare = uri.trim_end_matches('#');
    let bare = bare
        .strip_prefix("https://")
        .or_else(|| bare.strip_prefix("http://"))
        .unwrap_or("");
    match bare {
        "json-schema.org/draft-04/schema" => Ok(Draft::Draft4),
        "json-schema.org/draft-06/schema" => Ok(Draft::Draft6),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        "json-schema.org/draft/2019-09/schema" => Ok(Draft::Draft201909),
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        _ => Err(ValidationError {
            instance_path: String::from("/$schema"),
            message: String::from("$schema must name draft 4, 6, 7, 2019-09 or 2020-12 of JSON Schema"),
        }),
    }
}

fn compile(schema: &Map<String, Value>) -> Result<jsonschema::Validator, Vec<ValidationError>> {
    let draft = draft_of(schema).map_err(|e| vec![e])?;
    let value = Value::Object(schema.clone());
    jsonschema::options()
        .with_draft(draft)
        .offline()
        .should_validate_formats(false)
        .build(&value)
        .map_err(|e| {
            vec![ValidationError {
                instance_path: e.instance_path().to_string(),
                message: e.to_string(),
            }]
        })
}

/// Accepts a `contract_schema` (CT-64): at most 16 KiB, compiles under its draft, valid against the
/// draft's meta-schema, no external `$ref`. On refusal, the validation errors found (possibly empty).
pub fn accept(schema: &Map<String, Value>) -> Result<(), Vec<ValidationError>> {
    let size = serde_json::to_vec(schema).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_CONTRACT_SCHEMA_BYTES {
        return Err(Vec::new());
    }
    compile(schema).map(|_| ())
}

/// Validates a delivery's `structured_output` (JSON `null` when absent) against `schema` (CT-69):
/// the errors sorted by instance path then message, at most 10 (CT-70).
pub fn validate(
    schema: &Map<String, Value>,
    output: Option<&Map<String, Value>>,
) -> Result<(), Vec<ValidationError>> {
    let validator = compile(schema)?;
    let instance = output.map_or(Value::Null, |o| Value::Object(o.clone()));
    let mut errors: Vec<ValidationError> = validator
        .iter_errors(&instance)
        .map(|e| ValidationError {
            instance_path: e.instance_path().to_string(),
            message: e.to_string(),
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    errors.sort();
    errors.dedup();
    errors.truncate(MAX_VALIDATION_ERRORS);
    Err(errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn ct64_drafts_and_refusals() {
        for uri in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-06/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema",
        ] {
            assert!(
                accept(&obj(json!({"$schema": uri, "type": "object"}))).is_ok(),
                "{uri}"
            );
        }
        assert!(accept(&obj(json!({"$schema": "https://example.com/mine"}))).is_err());
        assert!(
            accept(&obj(json!({"type": 12}))).is_err(),
            "meta-schema violation"
        );
        assert!(
            accept(&obj(json!({"$ref": "https://example.com/x.json"}))).is_err(),
            "external ref"
        );
        assert!(
            accept(&obj(
                json!({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"})
            ))
            .is_ok()
        );
        let big = json!({"description": "x".repeat(MAX_CONTRACT_SCHEMA_BYTES)});
        assert_eq!(accept(&obj(big)), Err(Vec::new()));
    }

    #[test]
    fn ct64_format_is_an_annotation() {
        let s = obj(json!({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}));
        assert!(validate(&s, Some(&obj(json!({"e": "not an email"})))).is_ok());
    }

    #[test]
    fn ct69_ct70_absent_output_is_null_and_errors_sorted() {
        let s = obj(
            json!({"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["approve", "reject"]}, "n": {"type": "integer"}}}),
        );
        let e = validate(&s, None).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].instance_path, "");
        let e = validate(&s, Some(&obj(json!({"verdict": "maybe", "n": "x"})))).unwrap_err();
        let paths: Vec<&str> = e.iter().map(|e| e.instance_path.as_str()).collect();
        assert_eq!(paths, ["/n", "/verdict"]);
    }
}
