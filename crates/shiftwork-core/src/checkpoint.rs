//! Reading a checkpoint: the file's bytes, bounded and from a regular file only, then strict
//! UTF-8, line ends, the JSON reader, the schema and unique unit ids. Read it through
//! [`crate::Checkpoint`].
//!
//! A checkpoint is read in place ([`Placed`]: its text and a [`Tape`] of where each value is), which
//! costs about a third of the text beside it; the plan, the status and the clock-in read it so. A
//! clock-out, which changes it, builds it ([`Document`]).
//!
//! # What a refusal shows of the file
//!
//! A checkpoint path can name any file the server can read, so a refusal about the file quotes none
//! of its content (deliberate differences from 0.36.2's tails): a schema violation
//! names the path in the document and the rule ([`crate::schema::validate_checkpoint`]); a UTF-8 error
//! never names the byte. A JSON syntax error keeps Python's position when the document begins, after
//! whitespace, with `{` — a checkpoint being written, whose author needs the line and column — or when
//! the error is at its first character, where the position tells only how much whitespace leads.
//! Otherwise the position is withheld: in a file that is not a JSON object, the offset of the first
//! invalid byte would tell the length of a token of someone else's file.

use shiftwork_seams::Fs;

use crate::json::{Json, Node, ParseError, Tape, TapeNode};
use crate::paths::CheckpointPaths;
use crate::refusal::{FileError, ShiftworkRefusal, TextPosition};
use crate::schema;
use crate::view::Checkpoint;

/// A checkpoint document that passed every check of reading: parsed with the checkpoint dialect, valid under the
/// embedded schema, its unit ids unique — built, to be read or changed. Read it through
/// [`Document::view`].
///
/// ```
/// let text = br#"{"version": 1, "job": {"id": "j", "goal": "g", "done_definition": "d", "constraints": []}, "plan": {"cursor": "U1", "units": []}, "state": {"repo": {"branch": "m", "head_sha": "a", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "n", "open_questions": [], "do_not": []}}"#;
/// let doc = shiftwork_core::checkpoint::parse_bytes(text).unwrap();
/// assert_eq!(doc.view().cursor(), "U1");
/// assert!(doc.view().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    json: Json,
}

impl Document {
    /// The typed read view.
    pub fn view(&self) -> Checkpoint<'_> {
        Checkpoint::new(&self.json)
    }

    /// The document as JSON, to change it.
    pub(crate) fn into_json(self) -> Json {
        self.json
    }

    /// The document's text as a clock-out writes it: two-space indented JSON with a final newline,
    /// non-ASCII escaped (Python's `json.dumps(doc, indent=2)`).
    ///
    /// ```
    /// let text = "{\"version\": 1, \"job\": {\"id\": \"j\", \"goal\": \"g\", \"done_definition\": \"d\", \"constraints\": []}, \"plan\": {\"cursor\": \"U1\", \"units\": []}, \"state\": {\"repo\": {\"branch\": \"m\", \"head_sha\": \"a\", \"dirty\": false}, \"artifacts\": [], \"external\": []}, \"history\": [], \"retro\": [], \"handoff\": {\"next_action\": \"n\", \"open_questions\": [], \"do_not\": []}}";
    /// let doc = shiftwork_core::checkpoint::parse_bytes(text.as_bytes()).unwrap();
    /// assert!(doc.to_text().starts_with("{\n  \"version\": 1,\n"));
    /// ```
    pub fn to_text(&self) -> String {
        crate::json::to_checkpoint_text(&self.json)
    }
}

/// A checkpoint document that passed every check of reading, read in place: its text and the [`Tape`] of its values,
/// nothing built. Read it through [`Placed::view`]; [`Placed::build`] makes the [`Document`].
///
/// ```
/// let text = br#"{"version": 1, "job": {"id": "j", "goal": "g", "done_definition": "d", "constraints": []}, "plan": {"cursor": "U1", "units": [{"id": "U1", "title": "t", "brief_path": "b", "status": "todo", "role": "planner", "depends_on": [], "verify": "v"}]}, "state": {"repo": {"branch": "m", "head_sha": "a", "dirty": false}, "artifacts": [], "external": []}, "history": [], "retro": [], "handoff": {"next_action": "n", "open_questions": [], "do_not": []}}"#;
/// let placed = shiftwork_core::checkpoint::parse_in_place(text.to_vec()).unwrap();
/// assert_eq!(placed.view().ids(), ["U1"]);
/// assert_eq!(placed.build().view().cursor(), "U1");
/// ```
#[derive(Debug)]
pub struct Placed {
    tape: Tape,
}

impl Placed {
    /// The typed read view.
    pub fn view(&self) -> Checkpoint<'_, TapeNode<'_>> {
        Checkpoint::new(self.tape.root())
    }

    /// The tape: the text and where its values are.
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// The document, built.
    pub fn build(&self) -> Document {
        Document {
            json: self.tape.root().to_json(),
        }
    }
}

