//! Lines to read or copy before going on (the exports an agent started
//! elsewhere needs); any key closes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::kit::{hints, rows};
use super::outcome::Outcome;
use crate::Theme;

#[derive(Clone, Debug)]
pub struct NoticeDialog {
    title: String,
    lines: Vec<String>,
}

impl NoticeDialog {
    pub fn new(title: String, lines: Vec<String>) -> NoticeDialog {
        NoticeDialog { title, lines }
    }

    pub(super) fn title(&self) -> &str {
        &self.title
    }

    pub(super) fn size(&self) -> (u16, u16) {
        let widest = self.lines.iter().map(|l| crate::text::width(l)).max().unwrap_or(0);
        ((widest + 4).clamp(40, 160) as u16, self.lines.len() as u16 + 4)
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let [body, hint_row] = rows(area, [None, Some(1)]);
        let lines: Vec<Line> = self.lines.iter().map(|l| Line::raw(format!(" {l}"))).collect();
        frame.render_widget(Paragraph::new(lines), body);
        frame.render_widget(Paragraph::new(hints(&[("any key", "closes")], theme)), hint_row);
    }

    pub(super) fn handle_key(&mut self) -> Outcome {
        Outcome::Cancel
    }
}
