//! Training the cross-encoder of the first candidates (`retrieval cross
//! train`): MiniLM with a scoring head at zero, a softmax over each training
//! question's candidates (the gold tool among them), written in the file
//! `switchyard_dense::cross_encoder::CrossEncoder` reads.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{AdamW, Linear, Optimizer, ParamsAdamW, VarBuilder, VarMap, linear};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::minilm_tune::TunableMiniLm;
use crate::retrieve::embed::EmbedError;
use switchyard_dense::cross_encoder::{BATCH, HEAD, HIDDEN, SETTINGS, compute};

/// MiniLM reading (question, tool) pairs with a scoring head, being trained.
pub struct CrossTrainer {
    model: TunableMiniLm,
    head: Linear,
    head_vars: VarMap,
    k: usize,
}

/// One training question: its candidates' texts and which is the gold tool.
#[derive(Debug, Clone)]
pub struct Group {
    pub query: String,
    pub texts: Vec<String>,
    pub gold: usize,
}

#[derive(Debug, Clone)]
pub struct CrossOptions {
    pub epochs: usize,
    /// Questions a step (each with all its candidates).
    pub questions: usize,
    /// The transformer layers' learning rate.
    pub lr: f64,
    /// The head's: it starts at zero, so it must move faster than the layers.
    pub head_lr: f64,
    pub seed: u64,
}

impl Default for CrossOptions {
    fn default() -> Self {
        CrossOptions { epochs: 1, questions: 4, lr: 2e-5, head_lr: 1e-3, seed: 7 }
    }
}

/// The scoring head, its variables at zero: candle's random initialiser
/// would make the same seed train another model.
fn zero_head() -> Result<(Linear, VarMap), EmbedError> {
    let vars = VarMap::new();
    let head = linear(HIDDEN, 1, VarBuilder::from_varmap(&vars, DType::F32, &Device::Cpu).pp(HEAD)).map_err(compute)?;
    for var in vars.all_vars() {
        var.set(&var.zeros_like().map_err(compute)?).map_err(compute)?;
    }
    Ok((head, vars))
}

impl CrossTrainer {
    /// A new cross-encoder of the first `k` candidates on MiniLM's weights
    /// in `init` (the installed model's file, or `retrieval tune`'s), its
    /// head at zero.
    pub fn new(dir: &Path, init: &Path, k: usize) -> Result<Self, EmbedError> {
        let model = TunableMiniLm::load_from(dir, init)?;
        let (head, head_vars) = zero_head()?;
        Ok(CrossTrainer { model, head, head_vars, k: k.max(2) })
    }

    /// Each pair's score, differentiable: `(pairs,)`.
    fn logits(&self, pairs: &[(&str, &str)]) -> Result<Tensor, EmbedError> {
        let pooled = self.model.pooled_pairs(pairs)?;
        self.head.forward(&pooled).and_then(|t| t.squeeze(1)).map_err(compute)
    }

    /// Each `(question, tool text)` pair's score.
    pub fn scores(&self, pairs: &[(&str, &str)]) -> Result<Vec<f32>, EmbedError> {
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(BATCH) {
            out.extend(self.logits(chunk)?.detach().to_vec1::<f32>().map_err(compute)?);
        }
        Ok(out)
    }

    /// Trains on `groups`, calling `progress(epoch, step, steps, loss)`
    /// after each step; returns each epoch's mean loss.
    pub fn train(
        &self,
        groups: &[Group],
        opts: &CrossOptions,
        progress: &mut dyn FnMut(usize, usize, usize, f32),
    ) -> Result<Vec<f32>, EmbedError> {
        let adam = |vars: &VarMap, lr: f64| {
            AdamW::new(vars.all_vars(), ParamsAdamW { lr, weight_decay: 1e-2, ..Default::default() }).map_err(compute)
        };
        let (mut layers, mut head) = (adam(self.model.vars(), opts.lr)?, adam(&self.head_vars, opts.head_lr)?);
        let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
        let mut order: Vec<usize> = (0..groups.len()).collect();
        let steps = groups.len().div_ceil(opts.questions.max(1));
        let mut losses = Vec::with_capacity(opts.epochs);
        for epoch in 1..=opts.epochs {
            order.shuffle(&mut rng);
            let mut total = 0.0;
            for (step, chunk) in order.chunks(opts.questions.max(1)).enumerate() {
                let chunk: Vec<&Group> = chunk.iter().map(|&i| &groups[i]).collect();
                let pairs: Vec<(&str, &str)> =
                    chunk.iter().flat_map(|g| g.texts.iter().map(|t| (g.query.as_str(), t.as_str()))).collect();
                let logits = self.logits(&pairs)?;
                let loss = (|| {
                    let mut parts = Vec::with_capacity(chunk.len());
                    let mut at = 0;
                    for g in &chunk {
                        let scores = logits.narrow(0, at, g.texts.len())?;
                        let log_p = candle_nn::ops::log_softmax(&scores, D::Minus1)?;
                        parts.push(log_p.get(g.gold)?.neg()?);
                        at += g.texts.len();
                    }
                    let loss = Tensor::stack(&parts, 0)?.mean_all()?;
                    let grads = loss.backward()?;
                    layers.step(&grads)?;
                    head.step(&grads)?;
                    loss.to_scalar::<f32>()
                })()
                .map_err(compute)?;
                total += loss;
                progress(epoch, step + 1, steps, loss);
            }
            losses.push(total / steps.max(1) as f32);
        }
        Ok(losses)
    }

    /// Writes MiniLM's tensors, the head and `[k, blend]`.
    pub fn save(&self, path: &Path, blend: f32) -> Result<(), EmbedError> {
        let mut extra = HashMap::new();
        for (name, var) in self.head_vars.data().lock().unwrap_or_else(|p| p.into_inner()).iter() {
            extra.insert(name.clone(), var.as_tensor().clone());
        }
        let settings = Tensor::new(&[self.k as f32, blend], &Device::Cpu).map_err(compute)?;
        extra.insert(SETTINGS.to_owned(), settings);
        self.model.save_with(path, extra)
    }
}
