//! The workbench's state machine: `update(action) -> effects`. The session
//! part of the state is the fold of the engine's events; the rest is what
//! the user is looking at. No I/O here: effects (controls for the engine,
//! quitting) are carried out by the terminal loop.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::dialog::{Dialog, Outcome};
use crate::engine::LaneAction;
use crate::engine::fold::{LaneState, Mode, StepView};
use crate::engine::{Control, Event, SessionState};
use crate::navigation::{GraphMode, Navigation, Pane, ProgramShow, ReplayInfo};
use crate::panes::program::{has_diff, shown};
use crate::tool::fault::FaultMode;

/// How far one press of + or - moves the pace.
const PACE_STEP_MS: u64 = 100;
/// Lines a PgUp/PgDn scrolls.
const PAGE: usize = 10;

/// What can happen to the app.
// Actions live for one `update`; boxing the event would only add an
// allocation per event.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Key(KeyEvent),
    /// An event from the engine (live) — never sent in replay.
    Engine(Event),
    /// Time passed: `now_ms` on the engine's clock.
    Tick {
        now_ms: u64,
    },
    /// The engine task ended (for good).
    EngineEnded {
        error: Option<String>,
    },
}

/// What the app asks the outside world to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    Control(Control),
    /// `T`: append this run, as a task, to today's case file.
    SaveCase(Box<crate::eval::cases::Case>),
    Quit,
    /// Attached: leave the session running, whatever it does meanwhile.
    Detach,
    /// Replay: fork a live session after the first `at` events (time travel).
    Fork {
        at: usize,
    },
}

/// What a watcher is told when a key would steer the agent.
const READ_ONLY: &str = "read-only: the agent runs elsewhere; its spans show here as its traces complete";

/// The `/` prompt.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Find {
    pub query: String,
    pub matches: Vec<String>,
    pub selected: usize,
}

/// A recorded trace being stepped through.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub events: Vec<Event>,
    pub cursor: usize,
    /// Digits typed towards a jump.
    pub jump: String,
}

pub struct App {
    pub state: SessionState,
    pub nav: Navigation,
    pub dialog: Option<Dialog>,
    pub find: Option<Find>,
    pub replay: Option<Replay>,
    pub now_ms: u64,
    pub engine_ended: bool,
    pub quit: bool,
    /// Attached: `q` was pressed once, and asks again before it ends the
    /// session.
    pub quit_armed: bool,
    /// Following an eval's tasks: leave when this task's engine ends.
    pub move_on: bool,
    /// Something changed since the last frame.
    pub dirty: bool,
}

impl App {
    pub fn live() -> App {
        App {
            state: SessionState::default(),
            nav: Navigation::default(),
            dialog: None,
            find: None,
            replay: None,
            now_ms: 0,
            engine_ended: false,
            quit: false,
            quit_armed: false,
            move_on: false,
            dirty: true,
        }
    }

    /// A read-only app over a recorded trace, its cursor at the end.
    pub fn replay(events: Vec<Event>) -> App {
        let mut app = App::live();
        let total = events.len();
        app.replay = Some(Replay { events, cursor: 0, jump: String::new() });
        app.seek(total);
        app
    }

    /// The workbench on a session of another process, `id`: its events
    /// come from there, its controls go there.
    pub fn attached(id: &str) -> App {
        let mut app = App::live();
        app.nav.attached = Some(id.to_string());
        app
    }

    /// An outside agent's spans, received over OTLP at `from`: read-only,
    /// its events come as its traces complete.
    pub fn watching(from: &str) -> App {
        let mut app = App::live();
        app.nav.watching = Some(from.to_string());
        app
    }

