//! The write-ahead log as SQLite writes it, read without SQLite: its header and frames
//! checked as SQLite's recovery checks them, the committed frames applied to the database in memory,
//! and the database that gives judged, or read, without a byte written anywhere. The format is
//! SQLite's documented WAL file format (a 32-byte header; frames of a 24-byte header and one page;
//! cumulative checksums over 32-bit words in the byte order the magic number names).

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};
use shiftwork_seams::Fs;

use super::sqlite_file::{
    Files, MAX_REPLAY_BYTES, be32, check_schema, judge_header, open_immutable, parse_header, shown,
    unavailable,
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
    super::sqlite_file::harden(&conn, true)?;
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

// ---------------------------------------------------------------------------------------------
// The order of a log and the database file.

/// Where the database file keeps the store's commit counter and the count it holds: the counter
/// table's root page and `n`, read from the file alone (without its log, writing nothing). `None`
/// for a database without a counter (schema versions 1 and 2), whose logs cannot be ordered.
pub(crate) fn file_order(db: &Path) -> Result<Option<(u32, i64)>, StoreError> {
    let conn = open_immutable(db)?;
    let root: Option<i64> = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'contracts_commits'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|_| unavailable(String::from("the database catalogue cannot be read")))?;
    let Some(root) = root.and_then(|r| u32::try_from(r).ok()) else {
        return Ok(None);
    };
    let n: Option<i64> = conn
        .query_row("SELECT n FROM contracts_commits WHERE id = 1", [], |r| r.get(0))
        .optional()
        .map_err(|_| unavailable(String::from("the database's commit counter cannot be read")))?;
    Ok(n.map(|n| (root, n)))
}

/// Refuses a log left behind that is not the continuation of the database file beside it — a log of
/// the store's own past. Every write transaction of the store adds one to the commit counter
/// (`SqliteStore`'s `COMMITS`), so each commit in the log carries the count it reached; the file
/// holds the count of the last commit folded into it (`order`, from [`file_order`]). SQLite's own
/// checks (salts, checksums) pass such a log, since it is this database's.
///
/// - The log's last commit is older than the file (its count is smaller, or its page of the counter
///   is not one): replaying it would take the store back in time, and every contract written since
///   would vanish (a backup's log restored beside a newer database, an old copy left behind).
/// - The log's first commit follows commits the file does not hold (its count is more than one past
///   the file's): the file is older than the log (a backup of the database restored beside a newer
///   log), and the replay would mix two states.
///
/// A log none of whose commits wrote the counter's page (nothing of the store changed), or a
/// database without a counter, has no order to judge.
pub(crate) fn judge_order(
    files: &Files,
    order: Option<(u32, i64)>,
    wal: &[u8],
    committed: &Committed,
    page_size: u32,
) -> Result<(), StoreError> {
    let Some((root, held)) = order else {
        return Ok(());
    };
    let page = page_size as usize;
    let counts: Vec<Option<i64>> = committed
        .frames
        .iter()
        .filter(|(pgno, _)| *pgno == root)
        .map(|&(_, at)| counter_in_page(&wal[at..at + page]))
        .collect();
    let Some(&last) = counts.last() else {
        return Ok(());
    };
    let wal_name = shown(&files.wal);
    let older = |last: &str| {
        unavailable(format!(
            "the write-ahead log {wal_name} beside the database is older than the database: its last commit is {last}, the database file already holds commit {held}, and SQLite would replay it, so every contract written since would vanish; nothing was changed. It is a log of this store's past (a backup's log restored beside a newer database, or an old copy left behind): if no process uses the store, move {wal_name} aside and open the store again"
        ))
    };
    match last {
        None => return Err(older("from before the store counted its commits")),
        Some(last) if last < held => return Err(older(&format!("commit {last}"))),
        Some(_) => {}
    }
    if let Some(first) = counts.iter().flatten().next()
        && *first > held.saturating_add(1)
    {
        return Err(unavailable(format!(
            "the write-ahead log {wal_name} beside the database continues from commit {}, but the database file holds only commit {held}: the file is older than its log (a backup of the database restored beside a newer log), and SQLite would replay the log onto it, mixing the two; nothing was changed. Put back the database file that goes with this log, or, to keep the restored database as it is, move {wal_name} aside",
            first - 1
        )));
    }
    Ok(())
}

