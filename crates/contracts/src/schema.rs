//! `contract_schema` acceptance and delivery validation with the `jsonschema`
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

use crate::limits::{MAX_CONTRACT_SCHEMA_BYTES, MAX_CONTRACT_SCHEMA_EXPANSION, MAX_VALIDATION_ERRORS};
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

/// Accepts a `contract_schema`: at most 16 KiB, compiles under its draft, valid against the
/// draft's meta-schema, no external `$ref`, and no more than [`MAX_CONTRACT_SCHEMA_EXPANSION`]
/// subschemas reachable when every `$ref` is followed (a chain of `allOf`s with two refs to
/// the level below is 2.6 KB and would make one validation take hours). On refusal, the validation
/// errors found (possibly empty).
pub fn accept(schema: &Map<String, Value>) -> Result<(), Vec<ValidationError>> {
    let size = serde_json::to_vec(schema).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_CONTRACT_SCHEMA_BYTES {
        return Err(Vec::new());
    }
    // Every store must keep what one accepts (issue 27): PostgreSQL JSON cannot hold NUL.
    if let Some(at) = crate::request::nul_in_json(&Value::Object(schema.clone())) {
        return Err(vec![ValidationError {
            instance_path: at,
            message: String::from("contains the NUL character (U+0000), which a contract store cannot keep"),
        }]);
    }
    compile(schema)?;
    let root = Value::Object(schema.clone());
    let reached = expansion(&root);
    if reached > MAX_CONTRACT_SCHEMA_EXPANSION {
        return Err(vec![ValidationError {
            instance_path: String::new(),
            message: format!(
                "the schema reaches more than {MAX_CONTRACT_SCHEMA_EXPANSION} subschemas when its $refs are followed"
            ),
        }]);
    }
    Ok(())
}

/// What validating a delivery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// No errors.
    Valid,
    /// The errors, sorted by instance path then message, at most 10.
    Invalid(Vec<ValidationError>),
    /// The validator could not decide: a `pattern` of the schema hit the regular-expression engine's
    /// backtracking limit. That is the schema's fault, not the holder's: it costs no schema attempt.
    Undecided(ValidationError),
}

/// Validates a delivery's `structured_output` (JSON `null` when absent) against `schema`.
pub fn check(schema: &Map<String, Value>, output: Option<&Map<String, Value>>) -> Checked {
    let validator = match compile(schema) {
        Ok(v) => v,
        Err(mut errors) => return Checked::Invalid(errors.drain(..).take(MAX_VALIDATION_ERRORS).collect()),
    };
    let instance = output.map_or(Value::Null, |o| Value::Object(o.clone()));
    let mut errors = Vec::new();
    for e in validator.iter_errors(&instance) {
        let found = ValidationError {
            instance_path: e.instance_path().to_string(),
            message: e.to_string(),
        };
        if matches!(
            e.kind(),
            jsonschema::error::ValidationErrorKind::BacktrackLimitExceeded { .. }
        ) {
            return Checked::Undecided(found);
        }
        errors.push(found);
    }
    if errors.is_empty() {
        return Checked::Valid;
    }
    errors.sort();
    errors.dedup();
    errors.truncate(MAX_VALIDATION_ERRORS);
    Checked::Invalid(errors)
}

/// [`check`] as a result: `Err` with the errors when the delivery is invalid or undecided.
pub fn validate(
    schema: &Map<String, Value>,
    output: Option<&Map<String, Value>>,
) -> Result<(), Vec<ValidationError>> {
    match check(schema, output) {
        Checked::Valid => Ok(()),
        Checked::Invalid(errors) => Err(errors),
        Checked::Undecided(error) => Err(vec![error]),
    }
}

/// The number of subschemas (JSON objects) reachable from `root` when every local `$ref` is followed
/// and counted again at each use, saturating just above the bound. A cycle (a recursive schema)
/// counts once: validation follows it only as deep as the instance is.
fn expansion(root: &Value) -> usize {
    let index = Index::of(root);
    let mut memo: std::collections::HashMap<*const Value, usize> = std::collections::HashMap::new();
    let mut stack: Vec<*const Value> = Vec::new();
    count(root, &index, &mut memo, &mut stack)
}

const CAP: usize = MAX_CONTRACT_SCHEMA_EXPANSION + 1;

fn count(
    node: &Value,
    index: &Index<'_>,
    memo: &mut std::collections::HashMap<*const Value, usize>,
    stack: &mut Vec<*const Value>,
) -> usize {
    let key: *const Value = node;
    if let Some(n) = memo.get(&key) {
        return *n;
    }
    if stack.contains(&key) {
        return 0;
    }
    stack.push(key);
    let mut total: usize = usize::from(node.is_object());
    match node {
        Value::Object(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
                    && let Value::String(reference) = v
                {
                    // A reference this resolver cannot place counts as the whole document again.
                    let target = index.resolve(reference).unwrap_or(index.root);
                    total = total.saturating_add(count(target, index, memo, stack));
                } else {
                    total = total.saturating_add(count(v, index, memo, stack));
                }
                if total >= CAP {
                    break;
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                total = total.saturating_add(count(v, index, memo, stack));
                if total >= CAP {
                    break;
                }
            }
        }
        _ => {}
    }
    stack.pop();
    let total = total.min(CAP);
    memo.insert(key, total);
    total
}

