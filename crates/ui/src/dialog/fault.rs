//! Inject a fault: pick a tool (with a filter), a mode and a scope; or a
//! role or model (`model:` targets, after the tools) with a model's modes.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::field::Field;
use super::kit::{choice, error_message, field_row, hints, label, list_step, rows, window};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::Control;
use crate::engine::fold::SessionState;
use crate::model::Role;
use crate::model::fault::ModelFaultMode;
use crate::symbols::FAULT;
use crate::text::{fit, spans_width};
use crate::tool::fault::{Fault, FaultMode, FaultScope};

const MODES: [&str; 6] = ["error", "nothing-found", "garbage", "timeout", "slow", "crash"];
const SLOW: usize = 4;
const MODEL_MODES: [&str; 7] = ["malformed", "empty", "truncated", "http-500", "429", "timeout", "slow"];
/// The model modes that take milliseconds: 429's Retry-After and slow's delay.
const MODEL_RETRY_AFTER: usize = 4;
const MODEL_SLOW: usize = 6;
/// How a role or model is listed among the tools.
const MODEL_PREFIX: &str = "model:";
const SCOPES: [&str; 4] = ["once", "times", "probability", "until-cleared"];
const TIMES: usize = 1;
const PROBABILITY: usize = 2;
const UNTIL_CLEARED: usize = 3;
const LABEL_W: usize = 7;
const VALUE_W: u16 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Focus {
    Tool,
    Mode,
    Ms,
    Scope,
    Value,
}

#[derive(Clone, Debug)]
pub struct FaultDialog {
    /// The tools, then `model:` targets (roles, then models by name).
    names: Vec<String>,
    /// How many of `names` are tools.
    tools: usize,
    lower: Vec<String>,
    descriptions: Vec<String>,
    /// Indices into `names` that pass the filter.
    shown: Vec<usize>,
    /// Index into `shown`.
    selected: usize,
    offset: Cell<usize>,
    filter: Field,
    mode: usize,
    model_mode: usize,
    ms: Field,
    scope: usize,
    times: Field,
    probability: Field,
    focus: Focus,
    /// Why the last Enter did nothing, when the live check does not say.
    message: Option<String>,
}

impl FaultDialog {
    pub(super) fn new(state: &SessionState, preselect: Option<&str>) -> FaultDialog {
        let mut names: Vec<String> = state.tools.iter().map(|t| t.name.clone()).collect();
        let mut descriptions: Vec<String> = state.tools.iter().map(|t| t.description.clone()).collect();
        // An outside agent's own tools, once its replies showed them.
        for t in &state.agent_tools {
            names.push(t.clone());
            descriptions.push("the agent's own: its result is rewritten before its model reads it".into());
        }
        let tools = names.len();
        for (target, description) in model_targets(state) {
            names.push(format!("{MODEL_PREFIX}{target}"));
            descriptions.push(description);
        }
        let lower = names.iter().map(|n| n.to_lowercase()).collect();
        let selected = preselect.and_then(|p| names.iter().position(|n| n == p)).unwrap_or(0);
        let mut d = FaultDialog {
            shown: (0..names.len()).collect(),
            names,
            tools,
            lower,
            descriptions,
            selected,
            offset: Cell::new(0),
            filter: Field::single("").with_hint("type to filter the tools"),
            mode: 0,
            model_mode: 0,
            ms: Field::single("2000"),
            scope: UNTIL_CLEARED,
            times: Field::single("2"),
            probability: Field::single("0.5"),
            focus: Focus::Tool,
            message: None,
        };
        d.set_focus(Focus::Tool);
        d
    }

    /// Rows the popup wants: the fixed rows and the whole library up to a screenful.
    pub(super) fn height(&self) -> u16 {
        8 + self.names.len().clamp(5, 24) as u16
    }

    fn tool(&self) -> Option<&str> {
        self.shown.get(self.selected).map(|&i| self.names[i].as_str())
    }

