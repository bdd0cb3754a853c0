//! Tool categories (rewoo): every tool with its category and where the label
//! came from; pick a tool (with a filter), then a category from the list or a
//! new one typed in.

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
use crate::engine::event::LabelSource;
use crate::engine::fold::SessionState;
use crate::text::fit;

const LABEL_W: usize = 9;
const NEW_W: u16 = 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Focus {
    Tool,
    Category,
}

#[derive(Clone, Debug)]
pub struct CategoryDialog {
    names: Vec<String>,
    lower: Vec<String>,
    /// Indices into `names` that pass the filter.
    shown: Vec<usize>,
    /// Index into `shown`.
    selected: usize,
    offset: Cell<usize>,
    filter: Field,
    focus: Focus,
    /// The tool whose category is being chosen.
    tool: Option<String>,
    /// Index into the session's categories.
    choice: usize,
    /// A category typed in: when not empty it wins over `choice`.
    new_name: Field,
    message: Option<String>,
}

/// Nothing to edit: the session's strategy does not label tools.
fn no_categories(state: &SessionState) -> bool {
    state.labels.is_empty() && state.categories.is_empty()
}

/// Where a label came from, in a word.
pub fn source_word(s: LabelSource) -> &'static str {
    match s {
        LabelSource::Manifest => "manifest",
        LabelSource::Model => "model",
        LabelSource::Cache => "cache",
        LabelSource::User => "user",
        LabelSource::Default => "default",
    }
}

impl CategoryDialog {
    pub(super) fn new(state: &SessionState, preselect: Option<&str>) -> CategoryDialog {
        let mut names: Vec<String> = state.tools.iter().map(|t| t.name.clone()).collect();
        // Labels of tools the library no longer lists still show.
        names.extend(state.labels.keys().filter(|k| !state.tools.iter().any(|t| &t.name == *k)).cloned());
        let lower = names.iter().map(|n| n.to_lowercase()).collect();
        let selected = preselect.and_then(|p| names.iter().position(|n| n == p)).unwrap_or(0);
        let mut d = CategoryDialog {
            shown: (0..names.len()).collect(),
            names,
            lower,
            selected,
            offset: Cell::new(0),
            filter: Field::single("").with_hint("type to filter the tools"),
            focus: Focus::Tool,
            tool: None,
            choice: 0,
            new_name: Field::single("").with_hint("type one"),
            message: None,
        };
        d.set_focus(Focus::Tool);
        d
    }

    /// Rows the popup wants: the fixed rows and the whole library up to a
    /// screenful; a few for the notice when there are no categories.
    pub(super) fn height(&self, state: &SessionState) -> u16 {
        if no_categories(state) {
            return 7;
        }
        9 + self.names.len().clamp(5, 24) as u16
    }

    fn highlighted(&self) -> Option<&str> {
        self.shown.get(self.selected).map(|&i| self.names[i].as_str())
    }

    fn set_focus(&mut self, focus: Focus) {
        self.focus = focus;
        self.filter.focus(focus == Focus::Tool);
        self.new_name.focus(focus == Focus::Category);
    }

    /// Takes the highlighted tool and moves on to its category, starting
    /// from the one it has.
    fn pick_tool(&mut self, state: &SessionState) {
        let Some(tool) = self.highlighted().map(str::to_string) else {
            self.message = Some("no tool matches the filter".into());
            return;
        };
        self.choice = state.category(&tool).and_then(|c| state.categories.iter().position(|k| k == c)).unwrap_or(0);
        self.new_name.set_text("");
        self.tool = Some(tool);
        self.set_focus(Focus::Category);
    }

    /// The category the dialog would set, or why it would set none.
    fn category(&self, state: &SessionState) -> Result<String, String> {
        let typed = self.new_name.text();
        let typed = typed.trim();
        if !typed.is_empty() {
            return Ok(typed.to_string());
        }
        state.categories.get(self.choice).cloned().ok_or_else(|| "type a category name".to_string())
    }

