//! The ledger's index, `<ledger>.index`: what a clock-out needs of the ledger, kept beside it so
//! that a clock-out reads a file the size of its units instead of the whole ledger.
//!
//! A clock-out's gates need two things of the ledger: `briefed` of the unit clocked out (gate 3 and
//! the `briefed` of its line), and the ledger's last byte (a line is never appended to a line without
//! its line feed). `briefed` is the end state of the flags that the lines naming a unit leave, in
//! order ([`Flags`]: briefed since its last accounting line, and what that flag was just before that
//! line, which an uncommitted marker puts back). The budget is not among them: it is the clock-in's
//! and the plan's, which still read the ledger whole when the checkpoint declares one. So the index
//! holds, as of one exact state of the ledger, the flags of every unit whose flags are not both false,
//! and the last byte.
//!
//! **A cache, never a source of truth.** The index names the state of the ledger it describes: its
//! device, inode, length, modification time and status-change time, to the nanosecond. It is used only
//! when the ledger is that file now. Every write to a file moves its status-change time, which no
//! program can set back, so a ledger appended by another program (bantamkit knows no index), edited
//! by hand, truncated by a crash recovery, restored from a backup or replaced by another file no
//! longer matches, and its index is rebuilt by one pass over the ledger — never trusted, never
//! patched. An index that is not a regular file (a link, a FIFO), is owned by another user than the
//! ledger's owner, may be written by others, is longer than [`MAX_INDEX_BYTES`], does not parse, fails
//! its checksum or has another version is ignored the same way. A writer records a state only when it
//! knows it exactly: the ledger it read (through the index or whole) is, by its metadata just before
//! the append, the one it appended to, and the append alone moved its length. The window left is a
//! rewrite of the ledger that keeps its length and lands within the same tick of the filesystem's
//! clock as a writer's own append (timestamps move at least every few milliseconds): no stamp can
//! tell such a rewrite from the state the writer recorded.
//!
//! **Writes.** The index is written after the ledger line and the checkpoint are durable, only by a
//! holder of the checkpoint lock: through `<index>.tmp` (created exclusively, so never through a link
//! left in its place), renamed over the index, without fsync — a crash loses at most a state that the
//! next call rebuilds. Failing to write it fails nothing. A temp file left by a crash is replaced by the
//! next write, and removed by the crash recovery of the clock-out that left it.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use foldhash::fast::RandomState;
use shiftwork_seams::{FileKind, Fs, Metadata};

use crate::json::{self, Json};
use crate::ledger::{Flags, LedgerPass, LedgerSummary};
use crate::ledger_line::Event;

/// The index of ledger `L` is `<L>.index`.
pub(crate) const INDEX_SUFFIX: &str = ".index";
/// The longest index read (and written): a longer one is ignored and the ledger read whole.
pub(crate) const MAX_INDEX_BYTES: u64 = 8 * 1024 * 1024;
/// The version of the index's format; an index of another version is rebuilt.
const VERSION: i64 = 1;

/// The flags of each unit whose flags are not both false.
pub(crate) type UnitFlags = HashMap<Box<str>, Flags, RandomState>;

/// `<ledger>.index`.
pub(crate) fn index_path(ledger: &Path) -> PathBuf {
    shiftwork_seams::lock_file::with_suffix(ledger, INDEX_SUFFIX)
}

/// `<ledger>.index.tmp`, the index's temp file.
pub(crate) fn temp_path(ledger: &Path) -> PathBuf {
    shiftwork_seams::lock_file::with_suffix(ledger, ".index.tmp")
}

/// A state of the ledger: absent, or a file named by its identity, length and times.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Basis {
    Absent,
    File {
        dev: u64,
        ino: u64,
        len: u64,
        /// Modification and status-change times, in nanoseconds since the epoch.
        modified: i128,
        changed: i128,
    },
}

impl Basis {
    fn of(meta: &Metadata) -> Basis {
        Basis::File {
            dev: meta.dev,
            ino: meta.ino,
            len: meta.len,
            modified: nanos(meta.modified),
            changed: nanos(meta.changed),
        }
    }
}

