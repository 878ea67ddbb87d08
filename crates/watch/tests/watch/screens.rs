//! The drawing, with ratatui's test backend (issue 15 "done when": a job in mid-flight at 80×24 and
//! 160×48). The expected screens are the files in `screens/`; `UPDATE_SCREENS=1` rewrites them after
//! a deliberate change of the drawing (review the diff).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use shiftwork_watch::draw::{self, MIN_HEIGHT, MIN_WIDTH};
use shiftwork_watch::snapshot::Snapshot;
use shiftwork_watch::view::{Key, ViewState};

use crate::fixture::{mid_flight, options, sources};

fn render(snapshot: &Snapshot, view: &mut ViewState, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| draw::draw(frame, snapshot, view)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces removed.
fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn check_screen(name: &str, buffer: &Buffer) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/watch/screens")
        .join(name);
    let actual = text(buffer);
    if std::env::var_os("UPDATE_SCREENS").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        actual,
        expected,
        "the screen differs from {}:\n{actual}",
        path.display()
    );
}

/// Where `needle` starts on screen.
fn find(buffer: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let lines = text(buffer);
    for (y, line) in lines.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            let x = line[..byte].chars().count();
            return Some((x as u16, y as u16));
        }
    }
    None
}

fn mid_flight_snapshot() -> Snapshot {
    let fx = mid_flight();
    sources(&fx, &options()).snapshot()
}

/// Issue 15: the mid-flight job at 80×24 (stacked panes).
#[test]
fn mid_flight_at_80x24() {
    let snapshot = mid_flight_snapshot();
    let mut view = ViewState::new(2);
    let buffer = render(&snapshot, &mut view, 80, 24);
    check_screen("mid_flight_80x24.txt", &buffer);
    expiring_lease_is_red(&buffer);
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    assert!(
        readme.contains(&format!("```text\n{}```", text(&buffer))),
        "the README shows this capture of the view"
    );
}

/// Issue 15: the mid-flight job at 160×48 (side by side).
#[test]
fn mid_flight_at_160x48() {
    let snapshot = mid_flight_snapshot();
    let mut view = ViewState::new(2);
    let buffer = render(&snapshot, &mut view, 160, 48);
    check_screen("mid_flight_160x48.txt", &buffer);
    expiring_lease_is_red(&buffer);
}

/// Issue 15: a lease under one minute is red; the others are not.
fn expiring_lease_is_red(buffer: &Buffer) {
    let (x, y) = find(buffer, "40s left").expect("carol's lease is on screen");
    assert_eq!(buffer[(x, y)].fg, Color::Red);
    let (x, y) = find(buffer, "15m 00s left").expect("bob's lease is on screen");
    assert_ne!(buffer[(x, y)].fg, Color::Red);
}

/// Issue 15: a terminal that is too small says so instead of drawing garbage, at every size below the
/// minimum, and draws the view again once it is big enough.
#[test]
fn too_small_terminals_say_so() {
    let snapshot = mid_flight_snapshot();
    let mut view = ViewState::new(2);
    for (w, h) in [(MIN_WIDTH - 1, 30), (100, MIN_HEIGHT - 1), (20, 5), (1, 1)] {
        let buffer = render(&snapshot, &mut view, w, h);
        let screen = text(&buffer);
        assert!(!screen.contains("wave 1"), "{w}×{h} drew the view:\n{screen}");
        if w >= 40 && h >= 3 {
            assert!(
                screen.contains("the view needs at least 60×16"),
                "{w}×{h}:\n{screen}"
            );
        }
    }
    check_screen("too_small_50x12.txt", &render(&snapshot, &mut view, 50, 12));
    let buffer = render(&snapshot, &mut view, MIN_WIDTH, MIN_HEIGHT);
    assert!(text(&buffer).contains("wave 1"));
}

/// Issue 15 keys on screen: the filter narrows both panes as it is typed, tab moves the focus.
#[test]
fn filtering_and_focus_show_on_screen() {
    let snapshot = mid_flight_snapshot();
    let mut view = ViewState::new(2);
    for key in [Key::Char('/'), Key::Char('c'), Key::Char('a'), Key::Char('r')] {
        view.on_key(key);
    }
    view.on_key(Key::Tab);
    let buffer = render(&snapshot, &mut view, 80, 24);
    check_screen("filter_carol_80x24.txt", &buffer);
    let screen = text(&buffer);
    assert!(screen.contains("Check the CLI flags"));
    assert!(!screen.contains("Review the parser diff"));
}

/// Issue 15 arrows: scrolling moves through the waves and stops at the last one.
#[test]
fn arrows_scroll_the_waves() {
    let snapshot = mid_flight_snapshot();
    let mut view = ViewState::new(2);
    for _ in 0..5 {
        view.on_key(Key::Right);
    }
    let buffer = render(&snapshot, &mut view, 60, 20);
    assert_eq!(
        view.columns[0], 1,
        "two of the three waves fit; one step reaches the last"
    );
    let screen = text(&buffer);
    assert!(
        screen.contains("wave 3") && !screen.contains("wave 1 · ready"),
        "{screen}"
    );
}
