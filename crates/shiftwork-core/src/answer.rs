//! Building answers: every answer is an object whose first key is `result` (SW-44, SW-45).

use crate::json::{Json, Object};
use crate::schema::clip;

/// The most code points of a `reason` (SW-46).
pub const MAX_REASON: usize = 2000;

/// A refusal `{"result": "error", "reason": <sentence>}`, the sentence clipped per SW-46.
///
/// ```
/// let r = shiftwork_core::answer::refusal("unit U9 is not in the plan");
/// assert_eq!(shiftwork_core::json::to_compact_text(&r), r#"{"result": "error", "reason": "unit U9 is not in the plan"}"#);
/// ```
pub fn refusal(reason: &str) -> Json {
    with_reason("error", reason)
}

/// An answer `{"result": <result>, "reason": <sentence>}`.
pub fn with_reason(result: &str, reason: &str) -> Json {
    let mut answer = Object::new();
    answer.insert(String::from("result"), Json::str(result));
    answer.insert(String::from("reason"), Json::String(clip(reason, MAX_REASON)));
    Json::Object(answer)
}

/// An answer object with `result` as its first key.
pub fn start(result: &str) -> Object {
    let mut answer = Object::new();
    answer.insert(String::from("result"), Json::str(result));
    answer
}
