//! Received spans read by the GenAI semantic conventions: each agent run
//! (the topmost `invoke_agent` span, or a whole trace that has none) a
//! Switchyard run; each `chat` span a model call and its reply; each
//! `execute_tool` span a tool call and its result; every other span kept as
//! a `SpanReceived` event. The attributes Switchyard's own exporter adds
//! (`switchyard.*`) are read back too, so its spans make the round trip.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Value as Json, json};

use super::decode::InSpan;
use crate::engine::event::{Event, EventKind, RunOutcome, SCHEMA_VERSION, StrategyKind, ToolOutcome};
use crate::engine::params::Params;
use crate::model::{Message, Role, Speaker, ToolCallRequest, Usage};
use crate::tool::{ToolError, ToolErrorKind};

/// What a span is, by its `gen_ai.operation.name` (or, without one, the
/// conventions' span name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Agent,
    Chat,
    Tool,
    /// Another GenAI operation (embeddings, create_agent, an agent SDK's
    /// own spans): kept as a plain span.
    OtherGenai,
    /// No GenAI attribute at all: kept as a plain span.
    Plain,
}

fn op_of(s: &InSpan) -> Op {
    match s.str_attr("gen_ai.operation.name") {
        Some("invoke_agent") => Op::Agent,
        Some("chat" | "text_completion" | "generate_content") => Op::Chat,
        Some("execute_tool") => Op::Tool,
        Some(_) => Op::OtherGenai,
        None if s.name.starts_with("chat ") => Op::Chat,
        None if s.name.starts_with("execute_tool ") => Op::Tool,
        None if s.name == "invoke_agent" || s.name.starts_with("invoke_agent ") => Op::Agent,
        None if s.attrs.iter().any(|(k, _)| k.starts_with("gen_ai.")) => Op::OtherGenai,
        None => Op::Plain,
    }
}

/// What has been received, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub spans: u64,
    pub runs: u64,
    pub model_calls: u64,
    pub tool_calls: u64,
    /// GenAI spans of other operations, kept as plain spans.
    pub other_genai: u64,
    /// Spans without GenAI attributes, kept as plain spans.
    pub plain: u64,
    /// Spans refused for ids the protocol does not allow.
    pub rejected: u64,
}

/// The session the received runs are written into: its counters and its
/// clock (0 at the first span received).
#[derive(Debug, Default)]
pub struct Session {
    anchor_ns: Option<u64>,
    calls: u64,
    last_t: u64,
    pub counts: Counts,
}

impl Session {
    pub fn started(&self) -> Event {
        ev(
            0,
            0,
            0,
            EventKind::SessionStarted {
                schema: SCHEMA_VERSION,
                strategy: StrategyKind::Agent,
                seed: 0,
                params: Params::default(),
                models: Vec::new(),
                tools: Arc::from(Vec::new()),
                cost_unit: "tokens".into(),
                tasks: 0,
                task_list: Vec::new(),
                available_models: Vec::new(),
                pace_ms: 0,
                graph: None,
                experience: None,
            },
        )
    }

    pub fn finished(&self, stopped: bool) -> Event {
        let runs = u32::try_from(self.counts.runs).unwrap_or(u32::MAX);
        ev(0, 0, self.last_t, EventKind::SessionFinished { runs, stopped })
    }

    /// One trace's spans, whole or all there is of it: its runs' events.
    /// `rooted`: the trace's root span arrived (else what is left of it
    /// when the receiver stops or gives up waiting).
    pub fn trace(&mut self, mut spans: Vec<InSpan>, rooted: bool) -> Vec<Event> {
        self.counts.spans += spans.len() as u64;
        spans.sort_by_key(|s| (s.start_ns, s.end_ns));
        if self.anchor_ns.is_none() {
            self.anchor_ns = spans.first().map(|s| s.start_ns);
        }
        let ops: Vec<Op> = spans.iter().map(op_of).collect();
        let index: HashMap<u64, usize> = spans.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        // Each span's run: its topmost `invoke_agent` ancestor (itself
        // included), found by walking up the parents that arrived.
        let top_agent = |mut i: usize| {
            let mut top = None;
            for _ in 0..spans.len() {
                if ops[i] == Op::Agent {
                    top = Some(i);
                }
                match spans[i].parent.and_then(|p| index.get(&p)) {
                    Some(&p) if p != i => i = p,
                    _ => break,
                }
            }
            top
        };
        let owner: Vec<Option<usize>> = (0..spans.len()).map(top_agent).collect();
        let any_agent = ops.contains(&Op::Agent);
        let mut runs: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut outside = Vec::new();
        for (i, o) in owner.iter().enumerate() {
            match (o, any_agent) {
                (Some(top), _) => runs.entry(*top).or_default().push(i),
                // No agent span at all: the whole trace is the run.
                (None, false) => runs.entry(usize::MAX).or_default().push(i),
                (None, true) => outside.push(i),
            }
        }
        let mut out = Vec::new();
        // Spans around the runs (a session's own span): the session's.
        for i in outside {
            out.push(self.plain(&spans[i], ops[i], 0, 0));
        }
        for (top, members) in runs {
            let run_span = (top != usize::MAX).then_some(top);
            let finished = run_span.is_some() || rooted;
            out.extend(self.run(&spans, &ops, run_span, &members, finished));
        }
        out
    }

