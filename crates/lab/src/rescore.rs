//! Training data for the re-scorer and its figures: each question ranked
//! once by the retriever (before any re-scoring), its first `k` candidates'
//! features kept with where the gold tool stands.

use serde::Serialize;

use crate::retrieve::embed::EmbedError;
use crate::retrieve::rescore::features::COUNT;
use crate::retrieve::rescore::{Example, candidate_features, dot};
use crate::retrieve::retriever::Retriever;

/// One question as the retriever ranked it.
pub struct Ranked {
    rows: Vec<[f32; COUNT]>,
    /// The gold tool's place over the whole pool (0 = first).
    gold: Option<usize>,
}

/// Ranks each (question, gold tool) over the whole pool; `progress(done,
/// total)` after each.
pub fn rank_questions(
    retriever: &Retriever,
    pairs: &[(String, String)],
    k: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Ranked>, EmbedError> {
    let mut out = Vec::with_capacity(pairs.len());
    for (i, (question, tool)) in pairs.iter().enumerate() {
        let ranked = retriever.search_unrescored(question, retriever.len())?;
        let gold = ranked.iter().position(|h| &h.name == tool);
        let first = &ranked[..ranked.len().min(k)];
        out.push(Ranked { rows: candidate_features(question, first), gold });
        progress(i + 1, pairs.len());
    }
    Ok(out)
}

/// The questions whose gold tool is among the first `k` (the others have
/// nothing to teach a re-ordering of those).
pub fn examples(ranked: &[Ranked]) -> Vec<Example> {
    ranked
        .iter()
        .filter_map(|r| r.gold.filter(|&g| g < r.rows.len()).map(|gold| Example { rows: r.rows.clone(), gold }))
        .collect()
}

/// Top-1, top-5 and MRR over the pool (shares in [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub top1: f64,
    pub top5: f64,
    pub mrr: f64,
}

impl Figures {
    /// From each question's gold rank over the pool (0 = first; None: not
    /// in the pool).
    pub fn of_ranks(ranks: impl IntoIterator<Item = Option<usize>>) -> Figures {
        let (mut n, mut top1, mut top5, mut rr) = (0usize, 0.0, 0.0, 0.0);
        for rank in ranks {
            n += 1;
            if let Some(rank) = rank {
                top1 += f64::from(u8::from(rank == 0));
                top5 += f64::from(u8::from(rank < 5));
                rr += 1.0 / (rank + 1) as f64;
            }
        }
        let n = n.max(1) as f64;
        Figures { top1: top1 / n, top5: top5 / n, mrr: rr / n }
    }
}

/// The gold candidate's place among candidates re-ordered by `scores`.
/// Ties go against it: a re-scorer that cannot tell them apart earns nothing.
pub fn place(scores: &[f32], gold: usize) -> usize {
    scores.iter().enumerate().filter(|&(i, s)| i != gold && *s >= scores[gold]).count()
}

/// The figures of `ranked` as the retriever left it (`weights` None) or
/// with its first candidates re-ordered by `weights`.
pub fn figures(ranked: &[Ranked], weights: Option<&[f32; COUNT]>) -> Figures {
    Figures::of_ranks(ranked.iter().map(|r| match (r.gold, weights) {
        (Some(g), Some(w)) if g < r.rows.len() => {
            Some(place(&r.rows.iter().map(|row| dot(w, row)).collect::<Vec<_>>(), g))
        }
        (g, _) => g,
    }))
}
