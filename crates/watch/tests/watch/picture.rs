//! Plans as pictures (issue 15 item 3): the Mermaid flowchart of the mid-flight plan, which the
//! crate's README shows, and the plain-text form.

use shiftwork_watch::PlanFormat;
use shiftwork_watch::picture::render;

use crate::fixture::{mid_flight, options, sources};

fn mid_flight_job() -> shiftwork_watch::snapshot::Job {
    let fx = mid_flight();
    sources(&fx, &options()).snapshot().jobs.remove(0).body.unwrap()
}

/// Issue 15: one subgraph per wave, statuses as classes, held edges dashed, the cursor marked; and the
/// crate's README and the workspace README show exactly this chart.
#[test]
fn the_mermaid_chart_of_the_mid_flight_plan() {
    let chart = render(&mid_flight_job(), PlanFormat::Mermaid);
    let expected = r##"flowchart LR
  subgraph finished["done or dropped"]
    direction TB
    n0["U1 · Scaffold the crate<br/>done · implementer · agent-ann"]
    n1["U7 · Port the old CLI<br/>dropped · implementer"]
  end
  subgraph wave1["wave 1 · ready"]
    direction TB
    n2["U2 · Write the parser<br/>in_progress · implementer · agent-bob · in flight"]
    n3["U3 · Wire the CLI<br/>todo · implementer · in flight"]
  end
  subgraph wave2["wave 2"]
    direction TB
    n4["U4 · Parser error messages<br/>todo · implementer"]
    n5["U5 · Review the parser<br/>todo · reviewer"]
  end
  subgraph wave3["wave 3"]
    direction TB
    n6["U6 · Release notes<br/>todo · planner"]
  end
  n0 --> n2
  n0 --> n3
  n0 --> n4
  n2 --> n5
  n3 --> n6
  n5 --> n6
  n2 -.->|"holds src/parser.rs"| n4
  classDef done fill:#dcfce7,stroke:#16a34a,color:#0f172a
  classDef dropped fill:#f1f5f9,stroke:#94a3b8,color:#64748b
  classDef in_progress fill:#dbeafe,stroke:#2563eb,color:#0f172a
  classDef todo fill:#f8fafc,stroke:#64748b,color:#0f172a
  class n0 done
  class n1 dropped
  class n2 in_progress
  class n3,n4,n5,n6 todo
  style n2 stroke-width:4px
"##;
    assert_eq!(chart, expected, "{chart}");
    for readme in ["README.md", "../../README.md"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(readme);
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains(&format!("```mermaid\n{expected}```")),
            "{readme} shows the chart"
        );
    }
}

