//! One model call and one tool call, each behind the gate, with its events
//! and its cost; and what every call of a tool shares with a lane's.

use std::time::Duration;

use serde_json::Value;

use super::agent::state::ModelGo;
use super::approval::Vetted;
use super::conductor::Engine;
use super::error::EngineError;
use super::event::{Capped, EventKind, ToolOutcome};
use super::gate::Pass;
use super::host::Halt;
use crate::model::stream::{Delta, Tokens};
use crate::model::{ChatRequest, ChatResponse};
use crate::tool::fault::FaultMode;
use crate::tool::{ToolError, ToolErrorKind, ToolResult, ToolSpec};

impl Engine {
    pub(super) async fn gate_or_halt(&mut self) -> Result<(), Halt> {
        match self.pass_gate().await? {
            Pass::Go => Ok(()),
            Pass::Stop => Err(Halt::Stopped),
            Pass::Restart => Err(Halt::Restarted),
        }
    }

    pub(super) async fn model_call(&mut self, req: ChatRequest) -> Result<ChatResponse, Halt> {
        self.break_before(None)?;
        self.gate_or_halt().await?;
        self.next_call += 1;
        let call = self.next_call;
        let go = self.model_setup(call, req)?;
        // A fork's prefix is answered from its trace, not the model.
        let (result, latency_ms, first_token_ms) = match self.recorded_reply(call) {
            Some(r) => (r.result, r.latency_ms, r.first_token_ms),
            None => {
                let t0 = self.clock.now_ms();
                let (result, first) = self.streamed(call, go.slot.model.as_ref(), &go.req, go.fault).await?;
                (result, self.clock.now_ms().saturating_sub(t0), first.map(|t| t.saturating_sub(t0)))
            }
        };
        self.model_answered(call, &go, result, latency_ms, first_token_ms).await
    }

    /// A model call about to go out as call `call`: its reply limit set,
    /// its model chosen, its tools narrowed, its `ModelCall` emitted and
    /// its fault drawn.
    pub(super) fn model_setup(&mut self, call: u64, mut req: ChatRequest) -> Result<ModelGo, EngineError> {
        let role = req.role;
        if req.max_tokens.is_none() {
            req.max_tokens = self.models.reply_tokens().of(role);
        }
        let slot = self.slot_for(&req).clone();
        let model = slot.model.info();
        self.narrow_tools(call, &mut req)?;
        self.emit(EventKind::ModelCall {
            call,
            role,
            model: model.name.clone(),
            simulated: model.simulated,
            messages: req.messages.clone(),
            wire: req.wire.clone(),
        })?;
        let fault = self.draw_model_fault(role, &model.name, call);
        Ok(ModelGo { req, slot, model: model.name, fault })
    }

    /// The model answering a request: a bridged agent that names a
    /// configured model gets that one; any other name, its role's.
    pub(super) fn slot_for(&self, req: &ChatRequest) -> &super::models::ModelSlot {
        let asked = req.wire.as_ref().and_then(|w| w.body.get("model")?.as_str()).and_then(|n| self.models.named(n));
        asked.unwrap_or_else(|| self.models.get(req.role))
    }

    /// A model call's answer recorded: its cost counted, its reply (or
    /// failure) emitted, the reply reviewed where the policy says so.
    pub(super) async fn model_answered(
        &mut self,
        call: u64,
        go: &ModelGo,
        result: Result<ChatResponse, crate::model::ModelError>,
        latency_ms: u64,
        first_token_ms: Option<u64>,
    ) -> Result<ChatResponse, Halt> {
        let role = go.req.role;
        match result {
            Ok(resp) => {
                let cost = go.slot.price.cost(resp.usage);
                self.tally.usage += resp.usage;
                self.tally.cost += cost;
                self.emit(EventKind::ModelReply {
                    call,
                    role,
                    model: go.model.clone(),
                    text: resp.text.clone(),
                    tool_calls: resp.tool_calls.clone(),
                    usage: resp.usage,
                    cost,
                    latency_ms,
                    fault: go.fault,
                    wire: resp.wire.clone(),
                    first_token_ms,
                    capped: resp.capped.then_some(Capped { max_tokens: go.req.max_tokens }),
                })?;
                self.review_reply(call, role, resp).await
            }
            Err(e) => {
                let error = e.to_string();
                let model = go.model.clone();
                self.emit(EventKind::ModelFailed {
                    call,
                    role,
                    model,
                    error: error.clone(),
                    latency_ms,
                    fault: go.fault,
                })?;
                Err(Halt::ModelFailed(error))
            }
        }
    }

