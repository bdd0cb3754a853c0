//! JSON library files through the config: `library` entries and their
//! `[[library_options]]`, a session's library, and the CLI refusing bad ones.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::config::Config;
use switchyard::session;
use switchyard::tool::exec::Executor;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn spec(base: &str) -> Value {
    json!({
        "openapi": "3.1.0",
        "info": { "title": "echo", "version": "1" },
        "servers": [{ "url": base }],
        "paths": { "/echo/{word}": { "get": {
            "operationId": "echo_word",
            "summary": "Echo a word",
            "parameters": [
                { "name": "word", "in": "path", "required": true, "schema": { "type": "string" } },
                { "name": "times", "in": "query", "schema": { "type": "integer" } }
            ],
            "responses": { "200": { "description": "ok" } }
        } } }
    })
}

fn write_config(dir: &Path, extra: &str) -> std::path::PathBuf {
    let cfg = dir.join("switchyard.toml");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools");
    let text = format!("library = [{:?}, \"echo.json\"]\n{extra}", sample.display().to_string());
    std::fs::write(&cfg, text).unwrap();
    cfg
}

#[tokio::test]
async fn a_configured_spec_joins_the_session_library_and_calls_the_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).await.unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"echo":"hi hi"}"#;
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(reply.as_bytes()).await.unwrap();
        String::from_utf8_lossy(&got).lines().next().unwrap_or_default().to_string()
    });
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("echo.json"), spec("https://unused.example").to_string()).unwrap();
    let cfg = write_config(
        dir.path(),
        &format!(
            "\n[[library_options]]\npath = \"echo.json\"\nbase_url = \"{base}/api\"\ncost = 3\ncategory = \"Information Retrieval\"\n"
        ),
    );
    let config = Config::load(&cfg).unwrap();
    let lib = session::load_library(&config).unwrap();
    assert!(lib.get("calculator").is_some(), "the TOML manifests still load");
    let echo = lib.get("echo_word").unwrap();
    assert_eq!((echo.cost, echo.category.as_deref()), (3.0, Some("Information Retrieval")));
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Executor::new().call(echo, &json!({ "word": "hi", "times": 2 }), None, 1, Duration::from_secs(30)),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(out, json!({ "echo": "hi hi" }));
    assert_eq!(server.await.unwrap(), "GET /api/echo/hi?times=2 HTTP/1.1");
}

#[test]
fn unknown_option_keys_are_config_errors() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("echo.json"), spec("https://x.example").to_string()).unwrap();
    let cfg = write_config(dir.path(), "\n[[library_options]]\npath = \"echo.json\"\nbase_uri = \"https://y\"\n");
    let err = Config::load(&cfg).unwrap_err().to_string();
    assert!(err.contains("switchyard.toml") && err.contains("base_uri"), "{err}");
}

#[test]
fn the_cli_refuses_a_broken_spec_with_exit_code_1() {
    let dir = TempDir::new().unwrap();
    let mut broken = spec("https://x.example");
    broken["paths"]["/echo/{word}"]["get"]["parameters"][1] = json!({ "$ref": "#/components/parameters/Times" });
    std::fs::write(dir.path().join("echo.json"), broken.to_string()).unwrap();
    let cfg = write_config(dir.path(), "");
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .env_remove("SWITCHYARD_DATA_DIR")
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--config")
        .arg(&cfg)
        .arg("run")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("echo.json") && err.contains("#/paths/~1echo~1{word}/get/parameters/1/$ref"), "{err}");
}
