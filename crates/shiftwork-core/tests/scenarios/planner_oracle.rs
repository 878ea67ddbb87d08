//! Issue 13 item 6: petgraph as the planner's oracle. On random directed graphs — with cycles, self
//! loops, repeated edges, priorities and `touches` — the planner refuses a cycle exactly when
//! `petgraph::algo::is_cyclic_directed` finds one, the cycle it names is a real cycle inside one
//! strongly connected component, and otherwise every node is batched once, after all its dependencies.

use petgraph::algo::{is_cyclic_directed, kosaraju_scc};
use petgraph::graph::{DiGraph, NodeIndex};
use proptest::prelude::*;
use shiftwork_core::ShiftworkRefusal;
use shiftwork_core::planner::{PlanNode, Priority, plan};

/// Nodes as (dependencies, priority, touches) with dependencies anywhere in the graph.
fn graph() -> impl Strategy<Value = Vec<(Vec<usize>, i8, Option<Vec<u8>>)>> {
    let node = (
        proptest::collection::vec(0usize..30, 0..4),
        prop_oneof![Just(0i8), -3i8..4],
        prop_oneof![Just(None), proptest::collection::vec(0u8..4, 0..3).prop_map(Some)],
    );
    proptest::collection::vec(node, 1..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_planner_agrees_with_petgraph(spec in graph(), acyclic_bias in any::<bool>()) {
        let n = spec.len();
        let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let paths: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
        // Half the graphs keep only backward edges, so acyclic graphs are common too.
        let deps: Vec<Vec<usize>> = spec
            .iter()
            .enumerate()
            .map(|(i, (d, _, _))| d.iter().copied().filter(|&d| d < n && (!acyclic_bias || d < i)).collect())
            .collect();
        let nodes: Vec<PlanNode<'_>> = spec
            .iter()
            .enumerate()
            .map(|(i, (_, prio, touches))| PlanNode {
                id: &ids[i],
                depends_on: deps[i].iter().map(|&d| ids[d].as_str()).collect(),
                priority: Priority::Small(i128::from(*prio)),
                touches: touches.as_ref().map(|t| t.iter().map(|&p| paths[usize::from(p)].clone()).collect()),
            })
            .collect();
        let mut oracle: DiGraph<usize, ()> = DiGraph::new();
        let index: Vec<NodeIndex> = (0..n).map(|i| oracle.add_node(i)).collect();
        for (i, ds) in deps.iter().enumerate() {
            for &d in ds {
                oracle.add_edge(index[d], index[i], ());
            }
        }
        match plan(&nodes) {
            Err(ShiftworkRefusal::Cycle { walk }) => {
                prop_assert!(is_cyclic_directed(&oracle), "a cycle the oracle does not see: {walk:?}");
                // A closed walk along declared dependencies…
                prop_assert!(walk.len() >= 2 && walk.first() == walk.last(), "{walk:?}");
                let at = |id: &String| ids.iter().position(|x| x == id).unwrap();
                for pair in walk.windows(2) {
                    prop_assert!(deps[at(&pair[0])].contains(&at(&pair[1])), "{walk:?}: {} does not depend on {}", pair[0], pair[1]);
                }
                // …inside one strongly connected component.
                let components = kosaraju_scc(&oracle);
                let component_of = |i: usize| components.iter().position(|c| c.contains(&index[i])).unwrap();
                let first = component_of(at(&walk[0]));
                prop_assert!(walk.iter().all(|id| component_of(at(id)) == first), "{walk:?}");
            }
            Err(other) => prop_assert!(false, "unexpected refusal {other}"),
            Ok(schedule) => {
                prop_assert!(!is_cyclic_directed(&oracle), "the oracle sees a cycle the planner batched");
                let mut batch_of = vec![usize::MAX; n];
                for (b, batch) in schedule.batches.iter().enumerate() {
                    for &i in batch {
                        prop_assert_eq!(batch_of[i], usize::MAX, "node {} twice", i);
                        batch_of[i] = b;
                    }
                }
                prop_assert!(batch_of.iter().all(|&b| b != usize::MAX), "a node is in no batch");
                // The batches respect a topological order: every dependency runs in an earlier batch.
                for (i, ds) in deps.iter().enumerate() {
                    for &d in ds {
                        prop_assert!(batch_of[d] < batch_of[i], "n{i} in batch {} before its dependency n{d} in {}", batch_of[i], batch_of[d]);
                    }
                }
                // No batch holds two writers of one path (SW-52).
                for batch in &schedule.batches {
                    let mut claimed = std::collections::HashSet::new();
                    for &i in batch {
                        for p in nodes[i].touches.iter().flatten().collect::<std::collections::HashSet<_>>() {
                            prop_assert!(claimed.insert(p), "two writers of {p} in one batch");
                        }
                    }
                }
                // Without touches, a node's batch is its longest dependency chain (SW-55), which
                // petgraph's topological order computes independently.
                if nodes.iter().all(|x| x.touches.is_none()) {
                    let order = petgraph::algo::toposort(&oracle, None).unwrap();
                    let mut level = vec![0usize; n];
                    for v in order {
                        let i = oracle[v];
                        for &d in &deps[i] {
                            level[i] = level[i].max(level[d] + 1);
                        }
                    }
                    prop_assert_eq!(batch_of, level);
                }
            }
        }
    }
}
