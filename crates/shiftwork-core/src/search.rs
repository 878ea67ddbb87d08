//! `shiftwork_status` search over the archive (SW-139): bounded, never a refusal.
//!
//! The answer is bounded by [`MAX_MATCHES`] × [`MAX_TEXT`] (SW-147); files are read in chunks and the
//! scan stops at the first match past the bound, so neither the answer nor the memory of a search
//! grows with the archive (a single line is held whole while it is matched).

use std::io;
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use shiftwork_seams::{FileKind, Fs};

use crate::json::{self, Json};
use crate::lines::LineBuffer;
use crate::schema::clip;

/// The most matches returned.
pub const MAX_MATCHES: usize = 50;
/// The most code points of a matched line's text.
pub const MAX_TEXT: usize = 500;
/// The deepest directory level searched below the archive.
const MAX_DEPTH: usize = 64;

/// Searches the regular files below `archive` for lines holding every word of `query`.
///
/// ```
/// let fs = shiftwork_seams::MemFs::new();
/// fs.write_file("/a/archive/x.log", b"Lock timeout\nother\n");
/// let found = shiftwork_core::search::search(&fs, std::path::Path::new("/a/archive"), "lock TIMEOUT");
/// assert_eq!(
///     shiftwork_core::json::to_compact_text(&found),
///     r#"{"query": "lock TIMEOUT", "matches": [{"file": "x.log", "line": 1, "text": "Lock timeout"}], "truncated": false}"#
/// );
/// ```
pub fn search(fs: &dyn Fs, archive: &Path, query: &str) -> Json {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut matches = Vec::new();
    let mut truncated = false;
    if !words.is_empty() {
        let mut files = Vec::new();
        collect(fs, archive, Vec::new(), &mut files, 0);
        files.sort_by(|a, b| a.0.cmp(&b.0));
        for (relative, path) in files {
            let shown = String::from_utf8_lossy(&relative).into_owned();
            let mut scan = FileScan {
                words: &words,
                room: MAX_MATCHES - matches.len(),
                file: &shown,
                found: Vec::new(),
                lines: LineBuffer::default(),
                line: 0,
                truncated: false,
            };
            let read = fs.read_chunks(&path, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
                scan.feed(chunk)
            });
            if scan.truncated {
                matches.append(&mut scan.found);
                truncated = true;
                break;
            }
            // An unreadable file is skipped whole, even when it failed half way.
            if read.is_ok() {
                scan.finish();
                matches.append(&mut scan.found);
                if scan.truncated {
                    truncated = true;
                    break;
                }
            }
        }
    }
    Json::Object(json::object([
        ("query", Json::str(query)),
        ("matches", Json::Array(matches)),
        ("truncated", Json::Bool(truncated)),
    ]))
}

/// The lines of one file, matched as they arrive.
struct FileScan<'a> {
    words: &'a [String],
    /// How many more matches fit in the answer.
    room: usize,
    file: &'a str,
    found: Vec<Json>,
    lines: LineBuffer,
    line: usize,
    /// A match past the bound was seen: the scan stops.
    truncated: bool,
}

impl FileScan<'_> {
    fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut lines = std::mem::take(&mut self.lines);
        let flow = lines.feed(bytes, |line| {
            self.line(line);
            if self.truncated {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        self.lines = lines;
        match flow {
            ControlFlow::Continue(()) => Ok(()),
            // Stops the read; the caller looks at `truncated`, not at this error.
            ControlFlow::Break(()) => Err(io::Error::other("enough matches")),
        }
    }

    fn finish(&mut self) {
        let last = self.lines.take_rest();
        if !last.is_empty() {
            self.line(&last);
        }
    }

    /// One line (without its `\n`): a trailing `\r` dropped, decoded with replacement. Decoding line
    /// by line equals decoding the file, since `\n` never belongs to an invalid sequence.
    fn line(&mut self, bytes: &[u8]) {
        self.line += 1;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        let lower = text.to_lowercase();
        if !self.words.iter().all(|w| lower.contains(w.as_str())) {
            return;
        }
        if self.found.len() == self.room {
            self.truncated = true;
            return;
        }
        self.found.push(Json::Object(json::object([
            ("file", Json::str(self.file)),
            ("line", Json::int(i64::try_from(self.line).unwrap_or(i64::MAX))),
            ("text", Json::String(clip(&text, MAX_TEXT))),
        ])));
    }
}

/// Every regular file below `dir`, symlinks not followed, with its `/`-joined relative path's bytes.
fn collect(fs: &dyn Fs, dir: &Path, prefix: Vec<u8>, out: &mut Vec<(Vec<u8>, PathBuf)>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = fs.list_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = dir.join(&entry.name);
        let mut relative = prefix.clone();
        if !relative.is_empty() {
            relative.push(b'/');
        }
        relative.extend_from_slice(entry.name.as_bytes());
        match fs.symlink_metadata(&path).map(|m| m.kind) {
            Ok(FileKind::File) => out.push((relative, path)),
            Ok(FileKind::Dir) => collect(fs, &path, relative, out, depth + 1),
            _ => {}
        }
    }
}