/// Hostile input: ids and titles that try to end a label, open markup or start a statement stay
/// inside their label.
#[test]
fn labels_cannot_break_the_chart() {
    let mut job = mid_flight_job();
    job.waves[0][0].title = String::from(r#"x"] --> evil; click n0 "javascript:alert(1)" <b>#"#);
    let chart = render(&job, PlanFormat::Mermaid);
    let line = chart.lines().find(|l| l.contains("evil")).unwrap();
    assert_eq!(
        line.matches('"').count(),
        2,
        "only the label's own quotes: {line}"
    );
    assert!(
        !line.contains('<') || line.contains("<br/>") && line.matches('<').count() == 1,
        "{line}"
    );
    assert!(
        !line.contains(';') || line.matches(';').count() == line.matches('#').count(),
        "{line}"
    );
}

/// Issue 15: the plain-text form lists the waves with dependencies and marks.
#[test]
fn the_text_picture_of_the_mid_flight_plan() {
    let text = render(&mid_flight_job(), PlanFormat::Text);
    let expected = "job parser-job · 7 units · cursor U2
done or dropped
    U1 done        implementer Scaffold the crate
    U7 dropped     implementer Port the old CLI
wave 1 · ready
  >*U2 in_progress implementer Write the parser  ← U1
   *U3 todo        implementer Wire the CLI  ← U1
wave 2
   ~U4 todo        implementer Parser error messages  ← U1
    U5 todo        reviewer    Review the parser  ← U2
wave 3
    U6 todo        planner     Release notes  ← U3, U5
held
  U4 waits for U2 · src/parser.rs (wave 1)
";
    assert_eq!(text, expected, "{text}");
}

/// The lines a chart may hold, as patterns: the fixed header and subgraph lines, node definitions with
/// one quoted label, edges between generated names, class lines with generated names.
fn line_kind(line: &str) -> Option<&'static str> {
    let label = |s: &str| {
        let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
            return false;
        };
        let inner = without_entities(&inner.replace("<br/>", ""));
        !inner.contains([
            '"', '%', '<', '>', '`', '{', '}', '$', ':', ';', '&', '\'', '|', '[', ']', '(', ')', '\\', '#',
        ]) && !inner.chars().any(shiftwork_seams::echo::is_control_or_bidi)
    };
    let node = |s: &str| {
        s.strip_prefix('n')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    if line == "flowchart LR" || line == "    direction TB" || line == "  end" {
        return Some("fixed");
    }
    if let Some(rest) = line.strip_prefix("  subgraph ") {
        let (name, label_text) = rest.split_once('[')?;
        return (["finished", "unplanned"].contains(&name) || name.starts_with("wave"))
            .then_some(())
            .filter(|()| label_text.strip_suffix(']').is_some_and(label))
            .map(|()| "subgraph");
    }
    if let Some(rest) = line.strip_prefix("    ") {
        let (name, label_text) = rest.split_once('[')?;
        return (node(name) && label_text.strip_suffix(']').is_some_and(label)).then_some("node");
    }
    if let Some(rest) = line.strip_prefix("  ") {
        if let Some((from, to)) = rest.split_once(" --> ") {
            return (node(from) && node(to)).then_some("edge");
        }
        if let Some((from, rest)) = rest.split_once(" -.->|") {
            let (label_text, to) = rest.rsplit_once("| ")?;
            return (node(from) && node(to) && label(label_text)).then_some("hold");
        }
        if let Some(rest) = rest.strip_prefix("classDef ") {
            let (name, _) = rest.split_once(' ')?;
            return name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                .then_some("classDef");
        }
        if let Some(rest) = rest.strip_prefix("class ") {
            let (names, class) = rest.split_once(' ')?;
            return (names.split(',').all(node)
                && class.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .then_some("class");
        }
        if let Some(rest) = rest.strip_prefix("style ") {
            return (rest.strip_suffix(" stroke-width:4px").is_some_and(node)).then_some("style");
        }
    }
    None
}

/// `text` without its Mermaid entity codes (`#37;` …).
fn without_entities(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(';') {
            rest = &after[digits + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Checks that `chart` is inert and faithful to `job`: every line is one of the chart's own
/// statements (labels quoted, holding no `%` or markup), no `%` anywhere, each unit drawn exactly once
/// (node names `n0`, `n1`, … in listing order), and the edges are exactly the dependencies and holds
/// of the units, by position.
fn check_chart(job: &shiftwork_watch::snapshot::Job, chart: &str) {
    assert!(!chart.contains('%'), "a % in the chart:\n{chart}");
    for line in chart.lines() {
        assert!(
            line_kind(line).is_some(),
            "not a statement of ours: {line:?}\n{chart}"
        );
    }
    let listed: Vec<&shiftwork_watch::snapshot::Unit> = job
        .finished
        .iter()
        .chain(job.waves.iter().flatten())
        .chain(&job.unplanned)
        .collect();
    let nodes: Vec<&str> = chart.lines().filter(|l| line_kind(l) == Some("node")).collect();
    assert_eq!(nodes.len(), listed.len(), "each unit once:\n{chart}");
    let name_of = |index: usize| {
        let at = listed.iter().position(|u| u.index == index).unwrap();
        format!("n{at}")
    };
    for (at, line) in nodes.iter().enumerate() {
        assert!(line.starts_with(&format!("    n{at}[")), "{line}");
    }
    let mut edges: Vec<String> = chart
        .lines()
        .filter(|l| matches!(line_kind(l), Some("edge")))
        .map(|l| l.trim().to_owned())
        .collect();
    let mut expected: Vec<String> = listed
        .iter()
        .flat_map(|u| {
            u.depends_on_units
                .iter()
                .filter(|d| listed.iter().any(|v| v.index == **d))
                .map(|&d| format!("{} --> {}", name_of(d), name_of(u.index)))
                .collect::<Vec<_>>()
        })
        .collect();
    edges.sort();
    expected.sort();
    assert_eq!(edges, expected, "{chart}");
    let holds: Vec<String> = chart
        .lines()
        .filter(|l| matches!(line_kind(l), Some("hold")))
        .map(|l| {
            let (from, rest) = l.trim().split_once(' ').unwrap();
            format!("{from} {}", rest.rsplit_once(' ').unwrap().1)
        })
        .collect();
    let expected_holds: Vec<String> = job
        .held
        .iter()
        .map(|h| format!("{} {}", name_of(h.by_index), name_of(h.unit_index)))
        .collect();
    assert_eq!(holds, expected_holds, "{chart}");
}

/// Issue 27 item 12 (class: markup that executes): a title that is a Mermaid directive, `themeCSS`
/// with a remote URL in an id, `%%` comments across lines, HTML, `:::`, `click` and `classDef` in
/// labels — the chart holds no `%` and no statement but its own.
#[test]
fn issue27_item12_mermaid_directives_and_markup_stay_inert() {
    let mut job = mid_flight_job();
    job.waves[0][0].title = String::from("%%{init: {'theme': 'dark'}}%%");
    job.waves[0][1].id =
        String::from("%%{init: {\"themeCSS\": \"@import url(https://evil.example/x.css)\"}}%% U3");
    job.waves[1][0].title = String::from("a %% eaten");
    job.waves[1][1].title = String::from("across %%");
    job.waves[2][0].title = String::from(
        "x\"]:::evil\n  click n0 \"javascript:alert(1)\"\n  classDef evil fill:red <img src=x>`$$x$$`",
    );
    job.held[0].path = String::from("%%{init}%% <b>|x|</b>");
    let chart = render(&job, PlanFormat::Mermaid);
    check_chart(&job, &chart);
    assert!(chart.contains("#37;#37;#123;init#58; #123;#39;theme#39;#58; #39;dark#39;#125;#125;#37;#37;"));
}

/// Issue 27 item 12 (class: each item appears once, under a unique name): two ids that clean to the
/// same text (`U\u{7}x` and `U\u{1b}x` both show as `U\u{fffd}x`) are two units, each drawn once, and
/// the edge from the first to the second is drawn between them, not from a unit to itself.
#[test]
fn issue27_item12_ids_that_look_alike_are_two_units() {
    let checkpoint = r#"{"version": 1, "job": {"id": "j", "goal": "g", "done_definition": "d", "constraints": []},
      "plan": {"cursor": "U\u0007x", "units": [
        {"id": "U\u0007x", "title": "First", "brief_path": "a.md", "status": "todo", "role": "implementer", "depends_on": [], "verify": "true"},
        {"id": "U\u001bx", "title": "Second", "brief_path": "b.md", "status": "todo", "role": "implementer", "depends_on": ["U\u0007x"], "verify": "true"}]},
      "state": {"repo": {"branch": "main", "head_sha": "abc", "dirty": false}, "artifacts": [], "external": []},
      "history": [], "retro": [], "handoff": {"next_action": "Go.", "open_questions": [], "do_not": []}}"#;
    let fs = shiftwork_seams::MemFs::new();
    fs.write_file("/job/checkpoint.json", checkpoint.as_bytes());
    let pane = shiftwork_watch::gather::job(&fs, std::path::Path::new("/job/checkpoint.json"));
    let job = pane.body.unwrap();
    let ids: Vec<(&str, usize)> = job.open_units().map(|u| (u.id.as_str(), u.index)).collect();
    assert_eq!(ids, [("U\u{fffd}x", 0), ("U\u{fffd}x", 1)]);
    let chart = render(&job, PlanFormat::Mermaid);
    check_chart(&job, &chart);
    assert!(chart.contains("  n0 --> n1\n"), "{chart}");
    assert!(chart.contains("n0[\"U\u{fffd}x · First") && chart.contains("n1[\"U\u{fffd}x · Second"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Issue 27 item 12, as a property: for arbitrary ids, titles, statuses, agents and hold paths
    /// (biased towards `%`, quotes, brackets, `:`, markup and control characters), arbitrary
    /// dependencies and holds between units, and any split into finished, waves and unplanned, the
    /// chart is inert, draws each unit once and draws exactly the dependency edges and holds.
    #[test]
    fn issue27_item12_every_chart_is_inert_and_names_each_unit_once(job in arbitrary_jobs()) {
        let chart = render(&job, PlanFormat::Mermaid);
        check_chart(&job, &chart);
    }
}

/// Arbitrary text biased towards what could break a Mermaid chart.
pub fn text() -> impl proptest::strategy::Strategy<Value = String> {
    proptest::string::string_regex(
        "([%\"'`<>{}\\[\\]():;#&|$\\\\\n\r\u{0}-\u{1f}\u{7f}-\u{9f}\u{202e}\u{2028}]|%%|:::|click|classDef|<br/>|[a-z ]|\\PC){0,12}",
    )
    .unwrap()
}

/// The units of an arbitrary plan: id, title, status, agent, group (0 finished, 1 and 2 the waves, 3
/// unplanned) and dependencies by position.
pub type ArbitraryUnits = Vec<(String, String, String, Option<String>, u8, Vec<usize>)>;

/// Jobs of up to 12 arbitrary units and 3 holds, every text from [`text`], for the properties of
/// their pictures.
pub fn arbitrary_jobs() -> impl proptest::strategy::Strategy<Value = shiftwork_watch::snapshot::Job> {
    use proptest::strategy::Strategy as _;
    (
        proptest::collection::vec(
            (
                text(),
                text(),
                text(),
                proptest::option::of(text()),
                0u8..4,
                proptest::collection::vec(0usize..12, 0..4),
            ),
            1..12,
        ),
        proptest::collection::vec((0usize..12, 0usize..12, text()), 0..3),
        text(),
    )
        .prop_map(|(units, holds, title)| arbitrary_job(units, holds, title))
}

/// A job of arbitrary units and holds, titled `title`, for the properties of its pictures.
pub fn arbitrary_job(
    units: ArbitraryUnits,
    holds: Vec<(usize, usize, String)>,
    title: String,
) -> shiftwork_watch::snapshot::Job {
    use shiftwork_watch::snapshot::{Hold, Job, Tone, Unit};
    let n = units.len();
    let mut job = Job {
        id: title.clone(),
        goal: title.clone(),
        cursor: String::new(),
        counts: Vec::new(),
        waves: vec![Vec::new(), Vec::new()],
        unplanned: Vec::new(),
        finished: Vec::new(),
        plan_refusal: None,
        held: Vec::new(),
        budget: None,
        history: Vec::new(),
        questions: Vec::new(),
        clock_outs: Vec::new(),
    };
    for (index, (id, title, status, agent, group, deps)) in units.into_iter().enumerate() {
        let unit = Unit {
            index,
            id,
            title,
            status,
            tone: Tone::Waiting,
            role: String::from("r%%"),
            depends_on: Vec::new(),
            depends_on_units: deps.into_iter().filter(|d| *d < n).collect(),
            agent,
            in_flight: index % 2 == 0,
            is_cursor: index == 0,
            is_held: false,
        };
        match group {
            0 => job.finished.push(unit),
            1 => job.waves[0].push(unit),
            2 => job.waves[1].push(unit),
            _ => job.unplanned.push(unit),
        }
    }
    job.held = holds
        .into_iter()
        .filter(|(a, b, _)| *a < n && *b < n)
        .map(|(a, b, path)| Hold {
            unit: String::new(),
            by: String::new(),
            unit_index: a,
            by_index: b,
            path,
            wave: 1,
        })
        .collect();
    job
}
