//! The wave planner (§6): level-synchronous Kahn batches with priorities and `touches` holds, in
//! O(nodes + edges + touched paths) when priorities are equal (SW-55), and the `work_plan` tool.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::error::Error;
use crate::json::{Json, Number, Object};

/// A node's priority, compared as an exact integer of any magnitude (SW-55).
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

/// One node of the planner's input (§6.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanNode<'a> {
    /// The node's id.
    pub id: &'a str,
    /// The ids it depends on, in declared order.
    pub depends_on: Vec<&'a str>,
    /// Its priority (higher runs first inside a batch).
    pub priority: Priority,
    /// The normalized repo-relative paths it writes, when it declares `touches` (SW-50).
    pub touches: Option<Vec<String>>,
}

/// A node held out of a batch by a path another node of that batch claimed (SW-52).
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
pub struct Plan {
    /// The batches, each a list of input indices in run order.
    pub batches: Vec<Vec<usize>>,
    /// One record per node held at least once, in the order first recorded.
    pub held: Vec<Held>,
}

impl Plan {
    /// The longest batch's length, 0 when there are none.
    pub fn width(&self) -> usize {
        self.batches.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// Normalizes a `touches` entry (SW-50), or `None` when it is not a repo-relative path.
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

/// A `touches` value that is not a list of repo-relative paths (SW-50).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadTouches;

/// Normalizes a JSON `touches` value: `None` for absent/null, [`BadTouches`] when it is not a list of
/// repo-relative paths.
pub fn touches_of(value: Option<&Json>) -> Result<Option<Vec<String>>, BadTouches> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(items)) => items
            .iter()
            .map(|item| item.as_str().and_then(normalize_touch).ok_or(BadTouches))
            .collect::<Result<Vec<_>, BadTouches>>()
            .map(Some),
        Some(_) => Err(BadTouches),
    }
}

/// Batches `nodes` (SW-49..SW-55): refusals in the fixed order duplicate id, unknown dependency,
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
pub fn plan(nodes: &[PlanNode<'_>]) -> Result<Plan, Error> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        if index.insert(node.id, i).is_some() {
            return Err(Error::DuplicateId(node.id.to_owned()));
        }
    }
    let mut deps: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let mut list = Vec::with_capacity(node.depends_on.len());
        for dep in &node.depends_on {
            match index.get(dep) {
                Some(&d) => list.push(d),
                None => {
                    return Err(Error::UnknownDependency {
                        node: node.id.to_owned(),
                        dependency: (*dep).to_owned(),
                    });
                }
            }
        }
        deps.push(list);
    }
    batch(nodes, &deps)
}

