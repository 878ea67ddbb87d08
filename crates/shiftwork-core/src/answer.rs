//! The answers: every typed result rendered as the JSON answer object of its tool, first key
//! `result`, keys in bantamkit's order. This is the one place that knows the shapes of
//! the answers; the adapter and the tests render through it.

use crate::budget::{Budget, BudgetDimension};
use crate::json::{Builder, Emit, Json, Object};
use crate::refusal::ShiftworkRefusal;
use crate::results::{Brief, ClockIn, ClockedOut, Escalation, HeldUnit, Plan, Status, WorkPlan};
use crate::search::SearchResult;

/// The most code points of a `reason`.
pub const MAX_REASON: usize = shiftwork_seams::echo::ECHO_LIMIT;

/// A value with a JSON answer object: the result of an operation, or its refusal.
///
/// ```
/// use shiftwork_core::Answer;
/// let nodes = shiftwork_core::json::parse(r#"[{"id": "a"}, {"id": "a"}]"#).unwrap();
/// let answer = shiftwork_core::work_plan(&nodes).to_answer();
/// assert_eq!(shiftwork_core::json::to_compact_text(&answer), r#"{"result": "error", "reason": "duplicate node id a"}"#);
/// ```
pub trait Answer {
    /// The answer object.
    fn to_answer(&self) -> Json;

    /// The answer object as tokens, for a [`Formatter`](crate::json::Formatter) to write as text
    /// without building the value: [`Answer::to_answer`]'s tokens. The plans, whose answers hold
    /// thousands of ids, write them straight from their fields (and build `to_answer` from these
    /// tokens, so the shape has one home).
    fn emit<E: Emit>(&self, out: &mut E) {
        out.value(&self.to_answer());
    }

    /// About how long the one-line text of the answer is, in bytes: room to write it into without
    /// growing the buffer again and again (a guess; a plan of thousands of ids says its size).
    fn size_hint(&self) -> usize {
        4096
    }
}

impl<T: Answer> Answer for Result<T, ShiftworkRefusal> {
    fn to_answer(&self) -> Json {
        match self {
            Ok(value) => value.to_answer(),
            Err(refusal) => refusal.to_answer(),
        }
    }

    fn emit<E: Emit>(&self, out: &mut E) {
        match self {
            Ok(value) => value.emit(out),
            Err(refusal) => refusal.emit(out),
        }
    }

    fn size_hint(&self) -> usize {
        match self {
            Ok(value) => value.size_hint(),
            Err(refusal) => refusal.size_hint(),
        }
    }
}

/// The value of the tokens `emit` writes.
fn built(emit: impl FnOnce(&mut Builder)) -> Json {
    let mut builder = Builder::default();
    emit(&mut builder);
    builder.finish()
}

impl Answer for ShiftworkRefusal {
    fn to_answer(&self) -> Json {
        refusal(&self.to_string())
    }
}

/// A refusal `{"result": "error", "reason": <sentence>}`, the sentence clipped to 2,000 code points.
///
/// ```
/// let r = shiftwork_core::answer::refusal("unit U9 is not in the plan");
/// assert_eq!(shiftwork_core::json::to_compact_text(&r), r#"{"result": "error", "reason": "unit U9 is not in the plan"}"#);
/// ```
pub fn refusal(reason: &str) -> Json {
    with_reason("error", reason)
}

/// An answer `{"result": <result>, "reason": <sentence>}`.
fn with_reason(result: &str, reason: &str) -> Json {
    let mut answer = start(result);
    answer.insert(String::from("reason"), reason_value(reason));
    Json::Object(answer)
}

fn reason_value(reason: &str) -> Json {
    Json::String(shiftwork_seams::echo::clip(reason, MAX_REASON))
}

/// An answer object with `result` as its first key.
fn start(result: &str) -> Object {
    let mut answer = Object::default();
    answer.insert(String::from("result"), Json::str(result));
    answer
}

