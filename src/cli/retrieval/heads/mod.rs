//! `heads`: train CoTools' query/tool encoders and tool judge on MiniLM
//! vectors (the procedure is `switchyard_lab::heads`), print what they
//! change, and show a trained file.

mod show;
pub(super) mod split;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use color_eyre::eyre::Result;

use switchyard::config::Config;
use switchyard::dense::minilm::MiniLm;
use switchyard::lab::heads::{HeadsPlan, Hooks, JudgePlan, NegativesFrom, train_heads_and_test, train_judge_and_test};
use switchyard::lab::train::{JudgeOptions, TrainOptions, TrainProgress};
use switchyard::retrieve::Embedder;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::embed::EmbedError;

use crate::cli::progress::{bar, embed_cached};
use show::show;
use split::SplitArgs;

#[derive(Subcommand, Debug)]
pub(crate) enum HeadsCmd {
    /// Train the query and tool encoders and report top-1/top-5/MRR on seen and unseen tools.
    Train(Box<TrainArgs>),
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
pub(crate) struct TrainArgs {
    #[command(flatten)]
    split: SplitArgs,
    /// Questions with their gold tool, to report on.
    #[arg(long)]
    test: Option<PathBuf>,
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
    /// Where those are mined: any (every training tool) or domain (the gold tool's path-id domain
    /// first, `people` of `people/person/place_of_birth`, then any).
    #[arg(long, default_value = "any", value_parser = ["any", "domain"])]
    negatives_from: String,
    #[arg(long, default_value_t = 5)]
    patience: usize,
    /// BM25's weight in the blend (default: chosen on the validation split).
    #[arg(long)]
    lexical_weight: Option<f32>,
    #[arg(long, default_value = "heads.safetensors")]
    out: PathBuf,
    /// Write each validation query's gold tool and top 3 (heads + BM25) here, JSON Lines.
    #[arg(long)]
    dump_validation: Option<PathBuf>,
    /// Write the test questions here as a question file, each with `seen`, for `retrieval eval`.
    #[arg(long)]
    dump_test: Option<PathBuf>,
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
pub(crate) struct JudgeArgs {
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
        HeadsCmd::Train(a) => train(config, *a),
        HeadsCmd::Show { file, n, json } => show(&file, n, json),
        HeadsCmd::Judge(a) => judge(config, a),
    }
}

/// The config's dense embedder (MiniLM when `[retrieval]` names none) and
/// its vector cache in the config's data directory.
fn embedder(config: &Config) -> Result<(Arc<dyn Embedder>, VectorCache)> {
    let data_dir = config.data_dir()?;
    let model: Arc<dyn Embedder> = match switchyard::dense::embedder(&config.retrieval, &data_dir)? {
        Some(model) => model,
        None => Arc::new(MiniLm::load(&MiniLm::folder(&data_dir))?),
    };
    let cache = VectorCache::open(&data_dir.join("retrieval"), model.as_ref());
    Ok((model, cache))
}

/// Embedding through the cache and training under progress bars on stderr.
struct Bars<'a> {
    model: &'a dyn Embedder,
    cache: VectorCache,
    bar: Option<indicatif::ProgressBar>,
}

impl Hooks for Bars<'_> {
    fn embed(&mut self, texts: &[String], what: &str) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        embed_cached(self.model, texts, &mut self.cache, what)
    }
    fn start(&mut self, what: &str, steps: usize) {
        self.bar = Some(bar(steps as u64, what));
    }
    fn step(&mut self, what: &str, p: &TrainProgress) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(p.step as u64);
        if let Some(m) = p.validation {
            bar.set_message(format!("{what} (epoch {}: validation top-1 {:.1}%)", p.epoch, 100.0 * m.top1));
        }
    }
    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

fn train(config: &Config, a: TrainArgs) -> Result<ExitCode> {
    let options = TrainOptions {
        hidden: a.hidden,
        epochs: a.epochs,
        batch: a.batch,
        lr: a.lr,
        weight_decay: a.weight_decay,
        temperature: a.temperature,
        negatives: a.negatives,
        patience: a.patience,
        ..TrainOptions::default()
    };
    let plan = HeadsPlan {
        test: a.test.clone(),
        negatives_from: if a.negatives_from == "domain" { NegativesFrom::Domain } else { NegativesFrom::Any },
        lexical_weight: a.lexical_weight,
        dump_validation: a.dump_validation.clone(),
        dump_test: a.dump_test.clone(),
        ..a.split.plan(options)
    };
    let prepared = plan.prepare()?;
    let (model, cache) = embedder(config)?;
    let mut hooks = Bars { model: model.as_ref(), cache, bar: None };
    let o = train_heads_and_test(prepared, model.id(), &mut hooks)?;
    o.heads.save(&a.out)?;
    if let Some(p) = &a.plot {
        switchyard::lab::plot::loss_curve(p, &o.logs)?;
    }
    if let Some(p) = &a.chart {
        switchyard::lab::plot::selection_chart(p, &o.rows)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&o.json(&a.out))?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", o.text());
    println!(
        "\nsaved {}{}",
        a.out.display(),
        a.plot.as_ref().map(|p| format!(", loss curve {}", p.display())).unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn judge(config: &Config, a: JudgeArgs) -> Result<ExitCode> {
    let plan = JudgePlan {
        train: a.train.clone(),
        test: a.test.clone(),
        window: a.window,
        negatives: a.negatives,
        validation: a.validation,
        options: JudgeOptions { hidden: a.hidden, epochs: a.epochs, lr: a.lr, seed: a.seed, ..JudgeOptions::default() },
    };
    let prepared = plan.prepare()?;
    let (model, cache) = embedder(config)?;
    let mut hooks = Bars { model: model.as_ref(), cache, bar: None };
    let o = train_judge_and_test(prepared, model.id(), &mut hooks)?;
    o.judge.save(&a.out)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&o.json(&a.out))?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", o.text());
    println!("saved {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
