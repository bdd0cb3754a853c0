//! Fine-tuning MiniLM itself on heads train's split: the same held-out
//! tools never reach it, the same validation tools choose the epoch (by
//! the BM25 blend's top-1, the way the tuned model is used), then it is
//! trained again from the installed weights on every kept tool for that
//! many epochs. `heads train` with the tuned weights configured then
//! measures it on the test file's seen and unseen tools.

use std::path::Path;
use std::time::Instant;

use rand::seq::SliceRandom;
use serde_json::{Value, json};

use super::{Hooks, PreparedHeads, Ranked, choose_weight, ranks, seeded};
use crate::minilm_tune::{TunableMiniLm, TuneOptions};
use crate::retrieve::Bm25Index;
use crate::train::{Metrics, TrainProgress};

use super::error::{Result, TrainingError};

/// One epoch's loss and where it left validation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TuneEpoch {
    pub epoch: usize,
    /// The mean training loss (none for epoch 0, the installed weights).
    pub loss: Option<f32>,
    pub dense: Metrics,
    pub lexical_weight: f32,
    pub blend: Metrics,
}

pub struct TuneOutcome {
    pub model: TunableMiniLm,
    pub epochs: Vec<TuneEpoch>,
    pub best_epoch: usize,
    /// Trained again on every kept tool (the validation tools too).
    pub refit: bool,
    pub pairs: usize,
    pub trained_tools: usize,
    pub held_out_tools: usize,
    pub validation_tools: usize,
    pub seconds: f64,
}

impl TuneOutcome {
    pub fn json(&self, out: &Path) -> Value {
        json!({
            "epochs": self.epochs, "best_epoch": self.best_epoch, "refit": self.refit, "pairs": self.pairs,
            "trained_tools": self.trained_tools, "held_out_tools": self.held_out_tools,
            "validation_tools": self.validation_tools, "seconds": self.seconds, "out": out.display().to_string(),
        })
    }

    /// What `retrieval tune` prints: validation after each epoch.
    pub fn text(&self) -> String {
        let pct = |x: f32| format!("{:.1}%", 100.0 * x);
        let mut out = format!(
            "tuned on {} pairs ({} tools; {} tools held out, {} chose the epoch) in {:.0} s; best epoch {}{}\n\n",
            self.pairs,
            self.trained_tools,
            self.held_out_tools,
            self.validation_tools,
            self.seconds,
            self.best_epoch,
            if self.refit { ", then trained again on every kept tool" } else { "" }
        );
        out += &format!("{:<7} {:>7}   {:>22}   {:>29}\n", "epoch", "loss", "validation, dense", "validation, + BM25");
        out += &format!(
            "{:<7} {:>7}   {:>7} {:>7} {:>6}   {:>6} {:>7} {:>7} {:>6}\n",
            "", "", "top-1", "top-5", "MRR", "w", "top-1", "top-5", "MRR"
        );
        for e in &self.epochs {
            out += &format!(
                "{:<7} {:>7}   {:>7} {:>7} {:>6.3}   {:>6.2} {:>7} {:>7} {:>6.3}\n",
                e.epoch,
                e.loss.map_or("-".into(), |l| format!("{l:.3}")),
                pct(e.dense.top1),
                pct(e.dense.top5),
                e.dense.mrr,
                e.lexical_weight,
                pct(e.blend.top1),
                pct(e.blend.top5),
                e.blend.mrr
            );
        }
        out
    }
}

