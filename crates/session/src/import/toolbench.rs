//! `bench import toolbench DIR OUT`: ToolBench's default evalset (ToolEval's
//! six groups, 600 queries) with each query's functions as its candidates,
//! and gpt-3.5-turbo's CoT call sequences as trajectories (not as gold).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::error::{ImportError, Step, invalid};
use super::summary::{Summary, say};
use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::dataset::toolbench::{self, EVALSET_DIR, EXAMPLE_DIR, EXAMPLE_FILES, EvalQuery, FINISH, GROUPS};
use crate::session;
use crate::task::load_tasks;

use super::files::{toml_string, write_file};

const FUNCTIONS: &str = "tools/toolbench.functions.json";
const EXAMPLE_FUNCTIONS: &str = "tools/toolbench-examples.functions.json";
/// The BTP paper's setting on ToolBench.
const BUDGET: f64 = 20.0;
const TOOL_COSTS: &str = "random:1-10";
/// Types a parameter may have in the library (as the manifest checks them).
const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

pub(super) fn import(dir: &Path, out: &Path) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let evalset = dir.join(EVALSET_DIR);
    if !evalset.is_dir() {
        return Err(invalid!(
            "{}: no such folder (ToolBench's default evalset with gpt-3.5-turbo's CoT answers)",
            evalset.display()
        ));
    }
    let mut groups: Vec<(&str, Vec<EvalQuery>)> = Vec::new();
    let mut missing = Vec::new();
    for g in GROUPS {
        let path = evalset.join(format!("{g}.json"));
        if path.exists() {
            groups.push((g, toolbench::load_group(&path)?));
        } else {
            missing.push(format!("{g}.json"));
        }
    }
    if groups.is_empty() {
        return Err(invalid!(
            "{}: none of the evalset's group files ({}.json)",
            evalset.display(),
            GROUPS.join(".json, ")
        ));
    }

    // One library over all groups: a function several queries offer is one tool.
    let mut functions: Vec<Value> = Vec::new();
    let mut first: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let (mut differing, mut fixes) = (0, 0);
    for (g, queries) in &groups {
        for q in queries {
            for t in q.tools.iter().filter(|t| t.get("name").and_then(Value::as_str) != Some(FINISH)) {
                let name = t.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                match first.get(&name) {
                    Some(f) if f != t => differing += 1,
                    Some(_) => {}
                    None => {
                        let (f, fixed) = function(&name, t).map_err(|e| {
                            invalid!(
                                "{}: query {}: function {name}: {e}",
                                evalset.join(format!("{g}.json")).display(),
                                q.id
                            )
                        })?;
                        fixes += fixed;
                        functions.push(f);
                        first.insert(name, t.clone());
                    }
                }
            }
        }
    }
    std::fs::create_dir_all(out.join("tasks")).step(|| format!("cannot create {}", out.display()))?;
    std::fs::create_dir_all(out.join("tools")).step(|| format!("cannot create {}", out.display()))?;
    write_file(&out.join(FUNCTIONS), &serde_json::to_string(&functions).step(|| "the functions as JSON".to_string())?)?;

    let mut all = String::new();
    let mut top_k = 1;
    let mut written = Vec::new();
    let mut trajectories = String::new();
    let (mut traj_lines, mut gave, mut made_up, mut empty) = (0, 0, 0, 0);
    for (g, queries) in &groups {
        let mut text = String::new();
        for q in queries {
            let id = format!("{g}/{}", q.id);
            let mut seen = HashSet::new();
            let candidates: Vec<&str> = q
                .tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .filter(|n| *n != FINISH && seen.insert(*n))
                .collect();
            top_k = top_k.max(candidates.len());
            let line = json!({ "id": id, "query": q.query, "candidates": candidates });
            text.push_str(&format!("{line}\n"));
            // gpt-3.5's calls, as a reference path: names it made up are not tools.
            let called: Vec<&str> = q.called.iter().map(String::as_str).filter(|n| *n != FINISH).collect();
            let known: Vec<&str> = called.iter().copied().filter(|n| first.contains_key(*n)).collect();
            made_up += called.len() - known.len();
            if known.is_empty() {
                empty += 1;
                continue;
            }
            traj_lines += 1;
            gave += usize::from(q.gave_answer);
            let t =
                json!({ "query": q.query, "tools": known, "helpful": vec![q.gave_answer; known.len()], "task": id });
            trajectories.push_str(&format!("{t}\n"));
        }
        let path = out.join(format!("tasks/{g}.jsonl"));
        write_file(&path, &text)?;
        all.push_str(&text);
        written.push((g, queries.len(), path));
    }
    let all_path = out.join("tasks/all.jsonl");
    write_file(&all_path, &all)?;
    write_file(&out.join("trajectories.jsonl"), &trajectories)?;

    // The instruction samples: few, but with gold tools (their `relevant APIs`).
    let mut examples = Vec::new();
    for (file, group) in EXAMPLE_FILES.iter().zip(["G1", "G2", "G3"]) {
        let path = dir.join(EXAMPLE_DIR).join(file);
        if path.exists() {
            examples.extend(toolbench::load_examples(&path, group)?);
        }
    }
    let example_path = out.join("tasks/data_example.jsonl");
    let mut example_functions: Vec<Value> = Vec::new();
    let mut shared_with_evalset = 0;
    if !examples.is_empty() {
        let mut text = String::new();
        let mut named = HashSet::new();
        for q in &examples {
            let mut candidates = Vec::new();
            for f in &q.functions {
                let name = f["name"].as_str().unwrap_or_default().to_string();
                if named.insert(name.clone()) {
                    // A function the evalset offers too is its function: one tool.
                    if first.contains_key(&name) {
                        shared_with_evalset += 1;
                    } else {
                        let mut f = f.clone();
                        f["x-switchyard"] = json!({ "response": response() });
                        example_functions.push(f);
                    }
                }
                if !candidates.contains(&name) {
                    candidates.push(name);
                }
            }
            top_k = top_k.max(candidates.len());
            let line = json!({ "id": q.id, "query": q.query, "tools": q.relevant, "candidates": candidates });
            text.push_str(&format!("{line}\n"));
        }
        write_file(
            &out.join(EXAMPLE_FUNCTIONS),
            &serde_json::to_string_pretty(&example_functions).step(|| "the functions as JSON".to_string())?,
        )?;
        write_file(&example_path, &text)?;
    }
    let libraries: Vec<&str> = if examples.is_empty() { vec![FUNCTIONS] } else { vec![FUNCTIONS, EXAMPLE_FUNCTIONS] };

    let config_path = out.join("switchyard.toml");
    let lib = libraries.iter().map(|l| toml_string(l)).collect::<Vec<_>>().join(", ");
    let options: String = libraries
        .iter()
        .map(|l| format!("\n[[library_options]]\npath = {}\nexecutor = {{ kind = \"synthesized\" }}\n", toml_string(l)))
        .collect();
    let config_text = format!(
        "# Written by `switchyard bench import toolbench` from {}.\n\
         # ToolBench's default evalset (ToolEval), one task file per group and tasks/all.jsonl; each\n\
         # task is offered its query's `available_tools`. ToolBench's `Finish` is left out: the engine\n\
         # ends a run with its own answer, and a Finish tool would be a second way to answer, at a cost.\n\
         # No gold answers here (ToolEval judges with an LLM): success is n/a, and the summary shows\n\
         # tool-path figures only (answered rate, calls, cost).\n\
         # The RapidAPI tools cannot be reached here: each answers with a synthesized\n\
         # {{\"error\": \"\", \"response\": ...}} (executor `synthesized`), the same for the same seed and call.\n\
         # trajectories.jsonl: gpt-3.5-turbo's CoT call sequences (model outputs, not gold) for ToolNet's\n\
         # static graph and BTP's experience; `helpful` is whether that run gave an answer.\n\
         # tasks/data_example.jsonl (when the samples hold them): ToolBench's instruction samples,\n\
         # whose `relevant APIs` are gold tools (`tools`), so Path% and Prec% apply to them.\n\
         library = [{lib}]\n\
         data_dir = \"data\"\n\
         tasks = \"tasks/all.jsonl\"\n\
         trajectories = \"trajectories.jsonl\"\n\
         strategy = \"toolnet\"\n\n\
         [params]\n\
         # The BTP paper's budget per task; --set budget=none runs without one.\n\
         budget = {BUDGET:.1}\n\
         # Every available tool of a task is offered, as ToolBench offers them.\n\
         top_k = {top_k}\n\n\
         [btp]\n\
         # The BTP paper's tool costs: whole numbers drawn from 1-10 with the seed.\n\
         tool_costs = \"{TOOL_COSTS}\"\n\
         {options}",
        dir.display()
    );
    write_file(&config_path, &config_text)?;

    // Read back as a session would, so what was written is known to load.
    let config = Config::load(&config_path)?;
    let library = session::load_library(&config)?;
    let tasks = load_tasks(&all_path)?;
    if let Some((t, n)) =
        tasks.iter().find_map(|t| t.candidates.iter().find(|n| library.get(n).is_none()).map(|n| (t, n)))
    {
        return Err(invalid!("{}: task {} offers '{n}', which the written library lacks", all_path.display(), t.id));
    }

    if !examples.is_empty() {
        for t in load_tasks(&example_path)? {
            if let Some(n) = t.tools.iter().find(|n| !t.candidates.contains(n)) {
                return Err(invalid!(
                    "{}: task {}: the relevant API {n} is not among its api_list",
                    example_path.display(),
                    t.id
                ));
            }
        }
    }
    say!(summary, "ToolBench default evalset ({}) → {}", evalset.display(), out.display());
    say!(
        summary,
        "tools: {} distinct functions of the evalset (without {FINISH}) → {}",
        functions.len(),
        out.join(FUNCTIONS).display()
    );
    if differing > 0 {
        say!(summary, "  {differing} offers of a function differ from its first schema: the first was kept");
    }
    if fixes > 0 {
        say!(
            summary,
            "  {fixes} parameter schemas fixed (an unknown type read as string, an undeclared required dropped)"
        );
    }
    say!(
        summary,
        "  each answers with a synthesized {{\"error\": \"\", \"response\": ...}}: ToolBench's APIs cannot be reached here"
    );
    for (g, n, path) in &written {
        say!(summary, "{g}: {n} tasks → {}", path.display());
    }
    say!(summary, "all: {} tasks → {}", tasks.len(), all_path.display());
    if !missing.is_empty() {
        say!(summary, "missing (not imported): {}", missing.join(", "));
    }
    say!(
        summary,
        "trajectories: {traj_lines} of gpt-3.5-turbo's CoT call sequences ({gave} ended with give_answer: helpful) \
         → {}",
        out.join("trajectories.jsonl").display()
    );
    say!(
        summary,
        "  {empty} runs called no known function; {made_up} calls of functions not offered anywhere were left out"
    );
    if !examples.is_empty() {
        say!(
            summary,
            "data_example: {} instruction samples with gold tools (their relevant APIs) → {}",
            examples.len(),
            example_path.display()
        );
        say!(
            summary,
            "  {} more functions → {} ({shared_with_evalset} the evalset offers too)",
            example_functions.len(),
            out.join(EXAMPLE_FUNCTIONS).display()
        );
    }
    say!(summary, "no gold answers: the summary shows answered rate, calls, cost and paths (success n/a)");
    say!(
        summary,
        "BTP's setting in the config: tool costs {TOOL_COSTS}, budget {BUDGET} ([params] budget, [btp] tool_costs)"
    );
    say!(summary, "config → {}", config_path.display());
    say!(
        summary,
        "run: switchyard --config {} eval --strategy react,toolnet --tasks {}",
        config_path.display(),
        all_path.display()
    );
    say!(summary, "     (add --btp off to compare without BTP's plan; --set budget=none for no budget)");
    Ok(summary)
}

