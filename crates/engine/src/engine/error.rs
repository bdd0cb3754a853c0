//! What can go wrong in the engine itself (never a tool's or a model's
//! failure: those are events, and the run goes on).

use super::params::ParamError;
use super::trace::TraceError;
use crate::budget::experience::ExperienceError;
use crate::graph::GraphError;

#[derive(thiserror::Error, Debug)]
pub enum EngineError {
    #[error("could not write the trace: {0}")]
    Trace(#[from] TraceError),
    #[error("parameters: {0}")]
    Params(#[from] ParamError),
    #[error("experience: {0}")]
    Experience(#[from] ExperienceError),
    #[error("tool labels: {0}")]
    Labels(#[from] super::label_cache::CacheError),
    #[error("could not save the learnt graph: {0}")]
    Graph(#[from] GraphError),
    #[error("could not save a probed protocol: {0}")]
    Protocol(#[from] crate::program::protocol::StoreError),
    #[error("no budget set")]
    NoBudget,
    #[error("BTP is not set up")]
    NoBtp,
    /// A fork's replay produced another event than the trace records.
    #[error(
        "the fork's replay diverged from the trace at its event {index} ({recorded}): {replayed}. {}",
        why_diverged(replayed)
    )]
    ForkDiverged { index: usize, recorded: String, replayed: String },
    /// The user suspended the session: the trace ends with `Suspended`.
    /// Not a failure; it unwinds the engine at once, so nothing is
    /// recorded after the point the session resumes from.
    #[error("the session was suspended")]
    Suspended,
    /// A run started while another held the strategy.
    #[error("a run started inside another run")]
    Reentered,
}

/// What a divergence most likely means: an outside agent that sent another
/// request than it recorded, or a set-up that differs.
fn why_diverged(replayed: &str) -> &'static str {
    if replayed.starts_with(".wire.") {
        "The agent sent another request than the one recorded: it is not deterministic, or its inputs (files, \
         environment, clock) changed; nothing was answered in its place"
    } else {
        "The library, the models or the label cache differ from the recorded session's"
    }
}
