//! A bridged agent's calls served concurrently, each a lane: a call waits
//! at its own gate (a pause holds new calls and lets started ones finish),
//! the user may hold it, step it alone or fail it, and once through it
//! runs in a task of its own while its siblings arrive, run and end. The
//! engine alone emits events, one at a time, so the trace stays a total
//! order. A call whose caller hung up before it was sent is not sent; one
//! whose caller hangs up while it runs is cut off. Both are recorded.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::{AbortHandle, Abortable};
use tokio::sync::mpsc;

use super::calls::{AgentNext, Bridged, BridgedCall, BridgedToolCall, GatewayRefusal, Refusal, ToolEnd};
use super::state::{Cut, Ended, EndedWhat, ModelGo, OpenLane, Running, Slot, Work};
use super::threads::{Launcher, Opened, Shape};
use crate::budget::btp::RunBudget;
use crate::engine::approval::Vetted;
use crate::engine::calls::unknown_tool;
use crate::engine::conductor::Engine;
use crate::engine::control::{Control, LaneAction};
use crate::engine::error::EngineError;
use crate::engine::event::EventKind;
use crate::engine::host::Halt;
use crate::model::ModelError;
use crate::model::stream::{Delta, Tokens};
use crate::tool::{ToolError, ToolErrorKind};

/// What woke the agent's loop.
enum Woke {
    HungUp,
    Tokens((u64, Delta)),
    Ended(Ended),
    Control(Option<Control>),
    Arrived(Option<Bridged>),
}