/// Tunes the installed MiniLM in `model_dir` on the plan's split.
pub fn tune_and_validate(
    prepared: PreparedHeads,
    model_dir: &Path,
    opts: &TuneOptions,
    hooks: &mut dyn Hooks,
) -> Result<TuneOutcome> {
    let started = Instant::now();
    let PreparedHeads { plan, pool, held_out, kept, kept_ex, val_tools, synthetic, .. } = prepared;
    if opts.epochs == 0 || opts.batch < 2 || opts.lr <= 0.0 || opts.temperature <= 0.0 {
        return Err(TrainingError::Options("--epochs at least 1, --batch at least 2, --lr positive".into()));
    }
    let tool_texts: Vec<String> = pool.tools.iter().map(|t| plan.tool_text.of(t)).collect();
    let tool_refs: Vec<&str> = tool_texts.iter().map(String::as_str).collect();
    let lexical = Bm25Index::new(pool.tools.iter().map(|t| (t.id.as_str(), t.description.as_str())));
    let fit: Vec<(&str, usize)> = kept_ex
        .iter()
        .filter(|e| !val_tools.contains(&e.tool))
        .chain(&synthetic)
        .map(|e| (e.query.as_str(), e.tool))
        .collect();
    let all: Vec<(&str, usize)> = kept_ex.iter().chain(&synthetic).map(|e| (e.query.as_str(), e.tool)).collect();
    let val: Vec<(&str, usize)> =
        kept_ex.iter().filter(|e| val_tools.contains(&e.tool)).map(|e| (e.query.as_str(), e.tool)).collect();
    let val_lexical: Vec<Vec<f32>> = val.iter().map(|(q, _)| lexical.scores(q)).collect();
    let trained_tools =
        |pairs: &[(&str, usize)]| pairs.iter().map(|p| p.1).collect::<std::collections::BTreeSet<_>>().len();

    let validate = |model: &TunableMiniLm, epoch: usize, loss: Option<f32>| -> Result<Option<TuneEpoch>> {
        if val.is_empty() {
            return Ok(None);
        }
        let tools = model.embed(&tool_refs)?;
        let vectors = model.embed(&val.iter().map(|v| v.0).collect::<Vec<_>>())?;
        let set = Ranked {
            vectors: vectors.iter().map(Vec::as_slice).collect(),
            lexical: val_lexical.clone(),
            gold: val.iter().map(|v| v.1).collect(),
        };
        let dense = Metrics::from_ranks(&ranks(&set, &tools, None, None));
        let (lexical_weight, blend) = choose_weight(&set, &tools, None);
        Ok(Some(TuneEpoch { epoch, loss, dense, lexical_weight, blend }))
    };
    let run = |pairs: &[(&str, usize)],
               epochs: usize,
               what: &str,
               hooks: &mut dyn Hooks,
               log: &mut Vec<TuneEpoch>|
     -> Result<TunableMiniLm> {
        let model = TunableMiniLm::load(model_dir)?;
        let mut opt = model.optimiser(opts)?;
        let mut rng = seeded(plan.options.seed);
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        let steps_per_epoch = pairs.len().div_ceil(opts.batch);
        hooks.start(what, steps_per_epoch * epochs);
        let mut step = 0;
        for epoch in 1..=epochs {
            order.shuffle(&mut rng);
            let mut total = 0.0;
            for chunk in order.chunks(opts.batch) {
                // Two questions of one tool share its column: neither is its other's negative.
                let mut columns: Vec<usize> = Vec::new();
                let labels: Vec<u32> = chunk
                    .iter()
                    .map(|&p| {
                        let t = pairs[p].1;
                        let i = columns.iter().position(|&c| c == t).unwrap_or_else(|| {
                            columns.push(t);
                            columns.len() - 1
                        });
                        i as u32
                    })
                    .collect();
                let queries: Vec<&str> = chunk.iter().map(|&p| pairs[p].0).collect();
                let tools: Vec<&str> = columns.iter().map(|&t| tool_refs[t]).collect();
                let loss = model.step(&mut opt, &queries, &tools, &labels, opts.temperature)?;
                total += loss * chunk.len() as f32;
                step += 1;
                hooks.step(
                    what,
                    &TrainProgress { epoch, step, steps: steps_per_epoch * epochs, loss, validation: None },
                );
            }
            let loss = total / pairs.len().max(1) as f32;
            if let Some(e) = validate(&model, epoch, Some(loss))? {
                hooks.step(
                    what,
                    &TrainProgress { epoch, step, steps: steps_per_epoch * epochs, loss, validation: Some(e.blend) },
                );
                log.push(e);
            }
        }
        hooks.finish();
        Ok(model)
    };

    let mut epochs: Vec<TuneEpoch> = Vec::new();
    if let Some(e) = validate(&TunableMiniLm::load(model_dir)?, 0, None)? {
        epochs.push(e);
    }
    let mut model = run(&fit, opts.epochs, "tuning", hooks, &mut epochs)?;
    let best_epoch = epochs
        .iter()
        .filter(|e| e.epoch > 0)
        .fold(None::<&TuneEpoch>, |best, e| match best {
            Some(b) if (b.blend.top1, b.blend.mrr) >= (e.blend.top1, e.blend.mrr) => Some(b),
            _ => Some(e),
        })
        .map_or(opts.epochs, |e| e.epoch);
    let refit = !plan.no_refit && !val.is_empty();
    if refit {
        model = run(&all, best_epoch, "tuning on all kept tools", hooks, &mut Vec::new())?;
    } else if best_epoch < opts.epochs {
        // Without a refit the chosen epoch's weights are wanted: train that far again.
        model = run(&fit, best_epoch, "tuning to the best epoch", hooks, &mut Vec::new())?;
    }
    Ok(TuneOutcome {
        model,
        epochs,
        best_epoch,
        refit,
        pairs: if refit { all.len() } else { fit.len() },
        trained_tools: if refit { kept.len() } else { trained_tools(&fit) },
        held_out_tools: held_out.len(),
        validation_tools: val_tools.len(),
        seconds: started.elapsed().as_secs_f64(),
    })
}
