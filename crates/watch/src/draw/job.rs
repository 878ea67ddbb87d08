//! The job pane: a summary line, the waves as columns, then the holds, the budget, the open questions
//! and the latest history entries, each given rows only as far as the pane has them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::style;
use crate::display_text::{cut, fit, width};
use crate::figures::compact;
use crate::snapshot::{Budget, BudgetDimension, Job, JobPane, Unit};

/// The narrowest wave column.
const MIN_COLUMN: u16 = 24;
/// The rows the waves keep before the other sections get any.
const MIN_WAVE_ROWS: u16 = 4;
/// The most rows each section below the waves asks for.
const HELD_ROWS: usize = 3;
const QUESTION_ROWS: usize = 2;
const HISTORY_ROWS: usize = 3;

/// Draws one job pane; returns the most rows and columns it can scroll.
pub(super) fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    pane: &JobPane,
    focused: bool,
    (rows, columns): (u16, u16),
) -> (u16, u16) {
    let title = match &pane.body {
        Ok(job) => format!(" job {} · {} ", job.id, pane.checkpoint),
        Err(_) => format!(" {} ", pane.checkpoint),
    };
    let Some((inner, job)) = super::pane(frame, area, title, focused, &pane.body, style::bad()) else {
        return (0, 0);
    };
    if inner.height == 0 || inner.width == 0 {
        return (0, 0);
    }
    let mut sections = [
        budget_lines(job.budget.as_ref(), inner.width),
        held_lines(job),
        question_lines(job),
        history_lines(job),
    ];
    let room = inner.height.saturating_sub(1 + MIN_WAVE_ROWS);
    // Trim from the least important section (history) up to the budget.
    while sections.iter().map(Vec::len).sum::<usize>() > usize::from(room) {
        if let Some(section) = sections.iter_mut().rev().find(|s| !s.is_empty()) {
            section.pop();
        }
    }
    let [budget, held, questions, history] = sections;
    let mut below = held;
    below.extend(budget);
    below.extend(questions);
    below.extend(history);
    let below_rows = u16::try_from(below.len()).unwrap_or(u16::MAX);
    let [summary_area, waves_area, below_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(below_rows),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(summary_line(job)), summary_area);
    frame.render_widget(Paragraph::new(below), below_area);
    waves(frame, waves_area, job, rows, columns)
}

fn summary_line(job: &Job) -> Line<'static> {
    let mut spans = vec![
        Span::styled("cursor ", style::muted()),
        Span::styled(job.cursor.clone(), style::cursor()),
    ];
    for count in &job.counts {
        spans.push(Span::styled(" · ", style::muted()));
        spans.push(Span::styled(
            format!("{} {}", count.count, count.status),
            super::tone_style(count.tone),
        ));
    }
    if !job.goal.is_empty() {
        spans.push(Span::styled(format!(" · {}", job.goal), style::muted()));
    }
    Line::from(spans)
}

