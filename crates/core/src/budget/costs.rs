//! Tool costs for an experiment (the BTP paper draws each tool's cost at
//! random), given on the command line (`--tool-costs random:1-10`) or in
//! the config (`[btp] tool_costs = "random:1-10"`).

use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum ToolCosts {
    /// Each tool costs a whole number drawn from [lo, hi] with the session's seed.
    Random { lo: u32, hi: u32 },
}

impl std::str::FromStr for ToolCosts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let spec = s.strip_prefix("random:").ok_or_else(|| format!("expected random:LO-HI, got '{s}'"))?;
        let (lo, hi) = spec.split_once('-').ok_or_else(|| format!("expected random:LO-HI, got '{s}'"))?;
        let (lo, hi): (u32, u32) = (
            lo.trim().parse().map_err(|_| format!("'{lo}' is not a whole number"))?,
            hi.trim().parse().map_err(|_| format!("'{hi}' is not a whole number"))?,
        );
        if lo == 0 || lo > hi {
            return Err(format!("need 1 <= LO <= HI, got {lo}-{hi}"));
        }
        Ok(ToolCosts::Random { lo, hi })
    }
}

impl TryFrom<String> for ToolCosts {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}
