//! Past usages counted per tool and per distinct query: all that BTP's
//! estimates (BTP §2.2, equations 3 and 4) read from experience.
//!
//! Both sums of the estimates run over usages, but every usage of one tool
//! for one query weighs the same exp(sim(q_u, q)): counting them loses
//! nothing. Memory then grows with the distinct (tool, query) pairs, not
//! with the usages, so a long session over a fixed task list stays flat,
//! and an estimate costs one similarity per distinct query, not per usage.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// How often a tool was used for one query, and how often it helped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub used: u32,
    pub helpful: u32,
}

/// The usages of every tool, by query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Each distinct query once, shared by the tools that were used for it.
    queries: HashSet<Arc<str>>,
    /// Per tool, its queries in their own order (so sums over them do not
    /// depend on the order the usages came in).
    tools: HashMap<Arc<str>, BTreeMap<Arc<str>, Counts>>,
    usages: usize,
}

impl Tally {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one usage of `tool` for `query`.
    pub fn add(&mut self, query: &str, tool: &str, helpful: bool) {
        let query = match self.queries.get(query) {
            Some(q) => q.clone(),
            None => {
                let q: Arc<str> = query.into();
                self.queries.insert(q.clone());
                q
            }
        };
        let per_query = match self.tools.get_mut(tool) {
            Some(p) => p,
            None => self.tools.entry(tool.into()).or_default(),
        };
        let counts = per_query.entry(query).or_default();
        counts.used += 1;
        counts.helpful += u32::from(helpful);
        self.usages += 1;
    }

    /// All the usages counted.
    pub fn usages(&self) -> usize {
        self.usages
    }

    /// The distinct past queries, in no particular order.
    pub fn queries(&self) -> impl Iterator<Item = &str> {
        self.queries.iter().map(|q| &**q)
    }

    /// `tool`'s usages by query, in the queries' order; None if never used.
    pub fn of(&self, tool: &str) -> Option<&BTreeMap<Arc<str>, Counts>> {
        self.tools.get(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_tool_and_query_and_shares_query_text() {
        let mut t = Tally::new();
        for (q, tool, helpful) in [("q1", "a", true), ("q1", "a", false), ("q2", "a", true), ("q1", "b", true)] {
            t.add(q, tool, helpful);
        }
        assert_eq!(t.usages(), 4);
        let a = t.of("a").unwrap();
        assert_eq!(a["q1"], Counts { used: 2, helpful: 1 });
        assert_eq!(a["q2"], Counts { used: 1, helpful: 1 });
        assert_eq!(t.of("b").unwrap()["q1"], Counts { used: 1, helpful: 1 });
        assert!(t.of("c").is_none());
        let mut qs: Vec<&str> = t.queries().collect();
        qs.sort_unstable();
        assert_eq!(qs, ["q1", "q2"]);
        let (ka, _) = a.get_key_value("q1").unwrap();
        let (kb, _) = t.of("b").unwrap().get_key_value("q1").unwrap();
        assert!(Arc::ptr_eq(ka, kb), "one copy of a query's text, whatever the number of tools");
    }
}
