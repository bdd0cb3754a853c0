//! MCP's authorization flow for a remote `[[mcp]]` entry (OAuth 2.1 with
//! the server's protected-resource metadata, PKCE, and a pre-registered
//! client, a client metadata document or dynamic registration), spoken by
//! `rmcp`'s auth module. Switchyard keeps the tokens in a file of its data
//! directory that only the user can read, and refreshes them through it.

use std::path::{Path, PathBuf};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore, OAuthState, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `[mcp.oauth]` of a `url` entry: the server wants an authorized user.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// A client registered with the authorization server beforehand;
    /// without one, the client metadata document or dynamic registration.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret, if it has one.
    #[serde(default)]
    pub client_secret_env: Option<String>,
    /// An https URL of Switchyard's client metadata document (used where
    /// the authorization server accepts one).
    #[serde(default)]
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for; by default those the server names.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The loopback port the login's redirect comes back to (a
    /// pre-registered client names its redirect URI); any free one by default.
    #[serde(default)]
    pub redirect_port: Option<u16>,
    /// Where the tokens are kept: set when the session is set up, from the
    /// data directory.
    #[serde(skip)]
    pub token_file: Option<PathBuf>,
    /// Log in without a browser when no token is kept (see [`Login`]).
    #[serde(skip)]
    pub login: Login,
}

/// How a login reaches the authorization server's consent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Login {
    /// Not while connecting: the user runs `switchyard mcp login NAME`.
    #[default]
    Ask,
    /// Fetch the authorization URL and take the code from its redirect,
    /// with no browser: for an authorization server that approves at once
    /// (a test server, such as the MCP conformance suite's).
    Follow,
}

#[derive(thiserror::Error, Debug)]
pub enum OAuthError {
    #[error("{0}")]
    Auth(#[from] AuthError),
    #[error("{path}: {why}")]
    TokenFile { path: PathBuf, why: String },
    #[error("{0}")]
    Login(String),
}

/// The kept tokens of one server, for that server's URL only.
#[derive(Serialize, Deserialize)]
struct Kept {
    url: String,
    credentials: StoredCredentials,
}

/// A [`CredentialStore`] in one file, mode 0600 in a 0700 directory,
/// replaced whole on each save.
pub struct TokenFile {
    path: PathBuf,
    url: String,
}

impl TokenFile {
    pub fn new(path: PathBuf, url: &str) -> Self {
        TokenFile { path, url: url.to_string() }
    }

    fn store_error(&self, why: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{}: {why}", self.path.display()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.store_error(e)),
        };
        let kept: Kept = serde_json::from_slice(&bytes).map_err(|e| self.store_error(e))?;
        // Tokens of another URL under the same name are not this server's.
        Ok((kept.url == self.url).then_some(kept.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let kept = Kept { url: self.url.clone(), credentials };
        let bytes = serde_json::to_vec_pretty(&kept).map_err(|e| self.store_error(e))?;
        crate::text::secret::write_private(&self.path, &bytes).map_err(|e| self.store_error(e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.store_error(e)),
            _ => Ok(()),
        }
    }
}

fn token_file(name: &str, url: &str, oauth: &OAuthConfig) -> Result<TokenFile, OAuthError> {
    let path = oauth
        .token_file
        .clone()
        .ok_or_else(|| OAuthError::Login(format!("'{name}': no data directory to keep its tokens in")))?;
    Ok(TokenFile::new(path, url))
}

async fn manager(name: &str, url: &str, oauth: &OAuthConfig) -> Result<AuthorizationManager, OAuthError> {
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(token_file(name, url, oauth)?);
    Ok(manager)
}

/// An HTTP client that sends the kept token (refreshed when it expires),
/// logging in first when there is none and `oauth.login` is `Follow`.
pub async fn authorized_client(
    name: &str,
    url: &str,
    oauth: &OAuthConfig,
) -> Result<AuthClient<reqwest::Client>, OAuthError> {
    let mut m = manager(name, url, oauth).await?;
    if !m.initialize_from_store().await? {
        if oauth.login != Login::Follow {
            return Err(OAuthError::Login(format!(
                "'{name}' needs an authorized user and no token is kept: run `switchyard mcp login {name}`"
            )));
        }
        login(name, url, oauth, &|_| {}).await?;
        m = manager(name, url, oauth).await?;
        if !m.initialize_from_store().await? {
            return Err(OAuthError::Login(format!("'{name}': the login kept no token")));
        }
    }
    Ok(AuthClient::new(reqwest::Client::default(), m))
}

/// The server's answer to a request without a token: its
/// `WWW-Authenticate` challenge (naming its resource metadata and maybe
/// the scopes), if it sent one.
async fn challenge(url: &str) -> Result<Option<String>, OAuthError> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "switchyard", "version": env!("CARGO_PKG_VERSION")}}});
    let response = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| OAuthError::Login(format!("{url}: {e}")))?;
    Ok(response.headers().get(reqwest::header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_string))
}

