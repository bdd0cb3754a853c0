//! Fix and continue (atc): the current program in an editor; what the user
//! submits runs as the next round of the task's program chain, in place of
//! the model's rewrite.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::field::Field;
use super::kit::{error_message, hints, rows};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::fold::SessionState;

#[derive(Clone, Debug)]
pub struct ProgramDialog {
    text: Field,
    /// The program as it was when the dialog opened (empty before the
    /// planner wrote one: the user's then takes round 0).
    original: String,
    /// What the header says the edit replaces.
    round: Option<u32>,
    message: Option<String>,
}

impl ProgramDialog {
    pub(super) fn new(state: &SessionState) -> ProgramDialog {
        let program = state.current.as_ref().and_then(|r| r.program.as_ref());
        let original = program.map(|p| p.source.clone()).unwrap_or_default();
        let mut text = Field::code(&original);
        text.focus(true);
        ProgramDialog { text, original, round: program.map(|p| p.round), message: None }
    }

    /// Rows the popup wants: the program with room to grow, up to a screenful.
    pub(super) fn height(&self) -> u16 {
        (self.original.lines().count() as u16 + 10).clamp(14, 40)
    }

    fn submit(&self) -> Result<String, String> {
        let text = self.text.text();
        let program = text.trim_end();
        if program.trim().is_empty() {
            return Err("the program is empty".into());
        }
        Ok(program.to_string())
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Enter is a new line here; a debugger's F5 (continue) or Ctrl+S runs it.
        if key.code == KeyCode::F(5) || (ctrl && matches!(key.code, KeyCode::Char('s' | 'S'))) {
            return match self.submit() {
                Ok(program) => Outcome::Submit(vec![Control::EditProgram { program }]),
                Err(e) => {
                    self.message = Some(e);
                    Outcome::Continue
                }
            };
        }
        match key.code {
            KeyCode::Tab => self.text.tab(),
            KeyCode::Enter => self.text.newline(),
            _ => {
                self.text.input(key);
            }
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let [head, editor, message, hint_row] = rows(area, [Some(1), None, Some(1), Some(1)]);
        let what = match self.round {
            Some(r) => format!("The program of round {r}"),
            None => "No program yet: yours takes round 0".to_string(),
        };
        let line = Line::from(vec![
            Span::styled(format!("  {what}"), theme.accent()),
            Span::styled("  · runs as the next round, in place of the model's rewrite", theme.muted()),
        ]);
        frame.render_widget(Paragraph::new(line), head);
        let boxed = Block::default().borders(Borders::LEFT).border_style(theme.border(true));
        let at = Rect { x: editor.x + 2, width: editor.width.saturating_sub(2), ..editor };
        let inner = boxed.inner(at);
        frame.render_widget(boxed, at);
        self.text.render(frame, Rect { x: inner.x + 1, width: inner.width.saturating_sub(1), ..inner });
        let note = match &self.message {
            Some(m) => Some(error_message(m, theme)),
            None if self.text.text().trim_end() == self.original.trim_end() && !self.original.is_empty() => {
                Some(Line::styled("  unchanged: it runs the same program again", theme.muted()))
            }
            None => None,
        };
        if let Some(n) = note {
            frame.render_widget(Paragraph::new(n), message);
        }
        let keys = [("Ctrl+S / F5", "run it"), ("Enter", "new line"), ("Tab", "indent"), ("Esc", "cancel")];
        frame.render_widget(Paragraph::new(hints(&keys, theme)), hint_row);
    }
}
