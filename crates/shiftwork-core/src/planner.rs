//! The wave planner: level-synchronous Kahn batches with priorities and `touches` holds, in
//! O(nodes + edges + touched paths) when priorities are equal, and `work_plan`.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::json::{Json, Kind, Node, Number};
use crate::refusal::{NodeField, ShiftworkRefusal};
use crate::results::{HeldUnit, WorkPlan};

mod graph;
mod index;
mod plain;

use graph::{Builder, Graph, Nodes, Priorities, Touches};
pub use plain::{PlainNodes, work_plan_text};

/// A node's priority, compared as an exact integer of any magnitude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Priority {
    /// A priority within 128 bits.
    Small(i128),
    /// A priority beyond 128 bits: sign and decimal digits without leading zeros.
    Big {
        /// Whether it is negative.
        negative: bool,
        /// Its decimal digits.
        digits: String,
    },
}

impl Default for Priority {
    fn default() -> Self {
        Priority::Small(0)
    }
}

impl Priority {
    /// The priority of a whole number (`None` for a number with a fraction).
    pub fn from_number(n: &Number) -> Option<Priority> {
        match n {
            Number::Int(i) => Some(Priority::Small(i128::from(*i))),
            Number::BigInt(text) => Some(Self::from_digits(text)),
            Number::Float(f) => {
                if !(f.is_finite() && f.fract() == 0.0) {
                    return None;
                }
                // `{:.0}` prints a whole double's exact decimal expansion.
                Some(Self::from_digits(&format!("{f:.0}")))
            }
        }
    }

    fn from_digits(text: &str) -> Priority {
        if let Ok(v) = text.parse::<i128>() {
            return Priority::Small(v);
        }
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        let digits = digits.trim_start_matches('0');
        Priority::Big {
            negative,
            digits: digits.to_owned(),
        }
    }

    fn parts(&self) -> (bool, std::borrow::Cow<'_, str>) {
        match self {
            Priority::Small(v) => (*v < 0, std::borrow::Cow::Owned(v.unsigned_abs().to_string())),
            Priority::Big { negative, digits } => (*negative, std::borrow::Cow::Borrowed(digits)),
        }
    }
}

impl PartialOrd for Priority {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Priority {
    fn cmp(&self, other: &Self) -> Ordering {
        if let (Priority::Small(a), Priority::Small(b)) = (self, other) {
            return a.cmp(b);
        }
        let (na, da) = self.parts();
        let (nb, db) = other.parts();
        let magnitude = da.len().cmp(&db.len()).then_with(|| da.cmp(&db));
        match (na, nb) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

/// One node of the planner's input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanNode<'a> {
    /// The node's id.
    pub id: &'a str,
    /// The ids it depends on, in declared order.
    pub depends_on: Vec<&'a str>,
    /// Its priority (higher runs first inside a batch).
    pub priority: Priority,
    /// The normalized repo-relative paths it writes, when it declares `touches`.
    pub touches: Option<Vec<String>>,
}

/// A node held out of a batch by a path another node of that batch claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The held node (index into the input).
    pub node: usize,
    /// The first batch it was held out of (0-based).
    pub batch: usize,
    /// The node that claimed the path (index into the input).
    pub by: usize,
    /// The path, normalized.
    pub path: String,
}

/// The planner's answer: batches of input indices and the holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The batches, each a list of input indices in run order.
    pub batches: Vec<Vec<usize>>,
    /// One record per node held at least once, in the order first recorded.
    pub held: Vec<Held>,
}

