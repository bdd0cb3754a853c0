//! How nodes, weights and scores read in the graph pane, and its one-line
//! notes: the same words in every view, so they live in one place.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::Paragraph;

use crate::engine::SessionState;
use crate::graph::END;
use crate::text::fit;
use crate::theme::Theme;

/// A node's name as the user knows it: the graph's `end` is the `finish` action.
pub(super) fn display_name(node: &str) -> &str {
    if node == END { "finish" } else { node }
}

/// A weight as the model is shown it; decimals when the model sees none.
pub(super) fn fmt_weight(state: &SessionState, w: f64) -> String {
    state.params.weight_format.show(w).unwrap_or_else(|| format!("{w:.2}"))
}

pub(super) fn fmt_score(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e6 { format!("{s:.0}") } else { format!("{s:.2}") }
}

/// A one-line message in the muted colour.
pub(super) fn note(frame: &mut Frame, area: Rect, theme: &Theme, text: &str) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    frame.render_widget(Paragraph::new(Span::styled(fit(text, area.width as usize), theme.muted())), area);
}
