//! The contracts pane: counts per status, the claimed contracts with holder, epoch and lease time left
//! (red under a minute), the oldest waiting ones with their age, the latest ended ones with their end
//! reason. The pane scrolls as one list.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::style;
use crate::display_text::{fit, width};
use crate::figures::{duration, time_left};
use crate::snapshot::{Contracts, ContractsPane, Snapshot};

/// The columns of a contract id shown (UUIDv7 ids differ most in their last digits).
const SHORT_ID: usize = 8;

/// Draws the contracts pane; returns the most rows it can scroll (and no columns).
pub(super) fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    pane: &ContractsPane,
    snapshot: &Snapshot,
    focused: bool,
    rows: u16,
) -> (u16, u16) {
    let mut title = format!(" contracts · {} ", pane.store);
    if let Some(agent) = &pane.agent {
        title.push_str(&format!("· agent {agent} "));
    }
    let Some((inner, contracts)) = super::pane(frame, area, title, focused, &pane.body, style::warn()) else {
        return (0, 0);
    };
    let lines = lines(contracts, snapshot, inner.width);
    let limit = lines.len().saturating_sub(usize::from(inner.height));
    let limit = u16::try_from(limit).unwrap_or(u16::MAX);
    let offset = rows.min(limit);
    frame.render_widget(Paragraph::new(lines).scroll((offset, 0)), inner);
    (limit, 0)
}

fn lines(c: &Contracts, snapshot: &Snapshot, pane_width: u16) -> Vec<Line<'static>> {
    let now = snapshot.now;
    let mut out: Vec<Line<'static>> = c
        .note
        .iter()
        .map(|note| Line::from(Span::styled(format!(" {note}"), style::muted())))
        .collect();
    out.push(counts_line(c));
    let id_width = if pane_width >= 90 { 36 } else { SHORT_ID };
    let short = |id: &str| -> String {
        let start = id.len().saturating_sub(id_width);
        id.get(start..).unwrap_or(id).to_owned()
    };
    out.push(section("claimed", c.claimed.len()));
    let holder_width = c
        .claimed
        .iter()
        .map(|x| width(&x.holder))
        .max()
        .unwrap_or(0)
        .min(16);
    let left_width = c
        .claimed
        .iter()
        .map(|x| width(&x.time_left(now).map(time_left).unwrap_or_default()))
        .max()
        .unwrap_or(0);
    for x in &c.claimed {
        let left = x.time_left(now).map(time_left).unwrap_or_default();
        let left_style = if x.is_urgent(now) {
            style::bad()
        } else {
            style::good()
        };
        out.push(Line::from(vec![
            Span::styled(format!(" {}", short(&x.id)), style::muted()),
            Span::raw(" "),
            Span::styled(fit(&x.holder, holder_width), style::agent()),
            Span::raw(format!(" e{:<3} ", x.epoch)),
            Span::styled(format!("{left:>left_width$}"), left_style),
            Span::raw(format!("  {}", x.title)),
        ]));
    }
    out.push(section("waiting, oldest first", c.waiting.len()));
    let target_width = c
        .waiting
        .iter()
        .map(|x| width(&x.target))
        .max()
        .unwrap_or(0)
        .min(16);
    for x in &c.waiting {
        out.push(Line::from(vec![
            Span::styled(format!(" {}", short(&x.id)), style::muted()),
            Span::raw(" → "),
            Span::styled(fit(&x.target, target_width), style::agent()),
            Span::raw(format!(" {:>7}", duration(x.age(now)))),
            Span::raw(format!("  {}", x.title)),
        ]));
    }
    out.push(section("ended, newest first", c.ended.len()));
    let status_width = c.ended.iter().map(|x| width(&x.status)).max().unwrap_or(0);
    for x in &c.ended {
        let ago = x
            .ago(now)
            .map(|d| format!("{} ago", duration(d)))
            .unwrap_or_default();
        out.push(Line::from(vec![
            Span::styled(format!(" {}", short(&x.id)), style::muted()),
            Span::raw(" "),
            Span::styled(fit(&x.status, status_width), super::tone_style(x.tone)),
            Span::raw(" "),
            Span::styled(x.reason.clone().unwrap_or_default(), style::muted()),
            Span::raw(format!(" {ago}  {}", x.title)),
        ]));
    }
    out
}

fn counts_line(c: &Contracts) -> Line<'static> {
    let mut spans = Vec::new();
    for count in c.counts.iter().filter(|n| n.count > 0) {
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", style::muted()));
        }
        spans.push(Span::styled(
            format!("{} {}", count.count, count.status),
            super::tone_style(count.tone),
        ));
    }
    if spans.is_empty() {
        spans.push(Span::styled("no contracts", style::muted()));
    }
    if c.past_deadline > 0 {
        spans.push(Span::styled(
            format!(" · {} past deadline", c.past_deadline),
            style::bad(),
        ));
    }
    Line::from(spans)
}

fn section(name: &str, n: usize) -> Line<'static> {
    Line::from(vec![
        Span::styled(name.to_owned(), style::label()),
        Span::styled(format!(" ({n})"), style::muted()),
    ])
}