/// The wave columns; returns the scroll limits.
fn waves(frame: &mut Frame<'_>, area: Rect, job: &Job, rows: u16, columns: u16) -> (u16, u16) {
    let mut area = area;
    if let Some(refusal) = &job.plan_refusal {
        let [top, rest] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
        let text = Paragraph::new(format!("plan refused: {refusal}"))
            .style(style::bad())
            .wrap(Wrap { trim: true });
        frame.render_widget(text, top);
        area = rest;
    }
    let all: Vec<(String, &[Unit])> = if job.plan_refusal.is_some() {
        vec![(String::from("unplanned"), job.unplanned.as_slice())]
    } else {
        job.waves
            .iter()
            .enumerate()
            .map(|(i, wave)| {
                let name = if i == 0 {
                    String::from("wave 1 · ready")
                } else {
                    format!("wave {}", i + 1)
                };
                (name, wave.as_slice())
            })
            .collect()
    };
    if all.is_empty() {
        let done = Paragraph::new("Every unit is done or dropped.").style(style::good());
        frame.render_widget(done, area);
        return (0, 0);
    }
    if area.height == 0 {
        return (0, 0);
    }
    let fitting = usize::from((area.width / MIN_COLUMN).max(1)).min(all.len());
    let column_limit = all.len() - fitting;
    let first = usize::from(columns).min(column_limit);
    let shown = &all[first..first + fitting];
    let n = u32::try_from(fitting).unwrap_or(1);
    let rects = Layout::horizontal(shown.iter().map(|_| Constraint::Ratio(1, n)))
        .spacing(1)
        .split(area);
    let visible_rows = usize::from(area.height.saturating_sub(1));
    let mut row_limit = 0usize;
    for (k, ((name, units), rect)) in shown.iter().zip(rects.iter()).enumerate() {
        let mut header = vec![Span::styled(name.clone(), style::label())];
        if k == 0 && first > 0 {
            header.insert(0, Span::styled(format!("◂{first} "), style::muted()));
        }
        if k + 1 == shown.len() && first + fitting < all.len() {
            header.push(Span::styled(
                format!(" {} more ▸", all.len() - first - fitting),
                style::muted(),
            ));
        }
        let mut lines = vec![Line::from(header)];
        row_limit = row_limit.max(units.len().saturating_sub(visible_rows));
        let start = usize::from(rows).min(units.len().saturating_sub(visible_rows));
        let id_width = units.iter().map(|u| width(&u.id)).max().unwrap_or(0).min(12);
        let status_width = units.iter().map(|u| width(&u.status)).max().unwrap_or(0);
        let page: Vec<&Unit> = units.iter().skip(start).take(visible_rows).collect();
        for (j, unit) in page.iter().enumerate() {
            let hidden = units.len() - start - page.len();
            if j + 1 == page.len() && hidden > 0 {
                lines.push(Line::styled(format!("  … {} more ↓", hidden + 1), style::muted()));
            } else {
                lines.push(unit_line(unit, id_width, status_width, usize::from(rect.width)));
            }
        }
        if units.is_empty() {
            lines.push(Line::styled("  (none match)", style::muted()));
        }
        frame.render_widget(Paragraph::new(lines), *rect);
    }
    (
        u16::try_from(row_limit).unwrap_or(u16::MAX),
        u16::try_from(column_limit).unwrap_or(u16::MAX),
    )
}

/// One unit in a wave column: the cursor mark, in flight (`●`) or held (`◌`), id, status, role, agent.
/// Where the column is too narrow for both, the agent goes before the role; a name never shows cut
/// without its `…`.
fn unit_line(unit: &Unit, id_width: usize, status_width: usize, column: usize) -> Line<'static> {
    let cursor = if unit.is_cursor {
        Span::styled("▶", style::cursor())
    } else {
        Span::raw(" ")
    };
    let mark = if unit.in_flight {
        Span::styled("●", super::tone_style(crate::snapshot::Tone::Running))
    } else if unit.is_held {
        Span::styled("◌", style::warn())
    } else {
        Span::raw(" ")
    };
    let id_style = if unit.is_cursor {
        style::cursor()
    } else {
        style::label()
    };
    let mut spans = vec![
        cursor,
        mark,
        Span::styled(fit(&unit.id, id_width), id_style),
        Span::raw(" "),
        Span::styled(fit(&unit.status, status_width), super::tone_style(unit.tone)),
    ];
    let room = column.saturating_sub(2 + id_width + 1 + status_width);
    let role = role_short(&unit.role);
    match &unit.agent {
        Some(agent) if room >= 1 + width(role) + 1 + width(agent) => {
            spans.push(Span::styled(format!(" {role}"), style::muted()));
            spans.push(Span::styled(format!(" {agent}"), style::agent()));
        }
        Some(agent) => spans.push(Span::styled(
            format!(" {}", cut(agent, room.saturating_sub(1))),
            style::agent(),
        )),
        None => spans.push(Span::styled(format!(" {role}"), style::muted())),
    }
    Line::from(spans)
}

