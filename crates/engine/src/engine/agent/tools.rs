//! A bridged agent's own tools, seen from the wire: a tool call in a reply
//! given to the agent is a tool call of the session from then on (a lane,
//! running in the agent), and the result its next request brings back for
//! that id ends it. A fault, the user failing its lane, or the user's edit
//! under an approval policy rewrites that result in the request before
//! the upstream reads it: the agent's code ran unchanged, its model reads
//! what the session made of it. Each is recorded as such.

use serde_json::Value;

use super::state::OwnCall;
use crate::engine::conductor::Engine;
use crate::engine::error::EngineError;
use crate::engine::event::{EventKind, ToolOutcome};
use crate::engine::host::Halt;
use crate::model::ChatRequest;
use crate::model::dialect::own_tools::{self, Brought};
use crate::tool::CallSource;
use crate::tool::exec::Executor;
use crate::tool::fault::FaultMode;
use crate::tool::{ToolError, ToolErrorKind, ToolResult};

impl Engine {
    /// The reply given to the agent asks for tools of its own: each is a
    /// call of the session, running in the agent, from now on.
    /// `chat`: the reply in the pivot; `thread`: the conversation it answered.
    pub(in crate::engine) fn own_tools_asked(
        &mut self,
        chat: Option<&Value>,
        thread: Option<u32>,
    ) -> Result<(), EngineError> {
        let Some(chat) = chat else { return Ok(()) };
        for a in own_tools::asked(chat) {
            let known = self.agent.own.asked.contains_key(&a.id) || self.agent.own.answered.contains(&a.id);
            if known {
                continue;
            }
            if self.library.get(&a.name).is_some() {
                // A tool of the session's library is served through its MCP
                // endpoint, where the call is seen as it runs.
                if let Some(t) = thread {
                    self.agent.mcp_asked.push((a.name, t));
                }
                continue;
            }
            self.next_call += 1;
            let (call, lane) = (self.next_call, self.agent.next_lane);
            self.agent.next_lane += 1;
            self.emit(EventKind::LaneOpened { lane, call, name: a.name.clone(), model: false, thread })?;
            self.emit(EventKind::ToolCall { call, tool: a.name.clone(), args: a.arguments.clone(), lane: Some(lane) })?;
            let t0 = self.clock.now_ms() + self.t_offset;
            if !self.agent.own.seen.contains(&a.name) {
                self.agent.own.seen.insert(a.name.clone());
            }
            let own =
                OwnCall { call, lane, tool: a.name, args: a.arguments, t0, user_fault: None, thread, launched: false };
            self.agent.own.asked.insert(a.id, own);
        }
        Ok(())
    }

