//! The snapshot for a web page (issue 38): the plan as an SVG picture — the mid-flight plan drawn as the
//! Mermaid chart draws it, and inert for any text — the page's data document, and the markup escape.

use std::collections::BTreeSet;

use shiftwork_seams::echo::is_control_or_bidi;
use shiftwork_watch::snapshot::Job;
use shiftwork_watch::web::svg::{MAX_DRAWN, Palette, plan};
use shiftwork_watch::web::{document, escape_markup};

use crate::fixture::{mid_flight, options, sources};
use crate::picture::{arbitrary_job, arbitrary_jobs};

/// The elements and attributes a picture may hold: nothing that runs, styles or links.
const ELEMENTS: [&str; 8] = ["svg", "title", "defs", "marker", "path", "g", "rect", "text"];
const ATTRIBUTES: [&str; 24] = [
    "xmlns",
    "width",
    "height",
    "viewBox",
    "font-family",
    "font-size",
    "id",
    "refX",
    "refY",
    "markerWidth",
    "markerHeight",
    "orient",
    "d",
    "fill",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "marker-end",
    "class",
    "x",
    "y",
    "rx",
    "text-anchor",
    "font-weight",
];

/// Checks that `svg` is made of the allowed elements and attributes only, that its text holds no
/// control or bidirectional character and no `&` but a character reference, and that it draws each
/// unit of `job` once (up to the bound) and one arrow per drawn dependency and hold.
fn check_svg(job: &Job, svg: &str) {
    let mut units = 0;
    let mut edges = 0;
    let mut holds = 0;
    for (i, piece) in svg.split('<').enumerate() {
        if i == 0 {
            assert!(piece.is_empty(), "{svg}");
            continue;
        }
        let (tag, text) = piece
            .split_once('>')
            .unwrap_or_else(|| panic!("an unclosed tag in {svg}"));
        let tag = tag.trim_end_matches('/');
        if let Some(name) = tag.strip_prefix('/') {
            assert!(ELEMENTS.contains(&name), "</{name}> in {svg}");
        } else {
            let (name, attributes) = tag.split_once(' ').unwrap_or((tag, ""));
            assert!(ELEMENTS.contains(&name), "<{name}> in {svg}");
            let parts: Vec<&str> = attributes.split('"').collect();
            for pair in parts.chunks(2).filter(|p| p.len() == 2) {
                let attribute = pair[0].trim().trim_end_matches('=');
                assert!(ATTRIBUTES.contains(&attribute), "{attribute}= in <{name}>: {svg}");
                assert!(!pair[1].contains("javascript") && !pair[1].contains('<'), "{svg}");
            }
            units += usize::from(tag == "g class=\"unit\"");
            edges += usize::from(tag.starts_with("path class=\"edge\""));
            holds += usize::from(tag.starts_with("path class=\"held-edge\""));
        }
        for (at, _) in text.match_indices('&') {
            let rest = &text[at..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .iter()
                    .any(|e| rest.starts_with(e)),
                "a bare & in {text:?}"
            );
        }
        assert!(
            !text.trim_end_matches('\n').chars().any(is_control_or_bidi),
            "a control character in {text:?}"
        );
    }
    let listed: Vec<usize> = job
        .finished
        .iter()
        .chain(job.waves.iter().flatten())
        .chain(&job.unplanned)
        .map(|u| u.index)
        .collect();
    let mut drawn: Vec<usize> = Vec::new();
    for index in listed {
        if !drawn.contains(&index) && drawn.len() < MAX_DRAWN {
            drawn.push(index);
        }
    }
    assert_eq!(units, drawn.len(), "each unit once: {svg}");
    let expected_edges: usize = drawn
        .iter()
        .map(|&i| {
            let unit = job
                .finished
                .iter()
                .chain(job.waves.iter().flatten())
                .chain(&job.unplanned)
                .find(|u| u.index == i)
                .unwrap();
            let deps: BTreeSet<usize> = unit
                .depends_on_units
                .iter()
                .copied()
                .filter(|d| drawn.contains(d))
                .collect();
            deps.len()
        })
        .sum();
    assert_eq!(edges, expected_edges, "one arrow per dependency: {svg}");
    let expected_holds = job
        .held
        .iter()
        .filter(|h| drawn.contains(&h.unit_index) && drawn.contains(&h.by_index))
        .count();
    assert_eq!(holds, expected_holds, "one dashed arrow per hold: {svg}");
}

fn mid_flight_job() -> Job {
    let fx = mid_flight();
    sources(&fx, &options()).snapshot().jobs.remove(0).body.unwrap()
}

/// Issue 38 item 5: the mid-flight plan as the picture draws it — the columns of the Mermaid chart,
/// seven boxes, six arrows and the held one, the cursor outlined, a box for each palette's tones.
#[test]
fn issue38_item5_the_picture_of_the_mid_flight_plan() {
    let job = mid_flight_job();
    for palette in [Palette::Light, Palette::Dark] {
        let svg = plan(&job, palette);
        check_svg(&job, &svg);
        for column in ["done or dropped", "wave 1 · ready", "wave 2", "wave 3"] {
            assert!(svg.contains(&format!(">{column}</text>")), "{column}: {svg}");
        }
        assert!(svg.contains("U2 · Write the parser</text>"), "{svg}");
        assert!(svg.contains(">in_progress · implementer</text>"), "{svg}");
        assert!(svg.contains(">agent-bob · in flight · cursor</text>"), "{svg}");
        assert!(svg.contains("holds src/parser.rs</text>"), "{svg}");
        assert_eq!(
            svg.matches("stroke-width=\"4\"").count(),
            1,
            "the cursor alone is outlined"
        );
        assert_eq!(svg.matches("stroke-dasharray=\"6 3\"").count(), 1, "U4 is held");
    }
    assert_ne!(plan(&job, Palette::Light), plan(&job, Palette::Dark));
}

