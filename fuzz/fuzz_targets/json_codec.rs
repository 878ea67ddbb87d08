//! Arbitrary bytes through `shiftwork-json` (issue 13 item 5): the reader never panics and its error
//! positions lie inside the text; whatever it reads, every writer writes a text that reads back as the
//! same value (compared as texts, so `NaN` counts as itself) and that writing again leaves unchanged;
//! `pick_members` builds exactly the members `parse` reads; and on every text `serde_json` also reads,
//! both read the same strings, keys and integers. `plain_run` stops where a byte search stops; the
//! escaped answer text is serde_json's string of the answer text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shiftwork_json::{Emit, Formatter, Json, Number, Style, parse, pick_members};

fuzz_target!(|data: &[u8]| {
    let naive = data.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
    assert_eq!(shiftwork_json::plain_run(data), naive.unwrap_or(data.len()), "plain_run");
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse(text);
    match &parsed {
        Err(e) => assert!(
            e.char_offset <= text.chars().count(),
            "{e} past the end of {text:?}"
        ),
        Ok(value) => {
            let compact = shiftwork_json::to_compact_text(value);
            let forms: [(fn(&Json) -> String, bool); 4] = [
                (shiftwork_json::to_compact_text, true),
                (shiftwork_json::to_checkpoint_text, true),
                // The ledger form sorts keys, so only its own fixed point is checked.
                (shiftwork_json::to_ledger_text, false),
                (shiftwork_json::to_answer_text, true),
            ];
            for (form, keeps_order) in forms {
                let written = form(value);
                let back = parse(&written).expect("a written text reads back");
                assert_eq!(form(&back), written, "writing again changed {written:?}");
                if keeps_order {
                    assert_eq!(shiftwork_json::to_compact_text(&back), compact, "{written:?}");
                }
            }
            let _ = shiftwork_json::python_repr(value);
            let mut escaped = String::new();
            Formatter::new(&mut escaped, Style::ANSWER.escaped()).value(value);
            let text = shiftwork_json::to_answer_text(value);
            assert_eq!(format!("\"{escaped}\""), serde_json::to_string(&text).unwrap_or_default());
        }
    }
    let picked = pick_members(text, ["unit", "event", "tokens"]);
    match &parsed {
        Ok(Json::Object(members)) => {
            let picked = picked.expect("an object's members are picked");
            for (slot, key) in picked.iter().zip(["unit", "event", "tokens"]) {
                assert_eq!(
                    slot.as_ref().map(shiftwork_json::to_compact_text),
                    members.get(key).map(shiftwork_json::to_compact_text)
                );
            }
        }
        _ => assert!(picked.is_none()),
    }
    if let (Ok(ours), Ok(theirs)) = (&parsed, serde_json::from_str::<serde_json::Value>(text)) {
        assert!(same(ours, &theirs), "{text:?}: {ours:?} vs {theirs:?}");
    }
});

/// Strings, keys, structure and integers exactly; floats are left to the property test (serde_json
/// rounds without `float_roundtrip`).
fn same(ours: &Json, theirs: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::String(a), Value::String(b)) => a == b,
        (Json::Number(Number::Int(a)), Value::Number(m)) => m.as_i64() == Some(*a) || m.is_f64(),
        (Json::Number(_), Value::Number(_)) => true,
        (Json::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (Json::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => false,
    }
}
