//! One run: a task taken through the `react` or `toolnet` loop, then (for
//! `toolnet`) evaluated and learnt from.

use std::collections::BTreeMap;

use serde_json::Value;

use super::event::{EventKind, Offered, RefuseReason, RunOutcome, StrategyKind, ToolOutcome};
use super::{Engine, EngineError};
use crate::eval::tasks::{Task, answer_matches};
use crate::graph::{END, START};
use crate::model::{ChatRequest, ChatResponse, Role, Usage};
use crate::strategy::protocol::{
    self, ActorAction, ActorView, CandidateView, EvalView, HistoryEntry, Observation, finish_candidate,
};
use crate::tool::exec::is_nothing_found;

/// Why a call did not happen.
enum Halt {
    Stopped,
    Restarted,
    ModelFailed(String),
    Engine(EngineError),
}

impl From<EngineError> for Halt {
    fn from(e: EngineError) -> Self {
        Halt::Engine(e)
    }
}

#[derive(Default)]
struct RunTally {
    usage: Usage,
    cost: f64,
    tool_calls: u32,
}

impl Engine {
    async fn gate_or_halt(&mut self) -> Result<(), Halt> {
        match self.pass_gate().await? {
            super::Pass::Go => Ok(()),
            super::Pass::Stop => Err(Halt::Stopped),
            super::Pass::Restart => Err(Halt::Restarted),
        }
    }

    pub(super) async fn run_task(&mut self, task: &Task, index: u32, total: u32) -> Result<(), EngineError> {
        self.run_no += 1;
        self.step = 0;
        self.emit(EventKind::RunStarted {
            task_id: task.id.clone(),
            task: task.query.clone(),
            gold: task.answer.clone(),
            index,
            total,
        })?;
        let mut tally = RunTally::default();
        let mut history: Vec<HistoryEntry> = Vec::new();
        let (outcome, answer) = match self.act(task, &mut history, &mut tally).await {
            Ok(found) => match found {
                Some(a) => (RunOutcome::Answered, Some(a)),
                None => (RunOutcome::MaxSteps, None),
            },
            Err(Halt::Stopped) => (RunOutcome::Stopped, None),
            Err(Halt::Restarted) => (RunOutcome::Restarted, None),
            Err(Halt::ModelFailed(error)) => (RunOutcome::Failed { error }, None),
            Err(Halt::Engine(e)) => return Err(e),
        };
        if self.strategy == StrategyKind::Toolnet && !history.is_empty() && !self.stop && !self.restart {
            match self.evaluate(task, &history, answer.as_deref(), &mut tally).await {
                Ok(()) | Err(Halt::Stopped) | Err(Halt::Restarted) | Err(Halt::ModelFailed(_)) => {}
                Err(Halt::Engine(e)) => return Err(e),
            }
        }
        // A run the user cut short neither succeeded nor failed.
        let cut_short = matches!(outcome, RunOutcome::Stopped | RunOutcome::Restarted);
        let success = task
            .answer
            .as_ref()
            .filter(|_| !cut_short)
            .map(|gold| answer.as_deref().is_some_and(|a| answer_matches(a, gold)));
        let steps = self.step;
        self.emit(EventKind::RunFinished {
            outcome,
            answer,
            success,
            cost: tally.cost,
            usage: tally.usage,
            steps,
            tool_calls: tally.tool_calls,
        })?;
        Ok(())
    }

