//! The graph pane: ToolNet's graph around one node (predecessors, the node,
//! successors, the path of this task and a chart of the node's score and
//! weight over iterations, the picture of ToolNet's Figure 4), or the whole
//! graph (a layered drawing when small, a ranked table when large).
//!
//! In a rewoo session, which has no graph, the pane shows the run's plan.
//!
//! Also the node states every pane shows (`node_state`) and the name search
//! behind the `/` prompt (`find_tools`).

mod label;
mod neighbourhood;
mod node_state;
mod order;
mod plan;
mod search;
mod whole;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{pane_block, render_block};
use crate::engine::StrategyKind;
use crate::{GraphMode, PaneCtx};
use label::display_name;

pub use node_state::{NodeState, node_state};
pub use search::find_tools;
pub use whole::{Layout, MAX_DRAWN_NODES, PlacedNode, layered_layout};

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    // rewoo has no ToolNet graph: its plan takes the pane.
    if ctx.state.strategy == Some(StrategyKind::Rewoo) && ctx.state.graph.is_none() {
        return plan::render(frame, area, ctx);
    }
    let focus = ctx.graph_focus();
    let theme = ctx.theme;
    let mode = match ctx.nav.graph_mode {
        GraphMode::Neighbourhood => "neighbourhood",
        GraphMode::Whole => "whole",
    };
    let title = Line::from(vec![
        Span::styled(" Graph ", theme.title()),
        Span::styled(format!("· {mode} · "), theme.muted()),
        Span::styled(format!("{} ", display_name(&focus)), theme.accent()),
    ]);
    let Some(inner) = render_block(frame, area, pane_block(theme, ctx.focused, title)) else { return };
    match ctx.nav.graph_mode {
        GraphMode::Neighbourhood => neighbourhood::render(frame, inner, ctx, &focus),
        GraphMode::Whole => whole::render(frame, inner, ctx, &focus),
    }
}
