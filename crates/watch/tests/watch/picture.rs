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
