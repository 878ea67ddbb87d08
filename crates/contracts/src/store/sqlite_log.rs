//! The write-ahead log as SQLite writes it, read without SQLite: its header and frames
//! checked as SQLite's recovery checks them, the committed frames applied to the database in memory,
//! and the database that gives judged, or read, without a byte written anywhere. The format is
//! SQLite's documented WAL file format (a 32-byte header; frames of a 24-byte header and one page;
//! cumulative checksums over 32-bit words in the byte order the magic number names).

use std::path::Path;

use rusqlite::Connection;
use shiftwork_seams::Fs;

use super::sqlite_file::{
    Files, MAX_REPLAY_BYTES, be32, check_schema, judge_header, parse_header, shown, unavailable,
};
use crate::error::StoreError;

// ---------------------------------------------------------------------------------------------
// The write-ahead log.

const WAL_HEADER: usize = 32;
const FRAME_HEADER: usize = 24;

/// The committed frames of a log: where each page image starts in the log, in log order, and the
/// database's size in pages after the last commit.
#[derive(Debug, Default)]
pub(crate) struct Committed {
    pub(crate) frames: Vec<(u32, usize)>,
    pub(crate) db_pages: u32,
}

/// SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from `s`.
fn checksum(data: &[u8], big_endian: bool, mut s: (u32, u32)) -> (u32, u32) {
    for pair in data.chunks_exact(8) {
        let word = |b: &[u8]| {
            let a = [b[0], b[1], b[2], b[3]];
            if big_endian {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        s.0 = s.0.wrapping_add(word(&pair[..4])).wrapping_add(s.1);
        s.1 = s.1.wrapping_add(word(&pair[4..])).wrapping_add(s.0);
    }
    s
}

/// Why a log is not this database's.
pub(crate) fn not_ours(files: &Files, why: &str) -> StoreError {
    unavailable(format!(
        "the write-ahead log {} beside the database is not this database's ({why}), and SQLite would replay it into the store; nothing was changed. If no process uses the store, move {} aside and open the store again",
        shown(&files.wal),
        shown(&files.wal)
    ))
}

/// Reads the log's header and frames as SQLite's recovery does: the header must be valid for a
/// database of `page_size`; frames count while their salts and cumulative checksums hold; the
/// committed ones are those up to the last commit frame.
pub(crate) fn committed_frames(wal: &[u8], page_size: u32, files: &Files) -> Result<Committed, StoreError> {
    if wal.len() < WAL_HEADER {
        return Err(not_ours(files, "it is shorter than a log header"));
    }
    let magic = be32(wal, 0);
    if magic & !1 != 0x377f_0682 {
        return Err(not_ours(files, "it does not start like a write-ahead log"));
    }
    let big_endian = magic & 1 == 1;
    if be32(wal, 4) != 3_007_000 {
        return Err(not_ours(files, "its format version is unknown"));
    }
    if be32(wal, 8) != page_size {
        return Err(not_ours(files, "its page size is not the database's"));
    }
    let s = checksum(&wal[..24], big_endian, (0, 0));
    if s != (be32(wal, 24), be32(wal, 28)) {
        return Err(not_ours(files, "its header checksum is wrong"));
    }
    let salts = (be32(wal, 16), be32(wal, 20));
    let page = page_size as usize;
    let mut out = Committed::default();
    let mut pending = Vec::new();
    let mut s = s;
    let mut at = WAL_HEADER;
    while at + FRAME_HEADER + page <= wal.len() {
        let header = &wal[at..at + FRAME_HEADER];
        let pgno = be32(header, 0);
        let commit = be32(header, 4);
        if pgno == 0 || (be32(header, 8), be32(header, 12)) != salts {
            break;
        }
        let body = &wal[at + FRAME_HEADER..at + FRAME_HEADER + page];
        let next = checksum(body, big_endian, checksum(&header[..8], big_endian, s));
        if next != (be32(header, 16), be32(header, 20)) {
            break;
        }
        s = next;
        pending.push((pgno, at + FRAME_HEADER));
        if commit != 0 {
            out.frames.append(&mut pending);
            out.db_pages = commit;
        }
        at += FRAME_HEADER + page;
    }
    Ok(out)
}

/// The database the log would produce: `db` with the committed frames applied, cut to the last
/// commit's size.
pub(crate) fn replay(db: &[u8], wal: &[u8], committed: &Committed, page_size: u32) -> Vec<u8> {
    let page = page_size as usize;
    let mut image = db.to_vec();
    image.resize(committed.db_pages as usize * page, 0);
    for &(pgno, at) in &committed.frames {
        if pgno > committed.db_pages {
            continue;
        }
        let start = (pgno as usize - 1) * page;
        image[start..start + page].copy_from_slice(&wal[at..at + page]);
    }
    image
}

/// Judges a database image (a replayed log, or a file read whole): the contracts header of a known
/// version, only the contracts schema, and SQLite's integrity check.
pub(crate) fn judge_image(mut image: Vec<u8>, files: &Files) -> Result<(), StoreError> {
    let header = parse_header(&image)
        .ok_or_else(|| not_ours(files, "the database it produces is not an SQLite database"))?;
    judge_header(&header, &files.db).map_err(|e| match e {
        StoreError::Unavailable { reason, .. } => not_ours(files, &reason),
        other => other,
    })?;
    // In memory there is no log: the copy is read as a rollback-mode database.
    image[18] = 1;
    image[19] = 1;
    let mut conn = Connection::open_in_memory().map_err(|_| {
        unavailable(String::from(
            "the database cannot be judged: SQLite cannot open memory",
        ))
    })?;
    let len = image.len();
    conn.deserialize_read_exact(rusqlite::MAIN_DB, &image[..], len, true)
        .map_err(|_| not_ours(files, "the database it produces cannot be read"))?;
    drop(image);
    conn.execute_batch("PRAGMA trusted_schema = OFF")
        .map_err(|_| unavailable(String::from("the database cannot be judged")))?;
    check_schema(&conn, header.user_version, &files.db)?;
    let lines: Vec<String> = conn
        .prepare("PRAGMA integrity_check(1)")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|_| not_ours(files, "the database it produces cannot be checked"))?;
    if lines != ["ok"] {
        return Err(not_ours(
            files,
            "the database it produces fails SQLite's integrity check",
        ));
    }
    Ok(())
}

/// A reading connection to the database a log left behind would produce, replayed in memory (the
/// files are not touched; see [`super::sqlite_file::judge`]).
pub(crate) fn open_replayed(fs: &dyn Fs, files: &Files) -> Result<Connection, StoreError> {
    let read = |path: &Path| {
        fs.read_limited(path, MAX_REPLAY_BYTES).map_err(|e| {
            unavailable(format!(
                "{} cannot be read without writing: {}",
                shown(path),
                shiftwork_seams::os_reason(&e)
            ))
        })
    };
    let db = read(&files.db)?;
    let header =
        parse_header(&db).ok_or_else(|| not_ours(files, "the database is not an SQLite database"))?;
    let wal = read(&files.wal)?;
    let committed = committed_frames(&wal, header.page_size, files)?;
    let mut image = if committed.frames.is_empty() {
        db
    } else {
        replay(&db, &wal, &committed, header.page_size)
    };
    image[18] = 1;
    image[19] = 1;
    let mut conn = Connection::open_in_memory().map_err(|_| {
        unavailable(String::from(
            "the database cannot be read: SQLite cannot open memory",
        ))
    })?;
    let len = image.len();
    conn.deserialize_read_exact(rusqlite::MAIN_DB, &image[..], len, true)
        .map_err(|_| not_ours(files, "the database it produces cannot be read"))?;
    conn.execute_batch("PRAGMA trusted_schema = OFF")
        .map_err(|_| unavailable(String::from("the connection cannot be configured")))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_follow_the_log_byte_order() {
        let data = [1u8, 0, 0, 0, 2, 0, 0, 0];
        assert_eq!(checksum(&data, false, (0, 0)), (1, 3));
        assert_eq!(checksum(&data, true, (0, 0)), (1 << 24, (2 << 24) + (1 << 24)));
    }
}
