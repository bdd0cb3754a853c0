//! BTP, budget-constrained tool learning with planning
//! (docs/src/papers/btp.md): the costs, the experience the estimates come from,
//! the expected value and frequency of each tool, and the knapsack plan.

pub mod btp;
pub mod costs;
pub mod estimate;
pub mod experience;
pub mod plan;
pub mod tally;

pub use costs::ToolCosts;
