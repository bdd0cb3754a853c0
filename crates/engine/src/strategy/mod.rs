//! Agent loops, each in its own module with its prompt protocol beside it:
//! `react` offers the top-K retrieved tools at every step, `toolnet` walks
//! ToolNet's graph (both share the step-wise loop of `stepwise`; every
//! role's prompt and the parser of its reply are in `prompt`), `rewoo`
//! plans, works concurrently and solves, and `atc` writes the tool chain as one sandboxed program; `bridge` is an
//! outside agent whose model calls arrive through the gateway.
//! Each implements the engine's [`Strategy`] against its [`crate::engine::Host`].

pub mod atc;
pub mod bridge;
pub mod prompt;
pub mod react;
pub mod rewoo;
pub mod stepwise;
pub mod toolnet;

use crate::engine::{Strategy, StrategyKind};

/// The strategy of a kind, with its defaults (rewoo: the paper's two categories).
impl From<StrategyKind> for Box<dyn Strategy> {
    fn from(kind: StrategyKind) -> Self {
        match kind {
            StrategyKind::React => Box::new(react::React),
            StrategyKind::Toolnet => Box::new(toolnet::Toolnet),
            StrategyKind::Rewoo => Box::new(rewoo::Rewoo::default()),
            StrategyKind::Atc => Box::new(atc::Atc::default()),
            // With no gateway to hear from, a bridge's run ends at once,
            // answering nothing (the session wires a gateway to it).
            StrategyKind::Agent => Box::new(bridge::Bridge::new(tokio::sync::mpsc::channel(1).1, None)),
        }
    }
}
