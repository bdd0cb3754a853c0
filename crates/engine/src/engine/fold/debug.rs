//! The debugger's part of the fold: the approval policy, what waits for the
//! user's decision, the breakpoints with their hit counts; and the line each
//! of its events adds to the transcript, live and in a replay alike.

use serde_json::Value;

use crate::engine::debug::{ApprovalPolicy, Condition, ReviewKind};
use crate::engine::event::{EventKind, ToolOutcome};
use crate::model::{Role, ToolCallRequest};

/// A value shown in a transcript line is cut to this many characters.
const SHOWN: usize = 240;

/// What waits for the user's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Pending {
    Call { call: u64, tool: String, args: Value, parameters: Value, lane: Option<u32> },
    Result { call: u64, tool: String, result: ToolOutcome },
    Reply { call: u64, role: Role, text: String, tool_calls: Vec<ToolCallRequest> },
}

impl Pending {
    pub fn call(&self) -> u64 {
        match self {
            Pending::Call { call, .. } | Pending::Result { call, .. } | Pending::Reply { call, .. } => *call,
        }
    }

    pub fn kind(&self) -> ReviewKind {
        match self {
            Pending::Call { .. } => ReviewKind::Call,
            Pending::Result { .. } => ReviewKind::Result,
            Pending::Reply { .. } => ReviewKind::Reply,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BreakpointRow {
    pub id: u32,
    pub condition: Condition,
    pub enabled: bool,
    pub hits: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugView {
    pub policy: ApprovalPolicy,
    pub pending: Option<Pending>,
    pub breakpoints: Vec<BreakpointRow>,
    /// The last breakpoint hit: its id and what held.
    pub last_hit: Option<(u32, String)>,
}

impl DebugView {
    /// Folds one event in; returns the transcript line it adds, if any.
    pub fn apply(&mut self, kind: &EventKind) -> Option<String> {
        match kind {
            EventKind::ApprovalSet { policy } => {
                self.policy = policy.clone();
                Some(format!("approvals: {policy}"))
            }
            EventKind::ApprovalRequested { call, tool, args, parameters, lane } => {
                self.pending = Some(Pending::Call {
                    call: *call,
                    tool: tool.clone(),
                    args: args.clone(),
                    parameters: parameters.clone(),
                    lane: *lane,
                });
                Some(format!("call {call} {tool} {} waits for your approval", shown(args)))
            }
            EventKind::ResultReview { call, tool, result } => {
                self.pending = Some(Pending::Result { call: *call, tool: tool.clone(), result: result.clone() });
                Some(format!("the result of call {call} ({tool}) waits for your review"))
            }
            EventKind::ReplyReview { call, role, text, tool_calls } => {
                let (text, tool_calls) = (text.clone(), tool_calls.clone());
                self.pending = Some(Pending::Reply { call: *call, role: *role, text, tool_calls });
                Some(format!("the {role}'s reply (call {call}) waits for your review"))
            }
            EventKind::ReviewPassed { call, what, auto } => {
                self.settle(*call);
                let done = match what {
                    ReviewKind::Call => format!("call {call} approved"),
                    ReviewKind::Result => format!("the result of call {call} kept"),
                    ReviewKind::Reply => format!("the reply of call {call} kept"),
                };
                Some(if *auto { format!("{done}: nobody was left to decide") } else { done })
            }
            EventKind::CallEdited { call, tool, before, after } => {
                self.settle(*call);
                Some(format!("call {call} {tool}: arguments edited {} → {}", shown(before), shown(after)))
            }
            EventKind::CallRejected { call, tool, args, note } => {
                self.settle(*call);
                Some(format!("call {call} {tool} {} rejected: {note}", shown(args)))
            }
            EventKind::ResultEdited { call, tool, before, after } => {
                self.settle(*call);
                let before = match before {
                    ToolOutcome::Ok { value } => shown(value),
                    ToolOutcome::Err { error } => format!("error {}", crate::text::ellipsis(&error.message, SHOWN)),
                };
                Some(format!("the result of call {call} ({tool}) edited: {before} → {}", shown(after)))
            }
            EventKind::ReplyEdited { call, role, before, after } => {
                self.settle(*call);
                let cut = |s: &str| crate::text::ellipsis(&crate::text::one_line(s), SHOWN);
                Some(format!("the {role}'s reply (call {call}) edited: «{}» → «{}»", cut(before), cut(after)))
            }
            EventKind::BreakpointSet { id, condition, enabled } => {
                match self.breakpoints.iter_mut().find(|b| b.id == *id) {
                    Some(b) => b.enabled = *enabled,
                    None => self.breakpoints.push(BreakpointRow {
                        id: *id,
                        condition: condition.clone(),
                        enabled: *enabled,
                        hits: 0,
                    }),
                }
                let word = if *enabled { "on" } else { "off" };
                Some(format!("breakpoint #{id} {condition}: {word}"))
            }
            EventKind::BreakpointCleared { id } => {
                self.breakpoints.retain(|b| b.id != *id);
                Some(format!("breakpoint #{id} cleared"))
            }
            EventKind::BreakpointHit { id, condition, detail } => {
                if let Some(b) = self.breakpoints.iter_mut().find(|b| b.id == *id) {
                    b.hits += 1;
                }
                self.last_hit = Some((*id, detail.clone()));
                Some(format!("breakpoint #{id} ({condition}) hit: {detail}"))
            }
            // Whatever waited was cut short with its run.
            EventKind::RunFinished { .. } | EventKind::SessionFinished { .. } => {
                self.pending = None;
                None
            }
            _ => None,
        }
    }

    fn settle(&mut self, call: u64) {
        if self.pending.as_ref().is_some_and(|p| p.call() == call) {
            self.pending = None;
        }
    }
}

fn shown(v: &Value) -> String {
    crate::text::ellipsis(&serde_json::to_string(v).unwrap_or_default(), SHOWN)
}