    fn t(&mut self, ns: u64) -> u64 {
        let t = ns.saturating_sub(self.anchor_ns.unwrap_or(ns)) / 1_000_000;
        self.last_t = self.last_t.max(t);
        t
    }

    fn plain(&mut self, s: &InSpan, op: Op, run: u32, step: u32) -> Event {
        match op {
            Op::Plain => self.counts.plain += 1,
            _ => self.counts.other_genai += 1,
        }
        let t = self.t(s.start_ns);
        let attrs = s.attrs.iter().cloned().collect();
        ev(run, step, t, EventKind::SpanReceived { name: s.name.clone(), ms: s.ms(), attrs, error: s.error.clone() })
    }

    fn run(
        &mut self,
        spans: &[InSpan],
        ops: &[Op],
        run_span: Option<usize>,
        members: &[usize],
        finished: bool,
    ) -> Vec<Event> {
        self.counts.runs += 1;
        let run = u32::try_from(self.counts.runs).unwrap_or(u32::MAX);
        let head = run_span.map(|i| &spans[i]);
        let chats: Vec<usize> = members.iter().copied().filter(|&i| ops[i] == Op::Chat).collect();
        let tools: Vec<usize> = members.iter().copied().filter(|&i| ops[i] == Op::Tool).collect();

        // Each reply's calls: as its output says, or else the tools run
        // between it and the next model call (an instrumentation that
        // writes the reply's calls nowhere).
        let mut replies: HashMap<usize, Reply> = HashMap::new();
        for (n, &c) in chats.iter().enumerate() {
            let mut reply = output_of(&spans[c]);
            if reply.calls.is_empty() {
                // The next call's conversation holds this reply, as sent back.
                let said = chats.get(n + 1).and_then(|&next| {
                    let here = input_list(&spans[c]).len();
                    input_list(&spans[next]).into_iter().nth(here)
                });
                if let Some(m) = said.filter(|m| m.get("role").and_then(Json::as_str) == Some("assistant")) {
                    let r = reply_from(vec![m]);
                    if !r.calls.is_empty() {
                        reply = r;
                    }
                }
            }
            // Without the reply's content, the tools run after it are its calls.
            if reply.calls.is_empty() && spans[c].attr("gen_ai.output.messages").is_none() {
                let until = chats.get(n + 1).map_or(u64::MAX, |&next| spans[next].start_ns);
                reply.calls = tools
                    .iter()
                    .map(|&t| &spans[t])
                    .filter(|t| t.start_ns >= spans[c].end_ns && t.start_ns < until)
                    .map(|t| ToolCallRequest { name: tool_name(t), arguments: tool_args(t) })
                    .collect();
            }
            replies.insert(c, reply);
        }

        let task = head
            .and_then(|h| last_user(&messages_of(h)))
            .or_else(|| chats.first().and_then(|&c| first_user(&messages_of(&spans[c]))))
            .or_else(|| head.map(|h| h.name.clone()))
            .unwrap_or_default();
        // The same task the same id, in any session: so `trace diff` of two
        // agents' (or two versions') sessions pairs their runs by task.
        let task_id = head
            .and_then(|h| h.str_attr("switchyard.task.id"))
            .map(str::to_string)
            .unwrap_or_else(|| format!("otlp-{:08x}", fnv1a(&task) as u32));

        let start_ns =
            head.map_or_else(|| members.iter().map(|&i| spans[i].start_ns).min().unwrap_or(0), |h| h.start_ns);
        let end_ns = head.map_or_else(|| members.iter().map(|&i| spans[i].end_ns).max().unwrap_or(0), |h| h.end_ns);
        let mut out = Vec::new();
        let t0 = self.t(start_ns);
        out.push(ev(run, 0, t0, EventKind::RunStarted { task_id, task, gold: None, index: run, total: run }));

        // Starts and ends in time order; at one instant, what ended first.
        // A call that took no time at all (a clock too coarse to tell)
        // starts and ends in one place.
        let mut marks: Vec<(u64, u8, usize, Mark)> = Vec::new();
        for &i in members {
            if Some(i) == run_span {
                continue;
            }
            let s = &spans[i];
            let call = matches!(ops[i], Op::Chat | Op::Tool);
            if call && s.end_ns == s.start_ns {
                marks.push((s.start_ns, 1, i, Mark::Whole));
            } else {
                marks.push((s.start_ns, 1, i, Mark::Start));
                if call {
                    marks.push((s.end_ns, 0, i, Mark::End));
                }
            }
        }
        marks.sort_by_key(|&(ns, phase, i, _)| (ns, phase, i));
        let marks: Vec<(u64, usize, bool)> = marks
            .into_iter()
            .flat_map(|(ns, _, i, m)| match m {
                Mark::Start => vec![(ns, i, true)],
                Mark::End => vec![(ns, i, false)],
                Mark::Whole => vec![(ns, i, true), (ns, i, false)],
            })
            .collect();

        let (mut step, mut usage, mut cost, mut tool_calls) = (0u32, Usage::default(), 0.0f64, 0u32);
        let mut call_of: HashMap<usize, (u64, u32)> = HashMap::new();
        let mut last_text = None;
        for (ns, i, starts) in marks {
            let s = &spans[i];
            let t = self.t(ns);
            match (ops[i], starts) {
                (Op::Chat, true) => {
                    step += 1;
                    self.calls += 1;
                    self.counts.model_calls += 1;
                    call_of.insert(i, (self.calls, step));
                    let kind = EventKind::ModelCall {
                        call: self.calls,
                        role: role_of(s),
                        model: model_of(s),
                        simulated: false,
                        messages: messages_of(s),
                        wire: None,
                    };
                    out.push(ev(run, step, t, kind));
                }
                (Op::Chat, false) => {
                    let (call, at) = call_of[&i];
                    let kind = match &s.error {
                        Some(error) => EventKind::ModelFailed {
                            call,
                            role: role_of(s),
                            model: model_of(s),
                            error: error.clone(),
                            latency_ms: s.ms(),
                            fault: None,
                        },
                        None => {
                            let reply = replies.remove(&i).unwrap_or_default();
                            let u = Usage {
                                prompt_tokens: s.u64_attr("gen_ai.usage.input_tokens").unwrap_or(0),
                                completion_tokens: s.u64_attr("gen_ai.usage.output_tokens").unwrap_or(0),
                                cached_tokens: s.u64_attr("gen_ai.usage.cache_read.input_tokens").unwrap_or(0),
                            };
                            usage += u;
                            let c = f64_attr(s, "switchyard.cost");
                            cost += c;
                            if !reply.text.trim().is_empty() {
                                last_text = Some(reply.text.clone());
                            }
                            EventKind::ModelReply {
                                call,
                                role: role_of(s),
                                model: model_of(s),
                                text: reply.text,
                                tool_calls: reply.calls,
                                usage: u,
                                cost: c,
                                latency_ms: s.ms(),
                                fault: None,
                                wire: None,
                                first_token_ms: None,
                                capped: None,
                            }
                        }
                    };
                    out.push(ev(run, at, t, kind));
                }
                (Op::Tool, true) => {
                    self.calls += 1;
                    self.counts.tool_calls += 1;
                    tool_calls += 1;
                    call_of.insert(i, (self.calls, step));
                    let kind =
                        EventKind::ToolCall { call: self.calls, tool: tool_name(s), args: tool_args(s), lane: None };
                    out.push(ev(run, step, t, kind));
                }
                (Op::Tool, false) => {
                    let (call, at) = call_of[&i];
                    let outcome = match &s.error {
                        Some(e) => ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, e.clone()) },
                        None => ToolOutcome::Ok {
                            value: s.attr("gen_ai.tool.call.result").map(json_in).unwrap_or(Json::Null),
                        },
                    };
                    let c = f64_attr(s, "switchyard.cost");
                    cost += c;
                    let kind = EventKind::ToolResult {
                        call,
                        tool: tool_name(s),
                        outcome,
                        latency_ms: s.ms(),
                        cost: c,
                        fault: None,
                        filtered: false,
                        lane: None,
                        source: None,
                    };
                    out.push(ev(run, at, t, kind));
                }
                (op, _) => {
                    let e = self.plain(s, op, run, step);
                    out.push(e);
                }
            }
        }

        let answer = head.and_then(output_of_opt).map(|r| r.text).filter(|t| !t.is_empty()).or(last_text);
        let error = head.and_then(|h| h.error.clone());
        let outcome = if !finished {
            RunOutcome::Stopped
        } else {
            head.and_then(|h| h.str_attr("switchyard.outcome"))
                .and_then(|name| {
                    serde_json::from_value(json!({"outcome": name, "error": error.clone().unwrap_or_default()})).ok()
                })
                .unwrap_or_else(|| match &error {
                    Some(e) => RunOutcome::Failed { error: e.clone() },
                    None => RunOutcome::Answered,
                })
        };
        let success = head.and_then(|h| h.attr("switchyard.success")).and_then(Json::as_bool);
        // Switchyard's own count of steps leaves out calls that are not
        // decisions (the evaluator's); another agent's is its model calls.
        let steps = head.and_then(|h| h.u64_attr("switchyard.steps")).map_or(step, |n| n as u32);
        let tool_calls = head.and_then(|h| h.u64_attr("switchyard.tool_calls")).map_or(tool_calls, |n| n as u32);
        let t_end = self.t(end_ns);
        out.push(ev(
            run,
            step,
            t_end,
            EventKind::RunFinished { outcome, answer, success, cost, usage, steps, tool_calls, expect: None },
        ));
        out
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn ev(run: u32, step: u32, t: u64, kind: EventKind) -> Event {
    Event { v: SCHEMA_VERSION, run, step, t, kind }
}

