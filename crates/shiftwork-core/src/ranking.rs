//! Experimentation ranking (SW-138): validated candidates ordered by their reported score.

use std::cmp::Ordering;

use crate::checkpoint::{str_of, strs_of, units};
use crate::json::{self, Json};

/// The newest attempt's `produced` list of a unit.
pub fn last_produced(unit: &Json) -> &[Json] {
    unit.get("attempts")
        .and_then(Json::as_array)
        .and_then(|a| a.last())
        .and_then(|a| a.get("produced"))
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn first_ref<'a>(produced: &'a [Json], kind: &str) -> Option<&'a str> {
    produced
        .iter()
        .find(|p| p.get("kind").and_then(Json::as_str) == Some(kind))
        .and_then(|p| p.get("ref").and_then(Json::as_str))
}

/// `ranking` and `winner` for a checkpoint whose `job.kind` is `experimentation`.
pub fn ranking(doc: &Json) -> (Json, Json) {
    let all = units(doc);
    let descending = doc
        .get("job")
        .and_then(|j| j.get("experiment"))
        .map(|e| str_of(e, "direction") != "min")
        .unwrap_or(true);
    let done = |u: &&Json| str_of(u, "status") == "done";
    let mut ranked: Vec<(&str, &str, &str, f64)> = Vec::new();
    for unit in all.iter().filter(done) {
        let produced = last_produced(unit);
        let (Some(sha), Some(score)) = (first_ref(produced, "commit"), first_ref(produced, "score")) else {
            continue;
        };
        let id = str_of(unit, "id");
        let validated = all.iter().filter(done).any(|reviewer| {
            strs_of(reviewer, "reviews").contains(&id)
                && last_produced(reviewer).iter().any(|p| {
                    p.get("kind").and_then(Json::as_str) == Some("validated-sha")
                        && p.get("ref").and_then(Json::as_str) == Some(sha)
                })
        });
        if !validated {
            continue;
        }
        let Some(value) = score_value(score) else {
            continue;
        };
        ranked.push((id, score, sha, value));
    }
    ranked.sort_by(|a, b| {
        let by_score = a.3.partial_cmp(&b.3).unwrap_or(Ordering::Equal);
        let by_score = if descending { by_score.reverse() } else { by_score };
        by_score.then_with(|| a.0.cmp(b.0))
    });
    let winner = ranked.first().map(|r| Json::str(r.0)).unwrap_or(Json::Null);
    let list = ranked
        .iter()
        .map(|(id, score, sha, _)| {
            Json::Object(json::object([
                ("id", Json::str(*id)),
                ("score", Json::str(*score)),
                ("sha", Json::str(*sha)),
            ]))
        })
        .collect();
    (Json::Array(list), winner)
}

/// A score string's numeric value: it must parse as a JSON number (finite, so it can be ordered).
fn score_value(score: &str) -> Option<f64> {
    match json::parse(score).ok()? {
        Json::Number(n) => {
            let v = n.as_f64();
            v.is_finite().then_some(v)
        }
        _ => None,
    }
}
