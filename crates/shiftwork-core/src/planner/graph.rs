//! The planner's input as one compact graph, built by the one [`Builder`] every reader feeds (the
//! `PlanNode` slice of [`super::plan`], the value tree of [`super::work_plan`] and the plain reader of
//! its arguments): the nodes are collected in input order (ids and dependencies borrowed, priorities
//! kept in 64 bits while they fit, touched paths interned), then resolved in two passes — the ids into
//! an index ([`IdIndex`]), each dependency into an input position — the second of which also finds
//! the levels when every dependency precedes its node. So the refusals duplicate id and unknown
//! dependency have one home.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use super::Priority;
use super::index::IdIndex;
use crate::refusal::ShiftworkRefusal;

/// A graph in compressed rows: the edges of node `i` are `deps[starts[i]..starts[i + 1]]`, in
/// declared order (a repeated edge stays repeated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Graph {
    pub(super) starts: Vec<usize>,
    pub(super) deps: Vec<usize>,
}

impl Graph {
    pub(super) fn edges(&self, i: usize) -> &[usize] {
        &self.deps[self.starts[i]..self.starts[i + 1]]
    }

    pub(super) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// The reversed graph: for each node, the nodes that depend on it, in input order.
    pub(super) fn reversed(&self) -> Graph {
        let n = self.len();
        let mut counts = vec![0usize; n + 1];
        for &d in &self.deps {
            counts[d + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut deps = vec![0usize; self.deps.len()];
        for i in 0..n {
            for &d in self.edges(i) {
                deps[fill[d]] = i;
                fill[d] += 1;
            }
        }
        Graph { starts: counts, deps }
    }
}

/// The nodes' priorities: 64-bit integers while every one fits (the usual case, sorted by key), else
/// exact ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Priorities {
    Narrow(Vec<i64>),
    Wide(Vec<Priority>),
}

impl Priorities {
    /// Appends the next node's priority.
    pub(super) fn push(&mut self, priority: &Priority) {
        match self {
            Priorities::Narrow(values) => match priority {
                Priority::Small(p) if let Ok(p) = i64::try_from(*p) => values.push(p),
                _ => {
                    let mut wide: Vec<Priority> =
                        values.iter().map(|&p| Priority::Small(i128::from(p))).collect();
                    wide.push(priority.clone());
                    *self = Priorities::Wide(wide);
                }
            },
            Priorities::Wide(values) => values.push(priority.clone()),
        }
    }
}

/// The `touches` paths of the nodes, interned: each distinct path an index into `paths`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Touches {
    pub(super) paths: Vec<String>,
    starts: Vec<usize>,
    ids: Vec<usize>,
    index: HashMap<String, usize, RandomState>,
}

impl Touches {
    /// The path indices of node `i`, in declared order.
    pub(super) fn of_node(&self, i: usize) -> &[usize] {
        &self.ids[self.starts[i]..self.starts[i + 1]]
    }
}

/// The planner's whole input, every dependency resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Nodes<'a> {
    pub(super) ids: Vec<&'a str>,
    pub(super) graph: Graph,
    pub(super) priorities: Priorities,
    /// Present when some node has a non-null `touches` (then every node has its row, maybe empty).
    pub(super) touches: Option<Touches>,
    /// Each node's level (0 without dependencies, else one more than its deepest dependency's), when
    /// every dependency precedes its node.
    pub(super) levels: Option<Vec<usize>>,
}

/// Collects the nodes one at a time, in input order, for [`Builder::finish`].
#[derive(Debug, Clone)]
pub(super) struct Builder<'a> {
    ids: Vec<&'a str>,
    /// The dependencies by id, in compressed rows (`starts` as in [`Graph`]).
    depends_on: Vec<&'a str>,
    starts: Vec<usize>,
    priorities: Priorities,
    touches: Option<Touches>,
}

impl Default for Builder<'_> {
    fn default() -> Self {
        Builder::with_capacity(0, 0)
    }
}

impl<'a> Builder<'a> {
    /// A builder with room for `nodes` nodes and `edges` dependencies.
    pub(super) fn with_capacity(nodes: usize, edges: usize) -> Self {
        let mut starts = Vec::with_capacity(nodes + 1);
        starts.push(0);
        Builder {
            ids: Vec::with_capacity(nodes),
            depends_on: Vec::with_capacity(edges),
            starts,
            priorities: Priorities::Narrow(Vec::with_capacity(nodes)),
            touches: None,
        }
    }

    /// Room for `nodes` more nodes and `edges` more dependencies.
    pub(super) fn reserve(&mut self, nodes: usize, edges: usize) {
        self.ids.reserve(nodes);
        self.starts.reserve(nodes);
        if let Priorities::Narrow(values) = &mut self.priorities {
            values.reserve(nodes);
        }
        self.depends_on.reserve(edges);
    }

