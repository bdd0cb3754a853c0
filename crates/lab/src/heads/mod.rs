//! CoTools' heads and judge trained and tested honestly, on MiniLM (or any
//! embedder's) vectors.
//!
//! A seeded share of the training file's tools (`holdout`) never reaches
//! training, so test questions about them measure unseen tools; what is
//! chosen (the epoch, the lexical blend weight, the judge's threshold) is
//! chosen on a validation split of the remaining training material, never
//! on the test file.

mod data;
mod error;
mod hooks;
mod judge;
pub mod tune;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::dataset::cotools::{Question, ToolPool};
use crate::retrieve::Bm25Index;
use crate::retrieve::blend::blend;
use crate::retrieve::cotools::Heads;
use crate::retrieve::embed::dot;
use crate::retrieve::index::top_k_of;
use crate::train::{Metrics, TrainLog, TrainOptions, Validation, rank_of, train_heads};

pub use data::{Example, Ranked, examples, judge_examples, seeded, split_tools};
use error::Result;
pub use error::TrainingError;
pub use hooks::Hooks;
pub use judge::{JudgeOutcome, JudgePlan, PreparedJudge, Prf, prf, train_judge_and_test};

/// What a tool's vector is embedded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolText {
    /// Its id's words and its description.
    Text,
    Description,
    /// A path id as its relation of its subject, then the description
    /// ([`crate::dataset::ToolDoc::phrase`]).
    Phrase,
}

impl ToolText {
    /// What `tool`'s vector is embedded from.
    pub fn of(self, tool: &crate::dataset::cotools::ToolDoc) -> String {
        match self {
            ToolText::Text => tool.text(),
            ToolText::Description => tool.description.clone(),
            ToolText::Phrase => tool.phrase(),
        }
    }
}

/// Where a query's hard negatives (`TrainOptions::negatives`) are mined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegativesFrom {
    /// The hardest of every training tool.
    Any,
    /// The hardest of the gold tool's domain (its path id's first segment),
    /// topped up from any tool; a tool without a path id is its own domain.
    Domain,
}

/// One training of the heads: the files, the splits and the optimiser.
#[derive(Clone, Debug)]
pub struct HeadsPlan {
    pub tools: PathBuf,
    pub train: PathBuf,
    pub test: Option<PathBuf>,
    /// Synthetic questions (`retrieval synth`): written from the tools'
    /// texts alone, so they are trained on for every tool, held out or not,
    /// and never validate or test.
    pub synthetic: Option<PathBuf>,
    /// Share of the training file's tools kept out of training entirely.
    pub holdout: f64,
    /// Share of the remaining tools that chooses the epoch and blend weight.
    pub validation: f64,
    pub tool_text: ToolText,
    pub negatives_from: NegativesFrom,
    /// BM25's weight in the blend, else chosen on the validation split.
    pub lexical_weight: Option<f32>,
    /// Keep the heads trained without the validation tools.
    pub no_refit: bool,
    /// Where each validation query's gold tool and top 3 go, JSON Lines.
    pub dump_validation: Option<PathBuf>,
    /// Where the test questions go as a question file, each with `seen`
    /// (a question of its tool was trained on), for `retrieval eval` on
    /// either side of the split.
    pub dump_test: Option<PathBuf>,
    /// The optimiser's settings; its `validation` is filled in here.
    pub options: TrainOptions,
}

/// A retriever's name and its figures on seen and on unseen tools.
pub type Row = (String, Metrics, Metrics);

/// The heads trained, and what they change.
pub struct HeadsOutcome {
    pub heads: Heads,
    /// The training runs: with validation, then the refit if any.
    pub logs: Vec<(&'static str, TrainLog)>,
    /// Kept in the heads file: files, splits, settings and the chosen values.
    pub summary: Value,
    /// Per retriever, on the test questions (empty without a test file).
    pub rows: Vec<Row>,
    pub best_epoch: usize,
    pub seconds: f64,
    pub pool_size: usize,
    pub trained_tools: usize,
    pub held_out_tools: usize,
    pub validation_tools: usize,
    /// Validation, dense: the heads at the best epoch, and no heads.
    pub validation_heads: Option<Metrics>,
    pub validation_raw: Metrics,
    /// The chosen blend weights and validation figures, without and with heads.
    pub blend_raw: (f32, Metrics),
    pub blend_heads: (f32, Metrics),
}

impl HeadsOutcome {
    /// What `heads train --json` prints: the summary, validation and test
    /// figures, and where the heads went.
    pub fn json(&self, out: &Path) -> Value {
        let ((w_none, val_none), (w_heads, val_heads)) = (self.blend_raw, self.blend_heads);
        let rows: Vec<_> = self.rows.iter().map(|(n, s, u)| json!({"retriever": n, "seen": s, "unseen": u})).collect();
        json!({
            "summary": self.summary,
            "validation": {
                "no_heads_dense": self.validation_raw,
                "heads_dense": self.validation_heads,
                "no_heads_blend": {"weight": w_none, "metrics": val_none},
                "heads_blend": {"weight": w_heads, "metrics": val_heads},
            },
            "test": rows,
            "out": out.display().to_string(),
        })
    }

