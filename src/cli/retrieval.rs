//! `retrieve` (the ranked tools for a task, with each score's parts) and
//! `retrieval eval` (top-1, top-5, MRR and latency on a benchmark's
//! questions over its whole tool pool).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, eyre};
use serde_json::json;

use switchyard::config::Config;
use switchyard::dataset::{Question, ToolDoc, ToolPool};
use switchyard::eval::retrieval::{Rerank, evaluate, evaluate_reranked, pool_docs};
use switchyard::retrieve::rerank;
use switchyard::retrieve::retriever::hits_table;
use switchyard::session;
use switchyard::text::one_line;

use super::progress::bar;
use super::retriever::{HowArgs, open};
use super::setup::runtime;

#[derive(Subcommand, Debug)]
pub(super) enum RetrievalCommand {
    /// Top-1, top-5, MRR and latency of tool retrieval over a benchmark's
    /// whole pool (CoTools format: tool.json and a question file).
    Eval {
        /// The pool: a CoTools/ToolkenGPT tool.json.
        #[arg(long)]
        tools: PathBuf,
        /// Questions with their gold tool (`question`, `tool` per line).
        #[arg(long)]
        questions: PathBuf,
        #[command(flatten)]
        how: HowArgs,
        #[command(flatten)]
        rerank: RerankArgs,
        /// Writes each question whose gold tool did not rank first (question, gold tool, its
        /// rank, the first five) as a JSON line.
        #[arg(long, value_name = "FILE")]
        misses: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// CoTools' trainable heads and tool judge: train, show, judge.
    #[command(subcommand)]
    Heads(Box<super::heads::HeadsCmd>),
    /// Synthetic questions for every tool of a pool, written by a configured
    /// model from the tool's text alone (for `heads train --synthetic`).
    Synth(super::synth::SynthArgs),
    /// Fine-tune MiniLM itself on (question, tool) pairs, on heads train's split; the epoch is
    /// chosen on validation tools and the weights written for `[retrieval] minilm_weights`.
    Tune(Box<super::tune::TuneArgs>),
    /// A learned re-scorer of the retriever's first candidates, reading how the question's words
    /// meet each candidate id's domain, subject type and property (`[retrieval] rescore`).
    #[command(subcommand)]
    Rescore(super::rescore::RescoreCmd),
    /// A cross-encoder of the retriever's first candidates: MiniLM reading the question and
    /// each candidate's text together (`[retrieval] cross_encoder`).
    #[command(subcommand)]
    Cross(super::cross::CrossCmd),
}

/// A chat model re-ranking each question's top candidates (optional: one
/// model call a query).
#[derive(clap::Args, Debug, Default)]
pub(super) struct RerankArgs {
    /// The configured model that chooses one of the top candidates, which then ranks first.
    #[arg(long)]
    rerank_model: Option<String>,
    /// How many of the retriever's best it chooses among.
    #[arg(long, default_value_t = 20, requires = "rerank_model")]
    rerank_top: usize,
}

pub(super) fn run(config: &Config, cmd: RetrievalCommand) -> Result<ExitCode> {
    match cmd {
        RetrievalCommand::Eval { tools, questions, how, rerank, misses, json } => {
            eval(config, &tools, &questions, &how, &rerank, misses.as_deref(), json)
        }
        RetrievalCommand::Heads(cmd) => super::heads::run(config, *cmd),
        RetrievalCommand::Synth(a) => super::synth::synth(config, a),
        RetrievalCommand::Tune(a) => super::tune::tune(config, *a),
        RetrievalCommand::Rescore(cmd) => super::rescore::run(config, cmd),
        RetrievalCommand::Cross(cmd) => super::cross::run(config, cmd),
    }
}

fn eval(
    config: &Config,
    tools: &Path,
    questions: &Path,
    how: &HowArgs,
    rerank: &RerankArgs,
    misses: Option<&Path>,
    json: bool,
) -> Result<ExitCode> {
    let how = how.apply(config)?;
    if rerank.rerank_top < 2 {
        return Err(eyre!("--rerank-top: at least 2 candidates to choose among"));
    }
    let model = match &rerank.rerank_model {
        Some(name) => {
            let models = config.build_models(config.seed)?;
            let slot =
                models.named(name).ok_or_else(|| eyre!("--rerank-model: no model named '{name}' in the config"))?;
            Some(slot.model.clone())
        }
        None => None,
    };
    let pool = ToolPool::load(tools)?;
    let qs = Question::load_with_tools(questions)?;
    for (i, q) in qs.iter().enumerate() {
        let gold = q.tool.as_deref().unwrap_or_default();
        if pool.position(gold).is_none() {
            return Err(eyre!(
                "{}: question {} (case {}): gold tool '{gold}' is not in {}",
                questions.display(),
                i + 1,
                q.id,
                tools.display()
            ));
        }
    }
    let retriever = open(config, &how, &pool_docs(&pool))?;
    let bar = bar(qs.len() as u64, "ranking");
    let report = match model {
        None => evaluate(&retriever, &qs, &mut |done, _| bar.set_position(done as u64))?,
        Some(model) => {
            let rt = runtime()?;
            let docs: HashMap<&str, &ToolDoc> = pool.tools.iter().map(|t| (t.id.as_str(), t)).collect();
            let mut judge = |question: &str, names: &[String]| -> Result<usize, String> {
                let candidates: Vec<ToolDoc> =
                    names.iter().filter_map(|n| docs.get(n.as_str()).map(|d| (*d).clone())).collect();
                let req = rerank::request(question, &candidates);
                let chosen = rt
                    .block_on(model.chat(&req))
                    .map_err(|e| e.to_string())
                    .and_then(|reply| rerank::parse_reply(&reply.text, &candidates));
                if let Err(why) = &chosen {
                    bar.suspend(|| eprintln!("{}: re-ranking: {why}", one_line(question)));
                }
                chosen
            };
            let rerank = Rerank { top: rerank.rerank_top, judge: &mut judge };
            evaluate_reranked(&retriever, &qs, Some(rerank), &mut |done, _| bar.set_position(done as u64))?
        }
    };
    bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text(questions));
    }
    // After the figures, so a misses file that cannot be written loses none of them.
    if let Some(path) = misses {
        let mut lines = String::new();
        for m in &report.misses {
            lines.push_str(&serde_json::to_string(m)?);
            lines.push('\n');
        }
        std::fs::write(path, lines).map_err(|e| eyre!("--misses {}: {e}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `retrieve --task`: the configured library's top tools for a task.
pub(super) fn retrieve(config: &Config, task: &str, k: usize, how: &HowArgs, json: bool) -> Result<ExitCode> {
    if task.trim().is_empty() {
        return Err(eyre!("--task: the task text is empty"));
    }
    let how = how.apply(config)?;
    let library = session::load_library(config)?;
    let docs: Vec<(String, String)> = library.tools().iter().map(|t| (t.name.clone(), t.description.clone())).collect();
    let retriever = open(config, &how, &docs)?;
    let hits = retriever.search(task, k)?;
    if json {
        let out = json!({ "task": task, "source": retriever.source(), "tools": retriever.len(), "hits": hits });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} tools ranked by {}", retriever.len(), retriever.source());
    print!("{}", hits_table(&hits));
    Ok(ExitCode::SUCCESS)
}
