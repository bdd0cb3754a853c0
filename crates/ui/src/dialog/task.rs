//! Edit the current task's text (which restarts it), or pick the task to run next.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::field::Field;
use super::kit::{error_message, field_row, hints, label, list_step, rows, window};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::fold::SessionState;
use crate::text::fit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    Text,
    List,
}

#[derive(Clone, Debug)]
pub struct TaskDialog {
    text: Field,
    /// The text as it was when the dialog opened; None when no task runs.
    original: Option<String>,
    filter: Field,
    lower: Vec<String>,
    /// Indices into the session's task list that pass the filter.
    shown: Vec<usize>,
    selected: usize,
    offset: Cell<usize>,
    section: Section,
    message: Option<String>,
}

impl TaskDialog {
    pub(super) fn new(state: &SessionState) -> TaskDialog {
        let original = state.current.as_ref().map(|r| r.task.clone());
        let lower: Vec<String> =
            state.task_list.iter().map(|t| format!("{} {}", t.id, t.query).to_lowercase()).collect();
        let mut d = TaskDialog {
            text: Field::multi(original.as_deref().unwrap_or("")),
            original,
            filter: Field::single("").with_hint("type to filter"),
            shown: (0..lower.len()).collect(),
            lower,
            selected: 0,
            offset: Cell::new(0),
            section: Section::Text,
            message: None,
        };
        d.set_section(if d.original.is_some() { Section::Text } else { Section::List });
        d
    }

    /// Rows the popup wants: the text, and the task list up to a screenful.
    pub(super) fn height(&self) -> u16 {
        13 + self.lower.len().clamp(5, 20) as u16
    }

    fn set_section(&mut self, s: Section) {
        self.section = s;
        self.text.focus(s == Section::Text);
        self.filter.focus(s == Section::List);
    }

    fn edited(&self) -> Result<String, String> {
        let original = self.original.as_deref().ok_or("no task is running: pick one from the list below")?;
        let text = self.text.text();
        let text = text.trim();
        if text.is_empty() {
            return Err("the task text is empty".into());
        }
        if text == original.trim() {
            return Err("the text is unchanged (r restarts the task as it is)".into());
        }
        Ok(text.to_string())
    }

    fn refilter(&mut self) {
        let keep = self.shown.get(self.selected).copied();
        let q = self.filter.text().trim().to_lowercase();
        self.shown = (0..self.lower.len()).filter(|&i| q.is_empty() || self.lower[i].contains(&q)).collect();
        self.selected = keep.and_then(|k| self.shown.iter().position(|&i| i == k)).unwrap_or(0);
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        match (self.section, key.code) {
            (_, KeyCode::Tab | KeyCode::BackTab) => {
                self.set_section(if self.section == Section::Text { Section::List } else { Section::Text });
            }
            (Section::Text, KeyCode::Enter) if key.modifiers.contains(KeyModifiers::ALT) => self.text.newline(),
            (Section::Text, KeyCode::Enter) => match self.edited() {
                Ok(text) => return Outcome::Submit(vec![Control::EditTask { text }]),
                Err(e) => self.message = Some(e),
            },
            (Section::Text, _) => {
                self.text.input(key);
            }
            (Section::List, KeyCode::Enter) => match self.shown.get(self.selected) {
                Some(&i) => return Outcome::Submit(vec![Control::PickTask { index: i as u32 + 1 }]),
                None => self.message = Some("no task matches the filter".into()),
            },
            (Section::List, KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown) => {
                let delta = list_step(key.code);
                let last = self.shown.len().saturating_sub(1);
                self.selected = self.selected.saturating_add_signed(delta).min(last);
            }
            (Section::List, _) => {
                if self.filter.input(key) {
                    self.refilter();
                }
            }
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let text_h = if area.height >= 30 { 6 } else { 4 };
        let [text_head, text_box, text_msg, _, list_head, list, hint_row] =
            rows(area, [Some(1), Some(text_h), Some(1), Some(1), Some(1), None, Some(1)]);
        let in_text = self.section == Section::Text;

        let where_ = match &state.current {
            Some(r) => format!("Task {} ({} of {})", r.task_id, r.index, state.total_tasks),
            None => "Task (none running)".to_string(),
        };
        let head = Line::from(vec![
            label(&where_, 0, in_text, theme),
            Span::styled("  Enter: restart with this text · Alt+Enter: new line", theme.muted()),
        ]);
        frame.render_widget(Paragraph::new(head), text_head);
        let boxed = Block::default().borders(Borders::LEFT).border_style(theme.border(in_text));
        let inner = boxed.inner(Rect { x: text_box.x + 2, width: text_box.width.saturating_sub(2), ..text_box });
        frame.render_widget(boxed, Rect { x: text_box.x + 2, width: text_box.width.saturating_sub(2), ..text_box });
        self.text.render(frame, Rect { x: inner.x + 1, width: inner.width.saturating_sub(1), ..inner });
        let text_error = if in_text { self.message.clone().or_else(|| self.edited().err()) } else { None };
        if let Some(e) = text_error {
            let line = if self.message.is_some() { error_message(&e, theme) } else { muted_note(&e, theme) };
            frame.render_widget(Paragraph::new(line), text_msg);
        }

        let picked = state.picked.map(|p| format!(" (task {p})")).unwrap_or_default();
        let prefix = Line::from(label("Next task", 10, !in_text, theme));
        let suffix = Line::from(Span::styled(
            format!("{} of {} · ▶ running · • picked{picked}", self.shown.len(), self.lower.len()),
            theme.muted(),
        ));
        let fw = list_head.width.saturating_sub(56).clamp(16, 30);
        field_row(frame, list_head, prefix, &self.filter, fw, suffix);
        self.render_list(frame, list, state, theme);

        if let (false, Some(m)) = (in_text, &self.message) {
            frame.render_widget(Paragraph::new(error_message(m, theme)), text_msg);
        }
        let keys: &[(&str, &str)] = if in_text {
            &[("Enter", "restart with this text"), ("Tab", "task list"), ("Esc", "cancel")]
        } else {
            &[("↑/↓", "task"), ("Enter", "run it after the current one"), ("Tab", "text"), ("Esc", "cancel")]
        };
        frame.render_widget(Paragraph::new(hints(keys, theme)), hint_row);
    }

    fn render_list(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let visible = window(self.selected, self.shown.len(), area.height as usize, &self.offset);
        let in_list = self.section == Section::List;
        let running = state.current.as_ref().map(|r| r.index);
        let width = area.width as usize;
        let mut lines = Vec::new();
        for pos in visible {
            let i = self.shown[pos];
            let Some(t) = state.task_list.get(i) else { continue };
            let n = i as u32 + 1;
            let chosen = pos == self.selected && in_list;
            let mark = if running == Some(n) {
                "▶ "
            } else if state.picked == Some(n) {
                "• "
            } else {
                "  "
            };
            let head = format!("  {}{mark}{n:>3}. {} — ", if chosen { "▸" } else { " " }, t.id);
            let rest = fit(&t.query, width.saturating_sub(head.chars().count())).into_owned();
            let line = Line::from(vec![Span::raw(head), Span::raw(rest)]);
            lines.push(if chosen { line.style(theme.selected()) } else { line });
        }
        if self.shown.is_empty() && area.height > 0 {
            let why = if self.lower.is_empty() { "the session has no task list" } else { "no task matches" };
            lines.push(Line::from(Span::styled(format!("      {why}"), theme.muted())));
        }
        frame.render_widget(Paragraph::new(lines), area);
    }
}

fn muted_note(s: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(format!("  {s}"), theme.muted()))
}
