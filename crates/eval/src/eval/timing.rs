//! Where a session's time went, from its trace: in the model, in the tools,
//! waiting for the user (paused, stepping, a call waiting for approval) or
//! the pace, in an outside agent's own code between its model calls, or in
//! Switchyard itself (everything else inside the runs:
//! prompts, parsing, the graph, events, the trace). The engine's own overhead per
//! step, set against the model's latency, is the figure that matters.

use serde::Serialize;

use crate::engine::{Event, EventKind};
use crate::model::Role;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSplit {
    /// Inside runs, from RunStarted to RunFinished.
    pub runs_ms: u64,
    pub model_ms: u64,
    pub model_calls: u64,
    /// Wall time with at least one tool call running (concurrent lanes counted once).
    pub tool_ms: u64,
    /// The user's time: the gate closed (paused, stepping, at a breakpoint)
    /// or a call waiting for the user's approval or review, when no model
    /// or tool call was running.
    pub user_ms: u64,
    /// The pace's waits before calls (`--pace`, `+`/`-`), estimated from
    /// the pace in force and the gap before each call.
    pub pace_ms: u64,
    /// An outside agent's own time: from its start to its first model
    /// call, between a reply and its next call, and from its last reply to
    /// its exit, when neither the user nor the pace held it.
    pub agent_ms: u64,
    /// Decision steps (a plan step for rewoo).
    pub steps: u64,
}

impl TimeSplit {
    pub fn from_events(events: &[Event]) -> Self {
        let mut t = TimeSplit::default();
        let mut run_start = None;
        let mut open: Vec<(u64, u64)> = Vec::new();
        let mut busy: Vec<(u64, u64)> = Vec::new();
        let mut tools: Vec<(u64, u64)> = Vec::new();
        let mut user: Vec<(u64, u64)> = Vec::new();
        let mut model_open: Vec<(u64, u64)> = Vec::new();
        let mut reviews: Vec<(u64, u64)> = Vec::new();
        let mut paused_at: Option<u64> = None;
        let mut paced_calls: Vec<u64> = Vec::new();
        let mut pace = 0u64;
        let mut last_t = 0u64;
        let mut agent_since: Option<u64> = None;
        let mut agent: Vec<(u64, u64)> = Vec::new();
        let mut agent_pace = 0u64;
        for e in events {
            match &e.kind {
                EventKind::SessionStarted { pace_ms, .. } => pace = *pace_ms,
                EventKind::PaceChanged { ms } => pace = *ms,
                EventKind::RunStarted { .. } => run_start = Some(e.t),
                EventKind::AgentStarted { .. } => agent_since = Some(e.t),
                EventKind::AgentExited { .. } => {
                    agent.extend(agent_since.take().map(|s| (s, e.t.max(s))));
                }
                EventKind::RunFinished { steps, .. } => {
                    agent_since = None;
                    // A call still waiting for the user waited until the run ended (stopped).
                    user.extend(reviews.drain(..).map(|(_, s)| (s, e.t.max(s))));
                    if let Some(s) = run_start.take() {
                        t.runs_ms += e.t.saturating_sub(s);
                    }
                    t.steps += u64::from(*steps);
                }
                EventKind::Paused => paused_at = paused_at.or(Some(e.t)),
                EventKind::Resumed => {
                    if let Some(s) = paused_at.take() {
                        user.push((s, e.t.max(s)));
                    }
                }
                EventKind::ApprovalRequested { call, lane: None, .. } => {
                    // A single call waits for the pace before it asks for approval.
                    t.pace_ms += paced(pace, paused_at, last_t, e.t);
                    paced_calls.push(*call);
                    reviews.push((*call, e.t));
                }
                EventKind::ApprovalRequested { call, .. }
                | EventKind::ReplyReview { call, .. }
                | EventKind::ResultReview { call, .. } => reviews.push((*call, e.t)),
                EventKind::ReviewPassed { call, .. }
                | EventKind::CallEdited { call, .. }
                | EventKind::CallRejected { call, .. }
                | EventKind::ResultEdited { call, .. }
                | EventKind::ReplyEdited { call, .. } => {
                    if let Some(i) = reviews.iter().position(|(c, _)| c == call) {
                        let (_, s) = reviews.swap_remove(i);
                        user.push((s, e.t.max(s)));
                    }
                }
                EventKind::ModelCall { call, role, .. } => {
                    model_open.push((*call, e.t));
                    let waited = paced(pace, paused_at, last_t, e.t);
                    t.pace_ms += waited;
                    if *role == Role::Agent {
                        agent_pace += waited;
                        agent.extend(agent_since.take().map(|s| (s, e.t.max(s))));
                    }
                }
                EventKind::ModelReply { call, latency_ms, role, .. }
                | EventKind::ModelFailed { call, latency_ms, role, .. } => {
                    if *role == Role::Agent {
                        agent_since = Some(e.t);
                    }
                    t.model_ms += latency_ms;
                    t.model_calls += 1;
                    if let Some(i) = model_open.iter().position(|(c, _)| c == call) {
                        let (_, s) = model_open.swap_remove(i);
                        busy.push((s, e.t.max(s)));
                    }
                }
                EventKind::ToolCall { call, lane, .. } => {
                    // A step's lanes wait for the pace once, before the first.
                    let asked = paced_calls.contains(call);
                    if !asked && (lane.is_none() || open.is_empty()) {
                        t.pace_ms += paced(pace, paused_at, last_t, e.t);
                    }
                    open.push((*call, e.t));
                }
                EventKind::ToolResult { call, .. } => {
                    if let Some(i) = open.iter().position(|(c, _)| c == call) {
                        let (_, start) = open.swap_remove(i);
                        tools.push((start, e.t.max(start)));
                    }
                }
                _ => {}
            }
            last_t = e.t;
        }
        if let Some(s) = paused_at {
            user.push((s, last_t.max(s)));
        }
        busy.extend(tools.iter().copied());
        t.tool_ms = union_length(tools);
        t.user_ms = union_length(user.clone()).saturating_sub(overlap(&user, &busy));
        t.agent_ms = union_length(agent.clone()).saturating_sub(overlap(&agent, &user)).saturating_sub(agent_pace);
        t
    }

