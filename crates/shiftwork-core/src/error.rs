//! The crate's error: every refusal that is a typed condition rather than a one-off sentence. Each
//! variant's `Display` is the exact sentence of the spec (Appendix A).

use crate::json::ParseError;
use crate::schema::SchemaViolation;

/// A refusal of reading a checkpoint or of planning.
///
/// ```
/// let e = shiftwork_core::Error::Cycle(vec!["b".into(), "c".into(), "b".into()]);
/// assert_eq!(e.to_string(), "the graph has a cycle: b -> c -> b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// §4.1 steps 1–2: the file could not be read or decoded; the tail names the file (SW-32, SW-33).
    #[error("checkpoint unreadable: {tail}")]
    Unreadable {
        /// The OS or decode error, rendered as 0.36.2 renders it.
        tail: String,
    },
    /// §4.1 step 4.
    #[error("checkpoint is not parseable as JSON: {0}")]
    NotJson(ParseError),
    /// §4.1 step 5.
    #[error("checkpoint invalid: {0}")]
    Invalid(SchemaViolation),
    /// §4.1 step 6, the planner, follow-ups.
    #[error("duplicate node id {0}")]
    DuplicateId(String),
    /// SW-49 shape refusals: `nodes[<i>] must be an object` or `nodes[<i>].<field> must be …`.
    #[error("{}", node_shape(*index, *field))]
    NodeShape {
        /// The node's 0-based position.
        index: usize,
        /// The field that is wrong, or `None` when the node is not an object.
        field: Option<&'static str>,
    },
    /// SW-49 step 3.
    #[error("node {node} depends on {dependency}, which no node declares")]
    UnknownDependency {
        /// The node.
        node: String,
        /// The dependency nobody declares.
        dependency: String,
    },
    /// SW-53: the walk of one cycle, first id repeated at the end.
    #[error("the graph has a cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
}

fn node_shape(index: usize, field: Option<&str>) -> String {
    match field {
        None => format!("nodes[{index}] must be an object"),
        Some("id") => format!("nodes[{index}].id must be a string"),
        Some("depends_on") => format!("nodes[{index}].depends_on must be a list of strings"),
        Some("priority") => format!("nodes[{index}].priority must be an integer"),
        Some(_) => format!("nodes[{index}].touches must be a list of repo-relative paths"),
    }
}
