//! The `rewoo` strategy (DESIGN §3.5): the classifier labels the library
//! once, the planner writes the whole plan, the worker runs each step's
//! calls concurrently as lanes (each behind its own gate), and the solver
//! answers from the evidence.
//!
//! The lanes are futures polled together in the engine's task, next to the
//! control channel: a user's pause, step or fault reaches one lane while its
//! siblings run on, and every event is still emitted in order by the engine.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::{AbortHandle, Abortable};
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use super::control::LaneAction;
use super::event::{EventKind, LabelSource, LanePlan, RefuseReason, ToolLabel, ToolOutcome};
use super::run::{Halt, RunTally};
use super::{Control, Engine, EngineError, Gate, btp};
use crate::task::Task;
use crate::model::{ChatRequest, Role};
use crate::strategy::actor::compact;
use crate::strategy::rewoo::args::{self, Evidence};
use crate::strategy::rewoo::parse::{Plan, PlanError, parse_plan_reply};
use crate::strategy::rewoo::prompt::{
    self as proto, ClassifierView, PlannerTool, PlannerView, SolverCall, SolverStep, SolverView,
};
use crate::strategy::rewoo::{cache, filter};
use crate::tool::fault::FaultMode;
use crate::tool::{ToolError, ToolErrorKind, ToolResult, ToolSpec};

/// What a lane's future hands back: its lane, result and clock times.
type LaneDone = (usize, ToolResult, u64);
type LaneFuture = Pin<Box<dyn std::future::Future<Output = LaneDone> + Send>>;

/// Where a lane of the running step is, as the worker tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Waiting,
    Held,
    Running,
    Done,
}

/// One lane ready to run (or already settled before it could).
struct Lane {
    plan: LanePlan,
    spec: Option<Arc<ToolSpec>>,
    /// Settled before running: bad input, unknown tool, refused by the budget.
    settled: Option<Settled>,
    slot: Slot,
    /// A fault the user asked for on this lane.
    user_fault: Option<FaultMode>,
    abort: Option<AbortHandle>,
    result: Option<ToolResult>,
}

enum Settled {
    Failed(ToolError),
    Refused(RefuseReason, String),
}

impl Engine {
    /// One rewoo run: classify (once), plan, work, solve. Returns the answer.
    pub(super) async fn rewoo(&mut self, task: &Task, tally: &mut RunTally) -> Result<Option<String>, Halt> {
        if self.labels.is_empty() {
            self.classify(tally).await?;
        }
        let mut budget = self.make_plan(task)?;
        let offered = self.planner_tools(task, budget.as_ref());
        // Nothing to plan with (the budget allows no tool): the solver
        // answers from the task alone, as an actor would finish.
        let plan = if offered.is_empty() {
            Plan { steps: Vec::new() }
        } else {
            self.write_plan(task, &offered, budget.as_ref(), tally).await?
        };
        let mut usages = Vec::new();
        let mut evidence: Evidence = BTreeMap::new();
        let mut solved: Vec<SolverStep> = Vec::new();
        let result = async {
            for step in plan.steps.iter().take(self.params.max_steps as usize) {
                self.step += 1;
                self.apply_pending()?;
                let lanes = self.prepare_lanes(step, &evidence, budget.as_ref(), tally.cost);
                self.emit(EventKind::StepStarted {
                    evidence: step.evidence,
                    thought: step.thought.clone(),
                    lanes: lanes.iter().map(|l| l.plan.clone()).collect(),
                })?;
                let lanes = self.run_lanes(lanes, budget.as_mut(), tally).await?;
                let mut results = Vec::with_capacity(lanes.len());
                let mut saved = 0;
                let mut calls = Vec::with_capacity(lanes.len());
                for l in &lanes {
                    let shown = match &l.result {
                        Some(r) if !filter::is_filtered(r) => r.as_ref().ok().cloned(),
                        Some(r) => {
                            saved += filter::saved_tokens(r);
                            None
                        }
                        None => None,
                    };
                    if let Some(r) = &l.result {
                        let raw: Result<Value, String> = r.clone().map_err(|e| e.to_string());
                        let helpful = btp::rule(&raw);
                        usages.push(btp::usage(&task.query, &l.plan.tool, &l.plan.args, &raw, helpful));
                    }
                    calls.push(SolverCall {
                        tool: l.plan.tool.clone(),
                        args: compact(&l.plan.args),
                        result: shown.as_ref().map(compact),
                    });
                    results.push(shown);
                }
                self.emit(EventKind::StepFinished {
                    evidence: step.evidence,
                    results: results.clone(),
                    tokens_saved: saved,
                })?;
                evidence.insert(step.evidence, results);
                solved.push(SolverStep { evidence: step.evidence, thought: step.thought.clone(), calls });
            }
            // The solver is a model call like any other: the budget must pay for it.
            if let Some(b) = budget.as_ref()
                && tally.cost + b.reserve > b.budget + 1e-9
            {
                return Err(Halt::OutOfBudget);
            }
            self.solve(task, solved, tally).await
        }
        .await;
        if let Some(b) = self.btp.as_mut() {
            b.experience.append(&usages).map_err(|e| Halt::Engine(EngineError::Setup(format!("experience: {e}"))))?;
        }
        result
    }