/// Nanoseconds since the epoch, negative before it.
fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// What the ledger says of its units, for the clock-out's and the clock-in's gates.
#[derive(Debug, Default)]
pub(crate) struct Known {
    flags: UnitFlags,
    /// The ledger's last byte, `None` when it is empty or absent.
    pub(crate) last_byte: Option<u8>,
    /// The state of the ledger the flags are exactly the flags of; `None` when that is not known
    /// (the ledger could not be read whole, grew while it was read, or names too many units), and
    /// then no index is written after the append.
    basis: Option<Basis>,
}

impl Known {
    /// briefed(`unit`).
    pub(crate) fn briefed(&self, unit: &str) -> bool {
        self.flags.get(unit).is_some_and(|f| f.briefed)
    }

    /// A summary with `briefed` of the units `ids` (plan order) and the last byte; no budget figures.
    pub(crate) fn summary(&self, ids: &[&str]) -> LedgerSummary {
        LedgerSummary {
            briefed: ids.iter().map(|id| self.briefed(id)).collect(),
            last_byte: self.last_byte,
            ..LedgerSummary::default()
        }
    }
}

/// What the clock-out and the clock-in need of the ledger at `ledger`: from its index when the index
/// describes the ledger as it is, else from one pass over the ledger (`ids`: the plan's units, read
/// through the pass's fast path). A missing or unreadable ledger reads as empty.
pub(crate) fn read<F: Fs + ?Sized>(fs: &F, ledger: &Path, ids: &[&str]) -> Known {
    let meta = match fs.metadata(ledger) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Known {
                basis: Some(Basis::Absent),
                ..Known::default()
            };
        }
        Err(_) => return scan(fs, ledger, ids, false).1,
    };
    if meta.kind == FileKind::File
        && let Some(known) = from_index(fs, ledger, &meta)
    {
        return known;
    }
    scan_from(fs, ledger, ids, false, Ok(meta)).1
}

/// One pass over the ledger at `ledger` for the units `ids` (`keep_tokens`: keep the counted tokens
/// for the budget's median), keeping the flags of every unit for the index. A missing or unreadable
/// ledger reads as empty.
pub(crate) fn scan<F: Fs + ?Sized>(
    fs: &F,
    ledger: &Path,
    ids: &[&str],
    keep_tokens: bool,
) -> (LedgerSummary, Known) {
    scan_from(fs, ledger, ids, keep_tokens, fs.metadata(ledger))
}

fn scan_from<F: Fs + ?Sized>(
    fs: &F,
    ledger: &Path,
    ids: &[&str],
    keep_tokens: bool,
    before: io::Result<Metadata>,
) -> (LedgerSummary, Known) {
    let mut pass = LedgerPass::new(ids, keep_tokens).keeping_flags();
    let read = fs.read_chunks(ledger, shiftwork_seams::hash::CHUNK_SIZE, &mut |chunk| {
        pass.feed(chunk);
        Ok(())
    });
    let (summary, flags) = match read {
        Ok(_) => pass.finish_with_flags(),
        Err(_) => (LedgerPass::new(ids, keep_tokens).finish(), None),
    };
    // The flags describe the ledger exactly only when it was read whole, as it was before the pass.
    let basis = match (&before, &read) {
        (Ok(meta), Ok(len)) if *len == meta.len && flags.is_some() => Some(Basis::of(meta)),
        (Err(b), Err(r)) if b.kind() == io::ErrorKind::NotFound && r.kind() == io::ErrorKind::NotFound => {
            Some(Basis::Absent)
        }
        _ => None,
    };
    let known = Known {
        flags: flags.unwrap_or_default(),
        last_byte: summary.last_byte,
        basis,
    };
    (summary, known)
}

/// The index of the ledger whose metadata is `ledger_meta`, when it is one to trust and describes
/// the ledger as it is.
fn from_index<F: Fs + ?Sized>(fs: &F, ledger: &Path, ledger_meta: &Metadata) -> Option<Known> {
    let path = index_path(ledger);
    let meta = fs.symlink_metadata(&path).ok()?;
    // Only a regular file that no one but the ledger's owner may write.
    if meta.kind != FileKind::File
        || meta.uid != ledger_meta.uid
        || meta.mode & 0o022 != 0
        || meta.len > MAX_INDEX_BYTES
    {
        return None;
    }
    let bytes = fs.read_limited(&path, MAX_INDEX_BYTES).ok()?;
    let (basis, flags, last_byte) = parse(&bytes)?;
    (basis == Basis::of(ledger_meta)).then_some(Known {
        flags,
        last_byte,
        basis: Some(basis),
    })
}

