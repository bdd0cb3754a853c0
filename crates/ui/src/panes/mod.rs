//! The panes. Each is `render(frame, area, ctx)`: a pure function of the
//! session state and the view state.

pub mod budget;
pub mod graph;
pub mod models;
pub mod program;
pub mod retrieval;
pub mod status;
pub mod transcript;
pub mod workers;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell};

use crate::symbols::FAULT;
use crate::text::fit;
use crate::theme::Theme;
use crate::tool::fault::FaultMode;

/// A pane's frame: its border says whether the pane has the keys.
fn pane_block<'a>(theme: &Theme, focused: bool, title: impl Into<Line<'a>>) -> Block<'a> {
    Block::bordered().border_style(theme.border(focused)).title(title)
}

/// A title in words, cut to fit a frame `width` cells wide (the corners
/// and a space either side take four).
fn pane_title(text: &str, width: u16, theme: &Theme) -> Line<'static> {
    Line::styled(format!(" {} ", fit(text, (width as usize).saturating_sub(4))), theme.title())
}

/// Draws `block` over `area` and gives the room inside it, or None when a
/// small terminal leaves none.
fn render_block(frame: &mut Frame, area: Rect, block: Block) -> Option<Rect> {
    let inner = block.inner(area);
    frame.render_widget(block, area);
    (inner.width > 0 && inner.height > 0).then_some(inner)
}

/// A number, right-aligned in its column.
fn num<'a>(s: impl Into<String>) -> Cell<'a> {
    Cell::from(Line::from(s.into()).right_aligned())
}

/// A fault injected into a tool, as a transcript line or a table cell shows it.
fn fault_tag(f: &FaultMode) -> String {
    format!("{FAULT} {f}")
}
