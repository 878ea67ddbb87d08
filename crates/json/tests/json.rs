//! `shiftwork-json` against `serde_json` on the texts both accept (issue 13 item 5), and its own round
//! trips: every byte form reads back as the value written.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use proptest::prelude::*;
use serde_json::Value;
use shiftwork_json::{Builder, Emit, Formatter, Json, Kind, Node, Number, Style, Tape, TapeNode, parse};

/// Values of every kind: integers of any size, floats, `NaN`/`Infinity`, strings with escapes and
/// non-ASCII text, nested arrays and objects with repeated keys.
fn value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::int),
        "-?[1-9][0-9]{19,40}".prop_map(|d| Json::Number(Number::from_int_text(&d))),
        any::<f64>().prop_map(|f| Json::Number(Number::Float(f))),
        (-1e6f64..1e6).prop_map(|f| Json::Number(Number::Float(f))),
        "[ -~é€😀\u{7f}\u{2028}\t\n\"\\\\]{0,8}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            proptest::collection::vec(
                (
                    prop_oneof![Just("a".to_owned()), Just("b".to_owned()), "[a-zé]{0,3}"],
                    inner
                ),
                0..6
            )
            .prop_map(|members| Json::Object(members.into_iter().collect())),
        ]
    })
}

/// A text for `value`: one of the writers, possibly spaced out or with a member repeated.
fn text() -> impl Strategy<Value = String> {
    (value(), 0..4u8, any::<bool>()).prop_map(|(v, form, spaced)| {
        let t = match form {
            0 => shiftwork_json::to_compact_text(&v),
            1 => shiftwork_json::to_checkpoint_text(&v),
            2 => shiftwork_json::to_ledger_text(&v),
            _ => shiftwork_json::to_answer_text(&v),
        };
        if spaced { format!(" \t\n{t}\r\n ") } else { t }
    })
}

/// Short texts of JSON's characters, mostly not JSON: the error paths of both readers.
fn junk() -> impl Strategy<Value = String> {
    "[\\[\\]{}\":, 0-9.eE+\\-tnrufalsNI\\\\u]{0,24}"
}

/// True when `a` and `b` are the same double up to serde_json's rounding: without its
/// `float_roundtrip` feature it may miss the nearest double by a few units in the last place, where
/// this crate's reader is exact (Rust's `str::parse`, as Python's `float`).
fn near(a: f64, b: f64) -> bool {
    let ulps = (a.to_bits() as i64)
        .wrapping_sub(b.to_bits() as i64)
        .unsigned_abs();
    a == b || (a.is_finite() && b.is_finite() && a.is_sign_negative() == b.is_sign_negative() && ulps <= 8)
}

/// Our value, as `serde_json` would hold it, against theirs.
fn same(ours: &Json, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::String(a), Value::String(b)) => a == b,
        (Json::Number(n), Value::Number(m)) => match (n, m.as_i64(), m.as_u64()) {
            (Number::Int(a), Some(b), _) => *a == b,
            (Number::BigInt(a), _, Some(b)) => a.as_ref() == b.to_string(),
            (Number::Int(a), None, None) => near(*a as f64, m.as_f64().unwrap()),
            (n, _, _) => near(n.as_f64(), m.as_f64().unwrap()),
        },
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

