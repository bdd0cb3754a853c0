//! Re-scoring a retriever's first candidates with a learned linear model
//! over [`features`]: the retriever's own score and BM25 (standardised over
//! the candidates), and how the question's words meet the domain, subject
//! type and property of each candidate's id. Trained by `retrieval rescore
//! train` on questions with their gold tool (a softmax over each question's
//! candidates); the candidates past the first `k` keep their order.

pub mod features;

use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::features::{COUNT, NAMES, QuestionWords};
use super::blend::standardise;
use super::retriever::{Rescore, Scored};

/// What a rescore file holds, and what is written when saving one.
const FORMAT: &str = "switchyard-rescore/1";

/// Why a rescore file could not be used.
#[derive(thiserror::Error, Debug)]
pub enum RescoreError {
    #[error("could not read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("could not write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    Invalid { path: PathBuf, why: String },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedRescorer {
    format: String,
    k: usize,
    features: Vec<String>,
    weights: Vec<f32>,
    #[serde(default)]
    trained: Value,
}

/// A trained re-scorer: the first `k` candidates are re-ordered by the
/// weighted sum of their features.
#[derive(Debug, Clone, PartialEq)]
pub struct Rescorer {
    k: usize,
    weights: [f32; COUNT],
    label: String,
}

impl Rescorer {
    /// A re-scorer of the first `k` candidates (at least 2) with `weights`.
    pub fn new(k: usize, weights: [f32; COUNT], label: impl Into<String>) -> Self {
        Rescorer { k: k.max(2), weights, label: label.into() }
    }

    pub fn load(path: &Path) -> Result<Self, RescoreError> {
        let text = std::fs::read_to_string(path).map_err(|source| RescoreError::Read { path: path.into(), source })?;
        let invalid = |why: String| RescoreError::Invalid { path: path.into(), why };
        let saved: SavedRescorer = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if saved.format != FORMAT {
            return Err(invalid(format!("format: '{}' is not '{FORMAT}'", saved.format)));
        }
        if saved.features != NAMES {
            return Err(invalid(format!(
                "features: {:?} are not this version's {:?} (train the re-scorer again)",
                saved.features, NAMES
            )));
        }
        let weights: [f32; COUNT] = saved
            .weights
            .try_into()
            .map_err(|w: Vec<f32>| invalid(format!("weights: {} numbers, not one a feature ({COUNT})", w.len())))?;
        if weights.iter().any(|w| !w.is_finite()) {
            return Err(invalid("weights: not every one is a finite number".into()));
        }
        if saved.k < 2 {
            return Err(invalid(format!("k: {} candidates leave nothing to re-order (at least 2)", saved.k)));
        }
        let label = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Rescorer { k: saved.k, weights, label })
    }

    /// Writes the re-scorer with `trained` (what it was trained on, its
    /// figures) beside it.
    pub fn save(&self, path: &Path, trained: Value) -> Result<(), RescoreError> {
        let saved = SavedRescorer {
            format: FORMAT.into(),
            k: self.k,
            features: NAMES.iter().map(|n| (*n).to_owned()).collect(),
            weights: self.weights.to_vec(),
            trained,
        };
        let text = serde_json::to_string_pretty(&saved).expect("a rescorer serialises");
        std::fs::write(path, text + "\n").map_err(|source| RescoreError::Write { path: path.into(), source })
    }

    pub fn weights(&self) -> &[f32; COUNT] {
        &self.weights
    }
}

impl Rescore for Rescorer {
    fn k(&self) -> usize {
        self.k
    }

    fn label(&self) -> &str {
        &self.label
    }

    /// Re-orders the first `k` of `ranked` (best first) for `question`,
    /// setting their `rescore`; the rest keep their place.
    fn rescore(&self, question: &str, ranked: &mut [Scored]) {
        let n = ranked.len().min(self.k);
        let rows = candidate_features(question, &ranked[..n]);
        for (hit, row) in ranked.iter_mut().zip(&rows) {
            hit.rescore = Some(dot(&self.weights, row));
        }
        ranked[..n].sort_by(|a, b| b.rescore.unwrap_or(0.0).total_cmp(&a.rescore.unwrap_or(0.0)));
    }
}

pub fn dot(w: &[f32; COUNT], x: &[f32; COUNT]) -> f32 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

/// The features of each of `candidates` (best first) for `question`.
pub fn candidate_features(question: &str, candidates: &[Scored]) -> Vec<[f32; COUNT]> {
    let words = QuestionWords::new(question);
    let mut score: Vec<f32> = candidates.iter().map(|c| c.score).collect();
    let mut lexical: Vec<f32> = candidates.iter().map(|c| c.lexical).collect();
    standardise(&mut score);
    standardise(&mut lexical);
    candidates.iter().enumerate().map(|(i, c)| features::features(&words, &c.name, i, score[i], lexical[i])).collect()
}

/// One training question: its candidates' features and which is gold.
pub struct Example {
    pub rows: Vec<[f32; COUNT]>,
    pub gold: usize,
}