/// A role in four columns.
fn role_short(role: &str) -> &str {
    match role {
        "planner" => "plan",
        "implementer" => "impl",
        "reviewer" => "rev",
        other => other,
    }
}

fn held_lines(job: &Job) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = job
        .held
        .iter()
        .take(HELD_ROWS)
        .map(|h| {
            Line::from(vec![
                Span::styled("held ", style::warn()),
                Span::styled(h.unit.clone(), style::label()),
                Span::raw(" waits for "),
                Span::styled(h.by.clone(), style::label()),
                Span::raw(format!(" · {} (wave {})", h.path, h.wave)),
            ])
        })
        .collect();
    if job.held.len() > HELD_ROWS
        && let Some(last) = lines.last_mut()
    {
        *last = Line::styled(
            format!("held … {} more", job.held.len() - HELD_ROWS + 1),
            style::warn(),
        );
    }
    lines
}

fn budget_lines(budget: Option<&Budget>, pane_width: u16) -> Vec<Line<'static>> {
    let Some(budget) = budget else {
        return Vec::new();
    };
    let bar_width = usize::from(pane_width / 5).clamp(8, 30);
    let name_width = budget
        .dimensions
        .iter()
        .map(|d| width(&d.name))
        .max()
        .unwrap_or(0);
    budget
        .dimensions
        .iter()
        .enumerate()
        .map(|(i, dim)| {
            let mut spans = vec![
                Span::styled(fit(&dim.name, name_width), style::label()),
                Span::raw(" "),
            ];
            spans.extend(bar(dim, bar_width));
            let left_style = if dim.left < 0 { style::bad() } else { Style::new() };
            spans.push(Span::raw(format!(
                " {} spent · {} in flight · ",
                compact(dim.spent),
                compact(dim.in_flight)
            )));
            spans.push(Span::styled(format!("{} left", compact(dim.left)), left_style));
            spans.push(Span::styled(
                format!(" of {}", compact(dim.limit)),
                style::muted(),
            ));
            let room = format!(" · room for {}", budget.affordable);
            let line = Line::from(spans.clone());
            if i == 0 && line.width() + width(&room) <= usize::from(pane_width) {
                spans.push(Span::styled(room, style::muted()));
            }
            Line::from(spans)
        })
        .collect()
}

/// The bar of one dimension: spent `█`, in flight `▒`, left `░`; red when over the limit.
fn bar(dim: &BudgetDimension, cells: usize) -> Vec<Span<'static>> {
    let limit = dim.limit.max(1);
    let scale = |n: i128| -> usize {
        let n = n.clamp(0, limit);
        usize::try_from(n.saturating_mul(cells as i128) / limit).unwrap_or(cells)
    };
    let spent = scale(dim.spent);
    let busy = scale(dim.spent.saturating_add(dim.in_flight)).max(spent) - spent;
    let free = cells - spent - busy;
    let over = dim.left < 0;
    let fill = if over { style::bad() } else { style::good() };
    vec![
        Span::styled("█".repeat(spent), fill),
        Span::styled("▒".repeat(busy), if over { style::bad() } else { style::warn() }),
        Span::styled("░".repeat(free), style::muted()),
    ]
}

fn question_lines(job: &Job) -> Vec<Line<'static>> {
    job.questions
        .iter()
        .take(QUESTION_ROWS)
        .map(|q| {
            Line::from(vec![
                Span::styled("? ", style::warn()),
                Span::raw(q.text.clone()),
                Span::styled(format!(" ({})", q.kind), style::muted()),
            ])
        })
        .collect()
}

fn history_lines(job: &Job) -> Vec<Line<'static>> {
    job.history
        .iter()
        .take(HISTORY_ROWS)
        .map(|h| {
            let mut spans = vec![
                Span::styled("last ", style::muted()),
                Span::styled(h.unit.clone(), style::label()),
                Span::raw(format!(" {}", h.outcome)),
            ];
            if let Some(notes) = &h.notes {
                spans.push(Span::styled(format!(" — {}", cut(notes, 120)), style::muted()));
            }
            Line::from(spans)
        })
        .collect()
}
