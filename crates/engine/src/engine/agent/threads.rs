//! The conversations one bridged agent holds at once, told apart from the
//! wire: a request whose messages repeat an earlier request's and the reply
//! it was given carries that thread on; a request that repeats what its
//! thread had already carried on from forks it; one that repeats a thread's
//! history under other instructions is a handoff; anything else begins a
//! thread of its own (a sub-agent's, when it began while a thread waited on
//! one of the agent's own tools and offers other tools than that thread).
//! Pure bookkeeping: the engine asks and emits.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::engine::event::ThreadHow;
use crate::model::ChatRequest;
use crate::model::dialect::conversation::{MessageKey, extend, prefixes, request_keys};

/// A model request, as threads read it.
pub(in crate::engine) struct Shape {
    /// Running hashes of its messages (`full[i]`: the first i + 1).
    full: Vec<u64>,
    /// The same without system messages.
    bare: Vec<u64>,
    /// Its tool names, sorted, hashed: a sub-agent offers others.
    pub(in crate::engine) tools: u64,
}

impl Shape {
    /// A bridged agent's request as threads read it, from its body.
    pub(in crate::engine) fn of(req: &ChatRequest) -> Option<Shape> {
        let chat = req.wire.as_ref()?.to_chat().ok()?;
        let mut names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        let mut h = DefaultHasher::new();
        names.hash(&mut h);
        Some(Shape::new(&request_keys(&chat), h.finish()))
    }

    pub(in crate::engine) fn new(keys: &[MessageKey], tools: u64) -> Shape {
        Shape {
            full: prefixes(keys.iter().copied()),
            bare: prefixes(keys.iter().copied().filter(|k| !k.system)),
            tools,
        }
    }
}

/// Where a request goes: its thread, and the thread's start when it is new.
pub(in crate::engine) struct Placed {
    pub(in crate::engine) thread: u32,
    pub(in crate::engine) opened: Option<Opened>,
    /// The own call (by call number) taken for this sub-agent's launcher.
    pub(in crate::engine) launched_by: Option<u64>,
}

pub(in crate::engine) struct Opened {
    pub(in crate::engine) name: String,
    pub(in crate::engine) parent: Option<u32>,
    pub(in crate::engine) how: ThreadHow,
}

/// One of the agent's own tool calls running when a new conversation
/// began (and not yet taken for another's): its call, thread and tool.
pub(in crate::engine) struct Launcher {
    pub(in crate::engine) call: u64,
    pub(in crate::engine) thread: u32,
    pub(in crate::engine) tool: String,
}

#[derive(Default)]
pub(in crate::engine) struct Threads {
    list: Vec<Thread>,
    /// Every history a thread held after a reply, to that thread.
    tails: HashMap<u64, u32>,
    /// The same, without system messages.
    bare_tails: HashMap<u64, u32>,
    /// Model calls not yet answered.
    calls: HashMap<u64, InCall>,
}

struct Thread {
    name: String,
    /// Always an earlier thread: a walk up ends.
    parent: Option<u32>,
    /// Its history after its last reply, and without system messages.
    tail: Option<(u64, u64)>,
    /// A call has carried `tail` on already: another that does forks.
    extended: bool,
    in_flight: u32,
    /// Its first request while none was answered: a retry of it is the same thread.
    first: Option<u64>,
    tools: u64,
    /// The agent its last reply handed off to (`transfer_to_NAME`).
    handoff: Option<String>,
}

struct InCall {
    thread: u32,
    full: u64,
    bare: u64,
}

impl Threads {
    pub(in crate::engine) fn name(&self, thread: u32) -> Option<&str> {
        self.list.get(thread as usize).map(|t| t.name.as_str())
    }

    /// Whether `thread` is the thread named `name` or one begun under it.
    pub(in crate::engine) fn within(&self, thread: u32, name: &str) -> bool {
        let mut at = Some(thread);
        while let Some(t) = at.and_then(|t| self.list.get(t as usize)) {
            if t.name == name {
                return true;
            }
            at = t.parent;
        }
        false
    }

    pub(in crate::engine) fn tools(&self, thread: u32) -> Option<u64> {
        self.list.get(thread as usize).map(|t| t.tools)
    }