    /// The role or model chosen, when a `model:` target is.
    fn model_target(&self) -> Option<&str> {
        let i = *self.shown.get(self.selected)?;
        (i >= self.tools).then(|| &self.names[i][MODEL_PREFIX.len()..])
    }

    /// The mode takes milliseconds (slow, and a model's 429).
    fn wants_ms(&self) -> bool {
        match self.model_target() {
            Some(_) => matches!(self.model_mode, MODEL_RETRY_AFTER | MODEL_SLOW),
            None => self.mode == SLOW,
        }
    }

    /// The fault the dialog describes now, or why it describes none.
    fn build(&self) -> Result<Control, String> {
        let tool = self.tool().ok_or("no tool matches the filter")?.to_string();
        let scope = self.build_scope()?;
        if let Some(target) = self.model_target() {
            let name = MODEL_MODES[self.model_mode];
            let mode = if self.wants_ms() {
                ModelFaultMode::parse(&format!("{name}={}", self.ms.text().trim()))?
            } else {
                ModelFaultMode::parse(name)?
            };
            return Ok(Control::InjectModelFault { target: target.to_string(), fault: Fault { mode, scope } });
        }
        let mode = if self.mode == SLOW {
            FaultMode::parse(&format!("slow={}", self.ms.text().trim()))?
        } else {
            FaultMode::parse(MODES[self.mode])?
        };
        Ok(Control::InjectFault { tool, fault: Fault { mode, scope } })
    }

    fn build_scope(&self) -> Result<FaultScope, String> {
        Ok(match self.scope {
            TIMES => {
                let n = self.times.text();
                FaultScope::parse(&format!("times={}", n.trim())).map_err(|e| format!("N: {e}"))?
            }
            PROBABILITY => {
                let p = self.probability.text();
                FaultScope::parse(&format!("p={}", p.trim()))?
            }
            i => FaultScope::parse(SCOPES[i])?,
        })
    }

    fn stops(&self) -> Vec<Focus> {
        let mut s = vec![Focus::Tool, Focus::Mode];
        if self.wants_ms() {
            s.push(Focus::Ms);
        }
        s.push(Focus::Scope);
        if matches!(self.scope, TIMES | PROBABILITY) {
            s.push(Focus::Value);
        }
        s
    }

    fn value_field(&mut self) -> &mut Field {
        if self.scope == PROBABILITY { &mut self.probability } else { &mut self.times }
    }

    fn set_focus(&mut self, focus: Focus) {
        self.focus = focus;
        self.filter.focus(focus == Focus::Tool);
        self.ms.focus(focus == Focus::Ms);
        self.times.focus(focus == Focus::Value && self.scope == TIMES);
        self.probability.focus(focus == Focus::Value && self.scope == PROBABILITY);
        match focus {
            Focus::Ms => self.ms.select_all(),
            Focus::Value => self.value_field().select_all(),
            _ => {}
        }
    }

    fn step_focus(&mut self, forward: bool) {
        let stops = self.stops();
        let i = stops.iter().position(|f| *f == self.focus).unwrap_or(0);
        let n = stops.len();
        let next = if forward { (i + 1) % n } else { (i + n - 1) % n };
        self.set_focus(stops[next]);
    }

    fn refilter(&mut self) {
        let keep = self.shown.get(self.selected).copied();
        let q = self.filter.text().trim().to_lowercase();
        self.shown = (0..self.names.len()).filter(|&i| q.is_empty() || self.lower[i].contains(&q)).collect();
        self.selected = keep.and_then(|k| self.shown.iter().position(|&i| i == k)).unwrap_or(0);
    }

