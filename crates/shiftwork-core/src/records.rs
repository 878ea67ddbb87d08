//! Every line shift work writes, built here and nowhere else: the ledger's brief lines, accounting
//! lines and uncommitted markers, the intent records of the lock file,
//! their `ts` values, and the rule that a line appended to a ledger whose last byte is not a
//! line feed starts with one.

use crate::json::{self, Json, Object};

/// A `ts` value: UTC, whole seconds, the fraction floored.
///
/// ```
/// use chrono::TimeZone;
/// let t = chrono::Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap() + chrono::Duration::milliseconds(750);
/// assert_eq!(shiftwork_core::records::timestamp(t), "2026-01-02T03:04:05Z");
/// ```
pub fn timestamp(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The brief line of a clock-in, without its LF.
///
/// ```
/// assert_eq!(
///     shiftwork_core::records::brief_line("implementer", "2026-01-02T03:04:05Z", "U3"),
///     r#"{"event": "brief", "role": "implementer", "ts": "2026-01-02T03:04:05Z", "unit": "U3"}"#
/// );
/// ```
pub fn brief_line(role: &str, ts: &str, unit: &str) -> String {
    event_line("brief", role, ts, unit)
}

/// The uncommitted marker, without its LF.
pub fn uncommitted_line(role: &str, ts: &str, unit: &str) -> String {
    event_line("uncommitted", role, ts, unit)
}

fn event_line(event: &str, role: &str, ts: &str, unit: &str) -> String {
    json::to_ledger_text(&Json::Object(json::object([
        ("event", Json::str(event)),
        ("role", Json::str(role)),
        ("ts", Json::str(ts)),
        ("unit", Json::str(unit)),
    ])))
}

/// The accounting line of a clock-out, without its LF: `ts`, `unit`, `role`, `status`, every
/// key of a non-null `accounting`, `agent_id` when given, then the measured `briefed`.
///
/// ```
/// let line = shiftwork_core::records::accounting_line("t", "U3", "implementer", "done", None, None, false);
/// assert_eq!(line, r#"{"briefed": false, "role": "implementer", "status": "done", "ts": "t", "unit": "U3"}"#);
/// ```
pub fn accounting_line(
    ts: &str,
    unit: &str,
    role: &str,
    status: &str,
    accounting: Option<&Json>,
    agent_id: Option<&Json>,
    briefed: bool,
) -> String {
    let mut line = Object::default();
    line.insert(String::from("ts"), Json::str(ts));
    line.insert(String::from("unit"), Json::str(unit));
    line.insert(String::from("role"), Json::str(role));
    line.insert(String::from("status"), Json::str(status));
    if let Some(Json::Object(a)) = accounting {
        for (k, v) in a {
            line.insert(k.clone(), v.clone());
        }
    }
    if let Some(agent) = agent_id.filter(|a| !a.is_null()) {
        line.insert(String::from("agent_id"), agent.clone());
    }
    line.insert(String::from("briefed"), Json::Bool(briefed));
    json::to_ledger_text(&Json::Object(line))
}

/// The intent record written before the ledger is created: the ledger at `ledger` (absolute) is about to be created.
pub fn ledger_created_intent(ledger: &str) -> String {
    json::to_ledger_text(&Json::Object(json::object([(
        "ledger_created",
        Json::str(ledger),
    )])))
}

/// The intent record written before the ledger line is appended: the commit about to happen — the temp file's name, the ledger, its length
/// before the append, and the length and SHA-256 of the bytes appended.
pub fn commit_intent(temp: &str, ledger: &str, pre: u64, appended: &[u8]) -> String {
    json::to_ledger_text(&Json::Object(json::object([(
        "commit",
        Json::Object(json::object([
            ("temp", Json::str(temp)),
            ("ledger", Json::str(ledger)),
            ("pre", crate::budget::int(i128::from(pre))),
            ("len", crate::budget::int(appended.len() as i128)),
            (
                "sha256",
                Json::String(shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(
                    appended,
                ))),
            ),
        ])),
    )])))
}

/// Refuses a ledger line longer than a ledger's reader reads ([`crate::ledger::MAX_LEDGER_LINE_BYTES`]):
/// checked before the first write of the call that would write it.
///
/// ```
/// assert!(shiftwork_core::records::check_line("{}").is_ok());
/// let long = "x".repeat(shiftwork_core::ledger::MAX_LEDGER_LINE_BYTES + 1);
/// assert_eq!(
///     shiftwork_core::records::check_line(&long).unwrap_err().to_string(),
///     "refused to write: the ledger line would be 65537 bytes, more than 65536 bytes (64 KiB), the most a ledger's reader reads of one line; nothing written"
/// );
/// ```
pub fn check_line(line: &str) -> Result<(), crate::ShiftworkRefusal> {
    let limit = crate::ledger::MAX_LEDGER_LINE_BYTES;
    if line.len() <= limit {
        return Ok(());
    }
    Err(crate::ShiftworkRefusal::TooLargeToWrite {
        what: crate::Written::LedgerLine,
        size: Some(line.len() as u64),
        limit: limit as u64,
    })
}

/// The bytes that append `line` to a ledger whose last byte is `last_byte` (`None`: empty or absent):
/// the line and its LF, after an LF of its own when the ledger does not end with one, so a
/// line is never fused with a partial one before it.
///
/// ```
/// use shiftwork_core::records::appended;
/// assert_eq!(appended(None, "{}"), b"{}\n");
/// assert_eq!(appended(Some(b'\n'), "{}"), b"{}\n");
/// assert_eq!(appended(Some(b'}'), "{}"), b"\n{}\n");
/// ```
pub fn appended(last_byte: Option<u8>, line: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(line.len() + 2);
    if last_byte.is_some_and(|b| b != b'\n') {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    bytes
}
