//! `shiftwork-json` — JSON as Python's `json` module reads and writes it.
//!
//! Programs that share files with a Python program must read what `json.loads` reads and write the
//! bytes `json.dumps` writes. `serde_json::Value` cannot: it loses integers wider than 64 bits, the
//! difference between `5` and `5.0`, `NaN` and `Infinity`, and (without a feature) key order. This
//! crate keeps all of them:
//!
//! * [`Json`] — a value whose objects keep their keys in the order read (a duplicate key keeps its
//!   first position and its last value, as a Python `dict` does) and whose numbers keep their token's
//!   kind: [`Number::Int`] and [`Number::BigInt`] for integer tokens of any length, [`Number::Float`]
//!   for a token with a fraction or an exponent, and for `NaN`, `Infinity`, `-Infinity`;
//! * [`parse`] — the reader, with Python's decoder messages and positions ([`ParseError`]:
//!   `Expecting ',' delimiter: line 1 column 9 (char 8)`), and [`pick_members`], which builds only some
//!   top-level members of an object;
//! * [`Tape`] — a document read in place: its text kept and one or two 32-bit words per value beside
//!   it (about two thirds of the text for a checkpoint, at most three times it), accepting and refusing
//!   exactly what [`parse`] does; [`Node`] reads a [`TapeNode`] and a `&Json` alike, so a reader of
//!   large documents is written once and builds nothing;
//! * the byte forms: [`to_compact_text`] is `json.dumps(v)`, [`to_ledger_text`] is
//!   `json.dumps(v, sort_keys=True)`, [`to_checkpoint_text`] is `json.dumps(v, indent=2)` and a final
//!   newline (all with `ensure_ascii`), and [`to_answer_text`] the two-space, non-ASCII form in which an
//!   MCP server written in Python renders an answer's text block; [`to_checkpoint_text_within`] stops
//!   at a bound, for a writer that must not write what its reader would refuse; floats as Python's `repr` writes them
//!   ([`format_float`], [`python_float_repr`]);
//! * [`Formatter`], the one writer behind those forms, fed through the [`Emit`] trait: a value is
//!   walked into it ([`Emit::value`]), or a producer emits its tokens straight from its own fields and
//!   no value is built ([`Builder`] builds one from the same tokens); any [`Style`] can be written
//!   escaped, as the contents of a JSON string ([`Style::escaped`]); [`plain_run`] finds where a
//!   string's plain bytes end, for the scanners that read strings;
//! * `Serialize` and `Deserialize` for [`Json`] and [`Number`]: key order and number kinds kept through
//!   any serde format, up to what the format holds (see [`Json`]'s `Serialize`);
//! * Python rendering of values, as in an error message: [`python_repr`] (`repr`), [`python_str`]
//!   (`str`) and [`python_string_literal`].
//!
//! ```
//! use shiftwork_json::{Json, Number};
//!
//! let v = shiftwork_json::parse(r#"{"id": 18446744073709551616, "cost": 5.0, "ratio": NaN, "id": 7}"#).unwrap();
//! assert_eq!(v.get("id"), Some(&Json::Number(Number::Int(7))));
//! assert_eq!(shiftwork_json::to_compact_text(&v), r#"{"id": 7, "cost": 5.0, "ratio": NaN}"#);
//! assert_eq!(
//!     shiftwork_json::parse("[1, 2").unwrap_err().to_string(),
//!     "Expecting ',' delimiter: line 1 column 6 (char 5)"
//! );
//! assert_eq!(shiftwork_json::python_repr(&v), "{'id': 7, 'cost': 5.0, 'ratio': nan}");
//! ```
//!
//! # What this crate never does
//!
//! It reads no file and keeps no state; no input makes it panic, recurse without bound or allocate
//! more than a small multiple of its input. Where Python would fail or produce what a Rust string
//! cannot hold, it refuses with a [`ParseError`] instead: a `\u` escape that leaves a lone surrogate
//! (`Unpaired surrogate escape`) and nesting deeper than [`MAX_DEPTH`] (Python raises `RecursionError`).
//! It accepts integers of any length, where Python 3.11 refuses more than 4,300 digits.
//!
//! The behaviour was specified against the shift-work files (checkpoints and ledgers) of bantamkit
//! 0.36.2, which `shiftwork-core` shares byte for byte (its crate docs say what bantamkit is and what
//! that compatibility means); `shiftwork-core` reads and writes those files with this crate.

mod node;
mod python;
mod read;
mod serde_impl;
mod tape;
mod value;
mod write;

pub use node::{Kind, Node};
pub use python::{python_repr, python_str, python_string_literal};
pub use read::{MAX_DEPTH, ParseError, parse, pick_members, plain_run};
pub use tape::{Items, Members, Tape, TapeNode};
pub use value::{Hasher, Json, Number, Object, object};
pub use write::{
    Builder, Emit, Formatter, Literal, Style, format_answer_float, format_float, format_number,
    python_float_repr, to_answer_text, to_checkpoint_text, to_checkpoint_text_within, to_compact_text,
    to_ledger_text, to_structured_text,
};

/// The crate's README, run as a doc test so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