    fn move_selection(&mut self, delta: isize) {
        if self.shown.is_empty() {
            return;
        }
        let last = self.shown.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        match key.code {
            KeyCode::Tab => self.step_focus(true),
            KeyCode::BackTab => self.step_focus(false),
            KeyCode::Enter => {
                if self.focus == Focus::Tool {
                    match self.tool() {
                        Some(_) => self.set_focus(Focus::Mode),
                        None => self.message = Some("no tool matches the filter".into()),
                    }
                } else if let Ok(control) = self.build() {
                    return Outcome::Submit(vec![control]);
                }
            }
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown if self.focus == Focus::Tool => {
                let delta = list_step(key.code);
                self.move_selection(delta);
            }
            KeyCode::Up => self.step_focus(false),
            KeyCode::Down => self.step_focus(true),
            KeyCode::Left | KeyCode::Right if matches!(self.focus, Focus::Mode | Focus::Scope) => {
                let forward = key.code == KeyCode::Right;
                let cycle = |i: usize, n: usize| if forward { (i + 1) % n } else { (i + n - 1) % n };
                if self.focus == Focus::Mode && self.model_target().is_some() {
                    self.model_mode = cycle(self.model_mode, MODEL_MODES.len());
                } else if self.focus == Focus::Mode {
                    self.mode = cycle(self.mode, MODES.len());
                } else {
                    self.scope = cycle(self.scope, SCOPES.len());
                }
            }
            _ => match self.focus {
                Focus::Tool => {
                    if self.filter.input(key) {
                        self.refilter();
                    }
                }
                Focus::Ms => {
                    self.ms.input(key);
                }
                Focus::Value => {
                    self.value_field().input(key);
                }
                Focus::Mode | Focus::Scope => {}
            },
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let [filter_row, list_area, active_row, mode_row, scope_row, error_row, hint_row] =
            rows(area, [Some(1), None, Some(1), Some(1), Some(1), Some(1), Some(1)]);

        let shown_tools = self.shown.iter().filter(|&&i| i < self.tools).count();
        let shown_models = self.shown.len() - shown_tools;
        // The roles and models follow the tools: counted when the filter shows only them.
        let count = if shown_tools == 0 && shown_models > 0 {
            format!("  {shown_models} roles and models")
        } else {
            format!("  {shown_tools} of {} tools", self.tools)
        };
        let count = Span::styled(count, theme.muted());
        let prefix = Line::from(label("Tool", LABEL_W, self.focus == Focus::Tool, theme));
        let fw = filter_row.width.saturating_sub(LABEL_W as u16 + 2 + 2 + 18).clamp(1, 40);
        field_row(frame, filter_row, prefix, &self.filter, fw, Line::from(count));

        self.render_list(frame, list_area, state, theme);

        let tool = self.tool();
        let active: Vec<String> = match (tool, self.model_target()) {
            (_, Some(target)) => {
                state.model_faults.iter().filter(|f| f.target == target).map(|f| f.describe()).collect()
            }
            (Some(t), None) => state
                .faults
                .iter()
                .filter(|f| f.tool == t)
                .map(|f| match f.left {
                    Some(left) => format!("{} ({}, {left} left)", f.fault.mode, f.fault.scope),
                    None => format!("{} ({})", f.fault.mode, f.fault.scope),
                })
                .collect(),
            (None, None) => Vec::new(),
        };
        let active_line = match (tool, active.is_empty()) {
            (None, _) => Line::from(""),
            (Some(t), true) => Line::from(Span::styled(format!("  no fault active on {t}"), theme.muted())),
            (Some(t), false) => Line::from(vec![
                Span::raw("  "),
                Span::styled(format!("{FAULT} active on {t}: {}", active.join(", ")), theme.fg(theme.fault)),
            ]),
        };
        frame.render_widget(Paragraph::new(active_line), active_row);

        let mut mode = vec![label("Mode", LABEL_W, self.focus == Focus::Mode, theme)];
        match self.model_target() {
            Some(_) => mode.extend(choice(&MODEL_MODES, self.model_mode, self.focus == Focus::Mode, theme)),
            None => mode.extend(choice(&MODES, self.mode, self.focus == Focus::Mode, theme)),
        }
        if self.wants_ms() {
            mode.push(Span::styled("  ms ", if self.focus == Focus::Ms { theme.accent() } else { Style::default() }));
            field_row(frame, mode_row, Line::from(mode), &self.ms, VALUE_W, Line::from(""));
        } else {
            frame.render_widget(Paragraph::new(Line::from(mode)), mode_row);
        }

        let mut scope = vec![label("Scope", LABEL_W, self.focus == Focus::Scope, theme)];
        scope.extend(choice(&SCOPES, self.scope, self.focus == Focus::Scope, theme));
        let value_style = if self.focus == Focus::Value { theme.accent() } else { Style::default() };
        match self.scope {
            TIMES => {
                scope.push(Span::styled("  N ", value_style));
                field_row(frame, scope_row, Line::from(scope), &self.times, VALUE_W, Line::from(""));
            }
            PROBABILITY => {
                scope.push(Span::styled("  p ", value_style));
                field_row(frame, scope_row, Line::from(scope), &self.probability, VALUE_W, Line::from(""));
            }
            _ => frame.render_widget(Paragraph::new(Line::from(scope)), scope_row),
        }

        let error = self.build().err().or_else(|| self.message.clone());
        if let Some(e) = error {
            frame.render_widget(Paragraph::new(error_message(&e, theme)), error_row);
        }
        let keys: &[(&str, &str)] = if self.focus == Focus::Tool {
            &[("↑/↓", "tool"), ("Enter", "choose"), ("Tab", "next field"), ("Esc", "cancel")]
        } else {
            &[("←/→", "choose"), ("Tab", "next field"), ("Enter", "inject"), ("Esc", "cancel")]
        };
        frame.render_widget(Paragraph::new(hints(keys, theme)), hint_row);
    }

    fn render_list(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let height = area.height as usize;
        let visible = window(self.selected, self.shown.len(), height, &self.offset);
        let name_w =
            self.shown[visible.clone()].iter().map(|&i| self.names[i].chars().count()).max().unwrap_or(0).min(30);
        let width = area.width as usize;
        let mut lines = Vec::with_capacity(height);
        for pos in visible {
            let i = self.shown[pos];
            let name = &self.names[i];
            let faulted = match name.strip_prefix(MODEL_PREFIX).filter(|_| i >= self.tools) {
                Some(target) => state.model_faults.iter().any(|f| f.target == target),
                None => state.faults.iter().any(|f| &f.tool == name),
            };
            let chosen = pos == self.selected;
            let marker = if chosen { "▸ " } else { "  " };
            let mut spans = vec![
                Span::raw(format!("    {marker}")),
                Span::raw(format!("{:<name_w$} ", fit(name, name_w))),
                Span::styled(if faulted { format!("{FAULT} ") } else { "   ".into() }, theme.fg(theme.fault)),
            ];
            let desc = fit(&self.descriptions[i], width.saturating_sub(spans_width(&spans))).into_owned();
            spans.push(Span::styled(desc, theme.muted()));
            let line = Line::from(spans);
            lines.push(if chosen { line.style(theme.selected()) } else { line });
        }
        if self.shown.is_empty() && height > 0 {
            lines.push(Line::from(Span::styled("      no tool matches", theme.muted())));
        }
        frame.render_widget(Paragraph::new(lines), area);
    }
}

/// The roles and models a model fault can aim at, each with what it says:
/// who plays a role, which roles a model plays.
fn model_targets(state: &SessionState) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Role::ALL
        .iter()
        .map(|r| {
            let by = state.models.iter().find(|m| m.role == *r).map(|m| m.model.name.as_str()).unwrap_or("—");
            (r.as_str().to_string(), format!("role, played by {by}"))
        })
        .collect();
    let mut names: Vec<&str> = state.models.iter().map(|m| m.model.name.as_str()).collect();
    names.extend(state.available_models.iter().map(|m| m.name.as_str()));
    names.sort_unstable();
    names.dedup();
    for name in names {
        if Role::parse(name).is_some() {
            continue;
        }
        let roles: Vec<&str> = state.models.iter().filter(|m| m.model.name == name).map(|m| m.role.as_str()).collect();
        let what = if roles.is_empty() { "model".to_string() } else { format!("model, plays {}", roles.join(", ")) };
        out.push((name.to_string(), what));
    }
    out
}
