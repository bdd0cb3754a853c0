//! The tool judge (is a tool due here?) trained on annotated texts, its
//! threshold chosen on held-out texts, and its precision and recall.

use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use serde_json::{Value, json};

use super::data::{judge_examples, seeded};
use super::error::{Result, TrainingError};
use super::hooks::Hooks;
use crate::retrieve::cotools::Judge;
use crate::train::{JudgeOptions, TrainLog, train_judge};

/// One training of the judge.
#[derive(Clone, Debug)]
pub struct JudgePlan {
    /// Annotated call-text files to train on.
    pub train: Vec<PathBuf>,
    /// An annotated call-text file to test on (every word boundary).
    pub test: Option<PathBuf>,
    /// Words of text before a position that the judge reads.
    pub window: usize,
    /// Non-call positions sampled per training text.
    pub negatives: usize,
    /// Share of training texts that choose the threshold.
    pub validation: f64,
    pub options: JudgeOptions,
}

/// Precision, recall and F1 of scores above a threshold.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Prf {
    pub precision: f32,
    pub recall: f32,
    pub f1: f32,
    pub positives: usize,
    pub n: usize,
}

pub fn prf(scores: &[f32], labels: &[bool], threshold: f32) -> Prf {
    let (mut tp, mut fp, mut fneg) = (0usize, 0usize, 0usize);
    for (&s, &l) in scores.iter().zip(labels) {
        match (s > threshold, l) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fneg += 1,
            _ => {}
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f32 / b as f32 };
    let (precision, recall) = (ratio(tp, tp + fp), ratio(tp, tp + fneg));
    let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
    Prf { precision, recall, f1, positives: tp + fneg, n: labels.len() }
}

/// The judge trained, and how it did.
pub struct JudgeOutcome {
    pub judge: Judge,
    pub log: TrainLog,
    /// Kept in the judge file.
    pub summary: Value,
    pub positions: usize,
    pub validation_positions: usize,
    pub threshold: f32,
    /// On the test file: at the chosen threshold, and at the paper's 0.5.
    pub test: Option<(Prf, Prf)>,
}

impl JudgeOutcome {
    /// What `heads judge --json` prints.
    pub fn json(&self, out: &Path) -> Value {
        let test = self.test.map(|(t, h)| json!({"at_threshold": t, "at_0.5": h}));
        json!({"summary": self.summary, "test": test, "out": out.display().to_string()})
    }

    /// What `heads judge` prints: the training, the chosen threshold, and
    /// the test's precision and recall at it and at the paper's 0.5.
    pub fn text(&self) -> String {
        let threshold = self.threshold;
        let mut out = format!(
            "trained the judge on {} positions ({} calls) in {:.1} s; threshold {threshold:.2} chosen on {} held-out positions\n",
            self.positions, self.summary["positives"], self.log.seconds, self.validation_positions
        );
        if let Some((t, h)) = self.test {
            for (name, m) in [(format!("threshold {threshold:.2}"), t), ("threshold 0.50".to_owned(), h)] {
                out += &format!(
                    "test ({} positions, {} calls), {name}: precision {:.1}%  recall {:.1}%  F1 {:.3}\n",
                    m.n,
                    m.positives,
                    100.0 * m.precision,
                    100.0 * m.recall,
                    m.f1
                );
            }
        }
        out
    }
}

/// A plan's training texts read, before any vector is computed.
pub struct PreparedJudge<'a> {
    plan: &'a JudgePlan,
    texts: Vec<Vec<(String, bool)>>,
    rng: rand_chacha::ChaCha8Rng,
}

impl JudgePlan {
    /// Reads the training texts: every fault of them is found before an
    /// embedder is loaded.
    pub fn prepare(&self) -> Result<PreparedJudge<'_>> {
        if !(0.0..1.0).contains(&self.validation) {
            return Err(TrainingError::Options("--validation is a share in [0, 1)".into()));
        }
        let mut rng = seeded(self.options.seed);
        let mut texts = Vec::new();
        for p in &self.train {
            texts.extend(judge_examples(p, self.window, Some(self.negatives), &mut rng)?);
        }
        Ok(PreparedJudge { plan: self, texts, rng })
    }
}

pub fn train_judge_and_test(prepared: PreparedJudge, embedder_id: &str, hooks: &mut dyn Hooks) -> Result<JudgeOutcome> {
    let PreparedJudge { plan, texts, mut rng } = prepared;
    // Whole texts go to validation, so its positions are not near-copies of trained ones.
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.shuffle(&mut rng);
    let cut = (texts.len() as f64 * plan.validation).round() as usize;
    let flat = |idx: &[usize]| -> Vec<(String, bool)> { idx.iter().flat_map(|&i| texts[i].clone()).collect() };
    let (val, fit) = (flat(&order[..cut]), flat(&order[cut..]));
    let vecs = |hooks: &mut dyn Hooks, ex: &[(String, bool)], what: &str| -> Result<(Vec<Vec<f32>>, Vec<bool>)> {
        let v = hooks.embed(&ex.iter().map(|e| e.0.clone()).collect::<Vec<_>>(), what)?;
        Ok((v, ex.iter().map(|e| e.1).collect()))
    };
    let (xs, labels) = vecs(hooks, &fit, "judge training positions")?;
    let opts = &plan.options;
    let what = "training the judge";
    hooks.start(what, xs.len().div_ceil(opts.batch) * opts.epochs);
    let trained = train_judge(&xs, &labels, opts, embedder_id, &mut |p| hooks.step(what, &p));
    hooks.finish();
    let (mut judge, log) = trained?;
    let mut threshold = 0.5;
    let mut val_prf = None;
    if !val.is_empty() {
        let (vx, vl) = vecs(hooks, &val, "judge validation positions")?;
        let scores: Vec<f32> = vx.iter().map(|x| judge.score(x)).collect();
        let best = (1..20).map(|k| k as f32 * 0.05).map(|t| (t, prf(&scores, &vl, t))).fold(
            None,
            |b: Option<(f32, Prf)>, c| {
                if b.is_none_or(|b| c.1.f1 > b.1.f1) { Some(c) } else { b }
            },
        );
        if let Some((t, m)) = best {
            threshold = t;
            val_prf = Some(m);
        }
    }
    judge.set_threshold(threshold);
    let mut test = None;
    if let Some(p) = &plan.test {
        let ex: Vec<(String, bool)> = judge_examples(p, plan.window, None, &mut rng)?.into_iter().flatten().collect();
        let (tx, tl) = vecs(hooks, &ex, "judge test positions")?;
        let scores: Vec<f32> = tx.iter().map(|x| judge.score(x)).collect();
        test = Some((prf(&scores, &tl, threshold), prf(&scores, &tl, 0.5)));
    }
    let summary = json!({
        "train": plan.train.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "positions": xs.len(), "positives": labels.iter().filter(|l| **l).count(),
        "window": plan.window, "negatives_per_text": plan.negatives, "epochs": opts.epochs, "hidden": opts.hidden,
        "lr": opts.lr, "seed": opts.seed, "threshold": threshold, "validation": val_prf,
        "final_loss": log.epoch_loss.last(), "seconds": log.seconds,
    });
    judge.set_summary(summary.to_string());
    Ok(JudgeOutcome { judge, log, summary, positions: xs.len(), validation_positions: val.len(), threshold, test })
}
