//! `retrieval rescore train`: fits the re-scorer of the first candidates
//! (`retrieve::rescore`) on heads train's split, reports it on the
//! validation tools and writes it for `[retrieval] rescore`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, eyre};
use serde_json::json;

use switchyard::config::Config;
use switchyard::lab::rescore::{Figures, examples, figures, rank_questions};
use switchyard::lab::train::TrainOptions;
use switchyard::retrieve::rescore::features::NAMES;
use switchyard::retrieve::rescore::{Fit, Rescorer, fit};

use super::heads::split::ToolSplitArgs;
use crate::cli::progress::bar;

use super::how::{FirstCandidates, HowArgs};

#[derive(Subcommand, Debug)]
pub(crate) enum RescoreCmd {
    /// Fit the re-scorer on the training tools' questions, report it on the validation tools'.
    Train(Box<RescoreTrainArgs>),
}

#[derive(Args, Debug)]
pub(crate) struct RescoreTrainArgs {
    #[command(flatten)]
    split: ToolSplitArgs,
    /// How many of the retriever's first candidates are re-ordered (5 was chosen on
    /// SimpleToolQuestions' validation tools over 10 and 20).
    #[arg(long, default_value_t = 5)]
    k: usize,
    #[arg(long, default_value_t = 60)]
    epochs: usize,
    /// Where the re-scorer is written (JSON).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    how: HowArgs,
    /// Prints what was trained and its figures as JSON.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(config: &Config, cmd: RescoreCmd) -> Result<ExitCode> {
    match cmd {
        RescoreCmd::Train(a) => train(config, &a),
    }
}

fn train(config: &Config, a: &RescoreTrainArgs) -> Result<ExitCode> {
    if a.k < 2 {
        return Err(eyre!("--k: at least 2 candidates to re-order"));
    }
    if a.epochs == 0 {
        return Err(eyre!("--epochs: at least 1"));
    }
    let plan = a.split.plan(TrainOptions::default());
    let FirstCandidates { train: train_pairs, validation: val_pairs, retriever, .. } =
        FirstCandidates::open(config, &plan, &a.how)?;
    let total = (train_pairs.len() + val_pairs.len()) as u64;
    let bar = bar(total, "ranking");
    let done_train = train_pairs.len();
    let train_ranked = rank_questions(&retriever, &train_pairs, a.k, &mut |d, _| bar.set_position(d as u64))?;
    let val_ranked =
        rank_questions(&retriever, &val_pairs, a.k, &mut |d, _| bar.set_position((done_train + d) as u64))?;
    bar.finish_and_clear();
    let train_examples = examples(&train_ranked);
    let weights = fit(&train_examples, Fit { epochs: a.epochs, seed: plan.options.seed, ..Fit::default() });
    let before = figures(&val_ranked, None);
    let after = figures(&val_ranked, Some(&weights));
    let trained = json!({
        "retriever": retriever.source(),
        "tools": plan.tools.display().to_string(),
        "train": plan.train.display().to_string(),
        "holdout": plan.holdout,
        "validation": plan.validation,
        "seed": plan.options.seed,
        "k": a.k,
        "epochs": a.epochs,
        "questions": train_pairs.len(),
        "validation_questions": val_pairs.len(),
        "validation_before": before,
        "validation_after": after,
    });
    Rescorer::new(a.k, weights, "").save(&a.out, trained.clone())?;
    if a.json {
        let weights: serde_json::Map<String, serde_json::Value> =
            NAMES.iter().zip(&weights).map(|(n, w)| ((*n).to_owned(), json!(w))).collect();
        println!("{}", serde_json::to_string_pretty(&json!({ "trained": trained, "weights": weights }))?);
        return Ok(ExitCode::SUCCESS);
    }
    let line = |name: &str, f: Figures| {
        format!("{name:<16} top-1 {:>5.1}%  top-5 {:>5.1}%  MRR {:.3}\n", f.top1 * 100.0, f.top5 * 100.0, f.mrr)
    };
    print!(
        "re-scorer of the first {} by {}\ntrained on {} questions ({} with the gold tool among the first {}), \
         reported on {} questions of {} validation tools\n{}{}",
        a.k,
        retriever.source(),
        train_pairs.len(),
        train_examples.len(),
        a.k,
        val_pairs.len(),
        val_pairs.iter().map(|(_, t)| t).collect::<std::collections::BTreeSet<_>>().len(),
        line("retriever", before),
        line("re-scored", after),
    );
    println!("weights:");
    for (name, w) in NAMES.iter().zip(&weights) {
        println!("  {name:<20} {w:>7.3}");
    }
    println!("wrote {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
