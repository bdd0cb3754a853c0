//! ReWOO (DESIGN §3.5): a planner writes the whole plan, workers run each
//! step's calls concurrently, a solver answers from the evidence. This
//! module holds the pieces that stand alone: the plan parser and the step
//! runner. The strategy itself is not wired into the engine yet.

pub mod parse;
pub mod worker;