/// The ledger's metadata around one append: just before it and just after it, and the bytes it added.
#[derive(Debug)]
pub(crate) struct Appended {
    pub(crate) before: Metadata,
    pub(crate) after: Metadata,
    pub(crate) len: u64,
}

/// After the append of one line naming `unit` with `event` to the ledger at `ledger`, which was read
/// as `known`: writes the index of the ledger as it now is, when that is known exactly (best-effort:
/// nothing fails when it cannot be written). Only a holder of the checkpoint lock calls it.
pub(crate) fn record<F: Fs + ?Sized>(
    fs: &F,
    ledger: &Path,
    mut known: Known,
    appended: &Appended,
    unit: &str,
    event: Event,
) {
    let Some(basis) = known.basis.take() else {
        return;
    };
    let read_is_appended_to = match basis {
        Basis::Absent => appended.before.len == 0,
        file => file == Basis::of(&appended.before),
    };
    let only_this_append = appended.after.same_file(&appended.before)
        && appended.before.len.checked_add(appended.len) == Some(appended.after.len);
    if !read_is_appended_to || !only_this_append {
        return;
    }
    let flags = known.flags.entry(unit.into()).or_default();
    flags.apply(event);
    if flags.is_clear() {
        known.flags.remove(unit);
    }
    known.last_byte = Some(b'\n');
    if let Some(bytes) = render(&known.flags, known.last_byte, &Basis::of(&appended.after)) {
        write(fs, ledger, &bytes);
    }
}

/// Removes the index's temp file of the ledger at `ledger`, left by a writer that died (crash
/// recovery, under the dead holder's lock).
pub(crate) fn remove_leftover<F: Fs + ?Sized>(fs: &F, ledger: &Path) {
    let _ = fs.remove_file(&temp_path(ledger));
}

/// Writes `bytes` as the index of the ledger at `ledger`, through its temp file.
fn write<F: Fs + ?Sized>(fs: &F, ledger: &Path, bytes: &[u8]) {
    let temp = temp_path(ledger);
    let file = match fs.create_new(&temp, 0o644) {
        Ok(file) => Ok(file),
        // Left by a writer that died: the checkpoint lock is held, so no writer is using it.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs.remove_file(&temp).and_then(|()| fs.create_new(&temp, 0o644))
        }
        Err(e) => Err(e),
    };
    let Ok(mut file) = file else {
        return;
    };
    let written = file.write_all(bytes);
    drop(file);
    if written
        .and_then(|()| fs.rename(&temp, &index_path(ledger)))
        .is_err()
    {
        let _ = fs.remove_file(&temp);
    }
}

/// The index's bytes: one line of JSON in the ledger's form (keys sorted) —
/// `{"before": [<ids>], "briefed": [<ids>], "last_byte": <byte or null>, "ledger": {"changed": <ns>,
/// "dev": <n>, "ino": <n>, "len": <n>, "modified": <ns>}, "version": 1}` — then `{"sha256": <hex of
/// that line>}`, each ended by a line feed. `None` when longer than [`MAX_INDEX_BYTES`].
fn render(flags: &UnitFlags, last_byte: Option<u8>, basis: &Basis) -> Option<Vec<u8>> {
    let Basis::File {
        dev,
        ino,
        len,
        modified,
        changed,
    } = *basis
    else {
        return None;
    };
    let ids = |pick: fn(&Flags) -> bool| {
        let mut ids: Vec<&str> = flags
            .iter()
            .filter(|(_, f)| pick(f))
            .map(|(id, _)| &**id)
            .collect();
        ids.sort_unstable();
        Json::Array(ids.into_iter().map(Json::str).collect())
    };
    let int = |n: i128| crate::budget::int(n);
    let head = json::to_ledger_text(&Json::Object(json::object([
        ("before", ids(|f| f.before)),
        ("briefed", ids(|f| f.briefed)),
        (
            "last_byte",
            last_byte.map_or(Json::Null, |b| Json::int(i64::from(b))),
        ),
        (
            "ledger",
            Json::Object(json::object([
                ("changed", int(changed)),
                ("dev", int(i128::from(dev))),
                ("ino", int(i128::from(ino))),
                ("len", int(i128::from(len))),
                ("modified", int(modified)),
            ])),
        ),
        ("version", Json::int(VERSION)),
    ])));
    let mut bytes = Vec::with_capacity(head.len() + 80);
    bytes.extend_from_slice(head.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(checksum_line(head.as_bytes()).as_bytes());
    bytes.push(b'\n');
    (bytes.len() as u64 <= MAX_INDEX_BYTES).then_some(bytes)
}

fn checksum_line(head: &[u8]) -> String {
    json::to_ledger_text(&Json::Object(json::object([(
        "sha256",
        Json::String(shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(head))),
    )])))
}

