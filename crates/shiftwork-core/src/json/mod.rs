//! The JSON of shift work: one value type that keeps key order and number tokens, one reader with
//! 0.36.2's dialect and messages, the byte forms of checkpoint files, ledger lines and answers, and
//! Python rendering for sentences.

mod python;
mod read;
mod schema_node;
mod value;
mod write;

pub use python::{python_repr, python_str, python_string_literal};
pub use read::{LineFacts, MAX_DEPTH, ParseError, ledger_facts, parse, translate_newlines};
pub use schema_node::ShiftJson;
pub use value::{Json, Number, Object, object};
pub use write::{
    format_answer_float, format_float, format_number, python_float_repr, to_answer_text, to_checkpoint_text,
    to_compact_text, to_ledger_text,
};
