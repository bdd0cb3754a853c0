//! The program sandbox (ATC): programs call tools through the port, and
//! every escape attempt ends in a clear failure, never a hang or a crash.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use switchyard::program::attribute::{attribute, diff, snippet};
use switchyard::program::sandbox::{self, Binding, CallRequest, FailKind, Limits, Outcome, Port, bindings};

/// Answers `search` with a list of movies and `credits` with a cast; any
/// other tool fails. Prints are kept.
#[derive(Default)]
struct Fake {
    prints: Arc<std::sync::Mutex<Vec<String>>>,
    seen: Arc<std::sync::Mutex<Vec<CallRequest>>>,
}

impl Port for Fake {
    fn call(&mut self, req: CallRequest) -> Result<Value, String> {
        self.seen.lock().unwrap().push(req.clone());
        match req.tool.as_str() {
            "GET_search-movie" => Ok(json!({"page": 1, "results": [{"id": 155, "title": "The Dark Knight"}]})),
            "credits" => match req.args.get("movie_id") {
                Some(Value::Number(_)) => Ok(json!({"id": 155, "cast": [{"name": "Christian Bale", "order": 0}]})),
                _ => Err("movie_id is required".into()),
            },
            other => Err(format!("{other} is down")),
        }
    }
    fn print(&mut self, text: String) {
        self.prints.lock().unwrap().push(text);
    }
}

fn tools() -> Vec<Binding> {
    bindings(["GET_search-movie", "credits"])
}

fn run_with(source: &str, limits: &Limits) -> (Outcome, Fake) {
    let fake = Fake::default();
    let port = Fake { prints: fake.prints.clone(), seen: fake.seen.clone() };
    let out = sandbox::run(source, &tools(), limits, Box::new(port), Arc::new(AtomicBool::new(false)));
    (out, fake)
}

fn run(source: &str) -> (Outcome, Fake) {
    run_with(source, &Limits::default())
}

fn failure(source: &str) -> sandbox::Failure {
    match run(source).0.result {
        Ok(v) => panic!("the program returned {v} instead of failing"),
        Err(f) => f,
    }
}

#[test]
fn a_chain_of_tools_returns_its_answer_and_each_call_its_line() {
    let src = "let m = GET_search_movie(#{query: \"The Dark Knight\"});\nlet id = m.results[0].id;\nprint(`id ${id}`);\nlet c = credits(#{movie_id: id});\nc.cast[0].name";
    let (out, fake) = run(src);
    assert_eq!(out.result, Ok(json!("Christian Bale")));
    assert_eq!(out.calls, vec![("GET_search-movie".to_string(), Some(1)), ("credits".to_string(), Some(4))]);
    assert_eq!(fake.seen.lock().unwrap()[1].args, json!({"movie_id": 155}));
    assert_eq!(*fake.prints.lock().unwrap(), vec!["id 155".to_string()]);
}

#[test]
fn names_that_are_not_identifiers_are_bound_to_clean_functions() {
    let b = bindings(["GET_a-b", "GET_a_b", "print", "9lives"]);
    let f: Vec<&str> = b.iter().map(|b| b.function.as_str()).collect();
    assert_eq!(f, ["GET_a_b", "GET_a_b_2", "print_2", "_9lives"]);
}

#[test]
fn a_tool_error_is_the_tools_and_names_its_line() {
    let f = failure("let x = 1;\nlet c = credits(#{movie_id: \"x\"});\nc");
    assert_eq!((f.kind, f.line, f.tool.as_deref()), (FailKind::Tool, Some(2), Some("credits")));
    assert_eq!(f.message, "movie_id is required");
}

#[test]
fn a_missing_field_is_attributed_to_the_tool_whose_response_was_read() {
    let src = "let m = GET_search_movie(#{query: \"x\"});\nlet r = m.results;\nlet c = credits(#{movie_id: 155});\nr[0].movie_id";
    let (out, _) = run(src);
    let f = out.result.clone().unwrap_err();
    assert_eq!((f.kind, f.line), (FailKind::MissingField, Some(4)));
    assert!(f.message.contains("movie_id"), "{}", f.message);
    // `r` came from the search's response, though credits was called last.
    assert_eq!(attribute(src, &f, &tools(), &out.calls).as_deref(), Some("GET_search-movie"));
    assert!(snippet(src, f.line).contains(">  4 | r[0].movie_id"), "{}", snippet(src, f.line));
}

#[test]
fn an_index_past_the_end_is_a_missing_field() {
    let f = failure("let m = GET_search_movie(#{});\nm.results[3].id");
    assert_eq!((f.kind, f.line), (FailKind::MissingField, Some(2)));
}

