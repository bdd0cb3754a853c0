//! `retrieval`: the retrieval a session runs, measured and trained. `search`
//! and `eval` read the product's retriever (`how` opens it as a config or
//! flags name it); `heads`, `synth`, `tune`, `rescore` and `cross` are the
//! laboratory's (`switchyard-lab`): each writes a file `[retrieval]` names.

mod cross;
mod eval;
mod heads;
mod how;
mod rescore;
mod search;
mod synth;
mod tune;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::Result;

use switchyard::config::Config;

use how::HowArgs;

#[derive(Subcommand, Debug)]
pub(crate) enum RetrievalCommand {
    /// The library's top tools for a task, with each score's parts (lexical, dense, heads).
    Search(SearchArgs),
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
        rerank: eval::RerankArgs,
        /// Writes each question whose gold tool did not rank first (question, gold tool, its
        /// rank, the first five) as a JSON line.
        #[arg(long, value_name = "FILE")]
        misses: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// CoTools' trainable heads and tool judge: train, show, judge.
    #[command(subcommand)]
    Heads(Box<heads::HeadsCmd>),
    /// Synthetic questions for every tool of a pool, written by a configured
    /// model from the tool's text alone (for `heads train --synthetic`).
    Synth(synth::SynthArgs),
    /// Fine-tune MiniLM itself on (question, tool) pairs, on heads train's split; the epoch is
    /// chosen on validation tools and the weights written for `[retrieval] minilm_weights`.
    Tune(Box<tune::TuneArgs>),
    /// A learned re-scorer of the retriever's first candidates, reading how the question's words
    /// meet each candidate id's domain, subject type and property (`[retrieval] rescore`).
    #[command(subcommand)]
    Rescore(rescore::RescoreCmd),
    /// A cross-encoder of the retriever's first candidates: MiniLM reading the question and
    /// each candidate's text together (`[retrieval] cross_encoder`).
    #[command(subcommand)]
    Cross(cross::CrossCmd),
}

/// `retrieval search`'s arguments (also the hidden `retrieve`'s, its name before).
#[derive(clap::Args, Debug)]
pub(crate) struct SearchArgs {
    #[arg(long)]
    task: String,
    #[arg(short, long, default_value_t = 5)]
    k: usize,
    #[command(flatten)]
    how: HowArgs,
    #[arg(long)]
    json: bool,
}

pub(super) fn run(config: &Config, cmd: RetrievalCommand) -> Result<ExitCode> {
    match cmd {
        RetrievalCommand::Search(a) => search::search(config, &a.task, a.k, &a.how, a.json),
        RetrievalCommand::Eval { tools, questions, how, rerank, misses, json } => {
            eval::eval(config, &tools, &questions, &how, &rerank, misses.as_deref(), json)
        }
        RetrievalCommand::Heads(cmd) => heads::run(config, *cmd),
        RetrievalCommand::Synth(a) => synth::synth(config, a),
        RetrievalCommand::Tune(a) => tune::tune(config, *a),
        RetrievalCommand::Rescore(cmd) => rescore::run(config, cmd),
        RetrievalCommand::Cross(cmd) => cross::run(config, cmd),
    }
}