impl Schedule {
    /// The batches as node ids.
    pub fn batch_ids(&self, nodes: &[PlanNode<'_>]) -> Vec<Vec<String>> {
        self.batches
            .iter()
            .map(|batch| batch.iter().map(|&i| nodes[i].id.to_owned()).collect())
            .collect()
    }

    /// The holds as ids.
    pub fn held_units(&self, nodes: &[PlanNode<'_>]) -> Vec<HeldUnit> {
        self.held_with(|i| nodes[i].id)
    }

    /// The holds, each node named by `id`.
    fn held_with<'n>(&self, id: impl Fn(usize) -> &'n str) -> Vec<HeldUnit> {
        self.held
            .iter()
            .map(|h| HeldUnit {
                id: id(h.node).to_owned(),
                batch: h.batch,
                by: id(h.by).to_owned(),
                path: h.path.clone(),
            })
            .collect()
    }

    /// The longest batch's length, 0 when there are none.
    pub fn width(&self) -> usize {
        self.batches.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// Normalizes a `touches` entry, or `None` when it is not a repo-relative path.
///
/// ```
/// use shiftwork_core::planner::normalize_touch;
/// assert_eq!(normalize_touch("./src//a.rs/").as_deref(), Some("src/a.rs"));
/// assert_eq!(normalize_touch("../x"), None);
/// assert_eq!(normalize_touch("/etc/x"), None);
/// assert_eq!(normalize_touch("."), None);
/// assert_eq!(normalize_touch("C:x"), None);
/// assert_eq!(normalize_touch("a\\b"), None);
/// ```
pub fn normalize_touch(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let mut chars = path.chars();
    if let (Some(letter), Some(':')) = (chars.next(), chars.next())
        && letter.is_ascii_alphabetic()
    {
        return None;
    }
    let mut parts = Vec::new();
    for segment in path.split('/') {
        match segment {
            ".." => return None,
            "" | "." => {}
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// A `touches` value that is not a list of repo-relative paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadTouches;

/// Normalizes a JSON `touches` value: `None` for absent/null, [`BadTouches`] when it is not a list of
/// repo-relative paths.
pub fn touches_of<'a, N: Node<'a>>(value: Option<N>) -> Result<Option<Vec<String>>, BadTouches> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.kind() {
        Kind::Null => Ok(None),
        Kind::Array => value
            .items()
            .map(|item| item.as_str().and_then(normalize_touch).ok_or(BadTouches))
            .collect::<Result<Vec<_>, BadTouches>>()
            .map(Some),
        _ => Err(BadTouches),
    }
}

/// Batches `nodes`: refusals in the fixed order duplicate id, unknown dependency,
/// cycle. (Shape refusals belong to the callers that decode JSON: [`work_plan`] and the batch view.)
///
/// ```
/// use shiftwork_core::planner::{plan, PlanNode};
/// let nodes = vec![
///     PlanNode { id: "a", ..Default::default() },
///     PlanNode { id: "b", depends_on: vec!["a"], ..Default::default() },
/// ];
/// assert_eq!(plan(&nodes).unwrap().batches, vec![vec![0], vec![1]]);
/// ```
pub fn plan(nodes: &[PlanNode<'_>]) -> Result<Schedule, ShiftworkRefusal> {
    let edges = nodes.iter().map(|node| node.depends_on.len()).sum();
    let mut builder = Builder::with_capacity(nodes.len(), edges);
    for node in nodes {
        builder.node(node.id, &node.depends_on, &node.priority, node.touches.as_deref());
    }
    builder.finish()?.schedule()
}

/// The position of the first id of `ids` that an earlier one already has (reading a checkpoint, the planner's
/// duplicate id): the planner's own index, built at its size.
pub(crate) fn first_repeat(ids: &[&str]) -> Option<usize> {
    match index::IdIndex::<u32>::build(ids) {
        Some((_, repeat)) => repeat,
        None => index::IdIndex::<usize>::build(ids).and_then(|(_, repeat)| repeat),
    }
}

/// The planner fed one node at a time, all priorities 0: the batch view of a checkpoint builds
/// its graph so, without a [`PlanNode`] per unit.
#[derive(Debug)]
pub(crate) struct Feed<'a> {
    builder: Builder<'a>,
}

impl<'a> Feed<'a> {
    /// A feed with room for `nodes` nodes and `edges` dependencies.
    pub(crate) fn with_capacity(nodes: usize, edges: usize) -> Self {
        Feed {
            builder: Builder::with_capacity(nodes, edges),
        }
    }

    /// The next node: its id, its dependencies in declared order, its normalized `touches`.
    pub(crate) fn node(
        &mut self,
        id: &'a str,
        depends_on: impl Iterator<Item = &'a str>,
        touches: Option<&[String]>,
    ) {
        self.builder.dependencies().extend(depends_on);
        self.builder.end_node(id, &Priority::Small(0), touches);
    }

    /// The batches and holds, or the first refusal (duplicate id, unknown dependency, cycle).
    pub(crate) fn plan(self) -> Result<Schedule, ShiftworkRefusal> {
        self.builder.finish()?.schedule()
    }
}

impl Nodes<'_> {
    /// The batches and holds of these nodes, or the cycle.
    fn schedule(&self) -> Result<Schedule, ShiftworkRefusal> {
        match &self.touches {
            Some(touches) => batch_with_holds(self, touches),
            None => batch_by_level(self),
        }
    }
}

/// Without `touches`, the batch of a node is its level — 0 without dependencies, else one more than
/// its deepest dependency's — and filling the batches in rank order needs no sort.
fn batch_by_level(nodes: &Nodes<'_>) -> Result<Schedule, ShiftworkRefusal> {
    let kahn;
    let level = match &nodes.levels {
        Some(level) => level,
        None => {
            kahn = kahn_levels(&nodes.ids, &nodes.graph)?;
            &kahn
        }
    };
    let depth = level.iter().max().map_or(0, |deepest| deepest + 1);
    let mut sizes = vec![0usize; depth];
    for &l in level {
        sizes[l] += 1;
    }
    let mut batches: Vec<Vec<usize>> = sizes.iter().map(|&s| Vec::with_capacity(s)).collect();
    // Filled in rank order, every batch is in rank order.
    for i in rank_order(&nodes.priorities) {
        batches[level[i]].push(i);
    }
    Ok(Schedule {
        batches,
        held: Vec::new(),
    })
}

/// The levels by one Kahn pass in any order over the reversed graph, or the cycle.
fn kahn_levels(ids: &[&str], graph: &Graph) -> Result<Vec<usize>, ShiftworkRefusal> {
    let n = graph.len();
    let dependents = graph.reversed();
    let mut indegree: Vec<usize> = (0..n).map(|i| graph.edges(i).len()).collect();
    let mut level = vec![0usize; n];
    let mut order: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut head = 0;
    while let Some(&b) = order.get(head) {
        head += 1;
        for &d in dependents.edges(b) {
            level[d] = level[d].max(level[b] + 1);
            indegree[d] -= 1;
            if indegree[d] == 0 {
                order.push(d);
            }
        }
    }
    if order.len() < n {
        let mut emitted = vec![false; n];
        for &i in &order {
            emitted[i] = true;
        }
        return Err(ShiftworkRefusal::Cycle {
            walk: cycle(ids, graph, &emitted),
        });
    }
    Ok(level)
}

/// With `touches`, batch by batch: the candidates of a batch, in priority then input order,
/// are admitted one by one unless a path of theirs is already claimed in this batch.
///
/// Done naively, a node held out of batch after batch is looked at again in every one of them, which
/// is quadratic when many units touch one path. Here a held node is *parked* on the
/// queue of a path that held it, ordered by rank (the processing order: priority, then input order).
/// A batch looks only at its new candidates and at the head of each parked queue: while a queue's path
/// is unclaimed in this batch, its head is processed in rank order (admitted, or parked again on the
/// path that holds it now) and the next head follows; once the path is claimed, by a node that ranks
/// before everything left on the queue, those nodes are held again without being looked at. So each
/// batch costs its admissions and moves, not its held nodes, and the batches, their order and the
/// first hold of each node are exactly those of the naive rule.
fn batch_with_holds(nodes: &Nodes<'_>, touches: &Touches) -> Result<Schedule, ShiftworkRefusal> {
    let graph = &nodes.graph;
    let dependents = graph.reversed();
    let n = graph.len();
    let order = rank_order(&nodes.priorities);
    let mut rank = vec![0usize; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let mut indegree: Vec<usize> = (0..n).map(|i| graph.edges(i).len()).collect();
    let mut emitted = vec![false; n];
    let mut claimed_in = vec![usize::MAX; touches.paths.len()];
    let mut claimed_by = vec![0usize; touches.paths.len()];
    let mut parked: Vec<BinaryHeap<Reverse<usize>>> = vec![BinaryHeap::new(); touches.paths.len()];
    let mut listed = vec![false; touches.paths.len()];
    let mut with_parked: Vec<usize> = Vec::new();
    let mut plan = Schedule::default();
    let mut fresh: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
    let mut done = 0;
    loop {
        with_parked.retain(|&p| {
            listed[p] = !parked[p].is_empty();
            listed[p]
        });
        if fresh.is_empty() && with_parked.is_empty() {
            break;
        }
        let batch_no = plan.batches.len();
        for &c in &fresh {
            heap.push(Reverse((rank[c], NEW)));
        }
        fresh.clear();
        for &p in &with_parked {
            if let Some(&Reverse(head)) = parked[p].peek() {
                heap.push(Reverse((head, p)));
            }
        }
        let mut batch = Vec::new();
        while let Some(Reverse((r, source))) = heap.pop() {
            #[cfg(debug_assertions)]
            LOOKS.with(|looks| looks.set(looks.get() + 1));
            if source != NEW {
                // The head of a parked queue: if its path is claimed already, the whole queue is held.
                if claimed_in[source] == batch_no || parked[source].peek() != Some(&Reverse(r)) {
                    continue;
                }
                parked[source].pop();
            }
            let c = order[r];
            let held_by = touches.of_node(c).iter().find(|&&p| claimed_in[p] == batch_no);
            match held_by {
                Some(&p) => {
                    if source == NEW {
                        plan.held.push(Held {
                            node: c,
                            batch: batch_no,
                            by: claimed_by[p],
                            path: touches.paths[p].clone(),
                        });
                    }
                    parked[p].push(Reverse(r));
                    if !listed[p] {
                        listed[p] = true;
                        with_parked.push(p);
                    }
                }
                None => {
                    for &p in touches.of_node(c) {
                        claimed_in[p] = batch_no;
                        claimed_by[p] = c;
                    }
                    batch.push(c);
                }
            }
            if source != NEW
                && claimed_in[source] != batch_no
                && let Some(&Reverse(next)) = parked[source].peek()
            {
                heap.push(Reverse((next, source)));
            }
        }
        for &b in &batch {
            emitted[b] = true;
            done += 1;
            for &d in dependents.edges(b) {
                indegree[d] -= 1;
                if indegree[d] == 0 {
                    fresh.push(d);
                }
            }
        }
        plan.batches.push(batch);
    }
    if done < n {
        return Err(ShiftworkRefusal::Cycle {
            walk: cycle(&nodes.ids, graph, &emitted),
        });
    }
    Ok(plan)
}

#[cfg(debug_assertions)]
thread_local! {
    /// How many candidates `batch_with_holds` has looked at on this thread (debug builds only: a
    /// test holds the planner's work to linear).
    static LOOKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The source of a heap entry that is a new candidate rather than the head of a parked queue.
const NEW: usize = usize::MAX;

/// The nodes in the order a batch considers them: higher priority first, then input order.
fn rank_order(priorities: &Priorities) -> Vec<usize> {
    match priorities {
        Priorities::Narrow(p) => rank_narrow(p),
        Priorities::Wide(p) => {
            let mut order: Vec<usize> = (0..p.len()).collect();
            order.sort_unstable_by(|&a, &b| p[b].cmp(&p[a]).then(a.cmp(&b)));
            order
        }
    }
}

/// [`rank_order`] of 64-bit priorities.
fn rank_narrow(p: &[i64]) -> Vec<usize> {
    let n = p.len();
    let mut order: Vec<usize> = (0..n).collect();
    let (low, high) = p
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if n < 2 || low == high {
        return order;
    }
    match usize::try_from(high.abs_diff(low)) {
        // Few distinct values (the usual few priority levels): a counting sort, which keeps input
        // order among equals.
        Ok(span) if span <= 4 * n => {
            let slot = |i: usize| usize::try_from(high.abs_diff(p[i])).unwrap_or(0);
            let mut starts = vec![0usize; span + 2];
            for i in 0..n {
                starts[slot(i) + 1] += 1;
            }
            for k in 1..starts.len() {
                starts[k] += starts[k - 1];
            }
            for i in 0..n {
                let at = &mut starts[slot(i)];
                order[*at] = i;
                *at += 1;
            }
        }
        _ => order.sort_unstable_by_key(|&i| (Reverse(p[i]), i)),
    }
    order
}

/// The cycle sentence's walk: from the first pending node in input order, follow the first
/// declared dependency still pending until an id repeats; the walk from its first occurrence.
fn cycle(ids: &[&str], graph: &Graph, emitted: &[bool]) -> Vec<String> {
    let Some(start) = emitted.iter().position(|e| !e) else {
        return Vec::new();
    };
    let mut seen_at = vec![usize::MAX; ids.len()];
    let mut walk = Vec::new();
    let mut current = start;
    loop {
        if seen_at[current] != usize::MAX {
            let mut cycle: Vec<String> = walk[seen_at[current]..]
                .iter()
                .map(|&i: &usize| ids[i].to_owned())
                .collect();
            cycle.push(ids[current].to_owned());
            return cycle;
        }
        seen_at[current] = walk.len();
        walk.push(current);
        match graph.edges(current).iter().find(|&&d| !emitted[d]) {
            Some(&d) => current = d,
            // Unreachable: a pending node always has a pending dependency.
            None => return vec![ids[current].to_owned(), ids[current].to_owned()],
        }
    }
}

/// `work_plan(nodes)`: decodes `nodes`, refusing shapes first, and runs the planner.
/// Its answer has `held` when a node has a non-null `touches` key. Usable without any seam.
///
/// ```
/// use shiftwork_core::Answer;
/// let nodes = shiftwork_core::json::parse(r#"[{"id": "a", "priority": 0}, {"id": "b", "priority": 1}, {"id": "c", "depends_on": ["a"], "priority": 99}]"#).unwrap();
/// let plan = shiftwork_core::work_plan(&nodes).unwrap();
/// assert_eq!(plan.batches, [vec!["b", "a"], vec!["c"]]);
/// assert_eq!(
///     shiftwork_core::json::to_compact_text(&plan.to_answer()),
///     r#"{"result": "plan", "batches": [["b", "a"], ["c"]], "sequence": ["b", "a", "c"], "width": 2}"#
/// );
/// ```
pub fn work_plan(nodes: &Json) -> Result<WorkPlan<'_>, ShiftworkRefusal> {
    decode_nodes(nodes)?.finish()?.work_plan()
}

impl<'a> Nodes<'a> {
    /// [`work_plan`]'s answer on these nodes: the batches as ids, and `held` when some node has a
    /// non-null `touches`.
    fn work_plan(&self) -> Result<WorkPlan<'a>, ShiftworkRefusal> {
        let schedule = self.schedule()?;
        Ok(WorkPlan {
            batches: schedule
                .batches
                .iter()
                .map(|batch| batch.iter().map(|&i| self.ids[i]).collect())
                .collect(),
            held: self
                .touches
                .is_some()
                .then(|| schedule.held_with(|i| self.ids[i])),
        })
    }
}

/// The nodes of `work_plan`'s value, shapes checked in input order.
fn decode_nodes(nodes: &Json) -> Result<Builder<'_>, ShiftworkRefusal> {
    let items: &[Json] = match nodes {
        Json::Array(items) => items,
        _ => &[],
    };
    let mut builder = Builder::with_capacity(items.len(), 0);
    let mut depends_on = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Json::Object(obj) = item else {
            return Err(ShiftworkRefusal::NodeShape {
                index: i,
                field: None,
            });
        };
        let shape = |field| ShiftworkRefusal::NodeShape {
            index: i,
            field: Some(field),
        };
        let id = obj.get("id").and_then(Json::as_str).ok_or(shape(NodeField::Id))?;
        depends_on.clear();
        match obj.get("depends_on") {
            None | Some(Json::Null) => {}
            Some(Json::Array(deps)) => {
                for d in deps {
                    depends_on.push(d.as_str().ok_or(shape(NodeField::DependsOn))?);
                }
            }
            Some(_) => return Err(shape(NodeField::DependsOn)),
        }
        let priority = match obj.get("priority") {
            None | Some(Json::Null) => Priority::default(),
            Some(Json::Number(n)) => Priority::from_number(n).ok_or(shape(NodeField::Priority))?,
            Some(_) => return Err(shape(NodeField::Priority)),
        };
        let touches = touches_of(obj.get("touches")).map_err(|BadTouches| shape(NodeField::Touches))?;
        builder.node(id, &depends_on, &priority, touches.as_deref());
    }
    Ok(builder)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// The naive rule of SW-52, as the planner had it before issue 12 item 10: every batch sorts all
    /// its candidates — the held ones again — and admits them one by one. The reference for the
    /// parked queues.
    fn naive_holds(nodes: &[PlanNode<'_>]) -> Result<Schedule, ShiftworkRefusal> {
        let n = nodes.len();
        let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, x)| (x.id, i)).collect();
        let mut indegree: Vec<usize> = nodes.iter().map(|x| x.depends_on.len()).collect();
        let mut dependents = vec![Vec::new(); n];
        for (i, x) in nodes.iter().enumerate() {
            for d in &x.depends_on {
                dependents[index[d]].push(i);
            }
        }
        let mut held_once = vec![false; n];
        let mut plan = Schedule::default();
        let mut candidates: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut done = 0;
        while !candidates.is_empty() {
            candidates.sort_by(|&a, &b| nodes[b].priority.cmp(&nodes[a].priority).then(a.cmp(&b)));
            let mut batch = Vec::new();
            let mut next = Vec::new();
            let batch_no = plan.batches.len();
            let mut claimed: HashMap<&str, usize> = HashMap::new();
            for &c in &candidates {
                let paths = nodes[c].touches.as_deref().unwrap_or(&[]);
                if let Some((path, &by)) = paths
                    .iter()
                    .find_map(|p| claimed.get(p.as_str()).map(|by| (p, by)))
                {
                    if !held_once[c] {
                        held_once[c] = true;
                        plan.held.push(Held {
                            node: c,
                            batch: batch_no,
                            by,
                            path: path.clone(),
                        });
                    }
                    next.push(c);
                    continue;
                }
                for p in paths {
                    claimed.entry(p.as_str()).or_insert(c);
                }
                batch.push(c);
            }
            for &b in &batch {
                done += 1;
                for &d in &dependents[b] {
                    indegree[d] -= 1;
                    if indegree[d] == 0 {
                        next.push(d);
                    }
                }
            }
            plan.batches.push(batch);
            candidates = next;
        }
        if done < n {
            return Err(ShiftworkRefusal::Cycle { walk: Vec::new() });
        }
        Ok(plan)
    }

    fn graph() -> impl proptest::strategy::Strategy<Value = Vec<(Vec<usize>, i8, Option<Vec<u8>>)>> {
        use proptest::prelude::*;
        let node = (
            proptest::collection::vec(0usize..40, 0..3),
            prop_oneof![Just(0i8), -2i8..3],
            prop_oneof![Just(None), proptest::collection::vec(0u8..6, 0..4).prop_map(Some)],
        );
        proptest::collection::vec(node, 0..40)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// SW-55: the rank order (counting sort for few distinct priorities, a 64-bit key sort for
        /// spread ones, the exact comparison for wider ones) is the naive sort by priority, then
        /// input order.
        #[test]
        fn rank_order_is_priority_then_input_order(picks in proptest::collection::vec(0usize..12, 0..60), kind in 0u8..3) {
            let values: [i128; 12] = match kind {
                0 => [0, 1, -1, 2, -2, 5, 7, -7, 3, 3, 0, 1],
                1 => [i128::from(i64::MAX), i128::from(i64::MIN), 0, 1, -1, 1 << 40, -(1 << 40), 7, 8, 9, 10, 11],
                _ => [i128::MAX, i128::MIN, i128::from(i64::MAX) + 1, 0, -5, 5, 1, 2, 3, 4, 6, -7],
            };
            let nodes: Vec<PlanNode<'_>> = picks
                .iter()
                .map(|&k| PlanNode { id: "x", priority: Priority::Small(values[k]), ..Default::default() })
                .collect();
            let mut naive: Vec<usize> = (0..nodes.len()).collect();
            naive.sort_by(|&a, &b| nodes[b].priority.cmp(&nodes[a].priority).then(a.cmp(&b)));
            let mut priorities = Priorities::Narrow(Vec::new());
            for node in &nodes {
                priorities.push(&node.priority);
            }
            proptest::prop_assert_eq!(rank_order(&priorities), naive);
        }

        /// Issue 12 item 10: the parked queues give exactly the batches and holds of the naive rule,
        /// with equal and with mixed priorities, on graphs whose edges point backwards (acyclic) or
        /// anywhere (cycles refused by both).
        #[test]
        fn parked_queues_batch_exactly_as_the_naive_rule(spec in graph(), acyclic in proptest::bool::ANY) {
            let ids: Vec<String> = (0..spec.len()).map(|i| format!("n{i}")).collect();
            let paths: Vec<String> = (0..6).map(|i| format!("p{i}")).collect();
            let nodes: Vec<PlanNode<'_>> = spec
                .iter()
                .enumerate()
                .map(|(i, (deps, prio, touches))| PlanNode {
                    id: &ids[i],
                    depends_on: deps
                        .iter()
                        .filter(|&&d| d < spec.len() && (!acyclic || d < i))
                        .map(|&d| ids[d].as_str())
                        .collect(),
                    priority: Priority::Small(i128::from(*prio)),
                    touches: touches
                        .as_ref()
                        .map(|t| t.iter().map(|&p| paths[usize::from(p)].clone()).collect()),
                })
                .collect();
            let with_touches: Vec<PlanNode<'_>> = nodes
                .iter()
                .cloned()
                .map(|mut x| {
                    x.touches.get_or_insert_with(Vec::new);
                    x
                })
                .collect();
            for input in [&nodes, &with_touches] {
                let ours = plan(input);
                let naive = naive_holds(input);
                match (&ours, &naive) {
                    (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
                    (Err(ShiftworkRefusal::Cycle { .. }), Err(ShiftworkRefusal::Cycle { .. })) => {}
                    _ => proptest::prop_assert!(false, "{ours:?} vs {naive:?}"),
                }
            }
        }
    }

    /// SW-55: the levels the builder keeps while every dependency precedes its node are the levels
    /// of the Kahn pass; it keeps none exactly when a dependency does not precede its node.
    #[test]
    fn forward_levels_are_the_kahn_levels_or_absent() {
        proptest::proptest!(|(spec in graph(), backwards in proptest::bool::ANY)| {
            let n = spec.len();
            let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
            let mut builder = Builder::default();
            let mut precede = true;
            for (i, (deps, _, _)) in spec.iter().enumerate() {
                let deps: Vec<&str> = deps
                    .iter()
                    .filter(|&&d| d < n && (!backwards || d < i))
                    .map(|&d| {
                        precede &= d < i;
                        ids[d].as_str()
                    })
                    .collect();
                builder.node(&ids[i], &deps, &Priority::default(), None);
            }
            let nodes = builder.finish().unwrap();
            match &nodes.levels {
                Some(levels) => {
                    proptest::prop_assert!(precede);
                    proptest::prop_assert_eq!(Some(levels.clone()), kahn_levels(&nodes.ids, &nodes.graph).ok());
                }
                None => proptest::prop_assert!(!precede),
            }
        });
    }

    /// Issue 12 item 10: 30,000 units touching one path are held one batch after another; each
    /// batch admits one, and the holds are recorded once per unit.
    #[cfg(debug_assertions)]
    #[test]
    fn many_units_touching_one_path_plan_one_per_batch_issue12_item10() {
        let ids: Vec<String> = (0..30_000).map(|i| format!("u{i}")).collect();
        let nodes: Vec<PlanNode<'_>> = ids
            .iter()
            .map(|id| PlanNode {
                id,
                touches: Some(vec![String::from("Cargo.lock")]),
                ..PlanNode::default()
            })
            .collect();
        LOOKS.with(|looks| looks.set(0));
        let plan = plan(&nodes).unwrap();
        // Linear work: each unit is looked at when it becomes a candidate and when it heads its
        // path's queue, not once per batch it is held in (the naive rule looks 450 million times).
        assert!(
            LOOKS.with(std::cell::Cell::get) <= 2 * 30_000,
            "{}",
            LOOKS.with(std::cell::Cell::get)
        );
        assert_eq!(plan.batches.len(), 30_000);
        assert!(plan.batches.iter().enumerate().all(|(i, b)| b == &[i]));
        assert_eq!(plan.held.len(), 29_999);
        assert_eq!(
            plan.held[0],
            Held {
                node: 1,
                batch: 0,
                by: 0,
                path: String::from("Cargo.lock")
            }
        );
    }
}
