//! Fault injection: what a user (or a schedule) breaks in a tool, and the
//! table the engine draws from before every tool call. The scopes and the
//! table are generic over the mode, so a model's faults
//! ([`crate::model::fault`]) last and are drawn the same way.

use std::collections::BTreeMap;
use std::fmt;

use rand::Rng;
use serde::{Deserialize, Serialize};

/// How an injected fault shows up.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum FaultMode {
    /// The call fails with an error.
    Error,
    /// The call "succeeds" with a result that says nothing was found.
    NothingFound,
    /// The call returns unreadable output.
    Garbage,
    /// The call hangs until its timeout and is stopped.
    Timeout,
    /// The call is delayed by `ms`, then runs normally.
    Slow { ms: u64 },
    /// The tool dies (a command tool's process is killed) without an answer.
    Crash,
}

/// How long an injected fault lasts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum FaultScope {
    Once,
    Times { n: u32 },
    Probability { p: f64 },
    UntilCleared,
}

/// A mode and how long it lasts; `M` is a tool's [`FaultMode`] unless said.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fault<M = FaultMode> {
    #[serde(flatten)]
    pub mode: M,
    #[serde(flatten)]
    pub scope: FaultScope,
}

#[derive(thiserror::Error, Debug, PartialEq)]
#[error(
    "bad fault '{spec}': {why} (expected TOOL:MODE[:SCOPE], MODE one of error, nothing-found, garbage, timeout, slow=MS, crash; SCOPE one of once, times=N, p=P, until-cleared)"
)]
pub struct FaultParseError {
    pub spec: String,
    pub why: String,
}

impl FaultMode {
    pub fn parse(s: &str) -> Result<FaultMode, String> {
        Ok(match s {
            "error" => FaultMode::Error,
            "nothing-found" | "nothing_found" => FaultMode::NothingFound,
            "garbage" => FaultMode::Garbage,
            "timeout" => FaultMode::Timeout,
            "crash" => FaultMode::Crash,
            "slow" => FaultMode::Slow { ms: 2000 },
            _ => match s.strip_prefix("slow=") {
                Some(ms) => {
                    FaultMode::Slow { ms: ms.parse().map_err(|_| format!("slow wants milliseconds, got '{ms}'"))? }
                }
                None => return Err(format!("unknown mode '{s}'")),
            },
        })
    }
}

impl FaultScope {
    pub fn parse(s: &str) -> Result<FaultScope, String> {
        Ok(match s {
            "once" => FaultScope::Once,
            "until-cleared" | "until_cleared" | "until" | "always" => FaultScope::UntilCleared,
            _ => {
                if let Some(n) = s.strip_prefix("times=") {
                    let n: u32 = n.parse().map_err(|_| format!("times wants a whole number, got '{n}'"))?;
                    if n == 0 {
                        return Err("times must be at least 1".into());
                    }
                    FaultScope::Times { n }
                } else if let Some(p) = s.strip_prefix("p=") {
                    let p: f64 = p.parse().map_err(|_| format!("p wants a probability, got '{p}'"))?;
                    if !(0.0..=1.0).contains(&p) {
                        return Err(format!("p must be within [0, 1], got {p}"));
                    }
                    FaultScope::Probability { p }
                } else {
                    return Err(format!("unknown scope '{s}'"));
                }
            }
        })
    }
}

impl Fault {
    /// Parses `TOOL:MODE[:SCOPE]` (scope defaults to until-cleared).
    pub fn parse_spec(spec: &str) -> Result<(String, Fault), FaultParseError> {
        let err = |why: String| FaultParseError { spec: spec.to_string(), why };
        let mut parts = spec.split(':');
        let tool = parts.next().filter(|t| !t.is_empty()).ok_or_else(|| err("no tool named".into()))?;
        let mode = FaultMode::parse(parts.next().ok_or_else(|| err("no mode".into()))?).map_err(err)?;
        let scope = match parts.next() {
            Some(s) => FaultScope::parse(s).map_err(err)?,
            None => FaultScope::UntilCleared,
        };
        if parts.next().is_some() {
            return Err(err("too many ':' parts".into()));
        }
        Ok((tool.to_string(), Fault { mode, scope }))
    }
}

impl fmt::Display for FaultMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultMode::Error => f.write_str("error"),
            FaultMode::NothingFound => f.write_str("nothing-found"),
            FaultMode::Garbage => f.write_str("garbage"),
            FaultMode::Timeout => f.write_str("timeout"),
            FaultMode::Slow { ms } => write!(f, "slow={ms}"),
            FaultMode::Crash => f.write_str("crash"),
        }
    }
}

impl fmt::Display for FaultScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultScope::Once => f.write_str("once"),
            FaultScope::Times { n } => write!(f, "times={n}"),
            FaultScope::Probability { p } => write!(f, "p={p}"),
            FaultScope::UntilCleared => f.write_str("until-cleared"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Active<M> {
    fault: Fault<M>,
    /// Calls left for `Once` / `Times`.
    left: Option<u32>,
}

/// The faults in force, per tool (or per model target). The engine owns one
/// and draws from it, with a seeded generator, before every call.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultTable<M = FaultMode> {
    by_tool: BTreeMap<String, Vec<Active<M>>>,
}