impl Engine {
    /// Serves a bridged agent's calls until something the strategy must
    /// hear of: a tool call ended, a call arrived or ended, a control was
    /// applied, or the gateways closed. Cancel-safe but for an approval it
    /// waits on: only the agent's exit should drop it.
    pub(in crate::engine) async fn serve_agent(
        &mut self,
        mut incoming: Option<&mut mpsc::Receiver<Bridged>>,
        budget: Option<&mut RunBudget>,
    ) -> Result<AgentNext, Halt> {
        // Controls that arrived are applied first; the strategy hears of
        // them (a narrowing changed what its MCP endpoint lists).
        let pending = !self.deferred.is_empty() || !self.controls.is_empty();
        self.apply_pending()?;
        if self.stop || self.restart {
            let why = if self.stop { "the session was stopped" } else { "the task was restarted" };
            self.end_agent_calls(why).await?;
            return Err(if self.stop { Halt::Stopped } else { Halt::Restarted });
        }
        if pending && !self.replaying() {
            return Ok(AgentNext::Moved);
        }
        if let Some((tool, args, result)) = self.agent.own.ended.pop_front() {
            return Ok(AgentNext::Tool { tool, args, end: ToolEnd::Ran(result) });
        }
        if let Some(next) = self.start_agent_lanes(budget.as_deref()).await? {
            return Ok(next);
        }
        let lanes = &mut self.agent;
        let controls = &mut self.controls;
        let arrival = async {
            match incoming.as_deref_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        // A caller that hangs up while its call waits (paused, held) is
        // heard at once, not when the gate opens.
        let waits: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = lanes
            .open
            .iter_mut()
            .filter_map(|l| match &mut l.work {
                Some(Work::Model(c)) => Some(Box::pin(c.reply.closed()) as Pin<Box<dyn Future<Output = ()> + Send>>),
                Some(Work::Tool(c)) => Some(Box::pin(c.reply.closed()) as Pin<Box<dyn Future<Output = ()> + Send>>),
                None => None,
            })
            .collect();
        let hangup = async move {
            if waits.is_empty() {
                std::future::pending::<()>().await;
            }
            futures::future::select_all(waits).await;
        };
        let woke = tokio::select! {
            biased;
            Some(t) = lanes.tokens_rx.recv() => Woke::Tokens(t),
            Some(ended) = lanes.done_rx.recv() => Woke::Ended(ended),
            c = controls.recv() => Woke::Control(c),
            () = hangup => Woke::HungUp,
            b = arrival => Woke::Arrived(b),
        };
        match woke {
            Woke::Tokens((call, delta)) => {
                let (text, restart) = match delta {
                    Delta::Text(t) => (t, false),
                    Delta::Restart => (String::new(), true),
                };
                self.publish_live(EventKind::ModelTokens { call, text, restart })?;
                Ok(AgentNext::Moved)
            }
            Woke::Ended(ended) => self.end_agent_lane(ended).await,
            Woke::HungUp => {
                self.abandon_gone()?;
                Ok(AgentNext::Moved)
            }
            Woke::Control(Some(c)) => {
                self.take_control(c)?;
                Ok(AgentNext::Moved)
            }
            // Nobody can open a gate any more: run on rather than hang,
            // and wait for the calls alone.
            Woke::Control(None) => {
                for l in self.agent.open.iter_mut().filter(|l| l.slot == Slot::Held) {
                    l.slot = Slot::Waiting;
                }
                self.open_for_good()?;
                if self.agent.open.iter().any(|l| l.slot == Slot::Waiting) {
                    return Ok(AgentNext::Moved);
                }
                let lanes = &mut self.agent;
                let arrival = async {
                    match incoming {
                        Some(rx) => rx.recv().await,
                        None => std::future::pending().await,
                    }
                };
                let woke = tokio::select! {
                    Some(ended) = lanes.done_rx.recv() => Woke::Ended(ended),
                    b = arrival => Woke::Arrived(b),
                };
                match woke {
                    Woke::Ended(ended) => self.end_agent_lane(ended).await,
                    Woke::Arrived(Some(b)) => self.open_agent_call(b).map(|()| AgentNext::Moved).map_err(Halt::from),
                    _ => Ok(AgentNext::Closed),
                }
            }
            Woke::Arrived(Some(b)) => {
                self.open_agent_call(b)?;
                Ok(AgentNext::Moved)
            }
            Woke::Arrived(None) => Ok(AgentNext::Closed),
        }
    }

    /// A call arrives: it gets its call number and lane and waits.
    fn open_agent_call(&mut self, b: Bridged) -> Result<(), EngineError> {
        let (work, name, model) = match b {
            Bridged::Refused(GatewayRefusal { dialect, status, error }) => {
                return self.emit(EventKind::GatewayRefused { dialect, status, error });
            }
            Bridged::Call(c) => {
                let name = self.slot_for(&c.request).model.info().name;
                (Work::Model(c), name, true)
            }
            Bridged::Tool(c) => {
                let name = c.tool.clone();
                (Work::Tool(c), name, false)
            }
        };
        self.next_call += 1;
        let (call, lane) = (self.next_call, self.agent.next_lane);
        self.agent.next_lane += 1;
        let thread = match &work {
            Work::Model(c) => {
                self.own_tools_offered(&c.request);
                self.thread_of_request(call, c)?
            }
            Work::Tool(c) => self.thread_of_mcp_call(&c.tool),
        };
        self.agent.open.push(OpenLane {
            lane,
            call,
            thread,
            slot: Slot::Waiting,
            reached: false,
            user_fault: None,
            work: Some(work),
            running: None,
            abort: None,
            cut: None,
            task: None,
        });
        self.emit(EventKind::LaneOpened { lane, call, name, model, thread })
    }

    /// The thread a model call continues or begins; a thread begun is
    /// recorded before the call's lane.
    fn thread_of_request(&mut self, call: u64, c: &BridgedCall) -> Result<Option<u32>, EngineError> {
        let Some(shape) = Shape::of(&c.request) else { return Ok(None) };
        let mut running: Vec<Launcher> = (self.agent.own.asked.values())
            .filter(|o| !o.launched)
            .filter_map(|o| Some(Launcher { call: o.call, thread: o.thread?, tool: o.tool.clone() }))
            .collect();
        running.sort_by_key(|l| l.call);
        let placed = self.agent.threads.place(call, &shape, c.agent.as_deref(), &running);
        if self.agent.mcp_asked.len() > MCP_ASKED_KEPT {
            // Asked for and never called over MCP (the agent ran them itself).
            self.agent.mcp_asked.drain(..MCP_ASKED_KEPT / 2);
        }
        if let Some(o) = placed.launched_by.and_then(|by| self.agent.own.asked.values_mut().find(|o| o.call == by)) {
            o.launched = true;
        }
        if let Some(Opened { name, parent, how }) = placed.opened {
            self.emit(EventKind::ThreadOpened { thread: placed.thread, name, parent, how })?;
        }
        Ok(Some(placed.thread))
    }

    /// An MCP tool call's thread: the one whose reply asked for the tool
    /// (the earliest not yet called).
    fn thread_of_mcp_call(&mut self, tool: &str) -> Option<u32> {
        let i = self.agent.mcp_asked.iter().position(|(t, _)| t == tool)?;
        Some(self.agent.mcp_asked.remove(i).1)
    }

    /// Starts, in order of arrival, each waiting call the gate lets
    /// through. A call that ends at once (its caller gone, refused,
    /// rejected, an unknown tool) is handed back as it ends.
    async fn start_agent_lanes(&mut self, budget: Option<&RunBudget>) -> Result<Option<AgentNext>, Halt> {
        self.abandon_gone()?;
        let mut i = 0;
        while i < self.agent.open.len() {
            let l = &self.agent.open[i];
            if !matches!(l.slot, Slot::Waiting | Slot::Stepped) {
                i += 1;
                continue;
            }
            if !self.agent.open[i].reached {
                self.agent.open[i].reached = true;
                let tool = match &self.agent.open[i].work {
                    Some(Work::Tool(t)) => Some(t.tool.clone()),
                    _ => {
                        self.step += 1;
                        None
                    }
                };
                let thread = self.agent.open[i].thread;
                self.break_before_in(tool.as_deref(), thread)?;
            }
            let stepped = self.agent.open[i].slot == Slot::Stepped;
            if !stepped && !self.try_pass()? {
                i += 1;
                continue;
            }
            if let Some(next) = self.start_agent_lane(i, budget).await? {
                return Ok(Some(next));
            }
            i += 1;
        }
        Ok(None)
    }

    /// The calls not yet started whose callers hung up: never sent,
    /// recorded as abandoned. (The ledger keeps nothing of them.)
    fn abandon_gone(&mut self) -> Result<(), EngineError> {
        let gone = |l: &OpenLane| match &l.work {
            Some(Work::Model(c)) => c.reply.is_closed(),
            Some(Work::Tool(c)) => c.reply.is_closed(),
            None => false,
        };
        while let Some(i) = self.agent.open.iter().position(gone) {
            let l = self.agent.open.remove(i);
            let why = "the agent hung up before the call was sent".to_string();
            self.agent.threads.dropped(l.call);
            self.emit(EventKind::CallAbandoned { call: l.call, lane: l.lane, why })?;
        }
        Ok(())
    }

    /// Lane `i` goes: a model call to its model, a tool call (vetted
    /// first, where the policy says so) to its tool, each in a task.
    async fn start_agent_lane(&mut self, i: usize, budget: Option<&RunBudget>) -> Result<Option<AgentNext>, Halt> {
        let (call, lane) = (self.agent.open[i].call, self.agent.open[i].lane);
        let Some(work) = self.agent.open[i].work.take() else { return Ok(None) };
        match work {
            Work::Model(c) => {
                let BridgedCall { request, reply, .. } = *c;
                let request = match self.own_tools_answered(request).await {
                    Ok(r) => r,
                    Err(halt) => {
                        let _ = reply.send(Err(Refusal::Stopped));
                        return Err(halt);
                    }
                };
                // The review may have taken a while: the lane may have moved.
                let Some(i) = self.agent.open.iter().position(|l| l.call == call) else { return Ok(None) };
                let go = self.model_setup(call, request)?;
                if matches!(self.agent.open[i].cut, Some(Cut::User)) && !self.replaying() {
                    // Failed by the user before it went: it never goes.
                    self.agent.open.remove(i);
                    let what = EndedWhat::Model {
                        result: Some(Err(ModelError::Other(cut_error(Some(&Cut::User), "the call")))),
                        latency_ms: 0,
                        first_token_ms: None,
                        reply,
                    };
                    return self.model_lane_ended(call, Box::new(go), what).await.map(Some);
                }
                if let Some(r) = self.recorded_reply(call) {
                    // A fork's prefix is answered from its trace, at once.
                    self.agent.open.remove(i);
                    let ended = Ended {
                        call,
                        what: EndedWhat::Model {
                            result: Some(r.result),
                            latency_ms: r.latency_ms,
                            first_token_ms: r.first_token_ms,
                            reply,
                        },
                    };
                    let go = Box::new(go);
                    return self.model_lane_ended(call, go, ended.what).await.map(Some);
                }
                let (abort, registration) = AbortHandle::new_pair();
                let (model, req, fault) = (Arc::clone(&go.slot.model), go.req.clone(), go.fault);
                let (clock, done, tokens) =
                    (Arc::clone(&self.clock), self.agent.done_tx.clone(), self.agent.tokens_tx.clone());
                let task = tokio::spawn(async move {
                    let (tx, mut rx) = mpsc::unbounded_channel();
                    let watch = Tokens::to(tx);
                    let t0 = clock.now_ms();
                    let mut first = None;
                    let mut reply = reply;
                    let answer =
                        Abortable::new(async { model.chat_streaming(&req, fault, &watch).await }, registration);
                    tokio::pin!(answer);
                    let outcome = loop {
                        tokio::select! {
                            biased;
                            Some(d) = rx.recv() => {
                                if matches!(d, Delta::Text(_)) {
                                    first.get_or_insert_with(|| clock.now_ms());
                                }
                                let _ = tokens.send((call, d));
                            }
                            r = &mut answer => break Some(r.ok()),
                            () = reply.closed() => break None,
                        }
                    };
                    while let Ok(d) = rx.try_recv() {
                        let _ = tokens.send((call, d));
                    }
                    let latency_ms = clock.now_ms().saturating_sub(t0);
                    let what = match outcome {
                        None => EndedWhat::HungUp { latency_ms },
                        Some(result) => EndedWhat::Model {
                            result,
                            latency_ms,
                            first_token_ms: first.map(|f: u64| f.saturating_sub(t0)),
                            reply,
                        },
                    };
                    let _ = done.send(Ended { call, what });
                });
                let l = &mut self.agent.open[i];
                (l.slot, l.abort, l.task, l.running) =
                    (Slot::Running, Some(abort), Some(task.abort_handle()), Some(Running::Model(Box::new(go))));
                Ok(None)
            }
            Work::Tool(c) => self.start_tool_lane(i, call, lane, *c, budget).await,
        }
    }

    async fn start_tool_lane(
        &mut self,
        i: usize,
        call: u64,
        lane: u32,
        c: BridgedToolCall,
        budget: Option<&RunBudget>,
    ) -> Result<Option<AgentNext>, Halt> {
        let BridgedToolCall { tool, args, reply } = c;
        let Some(spec) = self.library.get(&tool).cloned() else {
            // Shown as a call that failed at once, so the lane and the
            // transcript say why.
            self.agent.open.remove(i);
            let error = unknown_tool(&tool);
            self.emit(EventKind::ToolCall { call, tool: tool.clone(), args: args.clone(), lane: Some(lane) })?;
            self.settle_call(call, &tool, None, &Err(error.clone()), 0, None, false, Some(lane))?;
            let _ = reply.send(Ok(Err(error.clone())));
            return Ok(Some(AgentNext::Tool { tool, args, end: ToolEnd::Ran(Err(error)) }));
        };
        if let Some((reason, detail)) = budget.and_then(|b| crate::engine::budgeting::refusal(b, &tool)) {
            self.agent.open.remove(i);
            self.emit(EventKind::Refused { tool: tool.clone(), reason, detail: detail.clone() })?;
            let _ = reply.send(Ok(Err(ToolError::new(ToolErrorKind::Refused, detail.clone()))));
            return Ok(Some(AgentNext::Tool { tool, args, end: ToolEnd::Refused(detail) }));
        }
        let args = match self.approve_call(call, &spec, &args, Some(lane)).await? {
            Vetted::Run(Some(edited)) => edited,
            Vetted::Run(None) => args,
            Vetted::Rejected(error) => {
                self.agent.open.remove(i);
                let _ = reply.send(Ok(Err(error.clone())));
                return Ok(Some(AgentNext::Tool { tool, args, end: ToolEnd::Ran(Err(error)) }));
            }
        };
        // The approval may have taken a while: the lane may have moved.
        let Some(i) = self.agent.open.iter().position(|l| l.call == call) else { return Ok(None) };
        let fault = match self.agent.open[i].user_fault {
            Some(f) => Some(f),
            None => self.faults.draw(&tool, &mut self.rng),
        };
        self.emit(EventKind::ToolCall { call, tool: tool.clone(), args: args.clone(), lane: Some(lane) })?;
        if let Some(r) = self.recorded_result(call) {
            self.agent.open.remove(i);
            let what = EndedWhat::Tool { result: Some(r.result), latency_ms: r.latency_ms, reply };
            let running = Running::Tool { tool, spec, args, fault: r.fault };
            return self.tool_lane_ended(call, lane, running, what).await.map(Some);
        }
        let (timeout, seed) = (self.call_timeout(Some(&spec)), self.call_seed(call));
        let (executor, clock, done) = (self.executor.clone(), Arc::clone(&self.clock), self.agent.done_tx.clone());
        let (abort, registration) = AbortHandle::new_pair();
        let (run_spec, run_args) = (Arc::clone(&spec), args.clone());
        let task = tokio::spawn(async move {
            // A tool that started runs to its end even when its caller
            // leaves (it may have acted already): its result is recorded.
            let t0 = clock.now_ms();
            let run = Abortable::new(
                async move { executor.call(&run_spec, &run_args, fault, seed, timeout).await },
                registration,
            );
            let result = run.await.ok();
            let latency_ms = clock.now_ms().saturating_sub(t0);
            let _ = done.send(Ended { call, what: EndedWhat::Tool { result, latency_ms, reply } });
        });
        let l = &mut self.agent.open[i];
        (l.slot, l.abort, l.task, l.running) =
            (Slot::Running, Some(abort), Some(task.abort_handle()), Some(Running::Tool { tool, spec, args, fault }));
        Ok(None)
    }

    /// A lane's task reported: its end recorded, its caller answered.
    async fn end_agent_lane(&mut self, ended: Ended) -> Result<AgentNext, Halt> {
        let Some(i) = self.agent.open.iter().position(|l| l.call == ended.call) else { return Ok(AgentNext::Moved) };
        let l = self.agent.open.remove(i);
        let Some(running) = l.running else { return Ok(AgentNext::Moved) };
        let cut = l.cut.clone();
        match (running, ended.what) {
            (_, EndedWhat::HungUp { latency_ms }) => {
                let why = format!("the agent hung up while the call ran ({latency_ms} ms)");
                self.agent.threads.dropped(l.call);
                self.emit(EventKind::CallAbandoned { call: l.call, lane: l.lane, why })?;
                Ok(AgentNext::Moved)
            }
            (Running::Model(go), mut what) => {
                if let EndedWhat::Model { result: r @ None, .. } = &mut what {
                    *r = Some(Err(ModelError::Other(cut_error(cut.as_ref(), "the call"))));
                }
                self.model_lane_ended(l.call, go, what).await
            }
            (running @ Running::Tool { .. }, mut what) => {
                if let (EndedWhat::Tool { result: r @ None, .. }, Running::Tool { tool, .. }) = (&mut what, &running) {
                    *r =
                        Some(Err(ToolError::new(ToolErrorKind::Failed, cut_error(cut.as_ref(), &format!("'{tool}'")))));
                }
                self.tool_lane_ended(l.call, l.lane, running, what).await
            }
        }
    }

    async fn model_lane_ended(&mut self, call: u64, go: Box<ModelGo>, what: EndedWhat) -> Result<AgentNext, Halt> {
        let EndedWhat::Model { result, latency_ms, first_token_ms, reply } = what else { return Ok(AgentNext::Moved) };
        let result = result.unwrap_or_else(|| Err(ModelError::Other("cut short".into())));
        let answer = match self.model_answered(call, &go, result, latency_ms, first_token_ms).await {
            Ok(resp) => {
                let thread = self.agent.threads.of_call(call);
                let chat = resp.to_dialect(crate::model::wire::Dialect::Chat, &go.model).ok();
                self.own_tools_asked(chat.as_ref(), thread)?;
                let handoff =
                    resp.tool_calls.iter().find_map(|c| c.name.strip_prefix("transfer_to_")).map(str::to_string);
                let reply = chat.as_ref().and_then(crate::model::dialect::conversation::reply_key);
                self.agent.threads.answered(call, reply, handoff);
                Ok(resp)
            }
            Err(Halt::ModelFailed(error)) => {
                let status = upstream_status(&error);
                Err(Refusal::Upstream { status, error })
            }
            Err(halt) => {
                self.agent.threads.dropped(call);
                let _ = reply.send(Err(Refusal::Stopped));
                return Err(halt);
            }
        };
        if answer.is_err() {
            self.agent.threads.dropped(call);
        }
        // The agent may have hung up: its call is recorded all the same.
        let _ = reply.send(answer);
        Ok(AgentNext::Moved)
    }

    async fn tool_lane_ended(
        &mut self,
        call: u64,
        lane: u32,
        running: Running,
        what: EndedWhat,
    ) -> Result<AgentNext, Halt> {
        let (Running::Tool { tool, spec, args, fault }, EndedWhat::Tool { result, latency_ms, reply }) =
            (running, what)
        else {
            return Ok(AgentNext::Moved);
        };
        let result = result.unwrap_or_else(|| Err(ToolError::new(ToolErrorKind::Failed, "cut short")));
        self.settle_call(call, &tool, Some(&spec), &result, latency_ms, fault, false, Some(lane))?;
        let result = match self.review_result(call, &tool, result).await {
            Ok(r) => r,
            Err(halt) => {
                let _ = reply.send(Err(Refusal::Stopped));
                return Err(halt);
            }
        };
        let _ = reply.send(Ok(result.clone()));
        Ok(AgentNext::Tool { tool, args, end: ToolEnd::Ran(result) })
    }

    /// The run ends (stopped, restarted, the agent gone): every running
    /// call is cut short and ends with its result, every waiting one is
    /// abandoned; nothing is left without its end in the trace.
    pub(in crate::engine) async fn end_agent_calls(&mut self, why: &str) -> Result<Vec<AgentNext>, Halt> {
        let mut ends: Vec<AgentNext> = (self.agent.own.ended.drain(..))
            .map(|(tool, args, result)| AgentNext::Tool { tool, args, end: ToolEnd::Ran(result) })
            .collect();
        self.own_tools_end(why)?;
        let waiting: Vec<OpenLane> = {
            let (running, waiting) =
                std::mem::take(&mut self.agent.open).into_iter().partition(|l| l.slot == Slot::Running);
            self.agent.open = running;
            waiting
        };
        for l in waiting {
            self.agent.threads.dropped(l.call);
            self.emit(EventKind::CallAbandoned { call: l.call, lane: l.lane, why: why.to_string() })?;
            ends.push(abandoned(l.work));
        }
        for l in self.agent.open.iter_mut() {
            l.cut = Some(Cut::Ended(why.to_string()));
            if let Some(a) = l.abort.take() {
                a.abort();
            }
        }
        while !self.agent.open.is_empty() {
            let Some(ended) = self.agent.done_rx.recv().await else { break };
            // Its reply is not reviewed: the run is over.
            match self.end_agent_lane(ended).await {
                Ok(next) => ends.push(next),
                Err(Halt::Stopped | Halt::Restarted) => {}
                Err(e) => return Err(e),
            }
        }
        // The next run's agent holds conversations of its own.
        self.agent.threads = Default::default();
        self.agent.mcp_asked.clear();
        Ok(ends)
    }

    /// The user's action on one of the agent's lanes, as on a rewoo
    /// step's: false when no call of the agent is open.
    pub(in crate::engine) fn agent_lane_control(&mut self, lane: u32, action: LaneAction) -> Result<bool, EngineError> {
        if let Some(own) = self.agent.own.by_lane(lane) {
            // The agent runs it: only its result can be failed.
            let LaneAction::Fail { fault } = action else {
                let why = format!("lane {lane}: the agent runs its own tools; only k (fail its result) applies");
                self.reject("lane", why)?;
                return Ok(true);
            };
            own.user_fault = Some(fault);
            self.emit(EventKind::LaneChanged { lane, action })?;
            return Ok(true);
        }
        if self.agent.open.is_empty() {
            return Ok(false);
        }
        let Some(l) = self.agent.open.iter_mut().find(|l| l.lane == lane) else {
            let open: Vec<String> = self.agent.open.iter().map(|l| l.lane.to_string()).collect();
            self.reject("lane", format!("the agent has no open lane {lane} (open: {})", open.join(", ")))?;
            return Ok(true);
        };
        let why = match (action, l.slot) {
            (LaneAction::Hold, Slot::Waiting) => {
                l.slot = Slot::Held;
                None
            }
            (LaneAction::Hold, _) => Some("it is already running or held"),
            (LaneAction::Release, Slot::Held) => {
                l.slot = Slot::Waiting;
                None
            }
            (LaneAction::Release, _) => Some("it is not held"),
            (LaneAction::Step, Slot::Waiting | Slot::Held) => {
                l.slot = Slot::Stepped;
                None
            }
            (LaneAction::Step, _) => Some("it is already running"),
            (LaneAction::Fail { fault }, Slot::Waiting | Slot::Held | Slot::Stepped) => {
                match &l.work {
                    Some(Work::Tool(_)) => l.user_fault = Some(fault),
                    // A model call the user fails never goes out.
                    _ => {
                        l.cut = Some(Cut::User);
                        l.slot = Slot::Stepped;
                    }
                }
                None
            }
            (LaneAction::Fail { .. }, Slot::Running) => {
                l.cut = Some(Cut::User);
                if let Some(a) = l.abort.take() {
                    a.abort();
                }
                None
            }
        };
        match why {
            Some(why) => {
                let name = self.lane_name(lane);
                self.reject("lane", format!("lane {lane} ({name}): {why}"))?;
            }
            None => self.emit(EventKind::LaneChanged { lane, action })?,
        }
        Ok(true)
    }

    fn lane_name(&self, lane: u32) -> String {
        let Some(l) = self.agent.open.iter().find(|l| l.lane == lane) else { return String::new() };
        match (&l.work, &l.running) {
            (Some(Work::Tool(t)), _) => t.tool.clone(),
            (_, Some(Running::Tool { tool, .. })) => tool.clone(),
            (_, Some(Running::Model(go))) => go.model.clone(),
            _ => "model".into(),
        }
    }
}

/// Library tools asked for and not yet called through the MCP endpoint
/// that are kept for the thread of their call.
const MCP_ASKED_KEPT: usize = 1024;

/// What an abandoned call's end tells the strategy.
fn abandoned(work: Option<Work>) -> AgentNext {
    match work {
        Some(Work::Tool(t)) => AgentNext::Tool { tool: t.tool, args: t.args, end: ToolEnd::Abandoned },
        _ => AgentNext::Moved,
    }
}

/// The error a cut-short call ends with.
fn cut_error(cut: Option<&Cut>, what: &str) -> String {
    match cut {
        Some(Cut::User) | None => format!("{what} was failed by the user"),
        Some(Cut::Ended(why)) => format!("{what} was cut short: {why}"),
    }
}

/// The HTTP status in a model call's error, as `ModelError::Http` writes
/// it ("model endpoint answered HTTP 400: …"), so the agent can be told
/// the upstream refused its request rather than that it failed.
pub(in crate::engine) fn upstream_status(error: &str) -> Option<u16> {
    let rest = error.split("model endpoint answered HTTP ").nth(1)?;
    rest.get(..3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_s_status_is_read_from_the_model_s_error() {
        let http = ModelError::Http { status: 400, body: "context length exceeded".into() };
        let at = ModelError::AtEndpoint { url: "http://x/v1".into(), attempts: 1, error: Box::new(http) };
        assert_eq!(upstream_status(&at.to_string()), Some(400));
        assert_eq!(upstream_status(&ModelError::Timeout { ms: 5 }.to_string()), None);
    }
}
