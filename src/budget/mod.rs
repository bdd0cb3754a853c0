//! BTP, budget-constrained tool learning with planning (DESIGN §3.2): the
//! costs, the experience the estimates come from, the expected value and
//! frequency of each tool, and the knapsack plan.

pub mod btp;
pub mod costs;
pub mod estimate;
pub mod experience;
pub mod plan;
pub mod tally;

pub use costs::ToolCosts;
