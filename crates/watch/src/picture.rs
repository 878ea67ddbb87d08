//! Plans as pictures: a job's dependency graph as a Mermaid flowchart (one subgraph per wave,
//! statuses as classes, held edges dashed) or as plain text.
//!
//! Mermaid renders in GitHub's Markdown (a fenced `mermaid` block) and most Markdown viewers. A chart
//! is inert whatever the checkpoint holds:
//!
//! * every text taken from the checkpoint is written inside a quoted label, with every ASCII character
//!   but letters, digits, space and `-_./,` written as Mermaid's entity code (`#37;` for `%`, `#34;`
//!   for `"` …) and every control or bidirectional character as a space, so no text can end a label,
//!   open markup (HTML, a Markdown or KaTeX string) or form a `%%` comment or `%%{init}%%` directive,
//!   and no line of the chart holds a `%`;
//! * node names are generated (`n0`, `n1`, … in the order the units are listed: finished, then the
//!   waves, then the unplanned), never taken from the checkpoint, so no id can name a keyword
//!   (`click`, `style`, `classDef`, `linkStyle`, `:::`), and each unit is drawn once, under its own
//!   name, even when two ids clean to the same text;
//! * edges are resolved by the units' positions in the plan ([`crate::snapshot::Unit::index`]), never
//!   by their shown ids.

use std::collections::HashMap;
use std::fmt::Write as _;

use shiftwork_seams::echo::is_control_or_bidi;

use crate::display_text::{cut, fit};
use crate::snapshot::{Job, Tone, Unit};

/// The longest title shown in a node, in terminal columns.
const TITLE_COLUMNS: usize = 40;

/// The formats of a plan picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// A Mermaid flowchart.
    Mermaid,
    /// Plain text, one wave after another.
    Text,
}

impl PlanFormat {
    /// `mermaid` or `text`.
    pub fn parse(name: &str) -> Option<PlanFormat> {
        match name {
            "mermaid" => Some(PlanFormat::Mermaid),
            "text" => Some(PlanFormat::Text),
            _ => None,
        }
    }
}

/// The picture of `job` in `format`.
pub fn render(job: &Job, format: PlanFormat) -> String {
    match format {
        PlanFormat::Mermaid => mermaid(job),
        PlanFormat::Text => text(job),
    }
}

/// The groups of a picture, in order: finished units, the waves (or the unplanned units).
pub(crate) fn groups(job: &Job) -> Vec<(String, String, &[Unit])> {
    let mut out = Vec::new();
    if !job.finished.is_empty() {
        out.push((
            String::from("finished"),
            String::from("done or dropped"),
            job.finished.as_slice(),
        ));
    }
    for (i, wave) in job.waves.iter().enumerate() {
        let title = if i == 0 {
            String::from("wave 1 · ready")
        } else {
            format!("wave {}", i + 1)
        };
        out.push((format!("wave{}", i + 1), title, wave.as_slice()));
    }
    if !job.unplanned.is_empty() {
        out.push((
            String::from("unplanned"),
            String::from("not planned"),
            job.unplanned.as_slice(),
        ));
    }
    out
}

/// The Mermaid flowchart of `job`. Its node names are `n0`, `n1`, … in the order the units are listed
/// (finished, the waves, the unplanned); edges are drawn between units by their positions in the
/// plan.
///
/// ```
/// use shiftwork_watch::picture::mermaid;
/// use shiftwork_watch::snapshot::{Job, Tone, Unit};
/// let unit = |index: usize, id: &str, deps: Vec<usize>| Unit {
///     index, id: id.into(), title: "T".into(), status: "todo".into(), tone: Tone::Waiting,
///     role: "r".into(), depends_on: Vec::new(), depends_on_units: deps, agent: None,
///     in_flight: false, is_cursor: false, is_held: false,
/// };
/// let job = Job {
///     id: "j".into(), goal: String::new(), cursor: String::new(), counts: Vec::new(),
///     // Two ids that show alike, and a title that tries a directive.
///     waves: vec![vec![unit(0, "U\u{fffd}x", vec![])], vec![unit(1, "U\u{fffd}x", vec![0])]],
///     unplanned: Vec::new(), finished: Vec::new(), plan_refusal: None, held: Vec::new(),
///     budget: None, history: Vec::new(), questions: Vec::new(), clock_outs: Vec::new(),
/// };
/// let chart = mermaid(&job);
/// assert!(chart.contains("n0[\"U\u{fffd}x · T<br/>todo · r\"]") && chart.contains("n1[\""));
/// assert!(chart.contains("  n0 --> n1\n"));
/// ```
pub fn mermaid(job: &Job) -> String {
    let groups = groups(job);
    // Unit position → node name; a unit listed twice is drawn once.
    let mut node: HashMap<usize, String> = HashMap::new();
    let mut out = String::from("flowchart LR\n");
    for (name, title, units) in &groups {
        let _ = writeln!(out, "  subgraph {name}[\"{}\"]", escape(title));
        out.push_str("    direction TB\n");
        for unit in *units {
            if node.contains_key(&unit.index) {
                continue;
            }
            let id = format!("n{}", node.len());
            let mut second = format!("{} · {}", unit.status, unit.role);
            if let Some(agent) = &unit.agent {
                second.push_str(&format!(" · {agent}"));
            }
            if unit.in_flight {
                second.push_str(" · in flight");
            }
            let _ = writeln!(
                out,
                "    {id}[\"{} · {}<br/>{}\"]",
                escape(&unit.id),
                escape(&cut(&unit.title, TITLE_COLUMNS)),
                escape(&second)
            );
            node.insert(unit.index, id);
        }
        out.push_str("  end\n");
    }
    let mut drawn: Vec<usize> = Vec::with_capacity(node.len());
    for (_, _, units) in &groups {
        for unit in *units {
            if drawn.contains(&unit.index) {
                continue;
            }
            drawn.push(unit.index);
            let Some(to) = node.get(&unit.index) else {
                continue;
            };
            for dep in &unit.depends_on_units {
                if let Some(from) = node.get(dep) {
                    let _ = writeln!(out, "  {from} --> {to}");
                }
            }
        }
    }
    for hold in &job.held {
        if let (Some(from), Some(to)) = (node.get(&hold.by_index), node.get(&hold.unit_index)) {
            let _ = writeln!(out, "  {from} -.->|\"holds {}\"| {to}", escape(&hold.path));
        }
    }
    let mut classes: Vec<(String, Tone, Vec<&str>)> = Vec::new();
    let mut cursor = None;
    let mut classed: Vec<usize> = Vec::with_capacity(node.len());
    for (_, _, units) in &groups {
        for unit in *units {
            let Some(id) = node.get(&unit.index) else {
                continue;
            };
            if classed.contains(&unit.index) {
                continue;
            }
            classed.push(unit.index);
            let class = class_name(&unit.status);
            match classes.iter_mut().find(|(c, _, _)| *c == class) {
                Some((_, _, ids)) => ids.push(id),
                None => classes.push((class, unit.tone, vec![id])),
            }
            if unit.is_cursor {
                cursor = Some(id);
            }
        }
    }
    for (class, tone, _) in &classes {
        let _ = writeln!(out, "  classDef {class} {}", class_style(*tone));
    }
    for (class, _, ids) in &classes {
        let _ = writeln!(out, "  class {} {class}", ids.join(","));
    }
    if let Some(id) = cursor {
        let _ = writeln!(out, "  style {id} stroke-width:4px");
    }
    out
}

