//! `heads`: train CoTools' query/tool encoders and tool judge on MiniLM
//! vectors, report what they change, and show a trained file.
//!
//! Honest evaluation is the point of `train`: a seeded share of the
//! training file's tools (`--holdout`) never reaches training, so test
//! questions about them measure unseen tools; hyperparameters that are
//! chosen (the epoch, the lexical blend weight) are chosen on a validation
//! split of the remaining training tools, never on the test file.

mod data;
mod report;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, eyre};
use serde_json::json;

use switchyard::config::Config;
use switchyard::dataset::cotools::{Question, ToolPool};
use switchyard::retrieve::blend::blend;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::cotools::Heads;
use switchyard::retrieve::embed::dot;
use switchyard::retrieve::minilm::MiniLm;
use switchyard::retrieve::train::{
    JudgeOptions, Metrics, TrainLog, TrainOptions, TrainProgress, Validation, rank_of, train_heads, train_judge,
};
use switchyard::retrieve::{Bm25Index, Embedder};

use super::progress::{bar, embed_cached};
use data::{Example, Ranked, examples, judge_examples, seeded, split_tools};
use report::{Prf, dump, prf, show};

#[derive(Subcommand, Debug)]
pub(super) enum HeadsCmd {
    /// Train the query and tool encoders and report top-1/top-5/MRR on seen and unseen tools.
    Train(TrainArgs),
    /// A heads or judge file: embedder, sizes, training summary, the largest |W_dim| dimensions.
    Show {
        file: PathBuf,
        #[arg(short = 'n', default_value_t = 20)]
        n: usize,
        #[arg(long)]
        json: bool,
    },
    /// Train the tool judge (is a tool due here?) on annotated texts; report precision and recall.
    Judge(JudgeArgs),
}

#[derive(Args, Debug)]
pub(super) struct TrainArgs {
    /// The tool pool (tool.json); every test question is ranked against all of it.
    #[arg(long)]
    tools: PathBuf,
    /// Training examples: annotated call texts (text, start_str_idx, tool_calling) or questions with `tool`.
    #[arg(long)]
    train: PathBuf,
    /// Questions with their gold tool, to report on.
    #[arg(long)]
    test: Option<PathBuf>,
    /// Share of the training file's tools kept out of training entirely (the unseen tools).
    #[arg(long, default_value_t = 0.2)]
    holdout: f64,
    /// Share of the remaining tools whose examples choose the epoch and blend weight.
    #[arg(long, default_value_t = 0.2)]
    validation: f64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value_t = 40)]
    epochs: usize,
    /// D, the encoders' intermediate size.
    #[arg(long, default_value_t = 256)]
    hidden: usize,
    #[arg(long, default_value_t = 64)]
    batch: usize,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    #[arg(long, default_value_t = 1e-2)]
    weight_decay: f64,
    #[arg(long, default_value_t = 0.05)]
    temperature: f64,
    /// Hard negatives per query, re-mined each epoch among the training tools (0: in-batch only).
    #[arg(long, default_value_t = 0)]
    negatives: usize,
    #[arg(long, default_value_t = 5)]
    patience: usize,
    /// BM25's weight in the blend (default: chosen on the validation split).
    #[arg(long)]
    lexical_weight: Option<f32>,
    /// Keep the heads trained without the validation tools instead of training again on them.
    #[arg(long)]
    no_refit: bool,
    #[arg(long, default_value = "heads.safetensors")]
    out: PathBuf,
    /// Write each validation query's gold tool and top 3 (heads + BM25) here, JSON Lines.
    #[arg(long)]
    dump_validation: Option<PathBuf>,
    /// What a tool's vector is embedded from: text (id words and description) or description.
    #[arg(long, default_value = "text", value_parser = ["text", "description"])]
    tool_text: String,
    /// Write the loss curve here (SVG).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Write the test figures as a bar chart here (SVG): top-1 and top-5 of
    /// each retriever on seen and unseen tools.
    #[arg(long)]
    chart: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(super) struct JudgeArgs {
    /// Annotated call-text files to train on (repeatable).
    #[arg(long, required = true)]
    train: Vec<PathBuf>,
    /// An annotated call-text file to report precision and recall on (every word boundary).
    #[arg(long)]
    test: Option<PathBuf>,
    /// Words of text before a position that the judge reads.
    #[arg(long, default_value_t = 12)]
    window: usize,
    /// Non-call positions sampled per training text.
    #[arg(long, default_value_t = 6)]
    negatives: usize,
    /// Share of training texts that choose the threshold.
    #[arg(long, default_value_t = 0.2)]
    validation: f64,
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    #[arg(long, default_value_t = 128)]
    hidden: usize,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value = "judge.safetensors")]
    out: PathBuf,
    #[arg(long)]
    json: bool,
}

