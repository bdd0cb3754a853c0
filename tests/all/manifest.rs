//! Loading and validating tool manifests.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use switchyard::tool::manifest::{self, ManifestError, ToolRef};
use switchyard::tool::{ExecutorSpec, HeaderValue};
use tempfile::TempDir;

const GOOD: &str = r#"
[[tool]]
name = "calc"
description = "Evaluate an arithmetic expression."
category = "Math"
cost = 2
[tool.parameters]
type = "object"
required = ["expression"]
[tool.parameters.properties.expression]
type = "string"
description = "e.g. 2 * (3 + 4)"
[tool.executor]
kind = "builtin"
function = "calculator"

[[tool]]
name = "wordcount"
description = "Count the words of a text."
cost = 0.5
[tool.parameters]
type = "object"
required = ["text"]
[tool.parameters.properties.text]
type = "string"
[tool.response]
type = "object"
[tool.executor]
kind = "command"
argv = ["python3", "wc.py", "--verbose"]
timeout_ms = 5000

[[tool]]
name = "weather"
description = "Current weather of a city."
[tool.parameters]
type = "object"
required = ["city"]
[tool.parameters.properties.city]
type = "string"
[tool.parameters.properties.unit]
enum = ["C", "F"]
[tool.executor]
kind = "http"
method = "get"
url = "https://api.example.com/weather/{city}"
[tool.executor.headers]
Authorization = { env = "WEATHER_KEY", prefix = "Bearer " }
Accept = "application/json"
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// One tool with the given executor and extra top-level lines.
fn tool(name: &str, extra: &str, executor: &str) -> String {
    format!(
        r#"
[[tool]]
name = "{name}"
description = "A tool."
{extra}
[tool.parameters]
type = "object"
[tool.parameters.properties.city]
type = "string"
[tool.executor]
{executor}
"#
    )
}

const CMD: &str = "kind = \"command\"\nargv = [\"python3\", \"x.py\"]";

/// The error of loading `text` as `bad.toml`, with its message.
fn load_err(text: &str) -> (ManifestError, String) {
    let dir = TempDir::new().unwrap();
    let path = write(dir.path(), "bad.toml", text);
    let err = manifest::load_file(&path).expect_err("the manifest should be refused");
    let msg = err.to_string();
    assert!(msg.contains("bad.toml"), "no file name in: {msg}");
    (err, msg)
}

fn assert_invalid(text: &str, tool: ToolRef, field: &str, words: &[&str]) {
    let (err, msg) = load_err(text);
    match &err {
        ManifestError::Invalid { tool: t, field: f, .. } => {
            assert_eq!(t, &tool, "{msg}");
            assert_eq!(f, field, "{msg}");
        }
        other => panic!("expected an Invalid error, got {other:?}"),
    }
    assert!(msg.contains(&tool.to_string()), "no tool in: {msg}");
    assert!(msg.contains(&format!("field '{field}'")), "no field in: {msg}");
    for w in words {
        assert!(msg.contains(w), "'{w}' missing from: {msg}");
    }
}

#[test]
fn builtin_registry_has_calculator() {
    // The good manifest below relies on it.
    assert!(switchyard::tool::builtin::lookup("calculator").is_some(), "builtin::lookup(\"calculator\") is None");
}

#[test]
fn good_manifest_loads_every_executor_kind() {
    let dir = TempDir::new().unwrap();
    let script = write(dir.path(), "wc.py", "print('{}')\n");
    let path = write(dir.path(), "tools.toml", GOOD);
    let tools = manifest::load_file(&path).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["calc", "wordcount", "weather"]);

    let calc = &tools[0];
    assert_eq!(calc.cost, 2.0);
    assert_eq!(calc.category.as_deref(), Some("Math"));
    assert_eq!(calc.source.as_deref(), Some(path.as_path()));
    assert_eq!(calc.parameters["required"], json!(["expression"]));
    assert_eq!(calc.parameters["properties"]["expression"]["type"], "string");
    assert_eq!(calc.executor, ExecutorSpec::Builtin { function: "calculator".into() });

    let wc = &tools[1];
    assert_eq!(wc.cost, 0.5);
    assert_eq!(wc.response, Some(json!({"type": "object"})));
    let ExecutorSpec::Command { argv, cwd, timeout_ms } = &wc.executor else { panic!("{:?}", wc.executor) };
    let script = script.canonicalize().unwrap();
    // The script beside the manifest is made absolute; the program and the
    // flag are not files there and stay as written.
    assert_eq!(argv, &["python3", script.to_str().unwrap(), "--verbose"]);
    assert_eq!(cwd.as_deref(), Some(dir.path().canonicalize().unwrap().as_path()));
    assert_eq!(*timeout_ms, 5000);

    let weather = &tools[2];
    assert_eq!(weather.cost, 1.0, "default cost");
    let ExecutorSpec::Http { method, url, headers, timeout_ms, .. } = &weather.executor else {
        panic!("{:?}", weather.executor)
    };
    assert_eq!(method, "GET");
    assert_eq!(url, "https://api.example.com/weather/{city}");
    assert_eq!(*timeout_ms, 10_000, "default timeout");
    assert_eq!(headers["Authorization"], HeaderValue::Env { env: "WEATHER_KEY".into(), prefix: "Bearer ".into() });
    assert_eq!(headers["Accept"], HeaderValue::Literal("application/json".into()));
}

