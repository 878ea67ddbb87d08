//! [`Node`]: one read-only way to look at a JSON value, whether it is a built [`Json`] or a place in a
//! [`crate::Tape`], so a reader written once serves both.

use crate::value::{Json, Number};

/// What a JSON value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number token (`NaN` and the infinities included).
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A JSON value read in place: `&Json` and [`crate::TapeNode`] both are one. Objects read as a Python
/// `dict` holds them: a key repeated in the text has the position of its first occurrence and the value
/// of its last, in [`Node::get`] and [`Node::members`] alike.
///
/// ```
/// use shiftwork_json::{Json, Kind, Node, Tape};
///
/// fn unit_ids<'a, N: Node<'a>>(doc: N) -> Vec<&'a str> {
///     doc.get("units").into_iter().flat_map(N::items).filter_map(|u| u.get("id")?.as_str()).collect()
/// }
/// let text = r#"{"units": [{"id": "a"}, {"id": "b", "id": "c"}]}"#;
/// let built: Json = shiftwork_json::parse(text).unwrap();
/// let tape = Tape::parse(text.to_owned()).unwrap();
/// assert_eq!(unit_ids(&built), ["a", "c"]);
/// assert_eq!(unit_ids(tape.root()), ["a", "c"]);
/// assert_eq!(tape.root().kind(), Kind::Object);
/// ```
pub trait Node<'a>: Copy {
    /// The items of an array.
    type Items: Iterator<Item = Self>;
    /// The members of an object.
    type Members: Iterator<Item = (&'a str, Self)>;

    /// What the value is.
    fn kind(self) -> Kind;
    /// The member `key` of an object (the value of its last occurrence); `None` for a missing key or a
    /// value that is not an object.
    fn get(self, key: &str) -> Option<Self>;
    /// The text of a string.
    fn as_str(self) -> Option<&'a str>;
    /// The value of `true` or `false`.
    fn as_bool(self) -> Option<bool>;
    /// The number of a number token.
    fn number(self) -> Option<Number>;
    /// The items of an array, in order (none for any other value).
    fn items(self) -> Self::Items;
    /// The members of an object in the order of their keys' first occurrence, each key once with its
    /// last value (none for any other value).
    fn members(self) -> Self::Members;
    /// The value, built.
    fn to_json(self) -> Json;

    /// Whether the value is `null`.
    fn is_null(self) -> bool {
        self.kind() == Kind::Null
    }
}

type MemberOf<'a> = fn((&'a String, &'a Json)) -> (&'a str, &'a Json);

impl<'a> Node<'a> for &'a Json {
    type Items = std::slice::Iter<'a, Json>;
    type Members = std::iter::Map<indexmap::map::Iter<'a, String, Json>, MemberOf<'a>>;

    fn kind(self) -> Kind {
        match self {
            Json::Null => Kind::Null,
            Json::Bool(_) => Kind::Bool,
            Json::Number(_) => Kind::Number,
            Json::String(_) => Kind::String,
            Json::Array(_) => Kind::Array,
            Json::Object(_) => Kind::Object,
        }
    }

    fn get(self, key: &str) -> Option<Self> {
        Json::get(self, key)
    }

    fn as_str(self) -> Option<&'a str> {
        Json::as_str(self)
    }

    fn as_bool(self) -> Option<bool> {
        Json::as_bool(self)
    }

    fn number(self) -> Option<Number> {
        self.as_number().cloned()
    }

    fn items(self) -> Self::Items {
        match self {
            Json::Array(items) => items.iter(),
            _ => [].iter(),
        }
    }

    fn members(self) -> Self::Members {
        let f: MemberOf<'a> = |(k, v)| (k.as_str(), v);
        match self {
            Json::Object(members) => members.iter().map(f),
            _ => indexmap::map::Iter::default().map(f),
        }
    }

    fn to_json(self) -> Json {
        self.clone()
    }
}