fn int(n: usize) -> Json {
    crate::budget::int(n as i128)
}

/// About how long a plan answer's one-line text is: each id twice (`batches`, `sequence`), quoted with
/// its comma, and room for the rest.
fn plan_size<S: AsRef<str>>(batches: &[Vec<S>]) -> usize {
    let ids: usize = batches.iter().flatten().map(|id| id.as_ref().len() + 3).sum();
    2 * ids + 4096
}

/// The opening of a plan answer: `{"result": "plan"`, `batches`, (`ready`,) `sequence`, `width`.
fn begin_plan<E: Emit, S: AsRef<str>>(out: &mut E, batches: &[Vec<S>], with_ready: bool) {
    out.begin_object();
    out.key("result");
    out.string("plan");
    out.key("batches");
    out.begin_array();
    for batch in batches {
        out.strings(batch.iter().map(AsRef::as_ref));
    }
    out.end_array();
    if with_ready {
        out.key("ready");
        out.strings(batches.first().into_iter().flatten().map(AsRef::as_ref));
    }
    out.key("sequence");
    out.strings(batches.iter().flatten().map(AsRef::as_ref));
    out.key("width");
    out.count(batches.iter().map(Vec::len).max().unwrap_or(0));
}

fn held<E: Emit>(out: &mut E, records: &[HeldUnit]) {
    out.key("held");
    out.begin_array();
    for h in records {
        out.begin_object();
        out.key("id");
        out.string(&h.id);
        out.key("batch");
        out.count(h.batch);
        out.key("by");
        out.string(&h.by);
        out.key("path");
        out.string(&h.path);
        out.end_object();
    }
    out.end_array();
}

impl Answer for WorkPlan<'_> {
    /// `{"result": "plan", "batches", "sequence", "width"}` plus `held`.
    fn to_answer(&self) -> Json {
        built(|b| self.emit(b))
    }

    fn emit<E: Emit>(&self, out: &mut E) {
        begin_plan(out, &self.batches, false);
        if let Some(records) = &self.held {
            held(out, records);
        }
        out.end_object();
    }

    fn size_hint(&self) -> usize {
        plan_size(&self.batches)
    }
}

impl Answer for Plan {
    /// `{"result": "plan", "batches", "ready", "sequence", "width", "cursor"}` plus `held`, `budget`,
    /// `ranking` and `winner`.
    fn to_answer(&self) -> Json {
        built(|b| self.emit(b))
    }

    fn size_hint(&self) -> usize {
        plan_size(&self.batches)
    }

    fn emit<E: Emit>(&self, out: &mut E) {
        begin_plan(out, &self.batches, true);
        out.key("cursor");
        out.string(self.cursor.as_str());
        if let Some(records) = &self.held {
            held(out, records);
        }
        if let Some(budget) = &self.budget {
            out.key("budget");
            budget.emit(out);
        }
        if let Some(ranking) = &self.ranking {
            out.key("ranking");
            out.begin_array();
            for r in ranking {
                out.begin_object();
                out.key("id");
                out.string(&r.id);
                out.key("score");
                out.string(&r.score);
                out.key("sha");
                out.string(&r.sha);
                out.end_object();
            }
            out.end_array();
            out.key("winner");
            match self.winner() {
                Some(winner) => out.string(winner),
                None => out.literal(crate::json::Literal::Null),
            }
        }
        out.end_object();
    }
}

impl Answer for Budget {
    /// The plan's `budget` object.
    fn to_answer(&self) -> Json {
        let dims = |f: &dyn Fn(BudgetDimension, i128) -> i128| {
            Json::Object(
                self.limits
                    .iter()
                    .map(|&(dim, limit)| (dim.as_str().to_owned(), crate::budget::int(f(dim, limit))))
                    .collect::<Object>(),
            )
        };
        Json::Object(crate::json::object([
            ("limit", dims(&|_, limit| limit)),
            ("spent", dims(&|dim, _| self.spent(dim))),
            ("in_flight", Json::strings(&self.in_flight)),
            ("remaining", dims(&|dim, limit| self.remaining(dim, limit))),
            ("per_unit", crate::budget::int(self.per_unit)),
            ("affordable", crate::budget::int(self.affordable())),
        ]))
    }
}

