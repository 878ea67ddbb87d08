//! `shiftwork_status` search over the archive: bounded, never a refusal.
//!
//! The answer is bounded by [`MAX_MATCHES`] × [`MAX_TEXT`]; files are read in chunks and the
//! scan stops at the first match past the bound, so neither the answer nor the memory of a search
//! grows with the archive.
//!
//! What one search reads is bounded too: the archive must be a real directory inside
//! the repository — every component from the repo root down to it a directory, none a symbolic link —
//! or the search finds nothing; below it links are never followed and only regular files are read
//! (a file swapped for a FIFO is refused by the seam without blocking); at most [`MAX_ENTRIES`]
//! directory entries are listed, at most [`MAX_BYTES`] bytes are read in all, and at most [`MAX_LINE`]
//! bytes of one line are kept. A search that reaches a bound stops there and answers `truncated: true`.

use std::io;
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use shiftwork_seams::{FileKind, Fs};

use crate::line_split::LineBuffer;

/// What a search of the archive found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The search as given (the answer echoes at most 2,000 code points of it).
    pub query: String,
    /// The matching lines, in file then line order, at most [`MAX_MATCHES`].
    pub matches: Vec<SearchMatch>,
    /// Whether the search stopped early: a match past [`MAX_MATCHES`] exists, or a bound was reached.
    pub truncated: bool,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchMatch {
    /// The file's path below the archive, `/`-joined.
    pub file: String,
    /// The line's number, from 1.
    pub line: usize,
    /// The line, clipped to [`MAX_TEXT`] code points.
    pub text: String,
}

/// The most matches returned.
pub const MAX_MATCHES: usize = 50;
/// The most code points of a matched line's text.
pub const MAX_TEXT: usize = 500;
/// The deepest directory level searched below the archive.
const MAX_DEPTH: usize = 64;
/// The most directory entries one search lists.
pub const MAX_ENTRIES: usize = 100_000;
/// The most file bytes one search reads.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes of one line matched (the rest of a longer line is skipped).
pub const MAX_LINE: usize = 64 * 1024;

/// Searches the regular files below `archive`, a real directory inside `root` (the repo root), for lines
/// holding every word of `query`.
///
/// ```
/// let fs = shiftwork_seams::MemFs::new();
/// fs.write_file("/a/archive/x.log", b"Lock timeout\nother\n");
/// let root = std::path::Path::new("/a");
/// let found = shiftwork_core::search::search(&fs, root, &root.join("archive"), "lock TIMEOUT");
/// assert_eq!((found.matches[0].file.as_str(), found.matches[0].line), ("x.log", 1));
/// assert_eq!((found.matches[0].text.as_str(), found.truncated), ("Lock timeout", false));
/// ```
pub fn search(fs: &dyn Fs, root: &Path, archive: &Path, query: &str) -> SearchResult {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut matches = Vec::new();
    let mut truncated = false;
    if !words.is_empty() && shiftwork_seams::path::is_real_dir_inside(fs, root, archive) {
        let mut files = Vec::new();
        let mut listing = Listing {
            entries: 0,
            cut: false,
        };
        collect(fs, archive, Vec::new(), &mut files, 0, &mut listing);
        truncated |= listing.cut;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut budget = MAX_BYTES;
        for (relative, path) in files {
            let shown = String::from_utf8_lossy(&relative).into_owned();
            let mut scan = FileScan {
                words: &words,
                room: MAX_MATCHES - matches.len(),
                file: &shown,
                found: Vec::new(),
                lines: LineBuffer::with_cap(MAX_LINE),
                line: 0,
                truncated: false,
                budget,
            };
            let read = fs.read_chunks(&path, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
                scan.feed(chunk)
            });
            budget = scan.budget;
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
    SearchResult {
        query: query.to_owned(),
        matches,
        truncated,
    }
}

/// The lines of one file, matched as they arrive.
struct FileScan<'a> {
    words: &'a [String],
    /// How many more matches fit in the answer.
    room: usize,
    file: &'a str,
    found: Vec<SearchMatch>,
    lines: LineBuffer,
    line: usize,
    /// A match past the bound was seen, or the byte budget ran out: the scan stops.
    truncated: bool,
    /// The bytes this search may still read.
    budget: u64,
}

impl FileScan<'_> {
    fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Past the bound, the chunk's whole lines before it are matched, then the scan stops.
        let room = usize::try_from(self.budget).unwrap_or(usize::MAX);
        let cut = room < bytes.len();
        let bytes = &bytes[..bytes.len().min(room)];
        self.budget -= bytes.len() as u64;
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
        if cut {
            self.truncated = true;
            return Err(io::Error::other("search bound reached"));
        }
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
        self.found.push(SearchMatch {
            file: self.file.to_owned(),
            line: self.line,
            text: shiftwork_seams::echo::clip(&text, MAX_TEXT),
        });
    }
}

/// How much of the archive a search has listed.
struct Listing {
    entries: usize,
    /// [`MAX_ENTRIES`] was reached: the listing stopped.
    cut: bool,
}

/// Every regular file below `dir`, symlinks not followed, with its `/`-joined relative path's bytes.
fn collect(
    fs: &dyn Fs,
    dir: &Path,
    prefix: Vec<u8>,
    out: &mut Vec<(Vec<u8>, PathBuf)>,
    depth: usize,
    listing: &mut Listing,
) {
    if depth > MAX_DEPTH || listing.cut {
        return;
    }
    let Ok(entries) = fs.list_dir(dir) else {
        return;
    };
    for entry in entries {
        if listing.entries == MAX_ENTRIES {
            listing.cut = true;
            return;
        }
        listing.entries += 1;
        let path = dir.join(&entry.name);
        let mut relative = prefix.clone();
        if !relative.is_empty() {
            relative.push(b'/');
        }
        relative.extend_from_slice(entry.name.as_bytes());
        match fs.symlink_metadata(&path).map(|m| m.kind) {
            Ok(FileKind::File) => out.push((relative, path)),
            Ok(FileKind::Dir) => collect(fs, &path, relative, out, depth + 1, listing),
            _ => {}
        }
    }
}
