//! What a tool looks like to the user right now: shared by the graph pane's
//! views and the budget pane, so it stands apart from any one drawing.

use ratatui::style::Color;

use crate::engine::SessionState;
use crate::symbols;
use crate::theme::Theme;

/// What a tool looks like to the user right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeState {
    Ok,
    Failing,
    Faulted,
    Forbidden,
    Blacklisted,
    Unused,
}

impl NodeState {
    pub fn symbol(self) -> &'static str {
        match self {
            NodeState::Ok => symbols::OK,
            NodeState::Failing => symbols::FAILING,
            NodeState::Faulted => symbols::FAULT,
            NodeState::Forbidden => symbols::FORBIDDEN,
            NodeState::Blacklisted => symbols::BLACKLISTED,
            NodeState::Unused => "·",
        }
    }

    pub fn color(self, theme: &Theme) -> Color {
        match self {
            NodeState::Ok => theme.ok,
            NodeState::Failing => theme.failing,
            NodeState::Faulted => theme.fault,
            NodeState::Forbidden => theme.forbidden,
            NodeState::Blacklisted => theme.blacklisted,
            NodeState::Unused => theme.muted,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            NodeState::Ok => "ok",
            NodeState::Failing => "failing",
            NodeState::Faulted => "fault injected",
            NodeState::Forbidden => "forbidden",
            NodeState::Blacklisted => "blacklisted",
            NodeState::Unused => "unused",
        }
    }
}

/// The state of `tool`, by precedence Faulted > Blacklisted > Forbidden >
/// Failing > Ok > Unused: what the user can do something about comes first.
pub fn node_state(state: &SessionState, tool: &str) -> NodeState {
    if state.faults.iter().any(|f| f.tool == tool) {
        return NodeState::Faulted;
    }
    if let Some(run) = &state.current {
        if run.blacklisted.contains(tool) {
            return NodeState::Blacklisted;
        }
        if run.forbidden.contains(tool) {
            return NodeState::Forbidden;
        }
    }
    match state.recent_calls.iter().find(|c| c.tool == tool) {
        Some(c) if !c.ok => NodeState::Failing,
        Some(_) => NodeState::Ok,
        // The recent calls are a bounded window: a tool whose calls all fell
        // out of it was called, and its failures (if any) are old news.
        None if state.tool_spend.get(tool).is_some_and(|s| s.calls > 0) => NodeState::Ok,
        None => NodeState::Unused,
    }
}
