//! Per-model token prices and the cost of a call.

use serde::{Deserialize, Serialize};

use super::Usage;

/// Prices per million tokens, in the run's cost unit.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Price {
    #[serde(default)]
    pub input_per_mtok: f64,
    #[serde(default)]
    pub output_per_mtok: f64,
}

impl Price {
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.input_per_mtok + usage.completion_tokens as f64 * self.output_per_mtok) / 1e6
    }
}
