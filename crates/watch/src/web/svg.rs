//! A job's plan as an SVG picture: the same picture as [`crate::picture::mermaid`] — one column per
//! wave (finished units first, the unplanned last), one box per unit with its id, title, status, role
//! and agent, an arrow per dependency, a dashed arrow from the unit that holds a file to the unit it
//! holds out of a wave, the cursor drawn with a thick border — laid out here, so no program between
//! the plan and the page parses a text format.
//!
//! The picture is inert by construction: it is made of fixed elements (`svg`, `title`, `defs`,
//! `marker`, `g`, `rect`, `path`, `text`) with attributes whose values are numbers or words of this
//! module; the only text from the plan is the content of `title` and `text` elements, written through
//! [`super::escape_markup`]. No `script`, no `style`, no `foreignObject`, no link, no reference
//! outside the picture but the arrow marker's `url(#…)`. Colours are presentation attributes (not
//! `style`), so a page with a strict Content-Security-Policy shows it as drawn; two palettes, for a
//! light and a dark page.
//!
//! Large plans are bounded: at most [`MAX_DRAWN`] units are drawn, in the columns' order; the picture
//! says how many it left out.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::display_text::cut;
use crate::picture::groups;
use crate::snapshot::{Job, Tone, Unit};

use super::escape_markup;

/// The most units one picture draws.
pub const MAX_DRAWN: usize = 300;

/// The widest text of a box's first line (id and title), in terminal columns.
const FIRST_LINE_COLUMNS: usize = 30;
/// The widest text of a box's other lines (status and role; agent, in flight, cursor), in terminal
/// columns.
const LINE_COLUMNS: usize = 36;
/// The widest label of a held edge, in terminal columns.
const HOLD_LABEL_COLUMNS: usize = 20;

const NODE_W: u32 = 240;
const NODE_H: u32 = 60;
const GAP_X: u32 = 120;
const GAP_Y: u32 = 14;
const MARGIN: u32 = 12;
const HEADER_H: u32 = 28;
const COLUMN_PAD: u32 = 8;

/// The colours of a picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// For a light page.
    Light,
    /// For a dark page.
    Dark,
}

impl Palette {
    /// `light` or `dark`.
    pub fn parse(name: &str) -> Option<Palette> {
        match name {
            "light" => Some(Palette::Light),
            "dark" => Some(Palette::Dark),
            _ => None,
        }
    }

    /// Fill, border and text of a unit's box.
    fn tone(self, tone: Tone) -> (&'static str, &'static str, &'static str) {
        match (self, tone) {
            (Palette::Light, Tone::Waiting) => ("#f8fafc", "#64748b", "#0f172a"),
            (Palette::Light, Tone::Running) => ("#dbeafe", "#2563eb", "#0f172a"),
            (Palette::Light, Tone::Good) => ("#dcfce7", "#16a34a", "#0f172a"),
            (Palette::Light, Tone::Warn) => ("#fef3c7", "#d97706", "#0f172a"),
            (Palette::Light, Tone::Bad) => ("#fee2e2", "#dc2626", "#0f172a"),
            (Palette::Light, Tone::Muted) => ("#f1f5f9", "#94a3b8", "#475569"),
            (Palette::Dark, Tone::Waiting) => ("#1e293b", "#94a3b8", "#f1f5f9"),
            (Palette::Dark, Tone::Running) => ("#1e3a8a", "#60a5fa", "#f1f5f9"),
            (Palette::Dark, Tone::Good) => ("#14532d", "#4ade80", "#f1f5f9"),
            (Palette::Dark, Tone::Warn) => ("#78350f", "#fbbf24", "#f1f5f9"),
            (Palette::Dark, Tone::Bad) => ("#7f1d1d", "#f87171", "#f1f5f9"),
            (Palette::Dark, Tone::Muted) => ("#1f2937", "#6b7280", "#cbd5e1"),
        }
    }

    /// Column fill, column border, heading text, edges.
    fn frame(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Palette::Light => ("#ffffff", "#cbd5e1", "#1e293b", "#475569"),
            Palette::Dark => ("#0f172a", "#334155", "#e2e8f0", "#94a3b8"),
        }
    }
}

/// Where a unit's box is drawn.
#[derive(Debug, Clone, Copy)]
struct Place {
    x: u32,
    y: u32,
    column: usize,
}