    /// Time inside runs spent neither waiting for a model, a tool, the
    /// user nor the pace.
    pub fn engine_ms(&self) -> u64 {
        self.runs_ms.saturating_sub(self.model_ms + self.tool_ms + self.user_ms + self.pace_ms + self.agent_ms)
    }

    /// One line for a person.
    pub fn describe(&self) -> String {
        let per_step = if self.steps == 0 { 0.0 } else { self.engine_ms() as f64 / self.steps as f64 };
        let per_call = if self.model_calls == 0 { 0.0 } else { self.model_ms as f64 / self.model_calls as f64 };
        let mut waits = String::new();
        if self.user_ms > 0 {
            waits.push_str(&format!(", waiting for you {:.1} s", self.user_ms as f64 / 1000.0));
        }
        if self.pace_ms > 0 {
            waits.push_str(&format!(", the pace {:.1} s", self.pace_ms as f64 / 1000.0));
        }
        if self.agent_ms > 0 {
            waits.push_str(&format!(", the agent itself {:.1} s", self.agent_ms as f64 / 1000.0));
        }
        format!(
            "time in runs {:.1} s: models {:.1} s ({} calls, {:.0} ms each), tools {:.1} s{waits}, switchyard {:.2} s \
             ({per_step:.1} ms per step)",
            self.runs_ms as f64 / 1000.0,
            self.model_ms as f64 / 1000.0,
            self.model_calls,
            per_call,
            self.tool_ms as f64 / 1000.0,
            self.engine_ms() as f64 / 1000.0,
        )
    }
}

/// The pace's wait before a call at `t`: the pace in force, at most the
/// gap since the event before; none while the gate is closed (a step does
/// not wait for the pace).
fn paced(pace: u64, paused_at: Option<u64>, last_t: u64, t: u64) -> u64 {
    if pace == 0 || paused_at.is_some() { 0 } else { pace.min(t.saturating_sub(last_t)) }
}

/// How much of the union of `a` lies within the union of `b`.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (a, b) = (merged(a.to_vec()), merged(b.to_vec()));
    let mut total = 0;
    for (s, e) in &a {
        for (bs, be) in &b {
            let (lo, hi) = ((*s).max(*bs), (*e).min(*be));
            if hi > lo {
                total += hi - lo;
            }
        }
    }
    total
}

