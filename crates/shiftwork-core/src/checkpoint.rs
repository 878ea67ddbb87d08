//! Reading a checkpoint (§4.1): the file's bytes, bounded and from a regular file only, then strict
//! UTF-8, line ends, the JSON reader, the schema and unique unit ids. Read it through
//! [`crate::Checkpoint`].

use shiftwork_seams::Fs;

use crate::json::{self, Json};
use crate::paths::CheckpointPaths;
use crate::refusal::{FileError, Refusal};
use crate::schema;
use crate::view::Checkpoint;

/// A checkpoint document that passed §4.1: parsed with the checkpoint dialect, valid under the
/// embedded schema, its unit ids unique. Read it through [`Document::view`].
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

    /// The document as JSON.
    pub fn as_json(&self) -> &Json {
        &self.json
    }

    /// The document as JSON, to change it.
    pub fn into_json(self) -> Json {
        self.json
    }
}

/// The largest checkpoint file read (issue 12 item 7): a longer file is refused `checkpoint
/// unreadable: [Errno 27] File too large: '<path>'` after reading at most one byte past the bound.
pub const MAX_CHECKPOINT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads and validates the checkpoint of `paths` (§4.1 steps 1–6).
///
/// The file is read through [`Fs::read_limited`]: it is opened without blocking and must be a regular
/// file of at most [`MAX_CHECKPOINT_BYTES`], so a FIFO, `/dev/zero` or `/dev/stdin` is refused at
/// once (`checkpoint unreadable: Not a regular file: '<path>'`) and never holds a lock.
pub fn read<F: Fs + ?Sized>(fs: &F, paths: &CheckpointPaths) -> Result<Document, Refusal> {
    let bytes = fs
        .read_limited(&paths.given, MAX_CHECKPOINT_BYTES)
        .map_err(|e| Refusal::Unreadable {
            path: paths.shown.clone(),
            error: FileError::of(&e),
        })?;
    parse_bytes(&bytes)
}

/// Steps 2–6 of §4.1 on a file's bytes: strict UTF-8, line ends translated, parsed, validated, unit
/// ids unique.
///
/// ```
/// let e = shiftwork_core::checkpoint::parse_bytes(b"{\"version\": 1, \"x\": \"\xff\"}").unwrap_err();
/// assert_eq!(e.to_string(), "checkpoint unreadable: 'utf-8' codec can't decode byte 0xff in position 21: invalid start byte");
/// ```
pub fn parse_bytes(bytes: &[u8]) -> Result<Document, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|e| Refusal::NotUtf8 {
        message: utf8_error_tail(bytes, &e),
    })?;
    let text = translate_newlines(text);
    let doc = json::parse(&text).map_err(Refusal::NotJson)?;
    schema::validate_checkpoint(&doc).map_err(Refusal::Invalid)?;
    let mut seen = std::collections::HashSet::new();
    for unit in Checkpoint::new(&doc).units() {
        if !seen.insert(unit.id()) {
            return Err(Refusal::DuplicateId {
                id: unit.id().to_owned(),
            });
        }
    }
    Ok(Document { json: doc })
}

/// Translates line ends as step 3 of §4.1 does (Python's universal newlines of a file read as text):
/// `\r\n` and a lone `\r` become `\n`.
fn translate_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
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
    std::borrow::Cow::Owned(out)
}

/// Python's UTF-8 decode error for `bytes` (SW-33).
fn utf8_error_tail(bytes: &[u8], e: &std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    let byte = bytes.get(at).copied().unwrap_or(0);
    let prefix = "'utf-8' codec can't decode";
    if matches!(byte, 0x80..=0xC1 | 0xF5..=0xFF) {
        return format!("{prefix} byte 0x{byte:02x} in position {at}: invalid start byte");
    }
    match e.error_len() {
        Some(_) => format!("{prefix} byte 0x{byte:02x} in position {at}: invalid continuation byte"),
        None => {
            let last = bytes.len() - 1;
            if last == at {
                format!("{prefix} byte 0x{byte:02x} in position {at}: unexpected end of data")
            } else {
                format!("{prefix} bytes in position {at}-{last}: unexpected end of data")
            }
        }
    }
}