impl Answer for Status {
    /// `{"result": "status", "cursor", "units", "open_questions", "last_history"}` plus `search`.
    fn to_answer(&self) -> Json {
        let mut out = start("status");
        out.insert(String::from("cursor"), Json::str(self.cursor().as_str()));
        out.insert(
            String::from("units"),
            Json::Object(
                self.units()
                    .iter()
                    .map(|(status, n)| (status.as_str().to_owned(), int(*n)))
                    .collect(),
            ),
        );
        out.insert(String::from("open_questions"), int(self.open_questions()));
        out.insert(
            String::from("last_history"),
            self.last_history_json.clone().unwrap_or(Json::Null),
        );
        if let Some(search) = self.search() {
            out.insert(String::from("search"), search.to_answer());
        }
        Json::Object(out)
    }
}

impl Answer for SearchResult {
    /// `{"query", "matches": [{"file", "line", "text"}], "truncated"}`; the query echoed up to
    /// 2,000 code points.
    fn to_answer(&self) -> Json {
        let matches = self
            .matches
            .iter()
            .map(|m| {
                Json::Object(crate::json::object([
                    ("file", Json::str(m.file.as_str())),
                    ("line", int(m.line)),
                    ("text", Json::str(m.text.as_str())),
                ]))
            })
            .collect();
        Json::Object(crate::json::object([
            (
                "query",
                Json::String(shiftwork_seams::echo::clip_echo(&self.query)),
            ),
            ("matches", Json::Array(matches)),
            ("truncated", Json::Bool(self.truncated)),
        ]))
    }
}

impl Answer for ClockIn {
    /// `brief`, `escalate` or `success`.
    fn to_answer(&self) -> Json {
        match self {
            ClockIn::Brief(brief) => brief.to_answer(),
            ClockIn::Escalate(escalation) => escalation.to_answer(),
            ClockIn::AllDone => with_reason("success", "all units done or dropped"),
        }
    }
}

impl Answer for Brief {
    /// `{"result": "brief", "unit", "role", "invariants", "handoff", "do_not", "files"}` plus
    /// `agreements` and `upstream`, the unit, the handoff and the files as the checkpoint holds them.
    fn to_answer(&self) -> Json {
        self.answer.clone()
    }
}

impl Answer for Escalation {
    /// `{"result": "escalate", "reason"}`, plus `open_questions` and `probe` for an open question.
    fn to_answer(&self) -> Json {
        let mut out = start("escalate");
        out.insert(String::from("reason"), reason_value(&self.to_string()));
        if let Escalation::OpenQuestion {
            open_questions,
            probe,
            ..
        } = self
        {
            out.insert(
                String::from("open_questions"),
                Json::Array(open_questions.json.clone()),
            );
            if let Some(p) = probe {
                out.insert(
                    String::from("probe"),
                    Json::Object(crate::json::object([
                        ("q", Json::str(p.question.as_str())),
                        ("exit", p.exit.map_or(Json::Null, |e| Json::int(i64::from(e)))),
                    ])),
                );
            }
        }
        Json::Object(out)
    }
}

impl Answer for ClockedOut {
    /// `{"result": "ok", "unit", "status", "cursor", "log"}`.
    fn to_answer(&self) -> Json {
        Json::Object(crate::json::object([
            ("result", Json::str("ok")),
            ("unit", Json::str(self.unit.as_str())),
            ("status", Json::str(self.status.as_str())),
            ("cursor", Json::str(self.cursor.as_str())),
            ("log", Json::str(self.log.as_str())),
        ]))
    }
}