/// How the weights are fitted.
#[derive(Debug, Clone, Copy)]
pub struct Fit {
    pub epochs: usize,
    pub learning_rate: f32,
    pub l2: f32,
    pub seed: u64,
}

impl Default for Fit {
    fn default() -> Self {
        Fit { epochs: 60, learning_rate: 0.05, l2: 1e-3, seed: 0 }
    }
}

/// Weights that make each example's gold candidate likely under a softmax
/// over its candidates (stochastic gradient descent, one example a step).
/// They start as the retriever's own order (all weight on `score_z`), so an
/// example set that teaches nothing leaves the ranking as it was.
pub fn fit(examples: &[Example], fit: Fit) -> [f32; COUNT] {
    let mut w = [0.0f32; COUNT];
    w[0] = 1.0;
    let mut order: Vec<usize> = (0..examples.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(fit.seed);
    for _ in 0..fit.epochs {
        order.shuffle(&mut rng);
        for &i in &order {
            let Example { rows, gold } = &examples[i];
            if *gold >= rows.len() {
                continue;
            }
            let scores: Vec<f32> = rows.iter().map(|r| dot(&w, r)).collect();
            let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let exp: Vec<f32> = scores.iter().map(|s| (s - top).exp()).collect();
            let z: f32 = exp.iter().sum();
            let mut grad = [0.0f32; COUNT];
            for (j, row) in rows.iter().enumerate() {
                let p = exp[j] / z - f32::from(j == *gold);
                for (g, x) in grad.iter_mut().zip(row) {
                    *g += p * x;
                }
            }
            for (wj, g) in w.iter_mut().zip(grad) {
                *wj -= fit.learning_rate * (g + fit.l2 * *wj);
            }
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(name: &str, score: f32) -> Scored {
        Scored { name: name.into(), score, lexical: 1.0, dense: None, head: None, rescore: None }
    }

    /// Questions whose gold tool's property comes first in the question,
    /// ranked second by a retriever that prefers the inverse relation.
    fn inverse_first(gold: &str, inverse: &str) -> Vec<Scored> {
        vec![hit(inverse, 0.8), hit(gold, 0.7), hit("other/thing/else", 0.1)]
    }

    #[test]
    fn training_learns_the_order_of_property_and_subject() {
        let cases = [
            ("What genre of TV program is Sun Vulcan?", "tv/tv_program/genre", "tv/tv_genre/programs"),
            ("What genre of film is Alien?", "film/film/genre", "film/film_genre/films"),
            ("Which country of origin has the band Abba?", "music/band/country", "music/country/bands"),
            ("What language of book is Quo Vadis?", "book/book/language", "book/language/books"),
        ];
        let examples: Vec<Example> = cases
            .iter()
            .map(|(q, gold, inverse)| Example { rows: candidate_features(q, &inverse_first(gold, inverse)), gold: 1 })
            .collect();
        let w = fit(&examples, Fit::default());
        assert!(w[5] > 0.0, "property before type is learnt as a sign of the gold tool: {w:?}");
        let rescorer = Rescorer::new(3, w, "test");
        let q = "What genre of video game is Doom?";
        let mut ranked = inverse_first("cvg/video_game/genre", "cvg/genre/video_games");
        rescorer.rescore(q, &mut ranked);
        assert_eq!(ranked[0].name, "cvg/video_game/genre");
        assert!(ranked.iter().all(|h| h.rescore.is_some()));
    }

    #[test]
    fn untaught_weights_keep_the_retrievers_order_and_the_tail_stays() {
        let w = fit(&[], Fit::default());
        let rescorer = Rescorer::new(2, w, "test");
        let mut ranked = vec![hit("a/b/c", 0.9), hit("d/e/f", 0.5), hit("g/h/i", 0.95)];
        rescorer.rescore("anything", &mut ranked);
        let names: Vec<&str> = ranked.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["a/b/c", "d/e/f", "g/h/i"]);
        assert_eq!(ranked[2].rescore, None);
    }

    #[test]
    fn a_saved_rescorer_loads_back_and_a_bad_file_names_its_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rescore.json");
        let mut w = [0.0; COUNT];
        w[5] = 0.5;
        Rescorer::new(10, w, "x").save(&path, serde_json::json!({"questions": 3})).unwrap();
        let back = Rescorer::load(&path).unwrap();
        assert_eq!((back.k(), back.weights(), back.label()), (10, &w, "rescore.json"));

        let text = std::fs::read_to_string(&path).unwrap();
        let bad = |from: &str, to: &str, expect: &str| {
            std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
            let err = Rescorer::load(&path).unwrap_err().to_string();
            assert!(err.contains("rescore.json") && err.contains(expect), "{err}");
        };
        bad("\"k\": 10", "\"k\": 1", "k: 1");
        bad("\"log_rank\"", "\"rank\"", "features:");
        bad("0.5,", "0.5, 0.1,", "weights: 10 numbers");
        bad("\"format\": \"switchyard-rescore/1\"", "\"format\": \"other\"", "format:");
        bad("\"k\": 10,", "\"k\": 10", "line ");
        assert!(Rescorer::load(&dir.path().join("none.json")).unwrap_err().to_string().contains("could not read"));
    }
}
