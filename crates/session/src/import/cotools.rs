//! `bench import` for the CoTools/ToolkenGPT benchmarks (FuncQA, GSM8K-XL,
//! KAMEL, SimpleToolQuestions): the tool pool as a manifest, one task file
//! per test split present, the annotated dev/train calls as trajectories,
//! and a config that runs them.
//!
//! The arithmetic tools are real builtins. The knowledge-base relations
//! have no KB here: they answer from a cassette of the dev split's own
//! recorded calls, so a test question's call is not recorded and its answer
//! cannot be right (bar the rare test call that repeats a dev call); tool
//! selection (Path%, Prec%) is what such a run measures.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use super::error::{ImportError, Step, invalid};
use super::files::write_file;
use super::summary::{Summary, say};
use serde_json::{Value, json};

use crate::config::Config;
use crate::dataset::{CallText, CoToolsBench, Question, ToolDoc, ToolPool};
use crate::session;
use crate::task::{Match, load_tasks};
use crate::tool::builtin::math_tool;

/// Tools a KB task offers the model: retrieval picks them from the pool.
const KB_TOP_K: usize = 5;
/// The cassette of the KB tools that the dev split never calls.
const UNRECORDED: &str = "cassettes/unrecorded.jsonl";

pub(super) fn import(bench: CoToolsBench, dir: &Path, out: &Path) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let name = bench.name();
    let tool_file = bench.tool_file(dir);
    let pool = ToolPool::load(&tool_file)?;
    let names = library_names(&pool, &tool_file)?;
    let splits = bench.splits(dir)?;
    let Some(main) = splits.main().cloned() else {
        return Err(invalid!(
            "{}: no test split found (known: {})",
            dir.display(),
            bench.known_splits().iter().map(|s| format!("{s}.jsonl")).collect::<Vec<_>>().join(", ")
        ));
    };
    std::fs::create_dir_all(out.join("tasks")).step(|| format!("cannot create {}", out.display()))?;

    // Every split is read before anything is written, so a bad line stops
    // the import with nothing half done.
    let mut task_files = Vec::new();
    for split in &splits.found {
        let questions = Question::load(&split.path)?;
        let lines = task_lines(bench, &questions, &names, &split.path, &tool_file)?;
        task_files.push((split, lines));
    }
    let texts: Vec<(std::path::PathBuf, Vec<CallText>)> =
        bench.annotated_files(dir).into_iter().map(|p| CallText::load(&p).map(|t| (p, t))).collect::<Result<_, _>>()?;

    let mut counts = Vec::new();
    for (split, lines) in &task_files {
        let path = out.join("tasks").join(format!("{}.jsonl", split.name));
        write_lines(&path, lines)?;
        counts.push((split.name.clone(), lines.len(), path));
    }
    let trajectories = trajectory_lines(&texts, &names)?;
    write_lines(&out.join("trajectories.jsonl"), &trajectories)?;
    let recorded = if bench.is_math() { None } else { Some(write_cassettes(out, &texts, &names)?) };
    let manifest = manifest(bench, &pool, &names, recorded.as_ref())?;
    let manifest_path = out.join("tools.toml");
    write_file(&manifest_path, &manifest)?;
    let config_path = out.join("switchyard.toml");
    let config_text = config_text(bench, dir, &main.name, pool.tools.len());
    write_file(&config_path, &config_text)?;

    // Read back as a run would: the config, the library, every task file.
    let config = Config::load(&config_path)?;
    let library = session::load_library(&config)?;
    if library.len() != pool.tools.len() {
        return Err(invalid!(
            "{}: {} tools written, {} loaded",
            manifest_path.display(),
            pool.tools.len(),
            library.len()
        ));
    }
    for (_, _, path) in &counts {
        for t in load_tasks(path)? {
            if let Some(g) = t.tools.iter().find(|g| library.get(g).is_none()) {
                return Err(invalid!("{}: task {} names tool '{g}', which the library lacks", path.display(), t.id));
            }
        }
    }

    say!(summary, "{name}: {} tools from {} → {}", pool.tools.len(), tool_file.display(), manifest_path.display());
    for (split, n, path) in &counts {
        say!(summary, "  split {split}: {n} tasks → {}", path.display());
    }
    if splits.absent.is_empty() {
        say!(summary, "  every known split is present");
    } else {
        let absent: Vec<String> = splits.absent.iter().map(|s| format!("{s}.jsonl")).collect();
        say!(summary, "  known splits absent from {}: {}", dir.display(), absent.join(", "));
    }
    say!(
        summary,
        "  {} trajectories (annotated dev/train calls) → {}",
        trajectories.len(),
        out.join("trajectories.jsonl").display()
    );
    match &recorded {
        None => {
            say!(summary, "  tools: real builtins (math_*); tasks judged as the papers do (match = round2)");
        }
        Some(r) => {
            say!(
                summary,
                "  tools: no knowledge base here — each answers only the {} calls recorded in dev ({} of {} tools have any);",
                r.calls,
                r.tools,
                pool.tools.len()
            );
            say!(
                summary,
                "  a test question's call is not recorded, so answers cannot be right without a KB (bar the rare test call that repeats a dev call): tool selection (Path%, Prec%) is the measure"
            );
        }
    }
    say!(summary, "config → {}", config_path.display());
    // `eval` offers react every tool unless told otherwise; a large pool
    // is offered as the config's retrieval would.
    let react_k = if bench.is_math() { String::new() } else { format!(" --react-k {KB_TOP_K}") };
    say!(
        summary,
        "run: switchyard --config {} eval --strategy react,toolnet{react_k} --tasks {}",
        config_path.display(),
        out.join("tasks").join(format!("{}.jsonl", main.name)).display()
    );
    Ok(summary)
}