fn check_against_serde(text: &str) -> Result<(), TestCaseError> {
    let theirs = serde_json::from_str::<Value>(text);
    let ours = parse(text);
    if let Ok(theirs) = theirs {
        // Everything serde_json reads, this crate reads (it accepts more: NaN, deeper nesting).
        let Ok(ours) = ours else {
            return Err(TestCaseError::fail(format!(
                "{text:?}: serde_json reads it, we refuse: {ours:?}"
            )));
        };
        prop_assert!(same(&ours, &theirs), "{text:?}: {ours:?} vs {theirs:?}");
        // And serde_json reads what this crate writes as the same value.
        let written = shiftwork_json::to_compact_text(&ours);
        let again: Value = serde_json::from_str(&written).unwrap();
        prop_assert!(same(&ours, &again), "{written:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn agrees_with_serde_json_on_the_texts_both_accept(text in text()) {
        check_against_serde(&text)?;
    }

    #[test]
    fn agrees_with_serde_json_on_junk_both_accept(text in junk()) {
        check_against_serde(&text)?;
    }

    /// Every byte form reads back as the value written (compared as texts, so `NaN` counts as itself).
    #[test]
    fn every_byte_form_reads_back(v in value()) {
        let compact = shiftwork_json::to_compact_text(&v);
        for written in [
            shiftwork_json::to_compact_text(&v),
            shiftwork_json::to_checkpoint_text(&v),
            shiftwork_json::to_answer_text(&v),
        ] {
            let back = parse(&written).unwrap();
            prop_assert_eq!(shiftwork_json::to_compact_text(&back), compact.clone());
        }
    }

    /// Issue 27 item 6: the bounded checkpoint writer writes the checkpoint text when it fits and
    /// nothing when it does not, exactly at the bound.
    #[test]
    fn the_bounded_checkpoint_writer_stops_exactly_at_its_bound(v in value(), slack in -40i64..40) {
        let text = shiftwork_json::to_checkpoint_text(&v);
        let limit = (text.len() as i64 + slack).max(0) as usize;
        let within = shiftwork_json::to_checkpoint_text_within(&v, limit, 0);
        prop_assert_eq!(within, (text.len() <= limit).then_some(text));
    }

    /// The `structuredContent` text is serde_json's rendering of `to_serde`, byte for byte, whatever
    /// the value (wide integers, `NaN`, non-ASCII and control characters included).
    #[test]
    fn structured_text_is_serde_jsons_rendering_of_to_serde(v in value()) {
        prop_assert_eq!(shiftwork_json::to_structured_text(&v), v.to_serde().to_string());
    }

    /// SW-11: a string in the ASCII forms is Python's `ensure_ascii` escaping, character by character
    /// (the oracle below), and in the answer text only `"`, `\\` and controls are escaped; the byte
    /// scanner of the writer agrees with both on any text.
    #[test]
    fn sw11_strings_escape_as_python_does_character_by_character(s in "[ -~é€😀\u{7f}\u{80}\u{2028}\u{10ffff}\t\n\r\u{1}\u{8}\u{c}\"\\\\]{0,24}") {
        prop_assert_eq!(shiftwork_json::to_compact_text(&Json::String(s.clone())), python_escape(&s, true));
        prop_assert_eq!(shiftwork_json::to_answer_text(&Json::String(s.clone())), python_escape(&s, false));
    }

    /// Every style escaped for a JSON string (the text block spliced into an MCP message) is what
    /// serde_json writes for the unescaped text, without its quotes; and the tokens of a value built
    /// back by `Builder` are that value.
    #[test]
    fn escaped_styles_are_the_json_strings_of_the_texts_and_tokens_build_the_value(v in value()) {
        for (style, text) in [
            (Style::ANSWER, shiftwork_json::to_answer_text(&v)),
            (Style::CHECKPOINT, shiftwork_json::to_checkpoint_text(&v).trim_end_matches('\n').to_owned()),
            (Style::COMPACT, shiftwork_json::to_compact_text(&v)),
            (Style::STRUCTURED, shiftwork_json::to_structured_text(&v)),
        ] {
            let mut escaped = String::new();
            Formatter::new(&mut escaped, style.escaped()).value(&v);
            prop_assert_eq!(format!("\"{escaped}\""), serde_json::to_string(&text).unwrap());
        }
        let mut builder = Builder::default();
        builder.value(&v);
        prop_assert_eq!(shiftwork_json::to_compact_text(&builder.finish()), shiftwork_json::to_compact_text(&v));
    }

    /// `Emit::strings`, which the formatter writes with one separator per array (and each plain item
    /// with short fixed-size moves, so every length from 0 to past 16 bytes, in ASCII and in
    /// multi-byte characters), writes what the array value writes, in every style, nested or not.
    #[test]
    fn strings_write_what_the_array_value_writes(
        items in proptest::collection::vec(prop_oneof!["[a-zé\"\\\n]{0,6}", "[a-z0-9_.-]{0,40}", "[a-zé😀€]{0,12}"], 0..6),
        depth in 0usize..8,
    ) {
        // Nested `depth` objects deep, so that the separator before an item (its indentation) is
        // shorter and longer than the 16 bytes written in one move.
        let array = Json::Array(items.iter().map(|s| Json::String(s.clone())).collect());
        for style in [Style::ANSWER, Style::CHECKPOINT, Style::COMPACT, Style::STRUCTURED] {
            for style in [style, style.escaped()] {
                let (mut by_value, mut by_strings) = (String::new(), String::new());
                let mut f = Formatter::new(&mut by_value, style);
                let mut g = Formatter::new(&mut by_strings, style);
                for _ in 0..depth {
                    f.begin_object();
                    f.key("k");
                    g.begin_object();
                    g.key("k");
                }
                f.value(&array);
                g.strings(items.iter().map(String::as_str));
                for _ in 0..depth {
                    f.end_object();
                    g.end_object();
                }
                prop_assert_eq!(by_strings, by_value);
            }
        }
    }

    /// `plain_run` finds the first quote, backslash or control byte, as a byte-by-byte search does,
    /// wherever it falls in the eight-byte words.
    #[test]
    fn plain_run_stops_where_a_byte_search_stops(bytes in proptest::collection::vec(prop_oneof![
        Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff, Just(b'a'), Just(0x7f), Just(0x80), Just(0xff)
    ], 0..40), skip in 0usize..40) {
        // A plain prefix moves the first stop through every offset of the words.
        let shifted: Vec<u8> = std::iter::repeat_n(b'a', skip).chain(bytes.iter().copied()).collect();
        for input in [&bytes, &shifted] {
            let naive = input.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(input.len());
            prop_assert_eq!(shiftwork_json::plain_run(input), naive);
        }
    }

    /// `pick_members` builds exactly the members `parse` reads, and refuses what `parse` refuses.
    #[test]
    fn picked_members_are_the_parsed_ones(text in prop_oneof![text(), junk()]) {
        let picked = shiftwork_json::pick_members(&text, ["a", "b", "zz"]);
        match parse(&text) {
            Ok(Json::Object(members)) => {
                let picked = picked.unwrap();
                for (slot, key) in picked.iter().zip(["a", "b", "zz"]) {
                    prop_assert_eq!(
                        slot.as_ref().map(shiftwork_json::to_compact_text),
                        members.get(key).map(shiftwork_json::to_compact_text)
                    );
                }
            }
            _ => prop_assert!(picked.is_none()),
        }
    }
}

/// Texts whose objects repeat keys, also through escapes (`"\u0061"` is `a`), nested.
fn repeating() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("\"a\""),
        Just("\"b\""),
        Just("\"\\u0061\""),
        Just("\"c\\n\""),
        Just("\"c\\n\"")
    ];
    let leaf = prop_oneof![
        Just("1".to_owned()),
        Just("\"x\"".to_owned()),
        Just("null".to_owned()),
        Just("-0".to_owned()),
        Just("2.50".to_owned()),
        Just("[]".to_owned()),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(", "))),
            proptest::collection::vec((key.clone(), inner), 0..20).prop_map(|members| {
                let members: Vec<String> = members.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{{{}}}", members.join(", "))
            }),
        ]
    })
}

