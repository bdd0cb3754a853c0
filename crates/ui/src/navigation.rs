//! What the user is looking at, apart from the session itself: focus, zoom,
//! selection, scroll, the replay cursor. Panes read it; only the app's
//! `update` changes it.

use crate::engine::fold::StepView;
use crate::engine::{SessionState, StrategyKind};
use crate::theme::Theme;

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
    /// atc's program; it takes the graph's place (see `Pane::ATC`).
    Program,
}

impl Pane {
    /// The panes in focus order, for every strategy but atc.
    pub const ALL: [Pane; 6] =
        [Pane::Graph, Pane::Transcript, Pane::Budget, Pane::Models, Pane::Workers, Pane::Retrieval];

    /// atc's panes in focus order. atc keeps no ToolNet graph, so the graph
    /// pane would only show an empty neighbourhood; its program is what a
    /// user watches instead, in the same (largest) place and first in the
    /// tab order, as rewoo's plan takes the graph pane.
    pub const ATC: [Pane; 6] =
        [Pane::Program, Pane::Transcript, Pane::Budget, Pane::Models, Pane::Workers, Pane::Retrieval];

    /// The panes a session of `strategy` shows, in focus order.
    pub fn cycle(strategy: Option<StrategyKind>) -> &'static [Pane] {
        if strategy == Some(StrategyKind::Atc) { &Pane::ATC } else { &Pane::ALL }
    }

    /// This pane, or the one in its place for `strategy` (the graph and the
    /// program stand in for each other).
    pub fn placed(self, strategy: Option<StrategyKind>) -> Pane {
        match (self, strategy == Some(StrategyKind::Atc)) {
            (Pane::Graph, true) => Pane::Program,
            (Pane::Program, false) => Pane::Graph,
            (p, _) => p,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Graph => "Graph",
            Pane::Transcript => "Transcript",
            Pane::Budget => "Budget",
            Pane::Models => "Models",
            Pane::Retrieval => "Retrieval",
            Pane::Workers => "Workers",
            Pane::Program => "Program",
        }
    }

    pub fn next(self, strategy: Option<StrategyKind>) -> Pane {
        let all = Pane::cycle(strategy);
        let i = all.iter().position(|p| *p == self.placed(strategy)).unwrap_or(0);
        all[(i + 1) % all.len()]
    }

    pub fn prev(self, strategy: Option<StrategyKind>) -> Pane {
        let all = Pane::cycle(strategy);
        let i = all.iter().position(|p| *p == self.placed(strategy)).unwrap_or(0);
        all[(i + all.len() - 1) % all.len()]
    }
}

/// What the program pane shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgramShow {
    /// The program, each call's result beside its line.
    #[default]
    Source,
    /// The rewrite against the program before it.
    Diff,
    /// The probes of tools without a documented response.
    Probes,
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
pub struct Navigation {
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
    /// The bridged agent's thread the transcript follows alone, by name.
    pub thread: Option<String>,
    /// What the program pane shows; it falls back to what there is.
    pub program_show: ProgramShow,
    /// Rows scrolled down in the program pane (its running line stays in view).
    pub program_scroll: usize,
    /// The lane picked in the workers pane (a position in the shown step's
    /// lanes), for the lane keys.
    pub lane: usize,
    /// A message for the status bar (what just happened, or an error).
    pub flash: Option<String>,
    pub replay: Option<ReplayInfo>,
    /// The id of the session this workbench is attached to, from another
    /// process (`switchyard attach`).
    pub attached: Option<String>,
    /// Where spans of an outside agent come from (`ui --otlp-listen`):
    /// shown read-only, as they come.
    pub watching: Option<String>,
}

/// Everything a pane may read to draw itself.
pub struct PaneCtx<'a> {
    pub state: &'a SessionState,
    pub nav: &'a Navigation,
    pub theme: &'a Theme,
    pub focused: bool,
    /// Milliseconds on the engine's clock, now (elapsed times are measured against it).
    pub now_ms: u64,
}

impl PaneCtx<'_> {
    /// The rewoo step the workers pane shows: the one running, else the last.
    /// The program of the current run, if atc wrote one.
    pub fn program(&self) -> Option<&crate::engine::fold::program::ProgramView> {
        self.state.current.as_ref()?.program.as_ref()
    }

    pub fn shown_step(&self) -> Option<&StepView> {
        self.state.current.as_ref()?.lane_step()
    }

    /// The node the graph pane shows: the selection, else where the agent stands.
    pub fn graph_focus(&self) -> String {
        if let Some(s) = &self.nav.selected {
            return s.clone();
        }
        match &self.state.current {
            Some(r) => r.path.last().cloned().unwrap_or_else(|| r.from.clone()),
            None => crate::graph::START.to_string(),
        }
    }
}
