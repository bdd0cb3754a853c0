//! The `http` executor: one REST call per tool call.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{HeaderValue, ToolError, ToolErrorKind, ToolResult};
use crate::text::secret::{Secret, redact};

/// How much of an error body is quoted back.
const BODY_QUOTE: usize = 300;

/// A piece of a URL template: literal text, or a `{param}` to fill.
#[derive(Debug, PartialEq)]
pub(crate) enum Piece<'a> {
    Literal(&'a str),
    Param(&'a str),
}

/// Splits `https://x/{city}/now` into its literal parts and `{param}` slots.
/// A stray `}` is literal; an unclosed `{` or an empty `{}` is an error.
pub(crate) fn split_template(url: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Literal(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| format!("unclosed '{{' in URL '{url}'"))?;
        let name = after[..close].trim();
        if name.is_empty() {
            return Err(format!("empty '{{}}' in URL '{url}'"));
        }
        pieces.push(Piece::Param(name));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest));
    }
    Ok(pieces)
}

/// Percent-encodes everything but RFC 3986's unreserved characters, so a
/// value can never add a path segment, a query or a fragment to the URL.
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The text an argument contributes to a URL or a query: strings as they
/// are, anything else as its JSON text.
fn arg_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn failed(msg: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorKind::Failed, msg)
}

fn truncate(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// The URL with its `{param}` slots filled from the arguments, and what is left over.
fn fill_url(url: &str, args: &Value) -> Result<(String, Map<String, Value>), ToolError> {
    let mut rest = args.as_object().cloned().unwrap_or_default();
    let mut out = String::with_capacity(url.len());
    for piece in split_template(url).map_err(failed)? {
        match piece {
            Piece::Literal(s) => out.push_str(s),
            Piece::Param(name) => match rest.remove(name) {
                Some(v) if !v.is_null() => out.push_str(&percent_encode(&arg_text(&v))),
                _ => {
                    return Err(ToolError::new(
                        ToolErrorKind::BadArguments,
                        format!("argument '{name}' is needed to build the URL"),
                    ));
                }
            },
        }
    }
    Ok((out, rest))
}

/// Resolves the manifest's headers. Values read from the environment are
/// marked sensitive and never quoted in an error.
pub(crate) fn build_headers(headers: &BTreeMap<String, HeaderValue>) -> Result<reqwest::header::HeaderMap, ToolError> {
    use reqwest::header::{HeaderMap, HeaderName, HeaderValue as Hv};
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let hname = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| failed(format!("'{name}' is not a valid header name")))?;
        let hvalue = match value {
            HeaderValue::Literal(s) => {
                Hv::from_str(s).map_err(|_| failed(format!("header '{name}' has an invalid value")))?
            }
            HeaderValue::Env { env, prefix } => {
                // Registered, so an endpoint that quotes it back is masked.
                let secret = std::env::var(env).map(Secret::new).map_err(|_| {
                    failed(format!("environment variable {env} is not set (needed for header '{name}')"))
                })?;
                let mut v = Hv::from_str(&format!("{prefix}{}", secret.expose())).map_err(|_| {
                    failed(format!(
                        "header '{name}': environment variable {env} holds characters not allowed in a header"
                    ))
                })?;
                v.set_sensitive(true);
                v
            }
        };
        map.insert(hname, hvalue);
    }
    Ok(map)
}

/// Where a call goes: an http executor's fields.
pub(crate) struct Target<'a> {
    pub(crate) method: &'a str,
    pub(crate) url: &'a str,
    pub(crate) headers: &'a BTreeMap<String, HeaderValue>,
    /// Arguments that go in the query string whatever the method.
    pub(crate) query: &'a [String],
}

