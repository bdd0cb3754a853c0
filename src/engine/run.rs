//! One run: a task taken through the `react` or `toolnet` loop, then (for
//! `toolnet`) evaluated and learnt from.

use std::collections::BTreeMap;

use serde_json::Value;

use super::event::{EventKind, Offered, RefuseReason, RunOutcome, StrategyKind, ToolOutcome};
use super::{Engine, EngineError, btp};
use crate::task::{Task, answer_matches};
use crate::graph::{END, START};
use crate::model::{ChatRequest, ChatResponse, Role, Usage};
use crate::strategy::actor::{
    self, ActorAction, ActorView, CandidateView, EvalView, HistoryEntry, JudgeView, Observation, finish_candidate,
};
use crate::tool::nothing_found::is_nothing_found;

/// Why a call did not happen.
pub(super) enum Halt {
    Stopped,
    Restarted,
    OutOfBudget,
    ModelFailed(String),
    /// rewoo: the planner's reply could not be read as a plan, twice.
    BadPlan(String),
    Engine(EngineError),
}

impl From<EngineError> for Halt {
    fn from(e: EngineError) -> Self {
        Halt::Engine(e)
    }
}

struct ComputedPlan {
    run: btp::RunBudget,
    rows: Vec<crate::engine::event::PlanRow>,
    fixed_cost: f64,
    planned_cost: f64,
    planned_calls: u32,
}