/// Reads an index's bytes: the ledger state it describes, the flags and the last byte; `None` for
/// anything but what [`render`] writes.
fn parse(bytes: &[u8]) -> Option<(Basis, UnitFlags, Option<u8>)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (head, rest) = text.split_once('\n')?;
    if rest.strip_suffix('\n')? != checksum_line(head.as_bytes()) {
        return None;
    }
    let value = json::parse(head).ok()?;
    if value.get("version").and_then(Json::as_number)?.as_whole()? != i128::from(VERSION) {
        return None;
    }
    let ledger = value.get("ledger")?;
    let whole = |key: &str| ledger.get(key).and_then(Json::as_number)?.as_whole();
    let basis = Basis::File {
        dev: u64::try_from(whole("dev")?).ok()?,
        ino: u64::try_from(whole("ino")?).ok()?,
        len: u64::try_from(whole("len")?).ok()?,
        modified: whole("modified")?,
        changed: whole("changed")?,
    };
    let last_byte = match value.get("last_byte")? {
        Json::Null => None,
        n => Some(u8::try_from(n.as_number()?.as_whole()?).ok()?),
    };
    let mut flags = UnitFlags::default();
    for (key, set) in [
        ("briefed", (|f: &mut Flags| f.briefed = true) as fn(&mut Flags)),
        ("before", |f: &mut Flags| f.before = true),
    ] {
        for id in value.get(key)?.as_array()? {
            set(flags.entry(id.as_str()?.into()).or_default());
        }
    }
    Some((basis, flags, last_byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis() -> Basis {
        Basis::File {
            dev: 7,
            ino: 9,
            len: 120,
            modified: 1_767_225_600_000_000_001,
            changed: -5,
        }
    }

    #[test]
    fn an_index_reads_back_as_written() {
        let mut flags = UnitFlags::default();
        flags.insert(
            "U3".into(),
            Flags {
                briefed: true,
                before: false,
            },
        );
        flags.insert(
            "é \"x\"".into(),
            Flags {
                briefed: false,
                before: true,
            },
        );
        flags.insert(
            "U1".into(),
            Flags {
                briefed: true,
                before: true,
            },
        );
        let bytes = render(&flags, Some(b'}'), &basis()).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with(r#"{"before": ["U1", "\u00e9 \"x\""], "briefed": ["U1", "U3"], "last_byte": 125, "ledger": {"changed": -5, "dev": 7, "ino": 9, "len": 120, "modified": 1767225600000000001}, "version": 1}"#),
            "{text}"
        );
        let (b, f, last) = parse(&bytes).unwrap();
        assert_eq!((b, f, last), (basis(), flags, Some(b'}')));
    }

    #[test]
    fn a_damaged_index_reads_as_none() {
        let bytes = render(&UnitFlags::default(), None, &basis()).unwrap();
        assert!(parse(&bytes).is_some());
        // Cut anywhere, or one byte changed anywhere: refused.
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x01;
            assert!(parse(&damaged).is_none(), "byte {at}");
        }
        // A well-formed index of another version.
        let text = String::from_utf8(bytes).unwrap();
        let head = text
            .lines()
            .next()
            .unwrap()
            .replace("\"version\": 1", "\"version\": 2");
        let other = format!("{head}\n{}\n", checksum_line(head.as_bytes()));
        assert!(parse(other.as_bytes()).is_none());
    }
}
