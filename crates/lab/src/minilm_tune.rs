//! all-MiniLM-L6-v2 as something to train: its six transformer layers as
//! candle variables, the embeddings frozen, and a forward pass made only
//! of operations candle can differentiate. candle's fused layer norm has
//! no gradient, which is why this is not `switchyard_dense::minilm::MiniLm`'s
//! model; the saved file has BERT's tensor names, so `MiniLm` reads it
//! back for inference (`[retrieval] minilm_weights`).
//!
//! Training is the heads' contrastive loss one level down: for a batch of
//! (question, tool text) pairs, cross entropy over the batch's distinct
//! tools, the logits being the pooled vectors' cosines over a temperature
//! (sentence-transformers' multiple-negatives loss).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{AdamW, Embedding, Linear, Optimizer, ParamsAdamW, VarBuilder, VarMap, embedding, linear};
use tokenizers::Tokenizer;

use crate::retrieve::embed::EmbedError;
use switchyard_dense::encoder::{Batch, masked_mean, tokenizer};
use switchyard_dense::minilm::{FILES, MAX_TOKENS};

const HIDDEN: usize = 384;
const HEADS: usize = 12;
const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const EPS: f32 = 1e-12;

struct Norm {
    weight: Tensor,
    bias: Tensor,
}

impl Norm {
    fn new(vb: VarBuilder) -> candle_core::Result<Self> {
        Ok(Norm { weight: vb.get(HIDDEN, "weight")?, bias: vb.get(HIDDEN, "bias")? })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm_slow(x, &self.weight, &self.bias, EPS)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// MiniLM with trainable transformer layers.
pub struct TunableMiniLm {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    /// The frozen embeddings' tensors, written back beside the tuned layers.
    frozen: HashMap<String, Tensor>,
    vars: VarMap,
    tokenizer: Mutex<Tokenizer>,
}

#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub epochs: usize,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    pub temperature: f64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        // sentence-transformers' defaults for this loss (lr 2e-5, scale 20).
        TuneOptions { epochs: 3, batch: 32, lr: 2e-5, weight_decay: 1e-2, temperature: 0.05 }
    }
}

