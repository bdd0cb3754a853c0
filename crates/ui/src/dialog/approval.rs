//! The call, result or reply that waits for the user (approvals): seen as
//! it is, then approved or kept, edited (arguments checked against the
//! tool's schema here, and again by the engine), or, for a call, rejected
//! with a note the model is shown.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use serde_json::Value;

use super::field::Field;
use super::kit::{error_message, field_row, hints, rows};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::debug::Decision;
use crate::engine::event::ToolOutcome;
use crate::engine::fold::debug::Pending;
use crate::tool::exec::check_against;

#[derive(Clone, Debug)]
enum Mode {
    Look,
    Edit(Field),
    /// The note of a rejection.
    Note(Field),
}

#[derive(Clone, Debug)]
pub struct ApprovalDialog {
    pending: Pending,
    mode: Mode,
    message: Option<String>,
    scroll: u16,
}

impl ApprovalDialog {
    /// `why`: the engine refused the last decision, and why.
    pub(super) fn new(pending: Pending, why: Option<String>) -> ApprovalDialog {
        ApprovalDialog { pending, mode: Mode::Look, message: why, scroll: 0 }
    }

    /// The call the dialog decides on.
    pub fn call(&self) -> u64 {
        self.pending.call()
    }

    pub(super) fn title(&self) -> &'static str {
        match self.pending {
            Pending::Call { .. } => "Approve the call",
            Pending::Result { .. } => "Review the result",
            Pending::Reply { .. } => "Review the reply",
        }
    }

    /// What waits, as the editor starts it.
    fn text(&self) -> String {
        match &self.pending {
            Pending::Call { args, .. } => pretty(args),
            Pending::Result { result: ToolOutcome::Ok { value }, .. } => pretty(value),
            Pending::Result { result: ToolOutcome::Err { error }, .. } => format!("error: {error}"),
            Pending::Reply { text, tool_calls, .. } => {
                let mut t = text.clone();
                for c in tool_calls {
                    t.push_str(&format!("\n[tool call] {} {}", c.name, c.arguments));
                }
                t
            }
        }
    }

    pub(super) fn height(&self) -> u16 {
        (self.text().lines().count() as u16 + 9).clamp(12, 40)
    }

    fn decide(&self, decision: Decision) -> Outcome {
        Outcome::Submit(vec![Control::Decide { call: self.call(), decision }])
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match &mut self.mode {
            Mode::Look => match key.code {
                KeyCode::Esc => Outcome::Cancel,
                KeyCode::Char('q') => Outcome::Quit,
                KeyCode::Enter | KeyCode::Char('y') => match self.pending {
                    Pending::Call { .. } => self.decide(Decision::Approve),
                    _ => self.decide(Decision::Keep),
                },
                KeyCode::Char('k') => self.decide(Decision::Keep),
                KeyCode::Char('e') => {
                    let mut field = match &self.pending {
                        Pending::Reply { text, .. } => Field::multi(text),
                        Pending::Result { result: ToolOutcome::Err { .. }, .. } => Field::code("null"),
                        _ => Field::code(&self.text()),
                    };
                    field.focus(true);
                    self.mode = Mode::Edit(field);
                    Outcome::Continue
                }
                KeyCode::Char('r') if matches!(self.pending, Pending::Call { .. }) => {
                    let mut note = Field::single("").with_hint("why — the model is shown this");
                    note.focus(true);
                    self.mode = Mode::Note(note);
                    Outcome::Continue
                }
                KeyCode::Char('r') => {
                    self.message = Some("only a call can be rejected: keep or edit this".into());
                    Outcome::Continue
                }
                KeyCode::Up => {
                    self.scroll = self.scroll.saturating_sub(1);
                    Outcome::Continue
                }
                KeyCode::Down => {
                    self.scroll = self.scroll.saturating_add(1);
                    Outcome::Continue
                }
                _ => Outcome::Continue,
            },
            Mode::Edit(field) => {
                if key.code == KeyCode::Esc {
                    self.mode = Mode::Look;
                    return Outcome::Continue;
                }
                if key.code == KeyCode::F(5) || (ctrl && matches!(key.code, KeyCode::Char('s' | 'S'))) {
                    let text = field.text();
                    return match self.edit(&text) {
                        Ok(decision) => self.decide(decision),
                        Err(e) => {
                            self.message = Some(e);
                            Outcome::Continue
                        }
                    };
                }
                match key.code {
                    KeyCode::Enter => field.newline(),
                    KeyCode::Tab => field.tab(),
                    _ => {
                        field.input(key);
                    }
                }
                Outcome::Continue
            }
            Mode::Note(field) => match key.code {
                KeyCode::Esc => {
                    self.mode = Mode::Look;
                    Outcome::Continue
                }
                KeyCode::Enter => {
                    let note = field.text().trim().to_string();
                    self.decide(Decision::Reject { note })
                }
                _ => {
                    field.input(key);
                    Outcome::Continue
                }
            },
        }
    }

    /// The user's edit as a decision; an edit that changes nothing lets the
    /// original through. Arguments must be an object that fits the schema.
    fn edit(&self, text: &str) -> Result<Decision, String> {
        let json = || serde_json::from_str::<Value>(text).map_err(|e| format!("not JSON: {e}"));
        match &self.pending {
            Pending::Call { args, parameters, .. } => {
                let after = json()?;
                check_against(parameters, &after).map_err(|e| e.message)?;
                Ok(if &after == args { Decision::Approve } else { Decision::EditArgs { args: after } })
            }
            Pending::Result { result, .. } => {
                let after = json()?;
                let same = matches!(result, ToolOutcome::Ok { value } if *value == after);
                Ok(if same { Decision::Keep } else { Decision::EditResult { value: after } })
            }
            Pending::Reply { text: before, tool_calls, .. } => {
                let same = text == before && tool_calls.is_empty();
                Ok(if same { Decision::Keep } else { Decision::EditReply { text: text.to_string() } })
            }
        }
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let [head, body, message, hint_row] = rows(area, [Some(1), None, Some(1), Some(1)]);
        let head_text = match &self.pending {
            Pending::Call { call, tool, lane, .. } => {
                let lane = lane.map(|l| format!(" · lane {l}")).unwrap_or_default();
                format!("  call {call} · {tool}{lane} · its arguments")
            }
            Pending::Result { call, tool, .. } => {
                format!("  call {call} · {tool} · its result, before a model sees it")
            }
            Pending::Reply { call, role, .. } => format!("  call {call} · the {role}'s reply, before it is acted on"),
        };
        frame.render_widget(Paragraph::new(Span::styled(head_text, theme.accent())), head);
        let at = Rect { x: body.x + 2, width: body.width.saturating_sub(2), ..body };
        let boxed = Block::default().borders(Borders::LEFT).border_style(theme.border(true));
        let inner = boxed.inner(at);
        frame.render_widget(boxed, at);
        let inner = Rect { x: inner.x + 1, width: inner.width.saturating_sub(1), ..inner };
        match &self.mode {
            Mode::Edit(field) => field.render(frame, inner),
            Mode::Look | Mode::Note(_) => {
                let [content, note_row] =
                    rows(inner, [None, Some(if matches!(self.mode, Mode::Note(_)) { 2 } else { 0 })]);
                let lines: Vec<Line> = self.text().lines().map(|l| Line::raw(l.to_string())).collect();
                frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((self.scroll, 0)), content);
                if let Mode::Note(field) = &self.mode {
                    let row = Rect { y: note_row.y + 1, height: 1, ..note_row };
                    let w = row.width.saturating_sub(20);
                    field_row(frame, row, Line::raw("note "), field, w, Line::raw(""));
                }
            }
        }
        if let Some(m) = &self.message {
            frame.render_widget(Paragraph::new(error_message(m, theme)), message);
        }
        let keys: &[(&str, &str)] = match (&self.mode, &self.pending) {
            (Mode::Look, Pending::Call { .. }) => &[
                ("Enter/y", "approve"),
                ("e", "edit arguments"),
                ("r", "reject"),
                ("Esc", "hide (a shows it)"),
                ("q", "quit"),
            ],
            (Mode::Look, _) => {
                &[("Enter/k", "keep"), ("e", "edit"), ("↑/↓", "scroll"), ("Esc", "hide (a shows it)"), ("q", "quit")]
            }
            (Mode::Edit(_), _) => &[("Ctrl+S / F5", "send the edit"), ("Enter", "new line"), ("Esc", "back")],
            (Mode::Note(_), _) => &[("Enter", "reject with this note"), ("Esc", "back")],
        };
        frame.render_widget(Paragraph::new(hints(keys, theme)), hint_row);
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The debugger's controls as the flash line names them once sent.
pub fn describe(c: &Control) -> Option<String> {
    Some(match c {
        Control::Decide { call, decision } => match decision {
            Decision::Approve => format!("call {call} approved"),
            Decision::Keep => format!("call {call}: kept as it is"),
            Decision::Reject { .. } => format!("call {call} rejected"),
            Decision::EditArgs { .. } => format!("call {call}: your arguments"),
            Decision::EditResult { .. } => format!("call {call}: your result"),
            Decision::EditReply { .. } => format!("call {call}: your reply"),
        },
        Control::SetApproval { policy } => format!("approvals: {policy}"),
        Control::SetBreakpoint { condition } => format!("breakpoint {condition}"),
        Control::ClearBreakpoint { id } => format!("delete breakpoint #{id}"),
        Control::ToggleBreakpoint { id } => format!("breakpoint #{id} on / off"),
        _ => return None,
    })
}