fn f64_attr(s: &InSpan, key: &str) -> f64 {
    s.attr(key).and_then(Json::as_f64).unwrap_or(0.0)
}

fn role_of(s: &InSpan) -> Role {
    s.str_attr("switchyard.role").and_then(Role::parse).unwrap_or(Role::Agent)
}

fn model_of(s: &InSpan) -> String {
    s.str_attr("gen_ai.response.model")
        .or_else(|| s.str_attr("gen_ai.request.model"))
        .or_else(|| s.name.strip_prefix("chat "))
        .unwrap_or("unknown")
        .to_string()
}

fn tool_name(s: &InSpan) -> String {
    s.str_attr("gen_ai.tool.name").or_else(|| s.name.strip_prefix("execute_tool ")).unwrap_or(&s.name).to_string()
}

fn tool_args(s: &InSpan) -> Json {
    s.attr("gen_ai.tool.call.arguments").map(json_in).unwrap_or(Json::Null)
}

/// A JSON value an attribute holds as text, read; text that is not JSON
/// stays text.
fn json_in(v: &Json) -> Json {
    match v {
        Json::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// A messages attribute: a JSON array, or text holding one.
fn message_list(v: &Json) -> Vec<Json> {
    match json_in(v) {
        Json::Array(list) => list,
        _ => Vec::new(),
    }
}

/// One message's parts as text: its text parts, or else what its other
/// parts say (a call, a call's result).
fn parts_text(m: &Json) -> String {
    let parts: &[Json] = m.get("parts").and_then(Json::as_array).map_or(&[], Vec::as_slice);
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|p| p.get("content").and_then(Json::as_str))
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    if let Some(c) = m.get("content").and_then(Json::as_str) {
        return c.to_string();
    }
    let said: Vec<String> = parts
        .iter()
        .map(|p| match p.get("type").and_then(Json::as_str) {
            Some("tool_call") => {
                let name = p.get("name").and_then(Json::as_str).unwrap_or("?");
                let args = p.get("arguments").map(|a| json_in(a).to_string()).unwrap_or_default();
                format!("call {name}({args})")
            }
            Some("tool_call_response") => {
                let result = p.get("result").or_else(|| p.get("response")).map(json_in).unwrap_or(Json::Null);
                match result {
                    Json::String(s) => s,
                    other => other.to_string(),
                }
            }
            _ => p.get("content").and_then(Json::as_str).map(str::to_string).unwrap_or_else(|| p.to_string()),
        })
        .collect();
    said.join("\n")
}

fn speaker(role: &str) -> Speaker {
    match role {
        "system" | "developer" => Speaker::System,
        "assistant" | "model" => Speaker::Assistant,
        "tool" => Speaker::Tool,
        _ => Speaker::User,
    }
}

/// A model call's messages: `gen_ai.input.messages` (with the system
/// instructions first, when they are apart), or the older
/// `gen_ai.prompt.N.role` / `.content` attributes.
fn messages_of(s: &InSpan) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    if let Some(v) = s.attr("gen_ai.input.messages") {
        for m in message_list(v) {
            let role = speaker(m.get("role").and_then(Json::as_str).unwrap_or("user"));
            out.push(Message { role, content: parts_text(&m) });
        }
    } else {
        for n in 0.. {
            let Some(content) = s.str_attr(&format!("gen_ai.prompt.{n}.content")) else { break };
            let role = speaker(s.str_attr(&format!("gen_ai.prompt.{n}.role")).unwrap_or("user"));
            out.push(Message { role, content: content.to_string() });
        }
    }
    if !out.iter().any(|m| m.role == Speaker::System)
        && let Some(v) = s.attr("gen_ai.system_instructions")
    {
        let text = parts_text(&json!({ "parts": message_list(v) }));
        if !text.is_empty() {
            out.insert(0, Message::system(text));
        }
    }
    out
}