/// A ToolBench function as a library function: its parameter schema made
/// one the library accepts (the count of fixes second), and a generic
/// response for the synthesized executor, shaped like ToolBench's server's.
fn function(name: &str, t: &Map<String, Value>) -> Result<(Value, usize), String> {
    let description = t.get("description").and_then(Value::as_str).map(str::trim).filter(|d| !d.is_empty());
    let mut fixes = 0;
    let mut params = match t.get("parameters") {
        Some(Value::Object(p)) => p.clone(),
        None => Map::new(),
        Some(other) => return Err(format!("'parameters' is not an object but {other}")),
    };
    params.insert("type".into(), json!("object"));
    let props = match params.remove("properties") {
        Some(Value::Object(p)) => p,
        None => Map::new(),
        Some(other) => return Err(format!("'parameters.properties' is not an object but {other}")),
    };
    let mut fixed_props = Map::new();
    for (p, schema) in props {
        let mut schema = match schema {
            Value::Object(s) => s,
            _ => {
                fixes += 1;
                Map::new()
            }
        };
        let ok = match schema.get("type") {
            Some(Value::String(ty)) => TYPES.contains(&ty.as_str()),
            None => schema.get("enum").and_then(Value::as_array).is_some_and(|e| !e.is_empty()),
            Some(_) => false,
        };
        if !ok {
            fixes += 1;
            let ty = schema.get("type").and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
            let ty = match ty.as_str() {
                "int" => "integer",
                "float" | "double" => "number",
                "bool" => "boolean",
                "list" => "array",
                "dict" => "object",
                t if TYPES.contains(&t) => TYPES.iter().find(|x| **x == t).copied().unwrap_or("string"),
                _ => "string",
            };
            schema.insert("type".into(), json!(ty));
        }
        fixed_props.insert(p, Value::Object(schema));
    }
    if let Some(Value::Array(req)) = params.get("required") {
        let kept: Vec<Value> =
            req.iter().filter(|r| r.as_str().is_some_and(|r| fixed_props.contains_key(r))).cloned().collect();
        fixes += req.len() - kept.len();
        params.insert("required".into(), Value::Array(kept));
    } else if params.contains_key("required") {
        fixes += 1;
        params.remove("required");
    }
    params.insert("properties".into(), Value::Object(fixed_props));
    let f = json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description.unwrap_or(name),
            "parameters": params,
            "x-switchyard": { "response": response() },
        }
    });
    Ok((f, fixes))
}

/// What every tool answers with: ToolBench's server wraps each RapidAPI
/// answer as `{"error": "", "response": "..."}`, and the responses are not
/// documented, so the text is synthesized.
fn response() -> Value {
    json!({
        "type": "object",
        "properties": { "error": { "const": "" }, "response": { "type": "string" } },
    })
}
