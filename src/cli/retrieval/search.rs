//! `retrieval search`: the configured library's top tools for a task, with
//! each score's parts (lexical, dense, heads, re-scorer).

use std::process::ExitCode;

use color_eyre::eyre::{Result, eyre};
use serde_json::json;

use switchyard::config::Config;
use switchyard::retrieve::retriever::hits_table;
use switchyard::session;

use super::how::{HowArgs, open};

/// `retrieval search --task`: the configured library's top tools for a task.
pub(super) fn search(config: &Config, task: &str, k: usize, how: &HowArgs, json: bool) -> Result<ExitCode> {
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