    /// The decision loop. Returns the answer, or None at the step limit.
    async fn act(
        &mut self,
        task: &Task,
        history: &mut Vec<HistoryEntry>,
        tally: &mut RunTally,
    ) -> Result<Option<String>, Halt> {
        let retrieved = self.retrieve(&task.query);
        let mut node = START.to_string();
        let mut notes: Vec<String> = Vec::new();
        while self.step < self.params.max_steps {
            self.step += 1;
            // Changes made since the last step shape this step's candidates.
            self.apply_pending()?;
            let candidates = self.candidates(&node, &retrieved);
            let offered: Vec<Offered> = candidates
                .iter()
                .map(|(name, w)| Offered {
                    name: name.clone(),
                    weight: *w,
                    shown: w.and_then(|w| self.params.weight_format.show(w)),
                })
                .collect();
            self.emit(EventKind::Candidates { from: node.clone(), offered: offered.clone() })?;
            let view = ActorView {
                task: task.query.clone(),
                history: history.clone(),
                candidates: offered.iter().map(|o| self.candidate_view(o)).collect(),
                notes: std::mem::take(&mut notes),
            };
            let names: Vec<String> = offered.iter().map(|o| o.name.clone()).collect();
            let mut req = ChatRequest::new(Role::Actor, protocol::render_actor(&view));
            req.response_schema = Some(protocol::actor_schema(&names));
            req.temperature = Some(0.0);
            let reply = self.model_call(req, tally).await?;
            let action = match protocol::parse_actor_reply(&reply) {
                Ok(a) => a,
                Err(e) => {
                    self.emit(EventKind::Refused {
                        tool: String::new(),
                        reason: RefuseReason::Malformed,
                        detail: e.to_string(),
                    })?;
                    notes.push(format!("Your last reply could not be read ({}). Reply with one JSON object.", e.why));
                    continue;
                }
            };
            match action {
                ActorAction::Finish { answer } => return Ok(Some(answer)),
                ActorAction::Call { tool, arguments } => {
                    if !names.iter().any(|n| n == &tool && n != protocol::FINISH) {
                        let detail = format!("'{tool}' is not among the candidates ({})", names.join(", "));
                        self.emit(EventKind::Refused {
                            tool: tool.clone(),
                            reason: RefuseReason::NotOffered,
                            detail: detail.clone(),
                        })?;
                        history.push(HistoryEntry { tool, arguments, observation: Observation::Refused(detail) });
                        continue;
                    }
                    let observation = self.tool_call(&tool, &arguments, tally).await?;
                    // ToolNet moves along an edge only when the call helped: after a
                    // failure the agent still stands where it was, so a sibling
                    // (the backup of a broken tool) stays within reach.
                    if matches!(&observation, Observation::Result(v) if !is_nothing_found(v)) {
                        node = tool.clone();
                    }
                    history.push(HistoryEntry { tool, arguments, observation });
                }
            }
        }
        Ok(None)
    }

    /// The top-K tools for a query. When fewer than K match at all, the rest
    /// of the library fills the list in its own order, so K is always what
    /// the model is offered (and K = all lists the whole library).
    fn retrieve(&self, query: &str) -> Vec<String> {
        let k = self.params.top_k;
        let mut names: Vec<String> = self.index.search(query, k).into_iter().map(|h| h.name).collect();
        for t in self.library.names() {
            if names.len() >= k {
                break;
            }
            if !names.iter().any(|n| n == t) {
                names.push(t.to_string());
            }
        }
        names
    }

    /// The tools offered at `node`, with their weights (ToolNet) or none (ReAct).
    fn candidates(&self, node: &str, retrieved: &[String]) -> Vec<(String, Option<f64>)> {
        let mut out: Vec<(String, Option<f64>)> = match (self.strategy, self.graph.as_ref()) {
            (StrategyKind::Toolnet, Some(g)) if node != START => g
                .out_edges(node)
                .into_iter()
                .map(|(to, w)| if to == END { (protocol::FINISH.to_string(), Some(w)) } else { (to, Some(w)) })
                .collect(),
            (StrategyKind::Toolnet, Some(g)) => {
                let mut v: Vec<(String, Option<f64>)> =
                    retrieved.iter().map(|n| (n.clone(), g.weight(START, n))).collect();
                v.sort_by(|a, b| b.1.unwrap_or(0.0).total_cmp(&a.1.unwrap_or(0.0)).then_with(|| a.0.cmp(&b.0)));
                v
            }
            _ => retrieved.iter().map(|n| (n.clone(), None)).collect(),
        };
        if !out.iter().any(|(n, _)| n == protocol::FINISH) {
            out.push((protocol::FINISH.to_string(), None));
        }
        out
    }

    fn candidate_view(&self, o: &Offered) -> CandidateView {
        match self.library.get(&o.name) {
            Some(t) => CandidateView {
                name: t.name.clone(),
                weight: o.shown.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            },
            None => finish_candidate(o.shown.clone()),
        }
    }

