//! Which model plays each role.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::kit::{hints, label, rows};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::fold::SessionState;
use crate::model::{ModelInfo, Role};
use crate::text::fit;

const NAME_W: usize = 22;

#[derive(Clone, Debug)]
pub struct ModelDialog {
    /// The session's roles: every strategy role, and the agent role in an
    /// outside agent's session.
    roles: Vec<Role>,
    /// Per role, the chosen entry of `available_models`.
    choice: Vec<Option<usize>>,
    row: usize,
}

fn current(state: &SessionState, role: Role) -> Option<&ModelInfo> {
    state.models.iter().find(|m| m.role == role).map(|m| &m.model)
}

fn describe(m: &ModelInfo) -> String {
    if m.simulated { format!("{} (simulated)", m.name) } else { m.name.clone() }
}

impl ModelDialog {
    pub(super) fn new(state: &SessionState) -> ModelDialog {
        let agent = state.models.iter().any(|m| m.role == Role::Agent).then_some(Role::Agent);
        let roles: Vec<Role> = Role::ALL.into_iter().chain(agent).collect();
        let choice = roles
            .iter()
            .map(|r| current(state, *r).and_then(|m| state.available_models.iter().position(|a| a.name == m.name)))
            .collect();
        // An outside agent's session is about its model: the cursor starts there.
        let start = if agent.is_some() { Role::Agent } else { Role::Actor };
        let row = roles.iter().position(|r| *r == start).unwrap_or(0);
        ModelDialog { roles, choice, row }
    }

    /// The model chosen for role `i` when it differs from the one playing it.
    fn switch<'s>(&self, i: usize, state: &'s SessionState) -> Option<&'s ModelInfo> {
        let chosen = state.available_models.get(self.choice[i]?)?;
        let now = current(state, self.roles[i]);
        (now.map(|m| &m.name) != Some(&chosen.name)).then_some(chosen)
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent, state: &SessionState) -> Outcome {
        let n = self.roles.len();
        let models = state.available_models.len();
        match key.code {
            KeyCode::Enter => {
                let controls = (0..n)
                    .filter_map(|i| {
                        self.switch(i, state)
                            .map(|m| Control::SwitchModel { role: self.roles[i], model: m.name.clone() })
                    })
                    .collect();
                return Outcome::Submit(controls);
            }
            KeyCode::Down | KeyCode::Tab => self.row = (self.row + 1) % n,
            KeyCode::Up | KeyCode::BackTab => self.row = (self.row + n - 1) % n,
            KeyCode::Right | KeyCode::Left if models > 0 => {
                let c = &mut self.choice[self.row];
                *c = Some(match (*c, key.code == KeyCode::Right) {
                    (Some(i), true) => (i + 1) % models,
                    (Some(i), false) => (i + models - 1) % models,
                    (None, true) => 0,
                    (None, false) => models - 1,
                });
            }
            _ => {}
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let [note, _, head, table, _, avail_head, avail, hint_row] =
            rows(area, [Some(1), Some(1), Some(1), Some(self.roles.len() as u16), Some(1), Some(1), None, Some(1)]);
        frame.render_widget(
            Paragraph::new(Span::styled("  A switch takes effect at the role's next call.", theme.muted())),
            note,
        );
        let header = format!("  {:<11}{:<w$}  {}", "role", "now", "switch to", w = NAME_W + 2);
        frame.render_widget(Paragraph::new(Span::styled(header, theme.title())), head);

        let model_style = |m: &ModelInfo| if m.simulated { theme.fg(theme.simulated) } else { Style::default() };
        for (i, role) in self.roles.iter().enumerate() {
            if i as u16 >= table.height {
                break;
            }
            let focused = i == self.row;
            let now = current(state, *role);
            let mut spans = vec![
                label(role.as_str(), 11, focused, theme),
                Span::styled(
                    format!("{:<w$}  ", fit(&now.map_or("—".into(), describe), NAME_W + 2), w = NAME_W + 2),
                    now.map_or(theme.muted(), model_style),
                ),
            ];
            let chosen = self.choice[i].and_then(|c| state.available_models.get(c));
            match (chosen, self.switch(i, state)) {
                (_, Some(m)) => {
                    let style = if focused { theme.selected() } else { theme.accent() };
                    spans.push(Span::styled(format!("◀ {} ▶", fit(&describe(m), NAME_W)), style));
                    spans.push(Span::styled("  • switch", theme.accent()));
                }
                (Some(m), None) if focused => {
                    spans.push(Span::styled(format!("◀ {} ▶", fit(&describe(m), NAME_W)), theme.selected()));
                }
                (None, None) if focused && state.available_models.is_empty() => {
                    spans.push(Span::styled("no models configured to switch to", theme.muted()));
                }
                (None, None) if focused => {
                    spans.push(Span::styled("◀ ←/→ to choose ▶", theme.selected()));
                }
                _ => spans.push(Span::styled("unchanged", theme.muted())),
            }
            let row = Rect { y: table.y + i as u16, height: 1, ..table };
            frame.render_widget(Paragraph::new(Line::from(spans)), row);
        }

        let names: Vec<Span> = std::iter::once(Span::raw("  "))
            .chain(state.available_models.iter().enumerate().flat_map(|(i, m)| {
                let sep = if i > 0 { ", " } else { "" };
                [Span::raw(sep), Span::styled(describe(m), model_style(m))]
            }))
            .collect();
        frame.render_widget(Paragraph::new(Span::styled("  Models configured:", theme.title())), avail_head);
        let avail_line = if state.available_models.is_empty() {
            Line::from(Span::styled("  none besides the ones playing now", theme.muted()))
        } else {
            Line::from(names)
        };
        frame.render_widget(Paragraph::new(avail_line).wrap(ratatui::widgets::Wrap { trim: false }), avail);
        let keys = [("↑/↓", "role"), ("←/→", "model"), ("Enter", "switch"), ("Esc", "cancel")];
        frame.render_widget(Paragraph::new(hints(&keys, theme)), hint_row);
    }
}
