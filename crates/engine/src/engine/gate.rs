//! The gate before every model and tool call: open (running), closed
//! (paused), or closed with one call allowed through (stepping).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Open,
    Closed,
    /// Closed, but one call may pass.
    OneStep,
}

/// What a gate lets happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Go,
    Stop,
    Restart,
}
