//! Fault injection for models: what a user (or a schedule) breaks in a
//! model call, aimed at a role or at a model by name. The scopes and the
//! table the engine draws from are the tools' ([`crate::tool::fault`]).
//!
//! Where a fault takes effect is the model's business
//! ([`super::ChatModel::chat_with_fault`]): the OpenAI-compatible client
//! fails one HTTP attempt (so its own retries, backoff, Retry-After and
//! timeout run) or spoils the real reply before its own parser reads it;
//! models without an HTTP exchange (simulated, replay) fail or spoil the
//! call as a whole.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::tool::fault::{Fault, FaultScope};

/// What `429` waits without `=MS`.
pub const DEFAULT_RETRY_AFTER_MS: u64 = 1000;
/// What `slow` waits without `=MS` (as a tool's `slow`).
const DEFAULT_SLOW_MS: u64 = 2000;

/// How an injected model fault shows up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ModelFaultMode {
    /// The reply body is not JSON.
    Malformed,
    /// The reply has no content and no tool call.
    Empty,
    /// The reply's content (and any tool call's arguments) cut off half-way.
    Truncated,
    /// One attempt answers HTTP 500.
    #[serde(rename = "http_500")]
    Http500,
    /// One attempt answers HTTP 429 with `Retry-After` of `retry_after_ms`.
    RateLimited { retry_after_ms: u64 },
    /// One attempt hangs until the client's timeout.
    Timeout,
    /// One attempt is delayed by `ms` (inside the client's timeout).
    Slow { ms: u64 },
}

/// A model fault and how long it lasts.
pub type ModelFault = Fault<ModelFaultMode>;

impl ModelFaultMode {
    /// The command line's spelling: malformed, empty, truncated, http-500,
    /// 429[=MS], timeout, slow[=MS].
    pub fn parse(s: &str) -> Result<ModelFaultMode, String> {
        let ms = |what: &str, v: &str| v.parse::<u64>().map_err(|_| format!("{what} wants milliseconds, got '{v}'"));
        Ok(match s {
            "malformed" => ModelFaultMode::Malformed,
            "empty" => ModelFaultMode::Empty,
            "truncated" => ModelFaultMode::Truncated,
            "http-500" | "http_500" | "500" => ModelFaultMode::Http500,
            "429" | "rate-limited" | "rate_limited" => {
                ModelFaultMode::RateLimited { retry_after_ms: DEFAULT_RETRY_AFTER_MS }
            }
            "timeout" => ModelFaultMode::Timeout,
            "slow" => ModelFaultMode::Slow { ms: DEFAULT_SLOW_MS },
            _ => {
                if let Some(v) = s.strip_prefix("429=") {
                    ModelFaultMode::RateLimited { retry_after_ms: ms("429", v)? }
                } else if let Some(v) = s.strip_prefix("slow=") {
                    ModelFaultMode::Slow { ms: ms("slow", v)? }
                } else {
                    return Err(format!("unknown mode '{s}'"));
                }
            }
        })
    }

    /// The fault takes one HTTP attempt (rather than spoiling a reply).
    pub fn is_transport(self) -> bool {
        matches!(
            self,
            ModelFaultMode::Http500
                | ModelFaultMode::RateLimited { .. }
                | ModelFaultMode::Timeout
                | ModelFaultMode::Slow { .. }
        )
    }
}

impl fmt::Display for ModelFaultMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelFaultMode::Malformed => f.write_str("malformed"),
            ModelFaultMode::Empty => f.write_str("empty"),
            ModelFaultMode::Truncated => f.write_str("truncated"),
            ModelFaultMode::Http500 => f.write_str("http-500"),
            ModelFaultMode::RateLimited { retry_after_ms } => write!(f, "429={retry_after_ms}"),
            ModelFaultMode::Timeout => f.write_str("timeout"),
            ModelFaultMode::Slow { ms } => write!(f, "slow={ms}"),
        }
    }
}

/// The forms a model fault is written in, for every parse error.
pub const MODEL_FAULT_FORMS: &str = "expected model:TARGET:MODE[:SCOPE], TARGET a role (planner, solver, actor, \
     evaluator, classifier, judge) or a configured model's name, MODE one of malformed, empty, truncated, http-500, \
     429[=MS], timeout, slow=MS; SCOPE one of once, times=N, p=P, until-cleared";

#[derive(thiserror::Error, Debug, PartialEq)]
#[error("bad model fault '{spec}': {why} ({MODEL_FAULT_FORMS})")]
pub struct ModelFaultParseError {
    pub spec: String,
    pub why: String,
}

/// Parses `model:TARGET:MODE[:SCOPE]` (scope defaults to until-cleared).
/// Whether TARGET names a configured model is the engine's to check.
pub fn parse_model_fault(spec: &str) -> Result<(String, ModelFault), ModelFaultParseError> {
    let err = |why: String| ModelFaultParseError { spec: spec.to_string(), why };
    let rest = spec.strip_prefix("model:").ok_or_else(|| err("it does not start with 'model:'".into()))?;
    let mut parts = rest.split(':');
    let target = parts.next().filter(|t| !t.is_empty()).ok_or_else(|| err("no role or model named".into()))?;
    let mode = ModelFaultMode::parse(parts.next().ok_or_else(|| err("no mode".into()))?).map_err(err)?;
    let scope = match parts.next() {
        Some(s) => FaultScope::parse(s).map_err(err)?,
        None => FaultScope::UntilCleared,
    };
    if parts.next().is_some() {
        return Err(err("too many ':' parts".into()));
    }
    Ok((target.to_string(), Fault { mode, scope }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_reads_back_its_display() {
        for m in [
            ModelFaultMode::Malformed,
            ModelFaultMode::Empty,
            ModelFaultMode::Truncated,
            ModelFaultMode::Http500,
            ModelFaultMode::RateLimited { retry_after_ms: 250 },
            ModelFaultMode::Timeout,
            ModelFaultMode::Slow { ms: 40 },
        ] {
            assert_eq!(ModelFaultMode::parse(&m.to_string()), Ok(m));
        }
        assert_eq!(
            ModelFaultMode::parse("429"),
            Ok(ModelFaultMode::RateLimited { retry_after_ms: DEFAULT_RETRY_AFTER_MS })
        );
    }

    #[test]
    fn parses_specs_and_names_the_forms_on_error() {
        let (target, f) = parse_model_fault("model:actor:429=50:times=2").unwrap();
        assert_eq!(target, "actor");
        assert_eq!(
            f,
            Fault { mode: ModelFaultMode::RateLimited { retry_after_ms: 50 }, scope: FaultScope::Times { n: 2 } }
        );
        let e = parse_model_fault("model:actor:explode").unwrap_err().to_string();
        assert!(e.contains("unknown mode 'explode'") && e.contains("http-500") && e.contains("until-cleared"), "{e}");
        assert!(parse_model_fault("model::empty").is_err());
        assert!(parse_model_fault("model:actor:slow=x").unwrap_err().to_string().contains("milliseconds"));
        assert!(parse_model_fault("model:actor:empty:once:x").is_err());
    }

    #[test]
    fn events_spell_the_modes_in_snake_case() {
        let f = Fault { mode: ModelFaultMode::Http500, scope: FaultScope::Once };
        assert_eq!(serde_json::to_value(f).unwrap(), serde_json::json!({"mode": "http_500", "scope": "once"}));
        let m = ModelFaultMode::RateLimited { retry_after_ms: 5 };
        assert_eq!(serde_json::to_value(m).unwrap(), serde_json::json!({"mode": "rate_limited", "retry_after_ms": 5}));
    }
}
