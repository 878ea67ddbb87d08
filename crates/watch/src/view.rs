//! What the person at the terminal changes: which pane has the focus, how far each pane is scrolled,
//! and the filter. Keys arrive as [`Key`] values (the terminal layer translates its own events), so the
//! whole state machine is tested without a terminal.

/// A key the view reacts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Tab: the next pane.
    Tab,
    /// Shift-Tab: the previous pane.
    BackTab,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Ctrl-C.
    Interrupt,
}

/// What a key asks of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing changed.
    Nothing,
    /// The view changed; draw again.
    Redraw,
    /// Leave the view.
    Quit,
}

/// The longest filter kept.
pub const FILTER_LIMIT: usize = 64;

/// How far a page key scrolls.
const PAGE: u16 = 10;

/// The view's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewState {
    /// The focused pane: the job panes in order, then the contracts pane.
    pub focus: usize,
    /// Per pane: rows scrolled down.
    pub rows: Vec<u16>,
    /// Per pane: columns (waves) scrolled right.
    pub columns: Vec<u16>,
    /// The filter in force (empty: none).
    pub filter: String,
    /// The filter being typed after `/`, shown and applied as it is typed.
    pub editing: Option<String>,
}

impl ViewState {
    /// A state for `panes` panes.
    pub fn new(panes: usize) -> ViewState {
        ViewState {
            focus: 0,
            rows: vec![0; panes],
            columns: vec![0; panes],
            filter: String::new(),
            editing: None,
        }
    }

    /// The number of panes.
    pub fn panes(&self) -> usize {
        self.rows.len()
    }

    /// The filter the drawing applies: the one being typed, else the one in force.
    pub fn active_filter(&self) -> &str {
        self.editing.as_deref().unwrap_or(&self.filter)
    }

    /// Reacts to `key`: `q` quits, `tab` moves between panes, arrows scroll, `/` filters.
    pub fn on_key(&mut self, key: Key) -> Action {
        if key == Key::Interrupt {
            return Action::Quit;
        }
        if let Some(text) = &mut self.editing {
            match key {
                // Issue 27 item 11: the filter is drawn, so nothing of the shared rule (a pasted
                // bidirectional control) is kept.
                Key::Char(c)
                    if text.chars().count() < FILTER_LIMIT
                        && !shiftwork_seams::echo::is_control_or_bidi(c) =>
                {
                    text.push(c)
                }
                Key::Char(_) => return Action::Nothing,
                Key::Backspace => {
                    if text.pop().is_none() {
                        return Action::Nothing;
                    }
                }
                Key::Enter => {
                    self.filter = self.editing.take().unwrap_or_default().trim().to_owned();
                    self.reset_scroll();
                }
                Key::Esc => {
                    self.editing = None;
                }
                _ => return Action::Nothing,
            }
            return Action::Redraw;
        }
        let panes = self.panes().max(1);
        match key {
            Key::Char('q') | Key::Char('Q') => return Action::Quit,
            Key::Char('/') => self.editing = Some(self.filter.clone()),
            Key::Esc if !self.filter.is_empty() => {
                self.filter.clear();
                self.reset_scroll();
            }
            Key::Tab => self.focus = (self.focus + 1) % panes,
            Key::BackTab => self.focus = (self.focus + panes - 1) % panes,
            Key::Up | Key::Char('k') => return self.scroll_rows(-1),
            Key::Down | Key::Char('j') => return self.scroll_rows(1),
            Key::PageUp => return self.scroll_rows(-i32::from(PAGE)),
            Key::PageDown => return self.scroll_rows(i32::from(PAGE)),
            Key::Left | Key::Char('h') => return self.scroll_columns(-1),
            Key::Right | Key::Char('l') => return self.scroll_columns(1),
            Key::Home => {
                if let Some(r) = self.rows.get_mut(self.focus) {
                    *r = 0;
                }
                if let Some(c) = self.columns.get_mut(self.focus) {
                    *c = 0;
                }
            }
            _ => return Action::Nothing,
        }
        Action::Redraw
    }

    /// Keeps every scroll offset within what the panes can show: `limits[i]` is the most rows and
    /// columns pane `i` can scroll (the drawing knows them once it has laid the panes out).
    pub fn clamp(&mut self, limits: &[(u16, u16)]) {
        for (i, &(rows, columns)) in limits.iter().enumerate() {
            if let Some(r) = self.rows.get_mut(i) {
                *r = (*r).min(rows);
            }
            if let Some(c) = self.columns.get_mut(i) {
                *c = (*c).min(columns);
            }
        }
    }

