//! [`Tape`]: a document read in place — its text kept, and beside it one or two 32-bit words per value
//! saying where the value is — for readers that look at a large document without building it.

use crate::node::{Kind, Node};
use crate::read::{
    self, KIND_ARRAY, KIND_ESCAPED, KIND_FALSE, KIND_NULL, KIND_NUMBER, KIND_OBJECT, KIND_STRING, KIND_TRUE,
    OFFSET_BITS, OFFSET_MASK, ParseError, REPEATS,
};
use crate::value::{Hasher, Json, Number, Object};

/// A JSON document read in place: the text, and a tape of 32-bit slots in document order. Every slot's
/// first word says what the value is and where its token starts; a string takes a second word (its
/// length, or where its decoded text is when it has escapes), an array or object a second word (how
/// many words its contents take); a member is its key's slot then its value's. Strings are borrowed
/// from the text.
///
/// Reading a text into a tape accepts and refuses exactly what [`crate::parse`] does, with the same
/// messages; a [`TapeNode`] reads as the [`Json`] that `parse` builds ([`Node`]), a repeated key
/// included. What it costs beside the text is about two thirds of the text for a typical checkpoint and
/// at most three times the text (an array of empty arrays), where a built [`Json`] takes five to
/// forty times the text. Texts of 512 MiB or more are refused (`Text too long to read in place`).
///
/// ```
/// use shiftwork_json::{Node, Tape};
/// let tape = Tape::parse(r#"{"plan": {"units": [{"id": "a\u00e9", "n": 12345678901234567890123}]}}"#.to_owned()).unwrap();
/// let unit = tape.root().get("plan").and_then(|p| p.get("units")).and_then(|u| u.items().next()).unwrap();
/// assert_eq!(unit.get("id").and_then(|i| i.as_str()), Some("aé"));
/// assert_eq!(unit.to_json(), shiftwork_json::parse(r#"{"id": "aé", "n": 12345678901234567890123}"#).unwrap());
/// assert_eq!(
///     Tape::parse("[1, 2".to_owned()).unwrap_err().to_string(),
///     "Expecting ',' delimiter: line 1 column 6 (char 5)"
/// );
/// ```
#[derive(Debug)]
pub struct Tape {
    text: String,
    words: Vec<u32>,
    decoded: String,
    starts: Vec<u32>,
}

impl Tape {
    /// Reads `text` (one JSON value, whitespace around it) as [`crate::parse`] does.
    pub fn parse(text: String) -> Result<Tape, ParseError> {
        let parts = read::parse_tape(&text)?;
        Ok(Tape {
            text,
            words: parts.words,
            decoded: parts.decoded,
            starts: parts.starts,
        })
    }

    /// The value the text holds.
    pub fn root(&self) -> TapeNode<'_> {
        TapeNode { tape: self, at: 0 }
    }

    /// The text read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The bytes this tape holds beside its text: its slots and the decoded text of escaped strings.
    pub fn extra_bytes(&self) -> usize {
        self.words.capacity() * 4 + self.decoded.capacity() + self.starts.capacity() * 4
    }

    /// The kind of the slot at `at` (`KIND_*`).
    fn kind_at(&self, at: u32) -> u32 {
        self.words[at as usize] >> OFFSET_BITS
    }

    /// How many words the value at `at` takes.
    fn width(&self, at: u32) -> u32 {
        match self.kind_at(at) {
            KIND_ARRAY | KIND_OBJECT => 2 + (self.words[at as usize + 1] & !REPEATS),
            KIND_STRING | KIND_ESCAPED => 2,
            _ => 1,
        }
    }

    /// The text of the string at `at`.
    fn string(&self, at: u32) -> &str {
        let word = self.words[at as usize];
        let second = self.words[at as usize + 1] as usize;
        if word >> OFFSET_BITS == KIND_ESCAPED {
            return &self.decoded[self.starts[second] as usize..self.starts[second + 1] as usize];
        }
        let start = (word & OFFSET_MASK) as usize + 1;
        &self.text[start..start + second]
    }
}

/// One value of a [`Tape`]: a place on it. Cheap to copy; read it through [`Node`].
#[derive(Clone, Copy)]
pub struct TapeNode<'t> {
    tape: &'t Tape,
    at: u32,
}