    /// Model call `call` arrived with request `shape`, named `named` by the
    /// agent (`X-Switchyard-Agent`), while the `running` own calls ran
    /// (earliest first): a new conversation is the sub-agent of the first
    /// whose thread offers other tools.
    pub(in crate::engine) fn place(
        &mut self,
        call: u64,
        shape: &Shape,
        named: Option<&str>,
        running: &[Launcher],
    ) -> Placed {
        let (full, bare) = (shape.full.last().copied().unwrap_or(0), shape.bare.last().copied().unwrap_or(0));
        let placed = self.find(shape, named, running);
        let t = &mut self.list[placed.thread as usize];
        t.in_flight += 1;
        self.calls.insert(call, InCall { thread: placed.thread, full, bare });
        placed
    }

    fn find(&mut self, shape: &Shape, named: Option<&str>, running: &[Launcher]) -> Placed {
        let carried = shape.full.iter().rev().find_map(|h| self.tails.get(h).map(|t| (*t, *h)));
        if let Some((t, h)) = carried {
            let thread = &mut self.list[t as usize];
            if thread.tail.map(|(full, _)| full) == Some(h) && !thread.extended {
                thread.extended = true;
                return Placed { thread: t, opened: None, launched_by: None };
            }
            let name = named.map_or_else(|| format!("{}/fork", thread.name), str::to_string);
            return self.open(name, Some(t), ThreadHow::Fork, shape.tools, None);
        }
        if let Some(&t) = shape.bare.iter().rev().find_map(|h| self.bare_tails.get(h)) {
            let from = &self.list[t as usize];
            let name = named
                .map(str::to_string)
                .or_else(|| from.handoff.clone())
                .unwrap_or_else(|| format!("{}/handoff", from.name));
            return self.open(name, Some(t), ThreadHow::Handoff, shape.tools, None);
        }
        let full = shape.full.last().copied();
        let retried = self.list.iter().position(|t| t.tail.is_none() && t.in_flight == 0 && t.first == full);
        if let Some(t) = retried.filter(|_| full.is_some()) {
            return Placed { thread: t as u32, opened: None, launched_by: None };
        }
        match running.iter().find(|l| self.tools(l.thread) != Some(shape.tools)) {
            Some(l) => {
                let name = named.unwrap_or(&l.tool).to_string();
                let how = ThreadHow::SubAgent { tool: l.tool.clone() };
                let mut placed = self.open(name, Some(l.thread), how, shape.tools, full);
                placed.launched_by = Some(l.call);
                placed
            }
            None => {
                let name = named.map_or_else(|| format!("t{}", self.list.len() + 1), str::to_string);
                self.open(name, None, ThreadHow::Conversation, shape.tools, full)
            }
        }
    }

    fn open(&mut self, name: String, parent: Option<u32>, how: ThreadHow, tools: u64, first: Option<u64>) -> Placed {
        let name = self.unique(name);
        let thread = self.list.len() as u32;
        let extended = matches!(how, ThreadHow::Fork | ThreadHow::Handoff);
        self.list.push(Thread {
            name: name.clone(),
            parent,
            tail: None,
            extended,
            in_flight: 0,
            first,
            tools,
            handoff: None,
        });
        Placed { thread, opened: Some(Opened { name, parent, how }), launched_by: None }
    }

    /// `name`, or `name#2`, `name#3`… when a thread has it already.
    fn unique(&self, name: String) -> String {
        let taken = |n: &str| self.list.iter().any(|t| t.name == n);
        if !taken(&name) {
            return name;
        }
        (2..).map(|i| format!("{name}#{i}")).find(|n| !taken(n)).unwrap_or(name)
    }

    /// The thread of call `call`, while it is in flight.
    pub(in crate::engine) fn of_call(&self, call: u64) -> Option<u32> {
        self.calls.get(&call).map(|c| c.thread)
    }

    /// Call `call` was answered with `reply` (the agent's next request of
    /// the thread repeats it); `handoff`: the agent it hands off to.
    pub(in crate::engine) fn answered(&mut self, call: u64, reply: Option<MessageKey>, handoff: Option<String>) {
        let Some(c) = self.calls.remove(&call) else { return };
        let t = &mut self.list[c.thread as usize];
        t.in_flight = t.in_flight.saturating_sub(1);
        let Some(reply) = reply else { return };
        let tail = (extend(c.full, reply), extend(c.bare, reply));
        (t.tail, t.extended, t.first, t.handoff) = (Some(tail), false, None, handoff);
        self.tails.insert(tail.0, c.thread);
        self.bare_tails.insert(tail.1, c.thread);
    }