    /// Labels every tool once per session: the manifest's category wins,
    /// then the cache for this library and model, then the classifier.
    async fn classify(&mut self, tally: &mut RunTally) -> Result<(), Halt> {
        let categories: Vec<String> = self.rewoo.categories.iter().map(|c| c.name.clone()).collect();
        let mut labels: BTreeMap<String, (String, LabelSource)> = BTreeMap::new();
        let mut open: Vec<(String, String)> = Vec::new();
        for t in self.library.tools() {
            match &t.category {
                Some(c) => {
                    labels.insert(t.name.clone(), (c.clone(), LabelSource::Manifest));
                }
                None => open.push((t.name.clone(), t.description.clone())),
            }
        }
        let mut model = None;
        if !open.is_empty() {
            let name = self.models.get(Role::Classifier).model.info().name;
            model = Some(name.clone());
            let key = cache::key(&open, &categories, &name);
            self.label_key = Some((key.clone(), name.clone()));
            let cached = match self.rewoo.cache.as_deref() {
                Some(path) => cache::load(path, &key).map_err(|e| Halt::Engine(EngineError::Setup(e.to_string())))?,
                None => None,
            };
            let (given, source) = match cached.filter(|c| open.iter().all(|(t, _)| c.contains_key(t))) {
                Some(c) => (c, LabelSource::Cache),
                None => (self.ask_classifier(&open, tally).await?, LabelSource::Model),
            };
            let mut kept = BTreeMap::new();
            for (tool, _) in &open {
                // A cached label may be a category the user added.
                let found = given.get(tool).and_then(|c| {
                    canonical(c, &categories)
                        .or_else(|| (source == LabelSource::Cache && !c.trim().is_empty()).then(|| c.trim().into()))
                });
                match found {
                    Some(c) => {
                        kept.insert(tool.clone(), c.clone());
                        labels.insert(tool.clone(), (c, source));
                    }
                    None => {
                        labels.insert(tool.clone(), (categories[0].clone(), LabelSource::Default));
                    }
                }
            }
            if source == LabelSource::Model
                && kept.len() == open.len()
                && let Some(path) = self.rewoo.cache.as_deref()
            {
                cache::store(path, &key, &name, &kept).map_err(|e| Halt::Engine(EngineError::Setup(e.to_string())))?;
            }
        }
        let list = self
            .library
            .tools()
            .iter()
            .filter_map(|t| {
                labels.get(&t.name).map(|(c, s)| ToolLabel { tool: t.name.clone(), category: c.clone(), source: *s })
            })
            .collect();
        let mut categories = categories;
        for (c, _) in labels.values() {
            if !categories.contains(c) {
                categories.push(c.clone());
            }
        }
        self.labels = labels;
        self.emit(EventKind::ToolsClassified { categories, labels: list, model })?;
        Ok(())
    }

