//! The endpoint's protocol: JSON lines both ways, versioned by the first
//! line each side sends. A viewer says `hello` (its version, its name and
//! the cursor it follows from, if it follows); the session answers
//! `welcome` (or `error` and closes), then sends the events from the
//! cursor on, `caught_up` once it reached the end, then each event as it
//! happens. The events are the trace's own: one fold serves the
//! workbench, a replay and a viewer.

use serde::{Deserialize, Serialize};

use super::registry::SessionRecord;
use crate::engine::{Control, Event};

/// Bumped when a message changes shape; both sides refuse another.
pub const PROTOCOL_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMsg {
    Hello {
        v: u32,
        viewer: String,
        /// Send the events from this one (counted from 0) on, or from the
        /// end when past it; none: only answer requests.
        follow: Option<u64>,
        /// Recorded as a viewer that came and went (a workbench), not a
        /// passing request (`ps`).
        #[serde(default)]
        attach: bool,
        /// The session's token, over TCP (a Unix socket needs none: its
        /// permissions say who may connect).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    Control {
        control: Control,
    },
    Status,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    Welcome {
        v: u32,
        session: SessionRecord,
        status: Status,
    },
    Event {
        event: Box<Event>,
    },
    /// The viewer has every event the session has sent so far.
    CaughtUp {
        events: u64,
    },
    Status {
        status: Status,
    },
    /// The session ended: no more events will come.
    Ended,
    Error {
        message: String,
    },
}

/// `ServerMsg::Event` as it is written, from a borrowed event.
#[derive(Serialize)]
#[serde(tag = "type", rename = "event")]
pub(super) struct EventLine<'a> {
    pub event: &'a Event,
}

/// What `ps` and `ctl status` show of a session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub tasks_done: u32,
    pub tasks: u32,
    pub paused: bool,
    /// Calls, results or replies waiting for a decision (0 or 1: one panel
    /// at a time).
    pub approvals_waiting: u32,
    /// The call that waits, to approve or reject.
    pub waiting_call: Option<u64>,
    pub events: u64,
    /// Of those, the latest kept in memory (the older ones are in a file
    /// of the endpoint's): bounded however long the session runs.
    #[serde(default)]
    pub events_in_memory: u64,
    pub viewers: u32,
    pub ended: bool,
}

/// One message as its line (with the newline).
pub fn line<T: Serialize>(msg: &T) -> String {
    let mut s = serde_json::to_string(msg).unwrap_or_else(|e| {
        serde_json::to_string(&ServerMsg::Error { message: format!("unserialisable message: {e}") }).unwrap_or_default()
    });
    s.push('\n');
    s
}
