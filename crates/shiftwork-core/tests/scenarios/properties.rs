//! Property tests of SW-151: the planner against an independent oracle, writer idempotence, the
//! validator against the generic serde_json representation, holds and budget arithmetic.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use shiftwork_core::json::{self, Json, Number};
use shiftwork_core::planner::{PlanNode, plan};
use shiftwork_core::schema::PathSegment;

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

    /// SW-1, SW-29, SW-151: the checkpoint schema gives the same verdict and the same reported path on
    /// our value representation as on serde_json's (the generic draft 2020-12 path of the same crate).
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
            // The reported path: SW-29's choice (shallowest, then greatest) over the generic errors.
            let errors: Vec<_> = generic.iter_errors(&serde_doc).collect();
            let paths: Vec<(Vec<PathSegment>, bool)> = errors
                .iter()
                .map(|e| (generic_path(&serde_doc, e), matches!(e.kind(), jsonschema::error::ValidationErrorKind::AnyOf { .. })))
                .collect();
            if let Some(depth) = paths.iter().map(|(p, _)| p.len()).min() {
                let best = paths.iter().filter(|(p, _)| p.len() == depth).map(|(p, _)| p.clone()).max().unwrap();
                let descends = paths.iter().any(|(p, any_of)| *any_of && *p == best);
                let ours = ours.unwrap_err();
                if descends {
                    // An `anyOf` failure may be reported at a branch's deeper path (SW-29 step 5).
                    prop_assert!(ours.path.starts_with(&best), "{:?} vs {:?}", ours.path, best);
                } else {
                    prop_assert_eq!(&ours.path, &best);
                }
            }
        }
    }
}

/// A generic error's location as typed segments, resolved against the document.
fn generic_path(doc: &serde_json::Value, error: &jsonschema::ValidationError<'_>) -> Vec<PathSegment> {
    let mut node = Some(doc);
    let mut out = Vec::new();
    for raw in error.instance_path().segments() {
        let text = raw.to_string();
        match node {
            Some(serde_json::Value::Array(items)) => {
                let i: usize = text.parse().unwrap();
                node = items.get(i);
                out.push(PathSegment::Index(i));
            }
            Some(serde_json::Value::Object(members)) => {
                node = members.get(&text);
                out.push(PathSegment::Key(text));
            }
            _ => {
                node = None;
                out.push(PathSegment::Key(text));
            }
        }
    }
    out
}