/// Library names for the pool's ids: a Freebase path's slashes become dots
/// (`people/person/place_of_birth` → `people.person.place_of_birth`), any
/// other character a library name cannot hold an underscore.
fn library_names(pool: &ToolPool, tool_file: &Path) -> Result<HashMap<String, String>, ImportError> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut taken: HashMap<String, &str> = HashMap::new();
    for t in &pool.tools {
        let mut n: String =
            t.id.chars()
                .map(|c| match c {
                    '/' => '.',
                    c if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') => c,
                    _ => '_',
                })
                .collect();
        if !n.starts_with(|c: char| c.is_ascii_alphabetic()) {
            n.insert_str(0, "t_");
        }
        // The engine's graph keeps these names for itself.
        if matches!(n.as_str(), "start" | "end" | "finish") {
            n.push_str("_tool");
        }
        if let Some(other) = taken.insert(n.clone(), &t.id) {
            return Err(invalid!(
                "{}: tools '{other}' and '{}' both become '{n}' in the library",
                tool_file.display(),
                t.id
            ));
        }
        names.insert(t.id.clone(), n);
    }
    Ok(names)
}

fn tool_name<'a>(names: &'a HashMap<String, String>, id: &str, file: &Path, at: &str) -> Result<&'a str, ImportError> {
    names
        .get(id)
        .map(String::as_str)
        .ok_or_else(|| invalid!("{}: {at}: tool '{id}' is not in the tool pool", file.display()))
}

fn answer_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => Some(items.iter().filter_map(answer_text).collect::<Vec<_>>().join(", ")),
        other => Some(other.to_string()),
    }
}

fn task_lines(
    bench: CoToolsBench,
    questions: &[Question],
    names: &HashMap<String, String>,
    path: &Path,
    tool_file: &Path,
) -> Result<Vec<Value>, ImportError> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(questions.len());
    for (i, q) in questions.iter().enumerate() {
        // A repeated case_idx would be refused by the task loader; the
        // question's position keeps it apart.
        let n = seen.entry(q.id.clone()).or_default();
        *n += 1;
        let id = if *n == 1 { q.id.clone() } else { format!("{}#{}", q.id, i + 1) };
        let mut line = json!({"id": id, "query": q.question});
        if let Some(a) = answer_text(&q.answer) {
            line["answer"] = json!(a);
            if bench.is_math() {
                line["match"] = json!(Match::Round2.to_string());
            }
        }
        if let Some(t) = &q.tool {
            let at = format!("question {} (case {})", i + 1, q.id);
            let n = tool_name(names, t, path, &at).step(|| format!("the pool is {}", tool_file.display()))?;
            line["tools"] = json!([n]);
        }
        out.push(line);
    }
    Ok(out)
}

fn trajectory_lines(
    texts: &[(std::path::PathBuf, Vec<CallText>)],
    names: &HashMap<String, String>,
) -> Result<Vec<Value>, ImportError> {
    let mut out = Vec::new();
    for (path, texts) in texts {
        for (i, t) in texts.iter().enumerate() {
            let Some(query) = t.question() else { continue };
            let at = format!("record {}", i + 1);
            let tools = t
                .calls
                .iter()
                .map(|(_, id)| tool_name(names, id, path, &at))
                .collect::<Result<Vec<_>, ImportError>>()?;
            out.push(json!({"query": query, "tools": tools}));
        }
    }
    Ok(out)
}

/// How much of the KB the dev split recorded.
struct Recorded {
    /// Library names of the tools with a cassette of their own.
    with_calls: std::collections::BTreeSet<String>,
    tools: usize,
    calls: usize,
}

