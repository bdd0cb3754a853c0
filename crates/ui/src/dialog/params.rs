//! The run parameters, one editable row each; only changed values are sent.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::field::Field;
use super::kit::{error_line, error_message, field_row, hints, label, rows};
use super::outcome::Outcome;
use crate::Theme;
use crate::engine::fold::SessionState;
use crate::engine::{Control, Narrowing, ParamChange, Params};
use crate::graph::WeightFormat;

/// (name as `ParamChange::parse` reads it, what it means)
const ROWS: [(&str, &str); 10] = [
    ("alpha", "α: ToolNet's learning speed (≥ 0)"),
    ("beta", "β: share of the prior weight (0–1)"),
    ("tau", "τ: BTP's value threshold (0–1)"),
    ("budget", "B: budget in the cost unit, or none"),
    ("top_k", "K: tools offered at the start (≥ 1)"),
    ("weight_format", "←/→: none, decimal, integer, x10"),
    ("max_steps", "steps allowed per task (≥ 1)"),
    ("narrow", "←/→: off, graph, retrieval, both"),
    ("narrow_k", "tools narrowing keeps (≥ 1)"),
    ("pace", "ms to wait before each call; 0 = flat out"),
];
const WEIGHT_FORMAT: usize = 5;
const NARROW: usize = 7;
const PACE: usize = 9;
const FORMATS: [WeightFormat; 4] =
    [WeightFormat::None, WeightFormat::Decimal, WeightFormat::Integer, WeightFormat::X10];
const LABEL_W: usize = 14;
const FIELD_W: u16 = 10;

#[derive(Clone, Debug, PartialEq)]
enum Value {
    Param(ParamChange),
    Pace(u64),
}

#[derive(Clone, Debug)]
pub struct ParamsDialog {
    fields: Vec<Field>,
    row: usize,
    /// Set when a submit was refused.
    refused: bool,
}

fn current(params: &Params, pace_ms: u64) -> [String; 10] {
    [
        params.alpha.to_string(),
        params.beta.to_string(),
        params.tau.to_string(),
        params.budget.map_or("none".to_string(), |b| b.to_string()),
        params.top_k.to_string(),
        params.weight_format.to_string(),
        params.max_steps.to_string(),
        params.narrow.to_string(),
        params.narrow_k.to_string(),
        pace_ms.to_string(),
    ]
}

impl ParamsDialog {
    pub(super) fn new(state: &SessionState) -> ParamsDialog {
        let fields = current(&state.params, state.pace_ms).iter().map(|v| Field::single(v)).collect();
        let mut d = ParamsDialog { fields, row: 0, refused: false };
        d.set_row(0);
        d
    }

    fn set_row(&mut self, row: usize) {
        self.row = row;
        for (i, f) in self.fields.iter_mut().enumerate() {
            f.focus(i == row);
        }
        self.fields[row].select_all();
    }

    fn parse(&self, i: usize) -> Result<Value, String> {
        let text = self.fields[i].text();
        let value = text.trim();
        if i == PACE {
            return value.parse().map(Value::Pace).map_err(|_| format!("'{value}' is not a whole number of ms"));
        }
        ParamChange::parse(&format!("{}={value}", ROWS[i].0)).map(Value::Param).map_err(|e| e.why)
    }

    /// Whether row `i` holds a valid value other than the session's now.
    fn changed(&self, i: usize, state: &SessionState) -> bool {
        match self.parse(i) {
            Ok(Value::Param(c)) => {
                let mut p = state.params.clone();
                p.apply(&c);
                p != state.params
            }
            Ok(Value::Pace(ms)) => ms != state.pace_ms,
            Err(_) => false,
        }
    }

    fn submit(&mut self, state: &SessionState) -> Outcome {
        let mut controls = Vec::new();
        for i in 0..ROWS.len() {
            match self.parse(i) {
                Err(_) => {
                    self.refused = true;
                    return Outcome::Continue;
                }
                Ok(_) if !self.changed(i, state) => {}
                Ok(Value::Param(change)) => controls.push(Control::SetParam { change }),
                Ok(Value::Pace(ms)) => controls.push(Control::SetPace { ms }),
            }
        }
        Outcome::Submit(controls)
    }

    fn cycle_format(&mut self, forward: bool) {
        let now = self.fields[WEIGHT_FORMAT].text().parse::<WeightFormat>().unwrap_or_default();
        let i = FORMATS.iter().position(|f| *f == now).unwrap_or(2);
        let n = FORMATS.len();
        let next = FORMATS[if forward { (i + 1) % n } else { (i + n - 1) % n }];
        self.fields[WEIGHT_FORMAT].set_text(&next.to_string());
    }

    fn cycle_narrow(&mut self, forward: bool) {
        let now = self.fields[NARROW].text().parse::<Narrowing>().unwrap_or_default();
        let all = Narrowing::ALL;
        let i = all.iter().position(|n| *n == now).unwrap_or(0);
        let next = all[if forward { (i + 1) % all.len() } else { (i + all.len() - 1) % all.len() }];
        self.fields[NARROW].set_text(next.as_str());
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent, state: &SessionState) -> Outcome {
        let n = ROWS.len();
        match key.code {
            KeyCode::Enter => return self.submit(state),
            KeyCode::Tab | KeyCode::Down => self.set_row((self.row + 1) % n),
            KeyCode::BackTab | KeyCode::Up => self.set_row((self.row + n - 1) % n),
            KeyCode::Left | KeyCode::Right if self.row == WEIGHT_FORMAT => {
                self.cycle_format(key.code == KeyCode::Right)
            }
            KeyCode::Left | KeyCode::Right if self.row == NARROW => self.cycle_narrow(key.code == KeyCode::Right),
            _ => {
                self.fields[self.row].input(key);
            }
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let [note, _, table, _, message, hint_row] =
            rows(area, [Some(1), Some(1), Some(ROWS.len() as u16), None, Some(1), Some(1)]);
        frame.render_widget(
            Paragraph::new(Span::styled(
                "  Takes effect at the next decision point; only changed values are sent.",
                theme.muted(),
            )),
            note,
        );
        for (i, (name, what)) in ROWS.iter().enumerate() {
            if i as u16 >= table.height {
                break;
            }
            let row = Rect { y: table.y + i as u16, height: 1, ..table };
            let focused = i == self.row;
            let changed = self.changed(i, state);
            let prefix = Line::from(vec![
                label(name, LABEL_W, focused, theme),
                Span::styled(if changed { "• " } else { "  " }, theme.accent()),
            ]);
            let suffix = match self.parse(i) {
                Err(e) => error_line(&e, theme),
                Ok(_) => Line::from(Span::styled(what.to_string(), theme.muted())),
            };
            field_row(frame, row, prefix, &self.fields[i], FIELD_W, suffix);
        }
        let invalid = (0..ROWS.len()).any(|i| self.parse(i).is_err());
        if self.refused && invalid {
            frame.render_widget(
                Paragraph::new(error_message("fix the marked values first: nothing was sent", theme)),
                message,
            );
        } else {
            frame.render_widget(Paragraph::new(Span::styled("  • changed", theme.muted())), message);
        }
        let keys = [("↑/↓", "row"), ("←/→", "choose"), ("Enter", "apply changes"), ("Esc", "cancel")];
        frame.render_widget(Paragraph::new(hints(&keys, theme)), hint_row);
    }
}
