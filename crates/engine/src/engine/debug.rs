//! The debugger's vocabulary, shared by controls, events and the engine:
//! which calls wait for the user's approval, what the user decides, and the
//! conditions a breakpoint pauses on. Data only, so that the event and
//! control enums can name it without depending on the engine.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Role;

/// Which calls wait for the user: a tool's calls (and their results) by
/// name, a role's model replies, or everything. Off when empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalPolicy {
    /// Every tool call, every tool result and every model reply.
    pub all: bool,
    /// These tools' calls are approved before they run, their results reviewed after.
    pub tools: BTreeSet<String>,
    /// These roles' model replies are reviewed before they are acted on.
    pub roles: BTreeSet<Role>,
}

/// The forms `--approve` takes, for error messages and help.
pub const APPROVE_FORMS: &str = "all, off, tool=NAME, role=ROLE";

impl ApprovalPolicy {
    /// Every tool call, result and model reply.
    pub fn everything() -> Self {
        ApprovalPolicy { all: true, ..Default::default() }
    }

    pub fn is_off(&self) -> bool {
        !self.all && self.tools.is_empty() && self.roles.is_empty()
    }

    /// A call of `tool` waits for approval, and its result for review.
    pub fn tool(&self, tool: &str) -> bool {
        self.all || self.tools.contains(tool)
    }

    /// A reply of `role` waits for review.
    pub fn role(&self, role: Role) -> bool {
        self.all || self.roles.contains(&role)
    }

    /// Adds one `--approve` form: `all`, `off`, `tool=NAME` or `role=ROLE`.
    pub fn add(&mut self, spec: &str) -> Result<(), String> {
        let spec = spec.trim();
        let bad = |why: String| Err(format!("'{spec}': {why} (the forms: {APPROVE_FORMS})"));
        match spec.split_once('=') {
            None if spec == "all" => self.all = true,
            None if spec == "off" => *self = ApprovalPolicy::default(),
            None => return bad("unknown form".into()),
            Some(("tool", name)) if !name.trim().is_empty() => {
                self.tools.insert(name.trim().to_string());
            }
            Some(("role", role)) => match Role::parse(role.trim()) {
                Some(r) => {
                    self.roles.insert(r);
                }
                None => {
                    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
                    return bad(format!("no role named '{role}' (roles: {})", roles.join(", ")));
                }
            },
            Some(("tool", _)) => return bad("the tool's name is empty".into()),
            Some((key, _)) => return bad(format!("unknown key '{key}'")),
        }
        Ok(())
    }

    /// From `--approve` forms, in order.
    pub fn parse_all<'a>(specs: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut p = ApprovalPolicy::default();
        for s in specs {
            p.add(s)?;
        }
        Ok(p)
    }
}

impl std::fmt::Display for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.all {
            return f.write_str("all calls");
        }
        if self.is_off() {
            return f.write_str("off");
        }
        let mut parts: Vec<String> = self.tools.iter().map(|t| format!("tool={t}")).collect();
        parts.extend(self.roles.iter().map(|r| format!("role={r}")));
        f.write_str(&parts.join(", "))
    }
}

/// What waits for the user's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    /// A tool call, before it runs.
    Call,
    /// A tool's result, before a model sees it.
    Result,
    /// A model's reply, before it is acted on.
    Reply,
}

impl ReviewKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewKind::Call => "call",
            ReviewKind::Result => "result",
            ReviewKind::Reply => "reply",
        }
    }
}

/// The user's decision on what waits for review (`Control::Decide`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the call as it is; for a result or a reply the same as `Keep`.
    Approve,
    /// Let the result or reply through as it is; for a call the same as `Approve`.
    Keep,
    /// Do not run the call: the model is told the user rejected it, and why.
    Reject { note: String },
    /// Run the call with these arguments (checked against the tool's schema).
    EditArgs { args: Value },
    /// The model sees this value as the tool's result.
    EditResult { value: Value },
    /// The reply is acted on as if the model had written this.
    EditReply { text: String },
}

impl Decision {
    /// What the decision is called in messages.
    pub fn word(&self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Keep => "keep",
            Decision::Reject { .. } => "reject",
            Decision::EditArgs { .. } => "edit arguments",
            Decision::EditResult { .. } => "edit result",
            Decision::EditReply { .. } => "edit reply",
        }
    }
}

/// When a breakpoint pauses the run.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// The named tool is about to be called.
    Tool(String),
    /// A tool call failed (any error but the user's rejection).
    Error,
    /// A call was refused: not offered, forbidden, blacklisted, over budget, repeated.
    Refusal,
    /// A model reply could not be read: an action, a plan, a program.
    Unreadable,
    /// The task's cost went over this.
    CostOver(f64),
    /// The task's tokens (prompt and completion) went over this.
    TokensOver(u64),
    /// Decision step N begins, in run M (any run without one).
    Step { step: u32, run: Option<u32> },
    /// A tool's ToolNet score fell below this (one tool's, or any tool's).
    ScoreUnder { below: f64, tool: Option<String> },
    /// A call of a bridged agent's thread (or of a thread under it) is
    /// about to start.
    Thread(String),
    /// The run broke one of its task's expectations for certain (a call
    /// too many, a cost over, a call with other arguments).
    ExpectFailed,
}

/// The forms a breakpoint takes, for error messages and help.
pub const BREAK_FORMS: &str = "tool=NAME, error, refusal, unreadable, expect-failed, cost>X, tokens>N, step=N, step=N@run=M, score<X, score<X:TOOL, thread=NAME";