    fn refilter(&mut self) {
        let keep = self.shown.get(self.selected).copied();
        let q = self.filter.text().trim().to_lowercase();
        self.shown = (0..self.names.len()).filter(|&i| q.is_empty() || self.lower[i].contains(&q)).collect();
        self.selected = keep.and_then(|k| self.shown.iter().position(|&i| i == k)).unwrap_or(0);
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent, state: &SessionState) -> Outcome {
        self.message = None;
        if no_categories(state) {
            // Nothing to edit: any key but a scroll closes the notice.
            return if key.code == KeyCode::Enter { Outcome::Cancel } else { Outcome::Continue };
        }
        match (self.focus, key.code) {
            (Focus::Tool, KeyCode::Enter | KeyCode::Tab) => self.pick_tool(state),
            (Focus::Tool, KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown) => {
                let delta = list_step(key.code);
                if !self.shown.is_empty() {
                    self.selected = self.selected.saturating_add_signed(delta).min(self.shown.len() - 1);
                }
            }
            (Focus::Tool, _) => {
                if self.filter.input(key) {
                    self.refilter();
                }
            }
            (Focus::Category, KeyCode::Enter) => {
                let Some(tool) = self.tool.clone() else {
                    self.set_focus(Focus::Tool);
                    return Outcome::Continue;
                };
                match self.category(state) {
                    Ok(c) if state.category(&tool) == Some(c.as_str()) => return Outcome::Submit(Vec::new()),
                    Ok(category) => return Outcome::Submit(vec![Control::SetCategory { tool, category }]),
                    Err(e) => self.message = Some(e),
                }
            }
            (Focus::Category, KeyCode::Tab | KeyCode::BackTab | KeyCode::Up) => self.set_focus(Focus::Tool),
            (Focus::Category, KeyCode::Left | KeyCode::Right) => {
                let n = state.categories.len();
                if n > 0 {
                    let forward = key.code == KeyCode::Right;
                    self.choice = if forward { (self.choice + 1) % n } else { (self.choice + n - 1) % n };
                    // A choice from the list replaces a name typed in.
                    self.new_name.set_text("");
                }
            }
            (Focus::Category, _) => {
                self.new_name.input(key);
            }
        }
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        if no_categories(state) {
            let [text, _, hint_row] = rows(area, [None, Some(1), Some(1)]);
            let lines = vec![
                Line::from(Span::styled("  No tool categories in this session.", theme.title())),
                Line::from(Span::styled("  Only the rewoo strategy labels tools: its classifier", theme.muted())),
                Line::from(Span::styled("  gives each tool a category before the first plan.", theme.muted())),
            ];
            frame.render_widget(Paragraph::new(lines), text);
            frame.render_widget(Paragraph::new(hints(&[("Esc", "close")], theme)), hint_row);
            return;
        }
        let [note, filter_row, head, list_area, _, tool_row, category_row, error_row, hint_row] =
            rows(area, [Some(1), Some(1), Some(1), None, Some(1), Some(1), Some(1), Some(1), Some(1)]);
        frame.render_widget(
            Paragraph::new(Span::styled("  A plan step may call tools of one category together.", theme.muted())),
            note,
        );
        let count = Span::styled(format!("  {} of {} tools", self.shown.len(), self.names.len()), theme.muted());
        let prefix = Line::from(label("Tool", LABEL_W, self.focus == Focus::Tool, theme));
        let fw = filter_row.width.saturating_sub(LABEL_W as u16 + 2 + 2 + 18).clamp(1, 40);
        field_row(frame, filter_row, prefix, &self.filter, fw, Line::from(count));

        let visible = window(self.selected, self.shown.len(), list_area.height as usize, &self.offset);
        let name_w = self.names.iter().map(|n| n.chars().count()).max().unwrap_or(4).clamp(4, 30);
        let cat_w = state.labels.values().map(|(c, _)| c.chars().count()).max().unwrap_or(8).clamp(8, 28);
        let header = format!("      {:<name_w$} {:<cat_w$} from", "tool", "category");
        frame.render_widget(Paragraph::new(Span::styled(header, theme.title())), head);
        let mut lines = Vec::with_capacity(list_area.height as usize);
        for pos in visible {
            let name = &self.names[self.shown[pos]];
            let chosen = pos == self.selected;
            let marker = if chosen { "▸ " } else { "  " };
            let (category, source) = match state.labels.get(name) {
                Some((c, s)) => (Span::raw(format!("{:<cat_w$} ", fit(c, cat_w))), source_word(*s)),
                None => (Span::styled(format!("{:<cat_w$} ", "—"), theme.muted()), "not labelled"),
            };
            let line = Line::from(vec![
                Span::raw(format!("    {marker}{:<name_w$} ", fit(name, name_w))),
                category,
                Span::styled(source, theme.muted()),
            ]);
            lines.push(if chosen { line.style(theme.selected()) } else { line });
        }
        if self.shown.is_empty() && list_area.height > 0 {
            lines.push(Line::from(Span::styled("      no tool matches", theme.muted())));
        }
        frame.render_widget(Paragraph::new(lines), list_area);

        let in_category = self.focus == Focus::Category;
        let tool_line = match (&self.tool, in_category) {
            (Some(t), true) => {
                let now = state.labels.get(t).map_or("none".to_string(), |(c, s)| format!("{c} ({})", source_word(*s)));
                Line::from(vec![
                    Span::raw("  Category of "),
                    Span::styled(t.clone(), theme.accent()),
                    Span::styled(format!(", now {now}:"), theme.muted()),
                ])
            }
            _ => Line::from(Span::styled("  Enter picks the tool, then its category.", theme.muted())),
        };
        frame.render_widget(Paragraph::new(tool_line), tool_row);

        let typed = !self.new_name.text().trim().is_empty();
        let names: Vec<&str> = state.categories.iter().map(String::as_str).collect();
        let mut spans = vec![label("Category", LABEL_W, in_category, theme)];
        if names.is_empty() {
            spans.push(Span::styled("(none yet)", theme.muted()));
        } else {
            // A name typed in is what Enter sets: the list's choice shows unchosen.
            let shown = match (in_category, self.highlighted()) {
                (true, _) if typed => usize::MAX,
                (true, _) => self.choice,
                // Before a tool is picked: the highlighted tool's category.
                (false, Some(t)) => {
                    state.category(t).and_then(|c| state.categories.iter().position(|k| k == c)).unwrap_or(usize::MAX)
                }
                (false, None) => usize::MAX,
            };
            spans.extend(choice(&names, shown, in_category, theme));
        }
        spans.push(Span::styled("  new ", if in_category { theme.accent() } else { Style::default() }));
        let prefix = Line::from(spans);
        let fw = category_row.width.saturating_sub(prefix.width() as u16 + 2).clamp(1, NEW_W);
        field_row(frame, category_row, prefix, &self.new_name, fw, Line::from(""));

        let error = self.message.clone().or_else(|| if in_category { self.category(state).err() } else { None });
        if let Some(e) = error {
            frame.render_widget(Paragraph::new(error_message(&e, theme)), error_row);
        }
        let keys: &[(&str, &str)] = if in_category {
            &[("←/→", "category"), ("type", "a new one"), ("Enter", "set"), ("Tab", "tools"), ("Esc", "cancel")]
        } else {
            &[("↑/↓", "tool"), ("type", "to filter"), ("Enter", "choose"), ("Esc", "cancel")]
        };
        frame.render_widget(Paragraph::new(hints(keys, theme)), hint_row);
    }
}