fn merged(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn union_length(v: Vec<(u64, u64)>) -> u64 {
    merged(v).iter().map(|(s, e)| e - s).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_tool_calls_count_once() {
        assert_eq!(union_length(vec![(0, 10), (5, 20), (30, 35)]), 25);
        assert_eq!(union_length(vec![]), 0);
    }

    fn ev(t: u64, kind: EventKind) -> Event {
        Event { v: crate::engine::event::SCHEMA_VERSION, run: 1, step: 1, t, kind }
    }

    #[test]
    fn the_user_s_and_the_pace_s_time_are_not_switchyard_s() {
        use crate::engine::event::{RunOutcome, ToolOutcome};
        use crate::model::Usage;
        let events = vec![
            ev(0, EventKind::PaceChanged { ms: 400 }),
            ev(0, EventKind::RunStarted { task_id: "t".into(), task: "q".into(), gold: None, index: 1, total: 1 }),
            // The pace's wait, then a model call of 100 ms.
            ev(
                400,
                EventKind::ModelCall {
                    call: 1,
                    role: Role::Actor,
                    model: "m".into(),
                    simulated: true,
                    messages: vec![],
                    wire: None,
                },
            ),
            ev(
                500,
                EventKind::ModelReply {
                    call: 1,
                    role: Role::Actor,
                    model: "m".into(),
                    text: String::new(),
                    tool_calls: vec![],
                    usage: Usage::default(),
                    cost: 0.0,
                    latency_ms: 100,
                    fault: None,
                    wire: None,
                    first_token_ms: None,
                    capped: None,
                },
            ),
            // Paused for 5 s; a call waits 3 s for approval.
            ev(510, EventKind::Paused),
            ev(5510, EventKind::Resumed),
            ev(
                5600,
                EventKind::ApprovalRequested {
                    call: 2,
                    tool: "x".into(),
                    args: serde_json::json!({}),
                    parameters: serde_json::json!({}),
                    lane: None,
                },
            ),
            ev(8600, EventKind::ReviewPassed { call: 2, what: crate::engine::debug::ReviewKind::Call, auto: false }),
            ev(8610, EventKind::ToolCall { call: 2, tool: "x".into(), args: serde_json::json!({}), lane: None }),
            ev(
                8710,
                EventKind::ToolResult {
                    call: 2,
                    tool: "x".into(),
                    outcome: ToolOutcome::Ok { value: serde_json::json!(1) },
                    latency_ms: 100,
                    cost: 0.0,
                    fault: None,
                    filtered: false,
                    lane: None,
                    source: None,
                },
            ),
            ev(
                8720,
                EventKind::RunFinished {
                    outcome: RunOutcome::Answered,
                    answer: None,
                    success: None,
                    cost: 0.0,
                    usage: Usage::default(),
                    steps: 1,
                    tool_calls: 1,
                    expect: None,
                },
            ),
        ];
        let t = TimeSplit::from_events(&events);
        assert_eq!((t.model_ms, t.tool_ms, t.user_ms), (100, 100, 8000));
        assert_eq!(t.pace_ms, 490, "400 before the model call, 90 (the gap) before the call asked for approval");
        assert_eq!(t.engine_ms(), 8720 - 100 - 100 - 8000 - 490);
        assert!(t.describe().contains("waiting for you 8.0 s, the pace 0.5 s"), "{}", t.describe());
    }

    #[test]
    fn an_outside_agent_s_own_time_is_not_switchyard_s() {
        use crate::engine::event::RunOutcome;
        use crate::model::Usage;
        let call = |n: u64| EventKind::ModelCall {
            call: n,
            role: Role::Agent,
            model: "m".into(),
            simulated: true,
            messages: vec![],
            wire: None,
        };
        let reply = |n: u64| EventKind::ModelReply {
            call: n,
            role: Role::Agent,
            model: "m".into(),
            text: String::new(),
            tool_calls: vec![],
            usage: Usage::default(),
            cost: 0.0,
            latency_ms: 100,
            fault: None,
            wire: None,
            first_token_ms: None,
            capped: None,
        };
        let events = vec![
            ev(0, EventKind::RunStarted { task_id: "t".into(), task: "q".into(), gold: None, index: 1, total: 1 }),
            ev(10, EventKind::AgentStarted { command: "a".into(), pid: 1, argv: vec!["a".into()], answer_file: None }),
            // The agent starts up for 1 s, calls, works 2 s, is paused 1 s
            // before its next call, then exits 0.5 s after the last reply.
            ev(1010, call(1)),
            ev(1110, reply(1)),
            ev(2110, EventKind::Paused),
            ev(3110, EventKind::Resumed),
            ev(4110, call(2)),
            ev(4210, reply(2)),
            ev(4710, EventKind::AgentExited { code: Some(0), error: None, stderr_tail: vec![] }),
            ev(
                4720,
                EventKind::RunFinished {
                    outcome: RunOutcome::Answered,
                    answer: None,
                    success: None,
                    cost: 0.0,
                    usage: Usage::default(),
                    steps: 2,
                    tool_calls: 0,
                    expect: None,
                },
            ),
        ];
        let t = TimeSplit::from_events(&events);
        assert_eq!((t.model_ms, t.user_ms, t.agent_ms), (200, 1000, 1000 + 2000 + 500));
        assert_eq!(t.engine_ms(), 4720 - 200 - 1000 - 3500);
        assert!(t.describe().contains("the agent itself 3.5 s"), "{}", t.describe());
    }
}
