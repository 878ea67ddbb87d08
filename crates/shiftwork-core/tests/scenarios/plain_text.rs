//! Issue 16 item 1: `work_plan_text` reads the plain form of `work_plan`'s arguments without a value
//! tree. Its oracle is the general path (parse the text whole, then `work_plan`, SW-49..SW-55): on
//! random argument texts — escapes, nulls, wide and fractional priorities, repeated and unknown
//! members, bad `touches`, odd spacing, broken syntax — whenever it answers, it answers exactly what
//! the general path does, and it answers every text of the plain form. `PlainNodes` reads the same
//! form at the start of a request line: what it takes is valid JSON, answered the same.

use proptest::prelude::*;
use shiftwork_core::Answer;
use shiftwork_core::json::{self as sjson, Json};
use shiftwork_core::planner::{PlainNodes, work_plan_text};

/// One member of a node object as text; `plain` ones are of the plain form.
fn member(plain: bool) -> BoxedStrategy<String> {
    let id = (0..8u8).prop_map(|k| format!(r#""id": "n{k}""#));
    let deps = proptest::collection::vec(0..8u8, 0..4).prop_map(|ks| {
        let items: Vec<String> = ks.iter().map(|k| format!(r#""n{k}""#)).collect();
        format!(r#""depends_on": [{}]"#, items.join(", "))
    });
    let priority = (-100i64..100).prop_map(|p| format!(r#""priority": {p}"#));
    let touches = proptest::collection::vec(
        prop_oneof![
            Just("src/a.rs"),
            Just("./src//a.rs/"),
            Just("b"),
            Just("docs/x.md")
        ],
        0..3,
    )
    .prop_map(|ps| {
        let items: Vec<String> = ps.iter().map(|p| format!(r#""{p}""#)).collect();
        format!(r#""touches": [{}]"#, items.join(","))
    });
    let nulls = prop_oneof![
        Just(r#""depends_on": null"#.to_owned()),
        Just(r#""priority": null"#.to_owned()),
        Just(r#""touches": null"#.to_owned()),
        Just(r#""priority": -0"#.to_owned()),
        Just(r#""depends_on": []"#.to_owned()),
    ];
    if plain {
        return prop_oneof![id, deps, priority, touches, nulls].boxed();
    }
    let odd = prop_oneof![
        Just(r#""id": "n\u0031""#),
        Just(r#""id": 5"#),
        Just(r#""id": null"#),
        Just(r#""depends_on": ["x"]"#),
        Just(r#""depends_on": [1]"#),
        Just(r#""depends_on": "n1""#),
        Just(r#""depends_on": ["n1",]"#),
        Just(r#""priority": 12345678901234567890123"#),
        Just(r#""priority": 1234567890123456789"#),
        Just(r#""priority": 2.0"#),
        Just(r#""priority": 2.5"#),
        Just(r#""priority": 1e2"#),
        Just(r#""priority": 007"#),
        Just(r#""priority": "1""#),
        Just(r#""priority": -"#),
        Just(r#""priority": nul"#),
        Just(r#""touches": ["../x"]"#),
        Just(r#""touches": ["/etc/x"]"#),
        Just(r#""touches": "src""#),
        Just(r#""x": 1"#),
        Just(r#""i\u0064": "n2""#),
        Just("\"id\": \"n\u{1}\""),
        Just(r#""id": "é""#),
    ]
    .prop_map(str::to_owned);
    prop_oneof![4 => member(true), 1 => odd].boxed()
}

/// An argument text: nodes of 0..6 members each (so members repeat or go missing), spaced at random;
/// a general text may also be broken around its nodes.
fn arguments(plain: bool) -> impl Strategy<Value = String> {
    let node = proptest::collection::vec(member(plain), if plain { 1..4 } else { 0..6 });
    (proptest::collection::vec(node, 0..12), any::<bool>(), 0..8u8).prop_map(move |(nodes, spaced, tail)| {
        let sep = if spaced { " \n\t" } else { "" };
        let nodes: Vec<String> = nodes
            .iter()
            .enumerate()
            .map(|(i, members)| {
                let mut members = members.clone();
                if !plain && tail >= 4 {
                    // Most nodes of a general text have an id too, so that it often reads whole.
                    members.insert(0, format!(r#""id": "n{i}""#));
                }
                if plain {
                    // A plain node names its id once, first.
                    members.retain(|m| !m.starts_with(r#""id""#));
                    members.insert(0, format!(r#""id": "n{i}""#));
                    let mut seen = std::collections::HashSet::new();
                    members.retain(|m| seen.insert(m.split(':').next().unwrap_or_default().to_owned()));
                }
                format!("{{{sep}{}{sep}}}", members.join(&format!(",{sep}")))
            })
            .collect();
        let body = format!(
            r#"{{{sep}"nodes"{sep}:{sep}[{}]{sep}}}"#,
            nodes.join(&format!("{sep},"))
        );
        match (plain, tail) {
            (false, 0) => format!("{body} x"),
            (false, 1) => body.replacen("nodes", "nodez", 1),
            (false, 2) => format!(r#"{{"nodes": [], {}"#, &body[1..]),
            (false, 3) => body.trim_end_matches('}').to_owned(),
            _ => body,
        }
    })
}

/// The general path's answer for `text`, when it reads the text as arguments with an array `nodes`.
fn general(text: &str) -> Option<Json> {
    match sjson::parse(text).ok()? {
        Json::Object(members) if members.len() == 1 => members
            .get("nodes")
            .map(|nodes| shiftwork_core::work_plan(nodes).to_answer()),
        _ => None,
    }
}

fn check(text: &str, must_read: bool) -> Result<(), TestCaseError> {
    let fast = work_plan_text(text);
    match &fast {
        Some(fast) => {
            let slow = general(text);
            prop_assert!(slow.is_some(), "read a text the general path does not: {}", text);
            prop_assert_eq!(Some(fast.to_answer()), slow, "{}", text);
        }
        None => prop_assert!(!must_read, "left a plain text to the general path: {}", text),
    }
    // In a request line, what `PlainNodes` reads is valid JSON the general path answers the same,
    // and it reads every text `work_plan_text` reads, up to its closing brace.
    let line = format!(r#"{text}, "name": "work_plan"}}"#);
    match PlainNodes::read(&line) {
        Some(read) => {
            let object = &line[..read.end()];
            prop_assert!(object.ends_with('}'), "{}", line);
            prop_assert_eq!(general(object), Some(read.plan().to_answer()), "{}", line);
            if fast.is_some() {
                prop_assert_eq!(object, text.trim_end(), "{}", line);
            }
        }
        None => prop_assert!(fast.is_none(), "read alone but not in a line: {}", text),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn sw49_sw55_the_plain_reader_answers_as_the_general_path(text in arguments(false)) {
        check(&text, false)?;
    }

    #[test]
    fn sw49_sw55_every_plain_text_is_read(text in arguments(true)) {
        check(&text, true)?;
    }
}