    /// The classifier's answer; an unreadable reply or a failed model
    /// leaves every tool to the default category rather than failing the run.
    async fn ask_classifier(
        &mut self,
        tools: &[(String, String)],
        tally: &mut RunTally,
    ) -> Result<BTreeMap<String, String>, Halt> {
        let view = ClassifierView { categories: self.rewoo.categories.clone(), tools: tools.to_vec() };
        let mut req = ChatRequest::new(Role::Classifier, proto::render_classifier(&view));
        req.response_schema = Some(proto::classifier_schema(&view));
        req.temperature = Some(0.0);
        let reply = match self.model_call(req, tally).await {
            Ok(r) => r,
            Err(Halt::ModelFailed(_)) => return Ok(BTreeMap::new()),
            Err(other) => return Err(other),
        };
        match proto::parse_classifier_reply(&reply) {
            Ok(l) => Ok(l),
            Err(e) => {
                self.refuse_malformed(&e)?;
                Ok(BTreeMap::new())
            }
        }
    }

    /// The tools the planner may use: the top-K retrieved, within what the
    /// budget's plan allows.
    fn planner_tools(&self, task: &Task, budget: Option<&btp::RunBudget>) -> Vec<PlannerTool> {
        let names = match budget {
            Some(b) => b.allowance.keys().filter(|t| b.allowed(t)).cloned().collect(),
            None => self.retrieve(&task.query),
        };
        names
            .iter()
            .filter_map(|n| self.library.get(n))
            .map(|t| PlannerTool {
                name: t.name.clone(),
                category: self.labels.get(&t.name).map(|(c, _)| c.clone()),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            })
            .collect()
    }

    /// The planner's plan: one call, and one retry showing the parse error.
    async fn write_plan(
        &mut self,
        task: &Task,
        tools: &[PlannerTool],
        budget: Option<&btp::RunBudget>,
        tally: &mut RunTally,
    ) -> Result<Plan, Halt> {
        let mut notes = Vec::new();
        if let Some(b) = budget {
            let allowed: Vec<String> = b
                .allowance
                .iter()
                .filter(|(t, n)| **n > 0 && b.allowed(t))
                .map(|(t, n)| format!("{t} at most {n}×"))
                .collect();
            notes.push(format!(
                "Budget {:.2}: a step that would overspend it is refused. Calls allowed: {}.",
                b.budget,
                if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
            ));
        }
        let view = PlannerView { task: task.query.clone(), tools: tools.to_vec(), notes };
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let mut messages = proto::render_planner(&view);
        let mut attempt = 1u32;
        loop {
            let mut req = ChatRequest::new(Role::Planner, messages.clone());
            req.response_schema = Some(proto::planner_schema(&names));
            req.temperature = Some(0.0);
            let reply = self.model_call(req, tally).await?;
            match parse_plan_reply(&reply.text, &names)
                .map_err(|e| e.to_string())
                .and_then(|p| self.check_categories(p))
            {
                Ok(plan) => {
                    self.emit(EventKind::PlanWritten { attempt, steps: plan.steps.clone() })?;
                    return Ok(plan);
                }
                Err(error) => {
                    let last = attempt == 2;
                    self.emit(EventKind::PlanRejected { attempt, error: error.clone(), last })?;
                    if last {
                        return Err(Halt::BadPlan(error));
                    }
                    messages = proto::render_planner_retry(&view, &reply.text, &error);
                    attempt += 1;
                }
            }
        }
    }

    /// A step calls several tools together only when they share a category
    /// (seed 004's multi-calling): otherwise the plan goes back for a retry.
    fn check_categories(&self, plan: Plan) -> Result<Plan, String> {
        for step in &plan.steps {
            let cats: Vec<(&str, &str)> = step
                .calls
                .iter()
                .map(|c| (c.tool.as_str(), self.labels.get(&c.tool).map(|(k, _)| k.as_str()).unwrap_or("")))
                .collect();
            if let Some((t0, c0)) = cats.first()
                && let Some((t, c)) = cats.iter().find(|(_, c)| c != c0)
            {
                return Err(PlanError::BadLine {
                    line: 0,
                    text: format!("#E{}", step.evidence),
                    why: format!(
                        "{t0} ({c0}) and {t} ({c}) are of different categories; a step may only call tools of one \
                         category together"
                    ),
                }
                .to_string()
                .replacen("line 0: ", "", 1));
            }
        }
        Ok(plan)
    }

