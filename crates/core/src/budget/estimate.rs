//! Expected value v(q_u, t) and frequency constraint F̃(q_u, t) of each
//! candidate tool for a new query, from past experience (BTP §2.2,
//! equations 3 and 4; docs/src/papers/btp.md).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::experience::Experience;
use super::tally::Tally;
use crate::retrieve::similarity;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub tool: String,
    /// v(q_u, t), in [0, 1].
    pub value: f64,
    /// F̃(q_u, t): 0 when `value` < τ.
    pub freq: f64,
    /// |E_t|, the past usages of the tool.
    pub uses: usize,
    /// The tool had no experience, so `Defaults` stand in for v and F̃.
    pub defaulted: bool,
}

/// v₀ and F₀ for a tool with no experience.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Defaults {
    pub value: f64,
    pub freq: f64,
}

impl Default for Defaults {
    /// An unknown tool gets one try at even odds: v₀ = 0.5 passes the usual
    /// τ, so a new tool is not shut out before it has any record, and F₀ = 1
    /// keeps that try from eating a budget the known tools have earned.
    fn default() -> Self {
        Self { value: 0.5, freq: 1.0 }
    }
}

/// v and F̃ for every candidate tool, in the order of `tools`:
///
/// ```text
/// v(q_u,t) = Σ_{U∈E_t} exp(sim(q_u,q_U))·score(U) / Σ_{U∈E_t} exp(sim(q_u,q_U))
/// F̃(q_u,t) = 0 if v < τ, else Σ_q exp(sim(q_u,q))·F(q,t) / Σ_q exp(sim(q_u,q))
/// ```
///
/// with q over the distinct past queries in which t was used and F(q, t) the
/// number of times it was used for q. A tool with no experience gets
/// `defaults` (and v₀ < τ still gives F̃ = 0). `sim` is
/// [`crate::retrieve::similarity`] (see [`estimate_with`] for another).
pub fn estimate(
    query: &str,
    tools: &[String],
    experience: &[Experience],
    tau: f64,
    defaults: Defaults,
) -> Vec<Estimate> {
    estimate_with(query, tools, &experience.iter().collect(), tau, defaults, &similarity)
}

/// [`estimate`] over counted usages, with the query similarity `sim` given:
/// the retriever's dense cosine when an embedder is loaded.
///
/// The usages of t for one query q all weigh exp(sim(q_u, q)), so v's sums
/// over U are sums over q of that weight times the usages (and the helpful
/// ones) counted for q.
pub fn estimate_with(
    query: &str,
    tools: &[String],
    experience: &Tally,
    tau: f64,
    defaults: Defaults,
    sim: &dyn Fn(&str, &str) -> f64,
) -> Vec<Estimate> {
    // Each distinct past query is scored once, whatever the tools using it.
    let mut cache: HashMap<&str, f64> = HashMap::new();
    tools
        .iter()
        .map(|tool| {
            let Some(per_query) = experience.of(tool).filter(|p| !p.is_empty()) else {
                let freq = if defaults.value < tau { 0.0 } else { defaults.freq };
                return Estimate { tool: tool.clone(), value: defaults.value, freq, uses: 0, defaulted: true };
            };
            let (mut num, mut den, mut fden, mut uses) = (0.0, 0.0, 0.0, 0usize);
            for (q, counts) in per_query {
                let w = *cache.entry(q).or_insert_with(|| sim(query, q).exp());
                num += w * f64::from(counts.helpful);
                den += w * f64::from(counts.used);
                fden += w;
                uses += counts.used as usize;
            }
            let value = num / den;
            // Σ_q w·F(q,t) is v's denominator.
            let freq = if value < tau { 0.0 } else { den / fden };
            Estimate { tool: tool.clone(), value, freq, uses, defaulted: false }
        })
        .collect()
}
