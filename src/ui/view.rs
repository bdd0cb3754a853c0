//! What the user is looking at, apart from the session itself: focus, zoom,
//! selection, scroll, the replay cursor. Panes read it; only the app's
//! `update` changes it.

use crate::engine::SessionState;
use crate::engine::state::StepView;
use crate::ui::theme::Theme;

/// The panes of the workbench.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    #[default]
    Graph,
    Transcript,
    Budget,
    Models,
    Workers,
    Retrieval,
}

impl Pane {
    pub const ALL: [Pane; 6] =
        [Pane::Graph, Pane::Transcript, Pane::Budget, Pane::Models, Pane::Workers, Pane::Retrieval];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Graph => "Graph",
            Pane::Transcript => "Transcript",
            Pane::Budget => "Budget",
            Pane::Models => "Models",
            Pane::Retrieval => "Retrieval",
            Pane::Workers => "Workers",
        }
    }

    pub fn next(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}

/// How the graph pane shows the graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphMode {
    /// The focused node in the middle, predecessors left, successors right.
    #[default]
    Neighbourhood,
    /// The whole graph: layered (Sugiyama) when small, a ranked table when large.
    Whole,
}

/// Where a replay stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayInfo {
    /// Events folded so far.
    pub cursor: usize,
    pub total: usize,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    pub focus: Pane,
    /// A pane shown full screen.
    pub zoom: Option<Pane>,
    /// The node the graph pane centres on; None follows the agent.
    pub selected: Option<String>,
    pub graph_mode: GraphMode,
    /// Rows scrolled in the graph's ranked table.
    pub table_offset: usize,
    /// Lines scrolled up from the newest in the transcript; 0 follows the run.
    pub transcript_scroll: usize,
    /// Long values shown whole in the transcript.
    pub unfold: bool,
    /// The lane picked in the workers pane (a position in the shown step's
    /// lanes), for the lane keys.
    pub lane: usize,
    /// A message for the status bar (what just happened, or an error).
    pub flash: Option<String>,
    pub replay: Option<ReplayInfo>,
}

/// Everything a pane may read to draw itself.
pub struct PaneCtx<'a> {
    pub state: &'a SessionState,
    pub view: &'a ViewState,
    pub theme: &'a Theme,
    pub focused: bool,
    /// Milliseconds on the engine's clock, now (elapsed times are measured against it).
    pub now_ms: u64,
}

impl PaneCtx<'_> {
    /// The rewoo step the workers pane shows: the one running, else the last.
    pub fn shown_step(&self) -> Option<&StepView> {
        self.state.current.as_ref()?.rewoo.as_ref()?.steps.last()
    }

    /// The node the graph pane shows: the selection, else where the agent stands.
    pub fn graph_focus(&self) -> String {
        if let Some(s) = &self.view.selected {
            return s.clone();
        }
        match &self.state.current {
            Some(r) => r.path.last().cloned().unwrap_or_else(|| r.from.clone()),
            None => crate::graph::START.to_string(),
        }
    }
}
