//! `work_plan`'s arguments read straight from their text when it is in the plain form most clients
//! send: no value tree, ids borrowed from the text, each node handed to the graph
//! [`Builder`] as soon as its object closes.

use super::graph::{Builder, Nodes};
use super::{Priority, normalize_touch};
use crate::refusal::ShiftworkRefusal;
use crate::results::WorkPlan;

/// [`work_plan`](super::work_plan) read straight from the text of its arguments, `{"nodes": [...]}`,
/// when that text is in the plain form most clients send: a single `nodes` member holding an array of
/// node objects whose members are `id`, `depends_on`, `priority` and `touches` (each at most once),
/// strings without escapes or control characters, priorities as integer tokens of at most 18 digits,
/// `null` where the node allows it. The ids and dependencies are borrowed from the text, so no value
/// tree is built.
///
/// `None` for any other text, valid or not: the caller then parses it whole and calls
/// [`work_plan`](super::work_plan), which answers the same for every text this function reads (a
/// property test holds them to it), and alone words the refusals of a malformed node.
///
/// ```
/// let text = r#"{"nodes": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "priority": 2}]}"#;
/// let plan = shiftwork_core::planner::work_plan_text(text).unwrap().unwrap();
/// assert_eq!(plan.batches, [vec!["a"], vec!["b"]]);
/// // An escape takes the general path.
/// assert!(shiftwork_core::planner::work_plan_text(r#"{"nodes": [{"id": "\u0061"}]}"#).is_none());
/// ```
pub fn work_plan_text(arguments: &str) -> Option<Result<WorkPlan<'_>, ShiftworkRefusal>> {
    let read = PlainNodes::read(arguments)?;
    let rest = arguments.get(read.end..)?;
    rest.trim_start_matches([' ', '\t', '\n', '\r'])
        .is_empty()
        .then(|| read.plan())
}

/// The nodes of a `work_plan` call read from the plain form of its arguments (see [`work_plan_text`])
/// at the start of a longer text, such as the request line that carries them. A text this reads is
/// valid JSON, so a transport that reads the arguments this way need not validate them again.
///
/// ```
/// use shiftwork_core::planner::PlainNodes;
/// let line = r#"{"nodes": [{"id": "a"}, {"id": "b", "depends_on": ["a"]}]}, "name": "work_plan"}"#;
/// let read = PlainNodes::read(line).unwrap();
/// assert_eq!(&line[read.end()..], r#", "name": "work_plan"}"#);
/// assert_eq!(read.ids(), ["a", "b"]);
/// assert_eq!(read.plan().unwrap().batches, [vec!["a"], vec!["b"]]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PlainNodes<'a> {
    nodes: Nodes<'a>,
    /// The refusal (duplicate id, unknown dependency) the nodes met, when they cannot be planned.
    refusal: Option<ShiftworkRefusal>,
    end: usize,
}

impl<'a> PlainNodes<'a> {
    /// The plain-form arguments object (after any whitespace) at the start of `text`; `None` when
    /// the text does not start with one. The text may go on after it.
    pub fn read(text: &'a str) -> Option<Self> {
        let (builder, end) = arguments(text)?;
        let (nodes, refusal) = builder.resolve();
        Some(PlainNodes { nodes, refusal, end })
    }

    /// Where the object ends in the text: the byte after its closing brace.
    pub fn end(&self) -> usize {
        self.end
    }

    /// The ids of the nodes read, in input order.
    pub fn ids(&self) -> &[&'a str] {
        &self.nodes.ids
    }

    /// [`work_plan`](super::work_plan)'s answer on these nodes.
    pub fn plan(&self) -> Result<WorkPlan<'a>, ShiftworkRefusal> {
        match &self.refusal {
            None => self.nodes.work_plan(),
            Some(refusal) => Err(refusal.clone()),
        }
    }
}

// The reader. Each function takes the text and the offset to read at, and answers the offset after
// what it read (with what it read), or `None` as soon as the text leaves the plain form. The offset
// stays in a register: a reader that kept it in a struct behind `&mut self` paid a store and a load
// around every call, several times per token.