    /// The model's answer, its reply shown as it streams in; and when its
    /// first token came, on the engine's clock. The engine reads no
    /// control meanwhile: a pause lets a started stream finish and holds
    /// the next call at the gate.
    async fn streamed(
        &mut self,
        call: u64,
        model: &dyn crate::model::ChatModel,
        req: &ChatRequest,
        fault: Option<crate::model::fault::ModelFaultMode>,
    ) -> Result<(Result<ChatResponse, crate::model::ModelError>, Option<u64>), Halt> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let tokens = Tokens::to(tx);
        let answer = model.chat_streaming(req, fault, &tokens);
        tokio::pin!(answer);
        let mut first = None;
        let result = loop {
            tokio::select! {
                biased;
                Some(delta) = rx.recv() => self.tell_tokens(call, delta, &mut first)?,
                result = &mut answer => break result,
            }
        };
        while let Ok(delta) = rx.try_recv() {
            self.tell_tokens(call, delta, &mut first)?;
        }
        Ok((result, first))
    }

    fn tell_tokens(&mut self, call: u64, delta: Delta, first: &mut Option<u64>) -> Result<(), EngineError> {
        let (text, restart) = match delta {
            Delta::Text(text) => {
                first.get_or_insert_with(|| self.clock.now_ms());
                (text, false)
            }
            Delta::Restart => (String::new(), true),
        };
        self.publish_live(EventKind::ModelTokens { call, text, restart })
    }

    pub(super) async fn tool_call(&mut self, tool: &str, args: &Value) -> Result<ToolResult, Halt> {
        self.break_before(Some(tool))?;
        self.gate_or_halt().await?;
        let Some(spec) = self.library.get(tool).cloned() else {
            return Ok(Err(unknown_tool(tool)));
        };
        self.next_call += 1;
        let call = self.next_call;
        let edited = match self.approve_call(call, &spec, args, None).await? {
            Vetted::Run(edited) => edited,
            Vetted::Rejected(error) => return Ok(Err(error)),
        };
        let args = edited.as_ref().unwrap_or(args);
        let fault = self.faults.draw(tool, &mut self.rng);
        self.emit(EventKind::ToolCall { call, tool: tool.to_string(), args: args.clone(), lane: None })?;
        let (timeout, call_seed) = (self.call_timeout(Some(&spec)), self.call_seed(call));
        // A fork's prefix is answered from its trace, not the tool.
        let (result, latency_ms, fault) = match self.recorded_result(call) {
            Some(r) => (r.result, r.latency_ms, r.fault),
            None => {
                let t0 = self.clock.now_ms();
                let result = self.executor.call(&spec, args, fault, call_seed, timeout).await;
                (result, self.clock.now_ms().saturating_sub(t0), fault)
            }
        };
        self.settle_call(call, tool, Some(&spec), &result, latency_ms, fault, false, None)?;
        self.review_result(call, tool, result).await
    }

    /// A finished call, single or in a lane: its cost charged, its latency
    /// learnt, its result recorded.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn settle_call(
        &mut self,
        call: u64,
        tool: &str,
        spec: Option<&ToolSpec>,
        result: &ToolResult,
        latency_ms: u64,
        fault: Option<FaultMode>,
        filtered: bool,
        lane: Option<u32>,
    ) -> Result<(), EngineError> {
        let cost = spec.map_or(0.0, |s| s.cost);
        self.tally.tool_calls += 1;
        self.tally.cost += cost;
        // c_i's third part: the call's time at the configured rate.
        if let Some(rate) = self.btp.as_ref().map(|b| b.time_rate).filter(|r| *r > 0.0) {
            self.tally.cost += latency_ms as f64 / 1000.0 * rate;
        }
        match self.latency.get_mut(tool) {
            Some(l) => l.record(latency_ms),
            None => self.latency.entry(tool.to_string()).or_default().record(latency_ms),
        }
        let source = spec.and_then(|spec| self.executor.source(spec, fault, result));
        let outcome = match result {
            Ok(value) => ToolOutcome::Ok { value: value.clone() },
            Err(error) => ToolOutcome::Err { error: error.clone() },
        };
        self.emit(EventKind::ToolResult {
            call,
            tool: tool.to_string(),
            outcome,
            latency_ms,
            cost,
            fault,
            filtered,
            lane,
            source,
        })
    }

    /// A tool's own timeout (command and HTTP tools carry one), else the engine's.
    pub(super) fn call_timeout(&self, spec: Option<&ToolSpec>) -> Duration {
        spec.and_then(ToolSpec::own_timeout).unwrap_or(self.tool_timeout)
    }

    /// Each call's randomness comes from the seed and the call's place in
    /// the session, never from timing.
    pub(super) fn call_seed(&self, call: u64) -> u64 {
        self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ call
    }
}

pub(super) fn unknown_tool(tool: &str) -> ToolError {
    ToolError::new(ToolErrorKind::Failed, format!("unknown tool '{tool}'"))
}
