//! ATC's settings (`[atc]` in the config).

use serde::{Deserialize, Serialize};

use crate::program::sandbox::Limits;

/// `[atc]` in the config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AtcConfig {
    /// Rewrites after a failure (the paper's α: 3).
    pub reflect_rounds: u32,
    /// Probe the offered tools that document no response before a run.
    pub probe: bool,
    /// Probe programs tried per tool and round (the paper's N).
    pub probe_samples: u32,
    /// Rounds of the chain of probing after the first (the paper's β).
    pub probe_rounds: u32,
    /// Fit the program prompt into this many tokens by cutting the response
    /// shapes and descriptions shorter (a small model's context); none:
    /// shown whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    pub limits: Limits,
}

impl Default for AtcConfig {
    fn default() -> Self {
        AtcConfig {
            reflect_rounds: 3,
            probe: false,
            probe_samples: 3,
            probe_rounds: 2,
            prompt_tokens: None,
            limits: Limits::default(),
        }
    }
}