/// One random ledger line about units `A`, `B`, `C` (or a stranger `Z`), as 0.36.2 and this crate
/// write them, or hand-edited junk.
fn ledger_line(next: &mut impl FnMut(u64) -> u64) -> String {
    let u = ["A", "B", "C", "Z"][next(4) as usize];
    let tokens = match next(6) {
        0 => String::from("\"12\""),
        1 => format!("{}.0", next(90_000)),
        2 => String::from("2.5"),
        3 => format!("-{}", next(50)),
        _ => format!("{}", next(90_000)),
    };
    match next(9) {
        0 | 1 => format!(r#"{{"event": "brief", "role": "implementer", "ts": "t", "unit": "{u}"}}"#),
        2 => format!(r#"{{"event": "uncommitted", "role": "implementer", "ts": "t", "unit": "{u}"}}"#),
        3 => format!(r#"{{"event": "other", "unit": "{u}"}}"#),
        4 => String::from("not json"),
        5 => format!(r#"{{"unit": "{u}", "note": "no tokens"}}"#),
        _ => format!(
            r#"{{"briefed": true, "role": "implementer", "status": "done", "tokens": {tokens}, "ts": "t", "unit": "{u}"}}"#
        ),
    }
}

/// SW-95, SW-97, SW-130..SW-132: the ledger pass and the budget figures against an independent
/// computation — the full reader line by line, SW-95's flags and SW-97's rule spelled out, the
/// figures by their definitions — over random ledgers, statuses and limits.
#[test]
fn budget_arithmetic_matches_independent_computation_sw97_sw130() {
    let mut rng = 7u64;
    let mut next = |m: u64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % m
    };
    let units = ["A", "B", "C"];
    for round in 0..400 {
        let lines: Vec<String> = (0..next(16)).map(|_| ledger_line(&mut next)).collect();
        let statuses: Vec<&str> = (0..3)
            .map(|_| ["todo", "in_progress", "blocked", "done", "dropped"][next(5) as usize])
            .collect();
        let limits: Vec<(&str, i128)> = match next(3) {
            0 => vec![("tokens", 1 + next(400_000) as i128)],
            1 => vec![("units", 1 + next(12) as i128)],
            _ => vec![
                ("tokens", 1 + next(400_000) as i128),
                ("units", 1 + next(12) as i128),
            ],
        };
        // Independent computation.
        let parsed: Vec<Option<Json>> = lines
            .iter()
            .map(|l| json::parse(l).ok().filter(|v| v.as_object().is_some()))
            .collect();
        let unit_of = |v: &Json| v.get("unit").and_then(Json::as_str).map(str::to_owned);
        let mut briefed = [false; 3];
        let mut before = [false; 3];
        let mut counted: Vec<Option<i128>> = Vec::new();
        for (i, v) in parsed.iter().enumerate() {
            let Some(v) = v else { continue };
            let Some(u) = unit_of(v) else { continue };
            let event = v.get("event").map(|e| e.as_str().unwrap_or("?").to_owned());
            if let Some(k) = units.iter().position(|x| *x == u) {
                match event.as_deref() {
                    Some("brief") => briefed[k] = true,
                    Some("uncommitted") => briefed[k] = before[k],
                    _ => {
                        before[k] = briefed[k];
                        briefed[k] = false;
                    }
                }
            }
            if event.is_none() {
                let next_same = parsed[i + 1..]
                    .iter()
                    .flatten()
                    .find(|w| unit_of(w).as_deref() == Some(u.as_str()));
                let withdrawn =
                    next_same.is_some_and(|w| w.get("event").and_then(Json::as_str) == Some("uncommitted"));
                if !withdrawn {
                    counted.push(
                        v.get("tokens")
                            .and_then(Json::as_number)
                            .and_then(Number::as_whole),
                    );
                }
            }
        }
        let whole: Vec<i128> = counted.iter().flatten().copied().filter(|t| *t >= 0).collect();
        let spent_tokens: i128 = whole.iter().sum();
        let spent_units = counted.len() as i128;
        let mut sorted = whole.clone();
        sorted.sort();
        let per_unit = if sorted.is_empty() {
            60_000
        } else {
            sorted[(sorted.len() - 1) / 2]
        };
        let in_flight: Vec<&str> = (0..3)
            .filter(|&k| briefed[k] && !matches!(statuses[k], "done" | "dropped"))
            .map(|k| units[k])
            .collect();
        let cost = |dim: &str| if dim == "tokens" { per_unit.max(1) } else { 1 };
        let spent = |dim: &str| {
            if dim == "tokens" {
                spent_tokens
            } else {
                spent_units
            }
        };
        let reserved = |dim: &str| in_flight.len() as i128 * cost(dim);
        let remaining = |dim: &str, limit: i128| limit - spent(dim) - reserved(dim);
        let affordable = limits
            .iter()
            .map(|(d, l)| remaining(d, *l).div_euclid(cost(d)))
            .min()
            .unwrap()
            .max(0);
        let dims = |f: &dyn Fn(&str, i128) -> i128| {
            limits
                .iter()
                .map(|(d, l)| format!("\"{d}\": {}", f(d, *l)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let expected = format!(
            "{{\"limit\": {{{}}}, \"spent\": {{{}}}, \"in_flight\": {}, \"remaining\": {{{}}}, \"per_unit\": {per_unit}, \"affordable\": {affordable}}}",
            dims(&|_, l| l),
            dims(&|d, _| spent(d)),
            json::to_compact_text(&Json::strings(&in_flight)),
            dims(&|d, l| remaining(d, l)),
        );
        // The crate's figures.
        let budget_json = format!(
            "{{{}}}",
            limits
                .iter()
                .map(|(d, l)| format!("\"{d}\": {l}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let doc = json::parse(&format!(
            r#"{{"job": {{"budget": {budget_json}}}, "plan": {{"units": [{{"id": "A", "status": "{}"}}, {{"id": "B", "status": "{}"}}, {{"id": "C", "status": "{}"}}]}}}}"#,
            statuses[0], statuses[1], statuses[2]
        ))
        .unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut pass = shiftwork_core::ledger::LedgerPass::new(&units, true);
        // Fed in uneven chunks: the pass does not depend on where reads end.
        for chunk in text.as_bytes().chunks(1 + round % 17) {
            pass.feed(chunk);
        }
        let summary = pass.finish();
        assert_eq!(summary.briefed, briefed, "{text}");
        let budget =
            shiftwork_core::budget::Budget::compute(&shiftwork_core::Checkpoint::new(&doc), &summary)
                .unwrap();
        assert_eq!(
            json::to_compact_text(&shiftwork_core::Answer::to_answer(&budget)),
            expected,
            "{text}"
        );
        // The clock-in gate (SW-132) for a new brief and for a relaunch.
        for relaunch in [false, true] {
            let refused = limits
                .iter()
                .find(|(d, l)| spent(d) + reserved(d) + if relaunch { 0 } else { cost(d) } > *l);
            let expected = refused.map(|(d, l)| {
                format!(
                    "budget {d} spent: {} of {l}; raise job.budget or stop the job",
                    spent(d) + reserved(d)
                )
            });
            assert_eq!(
                budget.admit(relaunch).err().map(|r| r.to_string()),
                expected,
                "{text}"
            );
        }
    }
}
