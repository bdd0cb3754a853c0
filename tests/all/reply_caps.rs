//! What a tool answers is capped: a command that prints without end, an
//! HTTP body without end and an MCP message without end each fail the call
//! with an error naming the limit, instead of filling memory.

use std::path::{Path, PathBuf};

use crate::cli_helpers::{bin, s};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood").join(name)
}

/// A config with the flooding command tool, an http tool at `url`, and
/// the flooding MCP server, every limit at 1 MB.
fn config(dir: &Path, url: &str) -> PathBuf {
    let manifest = dir.join("flood.toml");
    let tool = |name: &str, executor: String| {
        format!(
            "[[tool]]\nname = \"{name}\"\ndescription = \"Answer with everything there is.\"\n\
             [tool.parameters]\ntype = \"object\"\n[tool.executor]\n{executor}\n"
        )
    };
    let command = format!(
        "kind = \"command\"\nargv = [\"python3\", \"{}\"]\ntimeout_ms = 60000",
        fixture("flood_tool.py").display()
    );
    let http = format!("kind = \"http\"\nmethod = \"GET\"\nurl = \"{url}\"\ntimeout_ms = 60000");
    std::fs::write(&manifest, tool("flood_stdout", command) + tool("flood_http", http).as_str()).unwrap();
    std::fs::write(dir.join("trajectories.jsonl"), "").unwrap();
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "library = [\"{}\"]\ntrajectories = \"trajectories.jsonl\"\ntool_output_mb = 1\n\n\
             [[mcp]]\nname = \"fl\"\ncommand = \"python3\"\nargs = [\"{}\"]\nmax_message_mb = 1\ntimeout_ms = 60000\nmax_restarts = 0\n",
            manifest.display(),
            fixture("mcp_flood.py").display()
        ),
    )
    .unwrap();
    path
}

/// An HTTP server on loopback whose every answer is a 200 with a chunked
/// body that never ends (until the client hangs up).
fn endless_http() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/flood", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let _ = stream.read(&mut buf);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let piece = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536));
                while stream.write_all(piece.as_bytes()).is_ok() {}
            });
        }
    });
    url
}

fn call(config: &Path, data: &Path, tool: &str) -> (Option<i32>, String) {
    let out = bin().args(["tools", "call", tool, "--config", s(config), "--data-dir", s(data)]).output().unwrap();
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn an_endless_answer_fails_the_call_naming_the_limit() {
    let d = tempfile::tempdir().unwrap();
    let cfg = config(d.path(), &endless_http());
    let data = d.path().join("data");
    let (code, text) = call(&cfg, &data, "flood_stdout");
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("'flood_stdout' printed more than 1 MB on stdout (tool_output_mb) and was stopped"),
        "{text}"
    );
    let (code, text) = call(&cfg, &data, "flood_http");
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("'flood_http': the body passed 1 MB (tool_output_mb) and was cut off"), "{text}");
    let (code, text) = call(&cfg, &data, "flood");
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("a message from the server passed 1 MB (max_message_mb); the server was stopped"), "{text}");
}

#[test]
fn a_limit_that_is_no_size_is_named_by_its_field() {
    let d = tempfile::tempdir().unwrap();
    for (text, field) in [
        ("tool_output_mb = 0\n", "tool_output_mb"),
        ("[[mcp]]\nname = \"x\"\ncommand = \"true\"\nmax_message_mb = -1\n", "max_message_mb"),
        (
            "[models.m]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nmax_reply_mb = 0\n",
            "max_reply_mb",
        ),
    ] {
        let cfg = d.path().join("bad.toml");
        std::fs::write(&cfg, text).unwrap();
        let out = bin().args(["tools", "list", "--config", s(&cfg)]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text}");
        assert!(err.contains(field) && err.contains("bad.toml"), "{text}: {err}");
    }
}
