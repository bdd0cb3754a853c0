//! ReWOO (DESIGN §3.5): a planner writes the whole plan, workers run each
//! step's calls concurrently, a solver answers from the evidence. The
//! engine drives the strategy and runs the lanes (`engine::rewoo`); these
//! are the parts that stand alone: the prompts, the plan parser, the input
//! resolution, the null filter and the classifier's cache.

pub mod args;
pub mod cache;
pub mod filter;
pub mod parse;
pub mod prompt;