    /// How many nodes and dependencies were added so far.
    pub(super) fn counts(&self) -> (usize, usize) {
        (self.ids.len(), self.depends_on.len())
    }

    /// Where the dependencies of the next node go, in declared order, before [`Builder::end_node`].
    pub(super) fn dependencies(&mut self) -> &mut Vec<&'a str> {
        &mut self.depends_on
    }

    /// Adds the next node: its id, its dependencies in declared order, its priority and its
    /// normalized `touches` (`None` when absent or null).
    pub(super) fn node(
        &mut self,
        id: &'a str,
        depends_on: &[&'a str],
        priority: &Priority,
        touches: Option<&[String]>,
    ) {
        self.depends_on.extend_from_slice(depends_on);
        self.end_node(id, priority, touches);
    }

    /// Adds the next node as [`Builder::node`] does, its dependencies those put in
    /// [`Builder::dependencies`] since the last node.
    pub(super) fn end_node(&mut self, id: &'a str, priority: &Priority, touches: Option<&[String]>) {
        let i = self.ids.len();
        self.ids.push(id);
        self.starts.push(self.depends_on.len());
        self.priorities.push(priority);
        if let Some(paths) = touches {
            let table = self.touches.get_or_insert_with(|| Touches {
                starts: vec![0; i + 1],
                ..Touches::default()
            });
            for path in paths {
                let p = match table.index.get(path.as_str()) {
                    Some(&p) => p,
                    None => {
                        table.paths.push(path.clone());
                        table.index.insert(path.clone(), table.paths.len() - 1);
                        table.paths.len() - 1
                    }
                };
                table.ids.push(p);
            }
        }
        if let Some(table) = &mut self.touches {
            table.starts.push(table.ids.len());
        }
    }

    /// The nodes with every dependency resolved, or the first refusal in the planner's order: the first
    /// duplicate id, else the first unknown dependency (nodes in input order, dependencies in
    /// declared order).
    pub(super) fn finish(self) -> Result<Nodes<'a>, ShiftworkRefusal> {
        match self.resolve() {
            (nodes, None) => Ok(nodes),
            (_, Some(refusal)) => Err(refusal),
        }
    }

    /// The nodes and, when they cannot be planned, [`Builder::finish`]'s refusal (then the graph has
    /// no edges, and the nodes serve only to name their ids).
    ///
    /// One pass interns the ids (the first node with an id keeps it); a second resolves each
    /// dependency and, while every one so far precedes its node, keeps the levels.
    pub(super) fn resolve(self) -> (Nodes<'a>, Option<ShiftworkRefusal>) {
        match IdIndex::<u32>::build(&self.ids) {
            Some((index, duplicate)) => self.resolve_with(duplicate, |ids, id| index.get(ids, id)),
            None => match IdIndex::<usize>::build(&self.ids) {
                Some((index, duplicate)) => self.resolve_with(duplicate, |ids, id| index.get(ids, id)),
                // Unreachable: a slice holds fewer than usize::MAX ids.
                None => self.resolve_with(None, |_, _| None),
            },
        }
    }

    /// [`Builder::resolve`] with the first duplicate found and the index of the ids.
    fn resolve_with(
        self,
        duplicate: Option<usize>,
        index: impl Fn(&[&str], &str) -> Option<usize>,
    ) -> (Nodes<'a>, Option<ShiftworkRefusal>) {
        let n = self.ids.len();
        let mut graph = Graph {
            starts: self.starts,
            deps: Vec::with_capacity(self.depends_on.len()),
        };
        let mut levels = Some(Vec::with_capacity(n));
        let refusal = match duplicate {
            Some(i) => Some(ShiftworkRefusal::DuplicateId {
                id: self.ids[i].to_owned(),
            }),
            None => (0..n).find_map(|i| {
                let mut level = 0;
                for &dep in &self.depends_on[graph.starts[i]..graph.starts[i + 1]] {
                    let Some(d) = index(&self.ids, dep) else {
                        return Some(ShiftworkRefusal::UnknownDependency {
                            node: self.ids[i].to_owned(),
                            dependency: dep.to_owned(),
                        });
                    };
                    graph.deps.push(d);
                    match levels.as_ref().and_then(|levels: &Vec<usize>| levels.get(d)) {
                        Some(&l) => level = level.max(l + 1),
                        // A later node or the node itself: the levels need the Kahn pass.
                        None => levels = None,
                    }
                }
                if let Some(levels) = &mut levels {
                    levels.push(level);
                }
                None
            }),
        };
        if refusal.is_some() {
            // Nodes without edges: what was resolved before the refusal is not a graph.
            graph = Graph {
                starts: vec![0; n + 1],
                deps: Vec::new(),
            };
        }
        let nodes = Nodes {
            ids: self.ids,
            graph,
            priorities: self.priorities,
            touches: self.touches,
            levels,
        };
        (nodes, refusal)
    }
}
