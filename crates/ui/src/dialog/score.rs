//! Edit a node's score, seeing the weights that flow into it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::field::Field;
use super::kit::{error_message, field_row, hints, label, rows};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::fold::SessionState;
use crate::text::fit;

#[derive(Clone, Debug)]
pub struct ScoreDialog {
    tool: String,
    value: Field,
}

impl ScoreDialog {
    pub(super) fn new(state: &SessionState, tool: &str) -> ScoreDialog {
        let score = state.graph.as_ref().map(|g| g.score(tool)).unwrap_or(0.0);
        let mut value = Field::single(&score.to_string());
        value.focus(true);
        value.select_all();
        ScoreDialog { tool: tool.to_string(), value }
    }

    /// Rows the popup wants: the text around the list, and the list up to a dozen.
    pub(super) fn height(&self, state: &SessionState) -> u16 {
        let preds = state.graph.as_ref().map_or(0, |g| g.predecessors(&self.tool).len());
        10 + preds.clamp(1, 12) as u16
    }

    fn parse(&self) -> Result<f64, String> {
        let text = self.value.text();
        let t = text.trim();
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(_) => Err(format!("the score must be a finite number, got '{t}'")),
            Err(_) => Err(format!("'{t}' is not a number")),
        }
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Enter => match self.parse() {
                Ok(score) => Outcome::Submit(vec![Control::EditScore { tool: self.tool.clone(), score }]),
                Err(_) => Outcome::Continue,
            },
            _ => {
                self.value.input(key);
                Outcome::Continue
            }
        }
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let [head, note, _, weights_head, list, _, value_row, error_row, hint_row] =
            rows(area, [Some(1), Some(1), Some(1), Some(1), None, Some(1), Some(1), Some(1), Some(1)]);
        let width = area.width as usize;

        let now = state.graph.as_ref().map(|g| g.score(&self.tool));
        let head_line = Line::from(vec![
            Span::raw("  Tool "),
            Span::styled(fit(&self.tool, width.saturating_sub(30)).into_owned(), theme.accent()),
            Span::raw("   score now "),
            Span::styled(now.map_or("—".to_string(), |s| format!("{s:.3}")), theme.accent()),
        ]);
        frame.render_widget(Paragraph::new(head_line), head);
        frame.render_widget(
            Paragraph::new(Span::styled(
                "  Takes effect at the next decision point; recorded in the trace.",
                theme.muted(),
            )),
            note,
        );

        let mut preds = state.graph.as_ref().map(|g| g.predecessors(&self.tool)).unwrap_or_default();
        preds.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let head_text = match (&state.graph, preds.len()) {
            (None, _) => "  No graph in this session: the score has no weights into it.".to_string(),
            (Some(_), 0) => format!("  No edges lead into {}.", self.tool),
            (Some(_), n) => format!("  Weights into {} from its {n} predecessors:", self.tool),
        };
        frame.render_widget(Paragraph::new(Span::styled(head_text, theme.title())), weights_head);

        let h = list.height as usize;
        let shown = if preds.len() > h { h.saturating_sub(1) } else { preds.len() };
        let name_w = preds.iter().take(shown).map(|p| p.0.chars().count()).max().unwrap_or(0).min(32);
        let format = state.params.weight_format;
        let mut lines: Vec<Line> = preds
            .iter()
            .take(shown)
            .map(|(from, w)| {
                let seen = format.show(*w).map(|s| format!("   shown as {s}")).unwrap_or_default();
                Line::from(vec![
                    Span::raw(format!("    {:<name_w$}  ", fit(from, name_w))),
                    Span::styled(format!("{w:.3}"), theme.fg(theme.chart_weight)),
                    Span::styled(seen, theme.muted()),
                ])
            })
            .collect();
        if preds.len() > shown && h > 0 {
            lines.push(Line::from(Span::styled(format!("    … and {} more", preds.len() - shown), theme.muted())));
        }
        frame.render_widget(Paragraph::new(lines), list);

        field_row(frame, value_row, Line::from(label("New score", 10, true, theme)), &self.value, 14, Line::from(""));
        if let Err(e) = self.parse() {
            frame.render_widget(Paragraph::new(error_message(&e, theme)), error_row);
        }
        frame.render_widget(Paragraph::new(hints(&[("Enter", "set score"), ("Esc", "cancel")], theme)), hint_row);
    }
}
