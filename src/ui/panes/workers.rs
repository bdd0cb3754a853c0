//! The workers pane.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::ui::PaneCtx;

pub fn render(_frame: &mut Frame, _area: Rect, _ctx: &PaneCtx) {}
