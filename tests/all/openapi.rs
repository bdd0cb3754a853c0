//! OpenAPI 3 documents and OpenAI function files as library sources.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard::tool::exec::Executor;
use switchyard::tool::manifest::ManifestError;
use switchyard::tool::sources::{load_json, load_library};
use switchyard::tool::{ExecutorSpec, FileOptions, HeaderValue, ToolLibrary, ToolSpec};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn restbench(file: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/restbench/specs").join(file);
    if path.is_file() {
        Some(path)
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path
}

fn no_options() -> FileOptions {
    FileOptions::default()
}

/// Every path slot of every tool is a declared, required parameter.
fn check_slots(tools: &[ToolSpec]) {
    for t in tools {
        let ExecutorSpec::Http { url, .. } = &t.executor else { panic!("{} is not http", t.name) };
        let required: Vec<&str> =
            t.parameters["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        for slot in url.split('{').skip(1).map(|s| s.split('}').next().unwrap()) {
            assert!(t.parameters["properties"].get(slot).is_some(), "{}: {slot} undeclared", t.name);
            assert!(required.contains(&slot), "{}: {slot} not required", t.name);
        }
    }
}

fn load_spec(path: &Path, expected: usize) -> ToolLibrary {
    let started = Instant::now();
    let lib = load_library(&[path.to_path_buf()], &[]).unwrap();
    println!("{}: {} operations loaded in {:?}", path.display(), lib.len(), started.elapsed());
    assert_eq!(lib.len(), expected);
    let tools: Vec<ToolSpec> = lib.tools().iter().map(|t| (**t).clone()).collect();
    check_slots(&tools);
    lib
}

#[test]
fn tmdb_operations_become_tools() {
    let Some(path) = restbench("tmdb_oas.json") else { return };
    let lib = load_spec(&path, 54);
    let t = lib.get("GET_person-person_id").expect("operationIds are kept");
    let ExecutorSpec::Http { method, url, .. } = &t.executor else { panic!() };
    assert_eq!((method.as_str(), url.as_str()), ("GET", "https://api.themoviedb.org/3/person/{person_id}"));
    assert_eq!(t.parameters["required"], json!(["person_id"]));
    assert!(!t.description.is_empty());
}

#[test]
fn spotify_operations_become_tools() {
    let Some(path) = restbench("spotify_oas.json") else { return };
    let lib = load_spec(&path, 40);
    let t = lib.get("get-an-album").unwrap();
    let ExecutorSpec::Http { method, url, .. } = &t.executor else { panic!() };
    assert_eq!((method.as_str(), url.as_str()), ("GET", "https://api.spotify.com/v1/albums/{id}"));
    assert!(t.parameters["properties"].get("market").is_some(), "a $ref'd query parameter: {}", t.parameters);
    let methods: Vec<String> = lib
        .tools()
        .iter()
        .map(|t| match &t.executor {
            ExecutorSpec::Http { method, .. } => method.clone(),
            _ => unreachable!(),
        })
        .collect();
    // A POST whose parameters are all in the query still sends them there.
    let queue = lib.get("add-to-queue").unwrap();
    assert!(matches!(&queue.executor, ExecutorSpec::Http { query, .. } if query == &["uri", "device_id"]));
    for m in ["GET", "POST", "PUT", "DELETE"] {
        assert!(methods.iter().any(|x| x == m), "no {m} tool");
    }
}

fn small_spec(base: &str) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": { "title": "pets", "version": "1" },
        "servers": [{ "url": base }],
        "paths": {
            "/pets/{pet_id}": {
                "parameters": [{ "$ref": "#/components/parameters/PetId" }],
                "get": {
                    "summary": "Get a pet",
                    "description": "By id.",
                    "parameters": [{ "name": "fields", "in": "query", "schema": { "type": "string" } }],
                    "responses": { "200": { "description": "ok", "content": { "application/json": {
                        "schema": { "$ref": "#/components/schemas/Pet" } } } } }
                },
                "put": {
                    "summary": "Rename a pet",
                    "parameters": [{ "name": "notify", "in": "query", "schema": { "type": "boolean" } }],
                    "requestBody": { "required": true, "content": { "application/json": {
                        "schema": { "type": "object", "required": ["name"],
                                    "properties": { "name": { "type": "string" }, "tags": { "type": "array", "items": { "type": "string" } } } } } } },
                    "responses": { "204": { "description": "done" } }
                }
            },
            "/a~b/search": {
                "post": { "operationId": "search pets", "summary": "Search",
                          "responses": { "200": { "description": "ok" } } }
            }
        },
        "components": {
            "parameters": { "PetId": { "name": "pet_id", "in": "path", "required": true, "schema": { "type": "integer" } } },
            "schemas": {
                "Pet": { "type": "object", "properties": { "name": { "type": "string" },
                         "parent": { "$ref": "#/components/schemas/Pet" } } }
            }
        }
    })
}