    /// Attached to one task's engine of an eval, `label` saying which and
    /// how the eval goes: when the task ends, the app leaves so the next
    /// task in flight can be followed.
    pub fn following_eval(label: &str) -> App {
        let mut app = App::attached(label);
        app.move_on = true;
        app
    }

    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        self.dirty = true;
        match action {
            Action::Engine(ev) => {
                if self.replay.is_none() {
                    self.now_ms = self.now_ms.max(ev.t);
                    self.state.apply(&ev);
                    self.clamp_lane();
                    self.place_focus();
                    // A new program is read from its top.
                    if matches!(ev.kind, crate::engine::EventKind::ProgramWritten { .. }) {
                        self.nav.program_scroll = 0;
                    }
                    self.offer_review(&ev);
                }
                Vec::new()
            }
            Action::Tick { now_ms } => {
                if self.replay.is_none() {
                    self.now_ms = self.now_ms.max(now_ms);
                }
                Vec::new()
            }
            Action::EngineEnded { error } => {
                self.engine_ended = true;
                if let Some(e) = error {
                    self.nav.flash = Some(format!("engine stopped: {e}"));
                }
                if self.move_on {
                    self.quit = true;
                    return vec![Effect::Quit];
                }
                Vec::new()
            }
            Action::Key(key) if key.kind == KeyEventKind::Press => {
                let effects = self.key(key);
                self.read_only(effects)
            }
            Action::Key(_) => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let armed = std::mem::take(&mut self.quit_armed);
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            // Attached, the session is not this terminal's to end.
            return if self.nav.attached.is_some() { self.detach() } else { self.end() };
        }
        if let Some(d) = self.dialog.as_mut() {
            return match d.handle_key(key, &self.state) {
                Outcome::Continue => Vec::new(),
                Outcome::Cancel => {
                    self.dialog = None;
                    Vec::new()
                }
                Outcome::Quit => {
                    self.dialog = None;
                    self.quit()
                }
                Outcome::End => {
                    self.dialog = None;
                    self.end()
                }
                Outcome::Suspend => {
                    self.dialog = None;
                    self.quit = true;
                    vec![Effect::Control(Control::Suspend), Effect::Quit]
                }
                Outcome::Submit(controls) => {
                    self.dialog = None;
                    if controls.is_empty() {
                        self.nav.flash = Some("nothing changed".into());
                    } else {
                        self.nav.flash =
                            Some(format!("sent: {}; takes effect at the next decision", describe(&controls)));
                    }
                    controls.into_iter().map(Effect::Control).collect()
                }
            };
        }
        if self.find.is_some() {
            self.find_key(key);
            return Vec::new();
        }
        if self.replay.is_some()
            && let Some(effects) = self.replay_key(key)
        {
            return effects;
        }
        self.view_key(key, armed)
    }

    /// Keys that look around; the same live and in replay.
    fn view_key(&mut self, key: KeyEvent, armed: bool) -> Vec<Effect> {
        // The lanes of the running step, when the lane keys apply.
        let lanes = self.lane_step().map(|s| s.lanes.len());
        let strategy = self.state.strategy;
        let program_keys = self.target() == Pane::Program;
        let attached = self.nav.attached.clone();
        let v = &mut self.nav;
        match key.code {
            KeyCode::Char('q')
                if !armed
                    && !self.engine_ended
                    && let Some(id) = &attached =>
            {
                v.flash = Some(format!("q again ends session {id}; d detaches and leaves it running"));
                self.quit_armed = true;
            }
            KeyCode::Char('q') => return self.quit(),
            KeyCode::Char('d') if attached.is_some() && !program_keys => return self.detach(),
            KeyCode::Char('?') => self.dialog = Some(Dialog::help(self.replay.is_some())),
            KeyCode::Tab => v.focus = v.focus.next(strategy),
            KeyCode::BackTab => v.focus = v.focus.prev(strategy),
            KeyCode::Char('z') => v.zoom = if v.zoom.is_some() { None } else { Some(v.focus) },
            KeyCode::Char('g') => {
                v.graph_mode = match v.graph_mode {
                    GraphMode::Neighbourhood => GraphMode::Whole,
                    GraphMode::Whole => GraphMode::Neighbourhood,
                };
                v.table_offset = 0;
            }
            KeyCode::Char('u') => v.unfold = !v.unfold,
            KeyCode::Char(c @ ('[' | ']')) => self.follow_thread(c == ']'),
            KeyCode::Char('/') => {
                self.find = Some(Find::default());
                self.refresh_find();
            }
            KeyCode::Esc => {
                if v.zoom.is_some() {
                    v.zoom = None;
                } else {
                    v.selected = None;
                    v.flash = None;
                }
            }
            KeyCode::Up | KeyCode::Down if let Some(n) = lanes => {
                v.lane = if key.code == KeyCode::Up { v.lane.saturating_sub(1) } else { v.lane + 1 }.min(n - 1);
            }
            KeyCode::Up => self.scroll(1, true),
            KeyCode::Down => self.scroll(1, false),
            KeyCode::PageUp => self.scroll(PAGE, true),
            KeyCode::PageDown => self.scroll(PAGE, false),
            KeyCode::Char('d' | 'o') if program_keys => self.program_show(key.code == KeyCode::Char('d')),
            KeyCode::Char('b') => self.dialog = Some(Dialog::breakpoints(&self.state, self.replay.is_some())),
            KeyCode::Char('T') => return self.save_case(),
            KeyCode::Char(c) if self.replay.is_none() => return self.control_key(c),
            KeyCode::Char(' ' | 's' | 'f' | 'x' | 'e' | 'p' | 'm' | 't' | 'r' | '+' | '-' | 'c') => {
                v.flash = Some("a replay is read-only".into());
            }
            KeyCode::Char('h' | 'n' | 'k') if lanes.is_some() => {
                v.flash = Some("a replay is read-only".into());
            }
            _ => self.dirty = false,
        }
        Vec::new()
    }

    /// Keys that steer the live engine.
    fn control_key(&mut self, c: char) -> Vec<Effect> {
        let control = match c {
            ' ' => Some(match self.state.mode {
                Mode::Paused => Control::Resume,
                _ => Control::Pause,
            }),
            's' => Some(Control::Step),
            'x' => Some(Control::ClearFault { tool: None }),
            'r' => Some(Control::RestartTask),
            '+' => Some(Control::SetPace { ms: self.state.pace_ms + PACE_STEP_MS }),
            '-' => Some(Control::SetPace { ms: self.state.pace_ms.saturating_sub(PACE_STEP_MS) }),
            'f' => {
                let focus = self.focused_tool();
                self.dialog = Some(Dialog::fault(&self.state, focus.as_deref()));
                None
            }
            'e' if self.target() == Pane::Program => {
                self.edit_program();
                None
            }
            'e' => {
                match self.focused_tool() {
                    Some(tool) => self.dialog = Some(Dialog::score(&self.state, &tool)),
                    None => self.nav.flash = Some("select a tool first (/ to find one)".into()),
                }
                None
            }
            'p' => {
                self.dialog = Some(Dialog::params(&self.state));
                None
            }
            'm' => {
                self.dialog = Some(Dialog::model(&self.state));
                None
            }
            't' => {
                self.dialog = Some(Dialog::task(&self.state));
                None
            }
            'c' => {
                let focus = self.focused_tool();
                self.dialog = Some(Dialog::category(&self.state, focus.as_deref()));
                None
            }
            'h' | 'n' | 'k' => self.lane_control(c),
            'a' => self.approval_key(),
            _ => {
                self.dirty = false;
                None
            }
        };
        if self.engine_ended && control.is_some() {
            self.nav.flash = Some("the session has ended".into());
            return Vec::new();
        }
        let mut effects: Vec<Effect> = control.map(Effect::Control).into_iter().collect();
        if c == 'x' && !effects.is_empty() {
            effects.push(Effect::Control(Control::ClearModelFault { target: None }));
        }
        effects
    }

    /// `T`: the current run (in a replay, the run at the cursor) as a test
    /// case; the terminal loop writes it, or the status line says why not.
    fn save_case(&mut self) -> Vec<Effect> {
        let case = match &self.replay {
            Some(r) => crate::eval::cases::case_at(&r.events, r.cursor),
            None => crate::eval::cases::case_of(&self.state),
        };
        match case {
            Ok(c) => vec![Effect::SaveCase(Box::new(c))],
            Err(why) => {
                self.nav.flash = Some(why);
                Vec::new()
            }
        }
    }

    /// The pane the keys act on: the zoomed one, else the focused one.
    fn target(&self) -> Pane {
        self.nav.zoom.unwrap_or(self.nav.focus).placed(self.state.strategy)
    }

    /// Keeps the focus (and the zoom) on a pane the session shows: atc's
    /// program stands where the graph does, and the other way round.
    fn place_focus(&mut self) {
        let s = self.state.strategy;
        self.nav.focus = self.nav.focus.placed(s);
        self.nav.zoom = self.nav.zoom.map(|z| z.placed(s));
    }

    /// `d` toggles the program and its diff, `o` the program and the probes;
    /// a view there is nothing to show for says why instead.
    fn program_show(&mut self, diff: bool) {
        let now = shown(&self.state, &self.nav);
        let program = self.state.current.as_ref().and_then(|r| r.program.as_ref());
        let (want, missing) = if diff {
            (
                ProgramShow::Diff,
                (!program.is_some_and(has_diff)).then_some("no rewrite to diff: this is the first program"),
            )
        } else {
            (
                ProgramShow::Probes,
                self.state.probes.is_empty().then_some("no probes: no tool was probed in this session"),
            )
        };
        if let Some(why) = missing {
            self.nav.flash = Some(why.into());
            return;
        }
        self.nav.program_show = if now == want { ProgramShow::Source } else { want };
        self.nav.program_scroll = 0;
        if self.nav.program_show == ProgramShow::Source && program.is_none() {
            self.nav.flash = Some("no program yet: the probes are all there is".into());
        }
    }

    /// `e` on the program pane: the program in an editor, to run as the
    /// next round (fix and continue); says why when it could not run.
    fn edit_program(&mut self) {
        let Some(run) = &self.state.current else {
            self.nav.flash = Some("no task is running: there is no program to continue".into());
            return;
        };
        let finished = self.state.finished.last().is_some_and(|f| f.run == run.run);
        let over =
            run.program.as_ref().is_some_and(|p| p.returned.is_some() || p.failure.as_ref().is_some_and(|f| f.last));
        if finished || over {
            self.nav.flash = Some("this task's programs have run their course: r restarts the task".into());
            return;
        }
        self.dialog = Some(Dialog::program(&self.state));
    }

    /// The step whose lanes the lane keys act on: the running one, when the
    /// workers pane has the focus.
    fn lane_step(&self) -> Option<&StepView> {
        if self.nav.zoom.unwrap_or(self.nav.focus) != Pane::Workers {
            return None;
        }
        self.state.current.as_ref()?.active_lanes().filter(|s| !s.lanes.is_empty())
    }

    /// h holds or releases the picked lane, n lets it start, k fails it;
    /// a key that cannot apply to the lane's state says why.
    fn lane_control(&mut self, c: char) -> Option<Control> {
        let Some(step) = self.lane_step() else {
            self.dirty = false;
            return None;
        };
        let l = &step.lanes[self.nav.lane.min(step.lanes.len() - 1)];
        let (lane, state) = (l.lane, l.state);
        let action = match (c, state) {
            ('h', LaneState::Held) => Ok(LaneAction::Release),
            ('h', LaneState::Waiting) => Ok(LaneAction::Hold),
            ('h', _) => Err("only a lane that has not started can be held"),
            ('n', LaneState::Waiting | LaneState::Held) => Ok(LaneAction::Step),
            ('n', _) => Err("it has already started"),
            (_, LaneState::Waiting | LaneState::Held | LaneState::Running) => {
                Ok(LaneAction::Fail { fault: FaultMode::Error })
            }
            _ => Err("it has already ended"),
        };
        match action {
            Ok(action) => {
                let control = Control::Lane { lane, action };
                self.nav.flash = Some(format!("sent: {}", describe(std::slice::from_ref(&control))));
                Some(control)
            }
            Err(why) => {
                let word = crate::panes::workers::lane_word(state);
                self.nav.flash = Some(format!("lane {lane} is {word}: {why}"));
                None
            }
        }
    }

    /// Keeps the picked lane within the shown step's lanes.
    fn clamp_lane(&mut self) {
        let lanes = self.state.current.as_ref().and_then(|r| r.lane_step());
        let last = lanes.map_or(0, |s| s.lanes.len().saturating_sub(1));
        self.nav.lane = self.nav.lane.min(last);
    }

    /// Watching an agent elsewhere, nothing here steers it: controls are
    /// refused, saying so; quitting (which stops) is not.
    fn read_only(&mut self, effects: Vec<Effect>) -> Vec<Effect> {
        if self.nav.watching.is_none() {
            return effects;
        }
        let before = effects.len();
        let kept: Vec<Effect> =
            effects.into_iter().filter(|e| !matches!(e, Effect::Control(c) if *c != Control::Stop)).collect();
        if kept.len() < before {
            self.nav.flash = Some(READ_ONLY.to_string());
        }
        kept
    }

    /// Leaves an attached session running.
    fn detach(&mut self) -> Vec<Effect> {
        self.quit = true;
        vec![Effect::Detach]
    }

    /// `q`: a session that waits for the user (paused, or at an approval)
    /// may be suspended rather than ended, so ask; any other quits.
    fn quit(&mut self) -> Vec<Effect> {
        let waits = self.state.mode == Mode::Paused || self.state.debug.pending.is_some();
        if waits && self.replay.is_none() && !self.engine_ended && self.nav.attached.is_none() {
            self.dialog = Some(Dialog::leave());
            return Vec::new();
        }
        self.end()
    }

    /// Ends the session (when this workbench runs it) and quits.
    fn end(&mut self) -> Vec<Effect> {
        self.quit = true;
        let mut effects = Vec::new();
        if self.replay.is_none() && !self.engine_ended {
            effects.push(Effect::Control(Control::Stop));
        }
        effects.push(Effect::Quit);
        effects
    }

    /// The tool the graph pane is focused on, if it is a tool.
    pub fn focused_tool(&self) -> Option<String> {
        let focus = match &self.nav.selected {
            Some(s) => s.clone(),
            None => self.state.current.as_ref()?.path.last()?.clone(),
        };
        self.state.tools.iter().any(|t| t.name == focus).then_some(focus)
    }

    /// `]` follows the next of the agent's threads (in the tree's order),
    /// `[` the one before; past either end, all of them again.
    fn follow_thread(&mut self, next: bool) {
        let Some(run) = self.state.current.as_ref() else { return };
        let names: Vec<&str> = run.threads.tree().into_iter().map(|(_, t)| t.name.as_str()).collect();
        if names.is_empty() {
            self.nav.flash = Some("no threads: the agent has held no conversation through the gateway yet".into());
            return;
        }
        let at = self.nav.thread.as_deref().and_then(|n| names.iter().position(|x| *x == n));
        let to = match (at, next) {
            (None, true) => Some(0),
            (None, false) => Some(names.len() - 1),
            (Some(i), true) => (i + 1 < names.len()).then_some(i + 1),
            (Some(i), false) => i.checked_sub(1),
        };
        self.nav.thread = to.map(|i| names[i].to_string());
        self.nav.transcript_scroll = 0;
        self.nav.flash = Some(match &self.nav.thread {
            Some(n) => format!("the transcript follows thread {n} ([ ] for another)"),
            None => "the transcript shows every thread".into(),
        });
    }

    fn scroll(&mut self, by: usize, up: bool) {
        let v = &mut self.nav;
        let target = v.zoom.unwrap_or(v.focus);
        let field = match target.placed(self.state.strategy) {
            Pane::Transcript => &mut v.transcript_scroll,
            Pane::Graph => &mut v.table_offset,
            Pane::Program => &mut v.program_scroll,
            _ => {
                self.dirty = false;
                return;
            }
        };
        // The transcript counts lines up from the newest; the table rows down.
        let grow = (target == Pane::Transcript) == up;
        *field = if grow { field.saturating_add(by) } else { field.saturating_sub(by) };
    }

    fn find_key(&mut self, key: KeyEvent) {
        let Some(f) = self.find.as_mut() else { return };
        match key.code {
            KeyCode::Esc => self.find = None,
            KeyCode::Enter => {
                let choice = f.matches.get(f.selected).cloned();
                self.find = None;
                match choice {
                    Some(tool) => {
                        self.nav.flash = Some(format!("focused {tool} (Esc follows the agent again)"));
                        self.nav.selected = Some(tool);
                        self.nav.focus = Pane::Graph.placed(self.state.strategy);
                    }
                    None => self.nav.flash = Some("no tool matches".into()),
                }
            }
            KeyCode::Up => f.selected = f.selected.saturating_sub(1),
            KeyCode::Down => f.selected = (f.selected + 1).min(f.matches.len().saturating_sub(1)),
            KeyCode::Backspace => {
                f.query.pop();
                self.refresh_find();
            }
            KeyCode::Char(c) => {
                f.query.push(c);
                self.refresh_find();
            }
            _ => {}
        }
    }

    fn refresh_find(&mut self) {
        if let Some(f) = self.find.as_mut() {
            f.matches = crate::panes::graph::find_tools(&self.state, &f.query, 8);
            f.selected = f.selected.min(f.matches.len().saturating_sub(1));
        }
    }

    /// Replay navigation; None when the key is not a replay key.
    fn replay_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let r = self.replay.as_mut()?;
        let (cursor, total) = (r.cursor, r.events.len());
        match key.code {
            KeyCode::Left => self.seek(cursor.saturating_sub(1)),
            KeyCode::Right => self.seek(cursor + 1),
            KeyCode::Home => self.seek(0),
            KeyCode::End => self.seek(total),
            // Time travel: what is on screen becomes a live session's past,
            // unless the engine would refuse that point: then the replay
            // stays open and says why.
            KeyCode::Char('f') => match crate::engine::fork::check_fork_point(&r.events, cursor) {
                Ok(()) => return Some(vec![Effect::Fork { at: cursor }]),
                Err(e) => self.nav.flash = Some(format!("{e} (←/→ move the cursor)")),
            },
            KeyCode::Char(c) if c.is_ascii_digit() => {
                r.jump.push(c);
                self.nav.flash = Some(format!("jump to event {} (Enter)", r.jump));
            }
            KeyCode::Backspace if !r.jump.is_empty() => {
                r.jump.pop();
            }
            KeyCode::Enter if !r.jump.is_empty() => {
                let n = std::mem::take(&mut r.jump).parse().unwrap_or(usize::MAX);
                self.nav.flash = None;
                self.seek(n);
            }
            KeyCode::Esc if !r.jump.is_empty() => {
                r.jump.clear();
                self.nav.flash = None;
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Shows the fold of the first `n` events: what was on screen live then.
    pub fn seek(&mut self, n: usize) {
        let Some(r) = self.replay.as_mut() else { return };
        let n = n.min(r.events.len());
        if n >= r.cursor {
            for e in &r.events[r.cursor..n] {
                self.state.apply(e);
            }
        } else {
            self.state = SessionState::from_events(&r.events[..n]);
        }
        r.cursor = n;
        self.now_ms = self.state.t;
        self.nav.replay = Some(ReplayInfo { cursor: n, total: r.events.len() });
        self.clamp_lane();
        self.place_focus();
    }
}

fn describe(controls: &[Control]) -> String {
    controls
        .iter()
        .map(|c| match c {
            Control::InjectFault { tool, fault } => format!("fault {} on {tool} ({})", fault.mode, fault.scope),
            Control::InjectModelFault { target, fault } => {
                format!("fault {} on model:{target} ({})", fault.mode, fault.scope)
            }
            Control::EditScore { tool, score } => format!("score of {tool} = {score}"),
            Control::SetParam { change } => format!("{change:?}"),
            Control::SwitchModel { role, model } => format!("{role} → {model}"),
            Control::EditTask { .. } => "new task text (restarts the task)".to_string(),
            Control::PickTask { index } => format!("task {index} next"),
            Control::SetPace { ms } => format!("pace {ms} ms"),
            Control::Lane { lane, action } => match action {
                LaneAction::Hold => format!("hold lane {lane}"),
                LaneAction::Release => format!("release lane {lane}"),
                LaneAction::Step => format!("step lane {lane}"),
                LaneAction::Fail { fault } => format!("fail lane {lane} ({fault})"),
            },
            Control::SetCategory { tool, category } => format!("{tool} → category {category}"),
            Control::EditProgram { program } => {
                let n = program.lines().count();
                format!("your program ({n} line{}) as the next round", if n == 1 { "" } else { "s" })
            }
            other => crate::dialog::describe_debug(other).unwrap_or_else(|| format!("{other:?}")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