#[test]
fn load_paths_reads_directories_in_order_and_files() {
    let dir = TempDir::new().unwrap();
    let lib_dir = dir.path().join("lib");
    fs::create_dir(&lib_dir).unwrap();
    write(&lib_dir, "b.toml", &tool("second", "", CMD));
    write(&lib_dir, "a.toml", &tool("first", "", CMD));
    write(&lib_dir, "notes.txt", "not a manifest");
    fs::create_dir(lib_dir.join("nested.toml")).unwrap();
    let single = write(dir.path(), "single.toml", &tool("third", "", CMD));

    let lib = manifest::load_paths(&[lib_dir, single]).unwrap();
    assert_eq!(lib.names().collect::<Vec<_>>(), ["first", "second", "third"]);
    assert!(lib.get("second").is_some());
}

#[test]
fn duplicate_tool_across_files_is_refused() {
    let dir = TempDir::new().unwrap();
    let a = write(dir.path(), "a.toml", &tool("geo", "", CMD));
    let b = write(dir.path(), "b.toml", &tool("geo", "", CMD));
    let err = manifest::load_paths(&[a, b]).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ManifestError::Duplicate { ref name, .. } if name == "geo"));
    assert!(msg.contains("'geo'") && msg.contains("a.toml") && msg.contains("b.toml"), "{msg}");
}

#[test]
fn duplicate_tool_within_a_file_is_refused() {
    let text = tool("geo", "", CMD) + tool("geo", "", CMD).as_str();
    let (err, _) = load_err(&text);
    assert!(matches!(err, ManifestError::Duplicate { .. }), "{err:?}");
}

