//! `retrieval cross train`: trains the cross-encoder of the first
//! candidates (`switchyard_dense::cross_encoder`, trained by `switchyard_lab::cross`) on heads train's split, chooses
//! how much of the retriever's own score to keep on the validation tools and
//! writes it for `[retrieval] cross_encoder`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, eyre};
use serde_json::json;

use switchyard::config::Config;
use switchyard::dense::cross_encoder::combined;
use switchyard::dense::minilm::MiniLm;
use switchyard::lab::cross::{CrossOptions, CrossTrainer, Group};
use switchyard::lab::rescore::{Figures, place};
use switchyard::lab::train::TrainOptions;
use switchyard::retrieve::retriever::{Retriever, doc_text};

use super::heads::split::ToolSplitArgs;
use super::how::{FirstCandidates, HowArgs};
use crate::cli::progress::bar;

#[derive(Subcommand, Debug)]
pub(crate) enum CrossCmd {
    /// Train on the training tools' questions, choose the blend on the validation tools'.
    Train(Box<CrossTrainArgs>),
}

#[derive(Args, Debug)]
pub(crate) struct CrossTrainArgs {
    #[command(flatten)]
    split: ToolSplitArgs,
    /// How many of the retriever's first candidates it reads and re-orders.
    #[arg(long, default_value_t = 5)]
    k: usize,
    #[arg(long, default_value_t = CrossOptions::default().epochs)]
    epochs: usize,
    /// Questions a training step (each with its k candidates).
    #[arg(long, default_value_t = CrossOptions::default().questions)]
    questions: usize,
    #[arg(long, default_value_t = CrossOptions::default().lr)]
    lr: f64,
    #[arg(long, default_value_t = CrossOptions::default().head_lr)]
    head_lr: f64,
    /// MiniLM weights to start from (default: the config's `minilm_weights`, else the installed
    /// model's).
    #[arg(long, value_name = "FILE")]
    init: Option<PathBuf>,
    /// Where the cross-encoder is written (safetensors).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    how: HowArgs,
    /// Prints what was trained and its figures as JSON.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(config: &Config, cmd: CrossCmd) -> Result<ExitCode> {
    match cmd {
        CrossCmd::Train(a) => train(config, &a),
    }
}

/// A question's first candidates as the retriever ranked them.
struct Candidates {
    query: String,
    names: Vec<String>,
    scores: Vec<f32>,
    /// The gold tool's place over the whole pool (0 = first).
    gold: Option<usize>,
}

fn rank(
    retriever: &Retriever,
    pairs: &[(String, String)],
    k: usize,
    tick: &mut dyn FnMut(),
) -> Result<Vec<Candidates>> {
    let mut out = Vec::with_capacity(pairs.len());
    for (query, tool) in pairs {
        let ranked = retriever.search_unrescored(query, retriever.len())?;
        let gold = ranked.iter().position(|h| &h.name == tool);
        let first = &ranked[..ranked.len().min(k)];
        out.push(Candidates {
            query: query.clone(),
            names: first.iter().map(|h| h.name.clone()).collect(),
            scores: first.iter().map(|h| h.score).collect(),
            gold,
        });
        tick();
    }
    Ok(out)
}

/// Top-1, top-5 and MRR over the pool, each question's first candidates
/// re-ordered by its `combined` scores (None: as the retriever left them).
fn figures(val: &[Candidates], combined: Option<&[Vec<f32>]>) -> Figures {
    Figures::of_ranks(val.iter().enumerate().map(|(i, c)| match (c.gold, combined) {
        (Some(g), Some(all)) if g < c.names.len() => Some(place(&all[i], g)),
        (g, _) => g,
    }))
}

/// Blends of the retriever's standardised score tried on validation.
const BLENDS: [f32; 6] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0];

