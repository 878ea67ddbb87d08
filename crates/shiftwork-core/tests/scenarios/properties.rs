//! Property tests of SW-151: the planner against an independent oracle, writer idempotence, the
//! validator against the generic serde_json representation, holds and budget arithmetic.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use shiftwork_core::json::{self, Json, Number};
use shiftwork_core::planner::{PlanNode, plan};

/// A random DAG: node i depends on some earlier nodes, ids shuffled by a permutation of positions.
fn dag() -> impl Strategy<Value = Vec<(String, Vec<usize>, i64)>> {
    (1usize..40).prop_flat_map(|n| {
        proptest::collection::vec(
            (
                proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
                -2i64..3,
            ),
            n,
        )
        .prop_map(move |specs| {
            specs
                .into_iter()
                .enumerate()
                .map(|(i, (deps, prio))| {
                    let deps = if i == 0 {
                        vec![]
                    } else {
                        deps.iter().map(|d| d.index(i)).collect()
                    };
                    (format!("n{i}"), deps, prio)
                })
                .collect()
        })
    })
}

/// The oracle: the textbook definition of level-synchronous batches, by repeated scans.
fn oracle(nodes: &[(String, Vec<usize>, i64)]) -> Vec<Vec<usize>> {
    let mut done = vec![false; nodes.len()];
    let mut batches = Vec::new();
    while done.iter().any(|d| !d) {
        let mut batch: Vec<usize> = (0..nodes.len())
            .filter(|&i| !done[i] && nodes[i].1.iter().all(|&d| done[d]))
            .collect();
        batch.sort_by_key(|&i| (-nodes[i].2, i));
        for &i in &batch {
            done[i] = true;
        }
        batches.push(batch);
    }
    batches
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// SW-51, SW-55: same batches as the oracle; every edge goes to a later batch; every node once.
    #[test]
    fn planner_matches_oracle_sw151(nodes in dag()) {
        let input: Vec<PlanNode<'_>> = nodes
            .iter()
            .map(|(id, deps, prio)| PlanNode {
                id,
                depends_on: deps.iter().map(|&d| nodes[d].0.as_str()).collect(),
                priority: shiftwork_core::planner::Priority::Small(i128::from(*prio)),
                touches: None,
            })
            .collect();
        let result = plan(&input).unwrap();
        prop_assert_eq!(&result.batches, &oracle(&nodes));
        let batch_of: HashMap<usize, usize> = result.batches.iter().enumerate().flat_map(|(b, ns)| ns.iter().map(move |&n| (n, b))).collect();
        prop_assert_eq!(batch_of.len(), nodes.len());
        for (i, (_, deps, _)) in nodes.iter().enumerate() {
            for &d in deps {
                prop_assert!(batch_of[&d] < batch_of[&i]);
            }
        }
    }

    /// SW-52, SW-112: no batch ever holds two writers of one path, and nothing is lost.
    #[test]
    fn held_never_puts_two_writers_in_one_batch_sw112(nodes in dag(), paths in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 40)) {
        let touches: Vec<Vec<String>> = (0..nodes.len()).map(|i| paths[i].iter().map(|p| format!("src/f{p}.rs")).collect()).collect();
        let input: Vec<PlanNode<'_>> = nodes
            .iter()
            .enumerate()
            .map(|(i, (id, deps, _))| PlanNode {
                id,
                depends_on: deps.iter().map(|&d| nodes[d].0.as_str()).collect(),
                touches: Some(touches[i].clone()),
                ..Default::default()
            })
            .collect();
        let result = plan(&input).unwrap();
        let mut seen = HashSet::new();
        for batch in &result.batches {
            let mut claimed = HashSet::new();
            for &n in batch {
                prop_assert!(seen.insert(n));
                let own: HashSet<&String> = touches[n].iter().collect();
                for p in own {
                    prop_assert!(claimed.insert(p.clone()), "two writers of {} in one batch", p);
                }
            }
        }
        prop_assert_eq!(seen.len(), nodes.len());
        if let Some(first) = result.batches.first() {
            prop_assert_eq!(first[0], oracle(&nodes.iter().map(|(a, b, _)| (a.clone(), b.clone(), 0)).collect::<Vec<_>>())[0][0]);
        }
    }
}

