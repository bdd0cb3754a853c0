//! A run against its task's expectations as it goes: the calls so far,
//! and which broken expectations a breakpoint was already told of.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::task::{Broken, Expect, ExpectVerdict};

#[derive(Debug, Default)]
pub struct Expecting {
    expect: Expect,
    calls: Vec<(String, Value)>,
    told: BTreeSet<String>,
}

impl Expecting {
    pub fn new(expect: Expect) -> Expecting {
        Expecting { expect, ..Expecting::default() }
    }

    pub fn call(&mut self, tool: &str, args: &Value) {
        if !self.expect.is_empty() {
            self.calls.push((tool.to_string(), args.clone()));
        }
    }

    /// What became broken for certain since last asked.
    pub fn newly_broken(&mut self, cost: f64) -> Vec<Broken> {
        if self.expect.is_empty() {
            return Vec::new();
        }
        let broken = self.expect.broken_so_far(&self.calls, cost);
        broken.into_iter().filter(|b| self.told.insert(b.expect.clone())).collect()
    }

    /// The verdict on the finished run; none when the task expects nothing.
    pub fn verdict(&self, cost: f64) -> Option<ExpectVerdict> {
        (!self.expect.is_empty()).then(|| self.expect.judge(&self.calls, cost))
    }
}