#[test]
fn a_non_map_argument_is_a_type_error_naming_the_tool() {
    let f = failure("credits(155)");
    assert_eq!(f.kind, FailKind::Type);
    assert!(f.message.contains("credits") && f.message.contains("map"), "{}", f.message);
}

#[test]
fn a_tool_not_offered_is_an_unknown_function_listing_the_offered() {
    let f = failure("let x = delete_everything(#{});\nx");
    assert_eq!((f.kind, f.line), (FailKind::UnknownFunction, Some(1)));
    assert!(f.message.contains("GET_search_movie, credits"), "{}", f.message);
}

#[test]
fn syntax_errors_are_reported_with_their_line() {
    let f = failure("let x = 1;\nlet = ;");
    assert_eq!((f.kind, f.line), (FailKind::Parse, Some(2)));
}

#[test]
fn a_single_quoted_string_is_a_syntax_error_that_says_how_to_write_one() {
    let f = failure("let g = GET_search_movie(#{query: 'Alien'});\ng");
    assert_eq!((f.kind, f.line), (FailKind::Parse, Some(1)));
    assert!(f.message.contains("double quotes"), "{}", f.message);
}

#[test]
fn an_infinite_loop_is_stopped() {
    let f = failure("let i = 0;\nloop { i += 1; }");
    assert!(matches!(f.kind, FailKind::Limit | FailKind::Deadline), "{f:?}");
}

#[test]
fn a_loop_over_the_deadline_is_stopped_by_it() {
    let limits = Limits { max_operations: 0, deadline_ms: 50, ..Limits::default() };
    let f = run_with("loop { }", &limits).0.result.unwrap_err();
    assert_eq!(f.kind, FailKind::Deadline, "{f:?}");
}

#[test]
fn deep_recursion_is_stopped() {
    let f = failure("fn down(n) { down(n + 1) }\ndown(0)");
    assert_eq!(f.kind, FailKind::Limit, "{f:?}");
}

#[test]
fn huge_strings_arrays_and_maps_are_refused() {
    for src in [
        "let s = \"x\";\nloop { s += s; }",
        "let a = [1];\nloop { a += a; }",
        "let m = #{};\nlet i = 0;\nloop { m[`k${i}`] = i; i += 1; }",
    ] {
        // Small limits: the size check walks the value, so a map near the
        // default limit takes long enough to meet the deadline on a loaded machine.
        let limits = Limits {
            max_string_bytes: 4096,
            max_array_len: 1000,
            max_map_len: 1000,
            deadline_ms: 60_000,
            ..Limits::default()
        };
        let f = run_with(src, &limits).0.result.unwrap_err();
        assert_eq!(f.kind, FailKind::Limit, "{src}: {f:?}");
    }
}

#[test]
fn no_file_process_network_or_environment_is_reachable() {
    for src in [
        "import \"/etc/passwd\" as p;",
        "open(\"/etc/passwd\")",
        "read_file(\"/etc/passwd\")",
        "eval(\"1 + 1\")",
        "system(\"ls\")",
        "spawn(\"sh\")",
        "http_get(\"http://example.com\")",
        "env(\"HOME\")",
        "getenv(\"HOME\")",
    ] {
        let f = failure(src);
        assert!(matches!(f.kind, FailKind::Parse | FailKind::UnknownFunction), "{src}: {f:?}");
    }
}

#[test]
fn too_many_tool_calls_are_refused() {
    let limits = Limits { max_tool_calls: 3, ..Limits::default() };
    let f = run_with("loop { GET_search_movie(#{}); }", &limits).0.result.unwrap_err();
    assert_eq!(f.kind, FailKind::Limit, "{f:?}");
}

#[test]
fn a_cancelled_program_stops() {
    let out = sandbox::run(
        "loop { }",
        &tools(),
        &Limits { max_operations: 0, deadline_ms: 60_000, ..Limits::default() },
        Box::new(Fake::default()),
        Arc::new(AtomicBool::new(true)),
    );
    assert_eq!(out.result.unwrap_err().kind, FailKind::Cancelled);
}

#[test]
fn the_answer_is_any_value_and_unit_is_null() {
    assert_eq!(run("#{a: 1, b: [true, \"x\"]}").0.result, Ok(json!({"a": 1, "b": [true, "x"]})));
    assert_eq!(run("let x = 1;").0.result, Ok(Value::Null));
}

#[test]
fn a_rewrite_is_shown_as_a_unified_diff() {
    let d = diff("a\nb\nc\n", "a\nB\nc\n");
    assert!(d.contains("-b\n") && d.contains("+B\n"), "{d}");
    assert_eq!(diff("a\n", "a\n"), "");
}