    /// A request of the agent's brings results back: each ends its call,
    /// meets the faults and the approval policy, and is rewritten in the
    /// request where they changed it. A result for an id no reply of this
    /// session asked for is recorded once as such.
    pub(in crate::engine) async fn own_tools_answered(&mut self, mut req: ChatRequest) -> Result<ChatRequest, Halt> {
        let Some(chat) = req.wire.as_ref().and_then(|w| w.to_chat().ok()) else { return Ok(req) };
        let (results, calls) = own_tools::brought(&chat);
        let mut rewritten = false;
        for Brought { id, content } in results {
            if self.agent.own.answered.contains(&id) {
                continue;
            }
            self.agent.own.answered.insert(id.clone());
            let Some(own) = self.agent.own.asked.remove(&id) else {
                let tool = calls.iter().find(|c| c.id == id).map(|c| c.name.clone());
                self.emit(EventKind::ToolResultUnmatched { id, tool })?;
                continue;
            };
            let brought: ToolResult = if own_tools::reads_as_error(&content) {
                Err(ToolError::new(ToolErrorKind::Failed, content.clone()))
            } else {
                Ok(serde_json::from_str(&content).unwrap_or(Value::String(content.clone())))
            };
            let latency_ms = (self.clock.now_ms() + self.t_offset).saturating_sub(own.t0);
            let fault = match own.user_fault {
                Some(f) => Some(f),
                None => self.faults.draw(&own.tool, &mut self.rng),
            };
            let seed = self.call_seed(own.call);
            let mut result =
                fault.and_then(|f| Executor::injected(&own.tool, f, seed)).unwrap_or_else(|| brought.clone());
            // A fork's prefix: the agent's time and what was made of its result, as recorded.
            let (mut latency_ms, mut fault) = (latency_ms, fault);
            if let Some(r) = self.recorded_result(own.call) {
                (result, latency_ms, fault) = (r.result, r.latency_ms, r.fault);
            }
            self.settle_own(&own, &result, latency_ms, fault)?;
            let result = self.review_result(own.call, &own.tool, result).await?;
            self.agent.own.ended.push_back((own.tool.clone(), own.args.clone(), result.clone()));
            if result != brought
                && let Some(wire) = req.wire.as_mut()
            {
                let (text, is_error) = match &result {
                    Ok(Value::String(s)) => (s.clone(), false),
                    Ok(v) => (v.to_string(), false),
                    Err(e) => (format!("Error: {}", e.message), true),
                };
                rewritten |= own_tools::rewrite(wire, &id, &text, is_error);
            }
        }
        if rewritten && let Some(wire) = req.wire.clone() {
            // The flat messages the trace and a simulated model read follow the body.
            if let Ok(fresh) = wire.chat_request(req.role) {
                req.messages = fresh.messages;
            }
        }
        Ok(req)
    }

    /// One of the agent's own calls ended: counted, its latency learnt,
    /// its result recorded as the agent's.
    fn settle_own(
        &mut self,
        own: &OwnCall,
        result: &ToolResult,
        latency_ms: u64,
        fault: Option<FaultMode>,
    ) -> Result<(), EngineError> {
        self.tally.tool_calls += 1;
        match self.latency.get_mut(&own.tool) {
            Some(l) => l.record(latency_ms),
            None => self.latency.entry(own.tool.clone()).or_default().record(latency_ms),
        }
        let outcome = match result {
            Ok(value) => ToolOutcome::Ok { value: value.clone() },
            Err(error) => ToolOutcome::Err { error: error.clone() },
        };
        self.emit(EventKind::ToolResult {
            call: own.call,
            tool: own.tool.clone(),
            outcome,
            latency_ms,
            cost: 0.0,
            fault,
            filtered: false,
            lane: Some(own.lane),
            source: Some(CallSource::Agent),
        })
    }

    /// The tools a request offers the agent's model that are not the
    /// library's: the agent's own, called or not.
    pub(in crate::engine) fn own_tools_offered(&mut self, req: &ChatRequest) {
        for t in &req.tools {
            if !self.agent.own.seen.contains(&t.name) && self.library.get(&t.name).is_none() {
                self.agent.own.seen.insert(t.name.clone());
            }
        }
    }

    /// Whether `tool` is one of the agent's own (offered its model or called).
    pub(in crate::engine) fn is_agent_tool(&self, tool: &str) -> bool {
        self.agent.own.seen.contains(tool)
    }

    /// Whether a fault, an approval or a breakpoint may name `tool`: one of
    /// the library's, or, in a bridged agent's session, any name (the
    /// agent's own tools are known only once its replies ask for them).
    pub(in crate::engine) fn names_a_tool(&self, tool: &str) -> bool {
        self.library.get(tool).is_some() || self.kind == crate::engine::StrategyKind::Agent
    }

    /// The run ends: the agent's own calls still out are recorded as
    /// abandoned, so none is left without its end.
    pub(in crate::engine) fn own_tools_end(&mut self, why: &str) -> Result<(), EngineError> {
        let mut open: Vec<OwnCall> = self.agent.own.asked.drain().map(|(_, c)| c).collect();
        open.sort_by_key(|c| c.call);
        for c in open {
            self.emit(EventKind::CallAbandoned { call: c.call, lane: c.lane, why: why.to_string() })?;
        }
        self.agent.own.answered.clear();
        Ok(())
    }
}