#[test]
fn small_spec_with_a_ref_cycle_loads() {
    let dir = TempDir::new().unwrap();
    let path = write(dir.path(), "pets.json", &small_spec("http://127.0.0.1:9/v1/"));
    let tools = load_json(&path, &no_options()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["GET_pets_pet_id", "PUT_pets_pet_id", "search_pets"]);
    let get = &tools[0];
    assert_eq!(get.description, "Get a pet\n\nBy id.");
    assert_eq!(get.parameters["properties"]["pet_id"]["type"], "integer");
    assert_eq!(get.parameters["required"], json!(["pet_id"]));
    let resp = get.response.as_ref().unwrap();
    assert_eq!(resp["properties"]["parent"]["description"], "(recursive: #/components/schemas/Pet)");
    assert_eq!(tools[1].parameters["required"], json!(["pet_id", "name"]));
    let ExecutorSpec::Http { url, .. } = &get.executor else { panic!() };
    assert_eq!(url, "http://127.0.0.1:9/v1/pets/{pet_id}");
}

#[test]
fn bad_documents_are_refused_naming_file_and_field() {
    let dir = TempDir::new().unwrap();
    let mut broken = small_spec("http://x");
    broken["paths"]["/pets/{pet_id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] =
        json!({ "$ref": "#/components/schemas/Nope" });
    let path = write(dir.path(), "broken.json", &broken);
    let err = load_json(&path, &no_options()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ManifestError::BrokenRef { .. }), "{text}");
    assert!(text.contains("broken.json"), "{text}");
    assert!(
        text.contains("#/paths/~1pets~1{pet_id}/get/responses/200/content/application~1json/schema/$ref"),
        "{text}"
    );

    let swagger = write(dir.path(), "swagger.json", &json!({ "swagger": "2.0", "paths": {} }));
    let text = load_json(&swagger, &no_options()).unwrap_err().to_string();
    assert!(text.contains("swagger.json") && text.contains("'swagger'"), "{text}");

    let old = write(dir.path(), "old.json", &json!({ "openapi": "2.5", "paths": {} }));
    let text = load_json(&old, &no_options()).unwrap_err().to_string();
    assert!(text.contains("old.json") && text.contains("'openapi'"), "{text}");

    let relative = write(dir.path(), "relative.json", &small_spec("/v1"));
    let text = load_json(&relative, &no_options()).unwrap_err().to_string();
    assert!(text.contains("servers[0].url"), "{text}");

    let garbled = dir.path().join("garbled.json");
    fs::write(&garbled, "{ \"openapi\": ").unwrap();
    let text = load_json(&garbled, &no_options()).unwrap_err().to_string();
    assert!(text.contains("garbled.json") && text.contains("line 1"), "{text}");
}

/// A loopback server answering one request with `reply`; returns its base
/// URL and the request line, headers and body it saw.
async fn serve_once(reply: Value) -> (String, tokio::task::JoinHandle<(String, String)>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let n = conn.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed early");
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let len: usize = head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.trim().parse().unwrap());
        let mut body = buf[head_end + 4..].to_vec();
        while body.len() < len {
            let n = conn.read(&mut chunk).await.unwrap();
            body.extend_from_slice(&chunk[..n]);
        }
        let text = reply.to_string();
        let out = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
        conn.write_all(out.as_bytes()).await.unwrap();
        let _ = conn.shutdown().await;
        (head, String::from_utf8_lossy(&body).to_string())
    });
    (base, handle)
}

async fn call(lib: &ToolLibrary, tool: &str, args: Value) -> Value {
    let spec = lib.get(tool).unwrap();
    tokio::time::timeout(Duration::from_secs(60), Executor::new().call(spec, &args, None, 1, Duration::from_secs(30)))
        .await
        .expect("the call hung")
        .unwrap()
}