impl std::fmt::Debug for TapeNode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TapeNode")
            .field("at", &self.at)
            .field("kind", &self.kind())
            .finish()
    }
}

impl<'t> TapeNode<'t> {
    /// The tape it is on.
    pub fn tape(&self) -> &'t Tape {
        self.tape
    }

    /// Where the value's token starts in the text (a byte offset).
    pub fn offset(&self) -> usize {
        (self.tape.words[self.at as usize] & OFFSET_MASK) as usize
    }

    /// The number of items of an array, or of members of an object as written (a repeated key counted
    /// each time); 0 for any other value. It walks the contents: O(items).
    pub fn len(&self) -> usize {
        match self.kind() {
            Kind::Array => self.items().count(),
            Kind::Object => Members::raw(*self).count(),
            _ => 0,
        }
    }

    /// Whether [`TapeNode::len`] is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The end of the contents of the container at `self` (the word after them).
    fn contents(&self) -> (u32, u32) {
        let skip = self.tape.words[self.at as usize + 1] & !REPEATS;
        (self.at + 2, self.at + 2 + skip)
    }

    fn repeats_a_key(&self) -> bool {
        self.tape.words[self.at as usize + 1] & REPEATS != 0
    }
}

impl<'t> Node<'t> for TapeNode<'t> {
    type Items = Items<'t>;
    type Members = Members<'t>;

    fn kind(self) -> Kind {
        match self.tape.kind_at(self.at) {
            KIND_NULL => Kind::Null,
            KIND_FALSE | KIND_TRUE => Kind::Bool,
            KIND_NUMBER => Kind::Number,
            KIND_STRING | KIND_ESCAPED => Kind::String,
            KIND_ARRAY => Kind::Array,
            _ => Kind::Object,
        }
    }

    fn get(self, key: &str) -> Option<Self> {
        if self.kind() != Kind::Object {
            return None;
        }
        let (mut at, end) = self.contents();
        let mut found = None;
        while at < end {
            let value = at + self.tape.width(at);
            if self.tape.string(at) == key {
                found = Some(TapeNode {
                    tape: self.tape,
                    at: value,
                });
                if !self.repeats_a_key() {
                    break;
                }
            }
            at = value + self.tape.width(value);
        }
        found
    }

    fn as_str(self) -> Option<&'t str> {
        (self.kind() == Kind::String).then(|| self.tape.string(self.at))
    }

    fn as_bool(self) -> Option<bool> {
        match self.tape.kind_at(self.at) {
            KIND_TRUE => Some(true),
            KIND_FALSE => Some(false),
            _ => None,
        }
    }

    fn number(self) -> Option<Number> {
        if self.kind() != Kind::Number {
            return None;
        }
        let at = self.offset();
        let bytes = self.tape.text.as_bytes();
        Some(match bytes[at] {
            b'N' => Number::Float(f64::NAN),
            b'I' => Number::Float(f64::INFINITY),
            b'-' if bytes.get(at + 1) == Some(&b'I') => Number::Float(f64::NEG_INFINITY),
            _ => {
                let (end, is_float) = read::scan_number(bytes, at)?;
                read::number_of(&self.tape.text[at..end], is_float)
            }
        })
    }

    fn items(self) -> Items<'t> {
        let (at, end) = if self.kind() == Kind::Array {
            self.contents()
        } else {
            (0, 0)
        };
        Items {
            tape: self.tape,
            at,
            end,
        }
    }

    fn members(self) -> Members<'t> {
        if self.kind() != Kind::Object {
            return Members::none(self.tape);
        }
        if !self.repeats_a_key() {
            return Members::raw(self);
        }
        // A repeated key keeps its first position and takes its last value, as a Python dict does.
        let mut once: indexmap::IndexMap<&'t str, TapeNode<'t>, Hasher> = indexmap::IndexMap::default();
        for (key, value) in Members::raw(self) {
            once.insert(key, value);
        }
        Members(MemberSource::Once(
            once.into_iter().collect::<Vec<_>>().into_iter(),
        ))
    }

    fn to_json(self) -> Json {
        match self.kind() {
            Kind::Null => Json::Null,
            Kind::Bool => Json::Bool(self.as_bool() == Some(true)),
            Kind::Number => Json::Number(self.number().unwrap_or(Number::Float(f64::NAN))),
            Kind::String => Json::String(self.tape.string(self.at).to_owned()),
            Kind::Array => {
                let mut items = Vec::with_capacity(self.items().count());
                items.extend(self.items().map(TapeNode::to_json));
                Json::Array(items)
            }
            Kind::Object => {
                let mut members =
                    Object::with_capacity_and_hasher(Members::raw(self).count(), Hasher::default());
                for (key, value) in Members::raw(self) {
                    members.insert(key.to_owned(), value.to_json());
                }
                Json::Object(members)
            }
        }
    }
}