    /// Call `call` failed or was abandoned: its thread was not carried on.
    pub(in crate::engine) fn dropped(&mut self, call: u64) {
        let Some(c) = self.calls.remove(&call) else { return };
        let t = &mut self.list[c.thread as usize];
        t.in_flight = t.in_flight.saturating_sub(1);
        if t.in_flight == 0 {
            t.extended = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str, system: bool) -> MessageKey {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        MessageKey { hash: h.finish(), system }
    }

    fn shape(messages: &[&str]) -> Shape {
        let keys: Vec<MessageKey> = messages.iter().map(|m| key(m, m.starts_with("sys:"))).collect();
        Shape::new(&keys, 7)
    }

    const NONE: &[Launcher] = &[];

    #[test]
    fn a_request_that_repeats_a_reply_carries_its_thread_on() {
        let mut th = Threads::default();
        let a = th.place(1, &shape(&["sys:x", "u:a"]), None, NONE);
        let b = th.place(2, &shape(&["sys:x", "u:b"]), None, NONE);
        assert_eq!((a.thread, b.thread), (0, 1));
        assert_eq!(th.name(1), Some("t2"));
        th.answered(1, Some(key("r:a", false)), None);
        th.answered(2, Some(key("r:b", false)), None);
        let a2 = th.place(3, &shape(&["sys:x", "u:a", "r:a", "tool:1"]), None, NONE);
        assert_eq!((a2.thread, a2.opened.is_none()), (0, true));
        // Another request carrying on from the same reply forks it.
        let fork = th.place(4, &shape(&["sys:x", "u:a", "r:a", "tool:other"]), None, NONE);
        let opened = fork.opened.expect("a new thread");
        assert_eq!((opened.name.as_str(), opened.parent, opened.how), ("t1/fork", Some(0), ThreadHow::Fork));
    }

    #[test]
    fn a_history_under_other_instructions_is_a_handoff() {
        let mut th = Threads::default();
        th.place(1, &shape(&["sys:triage", "u:q"]), Some("triage"), NONE);
        th.answered(1, Some(key("r:transfer", false)), Some("billing".into()));
        let b = th.place(2, &shape(&["sys:billing", "u:q", "r:transfer", "tool:ok"]), None, NONE);
        let opened = b.opened.expect("a new thread");
        assert_eq!((opened.name.as_str(), opened.parent, opened.how), ("billing", Some(0), ThreadHow::Handoff));
    }

    #[test]
    fn a_conversation_begun_while_a_tool_ran_is_a_sub_agent_unless_it_is_a_sibling() {
        let mut th = Threads::default();
        th.place(1, &shape(&["u:plan"]), None, NONE);
        let launcher = &[Launcher { call: 1, thread: 0, tool: "research".into() }];
        let mut sub = shape(&["sys:researcher", "u:find"]);
        sub.tools = 9;
        let placed = th.place(2, &sub, None, launcher);
        assert_eq!(placed.launched_by, Some(1));
        let s = placed.opened.expect("a new thread");
        assert_eq!((s.name.as_str(), s.parent), ("research", Some(0)));
        assert_eq!(s.how, ThreadHow::SubAgent { tool: "research".into() });
        // Same tools as the waiting thread: a sibling conversation.
        let sibling = th.place(3, &shape(&["u:other"]), None, launcher).opened.expect("a new thread");
        assert_eq!((sibling.parent, sibling.how), (None, ThreadHow::Conversation));
    }

    #[test]
    fn a_retry_stays_in_its_thread_and_names_are_unique() {
        let mut th = Threads::default();
        th.place(1, &shape(&["u:a"]), Some("w"), NONE);
        th.dropped(1);
        assert!(th.place(2, &shape(&["u:a"]), Some("w"), NONE).opened.is_none(), "a retry");
        let again = th.place(3, &shape(&["u:b"]), Some("w"), NONE).opened.unwrap();
        assert_eq!(again.name, "w#2");
        th.answered(2, Some(key("r", false)), None);
        th.dropped(4);
        // A failed continuation leaves the thread to be carried on again.
        th.place(5, &shape(&["u:a", "r", "u:more"]), None, NONE);
        th.dropped(5);
        assert!(th.place(6, &shape(&["u:a", "r", "u:more"]), None, NONE).opened.is_none());
    }
}