/// The plan of `job` as an SVG document in `palette`.
///
/// ```
/// use shiftwork_watch::snapshot::{Job, Tone, Unit};
/// use shiftwork_watch::web::svg::{Palette, plan};
/// let unit = |index: usize, id: &str, title: &str, deps: Vec<usize>| Unit {
///     index, id: id.into(), title: title.into(), status: "todo".into(), tone: Tone::Waiting,
///     role: "r".into(), depends_on: Vec::new(), depends_on_units: deps, agent: None,
///     in_flight: false, is_cursor: index == 0, is_held: false,
/// };
/// let job = Job {
///     id: "j".into(), goal: String::new(), cursor: "A".into(), counts: Vec::new(),
///     waves: vec![vec![unit(0, "A", "<script>alert(1)</script>", vec![])], vec![unit(1, "B", "b", vec![0])]],
///     unplanned: Vec::new(), finished: Vec::new(), plan_refusal: None, held: Vec::new(),
///     budget: None, history: Vec::new(), questions: Vec::new(), clock_outs: Vec::new(),
/// };
/// let svg = plan(&job, Palette::Light);
/// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
/// assert!(svg.contains("A · &lt;script&gt;alert(1)&lt;/script&gt;") && !svg.contains("<script"));
/// assert_eq!(svg.matches("<path class=\"edge\"").count(), 1);
/// ```
pub fn plan(job: &Job, palette: Palette) -> String {
    let groups = groups(job);
    let (column_fill, column_border, heading, edge) = palette.frame();
    // Each unit once, at its first listing, up to the bound.
    let mut place: HashMap<usize, Place> = HashMap::new();
    let mut columns: Vec<(&str, Vec<&Unit>)> = Vec::new();
    let mut left_out = 0usize;
    for (_, title, units) in &groups {
        let mut drawn = Vec::new();
        for unit in *units {
            if place.contains_key(&unit.index) || drawn.iter().any(|u: &&Unit| u.index == unit.index) {
                continue;
            }
            if place.len() + drawn.len() >= MAX_DRAWN {
                left_out += 1;
                continue;
            }
            drawn.push(unit);
        }
        if drawn.is_empty() {
            continue;
        }
        let column = columns.len();
        let x = MARGIN + column as u32 * (NODE_W + GAP_X);
        for (row, unit) in drawn.iter().enumerate() {
            let y = MARGIN + HEADER_H + row as u32 * (NODE_H + GAP_Y);
            place.insert(unit.index, Place { x, y, column });
        }
        columns.push((title.as_str(), drawn));
    }
    let tallest = columns.iter().map(|(_, u)| u.len()).max().unwrap_or(0) as u32;
    let width = (MARGIN * 2 + columns.len() as u32 * (NODE_W + GAP_X))
        .saturating_sub(GAP_X)
        .max(NODE_W);
    let note_h = if left_out > 0 { 24 } else { 0 };
    let height = MARGIN * 2 + HEADER_H + tallest * (NODE_H + GAP_Y) + COLUMN_PAD + note_h;
    let mut out = String::with_capacity(1024 + place.len() * 512);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"12\">"
    );
    let _ = write!(
        out,
        "<title>{}</title>",
        escape_markup(&format!(
            "The plan of job {}: {} units in {} columns",
            job.id,
            place.len() + left_out,
            columns.len()
        ))
    );
    let _ = write!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" \
         orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"{edge}\"/></marker></defs>"
    );
    for (column, (title, units)) in columns.iter().enumerate() {
        let x = MARGIN + column as u32 * (NODE_W + GAP_X);
        let h = HEADER_H + units.len() as u32 * (NODE_H + GAP_Y) + COLUMN_PAD;
        let _ = write!(
            out,
            "<g class=\"column\"><rect x=\"{}\" y=\"{MARGIN}\" width=\"{}\" height=\"{h}\" rx=\"8\" fill=\"{column_fill}\" \
             stroke=\"{column_border}\"/><text x=\"{}\" y=\"{}\" fill=\"{heading}\" font-weight=\"600\">{}</text></g>",
            x - COLUMN_PAD / 2,
            NODE_W + COLUMN_PAD,
            x + 4,
            MARGIN + 18,
            escape_markup(title)
        );
    }
    // Edges first, so boxes are drawn over them.
    for (_, units) in &columns {
        for unit in units {
            let Some(to) = place.get(&unit.index) else {
                continue;
            };
            let mut seen: Vec<usize> = Vec::new();
            for dep in &unit.depends_on_units {
                if seen.contains(dep) {
                    continue;
                }
                seen.push(*dep);
                if let Some(from) = place.get(dep) {
                    let _ = write!(
                        out,
                        "<path class=\"edge\" d=\"{}\" fill=\"none\" stroke=\"{edge}\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>",
                        curve(*from, *to)
                    );
                }
            }
        }
    }
    for hold in &job.held {
        if let (Some(from), Some(to)) = (place.get(&hold.by_index), place.get(&hold.unit_index)) {
            let (mx, my) = middle(*from, *to);
            let _ = write!(
                out,
                "<g class=\"hold\"><path class=\"held-edge\" d=\"{}\" fill=\"none\" stroke=\"{edge}\" stroke-width=\"1.5\" \
                 stroke-dasharray=\"5 4\" marker-end=\"url(#arrow)\"/><text x=\"{mx}\" y=\"{}\" fill=\"{heading}\" \
                 font-size=\"10\" text-anchor=\"middle\">{}</text></g>",
                curve(*from, *to),
                my.saturating_sub(4),
                escape_markup(&cut(&format!("holds {}", hold.path), HOLD_LABEL_COLUMNS))
            );
        }
    }
    for (_, units) in &columns {
        for unit in units {
            if let Some(at) = place.get(&unit.index) {
                node(&mut out, unit, *at, palette);
            }
        }
    }
    if left_out > 0 {
        let _ = write!(
            out,
            "<text x=\"{MARGIN}\" y=\"{}\" fill=\"{heading}\">{}</text>",
            height - MARGIN,
            escape_markup(&format!(
                "… and {left_out} more units, not drawn (listed in the waves)"
            ))
        );
    }
    out.push_str("</svg>\n");
    out
}