/// Runs one REST call: URL slots filled from the arguments, the rest sent
/// as query parameters (GET, DELETE) or as a JSON body (POST, PUT, PATCH),
/// except those `query` names, always in the query string.
pub(crate) async fn run(
    client: &reqwest::Client,
    tool: &str,
    target: Target<'_>,
    args: &Value,
    timeout: Duration,
    output_cap: u64,
) -> ToolResult {
    let Target { method, url, headers, query } = target;
    let (filled, mut rest) = fill_url(url, args)?;
    let mut url = reqwest::Url::parse(&filled).map_err(|e| failed(format!("'{tool}': bad URL '{filled}': {e}")))?;
    let method = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|_| failed(format!("'{tool}': bad HTTP method '{method}'")))?;
    let header_map = build_headers(headers)?;

    let body_method = matches!(method, reqwest::Method::POST | reqwest::Method::PUT | reqwest::Method::PATCH);
    let in_query: Map<String, Value> = if body_method {
        query.iter().filter_map(|k| rest.remove_entry(k)).collect()
    } else {
        std::mem::take(&mut rest)
    };
    if !in_query.is_empty() {
        let mut q = url.query_pairs_mut();
        for (k, v) in &in_query {
            if !v.is_null() {
                q.append_pair(k, &arg_text(v));
            }
        }
    }
    let mut req = client.request(method, url).headers(header_map);
    if body_method {
        req = req.json(&Value::Object(rest));
    }

    let too_much = || {
        failed(format!(
            "'{tool}': the body passed {} (tool_output_mb) and was cut off",
            super::limits::megabytes(output_cap)
        ))
    };
    let exchange = async {
        let mut resp = req.send().await?;
        let status = resp.status();
        // Chunk by chunk, so that an endless body stops at the cap.
        let mut body = Vec::new();
        if resp.content_length().is_some_and(|n| n > output_cap) {
            return Ok(None);
        }
        while let Some(chunk) = resp.chunk().await? {
            if (body.len() + chunk.len()) as u64 > output_cap {
                return Ok(None);
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, reqwest::Error>(Some((status, body)))
    };
    let (status, body) = match tokio::time::timeout(timeout, exchange).await {
        Err(_) => {
            return Err(ToolError::new(
                ToolErrorKind::Timeout,
                format!("'{tool}' timed out after {} ms", timeout.as_millis()),
            ));
        }
        Ok(Err(e)) if e.is_timeout() => {
            return Err(ToolError::new(
                ToolErrorKind::Timeout,
                format!("'{tool}' timed out: {}", redact(&e.to_string())),
            ));
        }
        Ok(Err(e)) => return Err(failed(format!("'{tool}': request failed: {}", redact(&e.to_string())))),
        Ok(Ok(None)) => return Err(too_much()),
        Ok(Ok(Some(r))) => r,
    };
    read_body(tool, status, &body)
}

/// The answer in a REST reply: its JSON, its text when it is not JSON, an
/// error quoting it for a status other than 2xx. Public so it can be
/// fuzzed without a server.
pub fn read_body(tool: &str, status: reqwest::StatusCode, body: &[u8]) -> ToolResult {
    // The body is quoted in an error or becomes the result: an endpoint
    // that echoes the request's key must not put it in either.
    let text = redact(&String::from_utf8_lossy(body)).into_owned();
    if !status.is_success() {
        let quoted = truncate(&text, BODY_QUOTE);
        let sep = if quoted.is_empty() { "" } else { ": " };
        return Err(failed(format!("'{tool}': HTTP {status}{sep}{quoted}")));
    }
    if text.trim().is_empty() {
        // A 204 or an empty 200 still says the call went through.
        return Ok(serde_json::json!({ "status": status.as_u16() }));
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_templates() {
        assert_eq!(
            split_template("https://a/{city}/x?u={ unit }").unwrap(),
            vec![Piece::Literal("https://a/"), Piece::Param("city"), Piece::Literal("/x?u="), Piece::Param("unit"),]
        );
        assert!(split_template("https://a/{city").is_err());
        assert!(split_template("https://a/{}").is_err());
    }

    #[test]
    fn encodes_reserved_characters() {
        assert_eq!(percent_encode("São Paulo/x?y#z"), "S%C3%A3o%20Paulo%2Fx%3Fy%23z");
        assert_eq!(percent_encode("a-b.c_d~e"), "a-b.c_d~e");
    }
}
