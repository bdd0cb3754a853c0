//! Approvals: a call, a tool's result or a model's reply that the policy
//! names waits for the user's decision, as a closed gate waits (other
//! controls still apply; stop and restart end the wait). Every edit and
//! rejection is an event with what was there before and what came after.

use serde_json::Value;

use super::conductor::Engine;
use super::control::Control;
use super::debug::{Decision, ReviewKind};
use super::event::{EventKind, ToolOutcome};
use super::host::Halt;
use crate::model::{ChatResponse, Role};
use crate::tool::exec::check_arguments;
use crate::tool::{ToolError, ToolErrorKind, ToolResult, ToolSpec};

/// What the user made of a call before it ran.
pub(super) enum Vetted {
    /// Run it: with these arguments when the user edited them.
    Run(Option<Value>),
    /// Do not run it: this error is its result, carrying the user's note.
    Rejected(ToolError),
}

/// What the model is told of a rejected call.
fn rejection(note: &str) -> ToolError {
    let note = note.trim();
    let message = if note.is_empty() {
        "the user rejected this call".to_string()
    } else {
        format!("the user rejected this call: {note}")
    };
    ToolError::new(ToolErrorKind::Rejected, message)
}

impl Engine {
    /// Before a call of `spec` runs: approved, edited or rejected when the
    /// policy names the tool; run as it is otherwise.
    pub(super) async fn approve_call(
        &mut self,
        call: u64,
        spec: &ToolSpec,
        args: &Value,
        lane: Option<u32>,
    ) -> Result<Vetted, Halt> {
        if !self.debug.policy.tool(&spec.name) {
            return Ok(Vetted::Run(None));
        }
        let tool = spec.name.clone();
        self.emit(EventKind::ApprovalRequested {
            call,
            tool: tool.clone(),
            args: args.clone(),
            parameters: spec.parameters.clone(),
            lane,
        })?;
        loop {
            let decision = match self.await_decision(call).await? {
                Some(d) => d,
                None => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Call, auto: true })?;
                    return Ok(Vetted::Run(None));
                }
            };
            match decision {
                Decision::Approve | Decision::Keep => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Call, auto: false })?;
                    return Ok(Vetted::Run(None));
                }
                Decision::EditArgs { args: after } => match check_arguments(spec, &after) {
                    Ok(()) => {
                        self.emit(EventKind::CallEdited { call, tool, before: args.clone(), after: after.clone() })?;
                        return Ok(Vetted::Run(Some(after)));
                    }
                    // The call still waits, for a better edit or another decision.
                    Err(e) => self.reject("decide: edit arguments", format!("call {call} of {tool}: {}", e.message))?,
                },
                Decision::Reject { note } => {
                    let error = rejection(&note);
                    self.emit(EventKind::CallRejected { call, tool, args: args.clone(), note })?;
                    return Ok(Vetted::Rejected(error));
                }
                other => self.reject(
                    &format!("decide: {}", other.word()),
                    format!("call {call} of {tool} waits to be approved, edited (its arguments) or rejected"),
                )?,
            }
        }
    }

    /// After a call of `tool` returned: its result as the user let it
    /// through (kept or edited) when the policy names the tool.
    pub(super) async fn review_result(
        &mut self,
        call: u64,
        tool: &str,
        result: ToolResult,
    ) -> Result<ToolResult, Halt> {
        // A rejected call has nothing to review: the user just decided it.
        if !self.debug.policy.tool(tool) || matches!(&result, Err(e) if e.kind == ToolErrorKind::Rejected) {
            return Ok(result);
        }
        let before = match &result {
            Ok(value) => ToolOutcome::Ok { value: value.clone() },
            Err(error) => ToolOutcome::Err { error: error.clone() },
        };
        self.emit(EventKind::ResultReview { call, tool: tool.to_string(), result: before.clone() })?;
        loop {
            match self.await_decision(call).await? {
                None => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Result, auto: true })?;
                    return Ok(result);
                }
                Some(Decision::Keep | Decision::Approve) => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Result, auto: false })?;
                    return Ok(result);
                }
                Some(Decision::EditResult { value }) => {
                    self.emit(EventKind::ResultEdited { call, tool: tool.to_string(), before, after: value.clone() })?;
                    return Ok(Ok(value));
                }
                Some(other) => self.reject(
                    &format!("decide: {}", other.word()),
                    format!("the result of call {call} ({tool}) waits to be kept or edited"),
                )?,
            }
        }
    }

    /// After a model replied in `role`: the reply as the user let it through
    /// (kept or edited) when the policy names the role. An edited reply
    /// replaces the text and drops native tool calls, so the text is what is
    /// acted on.
    pub(super) async fn review_reply(
        &mut self,
        call: u64,
        role: Role,
        mut resp: ChatResponse,
    ) -> Result<ChatResponse, Halt> {
        if !self.debug.policy.role(role) {
            return Ok(resp);
        }
        let (text, tool_calls) = (resp.text.clone(), resp.tool_calls.clone());
        self.emit(EventKind::ReplyReview { call, role, text, tool_calls })?;
        loop {
            match self.await_decision(call).await? {
                None => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Reply, auto: true })?;
                    return Ok(resp);
                }
                Some(Decision::Keep | Decision::Approve) => {
                    self.emit(EventKind::ReviewPassed { call, what: ReviewKind::Reply, auto: false })?;
                    return Ok(resp);
                }
                Some(Decision::EditReply { text }) => {
                    let before = std::mem::replace(&mut resp.text, text.clone());
                    resp.tool_calls.clear();
                    // The agent gets the edit, not the upstream's body.
                    resp.wire = None;
                    self.emit(EventKind::ReplyEdited { call, role, before, after: text })?;
                    return Ok(resp);
                }
                Some(other) => self.reject(
                    &format!("decide: {}", other.word()),
                    format!("the {role}'s reply (call {call}) waits to be kept or edited"),
                )?,
            }
        }
    }

    /// Waits for the user's decision on `call`, applying every other
    /// control meanwhile. None: nobody can answer any more (the control
    /// channel closed), and what waits goes through as it is.
    async fn await_decision(&mut self, call: u64) -> Result<Option<Decision>, Halt> {
        // A fork's prefix: the decision the user made then.
        if self.replaying() {
            match self.recorded_decision(call)? {
                Some(decision) => return Ok(decision),
                None if self.stop => return Err(Halt::Stopped),
                None if self.restart => return Err(Halt::Restarted),
                None => return Err(self.replay_stuck("the call waiting for a decision").into()),
            }
        }
        self.debug.waiting = Some(call);
        let decision = loop {
            if self.stop {
                break Err(Halt::Stopped);
            }
            if self.restart {
                break Err(Halt::Restarted);
            }
            match self.controls.recv().await {
                Some(Control::Decide { call: c, decision }) if c == call => break Ok(Some(decision)),
                Some(c) => {
                    if let Err(e) = self.apply_control(c) {
                        break Err(e.into());
                    }
                }
                None => break Ok(None),
            }
        };
        self.debug.waiting = None;
        decision
    }
}
