//! `probe`: ATC's black-box probing of the library's tools, headless, with
//! a progress bar; and `--compare`, which measures how many fields of a
//! reference schema (ATC's probed TMDB protocols) the probes found.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};
use serde_json::Value;

use switchyard::config::Config;
use switchyard::engine::{EventKind, StrategyKind};
use switchyard::eval::probe_recall::{probe_recall, recall_table};
use switchyard::program::protocol::ProtocolStore;
use switchyard::session::{self, TaskSource};
use switchyard::text::ellipsis;

use super::progress::bar;
use super::setup::{runtime, until_signal};

#[derive(Args, Debug)]
pub(super) struct ProbeArgs {
    /// Tools to probe (default: every tool that documents no response and has no saved probe).
    tools: Vec<String>,
    /// Probe every tool of the library, documented or not.
    #[arg(long, conflicts_with = "tools")]
    all: bool,
    /// Compare the probed schemas with a reference: ATC's probed spec
    /// (`tmdb.spec.probed.v2.json`), tools matched by name.
    #[arg(long, value_name = "SPEC")]
    compare: Option<PathBuf>,
    #[arg(long)]
    seed: Option<u64>,
    /// Write the trace (JSON Lines) here.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub(super) fn probe(config: &Config, a: ProbeArgs) -> Result<ExitCode> {
    let library = session::load_library(config)?;
    let data = config.data_dir()?;
    let store = ProtocolStore::new(data.join("protocols"));
    for t in &a.tools {
        if library.get(t).is_none() {
            return Err(eyre!("no tool '{t}' in the library (see `switchyard tools list`)"));
        }
    }
    let targets: Vec<String> = if a.all {
        library.names().map(str::to_string).collect()
    } else if !a.tools.is_empty() {
        a.tools.clone()
    } else {
        let mut out = Vec::new();
        for t in library.tools() {
            if t.response.is_none() && store.load(t)?.is_none() {
                out.push(t.name.clone());
            }
        }
        out
    };
    if targets.is_empty() {
        println!("nothing to probe: every tool documents its response or was probed (--all probes them all)");
        return Ok(ExitCode::SUCCESS);
    }
    let opts = session::SessionOptions {
        strategy: Some(StrategyKind::Atc),
        seed: a.seed,
        tasks: TaskSource::Text(format!("Probe {} tool(s)", targets.len())),
        trace: a.trace.clone(),
        probe_only: Some(targets.clone()),
        ..Default::default()
    };
    let mut prepared = session::prepare(config, &opts)?;
    let mut events = prepared.engine.subscribe();
    let progress = bar(targets.len() as u64, "probing");
    let mut found: BTreeMap<String, Option<Value>> = BTreeMap::new();
    let outcome = runtime()?.block_on(until_signal(async {
        let run = session::run(prepared);
        tokio::pin!(run);
        loop {
            tokio::select! {
                done = &mut run => break Ok(done?),
                Some(e) = events.recv() => {
                    if let EventKind::ProtocolSaved { tool, schema, .. } = e.kind {
                        progress.inc(1);
                        found.insert(tool, schema);
                    }
                }
            }
        }
    }))?;
    while let Ok(e) = events.try_recv() {
        if let EventKind::ProtocolSaved { tool, schema, .. } = e.kind {
            found.insert(tool, schema);
        }
    }
    progress.finish_and_clear();
    let state = outcome.state;
    let probed = found.values().filter(|s| s.is_some()).count();
    let rows = match &a.compare {
        Some(reference) => Some(probe_recall(&library, &store, &targets, reference)?),
        None => None,
    };
    if a.json {
        let out = serde_json::json!({
            "probed": probed,
            "tools": targets.len(),
            "schemas": found,
            "recall": rows,
            "trace": a.trace,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for (tool, schema) in &found {
            match schema {
                Some(s) => println!("{tool:<40} {}", ellipsis(&s.to_string(), 100)),
                None => println!("{tool:<40} (not probed: no program got a response)"),
            }
        }
        println!("probed {probed} of {} tool(s); saved under {}", targets.len(), store.dir().display());
        if let Some(rows) = &rows {
            print!("{}", recall_table(rows));
        }
        for ((role, model), acc) in &state.accounts {
            println!(
                "{role:<10} {model:<12} {:>5} calls {:>9} tokens in {:>7} out",
                acc.calls, acc.usage.prompt_tokens, acc.usage.completion_tokens
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
