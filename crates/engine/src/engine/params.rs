//! The run parameters a user can change while the agent runs.

use serde::{Deserialize, Serialize};

use crate::graph::WeightFormat;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// ToolNet's learning speed α.
    pub alpha: f64,
    /// ToolNet's share β of the prior weight.
    pub beta: f64,
    /// BTP's value threshold τ.
    pub tau: f64,
    /// BTP's budget B, in the cost unit; none = unlimited.
    pub budget: Option<f64>,
    /// How many retrieved tools are offered at the start (and by `react` at every step).
    pub top_k: usize,
    pub weight_format: WeightFormat,
    pub max_steps: u32,
    /// Which tools of a bridged agent's request its model sees.
    #[serde(skip_serializing_if = "Narrowing::is_off")]
    pub narrow: Narrowing,
    /// How many tools narrowing keeps.
    #[serde(skip_serializing_if = "is_default_narrow_k")]
    pub narrow_k: usize,
}

/// How the tools of a bridged agent's model request are narrowed before
/// they go upstream: kept by ToolNet's weights from the agent's last tool
/// that helped, by retrieval from the task and the latest message, or
/// both (alternating the two rankings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Narrowing {
    #[default]
    Off,
    Graph,
    Retrieval,
    Both,
}

impl Narrowing {
    pub const ALL: [Narrowing; 4] = [Narrowing::Off, Narrowing::Graph, Narrowing::Retrieval, Narrowing::Both];

    pub fn is_off(&self) -> bool {
        *self == Narrowing::Off
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Narrowing::Off => "off",
            Narrowing::Graph => "graph",
            Narrowing::Retrieval => "retrieval",
            Narrowing::Both => "both",
        }
    }
}

impl std::fmt::Display for Narrowing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Narrowing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Narrowing::ALL
            .into_iter()
            .find(|n| n.as_str() == s)
            .ok_or_else(|| format!("'{s}' is not a narrowing (off, graph, retrieval, both)"))
    }
}

const DEFAULT_NARROW_K: usize = 8;

fn is_default_narrow_k(k: &usize) -> bool {
    *k == DEFAULT_NARROW_K
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 0.5,
            beta: 0.5,
            tau: 0.15,
            budget: None,
            top_k: 3,
            weight_format: WeightFormat::Integer,
            // The ToolNet paper's limit.
            max_steps: 8,
            narrow: Narrowing::Off,
            narrow_k: DEFAULT_NARROW_K,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "param", content = "value", rename_all = "snake_case")]
pub enum ParamChange {
    Alpha(f64),
    Beta(f64),
    Tau(f64),
    Budget(Option<f64>),
    TopK(usize),
    WeightFormat(WeightFormat),
    MaxSteps(u32),
    Narrow(Narrowing),
    NarrowK(usize),
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[error("{param}: {why}")]
pub struct ParamError {
    pub param: &'static str,
    pub why: String,
}

impl ParamChange {
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |param, why: &str| Err(ParamError { param, why: why.to_string() });
        match *self {
            ParamChange::Alpha(a) if !(a.is_finite() && a >= 0.0) => bad("alpha", "must be a finite number >= 0"),
            ParamChange::Beta(b) if !(0.0..=1.0).contains(&b) => bad("beta", "must be within [0, 1]"),
            ParamChange::Tau(t) if !(0.0..=1.0).contains(&t) => bad("tau", "must be within [0, 1]"),
            ParamChange::Budget(Some(b)) if !(b.is_finite() && b >= 0.0) => {
                bad("budget", "must be a finite number >= 0")
            }
            ParamChange::TopK(0) => bad("top_k", "must be at least 1"),
            ParamChange::MaxSteps(0) => bad("max_steps", "must be at least 1"),
            ParamChange::NarrowK(0) => bad("narrow_k", "must be at least 1"),
            _ => Ok(()),
        }
    }

    /// Parses `name=value` as typed on a command line or in a dialog.
    pub fn parse(s: &str) -> Result<ParamChange, ParamError> {
        let (name, value) =
            s.split_once('=').ok_or(ParamError { param: "param", why: format!("expected NAME=VALUE, got '{s}'") })?;
        let (name, value) = (name.trim(), value.trim());
        let num = |param: &'static str| {
            value.parse::<f64>().map_err(|_| ParamError { param, why: format!("'{value}' is not a number") })
        };
        let int = |param: &'static str| {
            value.parse::<u64>().map_err(|_| ParamError { param, why: format!("'{value}' is not a whole number") })
        };
        let change = match name {
            "alpha" | "α" => ParamChange::Alpha(num("alpha")?),
            "beta" | "β" => ParamChange::Beta(num("beta")?),
            "tau" | "τ" => ParamChange::Tau(num("tau")?),
            "budget" | "B" => ParamChange::Budget(if value == "none" { None } else { Some(num("budget")?) }),
            "top_k" | "k" | "K" => ParamChange::TopK(int("top_k")? as usize),
            "max_steps" => ParamChange::MaxSteps(int("max_steps")?.min(u32::MAX as u64) as u32),
            "narrow" => ParamChange::Narrow(value.parse().map_err(|why| ParamError { param: "narrow", why })?),
            "narrow_k" => ParamChange::NarrowK(int("narrow_k")? as usize),
            "weight_format" => ParamChange::WeightFormat(
                value
                    .parse()
                    .map_err(|e: crate::graph::GraphError| ParamError { param: "weight_format", why: e.to_string() })?,
            ),
            other => {
                return Err(ParamError {
                    param: "param",
                    why: format!(
                        "unknown parameter '{other}' (alpha, beta, tau, budget, top_k, weight_format, max_steps, narrow, \
                         narrow_k)"
                    ),
                });
            }
        };
        change.validate()?;
        Ok(change)
    }
}

impl Params {
    pub fn apply(&mut self, change: &ParamChange) {
        match *change {
            ParamChange::Alpha(a) => self.alpha = a,
            ParamChange::Beta(b) => self.beta = b,
            ParamChange::Tau(t) => self.tau = t,
            ParamChange::Budget(b) => self.budget = b,
            ParamChange::TopK(k) => self.top_k = k,
            ParamChange::WeightFormat(f) => self.weight_format = f,
            ParamChange::MaxSteps(m) => self.max_steps = m,
            ParamChange::Narrow(n) => self.narrow = n,
            ParamChange::NarrowK(k) => self.narrow_k = k,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        [
            ParamChange::Alpha(self.alpha),
            ParamChange::Beta(self.beta),
            ParamChange::Tau(self.tau),
            ParamChange::Budget(self.budget),
            ParamChange::TopK(self.top_k),
            ParamChange::MaxSteps(self.max_steps),
            ParamChange::NarrowK(self.narrow_k),
        ]
        .iter()
        .try_for_each(ParamChange::validate)
    }
}
