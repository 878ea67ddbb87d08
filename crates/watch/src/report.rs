//! The snapshot as plain text (`--once`): for scripts and CI logs. Full contract ids, exact figures,
//! ASCII marks; colours only when asked for (the caller asks when standard output is a terminal).
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use shiftwork_watch::snapshot::Snapshot;
//! let snapshot = Snapshot {
//!     now: Utc.with_ymd_and_hms(2026, 9, 21, 10, 0, 0).unwrap(),
//!     zone: chrono_tz::UTC,
//!     jobs: Vec::new(),
//!     contracts: None,
//!     hours: None,
//! };
//! assert_eq!(shiftwork_watch::report::render(&snapshot, false), "shiftwork watch · 2026-09-21 10:00:00 UTC\n");
//! ```

use crate::display_text::{fit, width};
use crate::figures::{duration, time_left};
use crate::snapshot::{Contracts, ContractsPane, HoursLine, Job, JobPane, Snapshot, Tone, Unit};

/// The report of `snapshot`; ANSI colours when `colour` is true.
pub fn render(snapshot: &Snapshot, colour: bool) -> String {
    let mut out = Report {
        text: String::new(),
        colour,
    };
    let clock = snapshot
        .now
        .with_timezone(&snapshot.zone)
        .format("%Y-%m-%d %H:%M:%S %Z");
    out.line(&format!("shiftwork watch · {clock}"));
    for pane in &snapshot.jobs {
        out.blank();
        job(&mut out, pane);
    }
    if let Some(pane) = &snapshot.contracts {
        out.blank();
        contracts(&mut out, pane, snapshot);
    }
    if let Some(hours) = &snapshot.hours {
        out.blank();
        hours_line(&mut out, hours, snapshot);
    }
    out.text
}

struct Report {
    text: String,
    colour: bool,
}

impl Report {
    fn line(&mut self, text: &str) {
        self.text.push_str(text.trim_end());
        self.text.push('\n');
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }

    /// `text` in `tone`'s colour (or plain).
    fn paint(&self, text: &str, tone: Tone) -> String {
        let code = match tone {
            Tone::Waiting => return text.to_owned(),
            Tone::Running => "36",
            Tone::Good => "32",
            Tone::Warn => "33",
            Tone::Bad => "1;31",
            Tone::Muted => "90",
        };
        if self.colour {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
}

fn job(out: &mut Report, pane: &JobPane) {
    let job = match &pane.body {
        Ok(job) => job,
        Err(sentence) => {
            out.line(&format!("job · {}", pane.checkpoint));
            let text = out.paint(sentence, Tone::Bad);
            out.line(&format!("  {text}"));
            return;
        }
    };
    out.line(&format!("job {} · {}", job.id, pane.checkpoint));
    if !job.goal.is_empty() {
        out.line(&format!("  goal: {}", job.goal));
    }
    let counts: Vec<String> = job
        .counts
        .iter()
        .map(|c| out.paint(&format!("{} {}", c.count, c.status), c.tone))
        .collect();
    let counts = if counts.is_empty() {
        String::from("no units")
    } else {
        counts.join(", ")
    };
    out.line(&format!("  cursor {} · {counts}", job.cursor));
    let widths = Widths::of(job.open_units());
    if let Some(refusal) = &job.plan_refusal {
        let text = out.paint(&format!("plan refused: {refusal}"), Tone::Bad);
        out.line(&format!("  {text}"));
        units(out, "unplanned", &job.unplanned, &widths);
    }
    for (i, wave) in job.waves.iter().enumerate() {
        let name = if i == 0 {
            String::from("wave 1 (ready)")
        } else {
            format!("wave {}", i + 1)
        };
        units(out, &name, wave, &widths);
    }
    if job.waves.is_empty() && job.unplanned.is_empty() {
        out.line("  every unit is done or dropped");
    }
    if !job.held.is_empty() {
        out.line("  held");
        for h in &job.held {
            out.line(&format!(
                "    {} waits for {} · {} (wave {})",
                h.unit, h.by, h.path, h.wave
            ));
        }
    }
    budget(out, job);
    if !job.questions.is_empty() {
        out.line("  open questions");
        for q in &job.questions {
            out.line(&format!("    ? {} ({})", q.text, q.kind));
        }
    }
    if !job.history.is_empty() {
        out.line("  history, newest first");
        for h in &job.history {
            let notes = h.notes.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
            out.line(&format!("    {} {}{notes}", h.unit, h.outcome));
        }
    }
}

/// The column widths of the unit tables of one job, so every wave lines up.
pub(crate) struct Widths {
    pub(crate) id: usize,
    pub(crate) status: usize,
    pub(crate) role: usize,
    pub(crate) agent: usize,
}

impl Widths {
    pub(crate) fn of<'a>(units: impl Iterator<Item = &'a Unit>) -> Widths {
        let mut w = Widths {
            id: 0,
            status: 0,
            role: 0,
            agent: 1,
        };
        for u in units {
            w.id = w.id.max(width(&u.id));
            w.status = w.status.max(width(&u.status));
            w.role = w.role.max(width(&u.role));
            w.agent = w.agent.max(u.agent.as_deref().map_or(1, width));
        }
        w
    }
}

/// A unit's two marks in ASCII: `>` the cursor (else a space), then `*` in flight or `~` held (else a
/// space).
pub(crate) fn ascii_marks(u: &Unit) -> String {
    let cursor = if u.is_cursor { '>' } else { ' ' };
    let mark = if u.in_flight {
        '*'
    } else if u.is_held {
        '~'
    } else {
        ' '
    };
    format!("{cursor}{mark}")
}

/// A wave: `>` marks the cursor, `*` a unit in flight, `~` a held unit.
fn units(out: &mut Report, name: &str, list: &[Unit], w: &Widths) {
    out.line(&format!("  {name}"));
    for u in list {
        let status = out.paint(&fit(&u.status, w.status), u.tone);
        out.line(&format!(
            "   {}{} {status} {} {} {}",
            ascii_marks(u),
            fit(&u.id, w.id),
            fit(&u.role, w.role),
            fit(u.agent.as_deref().unwrap_or("-"), w.agent),
            u.title
        ));
    }
}

fn budget(out: &mut Report, job: &Job) {
    let Some(b) = &job.budget else { return };
    out.line(&format!(
        "  budget · {} in flight · {} tokens per unit · room for {} more",
        b.in_flight.len(),
        b.per_unit,
        b.affordable
    ));
    let name_width = b.dimensions.iter().map(|d| width(&d.name)).max().unwrap_or(0);
    for d in &b.dimensions {
        let left = format!("{} left", d.left);
        let left = if d.left < 0 {
            out.paint(&left, Tone::Bad)
        } else {
            left
        };
        out.line(&format!(
            "    {} {} spent · {} in flight · {left} of {}",
            fit(&d.name, name_width),
            d.spent,
            d.in_flight,
            d.limit
        ));
    }
}

fn contracts(out: &mut Report, pane: &ContractsPane, snapshot: &Snapshot) {
    let scope = pane
        .agent
        .as_deref()
        .map(|a| format!(" · agent {a}"))
        .unwrap_or_default();
    out.line(&format!("contracts · {}{scope}", pane.store));
    let c = match &pane.body {
        Ok(c) => c,
        Err(sentence) => {
            let text = out.paint(sentence, Tone::Warn);
            out.line(&format!("  {text}"));
            return;
        }
    };
    if let Some(note) = &c.note {
        let text = out.paint(note, Tone::Muted);
        out.line(&format!("  {text}"));
    }
    counts(out, c);
    let now = snapshot.now;
    if !c.claimed.is_empty() {
        out.line("  claimed");
        let holder_width = c.claimed.iter().map(|x| width(&x.holder)).max().unwrap_or(0);
        for x in &c.claimed {
            let left = x.time_left(now).map(time_left).unwrap_or_default();
            let left = out.paint(&left, if x.is_urgent(now) { Tone::Bad } else { Tone::Good });
            out.line(&format!(
                "    {} {} epoch {} {left} · {}",
                x.id,
                fit(&x.holder, holder_width),
                x.epoch,
                x.title
            ));
        }
    }
    if !c.waiting.is_empty() {
        out.line("  waiting, oldest first");
        let target_width = c.waiting.iter().map(|x| width(&x.target)).max().unwrap_or(0);
        for x in &c.waiting {
            out.line(&format!(
                "    {} for {} from {} waiting {} · {}",
                x.id,
                fit(&x.target, target_width),
                x.requester,
                duration(x.age(now)),
                x.title
            ));
        }
    }
    if !c.ended.is_empty() {
        out.line("  ended, newest first");
        for x in &c.ended {
            let status = out.paint(&x.status, x.tone);
            let reason = x.reason.as_deref().map(|r| format!(" {r}")).unwrap_or_default();
            let ago = x
                .ago(now)
                .map(|d| format!(" {} ago", duration(d)))
                .unwrap_or_default();
            out.line(&format!("    {} {status}{reason}{ago} · {}", x.id, x.title));
        }
    }
}

fn counts(out: &mut Report, c: &Contracts) {
    let mut parts: Vec<String> = c
        .counts
        .iter()
        .map(|n| {
            let text = format!("{} {}", n.count, n.status);
            if n.count > 0 {
                out.paint(&text, n.tone)
            } else {
                text
            }
        })
        .collect();
    if c.past_deadline > 0 {
        parts.push(out.paint(&format!("{} past deadline", c.past_deadline), Tone::Bad));
    }
    out.line(&format!("  {}", parts.join(", ")));
}

fn hours_line(out: &mut Report, hours: &HoursLine, snapshot: &Snapshot) {
    let state = if hours.in_hours {
        out.paint("in hours", Tone::Good)
    } else {
        out.paint("out of hours", Tone::Warn)
    };
    let next = match hours.countdown(snapshot.now) {
        Some(d) => format!(
            " · {} {} (in {})",
            hours.next_local,
            snapshot.zone.name(),
            duration(d)
        ),
        None => String::from(" · always"),
    };
    out.line(&format!("hours {}: {state}{next}", hours.expression));
}