/// The `Node` readings of a built value and of its tape agree, all the way down.
fn same_reading(built: &Json, placed: TapeNode<'_>) -> Result<(), TestCaseError> {
    prop_assert_eq!(built.kind(), placed.kind());
    prop_assert_eq!(Node::as_str(built), placed.as_str());
    prop_assert_eq!(Node::as_bool(built), placed.as_bool());
    prop_assert_eq!(
        Node::number(built).map(|n| shiftwork_json::format_number(&n)),
        placed.number().map(|n| shiftwork_json::format_number(&n))
    );
    let items: Vec<TapeNode<'_>> = placed.items().collect();
    prop_assert_eq!(Node::items(built).count(), items.len());
    for (a, b) in Node::items(built).zip(items) {
        same_reading(a, b)?;
    }
    let members: Vec<(&str, TapeNode<'_>)> = placed.members().collect();
    prop_assert_eq!(Node::members(built).count(), members.len());
    for ((ka, va), (kb, vb)) in Node::members(built).zip(members) {
        prop_assert_eq!(ka, kb);
        same_reading(va, vb)?;
        let got = placed.get(kb);
        prop_assert!(got.is_some());
        if let Some(got) = got {
            same_reading(va, got)?;
        }
    }
    if built.kind() == Kind::Object {
        prop_assert!(placed.get("no such key").is_none());
    }
    Ok(())
}

/// A text read into a tape: refused with `parse`'s error, or read as `parse`'s value.
fn check_tape(text: &str) -> Result<(), TestCaseError> {
    match (parse(text), Tape::parse(text.to_owned())) {
        (Ok(built), Ok(tape)) => {
            prop_assert_eq!(
                shiftwork_json::to_compact_text(&tape.root().to_json()),
                shiftwork_json::to_compact_text(&built)
            );
            same_reading(&built, tape.root())?;
            prop_assert!(
                tape.extra_bytes() <= 3 * text.len() + 256,
                "{} for {}",
                tape.extra_bytes(),
                text.len()
            );
        }
        (Err(a), Err(b)) => prop_assert_eq!(a, b),
        (a, b) => prop_assert!(false, "parse {:?} but tape {:?}", a.map(|_| ()), b.map(|_| ())),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The tape reads what `parse` reads and refuses what it refuses, with the same message (issue 27
    /// item 7: the lighter document of a checkpoint).
    #[test]
    fn a_tape_reads_and_refuses_as_parse_does(text in prop_oneof![text(), junk(), repeating()]) {
        check_tape(&text)?;
    }

    /// Cut or damaged texts: every error path of the tape is `parse`'s.
    #[test]
    fn a_damaged_text_is_refused_by_the_tape_as_by_parse(text in prop_oneof![text(), repeating()], cut in 0usize..200, byte in any::<u8>()) {
        let mut bytes = text.into_bytes();
        if !bytes.is_empty() {
            let at = cut % bytes.len();
            if byte < 128 {
                bytes[at] = byte;
            } else {
                bytes.truncate(at);
            }
        }
        if let Ok(damaged) = String::from_utf8(bytes) {
            check_tape(&damaged)?;
        }
    }
}

#[test]
fn a_tape_keeps_parses_limits_and_messages() {
    let deep = format!("{}{}", "[".repeat(513), "]".repeat(513));
    assert_eq!(Tape::parse(deep.clone()).unwrap_err(), parse(&deep).unwrap_err());
    let fine = format!("{}{}", "[".repeat(512), "]".repeat(512));
    assert!(Tape::parse(fine).is_ok());
    for text in [
        "",
        "\u{feff}[]",
        "{\"a\": 1} x",
        "[\"\\ud800\"]",
        "[1, 2",
        "-",
        "-Inf",
        "NaNx",
    ] {
        assert_eq!(
            Tape::parse(text.to_owned()).unwrap_err(),
            parse(text).unwrap_err(),
            "{text:?}"
        );
    }
    // The most a tape costs beside its text: an array of empty arrays or strings, two words (eight
    // bytes) for three bytes of text; one-digit numbers take one word for two bytes.
    for dense in [
        format!("[{}0]", "0,".repeat(10_000)),
        format!("[{}[]]", "[],".repeat(10_000)),
        format!("[{}\"\"]", "\"\",".repeat(10_000)),
    ] {
        let extra = Tape::parse(dense.clone()).unwrap().extra_bytes();
        assert!(extra <= 3 * dense.len() + 256, "{extra} for {}", dense.len());
    }
}

#[test]
fn python_messages_and_positions() {
    for (text, message) in [
        ("", "Expecting value: line 1 column 1 (char 0)"),
        ("{\"a\": 1} x", "Extra data: line 1 column 10 (char 9)"),
        ("\n\n  {\"a\": tru}", "Expecting value: line 3 column 9 (char 10)"),
        ("[\"é\" 1]", "Expecting ',' delimiter: line 1 column 6 (char 5)"),
        (
            "{'a': 1}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            "[\"abc",
            "Unterminated string starting at: line 1 column 2 (char 1)",
        ),
        (
            "[\"a\tb\"]",
            "Invalid control character at: line 1 column 4 (char 3)",
        ),
        ("[\"\\x\"]", "Invalid \\escape: line 1 column 3 (char 2)"),
        (
            "[\"\\ud800\"]",
            "Unpaired surrogate escape: line 1 column 3 (char 2)",
        ),
        (
            "\u{feff}[]",
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err().to_string(), message, "{text:?}");
    }
    let deep = format!("{}{}", "[".repeat(513), "]".repeat(513));
    assert!(
        parse(&deep)
            .unwrap_err()
            .to_string()
            .starts_with("Nesting deeper than 512 levels")
    );
    assert!(parse(&format!("{}{}", "[".repeat(512), "]".repeat(512))).is_ok());
}

/// `json.dumps` of one string, written the obvious way: one character at a time, the short escapes
/// from Python's own table.
fn python_escape(s: &str, ascii: bool) -> String {
    const SHORT: [(char, &str); 7] = [
        ('"', "\\\""),
        ('\\', "\\\\"),
        ('\n', "\\n"),
        ('\r', "\\r"),
        ('\t', "\\t"),
        ('\u{8}', "\\b"),
        ('\u{c}', "\\f"),
    ];
    let mut out = String::from("\"");
    for c in s.chars() {
        if let Some((_, short)) = SHORT.iter().find(|(k, _)| *k == c) {
            out.push_str(short);
        } else if (c as u32) < 0x20 || (ascii && (c as u32) >= 0x7f) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}
