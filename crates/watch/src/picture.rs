//! Plans as pictures: a job's dependency graph as a Mermaid flowchart (one subgraph per wave,
//! statuses as classes, held edges dashed) or as plain text.
//!
//! Mermaid renders in GitHub's Markdown (a fenced `mermaid` block) and most Markdown viewers. Every
//! text taken from the checkpoint is written inside a quoted label with Mermaid's entity codes for the
//! characters that could end or change it, so no unit id or title can break the chart; node names are
//! generated (`n0`, `n1`, …), never taken from the checkpoint.

use std::collections::HashMap;
use std::fmt::Write as _;

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
fn groups(job: &Job) -> Vec<(String, String, &[Unit])> {
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

/// The Mermaid flowchart of `job`.
pub fn mermaid(job: &Job) -> String {
    let groups = groups(job);
    let mut node: HashMap<&str, String> = HashMap::new();
    let mut out = String::from("flowchart LR\n");
    for (name, title, units) in &groups {
        let _ = writeln!(out, "  subgraph {name}[\"{}\"]", escape(title));
        out.push_str("    direction TB\n");
        for unit in *units {
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
            node.entry(unit.id.as_str()).or_insert(id);
        }
        out.push_str("  end\n");
    }
    for (_, _, units) in &groups {
        for unit in *units {
            let Some(to) = node.get(unit.id.as_str()) else {
                continue;
            };
            for dep in &unit.depends_on {
                if let Some(from) = node.get(dep.as_str()) {
                    let _ = writeln!(out, "  {from} --> {to}");
                }
            }
        }
    }
    for hold in &job.held {
        if let (Some(from), Some(to)) = (node.get(hold.by.as_str()), node.get(hold.unit.as_str())) {
            let _ = writeln!(out, "  {from} -.->|\"holds {}\"| {to}", escape(&hold.path));
        }
    }
    let mut classes: Vec<(String, Tone, Vec<&str>)> = Vec::new();
    let mut cursor = None;
    for (_, _, units) in &groups {
        for unit in *units {
            let Some(id) = node.get(unit.id.as_str()) else {
                continue;
            };
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

/// `text` for a quoted Mermaid label: the characters that end a label, start an entity or markup, or
/// separate statements are written as Mermaid entity codes (`#34;` …).
///
/// ```
/// assert_eq!(shiftwork_watch::picture::escape(r#"say "hi" <b>#1</b>; done"#),
///            "say #34;hi#34; #60;b#62;#35;1#60;/b#62;#59; done");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '"' | '#' | '<' | '>' | '&' | ';' | '`' | '|' | '\\' => {
                let _ = write!(out, "#{};", u32::from(ch));
            }
            c if c.is_control() => out.push(' '),
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
