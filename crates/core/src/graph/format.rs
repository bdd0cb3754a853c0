//! How candidate weights are shown to the model (ToolNet §4.2.3 found
//! `integer` and `x10` best; docs/src/papers/toolnet.md).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::GraphError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WeightFormat {
    /// Candidates are offered without weights.
    None,
    /// `0.37`
    Decimal,
    /// `37`: the weight in percent, rounded.
    #[default]
    Integer,
    /// `370`: the weight times 1000, rounded.
    X10,
}

impl WeightFormat {
    /// The weight as the model sees it, or `None` when weights are hidden.
    pub fn show(self, w: f64) -> Option<String> {
        match self {
            WeightFormat::None => None,
            WeightFormat::Decimal => Some(format!("{w:.2}")),
            WeightFormat::Integer => Some(format!("{}", (w * 100.0).round() as i64)),
            WeightFormat::X10 => Some(format!("{}", (w * 1000.0).round() as i64)),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            WeightFormat::None => "none",
            WeightFormat::Decimal => "decimal",
            WeightFormat::Integer => "integer",
            WeightFormat::X10 => "x10",
        }
    }
}

impl fmt::Display for WeightFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for WeightFormat {
    type Err = GraphError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [WeightFormat::None, WeightFormat::Decimal, WeightFormat::Integer, WeightFormat::X10];
        let wanted = s.trim();
        all.into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| GraphError::WeightFormat { value: s.to_owned() })
    }
}