/// One unit's box: id and title; status and role; agent, and whether it is in flight, held or the
/// cursor.
fn node(out: &mut String, unit: &Unit, at: Place, palette: Palette) {
    let (fill, border, text) = palette.tone(unit.tone);
    let stroke_width = if unit.is_cursor { 4 } else { 1 };
    let dash = if unit.is_held {
        " stroke-dasharray=\"6 3\""
    } else {
        ""
    };
    let mut third: Vec<&str> = Vec::new();
    if let Some(agent) = &unit.agent {
        third.push(agent);
    }
    if unit.in_flight {
        third.push("in flight");
    }
    if unit.is_held {
        third.push("held");
    }
    if unit.is_cursor {
        third.push("cursor");
    }
    let _ = write!(
        out,
        "<g class=\"unit\"><rect x=\"{}\" y=\"{}\" width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"6\" fill=\"{fill}\" \
         stroke=\"{border}\" stroke-width=\"{stroke_width}\"{dash}/><text x=\"{}\" y=\"{}\" fill=\"{text}\" font-weight=\"600\">{}</text>\
         <text x=\"{}\" y=\"{}\" fill=\"{text}\" font-size=\"11\">{}</text>",
        at.x,
        at.y,
        at.x + 8,
        at.y + 18,
        escape_markup(&cut(&format!("{} · {}", unit.id, unit.title), FIRST_LINE_COLUMNS)),
        at.x + 8,
        at.y + 35,
        escape_markup(&cut(&format!("{} · {}", unit.status, unit.role), LINE_COLUMNS)),
    );
    if !third.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"{text}\" font-size=\"11\">{}</text>",
            at.x + 8,
            at.y + 51,
            escape_markup(&cut(&third.join(" · "), LINE_COLUMNS)),
        );
    }
    out.push_str("</g>");
}

/// The path of an arrow from `from` to `to`: from the right side of one box to the left side of the
/// next when it lies in a later column; around the right of the column otherwise.
fn curve(from: Place, to: Place) -> String {
    let (fy, ty) = (from.y + NODE_H / 2, to.y + NODE_H / 2);
    if to.column > from.column {
        let (fx, tx) = (from.x + NODE_W, to.x);
        let bend = (tx - fx) / 2;
        format!("M{fx},{fy}C{},{fy} {},{ty} {tx},{ty}", fx + bend, tx - bend)
    } else {
        let (fx, tx) = (from.x + NODE_W, to.x + NODE_W);
        let out = fx.max(tx) + GAP_X / 2;
        format!("M{fx},{fy}C{out},{fy} {out},{ty} {tx},{ty}")
    }
}

/// About the middle of [`curve`]`(from, to)`.
fn middle(from: Place, to: Place) -> (u32, u32) {
    let (fy, ty) = (from.y + NODE_H / 2, to.y + NODE_H / 2);
    if to.column > from.column {
        ((from.x + NODE_W + to.x) / 2, (fy + ty) / 2)
    } else {
        (from.x.max(to.x) + NODE_W + GAP_X / 4, (fy + ty) / 2)
    }
}