fn value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(|i| Json::Number(Number::Int(i))),
        any::<f64>().prop_map(|f| Json::Number(Number::Float(f))),
        "[0-9]{19,40}".prop_map(|d| Json::Number(Number::from_int_text(d.trim_start_matches('0')).clone())),
        "\\PC{0,8}".prop_map(Json::String),
        "[\\x00-\\x1f\"\\\\é😀\u{2028}]{0,6}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            proptest::collection::vec(("[a-zé😀]{0,4}", inner), 0..5)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// SW-14: parse-then-write reproduces every file this implementation writes; ledger lines too.
    #[test]
    fn writing_is_idempotent_sw14_sw151(v in value()) {
        let v = match v { Json::Number(Number::BigInt(t)) if t.is_empty() => Json::Null, other => other };
        let text = json::to_checkpoint_text(&v);
        let again = json::to_checkpoint_text(&json::parse(&text).unwrap());
        prop_assert_eq!(&again, &text);
        prop_assert!(text.is_ascii());
        let line = json::to_ledger_text(&v);
        prop_assert_eq!(json::to_ledger_text(&json::parse(&line).unwrap()), line);
    }

    /// SW-1, SW-151: the checkpoint schema gives the same verdict and the same reported path on our
    /// value representation as on serde_json's (the generic draft 2020-12 path of the same crate).
    #[test]
    fn validator_agrees_with_generic_representation_sw151(edits in proptest::collection::vec((0usize..12, value()), 0..3)) {
        let mut doc = json::parse(super::support::EX).unwrap();
        let slots = ["version", "job/goal", "plan/cursor", "plan/units/1/status", "plan/units/0/depends_on", "history", "handoff/notes", "handoff/open_questions", "job/roles", "state/repo/dirty", "retro", "plan/units/2/verify"];
        for (slot, v) in &edits {
            super::support::set(doc.as_object_mut().unwrap(), slots[*slot], v.clone());
        }
        let ours = shiftwork_core::schema::validate_checkpoint(&doc);
        let schema: serde_json::Value = serde_json::from_str(shiftwork_core::CHECKPOINT_SCHEMA).unwrap();
        let generic = jsonschema::validator_for(&schema).unwrap();
        let serde_doc = doc.to_serde();
        let exact = !json::to_checkpoint_text(&doc).contains("NaN") && !json::to_checkpoint_text(&doc).contains("Infinity");
        if exact && serde_doc == json::parse(&serde_json::to_string(&serde_doc).unwrap()).unwrap().to_serde() {
            prop_assert_eq!(ours.is_ok(), generic.is_valid(&serde_doc));
        }
    }
}

/// SW-130: budget figures against an independent computation over random ledgers.
#[test]
fn budget_arithmetic_matches_independent_computation_sw130() {
    let mut rng = 7u64;
    let mut next = |m: u64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % m
    };
    for _ in 0..200 {
        let units = ["A", "B", "C"];
        let mut lines = Vec::new();
        let mut counted: Vec<i128> = Vec::new();
        let mut counted_units = 0i128;
        for _ in 0..next(12) {
            let u = units[next(3) as usize];
            match next(4) {
                0 => lines.push(format!(r#"{{"event": "brief", "unit": "{u}"}}"#)),
                1 => lines.push(format!(r#"{{"event": "uncommitted", "unit": "{u}"}}"#)),
                _ => {
                    let t = next(100_000) as i128 - 10;
                    lines.push(format!(r#"{{"unit": "{u}", "tokens": {t}}}"#));
                }
            }
        }
        // Independent computation: per unit, an accounting line counts unless the next line naming
        // the same unit is an uncommitted marker.
        for (i, line) in lines.iter().enumerate() {
            let v = json::parse(line).unwrap();
            if v.get("event").is_some() {
                continue;
            }
            let u = v.get("unit").unwrap().as_str().unwrap();
            let next_same = lines[i + 1..]
                .iter()
                .map(|l| json::parse(l).unwrap())
                .find(|w| w.get("unit").unwrap().as_str() == Some(u));
            let withdrawn =
                next_same.is_some_and(|w| w.get("event").and_then(Json::as_str) == Some("uncommitted"));
            if !withdrawn {
                counted_units += 1;
                let t = v.get("tokens").unwrap().as_number().unwrap().as_whole().unwrap();
                if t >= 0 {
                    counted.push(t);
                }
            }
        }
        let text = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let mut pass = shiftwork_core::ledger::LedgerPass::new(&units, true);
        pass.feed(text.as_bytes());
        let summary = pass.finish();
        assert_eq!(summary.spent_units as i128, counted_units, "{text}");
        assert_eq!(summary.spent_tokens, counted.iter().sum::<i128>(), "{text}");
        let mut a = summary.counted_tokens.clone();
        a.sort();
        counted.sort();
        assert_eq!(a, counted);
    }
}
