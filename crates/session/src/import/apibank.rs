//! `bench import api-bank DIR OUT`: API-Bank's sample dialogues as tasks,
//! one per annotated API call, with the call's recorded answer on a tool
//! cassette so a call with the gold arguments gets the real answer.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::error::{ImportError, Step, invalid};
use super::summary::{Summary, say};
use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::dataset::apibank::{
    self, ApiCall, ApiDoc, Dialogue, LEVEL1_DIR, LEVEL2_DIR, Param, TOOL_SEARCHER, Turn, json_type, value_type,
};
use crate::session;
use crate::task::load_tasks;
use crate::tool::tape::canonical;

use super::files::{toml_string, write_file};

const FUNCTIONS: &str = "tools/api-bank.functions.json";
const CASSETTE: &str = "api-bank.cassette.jsonl";
/// What the dataset folder holds that this importer reads or knows to leave.
const KNOWN: [&str; 4] = ["README.md", "data", "init_database", "lv1-lv2-samples"];

/// Where a tool's documentation came from, for the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum DocSource {
    Catalogue,
    Signature,
    Searched,
    Calls,
    Builtin,
}

pub(super) fn import(dir: &Path, out: &Path) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let csv = dir.join("data/all_apis.csv");
    let catalogue = apibank::load_catalogue(&csv)?;
    let samples = apibank::load_samples(dir)?;
    let searched = apibank::searched_docs(samples.level2.iter().chain(&samples.level1))?;
    let all: Vec<&Dialogue> = samples.level1.iter().chain(&samples.level2).collect();

    // The argument names each API is called with, to check its documentation against.
    let mut calls: BTreeMap<&str, Vec<Map<String, Value>>> = BTreeMap::new();
    for c in all.iter().flat_map(|d| d.calls()) {
        calls.entry(c.api.as_str()).or_default().push(gold_args(c));
    }
    let mut docs: Vec<(ApiDoc, DocSource)> = Vec::new();
    for api in &catalogue.apis {
        let called = calls.get(api.name.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let found = searched.iter().find(|s| s.name == api.name);
        let source =
            if catalogue.from_signature.contains(&api.name) { DocSource::Signature } else { DocSource::Catalogue };
        docs.push(best_doc(api, source, found, called));
    }
    docs.push((apibank::tool_searcher(), DocSource::Builtin));
    // An API the dialogues call that the catalogue lacks is documented from what they show.
    for (name, called) in &calls {
        if docs.iter().all(|(d, _)| d.name != *name) {
            let found = searched.iter().find(|s| s.name == *name);
            let bare = ApiDoc { name: name.to_string(), description: String::new(), params: Vec::new() };
            docs.push(best_doc(&bare, DocSource::Calls, found, called));
        }
    }

    std::fs::create_dir_all(out.join("tasks")).step(|| format!("cannot create {}", out.display()))?;
    std::fs::create_dir_all(out.join("tools")).step(|| format!("cannot create {}", out.display()))?;
    let functions: Vec<Value> = docs.iter().map(|(d, _)| function(d)).collect();
    write_file(
        &out.join(FUNCTIONS),
        &serde_json::to_string_pretty(&functions).step(|| "the functions as JSON".to_string())?,
    )?;
    let (answers, conflicts) = cassette(&all);
    write_file(&out.join("tools").join(CASSETTE), &answers)?;

    let splits = [
        (LEVEL1_DIR, &samples.level1, "API-Bank's Call setting: the dialogue's APIs are offered with their docs"),
        (LEVEL2_DIR, &samples.level2, "Retrieve+Call: ToolSearcher, and the APIs the history found or called"),
    ];
    let mut top_k = 1;
    let mut lines = Vec::new();
    for (name, dialogues, what) in splits {
        let path = out.join(format!("tasks/{name}.jsonl"));
        let (tasks, unreachable) = tasks(dialogues, name == LEVEL2_DIR);
        top_k = top_k.max(tasks.iter().map(|t| t["candidates"].as_array().map_or(0, Vec::len)).max().unwrap_or(0));
        let text: String = tasks.iter().map(|t| format!("{t}\n")).collect();
        write_file(&path, &text)?;
        lines.push((name, dialogues, tasks.len(), unreachable, what, path));
    }
    let trajectories = out.join("trajectories.jsonl");
    write_file(&trajectories, "")?;

    let config_path = out.join("switchyard.toml");
    let split_comment: String = lines
        .iter()
        .map(|(name, d, n, _, what, _)| {
            format!("#   tasks/{name}.jsonl: {n} tasks from {} dialogues; {what}\n", d.len())
        })
        .collect();
    let config_text = format!(
        "# Written by `switchyard bench import api-bank` from {}.\n\
         # One task per annotated API call: the query is the dialogue up to that call (User and AI\n\
         # turns, earlier calls with their results); the gold is that call, its tool (`tools`) and\n\
         # its arguments (`gold_call`), judged by API-Bank's call accuracy (eval::apibank).\n\
         # The tasks have no gold answers: success is n/a, answered rate and path figures apply.\n\
         # Splits, named after API-Bank's folders:\n{split_comment}\
         # Tools answer from the dialogues' recorded results (executor `recorded`): a call with the\n\
         # gold arguments gets the recorded output, any other call a \"not recorded\" tool error.\n\
         library = [{lib}]\n\
         data_dir = \"data\"\n\
         tasks = \"tasks/{LEVEL1_DIR}.jsonl\"\n\
         # Empty: every dialogue is a task, so its call sequence would hand ToolNet the gold.\n\
         trajectories = \"trajectories.jsonl\"\n\
         strategy = \"react\"\n\n\
         [params]\n\
         # Every candidate of a task is offered, as API-Bank gives the model all of its APIs.\n\
         top_k = {top_k}\n\n\
         [[library_options]]\n\
         path = {lib}\n\
         executor = {{ kind = \"recorded\", cassette = \"{CASSETTE}\" }}\n",
        dir.display(),
        lib = toml_string(FUNCTIONS),
    );
    write_file(&config_path, &config_text)?;

    // Read back as a session would, so what was written is known to load.
    let config = Config::load(&config_path)?;
    let library = session::load_library(&config)?;
    for (_, _, _, _, _, path) in &lines {
        for t in load_tasks(path)? {
            let missing = t.tools.iter().chain(&t.candidates).find(|n| library.get(n).is_none());
            if let Some(n) = missing {
                return Err(invalid!("{}: task {} names '{n}', which the written library lacks", path.display(), t.id));
            }
        }
    }

    let count = |s: DocSource| docs.iter().filter(|(_, d)| *d == s).count();
    say!(summary, "API-Bank ({}) → {}", dir.display(), out.display());
    say!(
        summary,
        "tools: {} ({} APIs of data/all_apis.csv, and {TOOL_SEARCHER}) → {}",
        library.len(),
        catalogue.apis.len(),
        out.join(FUNCTIONS).display()
    );
    say!(
        summary,
        "  docs: {} as the catalogue gives them, {} from its signature column; where the catalogue names other \
         parameters than the recorded calls use: {} from the docs ToolSearcher returns, {} read off the calls",
        count(DocSource::Catalogue),
        count(DocSource::Signature),
        count(DocSource::Searched),
        count(DocSource::Calls),
    );
    if !catalogue.from_signature.is_empty() {
        say!(summary, "  no api_info in the catalogue: {}", catalogue.from_signature.join(", "));
    }
    let answer_lines = answers.lines().count();
    say!(summary, "cassette: {answer_lines} recorded answers → {}", out.join("tools").join(CASSETTE).display());
    if conflicts > 0 {
        say!(summary, "  {conflicts} calls were recorded with other answers to the same arguments: replayed in order");
    }
    for (name, d, n, unreachable, what, path) in &lines {
        let empty = d.iter().filter(|d| d.calls().next().is_none()).count();
        say!(summary, "{name}: {n} tasks from {} dialogues ({empty} without a call) → {}", d.len(), path.display());
        say!(summary, "  {what}");
        let mut by_level: BTreeMap<Option<u32>, (usize, usize)> = BTreeMap::new();
        for dl in d.iter() {
            let e = by_level.entry(dl.name_level()).or_default();
            e.0 += 1;
            e.1 += dl.calls().count();
        }
        let levels: Vec<String> = by_level
            .iter()
            .map(|(l, (nd, nc))| {
                format!("files named level-{}: {nd} dialogues, {nc} tasks", l.map_or("?".into(), |l| l.to_string()))
            })
            .collect();
        say!(summary, "  {}", levels.join("; "));
        if *unreachable > 0 {
            say!(
                summary,
                "  {unreachable} tasks call an API their history neither found nor called (as annotated): \
                 it is not among their candidates"
            );
        }
    }
    let mut ignored: Vec<String> = samples.ignored.iter().map(|p| p.display().to_string()).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if !KNOWN.contains(&name.as_str()) {
                ignored.push(format!("{} (a layout this importer does not know)", e.path().display()));
            }
        }
    }
    if !ignored.is_empty() {
        ignored.sort();
        say!(summary, "not read: {}", ignored.join(", "));
    }
    say!(summary, "config → {}", config_path.display());
    say!(
        summary,
        "no gold answers: score with API-Bank's call accuracy (the first call against the gold call), and path figures"
    );
    for (_, _, _, _, _, path) in &lines {
        say!(
            summary,
            "run: switchyard --config {} eval --strategy react,toolnet --tasks {}",
            config_path.display(),
            path.display()
        );
    }
    Ok(summary)
}

