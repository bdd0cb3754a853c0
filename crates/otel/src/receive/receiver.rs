//! The receiving side's state: a body in, the events it completed out.

use super::decode::{self, DecodeError, Encoding};
use super::genai::{self, Counts};
use super::pending;
use crate::engine::event::Event;

/// Spans that may wait for the rest of their trace at once, by default:
/// past this the oldest trace is read as it is.
pub const WAITING_CAP: usize = 200_000;
/// How long a trace may go without a span before it is read as it is, by
/// default (its root may live in another process and never come).
pub const IDLE_MS: u64 = 60_000;

/// The receiving side's state: a pure function of the bodies it is given
/// and the times it is told, so tests and benches drive it without HTTP.
#[derive(Debug)]
pub struct Receiver {
    session: genai::Session,
    pending: pending::Pending,
    idle_ms: u64,
}

/// A request that was read: the events it completed, and how many of its
/// spans were refused (bad ids), said back as the protocol's partial success.
#[derive(Debug, Default)]
pub struct Accepted {
    pub events: Vec<Event>,
    pub rejected: u64,
}

impl Receiver {
    /// The receiver, and the session's first event.
    pub fn new(cap: usize, idle_ms: u64) -> (Receiver, Event) {
        let session = genai::Session::default();
        let first = session.started();
        (Receiver { session, pending: pending::Pending::new(cap), idle_ms }, first)
    }

    /// A request's body, at `now_ms` on the caller's clock.
    pub fn receive(
        &mut self,
        body: &[u8],
        encoding: Encoding,
        content_encoding: Option<&str>,
        now_ms: u64,
    ) -> Result<Accepted, DecodeError> {
        let decoded = decode::decode(body, encoding, content_encoding)?;
        self.session.counts.rejected += decoded.rejected;
        let ready = self.pending.push(decoded.spans, now_ms);
        Ok(Accepted { events: self.read(ready), rejected: decoded.rejected })
    }

    /// Traces that have waited too long without a span, read as they are.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Event> {
        let ready = self.pending.expire(now_ms, self.idle_ms);
        self.read(ready)
    }

    /// The end: every trace still open, read as it is, and the session's
    /// last event.
    pub fn finish(&mut self, stopped: bool) -> Vec<Event> {
        let ready = self.pending.drain();
        let mut out = self.read(ready);
        out.push(self.session.finished(stopped));
        out
    }

    pub fn counts(&self) -> &Counts {
        &self.session.counts
    }

    /// Spans waiting for the rest of their trace now.
    pub fn waiting(&self) -> usize {
        self.pending.waiting()
    }

    /// Traces open now.
    pub fn open_traces(&self) -> usize {
        self.pending.open()
    }

    fn read(&mut self, ready: Vec<pending::Ready>) -> Vec<Event> {
        ready.into_iter().flat_map(|r| self.session.trace(r.spans, r.rooted)).collect()
    }
}
