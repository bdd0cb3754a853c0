//! What a task says its run should do, not only what it should answer
//! (a task file's `expect`): the tools in order or as a set, arguments a
//! tool's calls must have, at most N calls, at most C of cost. Judged on
//! a finished run; some are broken for certain before the run ends (a
//! call too many, a call with the wrong arguments), which is when an
//! `expect-failed` breakpoint fires.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Expect {
    /// Called in this order; other calls may come before, between and after.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Called, each at least once, in any order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_set: Vec<String>,
    /// Every call of a tool has these arguments (it may have more).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<ArgsExpect>,
    /// At most this many tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u32>,
    /// At most this much cost (models and tools, in the session's unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgsExpect {
    pub tool: String,
    pub args: Map<String, Value>,
}

/// An expectation a run broke, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Broken {
    /// The expectation's key: `tools`, `tool_set`, `args`, `max_calls`, `max_cost`.
    pub expect: String,
    pub detail: String,
}

/// A finished run against its task's expectations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectVerdict {
    /// How many expectations the task set.
    pub checked: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<Broken>,
}

impl ExpectVerdict {
    pub fn met(&self) -> bool {
        self.broken.is_empty()
    }
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        *self == Expect::default()
    }

    /// How many expectations it sets (each `args` entry is one).
    pub fn count(&self) -> u32 {
        (!self.tools.is_empty()) as u32
            + (!self.tool_set.is_empty()) as u32
            + self.args.len() as u32
            + self.max_calls.is_some() as u32
            + self.max_cost.is_some() as u32
    }

    /// A file's mistakes, by field: an empty tool name, a cost that is no number.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.tools.iter().chain(&self.tool_set).any(|t| t.trim().is_empty()) {
            return Err(("expect.tools", "names an empty tool".into()));
        }
        if self.args.iter().any(|a| a.tool.trim().is_empty()) {
            return Err(("expect.args", "names an empty tool".into()));
        }
        if self.max_cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            return Err(("expect.max_cost", "must be a number of at least 0".into()));
        }
        Ok(())
    }

    /// What the calls so far (tool and arguments, in order) and the cost
    /// so far already break, whatever the run does next.
    pub fn broken_so_far(&self, calls: &[(String, Value)], cost: f64) -> Vec<Broken> {
        let mut out = Vec::new();
        if let Some(n) = self.max_calls.filter(|n| calls.len() > *n as usize) {
            out.push(Broken {
                expect: "max_calls".into(),
                detail: format!(
                    "{} call{}, at most {n} expected",
                    calls.len(),
                    if calls.len() == 1 { "" } else { "s" }
                ),
            });
        }
        if let Some(c) = self.max_cost.filter(|c| cost > *c) {
            out.push(Broken { expect: "max_cost".into(), detail: format!("cost {cost:.4}, at most {c} expected") });
        }
        for a in &self.args {
            let wrong = calls.iter().enumerate().find_map(|(i, (tool, args))| {
                (*tool == a.tool).then(|| mismatch(&a.args, args).map(|m| (i, m))).flatten()
            });
            if let Some((i, m)) = wrong {
                out.push(Broken { expect: "args".into(), detail: format!("call {} of {}: {m}", i + 1, a.tool) });
            }
        }
        out
    }

    /// Every expectation the finished run broke.
    pub fn judge(&self, calls: &[(String, Value)], cost: f64) -> ExpectVerdict {
        let mut broken = self.broken_so_far(calls, cost);
        if !self.tools.is_empty() {
            // The expected tools as a subsequence of the calls.
            let mut want = self.tools.iter().peekable();
            for (tool, _) in calls {
                if want.peek().is_some_and(|w| *w == tool) {
                    want.next();
                }
            }
            if let Some(missing) = want.next() {
                let called: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
                broken.push(Broken {
                    expect: "tools".into(),
                    detail: format!(
                        "expected {} in order; {missing} did not come (called: {})",
                        self.tools.join(" → "),
                        if called.is_empty() { "nothing".into() } else { called.join(", ") }
                    ),
                });
            }
        }
        let missing: Vec<&str> =
            self.tool_set.iter().filter(|t| !calls.iter().any(|(c, _)| c == *t)).map(String::as_str).collect();
        if !missing.is_empty() {
            broken.push(Broken { expect: "tool_set".into(), detail: format!("never called: {}", missing.join(", ")) });
        }
        for a in &self.args {
            if !calls.iter().any(|(t, _)| *t == a.tool) && !broken.iter().any(|b| b.expect == "args") {
                broken.push(Broken { expect: "args".into(), detail: format!("{} was never called", a.tool) });
            }
        }
        ExpectVerdict { checked: self.count(), broken }
    }
}

