//! `Serialize` and `Deserialize` for [`Json`], so a value of this crate travels through any serde
//! format — into a `serde_json::Value`, a struct field of a program's own type, a message of another
//! library — as one JSON story.
//!
//! What the serde data model can hold is kept exactly: key order (a map is written member by member in
//! order), `5` against `5.0` (an integer token is written as an integer, a float as a float, and read
//! back as what the format says it is), integers of up to 128 bits. A number is never written changed:
//!
//! - an integer beyond 128 bits has no serde type, so writing it is an error of the serializer (use
//!   [`Json::to_serde`] for a `serde_json::Value` that approximates it, or a text form of this crate,
//!   which keeps every digit);
//! - a format decides how wide an integer it takes and gives back: `serde_json`'s text writer writes
//!   128-bit integers exactly, but a `serde_json::Value` holds 64 bits (its serializer refuses a wider
//!   integer), and `serde_json`'s reader reads an integer beyond 64 bits as a double. Parse JSON text
//!   with [`crate::parse`], which keeps every digit, and keep serde for values in memory;
//! - `NaN`, `Infinity` and `-Infinity` are floats, which a JSON writer such as `serde_json` writes as
//!   `null`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::value::{Json, Number, Object};

impl Serialize for Json {
    /// ```
    /// let v = shiftwork_json::parse(r#"{"b": 5, "a": 5.0, "big": 18446744073709551615}"#).unwrap();
    /// assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"b":5,"a":5.0,"big":18446744073709551615}"#);
    /// ```
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl Serialize for Number {
    /// An integer as the narrowest serde integer that holds it (beyond 128 bits, an error: it is
    /// never written changed); a float as a float.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Number::Int(i) => serializer.serialize_i64(*i),
            Number::BigInt(digits) => {
                if let Ok(u) = digits.parse::<u64>() {
                    serializer.serialize_u64(u)
                } else if let Ok(i) = digits.parse::<i128>() {
                    serializer.serialize_i128(i)
                } else if let Ok(u) = digits.parse::<u128>() {
                    serializer.serialize_u128(u)
                } else {
                    Err(serde::ser::Error::custom(format_args!(
                        "the integer {digits} is wider than 128 bits, which no serde type holds; it is not written changed"
                    )))
                }
            }
            Number::Float(f) => serializer.serialize_f64(*f),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    /// Any self-describing format's value: an integer the format reads as one stays an integer (of
    /// any width up to 128 bits), a float stays a float, a map keeps its keys in the order read (a
    /// repeated key keeps its first position and its last value, as a Python `dict` does).
    ///
    /// ```
    /// use shiftwork_json::{Json, Number};
    /// let v: Json = serde_json::from_str(r#"{"n": 5, "f": 5.0, "u": 18446744073709551615}"#).unwrap();
    /// assert_eq!(v.get("n"), Some(&Json::int(5)));
    /// assert_eq!(v.get("f"), Some(&Json::Number(Number::Float(5.0))));
    /// assert_eq!(v.get("u"), Some(&Json::Number(Number::BigInt("18446744073709551615".into()))));
    /// ```
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

impl<'de> Deserialize<'de> for Number {
    /// A number of any serde format, kept as [`Json`]'s deserializer keeps it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Number, D::Error> {
        match Json::deserialize(deserializer)? {
            Json::Number(n) => Ok(n),
            _ => Err(de::Error::custom("expected a number")),
        }
    }
}

struct JsonVisitor;

fn integer(text: String) -> Json {
    Json::Number(Number::from_int_text(&text))
}

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(integer(v.to_string()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Json, E> {
        Ok(integer(v.to_string()))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Json, E> {
        Ok(integer(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Number(Number::Float(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::str(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        Json::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        // The size hint is the format's word, not a bound: never trusted past a small allocation.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<Json>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Object::default();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.insert(key, value);
        }
        Ok(Json::Object(members))
    }
}
