//! Embedders: text in, one vector per text out. A dense embedder is what the
//! retriever's cosine scores, the vector cache keeps and CoTools' heads are
//! trained on; the lexical scorer (BM25) needs none and stays the default.

use std::path::PathBuf;

/// Why an embedder could not give vectors. Every variant names what failed
/// and where: a file, an endpoint, a dimension.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("dense embedder: {path}: missing; install it with `{install}`")]
    Missing { path: PathBuf, install: &'static str },
    #[error(
        "dense embedder: {path}: sha256 {got} is not the recorded {want}; the file is corrupt or not the expected one: reinstall with `{install}`"
    )]
    Checksum { path: PathBuf, got: String, want: String, install: &'static str },
    #[error("dense embedder: {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("dense embedder: {0}")]
    Compute(String),
    #[error("embeddings endpoint {url}: {reason}")]
    Endpoint { url: String, reason: String },
    #[error("embeddings endpoint {url}: vectors of {got} dimensions, expected {want}")]
    Dimension { url: String, got: usize, want: usize },
    #[error("vector cache {path}: {reason}")]
    Cache { path: PathBuf, reason: String },
}

/// A sentence embedder. `id` names the model and its settings, so vectors
/// (in the cache, in a heads file) from another embedder are never mixed in.
pub trait Embedder: Send + Sync {
    /// A stable name, e.g. `minilm-l6-v2` or `http:nomic-embed-text`.
    fn id(&self) -> &str;
    /// Dimensions of every vector.
    fn dim(&self) -> usize;
    /// One vector per text, in order, each of length `dim()`, L2-normalised.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product; for normalised vectors, their cosine.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent sums let the compiler vectorise the loop.
    let mut acc = [0.0f32; 8];
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_of_unequal_lengths_past_a_chunk_matches_the_plain_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-4);
    }

    #[test]
    fn normalise_gives_unit_length_and_leaves_zero_alone() {
        let mut v = vec![3.0, 4.0];
        normalise(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0; 3];
        normalise(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }
}