/// Why `args` lacks one of `want`'s arguments, or has another value.
fn mismatch(want: &Map<String, Value>, args: &Value) -> Option<String> {
    for (k, v) in want {
        match args.get(k) {
            None => return Some(format!("no '{k}' (expected {v})")),
            Some(got) if !same(got, v) => return Some(format!("'{k}' is {got}, expected {v}")),
            _ => {}
        }
    }
    None
}

/// Equal as JSON, numbers by value (`2` and `2.0` alike).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn calls(list: &[(&str, Value)]) -> Vec<(String, Value)> {
        list.iter().map(|(t, a)| (t.to_string(), a.clone())).collect()
    }

    fn expect(v: Value) -> Expect {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn tools_in_order_are_a_subsequence_and_a_set_any_order() {
        let e = expect(json!({"tools": ["geo", "fx"], "tool_set": ["fx", "geo"]}));
        let ok = calls(&[("geo", json!({})), ("calc", json!({})), ("fx", json!({}))]);
        assert!(e.judge(&ok, 0.0).met());
        assert_eq!(e.judge(&ok, 0.0).checked, 2);
        let reversed = calls(&[("fx", json!({})), ("geo", json!({}))]);
        let v = e.judge(&reversed, 0.0);
        assert_eq!(v.broken.len(), 1, "{v:?}");
        assert_eq!(v.broken[0].expect, "tools");
        assert!(v.broken[0].detail.contains("fx did not come"), "{v:?}");
        let v = e.judge(&calls(&[("geo", json!({}))]), 0.0);
        assert_eq!(v.broken.iter().map(|b| b.expect.as_str()).collect::<Vec<_>>(), ["tools", "tool_set"]);
    }

    #[test]
    fn arguments_must_match_on_every_call_numbers_by_value() {
        let e = expect(json!({"args": [{"tool": "geo", "args": {"country": "Australia", "n": 2}}]}));
        assert!(e.judge(&calls(&[("geo", json!({"country": "Australia", "n": 2.0, "x": 1}))]), 0.0).met());
        let wrong = calls(&[("geo", json!({"country": "Austria", "n": 2}))]);
        let so_far = e.broken_so_far(&wrong, 0.0);
        assert_eq!(so_far[0].detail, "call 1 of geo: 'country' is \"Austria\", expected \"Australia\"");
        let v = e.judge(&calls(&[("calc", json!({}))]), 0.0);
        assert_eq!(v.broken[0].detail, "geo was never called");
    }

    #[test]
    fn calls_and_cost_over_their_caps_break_before_the_run_ends() {
        let e = expect(json!({"max_calls": 2, "max_cost": 1.5}));
        let two = calls(&[("a", json!({})), ("b", json!({}))]);
        assert!(e.broken_so_far(&two, 1.5).is_empty());
        let three = calls(&[("a", json!({})), ("b", json!({})), ("c", json!({}))]);
        let b = e.broken_so_far(&three, 2.0);
        assert_eq!(b.iter().map(|b| b.expect.as_str()).collect::<Vec<_>>(), ["max_calls", "max_cost"]);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        assert!(serde_json::from_value::<Expect>(json!({"tool": ["a"]})).is_err());
        assert_eq!(expect(json!({"max_cost": -1.0})).check().unwrap_err().0, "expect.max_cost");
        assert_eq!(expect(json!({"tools": [" "]})).check().unwrap_err().0, "expect.tools");
        assert!(Expect::default().is_empty());
    }
}