    /// The lanes of a step with their arguments (evidence substituted), and
    /// what the budget refuses before anything runs.
    fn prepare_lanes(
        &mut self,
        step: &crate::strategy::rewoo::parse::PlanStep,
        evidence: &Evidence,
        budget: Option<&btp::RunBudget>,
        spent: f64,
    ) -> Vec<Lane> {
        let mut lanes: Vec<Lane> = step
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.next_call += 1;
                let spec = self.library.get(&c.tool).cloned();
                let (args, settled) = match &spec {
                    None => (
                        Value::Null,
                        Some(Settled::Failed(ToolError::new(
                            ToolErrorKind::Failed,
                            format!("unknown tool '{}'", c.tool),
                        ))),
                    ),
                    Some(s) => match args::resolve(&c.input, &s.parameters, evidence) {
                        Ok(a) => (a, None),
                        Err(why) => (
                            Value::String(c.input.clone()),
                            Some(Settled::Failed(ToolError::new(ToolErrorKind::BadArguments, why))),
                        ),
                    },
                };
                Lane {
                    plan: LanePlan {
                        lane: i as u32,
                        call: self.next_call,
                        tool: c.tool.clone(),
                        input: c.input.clone(),
                        args,
                    },
                    spec,
                    settled,
                    slot: Slot::Waiting,
                    user_fault: None,
                    abort: None,
                    result: None,
                }
            })
            .collect();
        let Some(b) = budget else { return lanes };
        for l in lanes.iter_mut().filter(|l| l.settled.is_none()) {
            match b.verdict(&l.plan.tool) {
                btp::Verdict::Allowed => {}
                btp::Verdict::Forbidden(d) => l.settled = Some(Settled::Refused(RefuseReason::Forbidden, d)),
                btp::Verdict::Blacklisted(d) => l.settled = Some(Settled::Refused(RefuseReason::Blacklisted, d)),
            }
        }
        // A concurrent step spends all its calls at once: refuse it whole
        // when together they would overspend, keeping the solver's share.
        let cost: f64 = lanes
            .iter()
            .filter(|l| l.settled.is_none())
            .map(|l| b.costs.get(&l.plan.tool).copied().unwrap_or_else(|| l.spec.as_ref().map_or(0.0, |s| s.cost)))
            .sum();
        if cost > 0.0 && spent + cost + b.reserve > b.budget + 1e-9 {
            let detail = format!(
                "step #E{} would cost {cost:.2} with {spent:.2} of {:.2} spent and {:.2} kept for the solver",
                step.evidence, b.budget, b.reserve
            );
            for l in lanes.iter_mut().filter(|l| l.settled.is_none()) {
                l.settled = Some(Settled::Refused(RefuseReason::OverBudget, detail.clone()));
            }
        }
        lanes
    }

    /// Runs a step's lanes concurrently, each behind its own gate, obeying
    /// controls as they arrive. Returns the lanes with their results.
    async fn run_lanes(
        &mut self,
        mut lanes: Vec<Lane>,
        mut budget: Option<&mut btp::RunBudget>,
        tally: &mut RunTally,
    ) -> Result<Vec<Lane>, Halt> {
        for lane in lanes.iter_mut() {
            match lane.settled.take() {
                None => {}
                Some(Settled::Refused(reason, detail)) => {
                    lane.slot = Slot::Done;
                    self.emit(EventKind::Refused { tool: lane.plan.tool.clone(), reason, detail })?;
                }
                Some(Settled::Failed(error)) => {
                    // Shown as a call that failed at once, so the lane and
                    // the transcript say why.
                    let p = lane.plan.clone();
                    self.emit(EventKind::ToolCall {
                        call: p.call,
                        tool: p.tool.clone(),
                        args: p.args,
                        lane: Some(p.lane),
                    })?;
                    lane.slot = Slot::Done;
                    lane.result = Some(Err(error.clone()));
                    self.emit(EventKind::ToolResult {
                        call: p.call,
                        tool: p.tool,
                        outcome: ToolOutcome::Err { error },
                        latency_ms: 0,
                        cost: 0.0,
                        fault: None,
                        filtered: true,
                        lane: Some(p.lane),
                    })?;
                }
            }
        }
        if lanes.iter().any(|l| l.slot == Slot::Waiting) {
            self.wait_pace().await?;
        }
        let mut running: FuturesUnordered<LaneFuture> = FuturesUnordered::new();
        let mut faults: BTreeMap<usize, Option<FaultMode>> = BTreeMap::new();
        loop {
            if self.stop {
                return Err(Halt::Stopped);
            }
            if self.restart {
                return Err(Halt::Restarted);
            }
            // Start every lane the gate lets through.
            let mut i = 0;
            while i < lanes.len() {
                let may = lanes[i].slot == Slot::Waiting
                    && match self.gate {
                        Gate::Open => true,
                        Gate::OneStep => {
                            self.gate = Gate::Closed;
                            self.emit(EventKind::Stepped)?;
                            true
                        }
                        Gate::Closed => false,
                    };
                if may {
                    let (fut, fault) = self.start_lane(&mut lanes[i], i)?;
                    faults.insert(i, fault);
                    running.push(fut);
                }
                i += 1;
            }
            if lanes.iter().all(|l| l.slot == Slot::Done) {
                break;
            }
            tokio::select! {
                Some((i, result, latency_ms)) = running.next(), if !running.is_empty() => {
                    let fault = faults.get(&i).copied().flatten();
                    self.finish_lane(&mut lanes[i], result, latency_ms, fault, tally)?;
                    // Each call is spent as it ends, so the budget pane moves lane by lane.
                    if let Some(b) = budget.as_deref_mut() {
                        self.spend(b, &lanes[i].plan.tool, tally, &mut Vec::new())?;
                    }
                }
                c = self.controls.recv() => match c {
                    Some(Control::Lane { lane, action }) => self.lane_control(&mut lanes, &mut running, &mut faults, lane, action)?,
                    Some(c) => self.apply_control(c)?,
                    // Nobody can open a gate any more: run on rather than hang.
                    None => {
                        for l in lanes.iter_mut().filter(|l| l.slot == Slot::Held) {
                            l.slot = Slot::Waiting;
                        }
                        if self.gate != Gate::Open {
                            self.gate = Gate::Open;
                            self.emit(EventKind::Resumed)?;
                        }
                        if running.is_empty() && !lanes.iter().any(|l| l.slot == Slot::Waiting) {
                            break;
                        }
                    }
                },
            }
        }
        Ok(lanes)
    }

    /// Starts one lane's call: its fault drawn (or the user's), its events emitted.
    fn start_lane(&mut self, lane: &mut Lane, i: usize) -> Result<(LaneFuture, Option<FaultMode>), EngineError> {
        // A lane without a tool was settled before it could start; should
        // one start anyway, its call fails rather than the engine.
        let spec = lane.spec.clone();
        let p = &lane.plan;
        let drawn = self.faults.draw(&p.tool, &mut self.rng);
        let fault = lane.user_fault.or(drawn);
        self.emit(EventKind::ToolCall {
            call: p.call,
            tool: p.tool.clone(),
            args: p.args.clone(),
            lane: Some(p.lane),
        })?;
        lane.slot = Slot::Running;
        let (timeout, call_seed) = (self.call_timeout(spec.as_deref()), self.call_seed(p.call));
        let (executor, clock, args) = (self.executor.clone(), Arc::clone(&self.clock), p.args.clone());
        let (abort, registration) = AbortHandle::new_pair();
        lane.abort = Some(abort);
        let name = p.tool.clone();
        let fut = Box::pin(async move {
            let t0 = clock.now_ms();
            let run = async {
                match spec {
                    Some(spec) => executor.call(&spec, &args, fault, call_seed, timeout).await,
                    None => Err(ToolError::new(ToolErrorKind::Failed, format!("unknown tool '{name}'"))),
                }
            };
            let call = Abortable::new(run, registration).await;
            let latency = clock.now_ms().saturating_sub(t0);
            let result = call.unwrap_or_else(|_| {
                Err(ToolError::new(ToolErrorKind::Failed, format!("'{name}' was failed by the user")))
            });
            (i, result, latency)
        });
        Ok((fut, fault))
    }

    fn finish_lane(
        &mut self,
        lane: &mut Lane,
        result: ToolResult,
        latency_ms: u64,
        fault: Option<FaultMode>,
        tally: &mut RunTally,
    ) -> Result<(), EngineError> {
        lane.slot = Slot::Done;
        lane.abort = None;
        let cost = lane.spec.as_ref().map_or(0.0, |s| s.cost);
        self.charge_tool(tally, cost, latency_ms);
        let filtered = filter::is_filtered(&result);
        let outcome = match &result {
            Ok(value) => ToolOutcome::Ok { value: value.clone() },
            Err(error) => ToolOutcome::Err { error: error.clone() },
        };
        lane.result = Some(result);
        self.emit(EventKind::ToolResult {
            call: lane.plan.call,
            tool: lane.plan.tool.clone(),
            outcome,
            latency_ms,
            cost,
            fault,
            filtered,
            lane: Some(lane.plan.lane),
        })
    }

    /// A user's action on one lane of the running step.
    fn lane_control(
        &mut self,
        lanes: &mut [Lane],
        running: &mut FuturesUnordered<LaneFuture>,
        faults: &mut BTreeMap<usize, Option<FaultMode>>,
        lane: u32,
        action: LaneAction,
    ) -> Result<(), EngineError> {
        let Some(i) = lanes.iter().position(|l| l.plan.lane == lane) else {
            return self.reject("lane", format!("the running step has no lane {lane} (0 to {})", lanes.len() - 1));
        };
        let l = &mut lanes[i];
        let why = match (action, l.slot) {
            (_, Slot::Done) => Some("it has ended"),
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
            (LaneAction::Step, Slot::Waiting | Slot::Held) => None,
            (LaneAction::Step, _) => Some("it is already running"),
            (LaneAction::Fail { fault }, Slot::Waiting | Slot::Held) => {
                l.user_fault = Some(fault);
                None
            }
            (LaneAction::Fail { .. }, Slot::Running) => {
                // Cut the call short: its future ends as a failure.
                if let Some(a) = l.abort.take() {
                    a.abort();
                }
                faults.insert(i, Some(FaultMode::Error));
                None
            }
        };
        if let Some(why) = why {
            return self.reject("lane", format!("lane {lane} ({}): {why}", lanes[i].plan.tool));
        }
        self.emit(EventKind::LaneChanged { lane, action })?;
        if action == LaneAction::Step {
            let (fut, fault) = self.start_lane(&mut lanes[i], i)?;
            faults.insert(i, fault);
            running.push(fut);
        }
        Ok(())
    }

    /// The solver's answer from the plan and the evidence.
    async fn solve(
        &mut self,
        task: &Task,
        steps: Vec<SolverStep>,
        tally: &mut RunTally,
    ) -> Result<Option<String>, Halt> {
        let view = SolverView { task: task.query.clone(), steps };
        let mut req = ChatRequest::new(Role::Solver, proto::render_solver(&view));
        req.response_schema = Some(proto::solver_schema());
        req.temperature = Some(0.0);
        let reply = self.model_call(req, tally).await?;
        match proto::parse_solver_reply(&reply) {
            Ok(a) => Ok(Some(a)),
            Err(e) => {
                self.refuse_malformed(&e)?;
                Ok(None)
            }
        }
    }

    /// The user gives a tool another category.
    pub(super) fn set_category(&mut self, tool: String, category: String) -> Result<(), EngineError> {
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
        if let (Some(path), Some((key, model))) = (self.rewoo.cache.clone(), self.label_key.clone())
            && self.library.get(&tool).is_some_and(|t| t.category.is_none())
        {
            let mut stored = cache::load(&path, &key).ok().flatten().unwrap_or_default();
            stored.insert(tool, category);
            if let Err(e) = cache::store(&path, &key, &model, &stored) {
                return self.reject("set category", format!("saved for this session only: {e}"));
            }
        }
        Ok(())
    }
}

/// A category as the configured list spells it (models vary the case).
fn canonical(given: &str, categories: &[String]) -> Option<String> {
    let g = given.trim().trim_matches(['"', '[', ']']).to_lowercase();
    categories.iter().find(|c| c.to_lowercase() == g).cloned()
}
