//! Dialogs over the workbench: inject fault, edit score, parameters, model
//! per role, task text or next task, tool categories, atc's program (fix
//! and continue), help. A dialog turns keys into engine controls; the app
//! holds `Option<Dialog>`, routes keys to `handle_key` and acts on the
//! `Outcome`. Esc cancels any dialog.

mod approval;
mod breaks;
mod category;
mod fault;
mod field;
mod help;
mod kit;
mod leave;
mod model;
mod notice;
mod outcome;
mod params;
mod program;
mod score;
mod task;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear};

pub use approval::{ApprovalDialog, describe as describe_debug};
pub use breaks::BreakpointsDialog;
pub use category::{CategoryDialog, source_word};
pub use fault::FaultDialog;
pub use help::{HelpDialog, keys_markdown};
pub use leave::LeaveDialog;
pub use model::ModelDialog;
pub use notice::NoticeDialog;
pub use outcome::Outcome;
pub use params::ParamsDialog;
pub use program::ProgramDialog;
pub use score::ScoreDialog;
pub use task::TaskDialog;

use crate::Theme;
use crate::engine::fold::SessionState;

#[derive(Clone, Debug)]
pub enum Dialog {
    Fault(FaultDialog),
    Score(ScoreDialog),
    Params(ParamsDialog),
    Model(ModelDialog),
    Task(TaskDialog),
    Category(CategoryDialog),
    Program(ProgramDialog),
    Help(HelpDialog),
    Approval(ApprovalDialog),
    Breakpoints(BreakpointsDialog),
    Notice(NoticeDialog),
    Leave(LeaveDialog),
}

impl Dialog {
    /// Inject a fault; `preselect` (the graph's focused tool) starts selected.
    pub fn fault(state: &SessionState, preselect: Option<&str>) -> Dialog {
        Dialog::Fault(FaultDialog::new(state, preselect))
    }

    /// Edit `tool`'s score, its current score prefilled.
    pub fn score(state: &SessionState, tool: &str) -> Dialog {
        Dialog::Score(ScoreDialog::new(state, tool))
    }

    /// The run parameters and the pace, current values prefilled.
    pub fn params(state: &SessionState) -> Dialog {
        Dialog::Params(ParamsDialog::new(state))
    }

    /// The model of each role, to switch among the session's available models.
    pub fn model(state: &SessionState) -> Dialog {
        Dialog::Model(ModelDialog::new(state))
    }

    /// The current task's text to edit, and the task list to pick the next one.
    pub fn task(state: &SessionState) -> Dialog {
        Dialog::Task(TaskDialog::new(state))
    }

    /// Every tool's category (rewoo), to give one another; `preselect` starts selected.
    pub fn category(state: &SessionState, preselect: Option<&str>) -> Dialog {
        Dialog::Category(CategoryDialog::new(state, preselect))
    }

    /// The current program (atc) to edit and run as the next round.
    pub fn program(state: &SessionState) -> Dialog {
        Dialog::Program(ProgramDialog::new(state))
    }

    /// Every key, of the live workbench or of a replay.
    /// Lines to read or copy; any key closes it.
    pub fn notice(title: &str, lines: Vec<String>) -> Dialog {
        Dialog::Notice(NoticeDialog::new(title.to_string(), lines))
    }

    /// End the session that waits for the user, or suspend it.
    pub fn leave() -> Dialog {
        Dialog::Leave(LeaveDialog)
    }

    pub fn help(replay: bool) -> Dialog {
        Dialog::Help(HelpDialog::new(replay))
    }

    /// The call, result or reply that waits for the user; `why` the engine
    /// refused their last decision.
    pub fn approval(pending: crate::engine::fold::debug::Pending, why: Option<String>) -> Dialog {
        Dialog::Approval(ApprovalDialog::new(pending, why))
    }

    /// The breakpoints with their hits, to add, delete, enable or disable one.
    pub fn breakpoints(state: &SessionState, replay: bool) -> Dialog {
        Dialog::Breakpoints(BreakpointsDialog::new(state, replay))
    }

