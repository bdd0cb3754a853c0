//! A bridged agent's conversations as the workbench shows them: a tree of
//! threads, each with its calls, tokens, cost and state, and which thread
//! each call and transcript entry belongs to.

use std::collections::HashMap;

use crate::engine::event::{EventKind, ThreadHow};
use crate::model::Usage;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadsView {
    /// By thread number, in the order they began.
    pub list: Vec<ThreadView>,
    of_call: HashMap<u64, u32>,
    /// The thread of each transcript entry (None: the run's own, or not known).
    pub(super) of_entry: Vec<Option<u32>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ThreadView {
    pub id: u32,
    pub name: String,
    pub parent: Option<u32>,
    pub how: ThreadHow,
    pub model_calls: u32,
    pub tool_calls: u32,
    pub usage: Usage,
    pub cost: f64,
    /// Its calls not yet ended.
    pub open: u32,
    pub state: ThreadState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// A call of it is in flight (or waits at its gate).
    Running,
    /// Its last reply asked for tools: the agent runs them.
    InTools,
    /// Its last reply answered without a tool call.
    Answered,
    /// Its last model call failed or was abandoned.
    Failed,
}

impl ThreadHow {
    /// How the thread began, in words, with its parent's name.
    pub fn said(&self, parent: Option<&str>) -> String {
        let parent = parent.unwrap_or("?");
        match self {
            ThreadHow::Conversation => "a new conversation".into(),
            ThreadHow::Fork => format!("a fork of {parent}"),
            ThreadHow::Handoff => format!("handed off by {parent}"),
            ThreadHow::SubAgent { tool } => format!("a sub-agent of {parent}, run by its tool {tool}"),
        }
    }
}

impl ThreadState {
    pub fn label(self) -> &'static str {
        match self {
            ThreadState::Running => "running",
            ThreadState::InTools => "in its tools",
            ThreadState::Answered => "answered",
            ThreadState::Failed => "failed",
        }
    }
}

impl ThreadsView {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn of_call(&self, call: u64) -> Option<u32> {
        self.of_call.get(&call).copied()
    }

    /// The thread of transcript entry `i`.
    pub fn of_entry(&self, i: usize) -> Option<u32> {
        self.of_entry.get(i).copied().flatten()
    }

    pub fn by_name(&self, name: &str) -> Option<&ThreadView> {
        self.list.iter().find(|t| t.name == name)
    }

    /// The threads in tree order (each after its parent, children in the
    /// order they began), with their depth.
    pub fn tree(&self) -> Vec<(usize, &ThreadView)> {
        let mut out = Vec::with_capacity(self.list.len());
        fn walk<'a>(all: &'a [ThreadView], parent: Option<u32>, depth: usize, out: &mut Vec<(usize, &'a ThreadView)>) {
            for t in all.iter().filter(|t| t.parent == parent) {
                out.push((depth, t));
                walk(all, Some(t.id), depth + 1, out);
            }
        }
        walk(&self.list, None, 0, &mut out);
        out
    }

    /// Whether `thread` is `root` or under it.
    pub fn within(&self, thread: u32, root: u32) -> bool {
        let mut at = Some(thread);
        // A parent began before its child: the walk ends.
        while let Some(t) = at {
            if t == root {
                return true;
            }
            at = self.list.get(t as usize).and_then(|v| v.parent).filter(|p| *p < t);
        }
        false
    }

    /// The thread an event belongs to, for the transcript entry it makes.
    pub(super) fn of_event(&self, kind: &EventKind) -> Option<u32> {
        let call = match kind {
            EventKind::ModelCall { call, .. }
            | EventKind::ModelReply { call, .. }
            | EventKind::ModelFailed { call, .. }
            | EventKind::ToolCall { call, .. }
            | EventKind::ToolResult { call, .. }
            | EventKind::ToolsNarrowed { call, .. }
            | EventKind::CallAbandoned { call, .. } => *call,
            EventKind::ThreadOpened { thread, .. } => return Some(*thread),
            _ => return None,
        };
        self.of_call(call)
    }

    pub(super) fn apply(&mut self, kind: &EventKind) {
        match kind {
            // Numbered in order: one out of order (a trace edited by hand) is left out.
            EventKind::ThreadOpened { thread, name, parent, how } if *thread as usize == self.list.len() => {
                self.list.push(ThreadView {
                    id: *thread,
                    name: name.clone(),
                    parent: parent.filter(|p| p < thread),
                    how: how.clone(),
                    model_calls: 0,
                    tool_calls: 0,
                    usage: Usage::default(),
                    cost: 0.0,
                    open: 0,
                    state: ThreadState::Running,
                });
            }
            EventKind::LaneOpened { call, model, thread: Some(thread), .. } => {
                let Some(t) = self.list.get_mut(*thread as usize) else { return };
                self.of_call.insert(*call, *thread);
                t.open += 1;
                if *model {
                    t.model_calls += 1;
                    t.state = ThreadState::Running;
                } else {
                    t.tool_calls += 1;
                }
            }
            EventKind::ModelReply { call, usage, cost, tool_calls, .. } => {
                let Some(t) = self.ended(*call) else { return };
                t.usage += *usage;
                t.cost += cost;
                t.state = if tool_calls.is_empty() { ThreadState::Answered } else { ThreadState::InTools };
            }
            EventKind::ModelFailed { call, .. } => {
                if let Some(t) = self.ended(*call) {
                    t.state = ThreadState::Failed;
                }
            }
            EventKind::CallAbandoned { call, .. } => {
                if let Some(t) = self.ended(*call).filter(|t| t.open == 0 && t.state == ThreadState::Running) {
                    t.state = ThreadState::Failed;
                }
            }
            EventKind::ToolResult { call, .. } => {
                self.ended(*call);
            }
            _ => {}
        }
    }

    fn ended(&mut self, call: u64) -> Option<&mut ThreadView> {
        let t = self.list.get_mut(*self.of_call.get(&call)? as usize)?;
        t.open = t.open.saturating_sub(1);
        Some(t)
    }
}
