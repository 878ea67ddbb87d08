//! `shiftwork_status` search over the archive (SW-139): bounded, never a refusal.

use std::path::{Path, PathBuf};

use seams::{FileKind, Fs};

use crate::json::{self, Json};
use crate::schema::clip;

/// The most matches returned.
pub const MAX_MATCHES: usize = 50;
/// The most code points of a matched line's text.
pub const MAX_TEXT: usize = 500;

/// Searches the regular files below `archive` for lines holding every word of `query`.
pub fn search(fs: &dyn Fs, archive: &Path, query: &str) -> Json {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut matches = Vec::new();
    let mut truncated = false;
    if !words.is_empty() {
        let mut files = Vec::new();
        collect(fs, archive, String::new(), &mut files, 0);
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        'files: for (relative, path) in files {
            let Ok(bytes) = fs.read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            for (n, line) in text.split('\n').enumerate() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let lower = line.to_lowercase();
                if words.iter().all(|w| lower.contains(w.as_str())) {
                    if matches.len() == MAX_MATCHES {
                        truncated = true;
                        break 'files;
                    }
                    matches.push(Json::Object(json::object([
                        ("file", Json::str(relative.as_str())),
                        ("line", Json::int(n as i64 + 1)),
                        ("text", Json::String(clip(line, MAX_TEXT))),
                    ])));
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

/// Every regular file below `dir`, symlinks not followed, with its `/`-joined relative path.
fn collect(fs: &dyn Fs, dir: &Path, prefix: String, out: &mut Vec<(String, PathBuf)>, depth: usize) {
    if depth > 64 {
        return;
    }
    let Ok(entries) = fs.list_dir(dir) else {
        return;
    };
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        let path = dir.join(name);
        let relative = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        match fs.symlink_metadata(&path).map(|m| m.kind) {
            Ok(FileKind::File) => out.push((relative, path)),
            Ok(FileKind::Dir) => collect(fs, &path, relative, out, depth + 1),
            _ => {}
        }
    }
}
