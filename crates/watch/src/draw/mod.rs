//! The drawing: a thin ratatui layer over a [`Snapshot`] and a [`ViewState`].
//!
//! It decides only where things go and how they are coloured; every figure comes from the snapshot.
//! The screen is a header line, the panes (job panes, then the contracts pane; side by side on wide
//! terminals, stacked on narrow ones), the hours line and the key line. A terminal smaller than
//! [`MIN_WIDTH`] × [`MIN_HEIGHT`] gets a sentence saying so instead of a squeezed view.

mod contracts;
mod job;
mod style;

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::figures;
use crate::snapshot::Snapshot;
use crate::view::ViewState;

pub use style::tone_style;

/// The narrowest terminal the view draws into.
pub const MIN_WIDTH: u16 = 60;
/// The shortest terminal the view draws into.
pub const MIN_HEIGHT: u16 = 16;
/// From this width on, the job panes and the contracts pane stand side by side.
pub const SIDE_BY_SIDE: u16 = 120;

/// Draws `snapshot` as `view` asks, keeping `view`'s scroll offsets within what the panes can show.
pub fn draw(frame: &mut Frame<'_>, snapshot: &Snapshot, view: &mut ViewState) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area);
        return;
    }
    let filtered;
    let snapshot = if view.active_filter().trim().is_empty() {
        snapshot
    } else {
        filtered = snapshot.filtered(view.active_filter());
        &filtered
    };
    let footer = if snapshot.hours.is_some() { 2 } else { 1 };
    let [header, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(footer),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(header_line(snapshot, view)), header);
    let panes = pane_areas(snapshot, body);
    let mut limits = Vec::with_capacity(panes.len());
    for (i, rect) in panes.iter().enumerate() {
        let focused = view.focus == i;
        let offsets = (
            view.rows.get(i).copied().unwrap_or(0),
            view.columns.get(i).copied().unwrap_or(0),
        );
        let limit = match snapshot.jobs.get(i) {
            Some(pane) => job::draw(frame, *rect, pane, focused, offsets),
            None => match &snapshot.contracts {
                Some(pane) => contracts::draw(frame, *rect, pane, snapshot, focused, offsets.0),
                None => (0, 0),
            },
        };
        limits.push(limit);
    }
    if panes.is_empty() {
        let nothing = Paragraph::new("Nothing to watch: no checkpoint and no contracts store.")
            .style(style::muted())
            .alignment(Alignment::Center);
        frame.render_widget(nothing, body);
    }
    view.clamp(&limits);
    let mut lines = Vec::new();
    if let Some(hours) = &snapshot.hours {
        lines.push(hours_line(hours, snapshot, area.width));
    }
    lines.push(key_line(view));
    frame.render_widget(Paragraph::new(lines), bottom);
}

/// The rectangles of the panes, in pane order (jobs, then contracts).
fn pane_areas(snapshot: &Snapshot, body: Rect) -> Vec<Rect> {
    let jobs = snapshot.jobs.len();
    let with_contracts = snapshot.contracts.is_some();
    let (job_area, contracts_area) = match (jobs, with_contracts) {
        (0, false) => return Vec::new(),
        (0, true) => (None, Some(body)),
        (_, false) => (Some(body), None),
        (_, true) => {
            let [a, b] = if body.width >= SIDE_BY_SIDE {
                Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(body)
            } else {
                Layout::vertical([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(body)
            };
            (Some(a), Some(b))
        }
    };
    let mut out = Vec::new();
    if let Some(area) = job_area {
        let n = u32::try_from(jobs).unwrap_or(u32::MAX);
        let rows = Layout::vertical((0..jobs).map(|_| Constraint::Ratio(1, n))).split(area);
        out.extend(rows.iter().copied());
    }
    out.extend(contracts_area);
    out
}

/// Draws a pane's border and title; when `body` is an error, its sentence in `sentence_style` inside.
/// Returns the inner area and the body to draw there, or `None` when the sentence was drawn.
fn pane<'b, T>(
    frame: &mut Frame<'_>,
    area: Rect,
    title: String,
    focused: bool,
    body: &'b Result<T, String>,
    sentence_style: ratatui::style::Style,
) -> Option<(Rect, &'b T)> {
    let block = ratatui::widgets::Block::bordered()
        .title(Span::styled(title, style::label()))
        .border_style(style::border(focused));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match body {
        Ok(value) => Some((inner, value)),
        Err(sentence) => {
            let text = Paragraph::new(sentence.clone())
                .style(sentence_style)
                .wrap(Wrap { trim: true });
            frame.render_widget(text, inner);
            None
        }
    }
}

fn header_line(snapshot: &Snapshot, view: &ViewState) -> Line<'static> {
    let clock = snapshot
        .now
        .with_timezone(&snapshot.zone)
        .format("%Y-%m-%d %H:%M:%S %Z");
    let mut spans = vec![
        Span::styled(" shiftwork watch ", style::title()),
        Span::styled(format!(" {clock}"), style::muted()),
    ];
    let filter = view.active_filter();
    if !filter.is_empty() {
        spans.push(Span::styled(format!("  filter: {filter}"), style::warn()));
    }
    Line::from(spans)
}

fn hours_line(hours: &crate::snapshot::HoursLine, snapshot: &Snapshot, area_width: u16) -> Line<'static> {
    let (state, tone) = if hours.in_hours {
        ("in hours", style::good())
    } else {
        ("out of hours", style::warn())
    };
    let mut spans = vec![
        Span::styled(" hours ", style::label()),
        Span::styled(state.to_owned(), tone),
    ];
    if let Some(countdown) = hours.countdown(snapshot.now) {
        spans.push(Span::raw(format!(
            " · {} {} (in {})",
            hours.next_local,
            snapshot.zone.name(),
            figures::duration(countdown)
        )));
    } else {
        spans.push(Span::raw(String::from(" · always")));
    }
    let expression = format!(" · {}", hours.expression);
    if Line::from(spans.clone()).width() + crate::display_text::width(&expression) <= usize::from(area_width)
    {
        spans.push(Span::styled(expression, style::muted()));
    }
    Line::from(spans)
}

fn key_line(view: &ViewState) -> Line<'static> {
    match &view.editing {
        Some(text) => Line::from(vec![
            Span::styled(" filter: ", style::label()),
            Span::raw(text.clone()),
            Span::styled("▏", style::warn()),
            Span::styled(
                "  Enter keep · Esc cancel · matches unit ids and agents",
                style::muted(),
            ),
        ]),
        None => {
            let mut spans = Vec::new();
            for (key, what) in [
                ("q", "quit"),
                ("tab", "next pane"),
                ("↑↓", "scroll"),
                ("←→", "waves"),
                ("/", "filter"),
            ] {
                spans.push(Span::styled(format!(" {key}"), style::label()));
                spans.push(Span::styled(format!(" {what} "), style::muted()));
            }
            if !view.filter.is_empty() {
                spans.push(Span::styled(" Esc", style::label()));
                spans.push(Span::styled(" clear filter", style::muted()));
            }
            Line::from(spans)
        }
    }
}

fn too_small(frame: &mut Frame<'_>, area: Rect) {
    let text = vec![
        Line::from(format!("The terminal is {}×{};", area.width, area.height)),
        Line::from(format!("the view needs at least {MIN_WIDTH}×{MIN_HEIGHT}.")),
        Line::from("Enlarge it, or press q to quit."),
    ];
    let height = 3.min(area.height);
    let top = area.y + area.height.saturating_sub(height) / 2;
    let rect = Rect::new(area.x, top, area.width, height);
    frame.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        rect,
    );
}
