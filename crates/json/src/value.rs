//! The JSON value of checkpoints, ledger lines and tool arguments: key order as read, number tokens
//! as written.

use indexmap::IndexMap;

/// An object: keys in the order of their first occurrence; inserting an existing key replaces its
/// value at its first position. Keys are hashed with `foldhash`, seeded at random per
/// process: several times faster than the standard SipHash on the short keys of checkpoints and
/// arguments, and still not predictable by a client that sends crafted keys.
pub type Object = IndexMap<String, Json, Hasher>;

/// The hasher of [`Object`].
pub type Hasher = foldhash::fast::RandomState;

/// A JSON value that keeps what `serde_json::Value` loses: integers of any size, the integer/float
/// distinction of the token (`5` vs `5.0`), `NaN`/`Infinity`, and key order with duplicate keys
/// resolved as 0.36.2 resolves them.
///
/// ```
/// use shiftwork_json::{Json, Number};
/// let v = shiftwork_json::parse(r#"{"b": 1, "a": 2.50, "b": 3}"#).unwrap();
/// let obj = v.as_object().unwrap();
/// assert_eq!(obj.keys().collect::<Vec<_>>(), ["b", "a"]);
/// assert_eq!(obj["b"], Json::Number(Number::Int(3)));
/// assert_eq!(obj["a"], Json::Number(Number::Float(2.5)));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Json {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number token.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object.
    Object(Object),
}

/// A number as its token was written.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    /// An integer token (no fraction, no exponent) that fits in 64 bits; `-0` reads as `0`.
    Int(i64),
    /// An integer token beyond 64 bits: canonical decimal digits with an optional `-`.
    BigInt(Box<str>),
    /// A token with a fraction or an exponent, or `NaN`/`Infinity`/`-Infinity`.
    Float(f64),
}

impl Number {
    /// The integer of an integer token, or of a float with a zero fraction, as an `i128`
    /// saturated at its bounds; `None` for other floats.
    ///
    /// ```
    /// use shiftwork_json::Number;
    /// assert_eq!(Number::Float(3.0).as_whole(), Some(3));
    /// assert_eq!(Number::Float(2.5).as_whole(), None);
    /// assert_eq!(Number::BigInt(format!("-{}", "9".repeat(60)).into()).as_whole(), Some(i128::MIN));
    /// assert_eq!(Number::BigInt("100000000000000000000".into()).as_whole(), Some(10i128.pow(20)));
    /// ```
    pub fn as_whole(&self) -> Option<i128> {
        match self {
            Number::Int(i) => Some(i128::from(*i)),
            Number::BigInt(text) => Some(text.parse::<i128>().unwrap_or(if text.starts_with('-') {
                i128::MIN
            } else {
                i128::MAX
            })),
            Number::Float(f) => {
                if f.is_finite() && f.fract() == 0.0 {
                    // `as` saturates for floats beyond the i128 range.
                    Some(*f as i128)
                } else {
                    None
                }
            }
        }
    }

    /// Whether this is a whole number: an integer token, or a finite float with a zero fraction.
    pub fn is_whole(&self) -> bool {
        self.as_whole().is_some()
    }

    /// The nearest double (an integer beyond the double range gives ±infinity).
    pub fn as_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::BigInt(text) => text.parse().unwrap_or(f64::NAN),
            Number::Float(f) => *f,
        }
    }

    /// The number for an integer-token text (digits with an optional leading `-`, no leading zeros).
    pub fn from_int_text(text: &str) -> Number {
        match text.parse::<i64>() {
            Ok(i) => Number::Int(i),
            Err(_) => Number::BigInt(text.into()),
        }
    }
}

impl Json {
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object, mutably, if this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The array, mutably, if this is one.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Json::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// The member `key` of an object (`None` for a missing key or a non-object).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// A string value.
    pub fn str(text: impl Into<String>) -> Json {
        Json::String(text.into())
    }

    /// An integer value.
    pub fn int(value: i64) -> Json {
        Json::Number(Number::Int(value))
    }

    /// An array of strings.
    pub fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Json {
        Json::Array(items.into_iter().map(|s| Json::str(s.as_ref())).collect())
    }

    /// Converts from a `serde_json::Value` (arguments decoded by an MCP SDK). Integers of 64 bits
    /// are kept exactly; a number serde_json holds as a float stays a float.
    pub fn from_serde(value: &serde_json::Value) -> Json {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => Json::Number(if let Some(i) = n.as_i64() {
                Number::Int(i)
            } else if let Some(u) = n.as_u64() {
                Number::BigInt(u.to_string().into())
            } else {
                Number::Float(n.as_f64().unwrap_or(f64::NAN))
            }),
            serde_json::Value::String(s) => Json::String(s.clone()),
            serde_json::Value::Array(a) => Json::Array(a.iter().map(Json::from_serde).collect()),
            serde_json::Value::Object(o) => {
                Json::Object(o.iter().map(|(k, v)| (k.clone(), Json::from_serde(v))).collect())
            }
        }
    }

    /// Converts to a `serde_json::Value` (for an MCP SDK's structured content). Integers beyond 64
    /// bits become their nearest double, and `NaN`/`Infinity` become `null`: serde_json cannot hold
    /// them. Text renderings ([`crate::to_answer_text`]) keep them exactly.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => serde_json::Value::Bool(*b),
            Json::Number(Number::Int(i)) => serde_json::Value::from(*i),
            Json::Number(Number::BigInt(text)) => text
                .parse::<u64>()
                .map(serde_json::Value::from)
                .unwrap_or_else(|_| float_value(Number::BigInt(text.clone()).as_f64())),
            Json::Number(Number::Float(f)) => float_value(*f),
            Json::String(s) => serde_json::Value::String(s.clone()),
            Json::Array(a) => serde_json::Value::Array(a.iter().map(Json::to_serde).collect()),
            Json::Object(o) => {
                serde_json::Value::Object(o.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect())
            }
        }
    }
}

fn float_value(f: f64) -> serde_json::Value {
    serde_json::Number::from_f64(f)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<Object> for Json {
    fn from(o: Object) -> Json {
        Json::Object(o)
    }
}

impl From<Vec<Json>> for Json {
    fn from(a: Vec<Json>) -> Json {
        Json::Array(a)
    }
}

/// Builds an [`Object`] from `(key, value)` pairs in order.
pub fn object<K: Into<String>>(members: impl IntoIterator<Item = (K, Json)>) -> Object {
    members.into_iter().map(|(k, v)| (k.into(), v)).collect()
}