pub(super) fn run(config: &Config, cmd: HeadsCmd) -> Result<ExitCode> {
    match cmd {
        HeadsCmd::Train(a) => train(config, a),
        HeadsCmd::Show { file, n, json } => show(&file, n, json),
        HeadsCmd::Judge(a) => judge(config, a),
    }
}

/// MiniLM and its vector cache in the config's data directory.
fn embedder(config: &Config) -> Result<(MiniLm, VectorCache)> {
    let data_dir = config.data_dir()?;
    let model = MiniLm::load(&MiniLm::folder(&data_dir))?;
    let cache = VectorCache::open(&data_dir.join("retrieval"), &model);
    Ok((model, cache))
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

fn train_with_bar(
    what: &str,
    queries: &[Vec<f32>],
    tools: &[Vec<f32>],
    pairs: &[(usize, usize)],
    opts: &TrainOptions,
    id: &str,
) -> Result<(Heads, TrainLog)> {
    let steps = pairs.len().div_ceil(opts.batch) * opts.epochs;
    let bar = bar(steps as u64, what);
    let mut on_progress = |p: TrainProgress| {
        bar.set_position(p.step as u64);
        if let Some(m) = p.validation {
            bar.set_message(format!("{what} (epoch {}: validation top-1 {:.1}%)", p.epoch, 100.0 * m.top1));
        }
    };
    let out = train_heads(queries, tools, pairs, opts, id, &mut on_progress)?;
    bar.finish_and_clear();
    Ok(out)
}

fn train(config: &Config, a: TrainArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&a.holdout) || !(0.0..1.0).contains(&a.validation) {
        return Err(eyre!("--holdout and --validation are shares in [0, 1)"));
    }
    let pool = ToolPool::load(&a.tools)?;
    let all = examples(&a.train, &pool, &a.tools)?;
    let test = match &a.test {
        Some(p) => Question::load_with_tools(p)?
            .into_iter()
            .enumerate()
            .map(|(i, q)| {
                let tool = q.tool.unwrap_or_default();
                let pos = pool.position(&tool).ok_or_else(|| {
                    eyre!("{}: line {}: tool `{tool}` is not in {}", p.display(), i + 1, a.tools.display())
                })?;
                Ok(Example { query: q.question, tool: pos })
            })
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let mut rng = seeded(a.seed);
    let (held_out, kept) = split_tools(&all, a.holdout, &mut rng);
    let train_ex: Vec<&Example> = all.iter().filter(|e| kept.contains(&e.tool)).collect();
    let kept_ex: Vec<Example> = train_ex.iter().map(|e| (*e).clone()).collect();
    let (val_tools, _) = split_tools(&kept_ex, a.validation, &mut rng);
    if kept_ex.iter().all(|e| val_tools.contains(&e.tool)) {
        return Err(eyre!("{}: too few tools left to train on after --holdout and --validation", a.train.display()));
    }

    let (model, mut cache) = embedder(config)?;
    let id = model.id().to_owned();
    let tool_texts: Vec<String> =
        pool.tools.iter().map(|t| if a.tool_text == "text" { t.text() } else { t.description.clone() }).collect();
    let tools = embed_cached(&model, &tool_texts, &mut cache, "tools")?;
    let queries =
        embed_cached(&model, &kept_ex.iter().map(|e| e.query.clone()).collect::<Vec<_>>(), &mut cache, "queries")?;
    let test_vectors =
        embed_cached(&model, &test.iter().map(|e| e.query.clone()).collect::<Vec<_>>(), &mut cache, "test")?;
    // Pool ids are distinct, so BM25's document order is the pool's.
    let lexical = Bm25Index::new(pool.tools.iter().map(|t| (t.id.as_str(), t.description.as_str())));

    let fit: Vec<(usize, usize)> =
        kept_ex.iter().enumerate().filter(|(_, e)| !val_tools.contains(&e.tool)).map(|(i, e)| (i, e.tool)).collect();
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
    let opts = TrainOptions {
        hidden: a.hidden,
        epochs: a.epochs,
        batch: a.batch,
        lr: a.lr,
        weight_decay: a.weight_decay,
        temperature: a.temperature,
        negatives: a.negatives,
        seed: a.seed,
        patience: a.patience,
        validation: (!val_idx.is_empty()).then_some(validation),
        ..TrainOptions::default()
    };
    let (mut heads, log) = train_with_bar("training", &queries, &tools, &fit, &opts, &id)?;
    let val_metrics = log.validation.get(log.best_epoch.saturating_sub(1)).copied();
    let val_raw = Metrics::from_ranks(&ranks(&val_set, &tools, None, None));
    let (w_none, val_none) = choose_weight(&val_set, &tools, None);
    let (w_heads, val_heads) = choose_weight(&val_set, &tools, Some(&heads));
    let (w_none, w_heads) = a.lexical_weight.map_or((w_none, w_heads), |w| (w, w));
    if let Some(p) = &a.dump_validation {
        dump(
            p,
            &val_set,
            &val_idx.iter().map(|&i| kept_ex[i].query.as_str()).collect::<Vec<_>>(),
            &tools,
            &heads,
            w_heads,
            &pool,
        )?;
    }
    let mut logs = vec![("with validation", log.clone())];
    let mut trained: BTreeSet<usize> = fit.iter().map(|p| p.1).collect();
    if !a.no_refit && !val_idx.is_empty() {
        // The chosen epoch count, now on every kept tool: the validation
        // tools are too many to leave out of the final heads.
        let all_pairs: Vec<(usize, usize)> = kept_ex.iter().enumerate().map(|(i, e)| (i, e.tool)).collect();
        let refit = TrainOptions { epochs: log.best_epoch.max(1), validation: None, ..opts.clone() };
        let (h, l) = train_with_bar("training on all kept tools", &queries, &tools, &all_pairs, &refit, &id)?;
        heads = h;
        logs.push(("refit", l));
        trained = kept.clone();
    }
    let seconds = switchyard::eval::figures::total(logs.iter().map(|(_, l)| l.seconds));

    let test_set = Ranked {
        vectors: test_vectors.iter().map(Vec::as_slice).collect(),
        lexical: test.iter().map(|e| lexical.scores(&e.query)).collect(),
        gold: test.iter().map(|e| e.tool).collect(),
    };
    let seen = |i: usize| trained.contains(&test[i].tool);
    let mut rows = Vec::new();
    let configs: [(&str, Option<&Heads>, Option<f32>, bool); 5] = [
        ("BM25", None, Some(1.0), false),
        ("MiniLM", None, None, false),
        ("MiniLM + BM25", None, Some(w_none), true),
        ("heads", Some(&heads), None, false),
        ("heads + BM25", Some(&heads), Some(w_heads), true),
    ];
    if !test.is_empty() {
        for (name, h, w, show_w) in configs {
            let r = ranks(&test_set, &tools, h, w);
            let label = if show_w { format!("{name} (w={:.2})", w.unwrap_or(0.0)) } else { name.to_owned() };
            rows.push((label, metrics_where(&r, seen), metrics_where(&r, |i| !seen(i))));
        }
    }
    let summary = json!({
        "train": a.train.display().to_string(),
        "tools": a.tools.display().to_string(),
        "pairs": if logs.len() > 1 { kept_ex.len() } else { fit.len() },
        "trained_tools": trained.len(),
        "held_out_tools": held_out.len(),
        "validation_tools": val_tools.len(),
        "seed": a.seed,
        "hidden": a.hidden, "batch": a.batch, "lr": a.lr, "weight_decay": a.weight_decay,
        "temperature": a.temperature, "negatives": a.negatives,
        "epochs": logs.last().map_or(0, |(_, l)| l.epoch_loss.len()),
        "best_epoch": log.best_epoch,
        "validation": val_metrics,
        "lexical_weight": w_heads,
        "final_loss": logs.last().and_then(|(_, l)| l.epoch_loss.last().copied()),
        "seconds": seconds,
    });
    heads.set_summary(summary.to_string());
    heads.save(&a.out)?;
    if let Some(p) = &a.plot {
        switchyard::eval::plot::loss_curve(p, &logs)?;
    }
    if let Some(p) = &a.chart {
        switchyard::eval::plot::selection_chart(p, &rows)?;
    }
    if a.json {
        let rows: Vec<_> = rows.iter().map(|(n, s, u)| json!({"retriever": n, "seen": s, "unseen": u})).collect();
        let out = json!({
            "summary": summary,
            "validation": {"no_heads_dense": val_raw, "heads_dense": val_metrics, "no_heads_blend": {"weight": w_none, "metrics": val_none}, "heads_blend": {"weight": w_heads, "metrics": val_heads}},
            "test": rows,
            "out": a.out.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "trained on {} pairs ({} tools; {} tools held out as unseen, {} chose the epoch) in {seconds:.1} s; best epoch {}",
        summary["pairs"],
        trained.len(),
        held_out.len(),
        val_tools.len(),
        log.best_epoch
    );
    if let Some(m) = val_metrics {
        println!(
            "validation, dense: heads top-1 {:.1}% top-5 {:.1}% MRR {:.3}; no heads top-1 {:.1}% top-5 {:.1}% MRR {:.3}",
            100.0 * m.top1,
            100.0 * m.top5,
            m.mrr,
            100.0 * val_raw.top1,
            100.0 * val_raw.top5,
            val_raw.mrr
        );
    }
    println!(
        "validation blend weights: no heads {w_none:.2} (top-1 {:.1}%), heads {w_heads:.2} (top-1 {:.1}%)",
        100.0 * val_none.top1,
        100.0 * val_heads.top1
    );
    if !rows.is_empty() {
        let (s, u) = (rows[0].1.n, rows[0].2.n);
        println!(
            "\n{:<24} {:>28}   {:>28}",
            format!("{} tools in the pool", pool.tools.len()),
            format!("seen tools ({s} questions)"),
            format!("unseen tools ({u} questions)")
        );
        println!(
            "{:<24} {:>8} {:>8} {:>8}     {:>8} {:>8} {:>8}",
            "", "top-1", "top-5", "MRR", "top-1", "top-5", "MRR"
        );
        for (name, s, u) in &rows {
            let pct = |x: f32| format!("{:.1}%", 100.0 * x);
            println!(
                "{name:<24} {:>8} {:>8} {:>8.3}     {:>8} {:>8} {:>8.3}",
                pct(s.top1),
                pct(s.top5),
                s.mrr,
                pct(u.top1),
                pct(u.top5),
                u.mrr
            );
        }
    }
    println!(
        "\nsaved {}{}",
        a.out.display(),
        a.plot.as_ref().map(|p| format!(", loss curve {}", p.display())).unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn judge(config: &Config, a: JudgeArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&a.validation) {
        return Err(eyre!("--validation is a share in [0, 1)"));
    }
    let mut rng = seeded(a.seed);
    let mut texts = Vec::new();
    for p in &a.train {
        texts.extend(judge_examples(p, a.window, Some(a.negatives), &mut rng)?);
    }
    // Whole texts go to validation, so its positions are not near-copies of trained ones.
    let mut order: Vec<usize> = (0..texts.len()).collect();
    rand::seq::SliceRandom::shuffle(order.as_mut_slice(), &mut rng);
    let cut = (texts.len() as f64 * a.validation).round() as usize;
    let flat = |idx: &[usize]| -> Vec<(String, bool)> { idx.iter().flat_map(|&i| texts[i].clone()).collect() };
    let (val, fit) = (flat(&order[..cut]), flat(&order[cut..]));
    let (model, mut cache) = embedder(config)?;
    let mut vecs = |ex: &[(String, bool)], what: &str| -> Result<(Vec<Vec<f32>>, Vec<bool>)> {
        let v = embed_cached(&model, &ex.iter().map(|e| e.0.clone()).collect::<Vec<_>>(), &mut cache, what)?;
        Ok((v, ex.iter().map(|e| e.1).collect()))
    };
    let (xs, labels) = vecs(&fit, "judge training positions")?;
    let opts = JudgeOptions { hidden: a.hidden, epochs: a.epochs, lr: a.lr, seed: a.seed, ..JudgeOptions::default() };
    let steps = xs.len().div_ceil(opts.batch) * opts.epochs;
    let pb = bar(steps as u64, "training the judge");
    let (mut judge, log) = train_judge(&xs, &labels, &opts, model.id(), &mut |p| pb.set_position(p.step as u64))?;
    pb.finish_and_clear();
    let mut threshold = 0.5;
    let mut val_prf = None;
    if !val.is_empty() {
        let (vx, vl) = vecs(&val, "judge validation positions")?;
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
    let mut test_prf = None;
    if let Some(p) = &a.test {
        let ex: Vec<(String, bool)> = judge_examples(p, a.window, None, &mut rng)?.into_iter().flatten().collect();
        let (tx, tl) = vecs(&ex, "judge test positions")?;
        let scores: Vec<f32> = tx.iter().map(|x| judge.score(x)).collect();
        test_prf = Some((prf(&scores, &tl, threshold), prf(&scores, &tl, 0.5)));
    }
    let summary = json!({
        "train": a.train.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "positions": xs.len(), "positives": labels.iter().filter(|l| **l).count(),
        "window": a.window, "negatives_per_text": a.negatives, "epochs": a.epochs, "hidden": a.hidden, "lr": a.lr,
        "seed": a.seed, "threshold": threshold, "validation": val_prf,
        "final_loss": log.epoch_loss.last(), "seconds": log.seconds,
    });
    judge.set_summary(summary.to_string());
    judge.save(&a.out)?;
    if a.json {
        let test = test_prf.map(|(t, h)| json!({"at_threshold": t, "at_0.5": h}));
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"summary": summary, "test": test, "out": a.out.display().to_string()})
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "trained the judge on {} positions ({} calls) in {:.1} s; threshold {threshold:.2} chosen on {} held-out positions",
        xs.len(),
        summary["positives"],
        log.seconds,
        val.len()
    );
    if let Some((t, h)) = test_prf {
        for (name, m) in [(format!("threshold {threshold:.2}"), t), ("threshold 0.50".to_owned(), h)] {
            println!(
                "test ({} positions, {} calls), {name}: precision {:.1}%  recall {:.1}%  F1 {:.3}",
                m.n,
                m.positives,
                100.0 * m.precision,
                100.0 * m.recall,
                m.f1
            );
        }
    }
    println!("saved {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
