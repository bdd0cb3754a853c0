//! An exact vector index: every tool's vector in one contiguous `f32`
//! matrix, scored by dot product (cosine, the vectors being normalised).
//! At 16,000 tools × 384 dimensions a full scan is about six million
//! multiply-adds, a millisecond or so on one core, so no approximate index
//! is needed; beyond a million tools an HNSW graph (e.g. `hnsw_rs`) or an
//! IVF-PQ index would take over, with this scan kept to re-rank its hits.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::embed::dot;

#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    dim: usize,
    rows: usize,
    data: Vec<f32>,
}

/// A row and its score, ordered so the heap's top is the worst kept.
#[derive(PartialEq)]
struct Kept(f32, usize);

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kept {
    // Lower score is "greater" (popped first); on a tie the later row goes.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl VectorIndex {
    pub fn new(dim: usize) -> Self {
        VectorIndex { dim, rows: 0, data: Vec::new() }
    }

    /// Builds from rows of length `dim`.
    pub fn from_rows(dim: usize, rows: impl IntoIterator<Item = Vec<f32>>) -> Self {
        let mut index = VectorIndex::new(dim);
        for r in rows {
            index.push(&r);
        }
        index
    }

    /// Appends a row (a tool's vector); a row of another length is a bug in
    /// the caller, which checks embedder dimensions first.
    pub fn push(&mut self, v: &[f32]) {
        assert_eq!(v.len(), self.dim, "vector of {} dimensions in an index of {}", v.len(), self.dim);
        self.data.extend_from_slice(v);
        self.rows += 1;
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The score of every row against `query`, in row order.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if self.dim == 0 {
            return vec![0.0; self.rows];
        }
        self.data.chunks_exact(self.dim).map(|row| dot(row, query)).collect()
    }

    /// The `k` best rows for `query`, best first (ties: lower row first).
    pub fn top_k(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        top_k_of(&self.scores(query), k)
    }
}

/// The `k` largest of `scores` as (position, score), best first; ties go to
/// the lower position so results are deterministic.
pub fn top_k_of(scores: &[f32], k: usize) -> Vec<(usize, f32)> {
    if k == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Kept> = BinaryHeap::with_capacity(k + 1);
    for (i, &s) in scores.iter().enumerate() {
        if heap.len() < k {
            heap.push(Kept(s, i));
        } else if let Some(worst) = heap.peek()
            && Kept(s, i) < *worst
        {
            heap.pop();
            heap.push(Kept(s, i));
        }
    }
    let mut out: Vec<(usize, f32)> = heap.into_iter().map(|Kept(s, i)| (i, s)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_matches_a_full_sort_with_ties_to_the_lower_row() {
        let scores = [0.1, 0.9, 0.5, 0.9, -0.2, 0.5, 0.7];
        let mut all: Vec<(usize, f32)> = scores.iter().copied().enumerate().collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in 0..=scores.len() + 1 {
            assert_eq!(top_k_of(&scores, k), all[..k.min(scores.len())].to_vec(), "k = {k}");
        }
    }

    #[test]
    fn rows_are_scored_by_dot_product() {
        let index = VectorIndex::from_rows(2, [vec![1.0, 0.0], vec![0.0, 1.0], vec![0.6, 0.8]]);
        assert_eq!(index.top_k(&[0.0, 1.0], 2), vec![(1, 1.0), (2, 0.8)]);
        assert_eq!(index.row(2), &[0.6, 0.8]);
    }
}