    /// What `heads train` prints: the training, the validation figures, and
    /// a table of each retriever on the seen and unseen tools' questions.
    pub fn text(&self) -> String {
        let ((w_none, val_none), (w_heads, val_heads)) = (self.blend_raw, self.blend_heads);
        let pct = |x: f32| format!("{:.1}%", 100.0 * x);
        let mut out = format!(
            "trained on {} pairs ({} tools; {} tools held out as unseen, {} chose the epoch) in {:.1} s; best epoch {}\n",
            self.summary["pairs"],
            self.trained_tools,
            self.held_out_tools,
            self.validation_tools,
            self.seconds,
            self.best_epoch
        );
        if let Some(n) = self.summary["synthetic_pairs"].as_u64().filter(|&n| n > 0) {
            out += &format!("and on {n} synthetic questions, for every tool of the pool they name\n");
        }
        if let Some(m) = self.validation_heads {
            let raw = self.validation_raw;
            out += &format!(
                "validation, dense: heads top-1 {} top-5 {} MRR {:.3}; no heads top-1 {} top-5 {} MRR {:.3}\n",
                pct(m.top1),
                pct(m.top5),
                m.mrr,
                pct(raw.top1),
                pct(raw.top5),
                raw.mrr
            );
        }
        out += &format!(
            "validation blend weights: no heads {w_none:.2} (top-1 {}), heads {w_heads:.2} (top-1 {})\n",
            pct(val_none.top1),
            pct(val_heads.top1)
        );
        if let Some((_, s, u)) = self.rows.first() {
            // An embedder's id makes a long row name; the columns move right rather than apart.
            let w = self.rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0).max(24);
            out += &format!(
                "\n{:<w$} {:>28}   {:>28}\n",
                format!("{} tools in the pool", self.pool_size),
                format!("seen tools ({} questions)", s.n),
                format!("unseen tools ({} questions)", u.n)
            );
            out += &format!(
                "{:<w$} {:>8} {:>8} {:>8}     {:>8} {:>8} {:>8}\n",
                "", "top-1", "top-5", "MRR", "top-1", "top-5", "MRR"
            );
            for (name, s, u) in &self.rows {
                out += &format!(
                    "{name:<w$} {:>8} {:>8} {:>8.3}     {:>8} {:>8} {:>8.3}\n",
                    pct(s.top1),
                    pct(s.top5),
                    s.mrr,
                    pct(u.top1),
                    pct(u.top5),
                    u.mrr
                );
            }
        }
        out
    }
}

/// How a pool is scored: raw or heads vectors, BM25 blended in or not.
fn ranks(set: &Ranked, tools: &[Vec<f32>], heads: Option<&Heads>, lexical_weight: Option<f32>) -> Vec<usize> {
    let tools: Vec<Vec<f32>> = heads.map_or_else(|| tools.to_vec(), |h| h.encode_tools(tools));
    (0..set.gold.len())
        .map(|i| {
            let q = heads.map_or_else(|| set.vectors[i].to_vec(), |h| h.encode_query(set.vectors[i]));
            let dense: Vec<f32> = tools.iter().map(|t| dot(&q, t)).collect();
            let scores = match lexical_weight {
                Some(w) => blend(&set.lexical[i], &dense, w),
                None => dense,
            };
            rank_of(&scores, set.gold[i])
        })
        .collect()
}

fn metrics_where(ranks: &[usize], keep: impl Fn(usize) -> bool) -> Metrics {
    Metrics::from_ranks(&ranks.iter().enumerate().filter(|&(i, _)| keep(i)).map(|(_, &r)| r).collect::<Vec<_>>())
}

