//! RestBench (RestGPT's `datasets/tmdb.json` and `datasets/spotify.json`)
//! and ATC's RestBench-TMDB (20 candidates a task) as a config whose
//! library is the OpenAPI specs, each operation answering with a value
//! synthesized from its documented response (the APIs need keys and a
//! network), and a task file per split found.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{ImportError, Step, invalid};
use super::summary::{Summary, say, skipped};

use crate::config::Config;
use crate::dataset::restbench::{self, Resolved, RestTask, resolve};
use crate::session;
use crate::tool::operation_names;

use super::files::{toml_string, write_file};

/// One split: its file in the original repository, the spec its tools
/// come from, and the task file it becomes.
struct Split {
    file: PathBuf,
    spec: PathBuf,
    name: &'static str,
}

pub(super) fn import(name: &str, dir: &Path, out: &Path, spec: Option<PathBuf>) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let known: Vec<Split> = match name {
        "atc-tmdb" => vec![Split {
            file: dir.join("tmdb.data.candidate=20.v2.json"),
            spec: spec.clone().unwrap_or_else(|| dir.join("../restbench/specs/tmdb_oas.json")),
            name: "tmdb",
        }],
        _ => vec![
            Split {
                file: dir.join("datasets/tmdb.json"),
                spec: spec.clone().unwrap_or_else(|| dir.join("specs/tmdb_oas.json")),
                name: "tmdb",
            },
            Split {
                file: dir.join("datasets/spotify.json"),
                spec: dir.join("specs/spotify_oas.json"),
                name: "spotify",
            },
        ],
    };
    let (found, absent): (Vec<Split>, Vec<Split>) = known.into_iter().partition(|s| s.file.is_file());
    for s in &absent {
        skipped!(summary, "{}: not in this folder (a split of the original dataset); skipped", s.file.display());
    }
    if found.is_empty() {
        return Err(invalid!(
            "{}: no RestBench task file found (datasets/tmdb.json, datasets/spotify.json)",
            dir.display()
        ));
    }
    let mut specs = Vec::new();
    for s in &found {
        let spec = s.spec.canonicalize().step(|| format!("the OpenAPI spec {}", s.spec.display()))?;
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    std::fs::create_dir_all(out.join("tasks")).step(|| format!("cannot create {}", out.display()))?;
    let config_path = out.join("switchyard.toml");
    let library: Vec<String> = specs.iter().map(|p| toml_string(&p.display().to_string())).collect();
    let options: String = library
        .iter()
        .map(|p| format!("\n[[library_options]]\npath = {p}\nexecutor = {{ kind = \"synthesized\" }}\n"))
        .collect();
    let candidates = name == "atc-tmdb";
    let config_text = format!(
        "# Written by `switchyard bench import {name}` from {}.\n\
         # The APIs need keys and a network: each tool answers with a value synthesized\n\
         # from its documented response schema (executor `synthesized`), the same for the same\n\
         # seed and call. RestBench has no gold answers: Path% and Prec% against the gold\n\
         # API paths are the measure, and answered means a run ended with an answer.\n\
         library = [{}]\n\
         data_dir = \"data\"\n\
         tasks = \"tasks/{}.jsonl\"\n\
         # No past runs: ToolNet starts from a uniform graph and learns.\n\
         trajectories = \"trajectories.jsonl\"\n\
         strategy = \"atc\"\n\n\
         [params]\n\
         # {}\n\
         top_k = {}\n{options}",
        dir.display(),
        library.join(", "),
        found[0].name,
        if candidates { "ATC's setting: every candidate of a task is offered." } else { "Tools offered a step." },
        if candidates { 20 } else { 10 },
    );
    write_file(&config_path, &config_text)?;
    let trajectories = out.join("trajectories.jsonl");
    write_file(&trajectories, "")?;
    let config = Config::load(&config_path)?;
    let lib = session::load_library(&config)?;
    // Gold paths name operations by method and route; the library by
    // operationId where the spec gives one (Spotify's), else by both.
    let mut routes: Vec<(String, String)> = Vec::new();
    for spec in &specs {
        let text = std::fs::read_to_string(spec).step(|| format!("cannot read {}", spec.display()))?;
        let doc: serde_json::Value = serde_json::from_str(&text).step(|| format!("{} is not JSON", spec.display()))?;
        routes.extend(operation_names(&doc).into_iter().filter(|(_, tool)| lib.get(tool).is_some()));
    }
    let by_route = |route: &str| routes.iter().find(|(r, _)| r == route).map(|(_, t)| t.clone());
    for s in &found {
        let tasks = restbench::load(&s.file)?;
        let mut notes = Vec::new();
        let mut resolve_one = |task: &RestTask, n: &str| -> Result<String, ImportError> {
            // ATC's files name tools as `GET_search_person`, RestBench's as
            // `GET /search/person`: both meet the routes by `tool_key`.
            match resolve(n, routes.iter().map(|(r, _)| r.as_str())) {
                Some(Resolved::Exact(r)) => Ok(by_route(&r).unwrap_or(r)),
                Some(r) => {
                    let tool = by_route(r.name()).unwrap_or_else(|| r.name().to_string());
                    notes.push(format!("task {}: '{}' read as {tool} ({:?})", task.id, n.trim(), r));
                    Ok(tool)
                }
                None => Err(invalid!(
                    "{}: task {} names '{n}', which the specs ({}) have no operation for",
                    s.file.display(),
                    task.id,
                    specs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                )),
            }
        };
        let path = out.join(format!("tasks/{}.jsonl", s.name));
        let mut w =
            std::io::BufWriter::new(std::fs::File::create(&path).step(|| format!("cannot write {}", path.display()))?);
        for t in &tasks {
            let tools = t.solution.iter().map(|n| resolve_one(t, n)).collect::<Result<Vec<_>, ImportError>>()?;
            let candidates = t.candidates.iter().map(|n| resolve_one(t, n)).collect::<Result<Vec<_>, ImportError>>()?;
            let line = serde_json::json!({"id": t.id, "query": t.query, "tools": tools, "candidates": candidates});
            writeln!(w, "{line}").step(|| format!("cannot write {}", path.display()))?;
        }
        w.flush().step(|| format!("cannot write {}", path.display()))?;
        for n in &notes {
            skipped!(summary, "{}: {n}", s.file.display());
        }
        say!(summary, "{}: {} tasks → {}", s.name, tasks.len(), path.display());
    }
    say!(summary, "config → {}", config_path.display());
    say!(
        summary,
        "run: switchyard --config {} eval --strategy atc,react,toolnet,rewoo --react-k 20 --tasks {}",
        config_path.display(),
        out.join(format!("tasks/{}.jsonl", found[0].name)).display()
    );
    Ok(summary)
}