/// The gold arguments: what the API read (`result.input`), else what the
/// annotator wrote; no arguments as an empty object.
fn gold_args(c: &ApiCall) -> Map<String, Value> {
    match (&c.input, &c.param_dict) {
        (Value::Object(m), _) => m.clone(),
        (_, Value::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// The documentation a tool gets: the catalogue's when every recorded call
/// uses only parameters it names; else the docs ToolSearcher returned when
/// they do; else parameters read off the calls.
fn best_doc(
    api: &ApiDoc,
    source: DocSource,
    found: Option<&ApiDoc>,
    called: &[Map<String, Value>],
) -> (ApiDoc, DocSource) {
    let fits = |d: &ApiDoc| called.iter().all(|c| c.keys().all(|k| d.params.iter().any(|p| p.name == *k)));
    if fits(api) && source != DocSource::Calls {
        return (api.clone(), source);
    }
    if let Some(f) = found.filter(|f| fits(f)) {
        let description = if f.description.is_empty() { api.description.clone() } else { f.description.clone() };
        return (ApiDoc { description, ..f.clone() }, DocSource::Searched);
    }
    let mut params: Vec<Param> = Vec::new();
    for c in called {
        for (k, v) in c {
            if params.iter().any(|p| p.name == *k) {
                continue;
            }
            let documented =
                api.params.iter().chain(found.map(|f| f.params.as_slice()).unwrap_or(&[])).find(|p| p.name == *k);
            params.push(Param {
                name: k.clone(),
                ty: documented.map_or_else(|| py_name(value_type(v)).to_string(), |p| p.ty.clone()),
                description: documented.map(|p| p.description.clone()).unwrap_or_default(),
                required: called.iter().all(|c| c.contains_key(k)),
            });
        }
    }
    let description = [api.description.as_str(), found.map_or("", |f| f.description.as_str())]
        .into_iter()
        .find(|d| !d.is_empty())
        .map_or_else(|| format!("The {} API.", api.name), str::to_string);
    (ApiDoc { name: api.name.clone(), description, params }, DocSource::Calls)
}

/// A JSON type's Python name, so read-off parameters go through `json_type` like documented ones.
fn py_name(json: &str) -> &'static str {
    match json {
        "integer" => "int",
        "number" => "float",
        "boolean" => "bool",
        "array" => "list",
        "object" => "dict",
        _ => "str",
    }
}

/// One API as an OpenAI function.
fn function(d: &ApiDoc) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for p in &d.params {
        let ty = json_type(&p.ty);
        let mut description = p.description.clone();
        // The Python type says more than the JSON one where they differ (datetime, List[str]).
        let plain = matches!(p.ty.to_ascii_lowercase().as_str(), "str" | "int" | "float" | "bool" | "list" | "dict");
        if !plain {
            description = format!("{} ({})", description, p.ty).trim().to_string();
        }
        let mut schema = json!({ "type": ty });
        if !description.is_empty() {
            schema["description"] = json!(description);
        }
        if ty == "array" {
            let inner = p.ty.to_ascii_lowercase();
            let item = if inner.contains("str") {
                json!({"type": "string"})
            } else if inner.contains("dict") {
                json!({"type": "object"})
            } else {
                json!({})
            };
            schema["items"] = item;
        }
        props.insert(p.name.clone(), schema);
        if p.required {
            required.push(json!(p.name));
        }
    }
    json!({
        "type": "function",
        "function": {
            "name": d.name,
            "description": d.description,
            "parameters": { "type": "object", "properties": props, "required": required },
        }
    })
}

/// The cassette: each gold call's recorded answer, under the arguments the
/// API read and, where they differ, those the annotator wrote. The second
/// count is of arguments recorded with different answers.
fn cassette(dialogues: &[&Dialogue]) -> (String, usize) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut text = String::new();
    let mut conflicts = 0;
    for c in dialogues.iter().flat_map(|d| d.calls()) {
        let outcome = match &c.exception {
            Some(e) => json!({ "error": { "kind": "failed", "message": e } }),
            None => json!({ "result": c.output }),
        };
        let mut variants = vec![Value::Object(gold_args(c))];
        if c.param_dict.is_object() && canonical(&c.param_dict) != canonical(&variants[0]) {
            variants.push(c.param_dict.clone());
        }
        for args in variants {
            let key = format!("{}\n{}", c.api, canonical(&args));
            let answer = outcome.to_string();
            match seen.get(&key) {
                Some(a) if *a == answer => continue,
                Some(_) => conflicts += 1,
                None => {}
            }
            seen.insert(key, answer);
            let mut line = json!({ "tool": c.api, "args": canonical(&args), "latency_ms": 0 });
            for (k, v) in outcome.as_object().into_iter().flatten() {
                line[k] = v.clone();
            }
            text.push_str(&format!("{line}\n"));
        }
    }
    (text, conflicts)
}