#[tokio::test]
async fn operations_call_the_server_with_path_query_body_and_headers() {
    let dir = TempDir::new().unwrap();
    let (base, seen) = serve_once(json!({ "name": "Rex" })).await;
    let path = write(dir.path(), "pets.json", &small_spec("http://127.0.0.1:9"));
    let mut headers = toml::Table::new();
    headers.insert("X-Key".into(), toml::Value::Table(toml::toml! { env = "SWITCHYARD_TEST_PETS_KEY" prefix = "K " }));
    // SAFETY: the variable is this test's own; nothing else reads it.
    unsafe { std::env::set_var("SWITCHYARD_TEST_PETS_KEY", "s3cret") };
    let options = FileOptions {
        path: path.clone(),
        base_url: Some(format!("{base}/v1")),
        headers: Some(headers),
        ..no_options()
    };
    let lib = load_library(std::slice::from_ref(&path), &[options]).unwrap();
    let ExecutorSpec::Http { headers, .. } = &lib.get("GET_pets_pet_id").unwrap().executor else { panic!() };
    assert!(matches!(&headers["X-Key"], HeaderValue::Env { env, .. } if env == "SWITCHYARD_TEST_PETS_KEY"));

    let out = call(&lib, "GET_pets_pet_id", json!({ "pet_id": 7, "fields": "name,age" })).await;
    assert_eq!(out, json!({ "name": "Rex" }));
    let (head, body) = seen.await.unwrap();
    assert!(head.starts_with("GET /v1/pets/7?fields=name%2Cage HTTP/1.1"), "{head}");
    assert!(head.to_ascii_lowercase().contains("x-key: k s3cret"), "{head}");
    assert!(body.is_empty());

    let (base, seen) = serve_once(json!({ "ok": true })).await;
    let options = FileOptions { path: path.clone(), base_url: Some(base), ..no_options() };
    let lib = load_library(std::slice::from_ref(&path), &[options]).unwrap();
    call(&lib, "PUT_pets_pet_id", json!({ "pet_id": 7, "name": "Max", "tags": ["dog"], "notify": true })).await;
    let (head, body) = seen.await.unwrap();
    assert!(head.starts_with("PUT /pets/7?notify=true HTTP/1.1"), "{head}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), json!({ "name": "Max", "tags": ["dog"] }));
}

fn function(name: &str) -> Value {
    json!({ "name": name, "description": format!("{name} things"),
            "parameters": { "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] } })
}

#[test]
fn function_files_in_both_shapes() {
    let dir = TempDir::new().unwrap();
    let mut wrapped = json!({ "type": "function", "function": function("lookup") });
    wrapped["x-switchyard"] =
        json!({ "executor": { "kind": "builtin", "function": "web_search" }, "cost": 2.5, "category": "search" });
    let bare = function("shout");
    let a = write(dir.path(), "a.json", &json!([wrapped]));
    let b = write(dir.path(), "b.json", &json!({ "functions": [bare] }));
    let exec = toml::toml! { kind = "command" argv = ["python3", "-c", "print(1)"] };
    let options = FileOptions { path: b.clone(), executor: Some(exec), cost: Some(0.5), ..no_options() };
    let lib = load_library(&[a.clone(), b.clone()], &[options]).unwrap();
    let lookup = lib.get("lookup").unwrap();
    assert_eq!((lookup.cost, lookup.category.as_deref()), (2.5, Some("search")));
    assert_eq!(lookup.executor, ExecutorSpec::Builtin { function: "web_search".into() });
    assert_eq!(lookup.parameters["required"], json!(["q"]));
    let shout = lib.get("shout").unwrap();
    assert_eq!(shout.cost, 0.5);
    assert!(matches!(&shout.executor, ExecutorSpec::Command { argv, .. } if argv[0] == "python3"));

    // Without the file's executor, the bare function has none.
    let text = load_library(std::slice::from_ref(&b), &[]).unwrap_err().to_string();
    assert!(
        text.contains("b.json") && text.contains("tool 'shout'") && text.contains("x-switchyard.executor"),
        "{text}"
    );
}

#[test]
fn function_file_errors_name_file_and_tool() {
    let dir = TempDir::new().unwrap();
    let exec = json!({ "executor": { "kind": "builtin", "function": "web_search" } });
    let mut nameless = function("x");
    nameless.as_object_mut().unwrap().remove("name");
    nameless["x-switchyard"] = exec.clone();
    let mut ok = function("first");
    ok["x-switchyard"] = exec.clone();
    let path = write(dir.path(), "nameless.json", &json!({ "tools": [ok, nameless] }));
    let text = load_library(&[path], &[]).unwrap_err().to_string();
    assert!(text.contains("nameless.json") && text.contains("tool[1]") && text.contains("'name'"), "{text}");

    let mut typo = function("typo");
    typo["x-switchyard"] = json!({ "executor": { "kind": "builtin", "function": "web_search" }, "costs": 1 });
    let path = write(dir.path(), "typo.json", &json!([typo]));
    let text = load_library(&[path], &[]).unwrap_err().to_string();
    assert!(text.contains("x-switchyard.costs") && text.contains("unknown field"), "{text}");

    // The same name from a function file and an OpenAPI document.
    let mut clash = function("search_pets");
    clash["x-switchyard"] = exec;
    let f = write(dir.path(), "clash.json", &json!([clash]));
    let o = write(dir.path(), "pets.json", &small_spec("http://127.0.0.1:9"));
    let err = load_library(&[f, o], &[]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ManifestError::Duplicate { .. }), "{text}");
    assert!(text.contains("clash.json") && text.contains("pets.json") && text.contains("search_pets"), "{text}");

    // Options for a file the library does not list, or of the wrong kind.
    let pets = dir.path().join("pets.json");
    let stray = FileOptions { path: dir.path().join("other.json"), ..no_options() };
    let text = load_library(std::slice::from_ref(&pets), &[stray]).unwrap_err().to_string();
    assert!(text.contains("library_options[0].path"), "{text}");
    let wrong = FileOptions { path: pets.clone(), executor: Some(toml::Table::new()), ..no_options() };
    let text = load_library(std::slice::from_ref(&pets), &[wrong]).unwrap_err().to_string();
    assert!(text.contains("pets.json") && text.contains("library_options.executor"), "{text}");
}

#[test]
fn a_manifest_http_executor_may_send_arguments_in_the_query() {
    let dir = TempDir::new().unwrap();
    let manifest = |query: &str| {
        format!(
            "[[tool]]\nname = \"post\"\ndescription = \"d\"\n[tool.parameters]\ntype = \"object\"\n\
             [tool.parameters.properties.q]\ntype = \"string\"\n[tool.executor]\nkind = \"http\"\n\
             method = \"POST\"\nurl = \"http://127.0.0.1:9/x\"\nquery = [\"{query}\"]\n"
        )
    };
    let good = dir.path().join("good.toml");
    fs::write(&good, manifest("q")).unwrap();
    let tools = switchyard::tool::manifest::load_file(&good).unwrap();
    assert!(matches!(&tools[0].executor, ExecutorSpec::Http { query, .. } if query == &["q".to_string()]));
    let bad = dir.path().join("bad.toml");
    fs::write(&bad, manifest("nope")).unwrap();
    let text = switchyard::tool::manifest::load_file(&bad).unwrap_err().to_string();
    assert!(text.contains("executor.query") && text.contains("'nope'"), "{text}");
}

/// A library is read fast, and again precisely when anything is wrong: the
/// errors still name the key, in manifests and function files alike.
#[test]
fn errors_name_the_key_in_every_source() {
    let dir = TempDir::new().unwrap();
    let good = write(dir.path(), "good.json", &json!([function("fine")]));
    let exec = toml::toml! { kind = "builtin" function = "web_search" };
    let options = FileOptions { path: good.clone(), executor: Some(exec), ..no_options() };
    let mut bad_fn = function("late");
    bad_fn["x-switchyard"] =
        json!({ "executor": { "kind": "http", "method": "GET", "url": "https://x.test/", "timeout_ms": "soon" } });
    let bad_json = write(dir.path(), "late.json", &json!([bad_fn]));
    let toml = dir.path().join("late.toml");
    fs::write(
        &toml,
        "[[tool]]\nname = \"slow\"\ndescription = \"d\"\n[tool.executor]\nkind = \"http\"\nmethod = \"GET\"\nurl = \"https://x.test/\"\ntimeout_ms = \"soon\"\n",
    )
    .unwrap();
    for (path, field) in [(&bad_json, "x-switchyard.executor.timeout_ms"), (&toml, "executor.timeout_ms")] {
        let paths = [good.clone(), path.clone()];
        let text = load_library(&paths, std::slice::from_ref(&options)).unwrap_err().to_string();
        assert!(text.contains(field) && text.contains("expected a whole number"), "{text}");
    }
    // The first failing source in the list is the one reported, whichever
    // file is read first.
    let text = load_library(&[good, bad_json, toml], &[options]).unwrap_err().to_string();
    assert!(text.contains("late.json"), "{text}");
}
