//! A conversation as both importers read it, and its events.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::engine::event::{RoleModel, RunOutcome, SCHEMA_VERSION, StrategyKind, ToolOutcome};
use crate::engine::params::Params;
use crate::engine::{Event, EventKind};
use crate::model::price::Price;
use crate::model::{Message, ModelInfo, ModelKind, Role, ToolCallRequest, Usage};
use crate::tool::{ToolBrief, ToolError, ToolErrorKind};

/// What happened, in order, with each step's time (ms from the start).
#[derive(Default)]
pub struct Conversation {
    pub id: String,
    pub model: String,
    pub task: String,
    steps: Vec<(u64, Step)>,
}

enum Step {
    Said { user: String },
    Replied { text: String, calls: Vec<(String, String, Value)>, usage: Usage },
    Answered { id: String, output: Value, error: bool },
}

impl Conversation {
    pub fn is_empty(&self) -> bool {
        !self.steps.iter().any(|(_, s)| matches!(s, Step::Replied { .. }))
    }

    /// The user spoke (the first time, the task).
    pub fn user(&mut self, t: u64, text: String) {
        if self.task.is_empty() {
            self.task = text.clone();
        }
        self.steps.push((t, Step::Said { user: text }));
    }

    /// The model replied: its text, its calls (id, tool, arguments).
    pub fn reply(&mut self, t: u64, text: String, calls: Vec<(String, String, Value)>, usage: Usage) {
        self.steps.push((t, Step::Replied { text, calls, usage }));
    }

    /// More of the last reply (an agent that writes one reply's blocks on
    /// lines of their own); a reply of its own when there is none.
    pub fn more_of_reply(&mut self, t: u64, text: String, calls: Vec<(String, String, Value)>, usage: Usage) {
        match self.steps.last_mut() {
            Some((at, Step::Replied { text: was, calls: had, usage: u })) => {
                // The reply is whole when its last line is written.
                *at = t;
                if !text.is_empty() {
                    if !was.is_empty() {
                        was.push('\n');
                    }
                    was.push_str(&text);
                }
                had.extend(calls);
                // Each line repeats the reply's usage so far: the last one counts.
                if usage != Usage::default() {
                    *u = usage;
                }
            }
            _ => self.reply(t, text, calls, usage),
        }
    }

    /// A call's result came back.
    pub fn result(&mut self, t: u64, id: String, output: Value, error: bool) {
        self.steps.push((t, Step::Answered { id, output, error }));
    }

    pub fn events(self) -> Vec<Event> {
        let mut out = Vec::new();
        let mut step = 0u32;
        let ev = |run: u32, step: u32, t: u64, kind: EventKind| Event { v: SCHEMA_VERSION, run, step, t, kind };
        let info = ModelInfo { name: self.model.clone(), kind: ModelKind::Replay, simulated: false };
        let mut tools: Vec<String> = Vec::new();
        for (_, s) in &self.steps {
            if let Step::Replied { calls, .. } = s {
                for (_, tool, _) in calls {
                    if !tools.contains(tool) {
                        tools.push(tool.clone());
                    }
                }
            }
        }
        let briefs: Vec<ToolBrief> = tools
            .iter()
            .map(|t| ToolBrief { name: t.clone(), description: String::new(), category: None, cost: 0.0, server: None })
            .collect();
        out.push(ev(
            0,
            0,
            0,
            EventKind::SessionStarted {
                schema: SCHEMA_VERSION,
                strategy: StrategyKind::Agent,
                seed: 0,
                params: Params::default(),
                models: vec![RoleModel { role: Role::Agent, model: info, price: Price::default() }],
                tools: Arc::from(briefs),
                cost_unit: "tokens".into(),
                tasks: 1,
                task_list: Vec::new(),
                available_models: Vec::new(),
                pace_ms: 0,
                graph: None,
                experience: None,
            },
        ));
        out.push(ev(
            1,
            0,
            0,
            EventKind::RunStarted { task_id: self.id.clone(), task: self.task.clone(), gold: None, index: 1, total: 1 },
        ));
        let mut call_no = 0u64;
        let mut open: BTreeMap<String, (u64, String, u64)> = BTreeMap::new();
        let mut pending: Vec<Message> = Vec::new();
        let mut last_t = 0;
        let (mut usage, mut tool_calls, mut answer) = (Usage::default(), 0u32, None);
        for (t, s) in self.steps {
            last_t = last_t.max(t);
            match s {
                Step::Said { user } => pending.push(Message::user(user)),
                Step::Answered { id, output, error } => {
                    let Some((call, tool, at)) = open.remove(&id) else { continue };
                    let outcome = if error {
                        let message = match &output {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, message) }
                    } else {
                        ToolOutcome::Ok { value: output.clone() }
                    };
                    pending.push(Message::user(format!("{tool} → {}", short(&output))));
                    out.push(ev(
                        1,
                        step,
                        t,
                        EventKind::ToolResult {
                            call,
                            tool,
                            outcome,
                            latency_ms: t.saturating_sub(at),
                            cost: 0.0,
                            fault: None,
                            filtered: false,
                            lane: None,
                            source: None,
                        },
                    ));
                }
                Step::Replied { text, calls, usage: u } => {
                    step += 1;
                    call_no += 1;
                    let model_call = call_no;
                    out.push(ev(
                        1,
                        step,
                        t,
                        EventKind::ModelCall {
                            call: model_call,
                            role: Role::Agent,
                            model: self.model.clone(),
                            simulated: false,
                            messages: std::mem::take(&mut pending),
                            wire: None,
                        },
                    ));
                    let requests: Vec<ToolCallRequest> = calls
                        .iter()
                        .map(|(_, tool, args)| ToolCallRequest { name: tool.clone(), arguments: args.clone() })
                        .collect();
                    out.push(ev(
                        1,
                        step,
                        t,
                        EventKind::ModelReply {
                            call: model_call,
                            role: Role::Agent,
                            model: self.model.clone(),
                            text: text.clone(),
                            tool_calls: requests,
                            usage: u,
                            cost: 0.0,
                            latency_ms: 0,
                            fault: None,
                            wire: None,
                            first_token_ms: None,
                            capped: None,
                        },
                    ));
                    usage += u;
                    if !text.trim().is_empty() {
                        answer = Some(text.clone());
                    }
                    for (id, tool, args) in calls {
                        call_no += 1;
                        tool_calls += 1;
                        open.insert(id, (call_no, tool.clone(), t));
                        out.push(ev(1, step, t, EventKind::ToolCall { call: call_no, tool, args, lane: None }));
                    }
                }
            }
        }
        out.push(ev(
            1,
            step,
            last_t,
            EventKind::RunFinished {
                outcome: RunOutcome::Answered,
                answer,
                success: None,
                cost: 0.0,
                usage,
                steps: step,
                tool_calls,
                expect: None,
            },
        ));
        out.push(ev(0, step, last_t, EventKind::SessionFinished { runs: 1, stopped: false }));
        out
    }
}

fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::text::ellipsis(&s, 199)
}

/// Milliseconds between two RFC 3339 times (0 when either is unreadable).
pub fn ms_between(start: &str, t: &str) -> u64 {
    match (chrono::DateTime::parse_from_rfc3339(start), chrono::DateTime::parse_from_rfc3339(t)) {
        (Ok(a), Ok(b)) => (b - a).num_milliseconds().max(0) as u64,
        _ => 0,
    }
}