/// The tasks of one folder, and how many name a gold API their candidates lack.
fn tasks(dialogues: &[Dialogue], retrieve: bool) -> (Vec<Value>, usize) {
    let mut out = Vec::new();
    let mut unreachable = 0;
    for d in dialogues {
        let apis: Vec<String> = unique(d.calls().map(|c| c.api.clone()));
        let mut n = 0;
        for (i, turn) in d.turns.iter().enumerate() {
            let Turn::Api(call) = turn else { continue };
            n += 1;
            let history = &d.turns[..i];
            let candidates = if retrieve {
                // What the model can know of at this step: the searcher, what it found, what was called.
                let mut names = vec![TOOL_SEARCHER.to_string()];
                for t in history {
                    if let Turn::Api(c) = t {
                        if c.api == TOOL_SEARCHER {
                            names.extend(apibank::found_names(&c.output));
                        }
                        names.push(c.api.clone());
                    }
                }
                unique(names.into_iter())
            } else {
                apis.clone()
            };
            if !candidates.contains(&call.api) {
                unreachable += 1;
            }
            out.push(json!({
                "id": format!("{}/{n}", d.name),
                "query": query(history),
                "tools": [call.api],
                "candidates": candidates,
                "gold_call": { "tool": call.api, "args": Value::Object(gold_args(call)) },
            }));
        }
    }
    (out, unreachable)
}

/// The names in first-seen order, each once.
fn unique(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.clone())).collect()
}

/// The dialogue's history as the task's text: API-Bank gives the model
/// the turns so far and asks for the next API request.
fn query(history: &[Turn]) -> String {
    let mut text = String::from(
        "A dialogue between a user and an AI assistant that can call APIs. Make the API call the AI should make \
         next, then answer the user.\n\n",
    );
    for t in history {
        match t {
            Turn::User(x) => text.push_str(&format!("User: {}\n", x.trim())),
            Turn::Ai(x) => text.push_str(&format!("AI: {}\n", x.trim())),
            Turn::Api(c) => {
                let answer = match &c.exception {
                    Some(e) => format!("error: {e}"),
                    None => c.output.to_string(),
                };
                text.push_str(&format!("API call: {}({}) -> {answer}\n", c.api, Value::Object(gold_args(c))));
            }
        }
    }
    text
}