/// Runs the authorization flow and keeps the tokens. `say` shows the user
/// what to do (the URL to open); with `Login::Follow` nobody is asked.
pub async fn login(name: &str, url: &str, oauth: &OAuthConfig, say: &(dyn Fn(&str) + Sync)) -> Result<(), OAuthError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", oauth.redirect_port.unwrap_or(0)))
        .await
        .map_err(|e| OAuthError::Login(format!("the login's redirect could not listen on loopback: {e}")))?;
    let port = listener.local_addr().map_err(|e| OAuthError::Login(e.to_string()))?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut request = AuthorizationRequest::new(&redirect).with_client_name("Switchyard");
    if let Some(c) = challenge(url).await? {
        request = request.with_challenge(c);
    }
    if !oauth.scopes.is_empty() {
        request = request.with_scopes(oauth.scopes.iter().cloned());
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id);
        if let Some(var) = &oauth.client_secret_env {
            let secret = std::env::var(var)
                .map_err(|_| OAuthError::Login(format!("'{name}': client_secret_env names {var}, which is not set")))?;
            request = request.with_client_secret(secret);
        }
    }
    if let Some(doc) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(doc);
    }
    let mut state = OAuthState::Unauthorized(manager(name, url, oauth).await?);
    state.start_authorization(request).await?;
    let auth_url = state.get_authorization_url().await?;
    let back = match oauth.login {
        Login::Follow => follow(&auth_url).await?,
        Login::Ask => {
            say(&format!(
                "Open this address to let Switchyard use '{name}' ({url}):\n\n  {auth_url}\n\n\
                 Waiting for the authorization server to send you back to {redirect} (Ctrl-C to give up)."
            ));
            redirected(&listener, &redirect).await?
        }
    };
    state.handle_callback_url(&back).await?;
    Ok(())
}

/// The authorization URL fetched without a browser: its redirect carries
/// the code.
async fn follow(auth_url: &str) -> Result<String, OAuthError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| OAuthError::Login(e.to_string()))?;
    let response = client.get(auth_url).send().await.map_err(|e| OAuthError::Login(format!("{auth_url}: {e}")))?;
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            OAuthError::Login(format!(
                "the authorization server answered {} without a redirect: it wants a person, so log in without --follow",
                response.status()
            ))
        })
}

/// Waits for the browser to come back to the loopback redirect, answers it
/// with a page saying so, and returns the full redirect URL.
async fn redirected(listener: &tokio::net::TcpListener, redirect: &str) -> Result<String, OAuthError> {
    loop {
        let (mut conn, _) = listener.accept().await.map_err(|e| OAuthError::Login(e.to_string()))?;
        let mut buf = vec![0u8; 8192];
        let n = conn.read(&mut buf).await.unwrap_or(0);
        let head = String::from_utf8_lossy(&buf[..n]);
        // `GET /callback?code=...&state=... HTTP/1.1`; anything else (a
        // favicon) is answered and waited past.
        let target = head.lines().next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("");
        let (status, page) = if target.starts_with("/callback?") {
            ("200 OK", "Switchyard is authorized. You can close this tab.")
        } else {
            ("404 Not Found", "Not the login's redirect.")
        };
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = conn.write_all(reply.as_bytes()).await;
        if status.starts_with("200") {
            let base = redirect.trim_end_matches("/callback");
            return Ok(format!("{base}{target}"));
        }
    }
}

/// Forgets the kept tokens of a server; whether there were any.
pub fn logout(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_token_file_is_private_and_only_for_its_url() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("oauth").join("linear.json");
        let file = TokenFile::new(path.clone(), "https://mcp.example/mcp");
        assert!(file.load().await.unwrap().is_none());
        file.save(StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(1))).await.unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        }
        assert_eq!(file.load().await.unwrap().unwrap().client_id, "client-1");
        let other = TokenFile::new(path.clone(), "https://elsewhere.example/mcp");
        assert!(other.load().await.unwrap().is_none(), "tokens of another URL are not offered");
        std::fs::write(&path, "{").unwrap();
        let err = file.load().await.unwrap_err().to_string();
        assert!(err.contains("linear.json"), "a broken file is named: {err}");
        file.clear().await.unwrap();
        assert!(!path.exists());
    }
}