    async fn model_call(&mut self, req: ChatRequest, tally: &mut RunTally) -> Result<ChatResponse, Halt> {
        self.gate_or_halt().await?;
        let role = req.role;
        let slot = self.models.get(role).clone();
        let info = slot.model.info();
        self.next_call += 1;
        let call = self.next_call;
        self.emit(EventKind::ModelCall {
            call,
            role,
            model: info.name.clone(),
            simulated: info.simulated,
            messages: req.messages.clone(),
        })?;
        let t0 = self.clock.now_ms();
        let result = slot.model.chat(&req).await;
        let latency_ms = self.clock.now_ms().saturating_sub(t0);
        match result {
            Ok(resp) => {
                let cost = slot.price.cost(resp.usage);
                tally.usage.prompt_tokens += resp.usage.prompt_tokens;
                tally.usage.completion_tokens += resp.usage.completion_tokens;
                tally.cost += cost;
                self.emit(EventKind::ModelReply {
                    call,
                    role,
                    model: info.name,
                    text: resp.text.clone(),
                    tool_calls: resp.tool_calls.clone(),
                    usage: resp.usage,
                    cost,
                    latency_ms,
                })?;
                Ok(resp)
            }
            Err(e) => {
                let error = e.to_string();
                self.emit(EventKind::ModelFailed { call, role, model: info.name, error: error.clone(), latency_ms })?;
                Err(Halt::ModelFailed(error))
            }
        }
    }

    async fn tool_call(&mut self, tool: &str, args: &Value, tally: &mut RunTally) -> Result<Observation, Halt> {
        self.gate_or_halt().await?;
        let Some(spec) = self.library.get(tool).cloned() else {
            return Ok(Observation::Error(format!("unknown tool '{tool}'")));
        };
        self.next_call += 1;
        let call = self.next_call;
        let fault = self.faults.draw(tool, &mut self.rng);
        self.emit(EventKind::ToolCall { call, tool: tool.to_string(), args: args.clone() })?;
        let timeout = match &spec.executor {
            crate::tool::ExecutorSpec::Command { timeout_ms, .. }
            | crate::tool::ExecutorSpec::Http { timeout_ms, .. } => std::time::Duration::from_millis(*timeout_ms),
            crate::tool::ExecutorSpec::Builtin { .. } => self.tool_timeout,
        };
        // Each call's randomness comes from the seed and the call's place in
        // the session, never from timing.
        let call_seed = self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ call;
        let t0 = self.clock.now_ms();
        let result = self.executor.call(&spec, args, fault, call_seed, timeout).await;
        let latency_ms = self.clock.now_ms().saturating_sub(t0);
        tally.tool_calls += 1;
        tally.cost += spec.cost;
        let (outcome, observation) = match result {
            Ok(value) => (ToolOutcome::Ok { value: value.clone() }, Observation::Result(value)),
            Err(error) => {
                let text = error.message.clone();
                (ToolOutcome::Err { error }, Observation::Error(text))
            }
        };
        self.emit(EventKind::ToolResult {
            call,
            tool: tool.to_string(),
            outcome,
            latency_ms,
            cost: spec.cost,
            fault,
            filtered: false,
        })?;
        Ok(observation)
    }

    /// ToolNet's dynamic construction: the evaluator scores every tool used,
    /// and the graph learns from the scores.
    async fn evaluate(
        &mut self,
        task: &Task,
        history: &[HistoryEntry],
        answer: Option<&str>,
        tally: &mut RunTally,
    ) -> Result<(), Halt> {
        let view = EvalView { task: task.query.clone(), steps: history.to_vec(), answer: answer.map(str::to_string) };
        let mut req = ChatRequest::new(Role::Evaluator, protocol::render_eval(&view));
        req.temperature = Some(0.0);
        let reply = self.model_call(req, tally).await?;
        let scores = match protocol::parse_eval_reply(&reply) {
            Ok(s) => s,
            Err(e) => {
                self.emit(EventKind::Refused {
                    tool: String::new(),
                    reason: RefuseReason::Malformed,
                    detail: e.to_string(),
                })?;
                return Ok(());
            }
        };
        // Only tools that were really called this run can be scored.
        let used: BTreeMap<String, i32> = scores
            .into_iter()
            .filter(|(t, _)| history.iter().any(|h| &h.tool == t) && self.library.get(t).is_some())
            .collect();
        self.emit(EventKind::Evaluated { scores: used.clone() })?;
        let (alpha, beta) = (self.params.alpha, self.params.beta);
        if let Some(g) = self.graph.as_mut() {
            let update = g.apply_scores(&used, alpha, beta);
            self.emit(EventKind::GraphUpdated { update })?;
        }
        Ok(())
    }
}
