//! [`Json`] as an instance representation of the `jsonschema` crate, so documents are validated as
//! read — integers of any size, `NaN`, floats with a zero fraction — without a lossy conversion.

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json as JsonRepr, JsonNumber, Node, NodeIdentity, Object as ObjectRepr};

use crate::json::{Json, Number, Object};

/// The marker type naming this representation to `jsonschema::options_for`.
pub(crate) struct ShiftJson;

/// A number of a [`Json`] value as `jsonschema` sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SchemaNumber<'a>(&'a Number);

impl JsonRepr for ShiftJson {
    type Node<'a> = &'a Json;
    type PreparedKey = String;
    type StringBuffer = Json;

    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(buffer: &mut Json, string: &str, f: impl FnOnce(&Json) -> T) -> T {
        *buffer = Json::String(string.to_owned());
        f(buffer)
    }
}

impl JsonNumber for SchemaNumber<'_> {
    fn as_u64(&self) -> Option<u64> {
        match self.0 {
            Number::Int(i) => u64::try_from(*i).ok(),
            Number::BigInt(text) => text.parse().ok(),
            Number::Float(_) => None,
        }
    }

    fn as_i64(&self) -> Option<i64> {
        match self.0 {
            Number::Int(i) => Some(*i),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        Some(Number::as_f64(self.0))
    }

    fn as_str(&self) -> Cow<'_, str> {
        match self.0 {
            Number::Int(i) => Cow::Owned(i.to_string()),
            Number::BigInt(text) => Cow::Borrowed(text),
            Number::Float(f) => Cow::Owned(format!("{f:e}")),
        }
    }

    fn to_number(&self) -> Cow<'_, serde_json::Number> {
        Cow::Owned(match self.0 {
            Number::Int(i) => serde_json::Number::from(*i),
            other => serde_json::Number::from_f64(Number::as_f64(other))
                .unwrap_or_else(|| serde_json::Number::from(0)),
        })
    }

    fn is_integer(&self) -> bool {
        self.0.is_whole()
    }

    fn is_written_as_integer(&self) -> bool {
        !matches!(self.0, Number::Float(_))
    }
}

type MemberFn<'a> = fn((&'a String, &'a Json)) -> (&'a str, &'a Json);

impl<'a> Node<'a, ShiftJson> for &'a Json {
    type Object = &'a Object;
    type Array = &'a [Json];
    type Number = SchemaNumber<'a>;

    fn as_object(&self) -> Option<&'a Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<&'a [Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Json::String(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }

    fn as_number(&self) -> Option<SchemaNumber<'a>> {
        match self {
            Json::Number(n) => Some(SchemaNumber(n)),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    fn json_type(&self) -> JsonType {
        match self {
            Json::Null => JsonType::Null,
            Json::Bool(_) => JsonType::Boolean,
            Json::Number(_) => JsonType::Number,
            Json::String(_) => JsonType::String,
            Json::Array(_) => JsonType::Array,
            Json::Object(_) => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &serde_json::Value) -> bool {
        match (self, expected) {
            (Json::String(a), serde_json::Value::String(b)) => a == b,
            (Json::String(_), _) | (_, serde_json::Value::String(_)) => false,
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, serde_json::Value> {
        Cow::Owned(Json::to_serde(self))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(std::ptr::from_ref::<Json>(*self) as usize))
    }
}

impl<'a> ObjectRepr<'a, ShiftJson> for &'a Object {
    type Node = &'a Json;
    type MemberName = &'a str;
    type MembersIter = std::iter::Map<indexmap::map::Iter<'a, String, Json>, MemberFn<'a>>;

    fn len(&self) -> usize {
        (*self).len()
    }

    fn get(&self, key: &String) -> Option<&'a Json> {
        (*self).get(key.as_str())
    }

    fn members(&self) -> Self::MembersIter {
        let f: MemberFn<'a> = |(k, v)| (k.as_str(), v);
        self.iter().map(f)
    }
}

impl<'a> Array<'a, ShiftJson> for &'a [Json] {
    type Node = &'a Json;
    type ElementsIter = std::slice::Iter<'a, Json>;

    fn len(&self) -> usize {
        <[Json]>::len(self)
    }

    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
}