fn train(config: &Config, a: &CrossTrainArgs) -> Result<ExitCode> {
    if a.k < 2 {
        return Err(eyre!("--k: at least 2 candidates to re-order"));
    }
    if a.epochs == 0 || a.questions == 0 {
        return Err(eyre!("--epochs and --questions: at least 1"));
    }
    let plan = a.split.plan(TrainOptions::default());
    let FirstCandidates { train: train_pairs, validation: val_pairs, docs, how, retriever } =
        FirstCandidates::open(config, &plan, &a.how)?;
    let texts: HashMap<&str, String> = docs.iter().map(|(n, t)| (n.as_str(), doc_text(n, t))).collect();
    let dir = MiniLm::folder(&config.data_dir()?);
    let init = a.init.clone().or_else(|| how.minilm_weights.clone()).unwrap_or_else(|| dir.join("model.safetensors"));
    let encoder = CrossTrainer::new(&dir, &init, a.k)?;

    let bar_rank = bar((train_pairs.len() + val_pairs.len()) as u64, "ranking");
    let mut tick = || bar_rank.inc(1);
    let train_ranked = rank(&retriever, &train_pairs, a.k, &mut tick)?;
    let val_ranked = rank(&retriever, &val_pairs, a.k, &mut tick)?;
    bar_rank.finish_and_clear();
    // The gold tool among each question's candidates: in place of the last
    // when the retriever left it out, so every question teaches.
    let groups: Vec<Group> = train_ranked
        .iter()
        .zip(&train_pairs)
        .filter_map(|(c, (_, tool))| {
            let g = c.gold?;
            let mut names = c.names.clone();
            let gold = if g < names.len() {
                g
            } else {
                *names.last_mut()? = tool.clone();
                names.len() - 1
            };
            Some(Group {
                query: c.query.clone(),
                texts: names.iter().map(|n| texts[n.as_str()].clone()).collect(),
                gold,
            })
        })
        .collect();

    let opts = CrossOptions {
        epochs: a.epochs,
        questions: a.questions,
        lr: a.lr,
        head_lr: a.head_lr,
        seed: plan.options.seed,
    };
    let started = Instant::now();
    let steps = groups.len().div_ceil(a.questions);
    let bar_train = bar((steps * a.epochs) as u64, "training");
    let losses = encoder.train(&groups, &opts, &mut |epoch, step, _, loss| {
        bar_train.set_position(((epoch - 1) * steps + step) as u64);
        bar_train.set_message(format!("training (epoch {epoch}, loss {loss:.3})"));
    })?;
    bar_train.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();

    let bar_val = bar(val_ranked.len() as u64, "validating");
    let mut pair_scores = Vec::with_capacity(val_ranked.len());
    for c in &val_ranked {
        let pairs: Vec<(&str, &str)> = c.names.iter().map(|n| (c.query.as_str(), texts[n.as_str()].as_str())).collect();
        pair_scores.push(encoder.scores(&pairs)?);
        bar_val.inc(1);
    }
    bar_val.finish_and_clear();
    let before = figures(&val_ranked, None);
    let by_blend: Vec<(f32, Figures)> = BLENDS
        .iter()
        .map(|&b| {
            let reordered: Vec<Vec<f32>> =
                val_ranked.iter().zip(&pair_scores).map(|(c, s)| combined(s, &c.scores, b)).collect();
            (b, figures(&val_ranked, Some(&reordered)))
        })
        .collect();
    let (blend, after) = by_blend
        .iter()
        .copied()
        .max_by(|x, y| (x.1.top1, x.1.mrr).partial_cmp(&(y.1.top1, y.1.mrr)).unwrap_or(std::cmp::Ordering::Equal))
        .unwrap_or((0.0, before));
    encoder.save(&a.out, blend)?;

    let trained = json!({
        "retriever": retriever.source(),
        "init": init.display().to_string(),
        "tools": plan.tools.display().to_string(),
        "train": plan.train.display().to_string(),
        "holdout": plan.holdout,
        "validation": plan.validation,
        "seed": plan.options.seed,
        "k": a.k,
        "epochs": a.epochs,
        "losses": losses,
        "questions": train_pairs.len(),
        "groups": groups.len(),
        "validation_questions": val_pairs.len(),
        "validation_before": before,
        "validation_by_blend": by_blend.iter().map(|(b, f)| json!({"blend": b, "figures": f})).collect::<Vec<_>>(),
        "blend": blend,
        "seconds": seconds,
        "out": a.out.display().to_string(),
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&trained)?);
        return Ok(ExitCode::SUCCESS);
    }
    let line = |name: &str, f: Figures| {
        format!("{name:<22} top-1 {:>5.1}%  top-5 {:>5.1}%  MRR {:.3}\n", f.top1 * 100.0, f.top5 * 100.0, f.mrr)
    };
    let mut out = format!(
        "cross-encoder of the first {} by {}\ntrained on {} questions ({} epochs, loss {}) in {:.0} s; \
         reported on {} questions of validation tools\n",
        a.k,
        retriever.source(),
        groups.len(),
        a.epochs,
        losses.iter().map(|l| format!("{l:.3}")).collect::<Vec<_>>().join(", "),
        seconds,
        val_pairs.len(),
    );
    out += &line("retriever", before);
    for (b, f) in &by_blend {
        out += &line(&format!("cross + {b} x retriever"), *f);
    }
    print!("{out}");
    print!("{}", line(&format!("kept: blend {blend}"), after));
    println!("wrote {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