/// Where the references of one document may point: JSON Pointers from the root, `$anchor` /
/// `$dynamicAnchor` names, and `$id` / `id` values (as written, and their last path segment).
struct Index<'a> {
    root: &'a Value,
    named: std::collections::HashMap<String, &'a Value>,
}

impl<'a> Index<'a> {
    fn of(root: &'a Value) -> Self {
        let mut named = std::collections::HashMap::new();
        fn walk<'a>(v: &'a Value, named: &mut std::collections::HashMap<String, &'a Value>) {
            match v {
                Value::Object(map) => {
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(Value::String(a)) = map.get(key) {
                            named.entry(format!("#{a}")).or_insert(v);
                        }
                    }
                    for key in ["$id", "id"] {
                        if let Some(Value::String(id)) = map.get(key) {
                            named.entry(id.clone()).or_insert(v);
                            if let Some((_, last)) = id.trim_end_matches('#').rsplit_once('/') {
                                named.entry(last.to_owned()).or_insert(v);
                            }
                            if let Some(anchor) = id.strip_prefix('#') {
                                named.entry(format!("#{anchor}")).or_insert(v);
                            }
                        }
                    }
                    map.values().for_each(|c| walk(c, named));
                }
                Value::Array(items) => items.iter().for_each(|c| walk(c, named)),
                _ => {}
            }
        }
        walk(root, &mut named);
        Index { root, named }
    }

    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let (base, fragment) = match reference.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (reference, None),
        };
        let document = if base.is_empty() {
            self.root
        } else {
            let last = base.rsplit_once('/').map_or(base, |(_, l)| l);
            *self.named.get(base).or_else(|| self.named.get(last))?
        };
        match fragment {
            None | Some("") => Some(document),
            Some(f) if f.starts_with('/') => document.pointer(&percent_decode(f)),
            Some(anchor) => self.named.get(&format!("#{anchor}")).copied(),
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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

    /// A chain of `allOf`s with two refs to the level below: 2^levels subschemas when expanded.
    fn ref_bomb(levels: usize) -> Map<String, Value> {
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for i in 1..=levels {
            let below = format!("#/$defs/l{}", i - 1);
            defs.insert(
                format!("l{i}"),
                json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        obj(json!({"$defs": defs, "$ref": format!("#/$defs/l{levels}")}))
    }

    /// A `$ref` bomb is refused at dispatch; recursion and ordinary reuse are not (issue 12 item 11).
    #[test]
    fn issue12_ref_bomb_schemas_are_refused_by_their_expansion() {
        let bomb = ref_bomb(40);
        assert!(serde_json::to_vec(&bomb).unwrap().len() < 4096);
        let refused = accept(&bomb).unwrap_err();
        assert!(refused[0].message.contains("10000 subschemas"), "{refused:?}");
        assert!(accept(&ref_bomb(8)).is_ok(), "2^8 stays under the bound");
        let tree = obj(json!({"$defs": {"node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}));
        assert!(accept(&tree).is_ok(), "a recursive schema counts its cycle once");
        let anchored =
            obj(json!({"$defs": {"a": {"$anchor": "x", "allOf": [{"$ref": "#x"}]}}, "$ref": "#x"}));
        assert!(accept(&anchored).is_ok());
        // The same bomb through $id-named and anchored levels.
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"$id": "l0.json", "type": "string"}));
        for i in 1..=40 {
            let below = format!("l{}.json", i - 1);
            defs.insert(
                format!("l{i}"),
                json!({"$id": format!("l{i}.json"), "allOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let by_id = obj(json!({"$id": "https://example.com/root.json", "$defs": defs, "$ref": "l40.json"}));
        assert!(accept(&by_id).is_err(), "refs through $id are followed too");
    }

    /// A validation that hits the backtracking limit is undecided, not invalid (issue 12 item 11).
    #[test]
    fn issue12_backtracking_limit_is_undecided_not_invalid() {
        let s = obj(
            json!({"type": "object", "properties": {"v": {"type": "string", "pattern": "^((?=a)a+)+$"}}}),
        );
        assert!(accept(&s).is_ok());
        let evil = obj(json!({"v": format!("{}!", "a".repeat(40))}));
        assert!(
            matches!(check(&s, Some(&evil)), Checked::Undecided(_)),
            "{:?}",
            check(&s, Some(&evil))
        );
        let fine = obj(json!({"v": "aaa"}));
        assert_eq!(check(&s, Some(&fine)), Checked::Valid);
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
