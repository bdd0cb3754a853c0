//! ReWOO (DESIGN §3.5): a planner writes the whole plan, workers run each
//! step's calls concurrently, a solver answers from the evidence. The
//! engine drives the strategy (`engine::rewoo`); these are its parts that
//! stand alone: the prompts, the plan parser and the step runner.

pub mod parse;
pub mod protocol;
pub mod worker;
