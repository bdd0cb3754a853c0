//! ATC's programs (DESIGN §3.4): the sandbox that runs a model's program
//! with the tools as its only functions, tool protocols as the prompt shows
//! them, and response schemas inferred from what tools return (probing).

pub mod schema;
