//! Experimentation ranking: validated candidates ordered by their reported score.

use std::cmp::Ordering;

use crate::json::{self, Json, Node};
use crate::results::Ranked;
use crate::view::{Checkpoint, Unit, first_ref};

/// The ranking of a checkpoint whose `job.kind` is `experimentation`: its validated candidates, best
/// first (the winner is the first).
pub fn ranking<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>) -> Vec<Ranked> {
    let descending = cp.ranks_descending();
    let done: Vec<Unit<'d, N>> = cp.units().filter(|u| u.status_str() == "done").collect();
    let mut ranked: Vec<(&str, &str, &str, f64)> = Vec::new();
    for unit in &done {
        let (Some(sha), Some(score)) = (
            first_ref(unit.last_produced_nodes(), "commit"),
            first_ref(unit.last_produced_nodes(), "score"),
        ) else {
            continue;
        };
        let id = unit.id();
        let validated = done.iter().any(|reviewer| {
            reviewer.reviews().any(|r| r == id)
                && reviewer.last_produced_nodes().any(|p| {
                    p.get("kind").and_then(N::as_str) == Some("validated-sha")
                        && p.get("ref").and_then(N::as_str) == Some(sha)
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
    ranked
        .into_iter()
        .map(|(id, score, sha, _)| Ranked {
            id: id.to_owned(),
            score: score.to_owned(),
            sha: sha.to_owned(),
        })
        .collect()
}

/// A score string's numeric value, when the string is a JSON number (surrounding whitespace allowed).
/// `NaN` and `Infinity`, which the checkpoint dialect reads but JSON does not have, are not numbers
/// here; a number beyond the double range ranks as ±infinity.
fn score_value(score: &str) -> Option<f64> {
    match json::parse(score).ok()? {
        Json::Number(n) => {
            let literal = matches!(score.trim_start().as_bytes().first(), Some(b'N' | b'I'))
                || score.trim_start().starts_with("-I");
            (!literal).then(|| n.as_f64())
        }
        _ => None,
    }
}
