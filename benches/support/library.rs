//! A generated mixed library for the scale benches: with the 17 sample
//! tools, `total` tools in all; the generated ones a third as TOML manifests
//! (several files, builtin and http executors), a third as an OpenAI
//! function file (its executor from `[[library_options]]`) and a third as
//! an OpenAPI 3 document (one path and operation per tool). The config
//! keeps the embedded defaults otherwise (the simulated models, the sample
//! tasks and trajectories), so ToolNet's graph has the sample edges and
//! every generated tool gets only its self and end edges.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// The sample library's tools, part of every generated library.
pub const SAMPLE_TOOLS: usize = 17;
/// How many TOML manifest files the TOML third is split into.
const TOML_FILES: usize = 8;

const VERBS: [&str; 12] =
    ["fetch", "list", "create", "update", "archive", "search", "export", "sync", "audit", "rank", "merge", "tag"];
const NOUNS: [&str; 16] = [
    "invoice",
    "ticket",
    "shipment",
    "ledger",
    "playlist",
    "warehouse",
    "badge",
    "contract",
    "sensor",
    "coupon",
    "recipe",
    "vehicle",
    "policy",
    "campaign",
    "webhook",
    "parcel",
];
const DOMAINS: [&str; 8] = ["retail", "logistics", "billing", "fleet", "marketing", "support", "payroll", "facilities"];
const PARAMS: [&str; 8] = ["id", "owner", "status", "region", "limit", "since", "label", "page"];

/// What one generated tool looks like, whichever file it ends up in.
struct Gen {
    name: String,
    description: String,
    /// (name, JSON type, description)
    params: Vec<(&'static str, &'static str, String)>,
}

fn gen_tool(i: usize, rng: &mut ChaCha8Rng) -> Gen {
    let verb = VERBS[rng.random_range(0..VERBS.len())];
    let noun = NOUNS[rng.random_range(0..NOUNS.len())];
    let other = NOUNS[rng.random_range(0..NOUNS.len())];
    let domain = DOMAINS[rng.random_range(0..DOMAINS.len())];
    let n = rng.random_range(1..=3);
    let mut params = Vec::with_capacity(n);
    // `id` first, so the http tools' URL slot always names a declared parameter.
    params.push(("id", "string", format!("The {noun}'s identifier in the {domain} system.")));
    for p in PARAMS[1..].iter().skip(rng.random_range(0..4)).take(n - 1) {
        let ty = if matches!(*p, "limit" | "page") { "integer" } else { "string" };
        params.push((*p, ty, format!("Only {noun}s with this {p}.")));
    }
    Gen {
        name: format!("{verb}_{noun}_{i:05}"),
        description: format!(
            "{} {noun} records of the {domain} service; returns each {noun} with its {other} references, status and timestamps.",
            capitalise(verb)
        ),
        params,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

fn schema(g: &Gen) -> Value {
    let props: serde_json::Map<String, Value> =
        g.params.iter().map(|(p, ty, d)| (p.to_string(), json!({ "type": ty, "description": d }))).collect();
    json!({ "type": "object", "required": ["id"], "properties": props })
}

fn toml_tool(out: &mut String, g: &Gen, i: usize) {
    let _ = writeln!(out, "[[tool]]\nname = {:?}\ndescription = {:?}\ncost = 1", g.name, g.description);
    let _ = writeln!(out, "[tool.parameters]\ntype = \"object\"\nrequired = [\"id\"]");
    for (p, ty, d) in &g.params {
        let _ = writeln!(out, "[tool.parameters.properties.{p}]\ntype = {ty:?}\ndescription = {d:?}");
    }
    if i % 2 == 0 {
        let _ = writeln!(out, "[tool.executor]\nkind = \"builtin\"\nfunction = \"web_search\"\n");
    } else {
        let _ = writeln!(
            out,
            "[tool.executor]\nkind = \"http\"\nmethod = \"GET\"\nurl = \"http://127.0.0.1:9/{}/{{id}}\"\ntimeout_ms = 200\n",
            g.name
        );
    }
}

/// Writes the library and a config for it into `dir`; returns the config's path.
pub fn write(dir: &Path, total: usize) -> PathBuf {
    let generated = total - SAMPLE_TOOLS;
    let third = generated / 3;
    let mut rng = ChaCha8Rng::seed_from_u64(total as u64);
    let tools: Vec<Gen> = (0..generated).map(|i| gen_tool(i, &mut rng)).collect();
    let (toml_part, rest) = tools.split_at(generated - 2 * third);
    let (fn_part, api_part) = rest.split_at(third);

    let manifests = dir.join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let per_file = toml_part.len().div_ceil(TOML_FILES);
    for (f, chunk) in toml_part.chunks(per_file).enumerate() {
        let mut text = String::new();
        for (j, g) in chunk.iter().enumerate() {
            toml_tool(&mut text, g, f * per_file + j);
        }
        std::fs::write(manifests.join(format!("gen_{f:02}.toml")), text).unwrap();
    }

    let functions: Vec<Value> = fn_part
        .iter()
        .map(|g| {
            json!({ "type": "function", "function": {
                "name": g.name, "description": g.description, "parameters": schema(g)
            } })
        })
        .collect();
    std::fs::write(dir.join("functions.json"), serde_json::to_string(&functions).unwrap()).unwrap();

    let mut paths = serde_json::Map::new();
    for (i, g) in api_part.iter().enumerate() {
        let mut parameters = vec![
            json!({ "name": "id", "in": "path", "required": true, "schema": { "type": "string" }, "description": g.params[0].2 }),
        ];
        let rest = &g.params[1..];
        let op = if i % 3 == 2 {
            let props: serde_json::Map<String, Value> =
                rest.iter().map(|(p, ty, d)| (p.to_string(), json!({ "type": ty, "description": d }))).collect();
            json!({ "post": {
                "operationId": g.name, "summary": g.description, "parameters": parameters,
                "requestBody": { "content": { "application/json": { "schema": { "type": "object", "properties": props } } } },
                "responses": { "200": { "description": "ok" } }
            } })
        } else {
            parameters.extend(
                rest.iter()
                    .map(|(p, ty, d)| json!({ "name": p, "in": "query", "schema": { "type": ty }, "description": d })),
            );
            json!({ "get": {
                "operationId": g.name, "summary": g.description, "parameters": parameters,
                "responses": { "200": { "description": "ok" } }
            } })
        };
        paths.insert(format!("/{}/{{id}}", g.name), op);
    }
    let api = json!({
        "openapi": "3.0.3",
        "info": { "title": "generated", "version": "1" },
        "servers": [{ "url": "http://127.0.0.1:9/api" }],
        "paths": paths,
    });
    std::fs::write(dir.join("openapi.json"), serde_json::to_string(&api).unwrap()).unwrap();

    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools");
    let config = format!(
        "library = [{sample:?}, \"manifests\", \"functions.json\", \"openapi.json\"]\n\
         data_dir = \"data\"\n\n\
         [[library_options]]\npath = \"functions.json\"\n\
         executor = {{ kind = \"http\", method = \"POST\", url = \"http://127.0.0.1:9/fn\", timeout_ms = 200 }}\n",
        sample = sample.display().to_string()
    );
    let path = dir.join("switchyard.toml");
    std::fs::write(&path, config).unwrap();
    path
}