#[test]
fn malformed_toml_names_the_line() {
    let text = "[[tool]]\nname = \"a\"\ndescription = \"b\"\ncost = = 3\n";
    let (err, msg) = load_err(text);
    match err {
        ManifestError::Syntax { line, .. } => assert_eq!(line, 4, "{msg}"),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert!(msg.contains("line 4"), "{msg}");
}

#[test]
fn unknown_executor_lists_the_known_kinds() {
    let text = tool("calc", "", "kind = \"shell\"");
    assert_invalid(
        &text,
        ToolRef::Named("calc".into()),
        "executor.kind",
        &["unknown executor 'shell'", "builtin", "command", "http"],
    );
}

#[test]
fn unknown_builtin_function_is_named() {
    let text = tool("calc", "", "kind = \"builtin\"\nfunction = \"no_such_fn\"");
    assert_invalid(&text, ToolRef::Named("calc".into()), "executor.function", &["no_such_fn"]);
}

#[test]
fn undeclared_url_placeholder_is_refused() {
    let exec = "kind = \"http\"\nmethod = \"GET\"\nurl = \"https://x.test/{city}/{country}\"";
    assert_invalid(&tool("geo", "", exec), ToolRef::Named("geo".into()), "executor.url", &["{country}"]);
}

#[test]
fn reserved_names_are_refused() {
    for name in ["start", "end", "finish"] {
        assert_invalid(&tool(name, "", CMD), ToolRef::Named(name.into()), "name", &["reserved"]);
    }
    assert_invalid(&tool("9lives", "", CMD), ToolRef::Named("9lives".into()), "name", &["not a valid tool name"]);
}

#[test]
fn unknown_fields_are_refused_at_every_level() {
    assert_invalid(&tool("geo", "colour = \"red\"", CMD), ToolRef::Named("geo".into()), "colour", &["unknown field"]);
    assert_invalid(
        &tool("geo", "", &format!("{CMD}\nshell = true")),
        ToolRef::Named("geo".into()),
        "executor.shell",
        &["unknown field"],
    );
    let (err, msg) = load_err("[[tools]]\nname = \"x\"\n");
    assert!(matches!(err, ManifestError::File { ref field, .. } if field == "tools"), "{msg}");
}

#[test]
fn a_tool_without_a_name_is_named_by_index() {
    let text = tool("ok", "", CMD) + "\n[[tool]]\ndescription = \"nameless\"\n";
    assert_invalid(&text, ToolRef::Index(1), "name", &["missing"]);
    assert_invalid(
        &tool("geo", "", CMD).replace("description = \"A tool.\"", ""),
        ToolRef::Named("geo".into()),
        "description",
        &["missing"],
    );
}

#[test]
fn wrong_value_types_name_the_field() {
    assert_invalid(&tool("geo", "cost = \"cheap\"", CMD), ToolRef::Named("geo".into()), "cost", &["string"]);
    assert_invalid(
        &tool("geo", "", "kind = \"command\"\nargv = [\"python3\", 3]"),
        ToolRef::Named("geo".into()),
        "executor.argv",
        &["integer"],
    );
}

#[test]
fn bad_costs_are_refused() {
    for cost in ["-1", "nan", "inf"] {
        assert_invalid(&tool("geo", &format!("cost = {cost}"), CMD), ToolRef::Named("geo".into()), "cost", &[">= 0"]);
    }
}

#[test]
fn parameter_schemas_are_checked() {
    let named = || ToolRef::Named("geo".into());
    let base = tool("geo", "", CMD);
    assert_invalid(&base.replace("type = \"object\"", "type = \"array\""), named(), "parameters.type", &["object"]);
    assert_invalid(
        &base.replace(
            "[tool.parameters.properties.city]",
            "required = [\"country\"]\n[tool.parameters.properties.city]",
        ),
        named(),
        "parameters.required[0]",
        &["'country'"],
    );
    assert_invalid(
        &base.replace("type = \"string\"", "type = \"text\""),
        named(),
        "parameters.properties.city.type",
        &["unknown type 'text'"],
    );
    assert_invalid(
        &base.replace("type = \"string\"", "description = \"where\""),
        named(),
        "parameters.properties.city.type",
        &["missing"],
    );
    assert_invalid(
        &base.replace(
            "type = \"object\"\n[tool.parameters.properties.city]\ntype = \"string\"",
            "type = \"object\"\nproperties = 3",
        ),
        named(),
        "parameters.properties",
        &["table"],
    );
}

#[test]
fn command_executor_checks() {
    let named = || ToolRef::Named("wc".into());
    assert_invalid(&tool("wc", "", "kind = \"command\"\nargv = []"), named(), "executor.argv", &["program"]);
    assert_invalid(
        &tool("wc", "", &format!("{CMD}\ntimeout_ms = 0")),
        named(),
        "executor.timeout_ms",
        &["more than 0"],
    );
    assert_invalid(
        &tool("wc", "", &format!("{CMD}\ncwd = \"no/such/dir\"")),
        named(),
        "executor.cwd",
        &["does not exist"],
    );
}

#[test]
fn http_executor_checks() {
    let named = || ToolRef::Named("geo".into());
    let http = |method: &str, url: &str, extra: &str| {
        tool("geo", "", &format!("kind = \"http\"\nmethod = \"{method}\"\nurl = \"{url}\"\n{extra}"))
    };
    assert_invalid(&http("FETCH", "https://x.test/", ""), named(), "executor.method", &["'FETCH'", "GET"]);
    assert_invalid(&http("GET", "ftp://x.test/", ""), named(), "executor.url", &["http://"]);
    assert_invalid(&http("GET", "https://x.test/{city", ""), named(), "executor.url", &["unclosed"]);
    assert_invalid(
        &http("GET", "https://x.test/", "[tool.executor.headers]\nAuthorization = { env = \"\" }"),
        named(),
        "executor.headers.Authorization.env",
        &["environment variable"],
    );
    assert_invalid(
        &http("GET", "https://x.test/", "[tool.executor.headers]\nAuthorization = { var = \"KEY\" }"),
        named(),
        "executor.headers.Authorization.var",
        &["unknown field"],
    );
}

#[test]
fn missing_file_names_the_path() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("absent.toml");
    let err = manifest::load_file(&path).unwrap_err();
    assert!(matches!(err, ManifestError::Io { .. }));
    assert!(err.to_string().contains("absent.toml"));
}
