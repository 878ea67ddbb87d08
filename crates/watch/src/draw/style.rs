//! The colours of the view, in one place.

use ratatui::style::{Color, Modifier, Style};

use crate::snapshot::Tone;

/// The style of a tone.
pub fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Waiting => Style::new(),
        Tone::Running => Style::new().fg(Color::Cyan),
        Tone::Good => Style::new().fg(Color::Green),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Bad => Style::new().fg(Color::Red),
        Tone::Muted => Style::new().fg(Color::DarkGray),
    }
}

pub(super) fn title() -> Style {
    Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
}

pub(super) fn label() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub(super) fn muted() -> Style {
    tone_style(Tone::Muted)
}

pub(super) fn good() -> Style {
    tone_style(Tone::Good)
}

pub(super) fn warn() -> Style {
    tone_style(Tone::Warn)
}

pub(super) fn bad() -> Style {
    tone_style(Tone::Bad).add_modifier(Modifier::BOLD)
}

pub(super) fn cursor() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

pub(super) fn agent() -> Style {
    Style::new().fg(Color::Magenta)
}

pub(super) fn border(focused: bool) -> Style {
    if focused {
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(Color::DarkGray)
    }
}
