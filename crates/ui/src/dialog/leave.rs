//! Leaving a session that waits for the user (paused, or at an approval):
//! end it, or suspend it so that `switchyard resume` takes it up there.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::kit::{hints, rows};
use super::outcome::Outcome;
use crate::Theme;

#[derive(Clone, Debug, Default)]
pub struct LeaveDialog;

const LINES: [&str; 4] = [
    "The session waits for you. Leave it how?",
    "",
    "q  end it: the session stops here, its trace is complete",
    "s  suspend it: this process ends, `switchyard resume TRACE` takes it up here",
];

impl LeaveDialog {
    pub(super) fn size(&self) -> (u16, u16) {
        let widest = LINES.iter().map(|l| crate::text::width(l)).max().unwrap_or(0);
        (widest as u16 + 4, LINES.len() as u16 + 4)
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let [body, hint_row] = rows(area, [None, Some(1)]);
        let lines: Vec<Line> = LINES.iter().map(|l| Line::raw(format!(" {l}"))).collect();
        frame.render_widget(Paragraph::new(lines), body);
        frame.render_widget(Paragraph::new(hints(&[("q", "end"), ("s", "suspend"), ("esc", "back")], theme)), hint_row);
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Char('q') => Outcome::End,
            KeyCode::Char('s') => Outcome::Suspend,
            _ => Outcome::Continue,
        }
    }
}