    pub fn title(&self) -> &str {
        match self {
            Dialog::Fault(_) => "Inject a fault",
            Dialog::Score(_) => "Edit score",
            Dialog::Params(_) => "Parameters",
            Dialog::Model(_) => "Model per role",
            Dialog::Task(_) => "Task",
            Dialog::Category(_) => "Tool categories",
            Dialog::Program(_) => "Edit the program (fix and continue)",
            Dialog::Help(_) => "Keys",
            Dialog::Approval(d) => d.title(),
            Dialog::Breakpoints(_) => "Breakpoints",
            Dialog::Notice(d) => d.title(),
            Dialog::Leave(_) => "Leave the session",
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, state: &SessionState) -> Outcome {
        if key.kind == KeyEventKind::Release {
            return Outcome::Continue;
        }
        // The approval panel's editors take Esc back to the panel.
        if key.code == KeyCode::Esc && !matches!(self, Dialog::Approval(_)) {
            return Outcome::Cancel;
        }
        match self {
            Dialog::Fault(d) => d.handle_key(key),
            Dialog::Score(d) => d.handle_key(key),
            Dialog::Params(d) => d.handle_key(key, state),
            Dialog::Model(d) => d.handle_key(key, state),
            Dialog::Task(d) => d.handle_key(key),
            Dialog::Category(d) => d.handle_key(key, state),
            Dialog::Program(d) => d.handle_key(key),
            Dialog::Help(d) => d.handle_key(key),
            Dialog::Approval(d) => d.handle_key(key),
            Dialog::Breakpoints(d) => d.handle_key(key, state),
            Dialog::Notice(d) => d.handle_key(),
            Dialog::Leave(d) => d.handle_key(key),
        }
    }

    /// The largest popup the dialog wants (it shrinks to fit the area).
    fn size(&self, state: &SessionState) -> (u16, u16) {
        match self {
            Dialog::Fault(d) => (110, d.height()),
            Dialog::Score(d) => (90, d.height(state)),
            Dialog::Params(_) => (96, 18),
            Dialog::Model(_) => (96, 20),
            Dialog::Task(d) => (120, d.height()),
            Dialog::Category(d) => (100, d.height(state)),
            Dialog::Program(d) => (120, d.height()),
            Dialog::Help(d) => (84, d.height()),
            Dialog::Approval(d) => (110, d.height()),
            Dialog::Breakpoints(d) => (100, d.height(state)),
            Dialog::Notice(d) => d.size(),
            Dialog::Leave(d) => d.size(),
        }
    }

    /// Draws the dialog as a popup centred in `area`, over a cleared background.
    pub fn render(&self, frame: &mut Frame, area: Rect, state: &SessionState, theme: &Theme) {
        let (w, h) = self.size(state);
        let rect = kit::popup(area, w, h);
        if rect.width < 3 || rect.height < 3 {
            return;
        }
        frame.render_widget(Clear, rect);
        let block = Block::bordered()
            .title(Line::from(Span::styled(format!(" {} ", self.title()), theme.title())))
            .border_style(theme.border(true))
            .style(theme.base());
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        match self {
            Dialog::Fault(d) => d.render(frame, inner, state, theme),
            Dialog::Score(d) => d.render(frame, inner, state, theme),
            Dialog::Params(d) => d.render(frame, inner, state, theme),
            Dialog::Model(d) => d.render(frame, inner, state, theme),
            Dialog::Task(d) => d.render(frame, inner, state, theme),
            Dialog::Category(d) => d.render(frame, inner, state, theme),
            Dialog::Program(d) => d.render(frame, inner, theme),
            Dialog::Help(d) => d.render(frame, inner, theme),
            Dialog::Approval(d) => d.render(frame, inner, theme),
            Dialog::Breakpoints(d) => d.render(frame, inner, state, theme),
            Dialog::Notice(d) => d.render(frame, inner, theme),
            Dialog::Leave(d) => d.render(frame, inner, theme),
        }
    }
}