/// A class name for a status: the known statuses as they are, any other status prefixed and reduced
/// to letters, digits and `_`, so it can never be a Mermaid keyword.
fn class_name(status: &str) -> String {
    match status {
        "todo" | "in_progress" | "done" | "blocked" | "dropped" => status.to_owned(),
        other => {
            let clean: String = other
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("status_{clean}")
        }
    }
}

fn class_style(tone: Tone) -> &'static str {
    match tone {
        Tone::Waiting => "fill:#f8fafc,stroke:#64748b,color:#0f172a",
        Tone::Running => "fill:#dbeafe,stroke:#2563eb,color:#0f172a",
        Tone::Good => "fill:#dcfce7,stroke:#16a34a,color:#0f172a",
        Tone::Warn => "fill:#fef3c7,stroke:#d97706,color:#0f172a",
        Tone::Bad => "fill:#fee2e2,stroke:#dc2626,color:#0f172a",
        Tone::Muted => "fill:#f1f5f9,stroke:#94a3b8,color:#64748b",
    }
}

/// `text` for a quoted Mermaid label, inert: every ASCII character other than a letter, a digit, a
/// space and `-_./,` is written as Mermaid's entity code (`#37;` for `%`, `#34;` for `"`, `#60;` for
/// `<` …), and every control or bidirectional character ([`is_control_or_bidi`]) as a space. So a
/// label never ends early, never holds markup (HTML, a backtick Markdown string, a `$$` KaTeX
/// string), and never holds a `%`, from which a `%%` comment or `%%{init}%%` directive could form.
///
/// ```
/// assert_eq!(shiftwork_watch::picture::escape(r#"say "hi" <b>#1</b>; done"#),
///            "say #34;hi#34; #60;b#62;#35;1#60;/b#62;#59; done");
/// assert_eq!(shiftwork_watch::picture::escape("%%{init: {'theme': 'dark'}}%%"),
///            "#37;#37;#123;init#58; #123;#39;theme#39;#58; #39;dark#39;#125;#125;#37;#37;");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            c if c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '/' | ',') => out.push(c),
            c if c.is_ascii() && !c.is_ascii_control() => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c if is_control_or_bidi(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The plan as plain text: the finished units, the waves in order (`>` marks the cursor, `*` a unit
/// in flight, `~` a held one), each unit with what it depends on, then the holds.
pub fn text(job: &Job) -> String {
    let mut out = String::new();
    let total = job.open_units().count() + job.finished.len();
    let _ = writeln!(out, "job {} · {total} units · cursor {}", job.id, job.cursor);
    if let Some(refusal) = &job.plan_refusal {
        let _ = writeln!(out, "plan refused: {refusal}");
    }
    let groups = groups(job);
    let w = crate::report::Widths::of(groups.iter().flat_map(|(_, _, units)| units.iter()));
    for (_, title, units) in &groups {
        let _ = writeln!(out, "{title}");
        for u in *units {
            let deps = if u.depends_on.is_empty() {
                String::new()
            } else {
                format!("  ← {}", u.depends_on.join(", "))
            };
            let line = format!(
                "  {}{} {} {} {}{deps}",
                crate::report::ascii_marks(u),
                fit(&u.id, w.id),
                fit(&u.status, w.status),
                fit(&u.role, w.role),
                cut(&u.title, TITLE_COLUMNS)
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if !job.held.is_empty() {
        out.push_str("held\n");
        for h in &job.held {
            let _ = writeln!(
                out,
                "  {} waits for {} · {} (wave {})",
                h.unit, h.by, h.path, h.wave
            );
        }
    }
    out
}
