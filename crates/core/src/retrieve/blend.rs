//! How lexical and dense scores are combined into one ranking.
//!
//! BM25 scores are unbounded and pool-dependent; cosines live in [-1, 1]
//! and bunch together. Adding them raw would let whichever spreads wider
//! decide. So each signal is standardised over the whole pool first (a
//! z-score: how many standard deviations a tool stands above the pool's
//! mean for this query), and the blend is
//!
//! ```text
//! score = w · z_lexical + (1 − w) · z_dense
//! ```
//!
//! with `w` the lexical weight (`lexical_weight`, default 0.3). A tool
//! sharing no word with the query gets BM25 0, which is simply a low
//! z-score, not a veto: a paraphrase can still win on meaning. When the
//! heads are loaded, z_dense is the z-score of the heads' cosine.

/// The lexical weight used when the config does not set one. Chosen on
/// SimpleToolQuestions' dev split (never on a test split).
pub const DEFAULT_LEXICAL_WEIGHT: f32 = 0.3;

/// Standardises `scores` in place to mean 0, standard deviation 1 (all
/// equal: all 0).
pub fn standardise(scores: &mut [f32]) {
    let n = scores.len() as f32;
    if scores.is_empty() {
        return;
    }
    let mean = scores.iter().sum::<f32>() / n;
    let var = scores.iter().map(|s| (s - mean) * (s - mean)).sum::<f32>() / n;
    let sd = var.sqrt();
    for s in scores.iter_mut() {
        *s = if sd > 1e-12 { (*s - mean) / sd } else { 0.0 };
    }
}

/// `w · z(lexical) + (1 − w) · z(dense)`, both over the same pool order.
pub fn blend(lexical: &[f32], dense: &[f32], lexical_weight: f32) -> Vec<f32> {
    let mut l = lexical.to_vec();
    let mut d = dense.to_vec();
    standardise(&mut l);
    standardise(&mut d);
    l.iter().zip(&d).map(|(l, d)| lexical_weight * l + (1.0 - lexical_weight) * d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_spread_signal_does_not_drown_a_narrow_one() {
        // Lexical prefers tool 0 by a lot in raw terms; dense prefers tool 1
        // by a little. Standardised and blended equally, they tie, not lexical.
        let b = blend(&[10.0, 0.0, 0.0, 5.0], &[0.30, 0.40, 0.30, 0.35], 0.5);
        assert!(b[1] > b[2] && b[0] > b[2]);
        let flat = blend(&[1.0, 1.0], &[0.2, 0.4], 0.5);
        assert!(flat[1] > flat[0]);
    }
}