/// Issue 38 item 4: a plan of more than the bound draws the bound and says how many it left out.
#[test]
fn issue38_item4_a_large_plan_is_drawn_within_the_bound() {
    let units = (0..MAX_DRAWN + 25)
        .map(|i| {
            (
                format!("U{i}"),
                String::from("t"),
                String::from("todo"),
                None,
                1u8,
                vec![i.saturating_sub(1)],
            )
        })
        .collect();
    let job = arbitrary_job(units, Vec::new(), String::from("big"));
    let svg = plan(&job, Palette::Light);
    check_svg(&job, &svg);
    assert!(svg.contains("… and 25 more units, not drawn"), "{svg}");
}

/// Issue 38 item 4: the page's data document of the mid-flight snapshot — instants in milliseconds,
/// the job, the queue and the hours — every string as the snapshot holds it.
#[test]
fn issue38_item4_the_data_document_of_the_mid_flight_snapshot() {
    let fx = mid_flight();
    let snapshot = sources(&fx, &options()).snapshot();
    let doc = document::of(&snapshot);
    assert_eq!(doc["now"], snapshot.now.timestamp_millis());
    assert_eq!(doc["zone"], "Europe/London");
    let job = &doc["jobs"][0]["job"];
    assert_eq!(doc["jobs"][0]["checkpoint"], "/repo/.shiftwork/checkpoint.json");
    assert_eq!(
        (job["id"].as_str(), job["cursor"].as_str()),
        (Some("parser-job"), Some("U2"))
    );
    assert_eq!(job["waves"][0][0]["id"], "U2");
    assert_eq!(job["waves"][0][0]["agent"], "agent-bob");
    assert_eq!(
        job["held"][0],
        serde_json::json!({"unit": "U4", "by": "U2", "path": "src/parser.rs", "wave": 1})
    );
    assert_eq!(job["budget"]["dimensions"][0]["limit"], 300_000);
    assert_eq!(job["clock_outs"][0]["unit"], "U2");
    assert_eq!(job["clock_outs"][0]["tokens"], 18_000);
    assert_eq!(job["clock_outs"][1]["agent"], "agent-ann");
    assert_eq!(job["units_left_out"], 0);
    let contracts = &doc["contracts"];
    assert_eq!(contracts["claimed"][0]["holder"], "carol");
    assert_eq!(contracts["waiting"][0]["target"], "frank");
    assert_eq!(contracts["waiting"][0]["deliveries"], 0);
    let failed = contracts["ended"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"] == "FAILED")
        .unwrap();
    assert_eq!(failed["why"], "the fuzzer needs nightly");
    assert_eq!(doc["hours"]["in_hours"], true);
    assert!(doc["hours"]["next_change"].as_i64().unwrap() > doc["now"].as_i64().unwrap());
}

/// Issue 38 item 4: what `escape_markup` writes for each class of character.
#[test]
fn issue38_item4_markup_escapes() {
    let check = |text: &str, expected: &str| assert_eq!(escape_markup(text), expected, "{text:?}");
    check("plain text, 日本語", "plain text, 日本語");
    check("<script>", "&lt;script&gt;");
    check("a & b", "a &amp; b");
    check(r#"" onmouseover='x'"#, "&quot; onmouseover=&#39;x&#39;");
    check("%%{init}%%", "%%{init}%%");
    check("line\nbreak\ttab\r", "line\u{fffd}break\u{fffd}tab\u{fffd}");
    check("\u{1b}[2J\u{9b}\u{7f}", "\u{fffd}[2J\u{fffd}\u{fffd}");
    check("\u{202e}\u{2066}x\u{200f}", "\u{fffd}\u{fffd}x\u{fffd}");
    check("\u{fffe}\u{ffff}", "\u{fffd}\u{fffd}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Issue 38 item 4, as a property: for arbitrary ids, titles, statuses, agents and hold paths
    /// (markup, quotes, `%%` directives, control and bidirectional characters), the picture is made of
    /// its fixed elements and attributes only, escapes every text, and draws each unit once with
    /// exactly the arrows of the plan.
    #[test]
    fn issue38_item4_every_picture_is_inert(job in arbitrary_jobs()) {
        check_svg(&job, &plan(&job, Palette::Light));
        check_svg(&job, &plan(&job, Palette::Dark));
        let doc = document::of(&shiftwork_watch::snapshot::Snapshot {
            now: chrono::DateTime::UNIX_EPOCH,
            zone: chrono_tz::UTC,
            jobs: vec![shiftwork_watch::snapshot::JobPane { checkpoint: String::from("cp"), body: Ok(job) }],
            contracts: None,
            hours: None,
        });
        proptest::prop_assert!(doc["jobs"][0]["job"].is_object());
    }
}