/// The offset of the first byte at or after `at` that is not JSON whitespace.
#[inline(always)]
fn skip(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// `byte` after any whitespace: the offset after it.
#[inline(always)]
fn expect(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    // Compact text has no whitespace: one test.
    match bytes.get(at) {
        Some(&b) if b == byte => Some(at + 1),
        Some(b' ' | b'\t' | b'\n' | b'\r') => expect_after_space(bytes, at, byte),
        _ => None,
    }
}

/// [`expect`] where whitespace comes first.
#[inline(never)]
fn expect_after_space(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    let at = skip(bytes, at);
    (*bytes.get(at)? == byte).then_some(at + 1)
}

/// `,` (then `true`: another item follows) or `close` (`false`), after any whitespace.
#[inline(always)]
fn next_or(bytes: &[u8], at: usize, close: u8) -> Option<(bool, usize)> {
    match *bytes.get(at)? {
        b',' => Some((true, at + 1)),
        b if b == close => Some((false, at + 1)),
        b' ' | b'\t' | b'\n' | b'\r' => next_or_after_space(bytes, at, close),
        _ => None,
    }
}

/// [`next_or`] where whitespace comes first.
#[inline(never)]
fn next_or_after_space(bytes: &[u8], at: usize, close: u8) -> Option<(bool, usize)> {
    let at = skip(bytes, at);
    match *bytes.get(at)? {
        b',' => Some((true, at + 1)),
        b if b == close => Some((false, at + 1)),
        _ => None,
    }
}

/// A string without escapes or control characters, after any whitespace.
#[inline(always)]
fn string(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    let start = expect(bytes, at, b'"')?;
    let end = start + crate::json::plain_run(bytes.get(start..)?);
    if bytes.get(end) != Some(&b'"') {
        return None;
    }
    Some((text.get(start..end)?, end + 1))
}

/// `null` after any whitespace: the offset after it; `None` for anything else.
#[inline(always)]
fn null(bytes: &[u8], at: usize) -> Option<usize> {
    let at = skip(bytes, at);
    bytes.get(at..)?.starts_with(b"null").then_some(at + 4)
}

/// An array of strings, appended to `out`.
fn strings<'a>(text: &'a str, at: usize, out: &mut Vec<&'a str>) -> Option<usize> {
    let bytes = text.as_bytes();
    let at = expect(bytes, at, b'[')?;
    let mut at = skip(bytes, at);
    if bytes.get(at) == Some(&b']') {
        return Some(at + 1);
    }
    loop {
        let (s, after) = string(text, at)?;
        out.push(s);
        let (more, after) = next_or(bytes, after, b']')?;
        at = after;
        if !more {
            return Some(at);
        }
    }
}