#[derive(Default)]
pub(super) struct RunTally {
    pub usage: Usage,
    pub cost: f64,
    pub tool_calls: u32,
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
        let found = match self.strategy {
            StrategyKind::Rewoo => self.rewoo(task, &mut tally).await,
            StrategyKind::React | StrategyKind::Toolnet => self.act(task, &mut history, &mut tally).await,
        };
        let (outcome, answer) = match found {
            Ok(found) => match found {
                Some(a) => (RunOutcome::Answered, Some(a)),
                None => (RunOutcome::MaxSteps, None),
            },
            Err(Halt::Stopped) => (RunOutcome::Stopped, None),
            Err(Halt::Restarted) => (RunOutcome::Restarted, None),
            Err(Halt::OutOfBudget) => (RunOutcome::OutOfBudget, None),
            Err(Halt::ModelFailed(error)) => (RunOutcome::Failed { error }, None),
            Err(Halt::BadPlan(error)) => (RunOutcome::BadPlan { error }, None),
            Err(Halt::Engine(e)) => return Err(e),
        };
        if self.strategy == StrategyKind::Toolnet && !history.is_empty() && !self.stop && !self.restart {
            match self.evaluate(task, &history, answer.as_deref(), &mut tally).await {
                Ok(())
                | Err(Halt::Stopped | Halt::Restarted | Halt::OutOfBudget | Halt::ModelFailed(_) | Halt::BadPlan(_)) => {
                }
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
        let mut budget = self.make_plan(task)?;
        let mut usages = Vec::new();
        let mut told_empty = false;
        let mut looping: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let result = loop {
            if self.step >= self.params.max_steps {
                break Ok(None);
            }
            self.step += 1;
            // Changes made since the last step shape this step's candidates.
            self.apply_pending()?;
            let mut candidates = self.candidates(&node, &retrieved);
            // A tool the model kept calling with arguments it already had the
            // answer to is taken off the list: with constrained decoding the
            // model cannot name it again, and the loop is broken.
            candidates.retain(|(n, _)| !looping.contains(n));
            if let Some(b) = budget.as_ref() {
                // Algorithm 2: only tools the plan still allows are offered.
                candidates.retain(|(n, _)| n == actor::FINISH || b.allowed(n));
                if candidates.len() == 1 && b.any_left() {
                    // Nothing allowed is reachable from here: offer what is left of the plan.
                    let left: Vec<(String, Option<f64>)> =
                        b.allowance.keys().filter(|t| b.allowed(t)).map(|t| (t.clone(), None)).collect();
                    candidates.splice(0..0, left);
                }
                if !b.any_left() && !told_empty {
                    notes.push(
                        "No tool is left within the plan and the budget: answer the task with what you have.".into(),
                    );
                    told_empty = true;
                }
                let c_step = btp::step_cost(&self.models.get(Role::Actor).price, 0);
                if b.spent + c_step > b.budget + 1e-9 {
                    break Err(Halt::OutOfBudget);
                }
            }
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
            let mut req = ChatRequest::new(Role::Actor, actor::render_actor(&view));
            req.response_schema = Some(actor::actor_schema(&names));
            req.temperature = Some(0.0);
            let reply = self.model_call(req, tally).await?;
            let action = match actor::parse_actor_reply(&reply) {
                Ok(a) => a,
                Err(e) => {
                    self.refuse_malformed(&e)?;
                    notes.push(format!("Your last reply could not be read ({}). Reply with one JSON object.", e.why));
                    continue;
                }
            };
            match action {
                ActorAction::Finish { answer } => break Ok(Some(answer)),
                ActorAction::Call { tool, arguments } => {
                    if let Some(b) = budget.as_ref() {
                        let (reason, detail) = match b.verdict(&tool) {
                            btp::Verdict::Allowed => (None, String::new()),
                            btp::Verdict::Forbidden(d) => (Some(RefuseReason::Forbidden), d),
                            btp::Verdict::Blacklisted(d) => (Some(RefuseReason::Blacklisted), d),
                        };
                        if let Some(reason) = reason.filter(|_| self.library.get(&tool).is_some()) {
                            self.emit(EventKind::Refused { tool: tool.clone(), reason, detail: detail.clone() })?;
                            history.push(HistoryEntry { tool, arguments, observation: Observation::Refused(detail) });
                            continue;
                        }
                    }
                    if !names.iter().any(|n| n == &tool && n != actor::FINISH) {
                        let detail = format!("'{tool}' is not among the candidates ({})", names.join(", "));
                        self.emit(EventKind::Refused {
                            tool: tool.clone(),
                            reason: RefuseReason::NotOffered,
                            detail: detail.clone(),
                        })?;
                        history.push(HistoryEntry { tool, arguments, observation: Observation::Refused(detail) });
                        continue;
                    }
                    // A small model may call the same tool with the same arguments
                    // again and again: the answer is already in its history.
                    let answered = history.iter().position(|h| {
                        h.tool == tool
                            && h.arguments == arguments
                            && matches!(&h.observation, Observation::Result(v) if !is_nothing_found(v))
                    });
                    if let Some(at) = answered {
                        let detail = format!(
                            "'{tool}' already answered these arguments at step {} (see the history); if that answers \
                             the task, choose finish with the answer",
                            at + 1
                        );
                        self.emit(EventKind::Refused {
                            tool: tool.clone(),
                            reason: RefuseReason::Repeated,
                            detail: detail.clone(),
                        })?;
                        notes.push(detail.clone());
                        looping.insert(tool.clone());
                        history.push(HistoryEntry { tool, arguments, observation: Observation::Refused(detail) });
                        continue;
                    }
                    let observation = self.tool_call(&tool, &arguments, tally).await?;
                    let raw: Result<Value, String> = match &observation {
                        Observation::Result(v) => Ok(v.clone()),
                        Observation::Error(e) | Observation::Refused(e) => Err(e.clone()),
                    };
                    let helpful = self.judge(task, &tool, &arguments, &observation, tally).await?;
                    usages.push(btp::usage(&task.query, &tool, &arguments, &raw, helpful));
                    if let Some(b) = budget.as_mut() {
                        self.spend(b, &tool, tally, &mut notes)?;
                        if !helpful {
                            b.blacklisted.insert(tool.clone());
                            let reason = "the judge found its result unhelpful for this task".to_string();
                            self.emit(EventKind::Blacklisted { tool: tool.clone(), reason })?;
                            notes.push(format!("'{tool}' is blacklisted for this task: its result was not helpful."));
                        }
                    }
                    // ToolNet moves along an edge only when the call helped: after a
                    // failure the agent still stands where it was, so a sibling
                    // (the backup of a broken tool) stays within reach.
                    if matches!(&observation, Observation::Result(v) if !is_nothing_found(v)) {
                        node = tool.clone();
                    }
                    history.push(HistoryEntry { tool, arguments, observation });
                }
            }
        };
        if let Some(b) = self.btp.as_mut() {
            b.experience.append(&usages).map_err(|e| Halt::Engine(EngineError::Setup(format!("experience: {e}"))))?;
        }
        result
    }

    /// Algorithm 1 before the first call, when BTP is on and a budget is set.
    pub(super) fn make_plan(&mut self, task: &Task) -> Result<Option<btp::RunBudget>, Halt> {
        let (Some(b), Some(total)) = (self.btp.as_ref(), self.params.budget) else {
            return Ok(None);
        };
        if !b.enforce {
            return Ok(None);
        }
        let lambda = b.lambda;
        let p = self.compute_plan(&task.query, total);
        self.emit(EventKind::PlanMade {
            budget: total,
            fixed_cost: p.fixed_cost,
            remaining: total - p.fixed_cost,
            lambda,
            tau: self.params.tau,
            rows: p.rows,
            planned_cost: p.planned_cost,
            planned_calls: p.planned_calls,
        })?;
        Ok(Some(p.run))
    }

    /// The plan for a query under the budget `total`, without running anything.
    fn compute_plan(&self, query: &str, total: f64) -> ComputedPlan {
        let b = self.btp.as_ref().expect("compute_plan is only called with BTP set up");
        let candidates = self.retrieve_k(query, b.candidates);
        // c_s: the first prompt, and the final summary, at the actor's price.
        let views: Vec<CandidateView> = candidates
            .iter()
            .map(|n| self.candidate_view(&Offered { name: n.clone(), weight: None, shown: None }))
            .chain(std::iter::once(finish_candidate(None)))
            .collect();
        let first = actor::render_actor(&ActorView {
            task: query.to_string(),
            history: Vec::new(),
            candidates: views,
            notes: Vec::new(),
        });
        let first_tokens = crate::model::tokens::count_messages(&first);
        let (c_step, fixed_cost, reserve) = match self.strategy {
            // A rewoo tool call costs no model step of its own: the fixed
            // cost is one planner call and one solver call.
            StrategyKind::Rewoo => {
                let solver = btp::step_cost(&self.models.get(Role::Solver).price, first_tokens);
                (0.0, btp::step_cost(&self.models.get(Role::Planner).price, first_tokens) + solver, solver)
            }
            StrategyKind::React | StrategyKind::Toolnet => {
                let c_step = btp::step_cost(&self.models.get(Role::Actor).price, first_tokens);
                (c_step, 2.0 * c_step, 0.0)
            }
        };
        let costs: Vec<(String, f64)> = candidates
            .iter()
            .map(|n| {
                let time = self.mean_latency_s(n) * b.time_rate;
                (n.clone(), self.library.get(n).map(|t| t.cost).unwrap_or(0.0) + c_step + time)
            })
            .collect();
        let (mut run, rows, planned_cost, planned_calls) =
            btp::plan_run(b, query, &costs, total, fixed_cost, self.params.tau);
        run.reserve = reserve;
        ComputedPlan { run, rows, fixed_cost, planned_cost, planned_calls }
    }

    /// The tool's mean latency over its recent calls, in seconds (0 unseen).
    fn mean_latency_s(&self, tool: &str) -> f64 {
        let (n, sum) = self
            .state
            .recent_calls
            .iter()
            .filter(|c| c.tool == tool)
            .fold((0u64, 0u64), |(n, s), c| (n + 1, s + c.latency_ms));
        if n == 0 { 0.0 } else { sum as f64 / n as f64 / 1000.0 }
    }

    /// `switchyard plan`: the plan a run of `query` would start with.
    pub fn plan_only(&mut self, query: &str) -> Result<crate::session::PlanReport, EngineError> {
        let total = self.params.budget.ok_or_else(|| EngineError::Setup("no budget set".into()))?;
        let b = self.btp.as_ref().ok_or_else(|| EngineError::Setup("BTP is not set up".into()))?;
        let (lambda, experience) = (b.lambda, b.experience.records().len());
        let p = self.compute_plan(query, total);
        Ok(crate::session::PlanReport {
            task: query.to_string(),
            budget: total,
            fixed_cost: p.fixed_cost,
            remaining: total - p.fixed_cost,
            lambda,
            tau: self.params.tau,
            experience,
            rows: p.rows,
            planned_cost: p.planned_cost,
            planned_calls: p.planned_calls,
        })
    }

    /// Counts a call against the budget (Algorithm 2: one allowance spent).
    pub(super) fn spend(
        &mut self,
        b: &mut btp::RunBudget,
        tool: &str,
        tally: &RunTally,
        notes: &mut Vec<String>,
    ) -> Result<(), EngineError> {
        let allowance = b.allowance.get_mut(tool).map(|a| {
            *a = a.saturating_sub(1);
            *a
        });
        let spent = tally.cost;
        let amount = spent - b.spent;
        b.spent = spent;
        let left = allowance.unwrap_or(0);
        self.emit(EventKind::BudgetSpent {
            tool: tool.to_string(),
            amount,
            spent,
            left: b.budget - spent,
            allowance: left,
        })?;
        if left == 0 {
            notes.push(format!("'{tool}' is now forbidden: the plan allows it no more calls."));
        }
        Ok(())
    }

    /// Was the tool's result helpful? The rule by default, the `judge` model if asked.
    async fn judge(
        &mut self,
        task: &Task,
        tool: &str,
        arguments: &Value,
        observation: &Observation,
        tally: &mut RunTally,
    ) -> Result<bool, Halt> {
        let raw: Result<Value, String> = match observation {
            Observation::Result(v) => Ok(v.clone()),
            Observation::Error(e) | Observation::Refused(e) => Err(e.clone()),
        };
        let by_rule = btp::rule(&raw);
        if !self.btp.as_ref().is_some_and(|b| b.model_judge) {
            return Ok(by_rule);
        }
        let view = JudgeView {
            task: task.query.clone(),
            tool: tool.to_string(),
            arguments: arguments.clone(),
            observation: observation.clone(),
        };
        let mut req = ChatRequest::new(Role::Judge, actor::render_judge(&view));
        req.response_schema = Some(actor::judge_schema());
        req.temperature = Some(0.0);
        let reply = self.model_call(req, tally).await?;
        // A verdict that cannot be read falls back to the rule.
        Ok(actor::parse_judge_reply(&reply).unwrap_or(by_rule))
    }

    /// A reply that could not be read is recorded as a refusal of no tool.
    pub(super) fn refuse_malformed(&mut self, e: &actor::ReplyError) -> Result<(), EngineError> {
        self.emit(EventKind::Refused { tool: String::new(), reason: RefuseReason::Malformed, detail: e.to_string() })
    }

    /// The top-K tools for a query. When fewer than K match at all, the rest
    /// of the library fills the list in its own order, so K is always what
    /// the model is offered (and K = all lists the whole library).
    pub(super) fn retrieve(&self, query: &str) -> Vec<String> {
        self.retrieve_k(query, self.params.top_k)
    }

    fn retrieve_k(&self, query: &str, k: usize) -> Vec<String> {
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
                .map(|(to, w)| if to == END { (actor::FINISH.to_string(), Some(w)) } else { (to, Some(w)) })
                .collect(),
            (StrategyKind::Toolnet, Some(g)) => {
                let mut v: Vec<(String, Option<f64>)> =
                    retrieved.iter().map(|n| (n.clone(), g.weight(START, n))).collect();
                v.sort_by(|a, b| b.1.unwrap_or(0.0).total_cmp(&a.1.unwrap_or(0.0)).then_with(|| a.0.cmp(&b.0)));
                v
            }
            _ => retrieved.iter().map(|n| (n.clone(), None)).collect(),
        };
        if !out.iter().any(|(n, _)| n == actor::FINISH) {
            out.push((actor::FINISH.to_string(), None));
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

    pub(super) async fn model_call(&mut self, req: ChatRequest, tally: &mut RunTally) -> Result<ChatResponse, Halt> {
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

    /// A tool's own timeout (command and HTTP tools carry one), else the engine's.
    pub(super) fn call_timeout(&self, spec: Option<&crate::tool::ToolSpec>) -> std::time::Duration {
        match spec.map(|s| &s.executor) {
            Some(
                crate::tool::ExecutorSpec::Command { timeout_ms, .. }
                | crate::tool::ExecutorSpec::Http { timeout_ms, .. },
            ) => std::time::Duration::from_millis(*timeout_ms),
            Some(crate::tool::ExecutorSpec::Builtin { .. }) | None => self.tool_timeout,
        }
    }

    /// Each call's randomness comes from the seed and the call's place in
    /// the session, never from timing.
    pub(super) fn call_seed(&self, call: u64) -> u64 {
        self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ call
    }

    /// A finished tool call's cost: the tool's price and (c_i's third part)
    /// its time at the configured rate.
    pub(super) fn charge_tool(&self, tally: &mut RunTally, cost: f64, latency_ms: u64) {
        tally.tool_calls += 1;
        tally.cost += cost;
        if let Some(rate) = self.btp.as_ref().map(|b| b.time_rate).filter(|r| *r > 0.0) {
            tally.cost += latency_ms as f64 / 1000.0 * rate;
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
        self.emit(EventKind::ToolCall { call, tool: tool.to_string(), args: args.clone(), lane: None })?;
        let (timeout, call_seed) = (self.call_timeout(Some(&spec)), self.call_seed(call));
        let t0 = self.clock.now_ms();
        let result = self.executor.call(&spec, args, fault, call_seed, timeout).await;
        let latency_ms = self.clock.now_ms().saturating_sub(t0);
        self.charge_tool(tally, spec.cost, latency_ms);
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
            lane: None,
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
        let mut req = ChatRequest::new(Role::Evaluator, actor::render_eval(&view));
        let mut used: Vec<String> = history.iter().map(|h| h.tool.clone()).collect();
        used.sort();
        used.dedup();
        req.response_schema = Some(actor::eval_schema(&used));
        req.temperature = Some(0.0);
        let reply = self.model_call(req, tally).await?;
        let scores = match actor::parse_eval_reply(&reply) {
            Ok(s) => s,
            Err(e) => {
                self.refuse_malformed(&e)?;
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