impl TapeNode<'_> {
    /// About how many bytes [`Node::to_json`] allocates for this value: its strings' text, its arrays'
    /// items and its objects' members and hash index, the allocator's own overhead aside — what a
    /// caller reserves before building a large document (`shiftwork-core`'s memory admission).
    ///
    /// ```
    /// use shiftwork_json::Tape;
    /// let tape = Tape::parse(r#"{"ids": ["a", "bc"], "n": 1}"#.to_owned()).unwrap();
    /// assert!(tape.root().built_bytes() > 2 * std::mem::size_of::<shiftwork_json::Json>());
    /// ```
    pub fn built_bytes(self) -> usize {
        let value = std::mem::size_of::<Json>();
        match self.kind() {
            Kind::String => self.tape.string(self.at).len(),
            Kind::Number => match self.number() {
                Some(Number::BigInt(digits)) => digits.len(),
                _ => 0,
            },
            Kind::Array => self.items().map(|item| value + item.built_bytes()).sum(),
            Kind::Object => {
                let mut n: usize = 0;
                let mut bytes = 0;
                for (key, item) in Members::raw(self) {
                    n += 1;
                    bytes += key.len() + item.built_bytes();
                }
                // The entries (hash, key, value) and the hash table of positions, as IndexMap holds them.
                let buckets = match n {
                    0 => 0,
                    1..=3 => 4,
                    4..=7 => 8,
                    _ => (n * 8 / 7).next_power_of_two(),
                };
                let index = if buckets == 0 { 0 } else { buckets * 9 + 16 };
                bytes + n * (8 + std::mem::size_of::<String>() + value) + index
            }
            _ => 0,
        }
    }
}

/// The items of an array on a tape.
#[derive(Debug, Clone)]
pub struct Items<'t> {
    tape: &'t Tape,
    at: u32,
    end: u32,
}

impl<'t> Iterator for Items<'t> {
    type Item = TapeNode<'t>;

    fn next(&mut self) -> Option<TapeNode<'t>> {
        if self.at >= self.end {
            return None;
        }
        let node = TapeNode {
            tape: self.tape,
            at: self.at,
        };
        self.at += self.tape.width(self.at);
        Some(node)
    }
}

/// The members of an object on a tape, each key once ([`Node::members`]).
#[derive(Debug)]
pub struct Members<'t>(MemberSource<'t>);

#[derive(Debug)]
enum MemberSource<'t> {
    /// An object that repeats no key: its members as written, from the key at `at` to `end`.
    Raw { tape: &'t Tape, at: u32, end: u32 },
    /// An object that repeats a key: its members resolved.
    Once(std::vec::IntoIter<(&'t str, TapeNode<'t>)>),
}

impl<'t> Members<'t> {
    fn raw(object: TapeNode<'t>) -> Members<'t> {
        let (at, end) = object.contents();
        Members(MemberSource::Raw {
            tape: object.tape,
            at,
            end,
        })
    }

    fn none(tape: &'t Tape) -> Members<'t> {
        Members(MemberSource::Raw { tape, at: 0, end: 0 })
    }
}

impl<'t> Iterator for Members<'t> {
    type Item = (&'t str, TapeNode<'t>);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MemberSource::Raw { tape, at, end } => {
                if *at >= *end {
                    return None;
                }
                let key = tape.string(*at);
                let value = *at + tape.width(*at);
                *at = value + tape.width(value);
                Some((key, TapeNode { tape, at: value }))
            }
            MemberSource::Once(members) => members.next(),
        }
    }
}