/// The lexical weight (0 to 0.7 by 0.05) that ranks the validation set best.
fn choose_weight(set: &Ranked, tools: &[Vec<f32>], heads: Option<&Heads>) -> (f32, Metrics) {
    let mut best = (0.0, Metrics::default());
    for step in 0..=14 {
        let w = step as f32 * 0.05;
        let m = Metrics::from_ranks(&ranks(set, tools, heads, Some(w)));
        if (m.top1, m.mrr) > (best.1.top1, best.1.mrr) {
            best = (w, m);
        }
    }
    best
}

fn train_reporting(
    hooks: &mut dyn Hooks,
    what: &str,
    queries: &[Vec<f32>],
    tools: &[Vec<f32>],
    pairs: &[(usize, usize)],
    opts: &TrainOptions,
    id: &str,
) -> Result<(Heads, TrainLog)> {
    hooks.start(what, pairs.len().div_ceil(opts.batch) * opts.epochs);
    let out = train_heads(queries, tools, pairs, opts, id, &mut |p| hooks.step(what, &p));
    hooks.finish();
    Ok(out?)
}

/// Each validation query's gold tool, its rank and the top 3, JSON Lines.
fn dump(
    path: &Path,
    set: &Ranked,
    texts: &[&str],
    tools: &[Vec<f32>],
    heads: &Heads,
    w: f32,
    pool: &ToolPool,
) -> Result<()> {
    let encoded = heads.encode_tools(tools);
    let mut out = String::new();
    for (i, text) in texts.iter().enumerate() {
        let q = heads.encode_query(set.vectors[i]);
        let dense: Vec<f32> = encoded.iter().map(|t| dot(&q, t)).collect();
        let scores = blend(&set.lexical[i], &dense, w);
        let top: Vec<&str> = top_k_of(&scores, 3).iter().map(|&(t, _)| pool.tools[t].id.as_str()).collect();
        let line = json!({"query": text, "gold": pool.tools[set.gold[i]].id, "rank": rank_of(&scores, set.gold[i]), "top": top});
        out.push_str(&format!("{line}\n"));
    }
    std::fs::write(path, out).map_err(|source| TrainingError::Io { path: path.into(), source })
}

/// A plan's files read and split, before any vector is computed.
pub struct PreparedHeads<'a> {
    plan: &'a HeadsPlan,
    pool: ToolPool,
    test: Vec<Example>,
    held_out: BTreeSet<usize>,
    kept: BTreeSet<usize>,
    kept_ex: Vec<Example>,
    val_tools: BTreeSet<usize>,
    synthetic: Vec<Example>,
}

impl HeadsPlan {
    /// Reads the pool, the training and test files and splits the tools:
    /// every fault of the data is found before an embedder is loaded.
    pub fn prepare(&self) -> Result<PreparedHeads<'_>> {
        let plan = self;
        if !(0.0..1.0).contains(&plan.holdout) || !(0.0..1.0).contains(&plan.validation) {
            return Err(TrainingError::Options("--holdout and --validation are shares in [0, 1)".into()));
        }
        if plan.negatives_from == NegativesFrom::Domain && plan.options.negatives == 0 {
            return Err(TrainingError::Options("--negatives-from domain needs --negatives N (N > 0)".into()));
        }
        let pool = ToolPool::load(&plan.tools)?;
        let all = examples(&plan.train, &pool, &plan.tools)?;
        let test = match &plan.test {
            Some(p) => Question::load_with_tools(p)?
                .into_iter()
                .enumerate()
                .map(|(i, q)| {
                    let tool = q.tool.unwrap_or_default();
                    let pos = pool.position(&tool).ok_or_else(|| TrainingError::Data {
                        path: p.clone(),
                        why: format!("line {}: tool `{tool}` is not in {}", i + 1, plan.tools.display()),
                    })?;
                    Ok(Example { query: q.question, tool: pos })
                })
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let mut rng = seeded(plan.options.seed);
        let (held_out, kept) = split_tools(&all, plan.holdout, &mut rng);
        let kept_ex: Vec<Example> = all.iter().filter(|e| kept.contains(&e.tool)).cloned().collect();
        let (val_tools, _) = split_tools(&kept_ex, plan.validation, &mut rng);
        if kept_ex.iter().all(|e| val_tools.contains(&e.tool)) {
            return Err(TrainingError::Data {
                path: plan.train.clone(),
                why: "too few tools left to train on after --holdout and --validation".into(),
            });
        }
        let synthetic = match &plan.synthetic {
            Some(p) => examples(p, &pool, &plan.tools)?,
            None => Vec::new(),
        };
        Ok(PreparedHeads { plan, pool, test, held_out, kept, kept_ex, val_tools, synthetic })
    }
}

