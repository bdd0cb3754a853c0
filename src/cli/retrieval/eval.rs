//! `retrieval eval`: top-1, top-5, MRR and latency of tool retrieval on a
//! benchmark's questions over its whole tool pool, optionally re-ranked by a
//! chat model.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::dataset::{Question, ToolDoc, ToolPool};
use switchyard::eval::retrieval::{Rerank, evaluate, evaluate_reranked, pool_docs};
use switchyard::retrieve::rerank;
use switchyard::text::one_line;

use super::how::{HowArgs, open};
use crate::cli::progress::bar;
use crate::cli::setup::runtime;

/// A chat model re-ranking each question's top candidates (optional: one
/// model call a query).
#[derive(clap::Args, Debug, Default)]
pub(crate) struct RerankArgs {
    /// The configured model that chooses one of the top candidates, which then ranks first.
    #[arg(long)]
    rerank_model: Option<String>,
    /// How many of the retriever's best it chooses among.
    #[arg(long, default_value_t = 20, requires = "rerank_model")]
    rerank_top: usize,
}

pub(super) fn eval(
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