fn first_user(messages: &[Message]) -> Option<String> {
    messages.iter().find(|m| m.role == Speaker::User).map(|m| m.content.clone())
}

fn last_user(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find(|m| m.role == Speaker::User).map(|m| m.content.clone())
}

#[derive(Clone, Copy)]
enum Mark {
    Start,
    End,
    Whole,
}

#[derive(Default)]
struct Reply {
    text: String,
    calls: Vec<ToolCallRequest>,
}

fn output_of(s: &InSpan) -> Reply {
    output_of_opt(s).unwrap_or_default()
}

/// A reply's text and calls: `gen_ai.output.messages`, or the older
/// `gen_ai.completion.0.content`.
fn output_of_opt(s: &InSpan) -> Option<Reply> {
    let Some(v) = s.attr("gen_ai.output.messages") else {
        return s.str_attr("gen_ai.completion.0.content").map(|t| Reply { text: t.to_string(), calls: Vec::new() });
    };
    Some(reply_from(message_list(v)))
}

fn input_list(s: &InSpan) -> Vec<Json> {
    s.attr("gen_ai.input.messages").map(message_list).unwrap_or_default()
}

/// Assistant messages' text and calls.
fn reply_from(messages: Vec<Json>) -> Reply {
    let mut reply = Reply::default();
    for m in messages {
        let parts: &[Json] = m.get("parts").and_then(Json::as_array).map_or(&[], Vec::as_slice);
        let mut texts = Vec::new();
        for p in parts {
            match p.get("type").and_then(Json::as_str) {
                Some("text") => texts.extend(p.get("content").and_then(Json::as_str)),
                Some("tool_call") => reply.calls.push(ToolCallRequest {
                    name: p.get("name").and_then(Json::as_str).unwrap_or("?").to_string(),
                    arguments: p.get("arguments").map(json_in).unwrap_or(Json::Null),
                }),
                _ => {}
            }
        }
        if !texts.is_empty() {
            if !reply.text.is_empty() {
                reply.text.push('\n');
            }
            reply.text.push_str(&texts.join("\n"));
        }
    }
    reply
}

impl Counts {
    /// One line for a person: what came, and what was kept as plain spans.
    pub fn said(&self) -> String {
        let n = |count: u64, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
        let mut s = format!(
            "{}: {}, {}, {}, {} and {} kept as plain spans",
            n(self.spans, "span", "spans"),
            n(self.runs, "run", "runs"),
            n(self.model_calls, "model call", "model calls"),
            n(self.tool_calls, "tool call", "tool calls"),
            n(self.other_genai, "other GenAI span", "other GenAI spans"),
            n(self.plain, "span without GenAI attributes", "spans without GenAI attributes"),
        );
        if self.rejected > 0 {
            s.push_str(&format!("; {} refused (ids the protocol does not allow)", self.rejected));
        }
        s
    }
}