/// Questions with their tool's id.
pub type Pairs = Vec<(String, String)>;

impl PreparedHeads<'_> {
    /// The kept tools' examples as (question, tool id): those of the tools
    /// trained on, then those of the validation tools. The held-out tools'
    /// are in neither, so what trains on this split never sees them.
    pub fn kept_examples(&self) -> (Pairs, Pairs) {
        let pair = |e: &Example| (e.query.clone(), self.pool.tools[e.tool].id.clone());
        let (val, train): (Vec<&Example>, Vec<&Example>) =
            self.kept_ex.iter().partition(|e| self.val_tools.contains(&e.tool));
        (train.into_iter().map(pair).collect(), val.into_iter().map(pair).collect())
    }

    /// The pool the split's tools come from.
    pub fn pool(&self) -> &ToolPool {
        &self.pool
    }
}

/// Each tool's domain as a group number; a tool without one is alone.
fn domains(pool: &ToolPool) -> Vec<u32> {
    let mut named: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let n = pool.tools.len() as u32;
    (0..n)
        .zip(&pool.tools)
        .map(|(i, t)| match t.domain() {
            // Named domains are numbered after the pool, so none meets a lone tool's number.
            Some(d) => {
                let next = n + named.len() as u32;
                *named.entry(d).or_insert(next)
            }
            None => i,
        })
        .collect()
}

