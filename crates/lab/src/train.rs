//! Training CoTools' heads and judge on candle (CPU, f32).
//!
//! The retriever's loss is eq. 11: for a batch of (query, tool) pairs, the
//! logits are `E_Q(q) · E_T(t) / temperature` over the batch's distinct
//! tools and the label is the query's own tool. Two pairs sharing a tool
//! share one column, so neither is pushed away from its own answer (no
//! false negatives). Optionally each query brings its hardest wrong tools
//! (re-mined every epoch with the current heads, among the training
//! tools only) into the batch's columns: in-batch negatives alone are
//! mostly easy, and the pool at test time is not.
//!
//! Everything random (initialisation, shuffling) comes from one seed, so a
//! run is reproducible to the byte.

use std::time::Instant;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::retrieve::cotools::{Heads, HeadsError, Judge, Mlp};
use crate::retrieve::embed::dot;
use crate::retrieve::index::top_k_of;

#[derive(Debug, Clone)]
pub struct TrainOptions {
    /// D, the MLPs' intermediate size.
    pub hidden: usize,
    pub epochs: usize,
    pub batch: usize,
    pub lr: f64,
    /// W_dim's own learning rate (the paper: 0.01, against 1e-4 for the rest).
    pub dim_lr: f64,
    pub weight_decay: f64,
    pub temperature: f64,
    /// Hard negatives per query added to the batch's columns (0: the
    /// paper's pure in-batch training).
    pub negatives: usize,
    /// Each tool's group (say, its id's domain), one per tool: a query's
    /// hard negatives are then its gold tool's group's hardest, topped up
    /// from any training tool when the group has too few. None: the hardest
    /// of any group.
    pub negative_groups: Option<Vec<u32>>,
    pub seed: u64,
    /// Stop after this many epochs without a better validation score.
    pub patience: usize,
    /// Held-out queries ranked against every tool after each epoch; the
    /// best epoch's heads are returned.
    pub validation: Option<Validation>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            hidden: 256,
            epochs: 20,
            batch: 64,
            lr: 1e-3,
            dim_lr: 1e-2,
            weight_decay: 1e-2,
            temperature: 0.05,
            negatives: 0,
            negative_groups: None,
            seed: 0,
            patience: 4,
            validation: None,
        }
    }
}

/// Queries with their gold tool (an index into the tools trained on).
#[derive(Debug, Clone, Default)]
pub struct Validation {
    pub queries: Vec<Vec<f32>>,
    pub gold: Vec<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Metrics {
    pub top1: f32,
    pub top5: f32,
    pub mrr: f32,
    pub n: usize,
}

impl Metrics {
    /// From the rank (0 = first) of each query's gold tool.
    pub fn from_ranks(ranks: &[usize]) -> Metrics {
        let n = ranks.len();
        if n == 0 {
            return Metrics::default();
        }
        let share = |f: &dyn Fn(usize) -> f32| ranks.iter().map(|&r| f(r)).sum::<f32>() / n as f32;
        Metrics {
            top1: share(&|r| f32::from(u8::from(r == 0))),
            top5: share(&|r| f32::from(u8::from(r < 5))),
            mrr: share(&|r| 1.0 / (r + 1) as f32),
            n,
        }
    }

    fn better_than(&self, other: &Metrics) -> bool {
        (self.top1, self.mrr) > (other.top1, other.mrr)
    }
}

/// The rank of `gold` in `scores` (ties count against it: a tool scoring
/// the same as the gold one is ranked ahead).
pub fn rank_of(scores: &[f32], gold: usize) -> usize {
    let g = scores[gold];
    scores.iter().enumerate().filter(|&(i, &s)| i != gold && s >= g).count()
}

#[derive(Debug, Clone)]
pub struct TrainProgress {
    pub epoch: usize,
    pub step: usize,
    pub steps: usize,
    pub loss: f32,
    /// Set at the end of an epoch when there is a validation set.
    pub validation: Option<Metrics>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TrainLog {
    pub step_loss: Vec<f32>,
    pub epoch_loss: Vec<f32>,
    pub validation: Vec<Metrics>,
    /// The epoch (from 1) whose weights were kept.
    pub best_epoch: usize,
    pub seconds: f64,
}

fn candle(field: &str) -> impl Fn(candle_core::Error) -> HeadsError + '_ {
    move |e| HeadsError::Train { field: field.to_owned(), reason: e.to_string() }
}

fn uniform(rng: &mut ChaCha8Rng, n: usize, bound: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-bound..bound)).collect()
}