/// The commit counter held by a page of the counter table (`SqliteStore`'s `COMMITS`): a leaf page
/// of a table with one row, rowid 1, whose record is `(NULL, n)` (the `id` column is the rowid).
/// `None` for any other page.
pub(crate) fn counter_in_page(page: &[u8]) -> Option<i64> {
    let be16 = |at: usize| -> Option<usize> {
        let b = page.get(at..at + 2)?;
        Some(usize::from(u16::from_be_bytes([b[0], b[1]])))
    };
    if page.first() != Some(&0x0d) || be16(3)? != 1 {
        return None;
    }
    let (payload_len, at) = varint(page, be16(8)?)?;
    let (rowid, at) = varint(page, at)?;
    if rowid != 1 {
        return None;
    }
    let payload = page.get(at..at.checked_add(usize::try_from(payload_len).ok()?)?)?;
    let (header_len, mut at) = varint(payload, 0)?;
    let header_len = usize::try_from(header_len).ok()?;
    let mut types = Vec::with_capacity(2);
    while at < header_len && types.len() < 3 {
        let (t, next) = varint(payload, at)?;
        types.push(t);
        at = next;
    }
    if at != header_len || types.len() != 2 || types[0] != 0 {
        return None;
    }
    let body = payload.get(header_len..)?;
    let width = match types[1] {
        8 => return Some(0),
        9 => return Some(1),
        t @ 1..=4 => t as usize,
        5 => 6,
        6 => 8,
        _ => return None,
    };
    let bytes = body.get(..width)?;
    // A big-endian two's-complement integer of `width` bytes.
    let negative = bytes[0] & 0x80 != 0;
    let start = if negative { -1i64 } else { 0 };
    Some(bytes.iter().fold(start, |v, &b| (v << 8) | i64::from(b)))
}

/// An SQLite variable-length integer at `at`: its value and where the next byte is.
fn varint(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let byte = *bytes.get(at + i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), at + 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, at + i + 1));
        }
    }
    None
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
        // The files may have changed since the store was opened: the log must still follow the file.
        judge_order(files, file_order(&files.db)?, &wal, &committed, header.page_size)?;
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
    super::sqlite_file::harden(&conn, true)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counter's page is read as SQLite writes it, for every width of integer SQLite stores, and
    /// no other page of a store reads as one.
    #[test]
    fn the_commit_counter_is_read_from_its_page() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(super::super::sqlite::COMMITS).unwrap();
        conn.execute_batch(&super::super::sqlite::table("contracts"))
            .unwrap();
        conn.execute("INSERT INTO contracts_commits VALUES (1, 0)", [])
            .unwrap();
        let root: u32 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'contracts_commits'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let page = |n: u32| {
            let bytes = shiftwork_seams::OsFs.read(&db).unwrap();
            bytes[(n as usize - 1) * 4096..n as usize * 4096].to_vec()
        };
        for n in [
            0,
            1,
            2,
            127,
            128,
            -1,
            40_000,
            1 << 23,
            1 << 31,
            1 << 40,
            i64::MAX,
            i64::MIN,
        ] {
            conn.execute("UPDATE contracts_commits SET n = ?1", [n]).unwrap();
            assert_eq!(counter_in_page(&page(root)), Some(n), "{n}");
        }
        let pages = shiftwork_seams::OsFs.metadata(&db).unwrap().len / 4096;
        for other in (1..=pages as u32).filter(|p| *p != root) {
            assert_eq!(counter_in_page(&page(other)), None, "page {other}");
        }
        assert_eq!(counter_in_page(&[0x0d]), None);
        assert_eq!(counter_in_page(&[]), None);
    }

    #[test]
    fn checksums_follow_the_log_byte_order() {
        let data = [1u8, 0, 0, 0, 2, 0, 0, 0];
        assert_eq!(checksum(&data, false, (0, 0)), (1, 3));
        assert_eq!(checksum(&data, true, (0, 0)), (1 << 24, (2 << 24) + (1 << 24)));
    }
}