impl std::str::FromStr for Condition {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let bad = |why: String| Err(format!("'{s}': {why} (the forms: {BREAK_FORMS})"));
        let number = |what: &str, v: &str| -> Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(format!("'{s}': {what} '{}' is not a number (the forms: {BREAK_FORMS})", v.trim())),
            }
        };
        let count = |what: &str, v: &str| -> Result<u64, String> {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{s}': {what} '{}' is not a whole number (the forms: {BREAK_FORMS})", v.trim()))
        };
        match s {
            "error" => return Ok(Condition::Error),
            "refusal" => return Ok(Condition::Refusal),
            "unreadable" => return Ok(Condition::Unreadable),
            "expect-failed" => return Ok(Condition::ExpectFailed),
            _ => {}
        }
        if let Some(v) = s.strip_prefix("cost>") {
            return Ok(Condition::CostOver(number("the cost", v)?));
        }
        if let Some(v) = s.strip_prefix("tokens>") {
            return Ok(Condition::TokensOver(count("the tokens", v)?));
        }
        if let Some(v) = s.strip_prefix("score<") {
            let (x, tool) = match v.split_once(':') {
                Some((x, t)) if !t.trim().is_empty() => (x, Some(t.trim().to_string())),
                Some(_) => return bad("the tool's name after ':' is empty".into()),
                None => (v, None),
            };
            return Ok(Condition::ScoreUnder { below: number("the score", x)?, tool });
        }
        if let Some(v) = s.strip_prefix("tool=") {
            return match v.trim() {
                "" => bad("the tool's name is empty".into()),
                name => Ok(Condition::Tool(name.to_string())),
            };
        }
        if let Some(v) = s.strip_prefix("thread=") {
            return match v.trim() {
                "" => bad("the thread's name is empty".into()),
                name => Ok(Condition::Thread(name.to_string())),
            };
        }
        if let Some(v) = s.strip_prefix("step=") {
            let (n, run) = match v.split_once('@') {
                Some((n, r)) => match r.trim().strip_prefix("run=") {
                    Some(m) => (n, Some(count("the run", m)?)),
                    None => return bad(format!("'@{r}' is not '@run=M'")),
                },
                None => (v, None),
            };
            let step = count("the step", n)?;
            if step == 0 || run == Some(0) {
                return bad("steps and runs are counted from 1".into());
            }
            return Ok(Condition::Step { step: step as u32, run: run.map(|r| r as u32) });
        }
        bad("unknown condition".into())
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::Tool(t) => write!(f, "tool={t}"),
            Condition::Error => f.write_str("error"),
            Condition::Refusal => f.write_str("refusal"),
            Condition::Unreadable => f.write_str("unreadable"),
            Condition::ExpectFailed => f.write_str("expect-failed"),
            Condition::CostOver(x) => write!(f, "cost>{x}"),
            Condition::TokensOver(n) => write!(f, "tokens>{n}"),
            Condition::Step { step, run: None } => write!(f, "step={step}"),
            Condition::Step { step, run: Some(r) } => write!(f, "step={step}@run={r}"),
            Condition::ScoreUnder { below, tool: None } => write!(f, "score<{below}"),
            Condition::ScoreUnder { below, tool: Some(t) } => write!(f, "score<{below}:{t}"),
            Condition::Thread(t) => write!(f, "thread={t}"),
        }
    }
}

// In controls and events a condition is its text, as the user writes it.
impl Serialize for Condition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl Condition {
    /// The tool the condition names, which the library must have.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Condition::Tool(t) | Condition::ScoreUnder { tool: Some(t), .. } => Some(t),
            _ => None,
        }
    }
}

/// One breakpoint as the engine keeps it: its condition and what it needs
/// to remember so that a condition that stays true pauses once, when it
/// becomes true.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Armed {
    pub id: u32,
    pub condition: Condition,
    pub enabled: bool,
    /// cost, tokens and step: the run it last paused in.
    pub fired_in: Option<u32>,
    /// score: the tools already below the line.
    pub below: BTreeSet<String>,
}

/// The engine's debugger: the approval policy and the breakpoints.
#[derive(Clone, Debug, Default)]
pub(super) struct Debugger {
    pub policy: ApprovalPolicy,
    pub breaks: Vec<Armed>,
    pub next_id: u32,
    /// The call whose decision the engine waits for.
    pub waiting: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_condition_reads_back_as_it_is_written() {
        for s in [
            "tool=geo_lookup",
            "error",
            "refusal",
            "unreadable",
            "cost>0.5",
            "tokens>1000",
            "step=3",
            "step=2@run=4",
            "score<-1",
            "score<0:geo_lookup",
        ] {
            let c: Condition = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
    }

    #[test]
    fn a_bad_condition_names_itself_and_the_forms() {
        for (s, why) in [
            ("tool=", "empty"),
            ("cost>lots", "not a number"),
            ("tokens>1.5", "whole number"),
            ("step=0", "from 1"),
            ("step=2@4", "@run=M"),
            ("when it rains", "unknown condition"),
        ] {
            let e = s.parse::<Condition>().unwrap_err();
            assert!(e.contains(why) && e.contains(BREAK_FORMS), "{s}: {e}");
        }
    }

    #[test]
    fn approval_forms_add_up() {
        let p = ApprovalPolicy::parse_all(["tool=geo_lookup", "role=actor"]).unwrap();
        assert!(p.tool("geo_lookup") && !p.tool("calculator"));
        assert!(p.role(Role::Actor) && !p.role(Role::Evaluator));
        assert_eq!(p.to_string(), "tool=geo_lookup, role=actor");
        assert!(ApprovalPolicy::parse_all(["all"]).unwrap().tool("anything"));
        assert!(ApprovalPolicy::parse_all(["all", "off"]).unwrap().is_off());
        let e = ApprovalPolicy::parse_all(["role=boss"]).unwrap_err();
        assert!(e.contains("no role named 'boss'") && e.contains(APPROVE_FORMS), "{e}");
    }
}
