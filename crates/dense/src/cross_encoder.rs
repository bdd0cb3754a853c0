//! A cross-encoder of the first candidates: MiniLM reads the question and a
//! tool's text as one sequence (`[CLS] question [SEP] tool [SEP]`) and a
//! linear head on the mean of its last layer scores the pair. A bi-encoder
//! pools each side apart, so a relation and its inverse (the same words in
//! another order) land close; reading both together, attention can match
//! the entity the question names against the subject of the relation.
//!
//! Trained by `retrieval cross train` (the laboratory's `CrossTrainer`) as a
//! softmax over each training question's first candidates (the gold tool
//! among them), starting from MiniLM's weights (installed or tuned). The file
//! is MiniLM's safetensors with the head and its settings beside them; a
//! search reads it with [`CrossEncoder`], on candle's BERT, which holds no
//! variables to train.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use candle_core::{Device, Module};
use candle_nn::Linear;
use candle_transformers::models::bert::BertModel;
use tokenizers::Tokenizer;

use crate::encoder::{Batch, masked_mean};
use crate::minilm::{self, MiniLm};
use crate::retrieve::blend::standardise;
use crate::retrieve::embed::EmbedError;
use crate::retrieve::retriever::{Rescore, Scored, doc_text};

/// The width of MiniLM's pooled vector, which the head reads.
pub const HIDDEN: usize = 384;
/// The head's tensors' prefix in the saved file.
pub const HEAD: &str = "cross_encoder.score";
/// `[k, blend]` in the saved file.
pub const SETTINGS: &str = "cross_encoder.settings";
/// Pairs scored at once when not training.
pub const BATCH: usize = 16;

/// A trained cross-encoder, read-only: what a search uses.
pub struct CrossEncoder {
    model: BertModel,
    tokenizer: Mutex<Tokenizer>,
    head: Linear,
    /// How many of the retriever's first candidates it re-orders.
    pub k: usize,
    /// The weight of the retriever's own score (standardised over the `k`)
    /// added to the pair's.
    pub blend: f32,
}

pub fn compute(e: candle_core::Error) -> EmbedError {
    EmbedError::Compute(e.to_string())
}

/// The first candidates' scores: each pair's plus `blend` times the
/// retriever's own, standardised over the candidates.
pub fn combined(pair_scores: &[f32], retriever_scores: &[f32], blend: f32) -> Vec<f32> {
    let mut z = retriever_scores.to_vec();
    standardise(&mut z);
    pair_scores.iter().zip(&z).map(|(s, z)| s + blend * z).collect()
}

impl CrossEncoder {
    /// A cross-encoder `retrieval cross train` wrote to `file`, on the
    /// installed MiniLM's tokenizer in `dir`.
    pub fn load(dir: &Path, file: &Path) -> Result<Self, EmbedError> {
        let invalid = |reason: String| EmbedError::Load { path: file.to_owned(), reason };
        if !file.exists() {
            return Err(invalid("no such file (write it with `switchyard retrieval cross train`)".into()));
        }
        // SAFETY: mapped read-only; Switchyard never writes a file it is reading.
        let tensors =
            unsafe { candle_core::safetensors::MmapedSafetensors::new(file) }.map_err(|e| invalid(e.to_string()))?;
        let get = |name: &str| {
            tensors.load(name, &Device::Cpu).map_err(|_| {
                invalid(format!(
                    "no tensor {name}: not a cross-encoder (write one with `switchyard retrieval cross train`)"
                ))
            })
        };
        let (weight, bias, settings) = (get(&format!("{HEAD}.weight"))?, get(&format!("{HEAD}.bias"))?, get(SETTINGS)?);
        let settings: Vec<f32> =
            settings.flatten_all().and_then(|t| t.to_vec1()).map_err(|e| invalid(e.to_string()))?;
        let [k, blend] = settings[..] else {
            return Err(invalid(format!("{SETTINGS}: {} numbers, not 2 (k, blend)", settings.len())));
        };
        if !(k.is_finite() && k >= 2.0 && blend.is_finite()) {
            return Err(invalid(format!("{SETTINGS}: k {k} (at least 2) and blend {blend} (a number)")));
        }
        if weight.dims() != [1, HIDDEN] || bias.dims() != [1] {
            return Err(invalid(format!(
                "{HEAD}: shapes {:?} and {:?}, not [1, {HIDDEN}] and [1]",
                weight.dims(),
                bias.dims()
            )));
        }
        let (model, tokenizer) = minilm::bert(dir, file)?;
        Ok(CrossEncoder { model, tokenizer, head: Linear::new(weight, Some(bias)), k: k as usize, blend })
    }

    /// Each `(question, tool text)` pair's score.
    pub fn scores(&self, pairs: &[(&str, &str)]) -> Result<Vec<f32>, EmbedError> {
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(BATCH) {
            let batch = Batch::encode_pairs(&self.tokenizer, chunk)?;
            let scores = (|| {
                let device = Device::Cpu;
                let ids = batch.tensor(&batch.ids, &device)?;
                let types = batch.tensor(&batch.types, &device)?;
                let mask = batch.tensor(&batch.mask, &device)?;
                let hidden = self.model.forward(&ids, &types, Some(&mask))?;
                self.head.forward(&masked_mean(&hidden, &mask)?)?.squeeze(1)?.to_vec1::<f32>()
            })()
            .map_err(compute)?;
            out.extend(scores);
        }
        Ok(out)
    }
}

/// The cross-encoder as the retriever's re-scorer: it knows each tool's
/// text, so a search's first candidates can be read with the question.
pub struct CrossRescorer {
    encoder: CrossEncoder,
    texts: HashMap<String, String>,
    label: String,
}

impl CrossRescorer {
    /// `encoder` over the tools `docs` (name, description), labelled by its file.
    pub fn new<'a>(encoder: CrossEncoder, docs: impl IntoIterator<Item = (&'a str, &'a str)>, path: &Path) -> Self {
        let label = format!("cross {}", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
        let texts = docs.into_iter().map(|(n, d)| (n.to_owned(), doc_text(n, d))).collect();
        CrossRescorer { encoder, texts, label }
    }

    /// The cross-encoder in `file` over `docs`, on the installed MiniLM
    /// under `data_dir`: what `[retrieval] cross_encoder` opens.
    pub fn load<'a>(
        data_dir: &Path,
        file: &Path,
        docs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, EmbedError> {
        Ok(Self::new(CrossEncoder::load(&MiniLm::folder(data_dir), file)?, docs, file))
    }
}

impl Rescore for CrossRescorer {
    fn label(&self) -> &str {
        &self.label
    }

    fn k(&self) -> usize {
        self.encoder.k
    }

    /// Re-orders the first `k` by the pair scores (plus the blend); on a
    /// compute error the retriever's order stands.
    fn rescore(&self, query: &str, ranked: &mut [Scored]) {
        let n = ranked.len().min(self.encoder.k);
        let pairs: Vec<(&str, &str)> = ranked[..n]
            .iter()
            .map(|h| (query, self.texts.get(&h.name).map_or(h.name.as_str(), String::as_str)))
            .collect();
        let scores = match self.encoder.scores(&pairs) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cross-encoder failed; the retriever's order stands");
                return;
            }
        };
        let own: Vec<f32> = ranked[..n].iter().map(|h| h.score).collect();
        for (hit, s) in ranked.iter_mut().zip(combined(&scores, &own, self.encoder.blend)) {
            hit.rescore = Some(s);
        }
        ranked[..n].sort_by(|a, b| b.rescore.unwrap_or(0.0).total_cmp(&a.rescore.unwrap_or(0.0)));
    }
}