/// One cassette per KB tool the dev split calls (a shared cassette would be
/// read once per tool when the library loads), built from the annotated
/// calls: the entity (the call's params, which the annotation splits at
/// commas, joined again) and the recorded return.
fn write_cassettes(
    out: &Path,
    texts: &[(std::path::PathBuf, Vec<CallText>)],
    names: &HashMap<String, String>,
) -> Result<Recorded, ImportError> {
    let dir = out.join("cassettes");
    if dir.exists() {
        // Cassettes of an earlier import would answer for tools this one
        // may no longer record.
        std::fs::remove_dir_all(&dir).step(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).step(|| format!("cannot create {}", dir.display()))?;
    let mut by_tool: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for (path, texts) in texts {
        for (i, t) in texts.iter().enumerate() {
            for ((_, id), d) in t.calls.iter().zip(&t.details) {
                let name = tool_name(names, id, path, &format!("record {}", i + 1))?;
                if d.params.is_empty() || d.returns.is_empty() {
                    continue;
                }
                by_tool.entry(name).or_default().push(json!({
                    "tool": name,
                    "args": {"entity": d.params.join(", ")},
                    "result": {"answer": d.returns.join(", ")},
                    "latency_ms": 0,
                }));
            }
        }
    }
    let calls = by_tool.values().map(Vec::len).sum();
    for (name, lines) in &by_tool {
        write_lines(&dir.join(format!("{name}.jsonl")), lines)?;
    }
    write_lines(&out.join(UNRECORDED), &[])?;
    Ok(Recorded { with_calls: by_tool.keys().map(|s| s.to_string()).collect(), tools: by_tool.len(), calls })
}

fn description(t: &ToolDoc) -> String {
    if t.description.trim().is_empty() { t.text() } else { t.description.clone() }
}

fn manifest(
    bench: CoToolsBench,
    pool: &ToolPool,
    names: &HashMap<String, String>,
    recorded: Option<&Recorded>,
) -> Result<String, ImportError> {
    let mut tools = Vec::with_capacity(pool.tools.len());
    for t in &pool.tools {
        let name = &names[&t.id];
        let tool = match recorded {
            None => {
                let (function, parameters) = math_tool(&t.id).ok_or_else(|| {
                    invalid!("{}: tool '{}' is not one of the arithmetic builtins", bench.name(), t.id)
                })?;
                json!({
                    "name": name,
                    "description": description(t),
                    "parameters": parameters,
                    "response": {"type": "object", "properties": {"result": {"type": "number"}}},
                    "executor": {"kind": "builtin", "function": function},
                })
            }
            Some(r) => {
                let cassette = if r.with_calls.contains(name) {
                    format!("cassettes/{name}.jsonl")
                } else {
                    UNRECORDED.to_string()
                };
                json!({
                    "name": name,
                    "description": description(t),
                    "parameters": {
                        "type": "object",
                        "required": ["entity"],
                        "properties": {"entity": {
                            "type": "string",
                            "description": "The entity asked about, by name (a person, place, work, organisation…).",
                        }},
                    },
                    "response": {"type": "object", "properties": {"answer": {"type": "string"}}},
                    "executor": {"kind": "recorded", "cassette": cassette},
                })
            }
        };
        tools.push(tool);
    }
    let doc = toml::Value::try_from(json!({"tool": tools})).step(|| "the manifest as TOML".to_string())?;
    let head = match recorded {
        None => {
            format!("# {}'s tools (from its tool.json), run by Switchyard's arithmetic builtins.\n\n", bench.name())
        }
        Some(_) => format!(
            "# {}'s relations (from its tool.json). No knowledge base is reachable here: each\n\
             # answers from a cassette of the dev split's recorded calls, and any other call\n\
             # fails as not recorded.\n\n",
            bench.name()
        ),
    };
    Ok(head + toml::to_string(&doc).step(|| "the manifest as TOML".to_string())?.as_str())
}

fn config_text(bench: CoToolsBench, dir: &Path, main: &str, tools: usize) -> String {
    let name = bench.name();
    let (what, top_k) = if bench.is_math() {
        (
            "# The tools are real: Switchyard's arithmetic builtins (math_add, …), as the\n\
             # papers' own functions compute. Answers are judged as the papers judge them\n\
             # (`match = \"round2\"` in the task files: the answer's last number and the gold\n\
             # rounded to two decimals).\n\
             # Trajectories: the annotated tool calls of the dev/train texts.\n"
                .to_string(),
            tools,
        )
    } else {
        (
            "# NOT REAL: the tools are knowledge-base relations and no KB is reachable here.\n\
             # Each answers only the calls recorded in the dev split (a cassette); a test\n\
             # question's call is not recorded and fails. Answers cannot be right without a\n\
             # KB (bar the rare test call that repeats a dev call), so success stays near 0:\n\
             # tool selection (Path%, Prec% against the gold tool in `tools`) is the measure.\n\
             # Trajectories: the dev split's (question, tool) pairs.\n"
                .to_string(),
            KB_TOP_K.min(tools),
        )
    };
    let offered = if top_k >= tools {
        "# Every tool is offered at once.".to_string()
    } else {
        format!("# Retrieval picks {top_k} of the {tools} tools for each task.")
    };
    format!(
        "# Written by `switchyard bench import {name}` from {}.\n\
         {what}\
         library = [\"tools.toml\"]\n\
         data_dir = \"data\"\n\
         tasks = \"tasks/{main}.jsonl\"\n\
         trajectories = \"trajectories.jsonl\"\n\
         strategy = \"react\"\n\n\
         [params]\n\
         {offered}\n\
         top_k = {top_k}\n",
        dir.display()
    )
}

fn write_lines(path: &Path, lines: &[Value]) -> Result<(), ImportError> {
    let file = std::fs::File::create(path).step(|| format!("cannot write {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for l in lines {
        writeln!(w, "{l}").step(|| format!("cannot write {}", path.display()))?;
    }
    w.flush().step(|| format!("cannot write {}", path.display()))
}