/// Trains the heads as the plan says and tests them, with four retrievers
/// beside them, on the test file's seen and unseen tools.
pub fn train_heads_and_test(prepared: PreparedHeads, embedder_id: &str, hooks: &mut dyn Hooks) -> Result<HeadsOutcome> {
    let PreparedHeads { plan, pool, test, held_out, kept, kept_ex, val_tools, synthetic } = prepared;
    let tool_texts: Vec<String> = pool.tools.iter().map(|t| plan.tool_text.of(t)).collect();
    let tools = hooks.embed(&tool_texts, "tools")?;
    let queries =
        hooks.embed(&kept_ex.iter().chain(&synthetic).map(|e| e.query.clone()).collect::<Vec<_>>(), "queries")?;
    // Synthetic questions follow the kept examples in `queries`.
    let synthetic_pairs = synthetic.iter().enumerate().map(|(j, e)| (kept_ex.len() + j, e.tool));
    let test_vectors = hooks.embed(&test.iter().map(|e| e.query.clone()).collect::<Vec<_>>(), "test")?;
    // Pool ids are distinct, so BM25's document order is the pool's.
    let lexical = Bm25Index::new(pool.tools.iter().map(|t| (t.id.as_str(), t.description.as_str())));

    let real_fit: Vec<(usize, usize)> =
        kept_ex.iter().enumerate().filter(|(_, e)| !val_tools.contains(&e.tool)).map(|(i, e)| (i, e.tool)).collect();
    let fit: Vec<(usize, usize)> = real_fit.iter().copied().chain(synthetic_pairs.clone()).collect();
    let val_idx: Vec<usize> = (0..kept_ex.len()).filter(|&i| val_tools.contains(&kept_ex[i].tool)).collect();
    let validation = Validation {
        queries: val_idx.iter().map(|&i| queries[i].clone()).collect(),
        gold: val_idx.iter().map(|&i| kept_ex[i].tool).collect(),
    };
    let val_set = Ranked {
        vectors: val_idx.iter().map(|&i| queries[i].as_slice()).collect(),
        lexical: val_idx.iter().map(|&i| lexical.scores(&kept_ex[i].query)).collect(),
        gold: validation.gold.clone(),
    };
    let negative_groups = (plan.negatives_from == NegativesFrom::Domain).then(|| domains(&pool));
    let opts = TrainOptions {
        validation: (!val_idx.is_empty()).then_some(validation),
        negative_groups,
        ..plan.options.clone()
    };
    let (mut heads, log) = train_reporting(hooks, "training", &queries, &tools, &fit, &opts, embedder_id)?;
    let val_metrics = log.validation.get(log.best_epoch.saturating_sub(1)).copied();
    let val_raw = Metrics::from_ranks(&ranks(&val_set, &tools, None, None));
    let (w_none, val_none) = choose_weight(&val_set, &tools, None);
    let (w_heads, val_heads) = choose_weight(&val_set, &tools, Some(&heads));
    let (w_none, w_heads) = plan.lexical_weight.map_or((w_none, w_heads), |w| (w, w));
    if let Some(p) = &plan.dump_validation {
        let texts: Vec<&str> = val_idx.iter().map(|&i| kept_ex[i].query.as_str()).collect();
        dump(p, &val_set, &texts, &tools, &heads, w_heads, &pool)?;
    }
    let best_epoch = log.best_epoch;
    let mut logs = vec![("with validation", log)];
    // Seen: a real question of the tool was trained on.
    let mut trained: BTreeSet<usize> = real_fit.iter().map(|p| p.1).collect();
    if !plan.no_refit && !val_idx.is_empty() {
        // The chosen epoch count, now on every kept tool: the validation
        // tools are too many to leave out of the final heads.
        let all_pairs: Vec<(usize, usize)> =
            kept_ex.iter().enumerate().map(|(i, e)| (i, e.tool)).chain(synthetic_pairs).collect();
        let refit = TrainOptions { epochs: best_epoch.max(1), validation: None, ..opts.clone() };
        let what = "training on all kept tools";
        let (h, l) = train_reporting(hooks, what, &queries, &tools, &all_pairs, &refit, embedder_id)?;
        heads = h;
        logs.push(("refit", l));
        trained = kept.clone();
    }
    let seconds = logs.iter().map(|(_, l)| l.seconds).fold(0.0, |a, x| a + x);

    let test_set = Ranked {
        vectors: test_vectors.iter().map(Vec::as_slice).collect(),
        lexical: test.iter().map(|e| lexical.scores(&e.query)).collect(),
        gold: test.iter().map(|e| e.tool).collect(),
    };
    let seen = |i: usize| trained.contains(&test[i].tool);
    if let Some(p) = &plan.dump_test {
        let lines: String = (0..test.len())
            .map(|i| {
                let id = pool.tools[test[i].tool].id.as_str();
                format!("{}\n", json!({"question": test[i].query, "tool": id, "seen": seen(i)}))
            })
            .collect();
        std::fs::write(p, lines).map_err(|source| TrainingError::Io { path: p.clone(), source })?;
    }
    let mut rows = Vec::new();
    // The raw rows are named by the embedder the heads were trained on.
    let blended = format!("{embedder_id} + BM25");
    let retrievers: [(&str, Option<&Heads>, Option<f32>, bool); 5] = [
        ("BM25", None, Some(1.0), false),
        (embedder_id, None, None, false),
        (&blended, None, Some(w_none), true),
        ("heads", Some(&heads), None, false),
        ("heads + BM25", Some(&heads), Some(w_heads), true),
    ];
    if !test.is_empty() {
        for (name, h, w, show_w) in retrievers {
            let r = ranks(&test_set, &tools, h, w);
            let label = if show_w { format!("{name} (w={:.2})", w.unwrap_or(0.0)) } else { name.to_owned() };
            rows.push((label, metrics_where(&r, seen), metrics_where(&r, |i| !seen(i))));
        }
    }
    let o = &plan.options;
    let summary = json!({
        "train": plan.train.display().to_string(),
        "tools": plan.tools.display().to_string(),
        "pairs": if logs.len() > 1 { kept_ex.len() } else { real_fit.len() },
        "synthetic": plan.synthetic.as_ref().map(|p| p.display().to_string()),
        "synthetic_pairs": synthetic.len(),
        "trained_tools": trained.len(),
        "held_out_tools": held_out.len(),
        "validation_tools": val_tools.len(),
        "seed": o.seed,
        "hidden": o.hidden, "batch": o.batch, "lr": o.lr, "weight_decay": o.weight_decay,
        "temperature": o.temperature, "negatives": o.negatives,
        "negatives_from": match plan.negatives_from { NegativesFrom::Any => "any", NegativesFrom::Domain => "domain" },
        "epochs": logs.last().map_or(0, |(_, l)| l.epoch_loss.len()),
        "best_epoch": best_epoch,
        "validation": val_metrics,
        "lexical_weight": w_heads,
        "final_loss": logs.last().and_then(|(_, l)| l.epoch_loss.last().copied()),
        "seconds": seconds,
    });
    heads.set_summary(summary.to_string());
    Ok(HeadsOutcome {
        heads,
        logs,
        summary,
        rows,
        best_epoch,
        seconds,
        pool_size: pool.tools.len(),
        trained_tools: trained.len(),
        held_out_tools: held_out.len(),
        validation_tools: val_tools.len(),
        validation_heads: val_metrics,
        validation_raw: val_raw,
        blend_raw: (w_none, val_none),
        blend_heads: (w_heads, val_heads),
    })
}

#[cfg(test)]
mod tests;
