//! A remote `[[mcp]]` server that wants an authorized user: the session
//! stops before it starts and says what to do, whether or not the entry
//! has `[mcp.oauth]` (the flow itself is checked by MCP's conformance
//! suite, `scripts/mcp-conformance.sh`, against its own servers).

use std::path::Path;

use switchyard::config::Config;

/// A server that answers every request 401 with a bearer challenge, as
/// an MCP server behind OAuth does before a login; its URL.
async fn wants_a_login() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let challenge = format!("Bearer resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\"");
    let app = axum::Router::new().fallback(move || {
        let challenge = challenge.clone();
        async move { (axum::http::StatusCode::UNAUTHORIZED, [(axum::http::header::WWW_AUTHENTICATE, challenge)], "") }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/mcp")
}

fn setup_error(toml: &str, data: &Path) -> String {
    let mut config = Config::parse(toml, Path::new("/cfg/switchyard.toml")).unwrap();
    config.data_dir = Some(data.to_path_buf());
    // `load_tools` runs its own runtime for the servers.
    std::thread::scope(|s| s.spawn(|| switchyard::session::load_tools(&config).err()).join().unwrap())
        .expect("the session must not start")
        .to_string()
}

// Two workers: the server answers while this test's thread waits on the setup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_wants_a_login_stops_the_session_saying_what_to_run() {
    let url = wants_a_login().await;
    let data = tempfile::TempDir::new().unwrap();
    let plain = setup_error(&format!("[[mcp]]\nname = \"linear\"\nurl = \"{url}\"\n"), data.path());
    assert!(plain.contains("linear"), "{plain}");
    assert!(plain.contains("add `[mcp.oauth]`") && plain.contains("switchyard mcp login linear"), "{plain}");

    let with_oauth = setup_error(&format!("[[mcp]]\nname = \"linear\"\nurl = \"{url}\"\n[mcp.oauth]\n"), data.path());
    assert!(with_oauth.contains("no token is kept: run `switchyard mcp login linear`"), "{with_oauth}");
    assert!(!data.path().join("oauth").exists(), "nothing is written before a login");
}
