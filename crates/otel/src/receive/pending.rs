//! Spans waiting for the rest of their trace. An SDK exports a span when it
//! ends, so a trace's root comes last: a trace is read when its root has
//! arrived, when nothing of it has come for a while (a root that lives in
//! another process never comes), when too many spans wait (the oldest trace
//! goes first), or when the receiver stops. What is read is forgotten:
//! memory holds only the traces still open.

use std::collections::HashMap;

use super::decode::InSpan;

/// A trace ready to be read: its spans, and whether its root arrived.
#[derive(Debug)]
pub struct Ready {
    pub spans: Vec<InSpan>,
    pub rooted: bool,
}

#[derive(Debug)]
struct Open {
    spans: Vec<InSpan>,
    /// When a span of it last arrived (the caller's clock, ms).
    seen_ms: u64,
    /// Arrival order, so the oldest goes first when too many wait.
    order: u64,
}

#[derive(Debug)]
pub struct Pending {
    traces: HashMap<u128, Open>,
    waiting: usize,
    cap: usize,
    next: u64,
}

impl Pending {
    /// `cap`: at most this many spans wait at once.
    pub fn new(cap: usize) -> Pending {
        Pending { traces: HashMap::new(), waiting: 0, cap: cap.max(1), next: 0 }
    }

    /// Spans waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Traces open now.
    pub fn open(&self) -> usize {
        self.traces.len()
    }

    /// A request's spans, at `now_ms`: the traces they completed, and
    /// those pushed out to keep within the cap, in the order they became ready.
    pub fn push(&mut self, spans: Vec<InSpan>, now_ms: u64) -> Vec<Ready> {
        let mut roots = Vec::new();
        for s in spans {
            let root = s.parent.is_none();
            let trace = s.trace;
            let next = &mut self.next;
            let open = self.traces.entry(trace).or_insert_with(|| {
                *next += 1;
                Open { spans: Vec::new(), seen_ms: now_ms, order: *next }
            });
            open.spans.push(s);
            open.seen_ms = now_ms;
            self.waiting += 1;
            if root && !roots.contains(&trace) {
                roots.push(trace);
            }
        }
        let mut ready: Vec<Ready> = roots.into_iter().filter_map(|t| self.take(t, true)).collect();
        while self.waiting > self.cap {
            let Some(oldest) = self.traces.iter().min_by_key(|(_, o)| o.order).map(|(t, _)| *t) else { break };
            ready.extend(self.take(oldest, false));
        }
        ready
    }

    /// The traces nothing has come for in `idle_ms`.
    pub fn expire(&mut self, now_ms: u64, idle_ms: u64) -> Vec<Ready> {
        let mut idle: Vec<(u64, u128)> = self
            .traces
            .iter()
            .filter(|(_, o)| now_ms.saturating_sub(o.seen_ms) >= idle_ms)
            .map(|(t, o)| (o.order, *t))
            .collect();
        idle.sort_unstable();
        idle.into_iter().filter_map(|(_, t)| self.take(t, false)).collect()
    }

    /// Every trace still open, oldest first.
    pub fn drain(&mut self) -> Vec<Ready> {
        self.expire(u64::MAX, 0)
    }

    fn take(&mut self, trace: u128, rooted: bool) -> Option<Ready> {
        let open = self.traces.remove(&trace)?;
        self.waiting -= open.spans.len();
        Some(Ready { spans: open.spans, rooted })
    }
}
