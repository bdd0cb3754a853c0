//! Breakpoints (`b`): the list with each one's hit count; add one (the
//! condition read by the same parser as `--break`, an error shown inline),
//! delete one, enable or disable one. Read-only in a replay.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::field::Field;
use super::kit::{error_message, field_row, hints, list_step, rows, window};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::debug::{BREAK_FORMS, Condition};
use crate::engine::fold::SessionState;

#[derive(Clone, Debug)]
pub struct BreakpointsDialog {
    selected: usize,
    offset: Cell<usize>,
    /// The condition being typed; the field has the keys while focused.
    add: Field,
    adding: bool,
    replay: bool,
    message: Option<String>,
}

impl BreakpointsDialog {
    pub(super) fn new(state: &SessionState, replay: bool) -> BreakpointsDialog {
        // With nothing to pick, the keys go to the new condition at once.
        let adding = state.debug.breakpoints.is_empty() && !replay;
        let mut add = Field::single("").with_hint("e.g. tool=geo_lookup, error, cost>0.5, step=3");
        add.focus(adding);
        BreakpointsDialog { selected: 0, offset: Cell::new(0), add, adding, replay, message: None }
    }

    pub(super) fn height(&self, state: &SessionState) -> u16 {
        9 + (state.debug.breakpoints.len() as u16).clamp(1, 12)
    }

    fn focus_add(&mut self, on: bool) {
        self.adding = on;
        self.add.focus(on);
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent, state: &SessionState) -> Outcome {
        self.message = None;
        let list = &state.debug.breakpoints;
        if self.adding {
            return match key.code {
                KeyCode::Tab | KeyCode::BackTab if !list.is_empty() => {
                    self.focus_add(false);
                    Outcome::Continue
                }
                KeyCode::Enter => match self.condition(state) {
                    Ok(condition) => Outcome::Submit(vec![Control::SetBreakpoint { condition }]),
                    Err(e) => {
                        self.message = Some(e);
                        Outcome::Continue
                    }
                },
                _ => {
                    self.add.input(key);
                    Outcome::Continue
                }
            };
        }
        let picked = list.get(self.selected.min(list.len().saturating_sub(1)));
        match key.code {
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown => {
                let to = self.selected as isize + list_step(key.code);
                self.selected = to.clamp(0, list.len().saturating_sub(1) as isize) as usize;
                Outcome::Continue
            }
            _ if self.replay => {
                self.message = Some("a replay is read-only".into());
                Outcome::Continue
            }
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus_add(true);
                Outcome::Continue
            }
            KeyCode::Char(' ') | KeyCode::Enter if picked.is_some() => {
                Outcome::Submit(picked.map(|b| Control::ToggleBreakpoint { id: b.id }).into_iter().collect())
            }
            KeyCode::Char('d') | KeyCode::Delete if picked.is_some() => {
                Outcome::Submit(picked.map(|b| Control::ClearBreakpoint { id: b.id }).into_iter().collect())
            }
            _ => Outcome::Continue,
        }
    }

    /// The typed condition, read as `--break` reads it; a tool it names must exist.
    fn condition(&self, state: &SessionState) -> Result<Condition, String> {
        let c: Condition = self.add.text().parse()?;
        if let Some(t) = c.tool().filter(|t| !state.tools.iter().any(|x| x.name == *t)) {
            return Err(format!("no tool named '{t}'"));
        }
        Ok(c)
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let [head, list_area, _, add_row, forms, message, hint_row] =
            rows(area, [Some(1), None, Some(1), Some(1), Some(1), Some(1), Some(1)]);
        frame.render_widget(Paragraph::new(Span::styled("    #  on   hits  condition", theme.muted())), head);
        let list = &state.debug.breakpoints;
        if list.is_empty() {
            frame.render_widget(Paragraph::new(Span::styled("  (no breakpoint yet)", theme.muted())), list_area);
        }
        let selected = self.selected.min(list.len().saturating_sub(1));
        let shown = window(selected, list.len(), list_area.height as usize, &self.offset);
        let lines: Vec<Line> = list[shown.clone()]
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let here = shown.start + k == selected && !self.adding;
                let style = if here { theme.selected() } else { theme.base() };
                let on = if b.enabled { "[x]" } else { "[ ]" };
                let marker = if here { "▸ " } else { "  " };
                Line::styled(format!("{marker}{:>2}  {on}  {:>4}  {}", b.id, b.hits, b.condition), style)
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), list_area);
        if !self.replay {
            let w = add_row.width.saturating_sub(12).min(60);
            field_row(
                frame,
                add_row,
                Line::raw(if self.adding { "▸ add " } else { "  add " }),
                &self.add,
                w,
                Line::raw(""),
            );
            let forms_line = Line::styled(format!("  {BREAK_FORMS}"), theme.muted());
            frame.render_widget(Paragraph::new(forms_line), forms);
        }
        if let Some(m) = &self.message {
            frame.render_widget(Paragraph::new(error_message(m, theme)), message);
        }
        let keys: &[(&str, &str)] = match (self.replay, self.adding) {
            (true, _) => &[("↑/↓", "pick"), ("Esc", "close")],
            (false, true) => &[("Enter", "add"), ("Tab", "the list"), ("Esc", "close")],
            (false, false) => {
                &[("↑/↓", "pick"), ("space", "on / off"), ("d", "delete"), ("Tab", "add one"), ("Esc", "close")]
            }
        };
        frame.render_widget(Paragraph::new(hints(keys, theme)), hint_row);
    }
}
