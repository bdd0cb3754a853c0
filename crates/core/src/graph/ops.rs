//! The graph's edits as data. Every call that changes a
//! [`ToolGraph`](super::ToolGraph) is recorded as an [`Op`], so a store can
//! persist a change as the few bytes of the call rather than the rows it
//! rewrote (each update rewrites `start`'s row, an edge to every tool), and
//! replay it on load through the same code, which gives the same numbers.
//!
//! Each state has a 64-bit id, its *head*: a hash of the state as built or
//! loaded, chained with every op since. Equal heads mean equal states (up to
//! a 64-bit collision), so a store can tell what it has already written and
//! a journal whether it extends the snapshot beside it.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

/// How many ops a graph keeps for its store; a store that fell further
/// behind (it saves after every task, so it never should) writes a whole
/// snapshot instead.
const KEPT_OPS: usize = 1024;

/// One call that changed the graph, with the arguments that replay it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Op {
    /// `apply_scores`, with the deltas it applied (clamped, tools only).
    Scores {
        deltas: BTreeMap<String, i32>,
        alpha: f64,
        beta: f64,
    },
    SetScore {
        tool: String,
        score: f64,
        alpha: f64,
        beta: f64,
    },
    Recompute {
        alpha: f64,
        beta: f64,
    },
    AddTool {
        name: String,
    },
}

impl Op {
    /// The head of the state this op leads to from the state `head`.
    fn after(&self, head: u64) -> u64 {
        let mut h = StateHash::new(head);
        match self {
            Op::Scores { deltas, alpha, beta } => {
                h.word(1);
                h.word(deltas.len() as u64);
                for (name, &delta) in deltas {
                    h.text(name);
                    h.word(u64::from(delta as u32));
                }
                h.float(*alpha);
                h.float(*beta);
            }
            Op::SetScore { tool, score, alpha, beta } => {
                h.word(2);
                h.text(tool);
                h.float(*score);
                h.float(*alpha);
                h.float(*beta);
            }
            Op::Recompute { alpha, beta } => {
                h.word(3);
                h.float(*alpha);
                h.float(*beta);
            }
            Op::AddTool { name } => {
                h.word(4);
                h.text(name);
            }
        }
        h.finish()
    }
}

/// The latest ops of a graph, each with the head it led to.
#[derive(Debug, Clone)]
pub(super) struct OpLog {
    /// The head before the oldest kept op.
    base: u64,
    ops: VecDeque<(Op, u64)>,
}

impl OpLog {
    /// A log that starts at the state `head`.
    pub(super) fn new(head: u64) -> Self {
        OpLog { base: head, ops: VecDeque::new() }
    }

    pub(super) fn head(&self) -> u64 {
        self.ops.back().map_or(self.base, |&(_, head)| head)
    }

    pub(super) fn record(&mut self, op: Op) {
        let head = op.after(self.head());
        self.ops.push_back((op, head));
        if self.ops.len() > KEPT_OPS
            && let Some((_, dropped)) = self.ops.pop_front()
        {
            self.base = dropped;
        }
    }

    /// The ops that lead from the state `head` to the current one, each as
    /// (head before, op, head after); `None` if `head` is not a state of
    /// this log (another graph's, or older than the kept ops).
    pub(super) fn since(&self, head: u64) -> Option<Vec<(u64, &Op, u64)>> {
        let first = if head == self.base { 0 } else { self.ops.iter().position(|&(_, after)| after == head)? + 1 };
        let mut before = if first == 0 { self.base } else { self.ops[first - 1].1 };
        let mut out = Vec::with_capacity(self.ops.len() - first);
        for (op, after) in self.ops.iter().skip(first) {
            out.push((before, op, *after));
            before = *after;
        }
        Some(out)
    }
}

/// A 64-bit hash that stays the same across platforms and Rust versions
/// (unlike `DefaultHasher`), since heads are written to files. Each word goes
/// through a bijection of the state, so inputs that differ in one word never
/// collide.
pub(super) struct StateHash(u64);

impl StateHash {
    pub(super) fn new(seed: u64) -> Self {
        StateHash(seed ^ 0x243F_6A88_85A3_08D3)
    }

    pub(super) fn word(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    pub(super) fn float(&mut self, x: f64) {
        self.word(x.to_bits());
    }

    pub(super) fn text(&mut self, s: &str) {
        self.word(s.len() as u64);
        for chunk in s.as_bytes().chunks(8) {
            let mut bytes = [0u8; 8];
            bytes[..chunk.len()].copy_from_slice(chunk);
            self.word(u64::from_le_bytes(bytes));
        }
    }

    /// MurmurHash3's finaliser, so every bit of the state reaches every bit
    /// of the result.
    pub(super) fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^= h >> 33;
        h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(tool: &str, delta: i32) -> Op {
        Op::Scores { deltas: BTreeMap::from([(tool.to_owned(), delta)]), alpha: 0.5, beta: 0.5 }
    }

    #[test]
    fn since_returns_the_ops_after_a_head() {
        let mut log = OpLog::new(7);
        assert_eq!(log.since(7).map(|ops| ops.len()), Some(0));
        log.record(scores("a", 1));
        let first = log.head();
        log.record(scores("b", 2));
        let ops = log.since(first).unwrap_or_default();
        assert_eq!(ops.len(), 1);
        assert_eq!((ops[0].0, ops[0].1, ops[0].2), (first, &scores("b", 2), log.head()));
        assert_eq!(log.since(7).map(|ops| ops.len()), Some(2));
        assert!(log.since(12345).is_none());
    }

    #[test]
    fn heads_depend_on_every_argument() {
        let heads: Vec<u64> = [
            scores("a", 1),
            scores("a", 2),
            scores("b", 1),
            Op::Scores { deltas: BTreeMap::from([("a".to_owned(), 1)]), alpha: 0.5, beta: 0.25 },
            Op::AddTool { name: "a".to_owned() },
            Op::Recompute { alpha: 0.5, beta: 0.5 },
        ]
        .iter()
        .map(|op| op.after(0))
        .collect();
        for (i, a) in heads.iter().enumerate() {
            assert!(heads[i + 1..].iter().all(|b| a != b), "{heads:?}");
        }
        assert_ne!(scores("a", 1).after(0), scores("a", 1).after(1));
    }

    #[test]
    fn the_log_keeps_the_latest_ops() {
        let mut log = OpLog::new(0);
        for i in 0..KEPT_OPS + 10 {
            log.record(Op::AddTool { name: format!("t{i}") });
        }
        assert_eq!(log.since(log.base).map(|ops| ops.len()), Some(KEPT_OPS));
        assert!(log.since(0).is_none());
    }
}