/// The largest checkpoint file read: a longer file is refused `checkpoint
/// unreadable: [Errno 27] File too large: '<path>'` after reading at most one byte past the bound.
/// A clock-out never writes a checkpoint longer than this.
pub const MAX_CHECKPOINT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads, validates and builds the checkpoint of `paths` .
///
/// The file is read through [`Fs::read_limited`]: it is opened without blocking and must be a regular
/// file of at most [`MAX_CHECKPOINT_BYTES`], so a FIFO, `/dev/zero` or `/dev/stdin` is refused at
/// once (`checkpoint unreadable: Not a regular file: '<path>'`) and never holds a lock.
pub fn read<F: Fs + ?Sized>(fs: &F, paths: &CheckpointPaths) -> Result<Document, ShiftworkRefusal> {
    read_in_place(fs, paths).map(|placed| placed.build())
}

/// Reads and validates the checkpoint of `paths`  in place, as [`read`] reads it.
pub fn read_in_place<F: Fs + ?Sized>(fs: &F, paths: &CheckpointPaths) -> Result<Placed, ShiftworkRefusal> {
    let bytes =
        fs.read_limited(&paths.given, MAX_CHECKPOINT_BYTES)
            .map_err(|e| ShiftworkRefusal::Unreadable {
                path: paths.shown.clone(),
                error: FileError::of(&e),
            })?;
    parse_in_place(bytes)
}

/// The checks of reading on a file's bytes, building the document.
///
/// ```
/// let e = shiftwork_core::checkpoint::parse_bytes(b"{\"version\": 1, \"x\": \"\xff\"}").unwrap_err();
/// assert_eq!(e.to_string(), "checkpoint unreadable: 'utf-8' codec can't decode a byte in position 21: invalid start byte");
/// ```
pub fn parse_bytes(bytes: &[u8]) -> Result<Document, ShiftworkRefusal> {
    parse_in_place(bytes.to_vec()).map(|placed| placed.build())
}

/// The checks of reading on a file's bytes: strict UTF-8, line ends translated, read in place, validated,
/// unit ids unique.
pub fn parse_in_place(bytes: Vec<u8>) -> Result<Placed, ShiftworkRefusal> {
    let text = String::from_utf8(bytes).map_err(|e| ShiftworkRefusal::NotUtf8 {
        message: utf8_error_tail(e.as_bytes(), &e.utf8_error()),
    })?;
    let text = translate_newlines(text);
    let (object, first) = begins_as_object(text.as_bytes());
    let tape = Tape::parse(text).map_err(|e| not_json(&e, object || e.char_offset == first))?;
    schema::validate_checkpoint(tape.root()).map_err(ShiftworkRefusal::Invalid)?;
    let ids = Checkpoint::new(tape.root()).ids();
    if let Some(i) = crate::planner::first_repeat(&ids) {
        return Err(ShiftworkRefusal::DuplicateId {
            id: ids[i].to_owned(),
        });
    }
    drop(ids);
    Ok(Placed { tape })
}

/// Whether the text at `bytes` begins, after JSON whitespace, with `{`; and where it begins.
fn begins_as_object(bytes: &[u8]) -> (bool, usize) {
    let first = bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(bytes.len());
    (bytes.get(first) == Some(&b'{'), first)
}

/// The refusal of a text that is not JSON: Python's decoder message, its position given only when `shown` (see the
/// module's docs). (Whitespace is ASCII, so the offset of the first other character is the same in
/// bytes and in the message's code points.)
fn not_json(e: &ParseError, shown: bool) -> ShiftworkRefusal {
    ShiftworkRefusal::NotJson {
        what: e.what,
        at: shown.then_some(TextPosition {
            line: e.line,
            column: e.column,
            char_offset: e.char_offset,
        }),
    }
}

/// Translates line ends as Python reads a text file (universal newlines):
/// `\r\n` and a lone `\r` become `\n`.
fn translate_newlines(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    out
}

/// Python's UTF-8 decode error for `bytes`, without the byte's value, and without its position
/// unless the valid text before it begins as a JSON object or the byte is the first one that is not
/// whitespace.
fn utf8_error_tail(bytes: &[u8], e: &std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    let byte = bytes.get(at).copied().unwrap_or(0);
    let reason = if matches!(byte, 0x80..=0xC1 | 0xF5..=0xFF) {
        "invalid start byte"
    } else if e.error_len().is_some() {
        "invalid continuation byte"
    } else {
        "unexpected end of data"
    };
    let (object, first) = begins_as_object(&bytes[..at]);
    let prefix = "'utf-8' codec can't decode";
    if !(object || first == at) {
        return format!(
            "{prefix} the file: {reason} (no position given: the file does not begin as a JSON object)"
        );
    }
    let last = bytes.len() - 1;
    if reason == "unexpected end of data" && last != at {
        format!("{prefix} bytes in position {at}-{last}: {reason}")
    } else {
        format!("{prefix} a byte in position {at}: {reason}")
    }
}