impl<M> Default for FaultTable<M> {
    fn default() -> Self {
        FaultTable { by_tool: BTreeMap::new() }
    }
}

impl<M: Copy + PartialEq> FaultTable<M> {
    pub fn inject(&mut self, tool: &str, fault: Fault<M>) {
        let left = match fault.scope {
            FaultScope::Once => Some(1),
            FaultScope::Times { n } => Some(n),
            _ => None,
        };
        self.by_tool.entry(tool.to_string()).or_default().push(Active { fault, left });
    }

    /// Clears the faults of one tool, or of all tools.
    pub fn clear(&mut self, tool: Option<&str>) {
        match tool {
            Some(t) => {
                self.by_tool.remove(t);
            }
            None => self.by_tool.clear(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty()
    }

    pub fn active(&self) -> impl Iterator<Item = (&str, Fault<M>)> {
        self.by_tool.iter().flat_map(|(t, v)| v.iter().map(move |a| (t.as_str(), a.fault)))
    }

    /// Every fault in force with the calls a counted one has left, per tool
    /// in name order and, within a tool, oldest first (the order they draw in).
    pub fn remaining(&self) -> impl Iterator<Item = (&str, Fault<M>, Option<u32>)> {
        self.by_tool.iter().flat_map(|(t, v)| v.iter().map(move |a| (t.as_str(), a.fault, a.left)))
    }

    /// The fault that hits the next call of `tool`, if any, and one use of
    /// a counted fault spent (see [`FaultTable::spend`]).
    pub fn draw(&mut self, tool: &str, rng: &mut impl Rng) -> Option<M> {
        let hit = self.roll(tool, rng)?;
        self.spend(tool, hit);
        Some(hit)
    }

    /// The mode of the fault that hits the next call of `tool`, if any,
    /// spending nothing: the oldest fault in force that fires (a sure one
    /// always does, a probability is drawn).
    pub fn roll(&self, tool: &str, rng: &mut impl Rng) -> Option<M> {
        self.by_tool.get(tool)?.iter().find_map(|a| {
            let fires = match a.fault.scope {
                FaultScope::Probability { p } => rng.random_bool(p),
                _ => true,
            };
            fires.then_some(a.fault.mode)
        })
    }

    /// A call of `tool` was hit by `hit`: the oldest sure fault (not a
    /// probability) of `tool` loses a use if its mode is `hit`, whichever
    /// fault fired. The rule needs only the mode, so a fold of the events
    /// (which carry the mode alone) spends exactly what the engine spent.
    /// Returns whether `tool` has a sure fault at all.
    pub fn spend(&mut self, tool: &str, hit: M) -> bool {
        let Some(list) = self.by_tool.get_mut(tool) else { return false };
        let Some(sure) = list.iter_mut().find(|a| !matches!(a.fault.scope, FaultScope::Probability { .. })) else {
            return false;
        };
        if sure.fault.mode == hit
            && let Some(left) = sure.left.as_mut()
        {
            *left -= 1;
        }
        list.retain(|a| a.left != Some(0));
        if list.is_empty() {
            self.by_tool.remove(tool);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn counted_faults_run_out() {
        let mut t = FaultTable::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        t.inject("a", Fault { mode: FaultMode::Error, scope: FaultScope::Times { n: 2 } });
        assert_eq!(t.draw("a", &mut rng), Some(FaultMode::Error));
        assert_eq!(t.draw("a", &mut rng), Some(FaultMode::Error));
        assert_eq!(t.draw("a", &mut rng), None);
        assert_eq!(t.draw("b", &mut rng), None);
    }

    #[test]
    fn a_hit_spends_the_oldest_sure_fault_only_when_it_is_of_that_mode() {
        let mut t = FaultTable::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        t.inject("a", Fault { mode: FaultMode::Timeout, scope: FaultScope::UntilCleared });
        t.inject("a", Fault { mode: FaultMode::Garbage, scope: FaultScope::Once });
        // The older until-cleared fault fires; the once-fault behind it is untouched.
        assert_eq!(t.draw("a", &mut rng), Some(FaultMode::Timeout));
        assert_eq!(t.remaining().map(|(_, _, left)| left).collect::<Vec<_>>(), vec![None, Some(1)]);

        let mut t = FaultTable::default();
        t.inject("a", Fault { mode: FaultMode::Error, scope: FaultScope::Probability { p: 1.0 } });
        t.inject("a", Fault { mode: FaultMode::Error, scope: FaultScope::Once });
        // A sure fault of the mode that hit is spent, whichever fired.
        assert_eq!(t.draw("a", &mut rng), Some(FaultMode::Error));
        assert_eq!(t.remaining().count(), 1);
    }

    #[test]
    fn parses_specs() {
        let (tool, f) = Fault::parse_spec("geo:slow=50:times=3").unwrap();
        assert_eq!(tool, "geo");
        assert_eq!(f, Fault { mode: FaultMode::Slow { ms: 50 }, scope: FaultScope::Times { n: 3 } });
        assert!(Fault::parse_spec("geo:explode").unwrap_err().to_string().contains("unknown mode 'explode'"));
        assert!(Fault::parse_spec("geo:error:p=2").is_err());
    }
}
