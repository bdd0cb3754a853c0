//! A text input over `ratatui-textarea`: one line for values and filters,
//! several for a task's text. The dialog decides which keys reach it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

#[derive(Clone, Debug)]
pub(super) struct Field {
    /// Boxed: a text area is large, and dialogs hold several.
    area: Box<TextArea<'static>>,
    multiline: bool,
    /// Shown dimmed while the field is empty.
    hint: Option<String>,
}

fn cursor_style(focused: bool) -> Style {
    // Styles here avoid colours: the dialog's block already paints the
    // theme's colours underneath, and the cursor must show on any theme.
    if focused { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() }
}

impl Field {
    pub(super) fn single(text: &str) -> Field {
        Field::build(vec![text.replace(['\n', '\r'], " ")], false)
    }

    pub(super) fn multi(text: &str) -> Field {
        let mut f = Field::build(text.lines().map(str::to_string).collect(), true);
        f.area.set_wrap_mode(WrapMode::WordOrGlyph);
        f
    }

    /// A program: several lines, not wrapped (a line scrolls sideways),
    /// numbered as the program pane numbers them.
    pub(super) fn code(text: &str) -> Field {
        let mut f = Field::build(text.lines().map(str::to_string).collect(), true);
        f.area.set_wrap_mode(WrapMode::None);
        f.area.set_line_number_style(Style::default().add_modifier(Modifier::DIM));
        f.area.set_tab_length(4);
        f.area.move_cursor(CursorMove::Top);
        f.area.move_cursor(CursorMove::Head);
        f
    }

    fn build(lines: Vec<String>, multiline: bool) -> Field {
        let mut area = TextArea::new(if lines.is_empty() { vec![String::new()] } else { lines });
        area.set_cursor_line_style(Style::default());
        area.set_cursor_style(cursor_style(false));
        area.set_selection_style(Style::default().add_modifier(Modifier::REVERSED | Modifier::UNDERLINED));
        area.move_cursor(CursorMove::Bottom);
        area.move_cursor(CursorMove::End);
        Field { area: Box::new(area), multiline, hint: None }
    }

    pub(super) fn with_hint(mut self, text: &str) -> Field {
        self.hint = Some(text.to_string());
        self
    }

    pub(super) fn text(&self) -> String {
        self.area.lines().join(if self.multiline { "\n" } else { "" })
    }

    /// Shows or hides the cursor; a field that loses focus drops its selection.
    pub(super) fn focus(&mut self, focused: bool) {
        self.area.set_cursor_style(cursor_style(focused));
        if !focused {
            self.area.cancel_selection();
        }
    }

    /// Selects the whole value, so that typing replaces it (as in a form).
    pub(super) fn select_all(&mut self) {
        self.area.select_all();
    }

    pub(super) fn set_text(&mut self, text: &str) {
        self.area.select_all();
        self.area.cut();
        self.area.insert_str(text);
    }

    /// Feeds a key to the editor; true when the text changed.
    pub(super) fn input(&mut self, key: KeyEvent) -> bool {
        let newline = matches!(key.code, KeyCode::Enter | KeyCode::Char('\n' | '\r'))
            || (key.code == KeyCode::Char('m') && key.modifiers.contains(KeyModifiers::CONTROL));
        if newline && !self.multiline {
            return false;
        }
        if matches!(key.code, KeyCode::Tab | KeyCode::BackTab | KeyCode::Esc) {
            return false;
        }
        let changed = self.area.input(key);
        if !self.multiline && self.area.lines().len() > 1 {
            // A paste of several lines into a one-line field: keep it one line.
            let joined = self.area.lines().join(" ");
            self.set_text(&joined);
        }
        changed
    }

    /// Indents at the cursor (spaces, as the tab length says).
    pub(super) fn tab(&mut self) {
        if self.multiline {
            self.area.insert_tab();
        }
    }

    /// Inserts a line break in a multi-line field.
    pub(super) fn newline(&mut self) {
        if self.multiline {
            self.area.insert_newline();
        }
    }

    pub(super) fn render(&self, frame: &mut Frame, rect: Rect) {
        if rect.width == 0 || rect.height == 0 {
            return;
        }
        frame.render_widget(&*self.area, rect);
        if let (Some(hint), true) = (&self.hint, self.area.is_empty()) {
            // After the cursor's cell, so the cursor stays visible.
            let at = Rect { x: rect.x + 1, width: rect.width - 1, height: 1, ..rect };
            let style = Style::default().add_modifier(Modifier::DIM | Modifier::ITALIC);
            frame
                .render_widget(ratatui::widgets::Paragraph::new(ratatui::text::Span::styled(hint.as_str(), style)), at);
        }
    }
}
