//! `inspect`: filters, pages bounded in size, cursors and counts.

use serde_json::json;

use super::Contracts;
use crate::canonical;
use crate::error::{ContractRefusal, RefusalDetails};
use crate::limits::*;
use crate::model::{AgentId, ContractId, Status, instant};
use crate::request::{self, InspectRequest};
use crate::store::ListQuery;
use crate::views::*;

impl Contracts {
    /// Reads contracts without changing them: a page of the contracts the filters select, newest
    /// first (at most `limit`, and at most 32 KiB as a tool answer; `next_cursor` continues it), and
    /// the counts per status. With a `contract_id`, that contract in full ([`InspectItem::Detail`]).
    pub fn inspect(&self, req: &InspectRequest) -> Result<InspectOutcome, ContractRefusal> {
        let target = req.target_agent.clone();
        let requester = req.requester_agent.clone();
        if let Some(s) = &req.status {
            request::statuses(s)?;
        }
        let statuses = req.status.clone();
        let contract_id = req.contract_id.clone();
        let limit = match req.limit {
            Some(l) => request::limit(i64::try_from(l).unwrap_or(i64::MAX))?,
            None => INSPECT_DEFAULT_LIMIT,
        };
        let tag = cursor_tag(&contract_id, &requester, &statuses, &target);
        let before_seq = match &req.cursor {
            None => None,
            Some(cursor) => Some(decode_cursor(cursor, &tag).ok_or_else(|| {
                ContractRefusal::new(
                    "cursor is not a next_cursor of inspect_mesh_state with these filters.",
                    RefusalDetails::InvalidCursor {},
                )
            })?),
        };
        let now = self.now();
        let detail = contract_id.is_some();
        let query = ListQuery {
            target_agent: target,
            requester_agent: requester,
            statuses,
            contract_id,
            before_seq,
            limit: limit + 1,
        };
        let page = self.tx("list", |s| s.list(&query, now))?;
        let mut outcome = InspectOutcome {
            total_returned: 0,
            contracts: Vec::new(),
            next_cursor: None,
            counts: page.counts,
            now: instant(now),
            finished_kept: self.config.finished_retention(),
        };
        if detail {
            if let Some(c) = page.records.first() {
                let mut d = ContractDetail::of(c, now);
                outcome.total_returned = 1;
                if !req.unbounded {
                    while json_len(&outcome_with(&outcome, &d)) > INSPECT_DETAIL_MAX_BYTES && d.omit_next() {}
                }
                outcome.contracts.push(InspectItem::Detail(Box::new(d)));
            }
            return Ok(outcome);
        }
        let more = page.records.len() > limit;
        let shown = &page.records[..page.records.len().min(limit)];
        // Size with a cursor present: the longest cursor this page could carry.
        let sample_cursor = encode_cursor(i64::MAX, &tag);
        let mut probe = outcome.clone();
        probe.next_cursor = Some(sample_cursor);
        let mut size = json_len(&probe);
        for (i, c) in shown.iter().enumerate() {
            let item = InspectItem::Summary(Box::new(ContractSummary::of(c, now)));
            let add = json_len(&item) + usize::from(i > 0);
            if size + add > INSPECT_PAGE_MAX_BYTES {
                break;
            }
            size += add;
            outcome.contracts.push(item);
        }
        outcome.total_returned = outcome.contracts.len();
        if more || outcome.contracts.len() < shown.len() {
            let last = &shown[outcome.contracts.len().saturating_sub(1)];
            outcome.next_cursor = Some(encode_cursor(last.seq, &tag));
        }
        Ok(outcome)
    }
}

fn outcome_with(outcome: &InspectOutcome, d: &ContractDetail) -> InspectOutcome {
    let mut o = outcome.clone();
    o.contracts = vec![InspectItem::Detail(Box::new(d.clone()))];
    o
}

fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map(|v| v.len()).unwrap_or(usize::MAX)
}

fn cursor_tag(
    contract_id: &Option<ContractId>,
    requester: &Option<AgentId>,
    statuses: &Option<Vec<Status>>,
    target: &Option<AgentId>,
) -> String {
    let status = statuses.as_ref().map(|s| {
        let mut names: Vec<&str> = s.iter().map(|s| s.as_str()).collect();
        names.sort_unstable();
        names
    });
    let filters = json!({
        "contract_id": contract_id,
        "requester_agent": requester,
        "status": status,
        "target_agent": target,
    });
    canonical::sha256_hex(&filters)[..16].to_owned()
}

fn encode_cursor(seq: i64, tag: &str) -> String {
    canonical::base64url(format!("v1.{seq}.{tag}").as_bytes())
}

fn decode_cursor(cursor: &str, tag: &str) -> Option<i64> {
    let bytes = canonical::base64url_decode(cursor)?;
    let text = String::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix("v1.")?;
    let (seq, got) = rest.split_once('.')?;
    if got != tag || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    seq.parse().ok()
}