fn batch(nodes: &[PlanNode<'_>], deps: &[Vec<usize>]) -> Result<Plan, Error> {
    let n = nodes.len();
    let mut indegree: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, list) in deps.iter().enumerate() {
        for &d in list {
            dependents[d].push(i);
        }
    }
    let equal_priorities = nodes.windows(2).all(|w| w[0].priority == w[1].priority);
    let any_touches = nodes.iter().any(|node| node.touches.is_some());
    let mut emitted = vec![false; n];
    let mut held_once = vec![false; n];
    let mut plan = Plan::default();
    let mut candidates: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut done = 0;
    while !candidates.is_empty() {
        if equal_priorities {
            radix_sort(&mut candidates);
        } else {
            candidates.sort_unstable_by(|&a, &b| nodes[b].priority.cmp(&nodes[a].priority).then(a.cmp(&b)));
        }
        let mut batch = Vec::with_capacity(candidates.len());
        let mut next = Vec::new();
        let batch_no = plan.batches.len();
        if any_touches {
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
        } else {
            batch.extend_from_slice(&candidates);
        }
        for &b in &batch {
            emitted[b] = true;
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
        return Err(Error::Cycle(cycle(nodes, deps, &emitted)));
    }
    Ok(plan)
}

/// The cycle sentence's walk (SW-53).
fn cycle(nodes: &[PlanNode<'_>], deps: &[Vec<usize>], emitted: &[bool]) -> Vec<String> {
    let Some(start) = emitted.iter().position(|e| !e) else {
        return Vec::new();
    };
    let mut seen_at: HashMap<usize, usize> = HashMap::new();
    let mut walk = Vec::new();
    let mut current = start;
    loop {
        if let Some(&first) = seen_at.get(&current) {
            let mut ids: Vec<String> = walk[first..]
                .iter()
                .map(|&i: &usize| nodes[i].id.to_owned())
                .collect();
            ids.push(nodes[current].id.to_owned());
            return ids;
        }
        seen_at.insert(current, walk.len());
        walk.push(current);
        match deps[current].iter().find(|&&d| !emitted[d]) {
            Some(&d) => current = d,
            // Unreachable: a pending node always has a pending dependency.
            None => return vec![nodes[current].id.to_owned(), nodes[current].id.to_owned()],
        }
    }
}

/// Sorts indices in O(n) (two 16-bit passes) so equal-priority batching needs no comparison sort.
fn radix_sort(items: &mut Vec<usize>) {
    if items.len() < 64 {
        items.sort_unstable();
        return;
    }
    if items.iter().any(|&i| i > u32::MAX as usize) {
        items.sort_unstable();
        return;
    }
    let mut buffer = vec![0usize; items.len()];
    for shift in [0u32, 16] {
        let mut counts = vec![0usize; 1 << 16];
        for &i in items.iter() {
            counts[(i >> shift) & 0xffff] += 1;
        }
        let mut total = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = total;
            total += here;
        }
        for &i in items.iter() {
            let bucket = &mut counts[(i >> shift) & 0xffff];
            buffer[*bucket] = i;
            *bucket += 1;
        }
        std::mem::swap(items, &mut buffer);
    }
}

/// The `work_plan` tool (§6.4): decodes `nodes`, refusing shapes first (SW-49), runs the planner and
/// answers `{"result": "plan", "batches", "sequence", "width"}` plus `held` when a node has a
/// non-null `touches` key, or `{"result": "error", "reason"}`.
///
/// ```
/// let nodes = shiftwork_core::json::parse(r#"[{"id": "a", "priority": 0}, {"id": "b", "priority": 1}, {"id": "c", "depends_on": ["a"], "priority": 99}]"#).unwrap();
/// let answer = shiftwork_core::work_plan(&nodes);
/// assert_eq!(
///     shiftwork_core::json::to_compact_text(&answer),
///     r#"{"result": "plan", "batches": [["b", "a"], ["c"]], "sequence": ["b", "a", "c"], "width": 2}"#
/// );
/// ```
pub fn work_plan(nodes: &Json) -> Json {
    match decode_nodes(nodes).and_then(|(decoded, has_touches)| {
        let plan = plan(&decoded)?;
        Ok(plan_answer(&decoded, &plan, has_touches))
    }) {
        Ok(answer) => answer,
        Err(e) => crate::answer::refusal(&e.to_string()),
    }
}

fn decode_nodes(nodes: &Json) -> Result<(Vec<PlanNode<'_>>, bool), Error> {
    let items: &[Json] = match nodes {
        Json::Array(items) => items,
        _ => &[],
    };
    let mut out = Vec::with_capacity(items.len());
    let mut has_touches = false;
    for (i, item) in items.iter().enumerate() {
        let Json::Object(obj) = item else {
            return Err(Error::NodeShape {
                index: i,
                field: None,
            });
        };
        let shape = |field| Error::NodeShape {
            index: i,
            field: Some(field),
        };
        let id = obj.get("id").and_then(Json::as_str).ok_or(shape("id"))?;
        let depends_on = match obj.get("depends_on") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(deps)) => deps
                .iter()
                .map(|d| d.as_str().ok_or(shape("depends_on")))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(shape("depends_on")),
        };
        let priority = match obj.get("priority") {
            None | Some(Json::Null) => Priority::default(),
            Some(Json::Number(n)) => Priority::from_number(n).ok_or(shape("priority"))?,
            Some(_) => return Err(shape("priority")),
        };
        let touches = touches_of(obj.get("touches")).map_err(|BadTouches| shape("touches"))?;
        has_touches |= touches.is_some();
        out.push(PlanNode {
            id,
            depends_on,
            priority,
            touches,
        });
    }
    Ok((out, has_touches))
}

/// The planner keys of an answer: `batches`, `sequence`, `width` (and `held` when `with_held`).
pub(crate) fn plan_members(nodes: &[PlanNode<'_>], plan: &Plan, answer: &mut Object, ready: bool) {
    let ids = |batch: &Vec<usize>| Json::Array(batch.iter().map(|&i| Json::str(nodes[i].id)).collect());
    answer.insert(
        String::from("batches"),
        Json::Array(plan.batches.iter().map(ids).collect()),
    );
    if ready {
        answer.insert(
            String::from("ready"),
            plan.batches.first().map(ids).unwrap_or(Json::Array(Vec::new())),
        );
    }
    answer.insert(
        String::from("sequence"),
        Json::Array(
            plan.batches
                .iter()
                .flatten()
                .map(|&i| Json::str(nodes[i].id))
                .collect(),
        ),
    );
    answer.insert(String::from("width"), Json::int(plan.width() as i64));
}

/// The `held` records as JSON (SW-52).
pub(crate) fn held_json(nodes: &[PlanNode<'_>], plan: &Plan) -> Json {
    Json::Array(
        plan.held
            .iter()
            .map(|h| {
                Json::Object(crate::json::object([
                    ("id", Json::str(nodes[h.node].id)),
                    ("batch", Json::int(h.batch as i64)),
                    ("by", Json::str(nodes[h.by].id)),
                    ("path", Json::str(h.path.as_str())),
                ]))
            })
            .collect(),
    )
}

fn plan_answer(nodes: &[PlanNode<'_>], plan: &Plan, has_touches: bool) -> Json {
    let mut answer = Object::new();
    answer.insert(String::from("result"), Json::str("plan"));
    plan_members(nodes, plan, &mut answer, false);
    if has_touches {
        answer.insert(String::from("held"), held_json(nodes, plan));
    }
    Json::Object(answer)
}
