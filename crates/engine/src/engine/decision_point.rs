//! The engine obeying the user: the gate before every call (one rule for a
//! single call and for each lane of a concurrent step), the pace, and every
//! control applied at a decision point and recorded with its step.

use std::time::Duration;

use super::conductor::Engine;
use super::control::Control;
use super::error::EngineError;
use super::event::{EventKind, LabelSource};
use super::gate::{Gate, Pass};
use super::label_cache;
use super::params::ParamChange;

impl Engine {
    /// The gate, without waiting: whether one call may pass now. Passing a
    /// stepping gate closes it behind the call.
    pub(super) fn try_pass(&mut self) -> Result<bool, EngineError> {
        // A fork's prefix runs through: its pauses are the trace's, echoed.
        if self.replaying() {
            return Ok(true);
        }
        match self.gate {
            Gate::Open => Ok(true),
            Gate::OneStep => {
                self.gate = Gate::Closed;
                self.emit(EventKind::Stepped)?;
                Ok(true)
            }
            Gate::Closed => Ok(false),
        }
    }

    /// The gate before a single call. Controls that arrived are applied
    /// here, so every change takes effect at a decision point and is
    /// recorded with the step it took effect in.
    pub(super) async fn pass_gate(&mut self) -> Result<Pass, EngineError> {
        // A session of in-process tools and the simulated model finds every
        // future ready and would never give its thread back: whatever shares
        // the runtime (the SIGTERM handler, the workbench's input) would not
        // be heard until the last task. A unit of tokio's budget a call lets
        // them in once the task has spent its budget (128 units), where a
        // yield at every call had the runtime poll its I/O driver each time.
        tokio::task::coop::consume_budget().await;
        self.apply_pending()?;
        self.wait_pace().await?;
        loop {
            if self.stop {
                return Ok(Pass::Stop);
            }
            if self.restart {
                return Ok(Pass::Restart);
            }
            if self.try_pass()? {
                return Ok(Pass::Go);
            }
            match self.controls.recv().await {
                Some(c) => self.apply_control(c)?,
                // Nobody can open the gate any more: run on rather than hang.
                None => self.open_for_good()?,
            }
        }
    }

    /// Waits for the user's next control and applies it, for a loop that
    /// waits on something else too (a bridged agent, between its calls).
    /// False once nobody can send one any more.
    pub(super) async fn next_control(&mut self) -> Result<bool, EngineError> {
        match self.controls.recv().await {
            Some(c) => self.take_control(c)?,
            None => return Ok(false),
        }
        Ok(true)
    }

    /// A control that arrived while the engine waited on something else:
    /// applied, or kept for the fork point while a fork's prefix replays.
    pub(super) fn take_control(&mut self, c: Control) -> Result<(), EngineError> {
        match c {
            Control::Stop if self.replaying() => self.stop = true,
            c if self.replaying() => self.deferred.push(c),
            c => self.apply_control(c)?,
        }
        Ok(())
    }

    /// The control channel closed: nobody can open a gate any more.
    pub(super) fn open_for_good(&mut self) -> Result<(), EngineError> {
        if self.gate != Gate::Open {
            self.gate = Gate::Open;
            self.emit(EventKind::Resumed)?;
        }
        Ok(())
    }

