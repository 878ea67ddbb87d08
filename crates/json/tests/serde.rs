//! `Serialize`/`Deserialize` for `Json` (issue 28 item 3): values travel through serde formats with
//! their key order and their numbers' kinds (integers of any width a format holds, `5` against `5.0`),
//! and a number is never written changed.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use proptest::prelude::*;
use serde::Deserialize as _;
use shiftwork_json::{Json, Number, parse};

/// Values whose numbers every JSON text format holds: integers of 64 bits and up to `u64::MAX`,
/// finite floats, strings, nested arrays and objects (key order random).
fn value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::int),
        (i64::MAX as u64 + 1..=u64::MAX).prop_map(|u| Json::Number(Number::from_int_text(&u.to_string()))),
        // Floats of few digits, which serde_json's reader (without `float_roundtrip`) reads exactly.
        (-1_000_000i64..1_000_000, 0u32..4)
            .prop_map(|(m, e)| Json::Number(Number::Float(m as f64 / 10f64.powi(e as i32)))),
        "[ -~é€😀\t\n\"\\\\]{0,8}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            proptest::collection::vec(("[a-zé]{0,3}", inner), 0..6)
                .prop_map(|members| Json::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Issue 28 item 3: a value written by serde_json's text writer and read back by serde is the
    /// same value — key order, integer against float, integers past `i64::MAX` as integers.
    #[test]
    fn issue28_item3_a_value_round_trips_through_serde_json_text(v in value()) {
        let text = serde_json::to_string(&v).unwrap();
        let back: Json = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&back, &v);
        // And through a `serde_json::Value` (which holds these numbers).
        let value = serde_json::to_value(&v).unwrap();
        prop_assert_eq!(Json::deserialize(value).unwrap(), v);
    }

    /// Issue 28 item 3: serde_json's text of a value is this crate's compact text without its spaces
    /// (the same tokens: floats with their fraction, integers without one).
    #[test]
    fn issue28_item3_serde_text_reads_back_with_this_crates_reader(v in value()) {
        let text = serde_json::to_string(&v).unwrap();
        prop_assert_eq!(parse(&text).unwrap(), v);
    }
}

/// Issue 28 item 3: the kinds serde_json's text keeps, checked one by one: `5` and `5.0`, a big
/// integer, an exponent, key order, a repeated key (its first position, its last value).
#[test]
fn issue28_item3_number_kinds_and_key_order_survive() {
    for (text, written) in [
        (r#"{"b": 5, "a": 5.0}"#, r#"{"b":5,"a":5.0}"#),
        (
            "[18446744073709551615, -9223372036854775808]",
            "[18446744073709551615,-9223372036854775808]",
        ),
        ("[1e16, 1e-05, 2.5]", "[1e+16,0.00001,2.5]"),
        (r#"{"k": 1, "z": 2, "k": 3}"#, r#"{"k":3,"z":2}"#),
    ] {
        let v = parse(text).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), written, "{text}");
        let back: Json = serde_json::from_str(written).unwrap();
        assert_eq!(back, v, "{text}");
    }
    let repeated: Json = serde_json::from_str(r#"{"k": 1, "z": 2, "k": 3}"#).unwrap();
    assert_eq!(shiftwork_json::to_compact_text(&repeated), r#"{"k": 3, "z": 2}"#);
}

/// Issue 28 item 3: integers past 64 bits and up to 128 go through serde's 128-bit integers exactly
/// (written by serde_json's text writer, read from a format that gives them); wider ones are never
/// written changed: the serializer refuses them.
#[test]
fn issue28_item3_wide_integers_are_exact_or_refused() {
    let wide =
        parse("[-170141183460469231731687303715884105728, 340282366920938463463374607431768211455]").unwrap();
    assert_eq!(
        serde_json::to_string(&wide).unwrap(),
        "[-170141183460469231731687303715884105728,340282366920938463463374607431768211455]"
    );
    let from_i128 =
        Json::deserialize(serde::de::value::I128Deserializer::<serde::de::value::Error>::new(i128::MIN))
            .unwrap();
    assert_eq!(
        from_i128,
        Json::Number(Number::BigInt(i128::MIN.to_string().into()))
    );
    let from_u128 =
        Json::deserialize(serde::de::value::U128Deserializer::<serde::de::value::Error>::new(u128::MAX))
            .unwrap();
    assert_eq!(
        from_u128,
        Json::Number(Number::BigInt(u128::MAX.to_string().into()))
    );
    let small =
        Json::deserialize(serde::de::value::I128Deserializer::<serde::de::value::Error>::new(-5)).unwrap();
    assert_eq!(small, Json::int(-5), "an integer that fits 64 bits is an Int");
    let huge = parse("123456789012345678901234567890123456789012").unwrap();
    let refused = serde_json::to_string(&huge).unwrap_err().to_string();
    assert!(refused.contains("wider than 128 bits"), "{refused}");
    assert!(
        serde_json::to_value(parse("[-10000000000000000000]").unwrap()).is_err(),
        "a serde_json::Value holds 64 bits"
    );
}

/// Issue 28 item 3: a value inside a program's own serde type.
#[test]
fn issue28_item3_a_json_field_of_a_derived_type() {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Report {
        unit: String,
        extra: Json,
    }
    let report = Report {
        unit: String::from("lexer"),
        extra: parse(r#"{"tokens": 41250, "ratio": 2.0, "tags": ["a", null]}"#).unwrap(),
    };
    let text = serde_json::to_string(&report).unwrap();
    assert_eq!(
        text,
        r#"{"unit":"lexer","extra":{"tokens":41250,"ratio":2.0,"tags":["a",null]}}"#
    );
    assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), report);
}
