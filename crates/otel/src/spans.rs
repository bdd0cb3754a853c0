//! A session's events as OpenTelemetry spans, following the GenAI semantic
//! conventions: the session is the root, each run an `invoke_agent` span,
//! each model call a `chat {model}` span, each tool call an
//! `execute_tool {tool}` span, and BTP's and rewoo's plans `plan` spans.
//!
//! A pure fold over the events, like the workbench's state: the same code
//! turns a live session and a trace file into the same spans. Times are the
//! events' `t` (milliseconds on the engine clock); the exporter anchors them
//! to the wall clock. Message, argument and result content appears only when
//! asked for (`content`), because prompts and tool results may hold what a
//! user would not send to a collector.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value as Json, json};

use crate::engine::event::{Event, EventKind, RunOutcome, StrategyKind, ToolOutcome};
use crate::model::{Message, ModelKind, ToolCallRequest};

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    F64(f64),
    Bool(bool),
    Strs(Vec<String>),
}

impl AttrValue {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            AttrValue::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        AttrValue::Str(s.to_string())
    }
}
impl From<String> for AttrValue {
    fn from(s: String) -> Self {
        AttrValue::Str(s)
    }
}
impl From<u64> for AttrValue {
    fn from(i: u64) -> Self {
        AttrValue::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<u32> for AttrValue {
    fn from(i: u32) -> Self {
        AttrValue::Int(i64::from(i))
    }
}
impl From<f64> for AttrValue {
    fn from(f: f64) -> Self {
        AttrValue::F64(f)
    }
}
impl From<bool> for AttrValue {
    fn from(b: bool) -> Self {
        AttrValue::Bool(b)
    }
}
impl From<Vec<String>> for AttrValue {
    fn from(v: Vec<String>) -> Self {
        AttrValue::Strs(v)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Internal,
    /// A call out of the process: a model endpoint.
    Client,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Unset,
    Error(String),
}

/// One finished span. Ids are counted from 1 in the order spans start, so
/// a parent's id is always smaller than its children's.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub id: u64,
    pub parent: Option<u64>,
    pub name: String,
    pub kind: SpanKind,
    pub start_ms: u64,
    pub end_ms: u64,
    pub attrs: Vec<(String, AttrValue)>,
    pub status: Status,
}

impl Span {
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// A span not finished yet.
#[derive(Debug)]
struct Open {
    span: Span,
}

impl Open {
    fn set(&mut self, key: &str, value: impl Into<AttrValue>) {
        let value = value.into();
        match self.span.attrs.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.span.attrs.push((key.to_string(), value)),
        }
    }

    fn close(mut self, end_ms: u64) -> Span {
        self.span.end_ms = end_ms.max(self.span.start_ms);
        self.span
    }
}

/// Folds events into spans, handing each span back as it finishes.
#[derive(Debug, Default)]
pub struct SpanFold {
    content: bool,
    next_id: u64,
    strategy: Option<StrategyKind>,
    /// Model name -> what kind of backend serves it, for the provider name.
    kinds: HashMap<String, ModelKind>,
    descriptions: HashMap<String, String>,
    session: Option<Open>,
    run: Option<Open>,
    plan: Option<Open>,
    /// Model and tool calls in flight, by call id.
    models: BTreeMap<u64, Open>,
    tools: BTreeMap<u64, Open>,
    last_t: u64,
}

/// Every span of a whole event stream, those left open by a cut-short trace
/// included, sorted by id (parents before children).
pub fn spans(events: &[Event], content: bool) -> Vec<Span> {
    let mut fold = SpanFold::new(content);
    let mut out: Vec<Span> = events.iter().flat_map(|e| fold.push(e)).collect();
    out.extend(fold.finish());
    out.sort_by_key(|s| s.id);
    out
}

impl SpanFold {
    /// `content`: record messages, arguments and results (opt-in).
    pub fn new(content: bool) -> Self {
        SpanFold { content, ..SpanFold::default() }
    }

    /// The spans this event finished.
    pub fn push(&mut self, event: &Event) -> Vec<Span> {
        let t = event.t;
        let mut done = Vec::new();
        match &event.kind {
            EventKind::SessionStarted { strategy, seed, models, tools, tasks, available_models, cost_unit, .. } => {
                // A second session in one stream (not written today) starts afresh.
                done.extend(self.close_all(t));
                self.strategy = Some(*strategy);
                for m in models.iter().map(|r| &r.model).chain(available_models) {
                    self.kinds.insert(m.name.clone(), m.kind);
                }
                self.descriptions = tools.iter().map(|b| (b.name.clone(), b.description.clone())).collect();
                let mut s = self.open("session", SpanKind::Internal, None, t);
                s.set("switchyard.strategy", strategy.as_str());
                s.set("switchyard.seed", *seed);
                s.set("switchyard.tasks", *tasks);
                s.set("switchyard.cost_unit", cost_unit.as_str());
                self.session = Some(s);
            }
            EventKind::ModelSwitched { model, .. } => {
                self.kinds.insert(model.name.clone(), model.kind);
            }
            EventKind::RunStarted { task_id, task, index, total, .. } => {
                done.extend(self.close_run(t));
                let parent = self.session.as_ref().map(|s| s.span.id);
                let mut r = self.open("invoke_agent", SpanKind::Internal, parent, t);
                r.set("gen_ai.operation.name", "invoke_agent");
                if let Some(s) = self.strategy {
                    r.set("gen_ai.agent.name", s.as_str());
                }
                r.set("switchyard.run", event.run);
                r.set("switchyard.task.id", task_id.as_str());
                r.set("switchyard.task.index", *index);
                r.set("switchyard.task.total", *total);
                if self.content {
                    r.set("gen_ai.input.messages", messages_json(&[Message::user(task.clone())]));
                }
                self.run = Some(r);
            }
            EventKind::ModelCall { call, role, model, simulated, messages, .. } => {
                // rewoo's planner writes the plan: its calls are the plan span's children.
                if self.strategy == Some(StrategyKind::Rewoo)
                    && *role == crate::model::Role::Planner
                    && self.plan.is_none()
                {
                    let parent = self.inner_parent();
                    let mut p = self.open("plan", SpanKind::Internal, parent, t);
                    p.set("switchyard.plan.kind", "rewoo");
                    self.plan = Some(p);
                }
                let parent = self.plan.as_ref().map(|p| p.span.id).or_else(|| self.inner_parent());
                let mut c = self.open(&format!("chat {model}"), SpanKind::Client, parent, t);
                c.set("gen_ai.operation.name", "chat");
                c.set("gen_ai.provider.name", self.provider(model, *simulated));
                c.set("gen_ai.request.model", model.as_str());
                c.set("switchyard.role", role.as_str());
                c.set("switchyard.call", *call);
                if self.content {
                    c.set("gen_ai.input.messages", messages_json(messages));
                }
                self.models.insert(*call, c);
            }
            EventKind::ModelReply { call, text, tool_calls, usage, cost, first_token_ms, .. } => {
                if let Some(mut c) = self.models.remove(call) {
                    let reason = if tool_calls.is_empty() { "stop" } else { "tool_call" };
                    if let Some(ms) = first_token_ms {
                        // The semantic conventions' client metric, as seconds.
                        c.set("gen_ai.server.time_to_first_token", *ms as f64 / 1000.0);
                    }
                    c.set("gen_ai.usage.input_tokens", usage.prompt_tokens);
                    c.set("gen_ai.usage.output_tokens", usage.completion_tokens);
                    c.set("gen_ai.response.finish_reasons", vec![reason.to_string()]);
                    c.set("switchyard.cost", *cost);
                    if self.content {
                        c.set("gen_ai.output.messages", output_json(text, tool_calls, reason));
                    }
                    done.push(c.close(t));
                }
            }
            EventKind::ModelFailed { call, error, .. } => {
                if let Some(mut c) = self.models.remove(call) {
                    c.set("gen_ai.response.finish_reasons", vec!["error".to_string()]);
                    c.set("error.type", "model_error");
                    c.span.status = Status::Error(error.clone());
                    done.push(c.close(t));
                }
            }
            EventKind::ToolCall { call, tool, args, lane } => {
                let parent = self.inner_parent();
                let mut c = self.open(&format!("execute_tool {tool}"), SpanKind::Internal, parent, t);
                c.set("gen_ai.operation.name", "execute_tool");
                c.set("gen_ai.tool.name", tool.as_str());
                c.set("gen_ai.tool.call.id", call.to_string());
                c.set("gen_ai.tool.type", "function");
                if let Some(d) = self.descriptions.get(tool) {
                    c.set("gen_ai.tool.description", d.as_str());
                }
                if let Some(l) = lane {
                    c.set("switchyard.lane", *l);
                }
                if self.content {
                    c.set("gen_ai.tool.call.arguments", args.to_string());
                }
                self.tools.insert(*call, c);
            }
            EventKind::ToolResult { call, outcome, cost, fault, filtered, source, .. } => {
                if let Some(mut c) = self.tools.remove(call) {
                    c.set("switchyard.cost", *cost);
                    if let Some(f) = fault {
                        c.set("switchyard.fault", f.to_string());
                    }
                    if *filtered {
                        c.set("switchyard.filtered", true);
                    }
                    if let Some(s) = source {
                        c.set("switchyard.source", name_of(s));
                    }
                    match outcome {
                        ToolOutcome::Ok { value } => {
                            if self.content {
                                c.set("gen_ai.tool.call.result", value.to_string());
                            }
                        }
                        ToolOutcome::Err { error } => {
                            c.set("error.type", name_of(&error.kind));
                            c.span.status = Status::Error(error.message.clone());
                        }
                    }
                    done.push(c.close(t));
                }
            }
            EventKind::PlanMade { budget, fixed_cost, remaining, lambda, tau, rows, planned_cost, planned_calls } => {
                // BTP plans between the run's previous event and this one.
                let parent = self.inner_parent();
                let mut p = self.open("plan", SpanKind::Internal, parent, self.last_t);
                p.set("switchyard.plan.kind", "btp");
                p.set("switchyard.plan.budget", *budget);
                p.set("switchyard.plan.fixed_cost", *fixed_cost);
                p.set("switchyard.plan.remaining", *remaining);
                p.set("switchyard.plan.lambda", *lambda);
                p.set("switchyard.plan.tau", *tau);
                p.set("switchyard.plan.planned_cost", *planned_cost);
                p.set("switchyard.plan.planned_calls", *planned_calls);
                let allowance: Vec<String> =
                    rows.iter().filter(|r| r.calls > 0).map(|r| format!("{}={}", r.tool, r.calls)).collect();
                p.set("switchyard.plan.allowance", allowance);
                done.push(p.close(t));
            }
            EventKind::PlanWritten { attempt, steps } => {
                let mut p = self.take_plan(t);
                p.set("switchyard.plan.attempt", *attempt);
                p.set("switchyard.plan.step_count", steps.len() as u64);
                let tools: Vec<String> = steps.iter().flat_map(|s| s.calls.iter().map(|c| c.tool.clone())).collect();
                p.set("switchyard.plan.tools", tools);
                if self.content {
                    p.set("switchyard.plan.steps", serde_json::to_string(steps).unwrap_or_default());
                }
                done.push(p.close(t));
            }
            EventKind::PlanRejected { attempt, error, last } => {
                let mut p = self.take_plan(t);
                p.set("switchyard.plan.attempt", *attempt);
                p.set("switchyard.plan.last", *last);
                // The parser's words may quote the planner's reply.
                if self.content {
                    p.set("switchyard.plan.error", error.as_str());
                }
                p.span.status = Status::Error("the planner's reply could not be read as a plan".into());
                done.push(p.close(t));
            }
            EventKind::RunFinished { outcome, answer, success, cost, usage, steps, tool_calls, .. } => {
                done.extend(self.close_calls(t));
                if let Some(mut r) = self.run.take() {
                    r.set("switchyard.outcome", outcome_name(outcome));
                    if let Some(s) = success {
                        r.set("switchyard.success", *s);
                    }
                    r.set("switchyard.cost", *cost);
                    r.set("gen_ai.usage.input_tokens", usage.prompt_tokens);
                    r.set("gen_ai.usage.output_tokens", usage.completion_tokens);
                    r.set("switchyard.steps", *steps);
                    r.set("switchyard.tool_calls", *tool_calls);
                    match outcome {
                        RunOutcome::Failed { error } => r.span.status = Status::Error(error.clone()),
                        RunOutcome::BadPlan { .. } => {
                            r.span.status = Status::Error("the planner's plan could not be read".into())
                        }
                        _ => {}
                    }
                    if self.content
                        && let Some(a) = answer
                    {
                        r.set("gen_ai.output.messages", output_json(a, &[], "stop"));
                    }
                    done.push(r.close(t));
                }
            }
            EventKind::SessionFinished { runs, stopped } => {
                done.extend(self.close_run(t));
                if let Some(mut s) = self.session.take() {
                    s.set("switchyard.runs", *runs);
                    s.set("switchyard.stopped", *stopped);
                    done.push(s.close(t));
                }
            }
            _ => {}
        }
        self.last_t = self.last_t.max(t);
        done
    }

    /// Closes what is still open (a trace cut short, a session that ended
    /// without its last event) at the last time seen, marked unfinished.
    pub fn finish(&mut self) -> Vec<Span> {
        self.close_all(self.last_t)
    }

    fn open(&mut self, name: &str, kind: SpanKind, parent: Option<u64>, start_ms: u64) -> Open {
        self.next_id += 1;
        Open {
            span: Span {
                id: self.next_id,
                parent,
                name: name.to_string(),
                kind,
                start_ms,
                end_ms: start_ms,
                attrs: Vec::new(),
                status: Status::Unset,
            },
        }
    }

    /// A call's parent: the run, or the session between runs.
    fn inner_parent(&self) -> Option<u64> {
        self.run.as_ref().or(self.session.as_ref()).map(|s| s.span.id)
    }

    /// rewoo's open plan span, or one for a plan written without a planner
    /// call seen (it starts at the previous event).
    fn take_plan(&mut self, t: u64) -> Open {
        match self.plan.take() {
            Some(p) => p,
            None => {
                let parent = self.inner_parent();
                let start = self.last_t.min(t);
                let mut p = self.open("plan", SpanKind::Internal, parent, start);
                p.set("switchyard.plan.kind", "rewoo");
                p
            }
        }
    }

    fn provider(&self, model: &str, simulated: bool) -> &'static str {
        match self.kinds.get(model) {
            Some(ModelKind::Openai | ModelKind::OpenaiResponses) => "openai",
            Some(ModelKind::Anthropic) => "anthropic",
            Some(ModelKind::Replay) => "switchyard.replay",
            Some(ModelKind::Sim) => "switchyard.sim",
            None if simulated => "switchyard.sim",
            None => "openai",
        }
    }

    /// Calls and the plan still open, e.g. when the user stopped a run mid-call.
    fn close_calls(&mut self, t: u64) -> Vec<Span> {
        let open = std::mem::take(&mut self.models)
            .into_values()
            .chain(std::mem::take(&mut self.tools).into_values())
            .chain(self.plan.take());
        open.map(|mut o| {
            o.set("switchyard.unfinished", true);
            o.close(t)
        })
        .collect()
    }

    fn close_run(&mut self, t: u64) -> Vec<Span> {
        let mut done = self.close_calls(t);
        if let Some(mut r) = self.run.take() {
            r.set("switchyard.unfinished", true);
            done.push(r.close(t));
        }
        done
    }

    fn close_all(&mut self, t: u64) -> Vec<Span> {
        let mut done = self.close_run(t);
        if let Some(mut s) = self.session.take() {
            s.set("switchyard.unfinished", true);
            done.push(s.close(t));
        }
        done
    }
}

/// A serde enum's name as its JSON spells it (`bad_output`, `recorded`).
fn name_of(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Json::String(s)) => s,
        _ => "unknown".into(),
    }
}

fn outcome_name(o: &RunOutcome) -> String {
    match serde_json::to_value(o) {
        Ok(v) => v.get("outcome").and_then(Json::as_str).unwrap_or("unknown").to_string(),
        Err(_) => "unknown".into(),
    }
}

/// Messages in the GenAI conventions' JSON shape: role and text parts.
fn messages_json(messages: &[Message]) -> String {
    let list: Vec<Json> = messages
        .iter()
        .map(|m| json!({"role": m.role.as_str(), "parts": [{"type": "text", "content": m.content}]}))
        .collect();
    Json::Array(list).to_string()
}

fn output_json(text: &str, calls: &[ToolCallRequest], finish_reason: &str) -> String {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"type": "text", "content": text}));
    }
    for c in calls {
        parts.push(json!({"type": "tool_call", "name": c.name, "arguments": c.arguments}));
    }
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]).to_string()
}