    /// While running, waits the pace before a call, still obeying controls.
    pub(super) async fn wait_pace(&mut self) -> Result<(), EngineError> {
        // A fork's prefix is replayed at once.
        if self.pace.is_zero() || self.gate != Gate::Open || self.replaying() {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + self.pace;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return Ok(()),
                c = self.controls.recv() => match c {
                    Some(c) => {
                        self.apply_control(c)?;
                        if self.gate != Gate::Open || self.stop || self.restart || self.pace.is_zero() {
                            return Ok(());
                        }
                    }
                    None => {
                        tokio::time::sleep_until(deadline).await;
                        return Ok(());
                    }
                },
            }
        }
    }

    /// Applies the controls that arrived since the last decision point.
    pub(super) fn apply_pending(&mut self) -> Result<(), EngineError> {
        if self.replaying() {
            // The user's controls wait for the fork point; quitting does not.
            while let Ok(c) = self.controls.try_recv() {
                match c {
                    Control::Stop => self.stop = true,
                    c => self.deferred.push(c),
                }
            }
            return self.replay_controls();
        }
        for c in std::mem::take(&mut self.deferred) {
            self.apply_control(c)?;
        }
        while let Ok(c) = self.controls.try_recv() {
            self.apply_control(c)?;
        }
        Ok(())
    }

    pub(super) fn reject(&mut self, control: &str, why: impl Into<String>) -> Result<(), EngineError> {
        self.emit(EventKind::ControlRejected { control: control.to_string(), why: why.into() })
    }

    pub(super) fn apply_control(&mut self, c: Control) -> Result<(), EngineError> {
        match c {
            Control::Pause => {
                if self.gate == Gate::Open {
                    self.gate = Gate::Closed;
                    self.emit(EventKind::Paused)?;
                }
            }
            Control::Resume => {
                if self.gate != Gate::Open {
                    self.gate = Gate::Open;
                    self.emit(EventKind::Resumed)?;
                }
            }
            Control::Step => {
                if self.gate == Gate::Open {
                    // Stepping a running engine pauses it after the next call.
                    self.emit(EventKind::Paused)?;
                }
                self.gate = Gate::OneStep;
            }
            Control::Stop => self.stop = true,
            Control::Suspend => {
                self.emit(EventKind::Suspended)?;
                return Err(EngineError::Suspended);
            }
            Control::InjectFault { tool, fault } => {
                if !self.names_a_tool(&tool) {
                    return self.reject("inject fault", format!("no tool named '{tool}'"));
                }
                self.faults.inject(&tool, fault);
                self.emit(EventKind::FaultInjected { tool, fault })?;
            }
            Control::InjectModelFault { target, fault } => self.inject_model_fault(target, fault)?,
            Control::ClearModelFault { target } => self.clear_model_fault(target)?,
            Control::ServerState { server, state, detail } => {
                self.emit(EventKind::ServerState { server, state, detail })?;
            }
            // The control itself follows on the channel, to be taken
            // wherever a control is awaited (an approval's decision, a lane's).
            Control::Viewer { viewer, action } => self.emit(EventKind::Viewer { viewer, action })?,
            Control::ClearFault { tool } => {
                self.faults.clear(tool.as_deref());
                self.emit(EventKind::FaultCleared { tool })?;
            }
            Control::EditScore { tool, score } => {
                let (alpha, beta) = (self.params.alpha, self.params.beta);
                let result = match self.graph.as_mut() {
                    Some(g) => g.set_score(&tool, score, alpha, beta).map_err(|e| e.to_string()),
                    None => Err(format!("strategy {} has no tool graph", self.kind)),
                };
                match result {
                    Ok(update) => {
                        self.emit(EventKind::ScoreEdited { tool, score, update })?;
                        self.save_graph()?;
                    }
                    Err(why) => self.reject("edit score", why)?,
                }
            }
            Control::SetParam { change } => {
                let rejected = change.validate().err().map(|e| e.to_string());
                if rejected.is_none() {
                    self.params.apply(&change);
                    if matches!(change, ParamChange::Alpha(_) | ParamChange::Beta(_)) {
                        let (alpha, beta) = (self.params.alpha, self.params.beta);
                        if let Some(g) = self.graph.as_mut() {
                            let update = g.recompute_all(alpha, beta);
                            self.emit(EventKind::ParamChanged { change, rejected })?;
                            // New α or β reshape every row at once.
                            self.emit(EventKind::GraphUpdated { update })?;
                            return self.save_graph();
                        }
                    }
                }
                self.emit(EventKind::ParamChanged { change, rejected })?;
            }
            Control::SwitchModel { role, model } => match self.models.switch(role, &model) {
                Some(slot) => {
                    let (info, price) = (slot.model.info(), slot.price);
                    self.emit(EventKind::ModelSwitched { role, model: info, price })?;
                }
                None => {
                    let known: Vec<String> = self.models.available().map(|s| s.model.info().name).collect();
                    self.reject("switch model", format!("no model named '{model}' (known: {})", known.join(", ")))?;
                }
            },
            Control::RestartTask => self.restart = true,
            Control::EditTask { text } => {
                if text.trim().is_empty() {
                    return self.reject("edit task", "the task text is empty");
                }
                self.edited_text = Some(text);
                self.restart = true;
            }
            Control::PickTask { index } => {
                let total = self.state.total_tasks;
                if index == 0 || index > total {
                    return self.reject("pick task", format!("there is no task {index} (1 to {total})"));
                }
                self.next_task = Some(index as usize - 1);
                self.emit(EventKind::TaskPicked { index })?;
            }
            Control::SetPace { ms } => {
                self.pace = Duration::from_millis(ms);
                self.emit(EventKind::PaceChanged { ms })?;
            }
            // Lane controls only mean something while a step's lanes run,
            // where the lanes apply them themselves, or a bridged agent's
            // calls are open.
            Control::Lane { lane, action } => {
                if !self.agent_lane_control(lane, action)? {
                    self.reject(
                        "lane",
                        format!("no plan step is running and no call of an agent is open (lane {lane})"),
                    )?
                }
            }
            Control::SetCategory { tool, category } => self.set_category(tool, category)?,
            c @ (Control::Decide { .. }
            | Control::SetApproval { .. }
            | Control::SetBreakpoint { .. }
            | Control::ClearBreakpoint { .. }
            | Control::ToggleBreakpoint { .. }) => self.debug_control(c)?,
            Control::EditProgram { program } => {
                if self.kind == super::StrategyKind::Atc {
                    self.user_program = Some(program);
                } else {
                    self.reject("program", format!("the {} strategy runs no program", self.kind.as_str()))?;
                }
            }
        }
        Ok(())
    }

    /// The user gives a tool another category.
    fn set_category(&mut self, tool: String, category: String) -> Result<(), EngineError> {
        if self.library.get(&tool).is_none() {
            return self.reject("set category", format!("no tool named '{tool}'"));
        }
        let category = category.trim().to_string();
        if category.is_empty() {
            return self.reject("set category", "the category is empty");
        }
        self.labels.insert(tool.clone(), (category.clone(), LabelSource::User));
        self.emit(EventKind::CategoryEdited { tool: tool.clone(), category: category.clone() })?;
        // The edit outlives the session: it goes into the cache the next
        // session reads for this library and model.
        if let (Some(path), Some((key, model))) = (self.label_cache.clone(), self.label_key.clone())
            && self.library.get(&tool).is_some_and(|t| t.category.is_none())
        {
            let mut stored = label_cache::load(&path, &key).ok().flatten().unwrap_or_default();
            stored.insert(tool, category);
            if let Err(e) = label_cache::store(&path, &key, &model, &stored) {
                return self.reject("set category", format!("saved for this session only: {e}"));
            }
        }
        Ok(())
    }
}
