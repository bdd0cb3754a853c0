//! `retrieval synth`: synthetic questions for every tool of a pool, written
//! by a configured model from each tool's text alone, for `heads train
//! --synthetic`. The file is appended tool by tool, so a stopped run goes on
//! where it was.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr, eyre};
use futures::StreamExt;

use switchyard::config::Config;
use switchyard::dataset::{ToolDoc, ToolPool};
use switchyard::model::{ChatModel, Role};
use switchyard::retrieve::synthetic_questions::{self, SyntheticQuestion};

use crate::cli::progress::bar;
use crate::cli::setup::{runtime, until_signal};

#[derive(Args, Debug)]
pub(crate) struct SynthArgs {
    /// The pool: a CoTools/ToolkenGPT tool.json.
    #[arg(long)]
    tools: PathBuf,
    /// The question file to write (JSON Lines; appended, tools already in it are skipped).
    #[arg(long)]
    out: PathBuf,
    /// Questions asked for each tool.
    #[arg(long, default_value_t = 3)]
    per_tool: usize,
    /// The configured model that writes them (default: the actor's).
    #[arg(long)]
    model: Option<String>,
    /// Requests in flight at once (a server with that many slots batches them).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    #[arg(long)]
    seed: Option<u64>,
}

pub(super) fn synth(config: &Config, a: SynthArgs) -> Result<ExitCode> {
    if a.per_tool == 0 || a.per_tool > 20 {
        return Err(eyre!("--per-tool: between 1 and 20 questions a tool"));
    }
    let pool = ToolPool::load(&a.tools)?;
    let done = written_tools(&a.out)?;
    let todo: Vec<ToolDoc> = pool.tools.into_iter().filter(|t| !done.contains(&t.id)).collect();
    let models = config.build_models(a.seed.unwrap_or(config.seed))?;
    let slot = match &a.model {
        Some(name) => models.named(name).ok_or_else(|| eyre!("--model: no model named '{name}' in the config"))?,
        None => models.get(Role::Actor),
    };
    let model = slot.model.clone();
    eprintln!("{} tools to ask for, {} already in {}", todo.len(), done.len(), a.out.display());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&a.out)
        .wrap_err_with(|| format!("could not open {}", a.out.display()))?;
    let failed =
        runtime()?.block_on(until_signal(write_all(model.as_ref(), &todo, a.per_tool, a.jobs, file, &a.out)))?;
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} tools got no readable questions (run the command again to ask for them): {}",
        failed.len(),
        failed.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
    );
    Ok(ExitCode::FAILURE)
}

/// Asks for every tool, `jobs` at a time, appending each tool's lines as
/// its reply comes; returns the tools whose reply could not be read.
async fn write_all(
    model: &dyn ChatModel,
    todo: &[ToolDoc],
    n: usize,
    jobs: usize,
    mut file: std::fs::File,
    path: &Path,
) -> Result<Vec<String>> {
    let progress = bar(todo.len() as u64, "writing questions");
    let mut failed = Vec::new();
    let mut replies = futures::stream::iter(todo.iter().map(|tool| async move {
        let mut req = synthetic_questions::request(tool, n);
        // Room for n questions of the longest length the schema allows.
        req.max_tokens = Some(u32::try_from(30 * n + 40).unwrap_or(u32::MAX));
        let questions = match model.chat(&req).await {
            Ok(reply) => synthetic_questions::parse_reply(&reply.text),
            Err(e) => Err(e.to_string()),
        };
        (tool, questions)
    }))
    .buffer_unordered(jobs.max(1));
    while let Some((tool, questions)) = replies.next().await {
        progress.inc(1);
        match questions {
            Ok(qs) => {
                let mut lines = String::new();
                for question in qs.into_iter().take(n) {
                    let line = SyntheticQuestion { question, tool: tool.id.clone(), synthetic: true };
                    lines += &serde_json::to_string(&line)?;
                    lines.push('\n');
                }
                file.write_all(lines.as_bytes()).wrap_err_with(|| format!("could not write {}", path.display()))?;
            }
            Err(why) => {
                progress.suspend(|| eprintln!("{}: {why}", tool.id));
                failed.push(tool.id.clone());
            }
        }
    }
    progress.finish_and_clear();
    Ok(failed)
}

/// The tools a question file already has lines for.
fn written_tools(path: &Path) -> Result<BTreeSet<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(e).wrap_err_with(|| format!("could not read {}", path.display())),
    };
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let q: SyntheticQuestion = serde_json::from_str(line)
            .map_err(|e| eyre!("{}:{}: not a synthetic question: {e}", path.display(), i + 1))?;
        out.insert(q.tool);
    }
    Ok(out)
}