/// An integer token of at most 18 digits (so it fits `i64`), not followed by a fraction or an
/// exponent, after any whitespace.
#[inline(always)]
fn integer(bytes: &[u8], at: usize) -> Option<(i64, usize)> {
    let at = skip(bytes, at);
    let negative = *bytes.get(at)? == b'-';
    let digits_at = at + usize::from(negative);
    let mut value: i64 = 0;
    let mut end = digits_at;
    while let Some(&b @ b'0'..=b'9') = bytes.get(end) {
        if end - digits_at == 18 {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
        end += 1;
    }
    let digits = end - digits_at;
    if digits == 0 || (digits > 1 && bytes[digits_at] == b'0') {
        return None;
    }
    if let Some(b'.' | b'e' | b'E') = bytes.get(end) {
        return None;
    }
    Some((if negative { -value } else { value }, end))
}

/// The members of a node object.
#[derive(Clone, Copy)]
enum Member {
    Id,
    DependsOn,
    Priority,
    Touches,
}

/// A node's member name and its colon: the name compared in place, closing quote included.
#[inline(always)]
fn member(bytes: &[u8], at: usize) -> Option<(Member, usize)> {
    let at = expect(bytes, at, b'"')?;
    let rest = bytes.get(at..)?;
    let (member, len) = match rest.first()? {
        b'i' if rest.starts_with(b"id\"") => (Member::Id, 3),
        b'd' if rest.starts_with(b"depends_on\"") => (Member::DependsOn, 11),
        b'p' if rest.starts_with(b"priority\"") => (Member::Priority, 9),
        b't' if rest.starts_with(b"touches\"") => (Member::Touches, 8),
        _ => return None,
    };
    Some((member, expect(bytes, at + len, b':')?))
}

/// One node object, handed to `builder`.
fn node<'a>(text: &'a str, at: usize, builder: &mut Builder<'a>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = expect(bytes, at, b'{')?;
    let (mut id, mut deps_seen, mut priority, mut touches) = (None, false, None, None);
    loop {
        let (name, after) = member(bytes, at)?;
        at = match name {
            Member::Id if id.is_none() => {
                let (s, after) = string(text, after)?;
                id = Some(s);
                after
            }
            Member::DependsOn if !deps_seen => {
                deps_seen = true;
                match null(bytes, after) {
                    Some(after) => after,
                    None => strings(text, after, builder.dependencies())?,
                }
            }
            Member::Priority if priority.is_none() => match null(bytes, after) {
                Some(after) => {
                    priority = Some(0);
                    after
                }
                None => {
                    let (p, after) = integer(bytes, after)?;
                    priority = Some(p);
                    after
                }
            },
            Member::Touches if touches.is_none() => match null(bytes, after) {
                Some(after) => {
                    touches = Some(None);
                    after
                }
                None => {
                    let mut paths = Vec::new();
                    let after = strings(text, after, &mut paths)?;
                    let normalized = paths
                        .into_iter()
                        .map(normalize_touch)
                        .collect::<Option<Vec<_>>>()?;
                    touches = Some(Some(normalized));
                    after
                }
            },
            _ => return None,
        };
        let (more, after) = next_or(bytes, at, b'}')?;
        at = after;
        if !more {
            break;
        }
    }
    builder.end_node(
        id?,
        &Priority::Small(i128::from(priority.unwrap_or(0))),
        touches.flatten().as_deref(),
    );
    Some(at)
}

/// After how many nodes the reader sizes the node lists for the rest, and for at most how many.
const ESTIMATE_AFTER: usize = 32;
const ESTIMATE_AT_MOST: usize = 1 << 16;

/// The arguments object at the start of `text` (after any whitespace): its nodes, and the offset
/// after its closing brace.
fn arguments(text: &str) -> Option<(Builder<'_>, usize)> {
    let bytes = text.as_bytes();
    let at = expect(bytes, 0, b'{')?;
    let (key, at) = string(text, at)?;
    if key != "nodes" {
        return None;
    }
    let at = expect(bytes, at, b':')?;
    let at = expect(bytes, at, b'[')?;
    let mut builder = Builder::default();
    let mut at = skip(bytes, at);
    if bytes.get(at) == Some(&b']') {
        at += 1;
    } else {
        let first = at;
        loop {
            at = node(text, at, &mut builder)?;
            let (more, after) = next_or(bytes, at, b']')?;
            at = after;
            if !more {
                break;
            }
            // Once some nodes are read, room for as many more as the rest of the text would hold
            // at their average length, up to a bound (the text may go on with other members),
            // instead of a dozen doublings and their copies.
            if builder.counts().0 == ESTIMATE_AFTER {
                let (nodes, edges) = builder.counts();
                let per_node = (at - first).div_ceil(nodes);
                let more = ((bytes.len() - at) / per_node).min(ESTIMATE_AT_MOST);
                builder.reserve(
                    more,
                    (more.saturating_mul(edges) / nodes).min(4 * ESTIMATE_AT_MOST),
                );
            }
        }
    }
    Some((builder, expect(bytes, at, b'}')?))
}
