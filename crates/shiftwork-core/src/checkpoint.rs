//! Reading a checkpoint (§4.1), the accessors of a validated document, the batch view (§7.1) and the
//! plan checks (§7.2).

use std::collections::HashMap;

use shiftwork_seams::Fs;

use crate::error::Error;
use crate::json::{self, Json};
use crate::paths::{CheckpointPaths, os_error_tail};
use crate::planner::{self, Plan, PlanNode, Priority};
use crate::schema;

/// The largest checkpoint file read (issue 12 item 7): a longer file is refused `checkpoint
/// unreadable: [Errno 27] File too large: '<path>'` after reading at most one byte past the bound.
pub const MAX_CHECKPOINT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads and validates the checkpoint of `paths` (§4.1 steps 1–6).
///
/// The file is read through [`Fs::read_limited`]: it is opened without blocking and must be a regular
/// file of at most [`MAX_CHECKPOINT_BYTES`], so a FIFO, `/dev/zero` or `/dev/stdin` is refused at
/// once (`checkpoint unreadable: Not a regular file: '<path>'`) and never holds a lock.
pub fn read<F: Fs + ?Sized>(fs: &F, paths: &CheckpointPaths) -> Result<Json, Error> {
    let bytes = fs
        .read_limited(&paths.given, MAX_CHECKPOINT_BYTES)
        .map_err(|e| Error::Unreadable {
            tail: os_error_tail(&e, &paths.shown),
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
pub fn parse_bytes(bytes: &[u8]) -> Result<Json, Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Unreadable {
        tail: utf8_error_tail(bytes, &e),
    })?;
    let text = translate_newlines(text);
    let doc = json::parse(&text).map_err(Error::NotJson)?;
    schema::validate_checkpoint(&doc).map_err(Error::Invalid)?;
    let mut seen = std::collections::HashSet::new();
    for unit in units(&doc) {
        let id = str_of(unit, "id");
        if !seen.insert(id) {
            return Err(Error::DuplicateId(id.to_owned()));
        }
    }
    Ok(doc)
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

/// `plan.units` of a validated document.
pub fn units(doc: &Json) -> &[Json] {
    doc.get("plan")
        .and_then(|p| p.get("units"))
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A string member of a validated object (`""` when absent, which validation rules out).
pub fn str_of<'a>(obj: &'a Json, key: &str) -> &'a str {
    obj.get(key).and_then(Json::as_str).unwrap_or("")
}

/// `plan.cursor`.
pub fn cursor(doc: &Json) -> &str {
    doc.get("plan").map(|p| str_of(p, "cursor")).unwrap_or("")
}

/// Whether a unit is terminal (`done` or `dropped`).
pub fn is_terminal(unit: &Json) -> bool {
    matches!(str_of(unit, "status"), "done" | "dropped")
}

/// The strings of an array member (non-strings skipped).
pub fn strs_of<'a>(obj: &'a Json, key: &str) -> Vec<&'a str> {
    obj.get(key)
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default()
}

/// The batch view (§7.1): the planner over the non-terminal units.
#[derive(Debug, Clone)]
pub struct BatchView<'d> {
    /// The planner's nodes (non-terminal units in plan order).
    pub nodes: Vec<PlanNode<'d>>,
    /// The position in `plan.units` of each node.
    pub unit_index: Vec<usize>,
    /// The batches and holds.
    pub plan: Plan,
    /// Whether some non-terminal unit has a `touches` key.
    pub has_touches: bool,
}

impl BatchView<'_> {
    /// `ready` (SW-59): the first batch's unit ids, or none.
    pub fn ready(&self) -> Vec<&str> {
        self.plan
            .batches
            .first()
            .map(|b| b.iter().map(|&i| self.nodes[i].id).collect())
            .unwrap_or_default()
    }
}

/// Computes the batch view of a validated document (SW-57, SW-58): one node per non-terminal unit,
/// dependencies on terminal units removed, priority 0, `touches` when present. The one
/// implementation used by plan, clock-in and the cursor move.
pub fn batch_view(doc: &Json) -> Result<BatchView<'_>, Error> {
    let all = units(doc);
    let terminal: std::collections::HashSet<&str> = all
        .iter()
        .filter(|u| is_terminal(u))
        .map(|u| str_of(u, "id"))
        .collect();
    let mut nodes = Vec::new();
    let mut unit_index = Vec::new();
    let mut has_touches = false;
    for (i, unit) in all.iter().enumerate() {
        if is_terminal(unit) {
            continue;
        }
        let touches =
            planner::touches_of(unit.get("touches")).map_err(|planner::BadTouches| Error::NodeShape {
                index: i,
                field: Some("touches"),
            })?;
        has_touches |= unit.get("touches").is_some();
        nodes.push(PlanNode {
            id: str_of(unit, "id"),
            depends_on: strs_of(unit, "depends_on")
                .into_iter()
                .filter(|d| !terminal.contains(d))
                .collect(),
            priority: Priority::default(),
            touches,
        });
        unit_index.push(i);
    }
    let plan = planner::plan(&nodes)?;
    Ok(BatchView {
        nodes,
        unit_index,
        plan,
        has_touches,
    })
}

/// The plan checks of §7.2 in order (SW-60): `touches` of every unit, the batch view's refusals,
/// review independence (SW-61). Returns the batch view when all pass.
pub fn plan_checks(doc: &Json) -> Result<BatchView<'_>, String> {
    let all = units(doc);
    for (i, unit) in all.iter().enumerate() {
        if planner::touches_of(unit.get("touches")).is_err() {
            return Err(Error::NodeShape {
                index: i,
                field: Some("touches"),
            }
            .to_string());
        }
    }
    let view = batch_view(doc).map_err(|e| e.to_string())?;
    let by_id: HashMap<&str, &Json> = all.iter().map(|u| (str_of(u, "id"), u)).collect();
    for unit in all {
        let id = str_of(unit, "id");
        let deps = strs_of(unit, "depends_on");
        for r in strs_of(unit, "reviews") {
            let Some(reviewed) = by_id.get(r) else {
                return Err(format!("unit {id} reviews {r}, which no unit declares"));
            };
            if !deps.contains(&r) {
                return Err(format!("unit {id} reviews {r}, which is not in its depends_on"));
            }
            let role = str_of(unit, "role");
            if str_of(reviewed, "role") == role {
                return Err(format!("unit {id} reviews {r}, which is in its own role {role}"));
            }
        }
    }
    Ok(view)
}
