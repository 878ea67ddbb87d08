//! Streaming SHA-256 of a file.

use std::io;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::fs::Fs;

/// The chunk size of every streamed read in the workspace (256 KiB).
pub const CHUNK_SIZE: usize = 256 * 1024;

/// A file's length and SHA-256 digest, computed in one streamed pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileDigest {
    /// Bytes read.
    pub len: u64,
    /// SHA-256 of exactly those bytes.
    pub sha256: [u8; 32],
}

impl FileDigest {
    /// The digest as 64 lowercase hex digits.
    pub fn hex(&self) -> String {
        hex(&self.sha256)
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Streams the file at `path` through SHA-256 in chunks of [`CHUNK_SIZE`]; `also` sees every chunk
/// too (so a caller can compute more in the same pass).
///
/// ```
/// use shiftwork_seams::{MemFs, hash::sha256_file};
/// use std::path::Path;
/// let fs = MemFs::new();
/// fs.write_file("/f", b"abc");
/// let d = sha256_file(&fs, Path::new("/f"), &mut |_| ()).unwrap();
/// assert_eq!(d.len, 3);
/// assert_eq!(d.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
/// ```
pub fn sha256_file<F: Fs + ?Sized>(
    fs: &F,
    path: &Path,
    also: &mut dyn FnMut(&[u8]),
) -> io::Result<FileDigest> {
    let mut hasher = Sha256::new();
    let len = fs.read_chunks(path, CHUNK_SIZE, &mut |chunk| {
        hasher.update(chunk);
        also(chunk);
        Ok(())
    })?;
    Ok(FileDigest {
        len,
        sha256: hasher.finalize().into(),
    })
}
