//! ATC's programs (docs/src/papers/atc.md): the sandbox that runs a model's
//! program with the tools as its only functions, what a failure is attributed
//! to, tool protocols as the prompt shows them, and response schemas inferred
//! from what tools return (probing).

pub mod attribute;
pub mod protocol;
pub mod sandbox;
pub mod schema;