impl TunableMiniLm {
    /// The installed MiniLM in `dir` (files checked by sha256), ready to train.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_from(dir, &dir.join("model.safetensors"))
    }

    /// The installed MiniLM's tokenizer with the weights of `file` (written
    /// by [`Self::save`]: `retrieval tune`'s, or a cross-encoder's whose
    /// extra tensors are left to its owner).
    pub fn load_from(dir: &Path, file: &Path) -> Result<Self, EmbedError> {
        FILES.check(dir)?;
        let tokenizer = tokenizer(dir, MAX_TOKENS, (0, "[PAD]"))?;
        let file = file.to_owned();
        let err = |e: &dyn std::fmt::Display| EmbedError::Load { path: file.clone(), reason: e.to_string() };
        let device = Device::Cpu;
        let build = |tokenizer: Mutex<Tokenizer>| -> candle_core::Result<TunableMiniLm> {
            // SAFETY: mapped read-only; Switchyard never writes a file it is reading.
            let weights = unsafe { candle_core::safetensors::MmapedSafetensors::new(&file)? };
            let frozen_vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&file], DType::F32, &device)? };
            let e = frozen_vb.pp("embeddings");
            let vars = VarMap::new();
            let vb = VarBuilder::from_varmap(&vars, DType::F32, &device);
            let mut layers = Vec::with_capacity(LAYERS);
            for i in 0..LAYERS {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                layers.push(Layer {
                    query: linear(HIDDEN, HIDDEN, a.pp("self.query"))?,
                    key: linear(HIDDEN, HIDDEN, a.pp("self.key"))?,
                    value: linear(HIDDEN, HIDDEN, a.pp("self.value"))?,
                    attention_out: linear(HIDDEN, HIDDEN, a.pp("output.dense"))?,
                    attention_norm: Norm::new(a.pp("output.LayerNorm"))?,
                    intermediate: linear(HIDDEN, INTERMEDIATE, l.pp("intermediate.dense"))?,
                    output: linear(INTERMEDIATE, HIDDEN, l.pp("output.dense"))?,
                    output_norm: Norm::new(l.pp("output.LayerNorm"))?,
                });
            }
            // The variables were made with initialisers; the file's values replace them.
            for (name, var) in vars.data().lock().unwrap_or_else(|p| p.into_inner()).iter() {
                var.set(&weights.load(name, &device)?)?;
            }
            let mut frozen = HashMap::new();
            for name in weights.tensors().into_iter().map(|(n, _)| n).filter(|n| n.starts_with("embeddings.")) {
                frozen.insert(name.clone(), weights.load(&name, &device)?);
            }
            Ok(TunableMiniLm {
                words: embedding(30522, HIDDEN, e.pp("word_embeddings"))?,
                positions: embedding(512, HIDDEN, e.pp("position_embeddings"))?,
                token_types: embedding(2, HIDDEN, e.pp("token_type_embeddings"))?,
                embedding_norm: Norm::new(e.pp("LayerNorm"))?,
                layers,
                frozen,
                vars,
                tokenizer,
            })
        };
        build(tokenizer).map_err(|e| err(&e))
    }

    /// Each text's mean-pooled, unit-length vector, as a differentiable
    /// `(texts, 384)` tensor.
    fn forward(&self, texts: &[&str]) -> Result<Tensor, EmbedError> {
        let batch = Batch::encode(&self.tokenizer, texts)?;
        self.forward_batch(&batch).map_err(|e| EmbedError::Compute(e.to_string()))
    }

    fn forward_batch(&self, batch: &Batch) -> candle_core::Result<Tensor> {
        let pooled = self.pooled(batch)?;
        let norm = (pooled.sqr()?.sum_keepdim(1)? + 1e-12)?.sqrt()?;
        pooled.broadcast_div(&norm)
    }

    /// Each `(first, second)` pair read as one sequence, mean-pooled (not
    /// normalised): `(pairs, 384)`, differentiable.
    pub fn pooled_pairs(&self, pairs: &[(&str, &str)]) -> Result<Tensor, EmbedError> {
        let batch = Batch::encode_pairs(&self.tokenizer, pairs)?;
        self.pooled(&batch).map_err(|e| EmbedError::Compute(e.to_string()))
    }

    /// The mean of the last layer over the real tokens, `(texts, 384)`.
    fn pooled(&self, batch: &Batch) -> candle_core::Result<Tensor> {
        let device = Device::Cpu;
        let (n, len) = (batch.n, batch.len);
        let ids = batch.tensor(&batch.ids, &device)?;
        let mask = batch.tensor(&batch.mask, &device)?.to_dtype(DType::F32)?;
        let positions = Tensor::arange(0u32, len as u32, &device)?;
        let types = batch.tensor(&batch.types, &device)?;
        let x = self.words.forward(&ids)?.broadcast_add(&self.positions.forward(&positions)?)?;
        let mut x = self.embedding_norm.forward(&(x + self.token_types.forward(&types)?)?)?;
        let hidden_mask = ((&mask - 1.0)? * 1e4)?.reshape((n, 1, 1, len))?;
        let head = HIDDEN / HEADS;
        for l in &self.layers {
            let split = |t: Tensor| t.reshape((n, len, HEADS, head))?.transpose(1, 2)?.contiguous();
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? / (head as f64).sqrt())?.broadcast_add(&hidden_mask)?;
            let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
            let c = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((n, len, HIDDEN))?;
            let attended = l.attention_norm.forward(&(l.attention_out.forward(&c)? + &x)?)?;
            let inner = l.intermediate.forward(&attended)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&inner)? + attended)?)?;
        }
        masked_mean(&x, &mask)
    }

    /// The vectors of `texts` as the model stands (no gradient kept).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        switchyard_dense::encoder::in_batches(texts, 32, |batch| {
            let v = self.forward(batch)?;
            v.detach().to_vec2::<f32>().map_err(|e| EmbedError::Compute(e.to_string()))
        })
    }

    /// An optimiser over the trainable layers.
    pub fn optimiser(&self, opts: &TuneOptions) -> Result<AdamW, EmbedError> {
        let params = ParamsAdamW { lr: opts.lr, weight_decay: opts.weight_decay, ..Default::default() };
        AdamW::new(self.vars.all_vars(), params).map_err(|e| EmbedError::Compute(e.to_string()))
    }

    /// The trainable layers' variables.
    pub fn vars(&self) -> &VarMap {
        &self.vars
    }

    /// One step on a batch: `queries[i]`'s tool is `tools[labels[i]]`, the
    /// other tools are its negatives. Returns the batch's loss.
    pub fn step(
        &self,
        opt: &mut AdamW,
        queries: &[&str],
        tools: &[&str],
        labels: &[u32],
        temperature: f64,
    ) -> Result<f32, EmbedError> {
        let q = self.forward(queries)?;
        let t = self.forward(tools)?;
        let loss = (|| {
            let logits = (q.matmul(&t.t()?)? / temperature)?;
            let labels = Tensor::from_slice(labels, labels.len(), &Device::Cpu)?;
            let loss = candle_nn::loss::cross_entropy(&logits, &labels)?;
            opt.backward_step(&loss)?;
            loss.to_scalar::<f32>()
        })();
        loss.map_err(|e| EmbedError::Compute(e.to_string()))
    }

    /// Writes the model as BERT's safetensors (the frozen embeddings and
    /// the tuned layers), which `MiniLm::load_tuned` reads.
    pub fn save(&self, path: &Path) -> Result<(), EmbedError> {
        self.save_with(path, HashMap::new())
    }

    /// [`Self::save`] with `extra` tensors beside BERT's (a cross-encoder's head).
    pub fn save_with(&self, path: &Path, extra: HashMap<String, Tensor>) -> Result<(), EmbedError> {
        let mut all = self.frozen.clone();
        all.extend(extra);
        for (name, var) in self.vars.data().lock().unwrap_or_else(|p| p.into_inner()).iter() {
            all.insert(name.clone(), var.as_tensor().clone());
        }
        candle_core::safetensors::save(&all, path)
            .map_err(|e| EmbedError::Load { path: path.to_owned(), reason: format!("cannot write: {e}") })
    }
}