/// One MLP's weights as candle variables.
struct MlpVars {
    gate: Var,
    up: Var,
    down: Var,
    d: usize,
    hidden: usize,
    out: usize,
}

impl MlpVars {
    /// Gate and up drawn uniformly (±1/√d); `down` too unless `zero_down`,
    /// which makes the MLP output 0 at first (the encoder starts as the
    /// identity and the gradient still reaches `down` on the first step).
    fn new(rng: &mut ChaCha8Rng, d: usize, hidden: usize, out: usize, zero_down: bool) -> candle_core::Result<Self> {
        let dev = &Device::Cpu;
        let b = 1.0 / (d as f32).sqrt();
        let down =
            if zero_down { vec![0.0; out * hidden] } else { uniform(rng, out * hidden, 1.0 / (hidden as f32).sqrt()) };
        Ok(MlpVars {
            gate: Var::from_vec(uniform(rng, hidden * d, b), (hidden, d), dev)?,
            up: Var::from_vec(uniform(rng, hidden * d, b), (hidden, d), dev)?,
            down: Var::from_vec(down, (out, hidden), dev)?,
            d,
            hidden,
            out,
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let g = x.matmul(&self.gate.as_tensor().t()?)?.silu()?;
        let u = x.matmul(&self.up.as_tensor().t()?)?;
        (g * u)?.matmul(&self.down.as_tensor().t()?)
    }

    fn vars(&self) -> Vec<Var> {
        vec![self.gate.clone(), self.up.clone(), self.down.clone()]
    }

    fn snapshot(&self) -> candle_core::Result<Mlp> {
        let flat = |v: &Var| v.as_tensor().flatten_all()?.to_vec1::<f32>();
        Ok(Mlp {
            d: self.d,
            hidden: self.hidden,
            out: self.out,
            gate: flat(&self.gate)?,
            up: flat(&self.up)?,
            down: flat(&self.down)?,
        })
    }
}

fn rows(xs: &[Vec<f32>], pick: &[usize], d: usize) -> candle_core::Result<Tensor> {
    let data: Vec<f32> = pick.iter().flat_map(|&i| xs[i].iter().copied()).collect();
    Tensor::from_vec(data, (pick.len(), d), &Device::Cpu)
}

fn encode(mlp: &MlpVars, w_dim: &Var, x: &Tensor) -> candle_core::Result<Tensor> {
    let e = (x + mlp.forward(x)?)?.broadcast_mul(w_dim.as_tensor())?;
    let norm = (e.sqr()?.sum_keepdim(1)? + 1e-12)?.sqrt()?;
    e.broadcast_div(&norm)
}

fn check_vectors(field: &str, xs: &[Vec<f32>], d: usize) -> Result<(), HeadsError> {
    match xs.iter().position(|x| x.len() != d || x.iter().any(|v| !v.is_finite())) {
        Some(i) => Err(HeadsError::Train {
            field: format!("{field}[{i}]"),
            reason: format!("not a finite vector of {d} dimensions"),
        }),
        None => Ok(()),
    }
}

/// Trains the query and tool encoders on `pairs` of (query index, tool
/// index). Validation gold indices point into `tools` too, and validation
/// queries are ranked against all of `tools`.
pub fn train_heads(
    queries: &[Vec<f32>],
    tools: &[Vec<f32>],
    pairs: &[(usize, usize)],
    opts: &TrainOptions,
    embedder_id: &str,
    progress: &mut dyn FnMut(TrainProgress),
) -> Result<(Heads, TrainLog), HeadsError> {
    let started = Instant::now();
    let d = tools.first().map_or(0, Vec::len);
    let bad = |field: &str, reason: &str| HeadsError::Train { field: field.into(), reason: reason.into() };
    if d == 0 || pairs.is_empty() {
        return Err(bad("pairs", "nothing to train on (no tools or no (query, tool) pairs)"));
    }
    if opts.batch < 2 || opts.hidden == 0 || opts.temperature <= 0.0 {
        return Err(bad("options", "batch must be at least 2, hidden and temperature positive"));
    }
    check_vectors("queries", queries, d)?;
    check_vectors("tools", tools, d)?;
    if let Some(&(q, t)) = pairs.iter().find(|&&(q, t)| q >= queries.len() || t >= tools.len()) {
        return Err(bad("pairs", &format!("({q}, {t}) points past the queries or tools")));
    }
    if opts.negative_groups.as_ref().is_some_and(|g| g.len() != tools.len()) {
        return Err(bad("negative_groups", "one group per tool"));
    }
    if let Some(v) = &opts.validation {
        check_vectors("validation.queries", &v.queries, d)?;
        if v.gold.len() != v.queries.len() || v.gold.iter().any(|&g| g >= tools.len()) {
            return Err(bad("validation.gold", "one gold tool per query, each an index into the tools"));
        }
    }
    let err = candle("heads");
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let w_dim = Var::from_vec(vec![1.0f32; d], d, &Device::Cpu).map_err(&err)?;
    let q_mlp = MlpVars::new(&mut rng, d, opts.hidden, d, true).map_err(&err)?;
    let t_mlp = MlpVars::new(&mut rng, d, opts.hidden, d, true).map_err(&err)?;
    let adam = |lr, weight_decay| ParamsAdamW { lr, weight_decay, ..Default::default() };
    let mut opt = AdamW::new([q_mlp.vars(), t_mlp.vars()].concat(), adam(opts.lr, opts.weight_decay)).map_err(&err)?;
    // No decay on W_dim: it starts at 1 and decay would pull it to 0.
    let mut dim_opt = AdamW::new(vec![w_dim.clone()], adam(opts.dim_lr, 0.0)).map_err(&err)?;

    let mut trained_tools: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    trained_tools.sort_unstable();
    trained_tools.dedup();
    let snapshot = |summary: &str| -> Result<Heads, HeadsError> {
        let w_dim = w_dim.as_tensor().to_vec1::<f32>().map_err(&err)?;
        let (query, tool) = (q_mlp.snapshot().map_err(&err)?, t_mlp.snapshot().map_err(&err)?);
        Ok(Heads::trained(embedder_id, w_dim, query, tool, summary))
    };
    let steps_per_epoch = pairs.len().div_ceil(opts.batch);
    let steps = steps_per_epoch * opts.epochs;
    let mut log = TrainLog::default();
    let mut best: Option<(Metrics, Heads)> = None;
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    let mut step = 0;
    for epoch in 1..=opts.epochs {
        let hard = if opts.negatives > 0 {
            let groups = opts.negative_groups.as_deref();
            mine(&snapshot("")?, queries, tools, pairs, &trained_tools, groups, opts.negatives)
        } else {
            vec![Vec::new(); pairs.len()]
        };
        order.shuffle(&mut rng);
        let mut epoch_loss = 0.0;
        for chunk in order.chunks(opts.batch) {
            let mut columns: Vec<usize> = Vec::new();
            let mut labels: Vec<u32> = Vec::with_capacity(chunk.len());
            let column_of = |t: usize, columns: &mut Vec<usize>| match columns.iter().position(|&c| c == t) {
                Some(i) => i,
                None => {
                    columns.push(t);
                    columns.len() - 1
                }
            };
            for &p in chunk {
                labels.push(column_of(pairs[p].1, &mut columns) as u32);
            }
            for &p in chunk {
                for &t in &hard[p] {
                    column_of(t, &mut columns);
                }
            }
            let qi: Vec<usize> = chunk.iter().map(|&p| pairs[p].0).collect();
            let loss = (|| {
                let q = encode(&q_mlp, &w_dim, &rows(queries, &qi, d)?)?;
                let t = encode(&t_mlp, &w_dim, &rows(tools, &columns, d)?)?;
                let logits = (q.matmul(&t.t()?)? / opts.temperature)?;
                let labels = Tensor::from_vec(labels, chunk.len(), &Device::Cpu)?;
                let loss = candle_nn::loss::cross_entropy(&logits, &labels)?;
                let grads = loss.backward()?;
                opt.step(&grads)?;
                dim_opt.step(&grads)?;
                loss.to_scalar::<f32>()
            })()
            .map_err(&err)?;
            step += 1;
            log.step_loss.push(loss);
            epoch_loss += loss * chunk.len() as f32;
            progress(TrainProgress { epoch, step, steps, loss, validation: None });
        }
        log.epoch_loss.push(epoch_loss / pairs.len() as f32);
        let Some(v) = &opts.validation else {
            log.best_epoch = epoch;
            continue;
        };
        let heads = snapshot("")?;
        let m = validate(&heads, tools, v);
        log.validation.push(m);
        progress(TrainProgress { epoch, step, steps, loss: log.epoch_loss[epoch - 1], validation: Some(m) });
        if best.as_ref().is_none_or(|(b, _)| m.better_than(b)) {
            best = Some((m, heads));
            log.best_epoch = epoch;
        } else if epoch - log.best_epoch >= opts.patience.max(1) {
            break;
        }
    }
    log.seconds = started.elapsed().as_secs_f64();
    let heads = match best {
        Some((_, h)) => h,
        None => snapshot("")?,
    };
    Ok((heads, log))
}

/// Each pair's `k` highest-scoring wrong tools under `heads`, among the
/// tools that have training pairs: those of the gold tool's group first
/// when there are `groups`.
fn mine(
    heads: &Heads,
    queries: &[Vec<f32>],
    tools: &[Vec<f32>],
    pairs: &[(usize, usize)],
    candidates: &[usize],
    groups: Option<&[u32]>,
    k: usize,
) -> Vec<Vec<usize>> {
    let encoded: Vec<Vec<f32>> = candidates.iter().map(|&t| heads.encode_tool(&tools[t])).collect();
    // Encodings are unit vectors, so a score lifted by 4 outranks any
    // score that is not: the gold tool's group fills the k first.
    let lift = |t: usize, gold: usize| match groups {
        Some(g) if g[t] == g[gold] => 4.0,
        _ => 0.0,
    };
    pairs
        .iter()
        .map(|&(q, gold)| {
            let eq = heads.encode_query(&queries[q]);
            let scores: Vec<f32> = candidates
                .iter()
                .zip(&encoded)
                .map(|(&t, v)| if t == gold { f32::MIN } else { dot(&eq, v) + lift(t, gold) })
                .collect();
            top_k_of(&scores, k).into_iter().map(|(i, _)| candidates[i]).filter(|&t| t != gold).collect()
        })
        .collect()
}

fn validate(heads: &Heads, tools: &[Vec<f32>], v: &Validation) -> Metrics {
    let encoded = heads.encode_tools(tools);
    let ranks: Vec<usize> = v
        .queries
        .iter()
        .zip(&v.gold)
        .map(|(q, &g)| {
            let eq = heads.encode_query(q);
            rank_of(&encoded.iter().map(|t| dot(&eq, t)).collect::<Vec<_>>(), g)
        })
        .collect();
    Metrics::from_ranks(&ranks)
}

#[derive(Debug, Clone)]
pub struct JudgeOptions {
    pub hidden: usize,
    pub epochs: usize,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    pub seed: u64,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions { hidden: 128, epochs: 30, batch: 32, lr: 1e-3, weight_decay: 1e-2, seed: 0 }
    }
}

/// Trains the tool judge J(h) with binary cross entropy (eq. 5) on vectors
/// and their labels (true: a tool is called right here). The threshold is
/// the paper's 0.5; the caller may tune it on held-out data.
pub fn train_judge(
    xs: &[Vec<f32>],
    labels: &[bool],
    opts: &JudgeOptions,
    embedder_id: &str,
    progress: &mut dyn FnMut(TrainProgress),
) -> Result<(Judge, TrainLog), HeadsError> {
    let started = Instant::now();
    let d = xs.first().map_or(0, Vec::len);
    if d == 0 || xs.len() != labels.len() {
        return Err(HeadsError::Train { field: "labels".into(), reason: "one label per vector, at least one".into() });
    }
    check_vectors("xs", xs, d)?;
    let err = candle("judge");
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mlp = MlpVars::new(&mut rng, d, opts.hidden, 1, false).map_err(&err)?;
    let params = ParamsAdamW { lr: opts.lr, weight_decay: opts.weight_decay, ..Default::default() };
    let mut opt = AdamW::new(mlp.vars(), params).map_err(&err)?;
    let mut order: Vec<usize> = (0..xs.len()).collect();
    let steps = xs.len().div_ceil(opts.batch.max(1)) * opts.epochs;
    let mut log = TrainLog::default();
    let mut step = 0;
    for epoch in 1..=opts.epochs {
        order.shuffle(&mut rng);
        let mut total = 0.0;
        for chunk in order.chunks(opts.batch.max(1)) {
            let loss = (|| {
                let z = mlp.forward(&rows(xs, chunk, d)?)?.flatten_all()?;
                let y: Vec<f32> = chunk.iter().map(|&i| f32::from(u8::from(labels[i]))).collect();
                let y = Tensor::from_vec(y, chunk.len(), &Device::Cpu)?;
                // BCE on logits in its stable form: max(z,0) − z·y + log(1 + e^−|z|).
                let soft = ((z.abs()?.neg()?.exp()? + 1.0)?.log()? + z.relu()?)?;
                let loss = (soft - (&z * &y)?)?.mean_all()?;
                opt.backward_step(&loss)?;
                loss.to_dtype(DType::F32)?.to_scalar::<f32>()
            })()
            .map_err(&err)?;
            step += 1;
            total += loss * chunk.len() as f32;
            log.step_loss.push(loss);
            progress(TrainProgress { epoch, step, steps, loss, validation: None });
        }
        log.epoch_loss.push(total / xs.len() as f32);
    }
    log.best_epoch = opts.epochs;
    log.seconds = started.elapsed().as_secs_f64();
    let judge = Judge::trained(embedder_id, mlp.snapshot().map_err(&err)?, 0.5);
    Ok((judge, log))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::retrieve::embed::normalise;

    /// Tools are random directions; a query is its tool's direction
    /// rotated into a shared "question" subspace plus noise, so raw cosine
    /// ranks poorly and a learnt map can recover the tool.
    type Problem = (Vec<Vec<f32>>, Vec<Vec<f32>>, Vec<(usize, usize)>);

    fn synthetic(n_tools: usize, per_tool: usize, d: usize, seed: u64) -> Problem {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let unit = |mut v: Vec<f32>| {
            normalise(&mut v);
            v
        };
        let tools: Vec<Vec<f32>> = (0..n_tools).map(|_| unit(uniform(&mut rng, d, 1.0))).collect();
        let shared = unit(uniform(&mut rng, d, 1.0));
        let mut queries = Vec::new();
        let mut pairs = Vec::new();
        for (t, tool) in tools.iter().enumerate() {
            for _ in 0..per_tool {
                let noise = uniform(&mut rng, d, 1.0);
                // Swapped halves: the signal sits in other dimensions than the tool's.
                let q: Vec<f32> = (0..d)
                    .map(|i| 0.5 * tool[(i + d / 2) % d] + 1.5 * shared[i] + 0.25 * noise[i] / (d as f32).sqrt())
                    .collect();
                pairs.push((queries.len(), t));
                queries.push(unit(q));
            }
        }
        (queries, tools, pairs)
    }

    fn accuracy(heads: &Heads, queries: &[Vec<f32>], tools: &[Vec<f32>], pairs: &[(usize, usize)]) -> Metrics {
        let v = Validation {
            queries: pairs.iter().map(|p| queries[p.0].clone()).collect(),
            gold: pairs.iter().map(|p| p.1).collect(),
        };
        validate(heads, tools, &v)
    }

    fn small_opts() -> TrainOptions {
        TrainOptions { hidden: 32, epochs: 30, batch: 16, lr: 5e-3, negatives: 2, ..TrainOptions::default() }
    }

    #[test]
    fn training_lowers_the_loss_and_raises_accuracy() {
        let (q, t, pairs) = synthetic(20, 6, 16, 1);
        let before = accuracy(&Heads::identity("e", 16, 32), &q, &t, &pairs);
        let (heads, log) = train_heads(&q, &t, &pairs, &small_opts(), "e", &mut |_| {}).unwrap();
        let after = accuracy(&heads, &q, &t, &pairs);
        assert!(log.epoch_loss.last().unwrap() < &(log.epoch_loss[0] * 0.5), "{:?}", log.epoch_loss);
        assert!(after.top1 > before.top1 + 0.3, "top-1 {} -> {}", before.top1, after.top1);
        assert_eq!((heads.dim(), heads.hidden(), heads.embedder()), (16, 32, "e"));
    }

    #[test]
    fn a_seed_gives_byte_identical_heads() {
        let (q, t, pairs) = synthetic(10, 4, 8, 2);
        let opts = TrainOptions { epochs: 3, ..small_opts() };
        let run = || {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("h.safetensors");
            train_heads(&q, &t, &pairs, &opts, "e", &mut |_| {}).unwrap().0.save(&path).unwrap();
            std::fs::read(&path).unwrap()
        };
        assert_eq!(run(), run());
        let other = TrainOptions { seed: 9, ..opts.clone() };
        let (a, _) = train_heads(&q, &t, &pairs, &opts, "e", &mut |_| {}).unwrap();
        let (b, _) = train_heads(&q, &t, &pairs, &other, "e", &mut |_| {}).unwrap();
        assert_ne!(a.encode_query(&q[0]), b.encode_query(&q[0]), "another seed, another query encoder");
    }

    #[test]
    fn early_stopping_keeps_the_best_validated_epoch() {
        let (q, t, pairs) = synthetic(12, 5, 16, 3);
        let (train, val) = pairs.split_at(48);
        let validation = Validation {
            queries: val.iter().map(|p| q[p.0].clone()).collect(),
            gold: val.iter().map(|p| p.1).collect(),
        };
        let opts = TrainOptions { validation: Some(validation), patience: 2, ..small_opts() };
        let (_, log) = train_heads(&q, &t, train, &opts, "e", &mut |_| {}).unwrap();
        let best = log.validation[log.best_epoch - 1];
        assert!(log.validation.iter().all(|m| !m.better_than(&best)));
    }

    #[test]
    fn grouped_negatives_come_from_the_gold_tool_s_group_first() {
        let (q, t, pairs) = synthetic(12, 2, 16, 6);
        let heads = Heads::identity("e", 16, 32);
        let candidates: Vec<usize> = (0..12).collect();
        // Tools 0..4 form a group of four; the others are each alone.
        let groups: Vec<u32> = (0..12).map(|i| if i < 4 { 0 } else { i as u32 }).collect();
        let hard = mine(&heads, &q, &t, &pairs, &candidates, Some(&groups), 5);
        for (&(_, gold), negs) in pairs.iter().zip(&hard) {
            assert_eq!(negs.len(), 5);
            assert!(!negs.contains(&gold));
            if gold < 4 {
                // Its three group mates, then the two hardest of the rest.
                let mates: Vec<usize> = (0..4).filter(|&i| i != gold).collect();
                assert_eq!(negs[..3].iter().copied().collect::<BTreeSet<_>>(), mates.into_iter().collect());
                assert!(negs[3..].iter().all(|&n| n >= 4));
            }
        }
        let anywhere = mine(&heads, &q, &t, &pairs, &candidates, None, 5);
        assert_ne!(hard, anywhere, "the groups changed nothing");
        let e = train_heads(
            &q,
            &t,
            &pairs,
            &TrainOptions { negative_groups: Some(vec![0; 3]), ..small_opts() },
            "e",
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("negative_groups"), "{e}");
    }

    #[test]
    fn bad_input_is_an_error_naming_the_field() {
        let (q, t, _) = synthetic(3, 1, 4, 4);
        let e = train_heads(&q, &t, &[(0, 7)], &small_opts(), "e", &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("pairs"), "{e}");
        let e = train_heads(&[vec![0.0; 3]], &t, &[(0, 0)], &small_opts(), "e", &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("queries[0]"), "{e}");
    }

    #[test]
    fn the_judge_learns_a_separable_rule() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let xs: Vec<Vec<f32>> = (0..200).map(|_| uniform(&mut rng, 8, 1.0)).collect();
        let labels: Vec<bool> = xs.iter().map(|x| x[0] + x[3] > 0.2).collect();
        let (judge, log) = train_judge(
            &xs,
            &labels,
            &JudgeOptions { epochs: 100, lr: 1e-2, ..JudgeOptions::default() },
            "e",
            &mut |_| {},
        )
        .unwrap();
        let right = xs.iter().zip(&labels).filter(|(x, l)| judge.calls_tool(x) == **l).count();
        assert!(right > 180, "{right}/200, losses {:?}", log.epoch_loss);
        assert!(log.epoch_loss.last() < log.epoch_loss.first());
    }

    #[test]
    fn metrics_count_ties_against_the_gold_tool() {
        assert_eq!(rank_of(&[0.5, 0.9, 0.5], 0), 2);
        let m = Metrics::from_ranks(&[0, 1, 5, 0]);
        assert_eq!((m.top1, m.top5, m.n), (0.5, 0.75, 4));
        assert!((m.mrr - (1.0 + 0.5 + 1.0 / 6.0 + 1.0) / 4.0).abs() < 1e-6);
    }
}