    fn scroll_rows(&mut self, by: i32) -> Action {
        scroll(self.rows.get_mut(self.focus), by)
    }

    fn scroll_columns(&mut self, by: i32) -> Action {
        scroll(self.columns.get_mut(self.focus), by)
    }

    fn reset_scroll(&mut self) {
        self.rows.iter_mut().for_each(|r| *r = 0);
        self.columns.iter_mut().for_each(|c| *c = 0);
    }
}

fn scroll(offset: Option<&mut u16>, by: i32) -> Action {
    let Some(offset) = offset else {
        return Action::Nothing;
    };
    let next = (i32::from(*offset) + by).clamp(0, i32::from(u16::MAX)) as u16;
    if next == *offset {
        return Action::Nothing;
    }
    *offset = next;
    Action::Redraw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(state: &mut ViewState, keys: &[Key]) -> Vec<Action> {
        keys.iter().map(|&k| state.on_key(k)).collect()
    }

    /// Issue 15 keys: `q` and Ctrl-C quit; tab and shift-tab cycle the panes.
    #[test]
    fn q_quits_and_tab_cycles_the_panes() {
        let mut s = ViewState::new(3);
        assert_eq!(s.on_key(Key::Char('q')), Action::Quit);
        assert_eq!(s.on_key(Key::Interrupt), Action::Quit);
        press(&mut s, &[Key::Tab, Key::Tab]);
        assert_eq!(s.focus, 2);
        s.on_key(Key::Tab);
        assert_eq!(s.focus, 0);
        s.on_key(Key::BackTab);
        assert_eq!(s.focus, 2);
    }

    /// Issue 15 keys: arrows scroll the focused pane only, never below zero, within the drawn limits.
    #[test]
    fn arrows_scroll_the_focused_pane() {
        let mut s = ViewState::new(2);
        assert_eq!(s.on_key(Key::Up), Action::Nothing);
        press(&mut s, &[Key::Down, Key::Down, Key::Right]);
        assert_eq!((s.rows.clone(), s.columns.clone()), (vec![2, 0], vec![1, 0]));
        s.on_key(Key::Tab);
        press(&mut s, &[Key::PageDown]);
        assert_eq!(s.rows, vec![2, 10]);
        s.clamp(&[(1, 0), (4, 0)]);
        assert_eq!((s.rows.clone(), s.columns.clone()), (vec![1, 4], vec![0, 0]));
        s.on_key(Key::Home);
        assert_eq!(s.rows, vec![1, 0]);
    }

    /// Issue 15 keys: `/` starts a filter that applies as it is typed; Enter keeps it, Esc while
    /// typing drops the edit, Esc afterwards clears the filter; `q` typed into a filter is text.
    #[test]
    fn slash_filters_by_typed_text() {
        let mut s = ViewState::new(2);
        press(
            &mut s,
            &[Key::Down, Key::Char('/'), Key::Char('a'), Key::Char('q')],
        );
        assert_eq!(s.active_filter(), "aq");
        assert_eq!(s.filter, "");
        press(&mut s, &[Key::Backspace, Key::Enter]);
        assert_eq!((s.filter.as_str(), s.editing.clone()), ("a", None));
        assert_eq!(s.rows, vec![0, 0], "a new filter starts at the top");
        press(&mut s, &[Key::Char('/'), Key::Char('x'), Key::Esc]);
        assert_eq!(s.active_filter(), "a");
        s.on_key(Key::Esc);
        assert_eq!(s.active_filter(), "");
        assert_eq!(s.on_key(Key::Esc), Action::Nothing);
    }

    /// Hostile input: a filter never grows past its bound.
    #[test]
    fn filters_are_bounded() {
        let mut s = ViewState::new(1);
        s.on_key(Key::Char('/'));
        for _ in 0..1000 {
            s.on_key(Key::Char('x'));
        }
        assert_eq!(s.active_filter().chars().count(), FILTER_LIMIT);
    }

    /// Issue 27 item 11 (class: control characters reach a terminal): a control character or a
    /// bidirectional control typed or pasted into the filter is not kept, since the filter is drawn.
    #[test]
    fn issue27_item11_the_filter_keeps_no_control_or_bidi_character() {
        let mut s = ViewState::new(1);
        s.on_key(Key::Char('/'));
        for c in ['a', '\u{1b}', '\u{202e}', '\u{200f}', '\u{2066}', '\u{9b}', 'b'] {
            s.on_key(Key::Char(c));
        }
        assert_eq!(s.active_filter(), "ab");
    }
}
