//! Errors as each dialect writes them, so an agent's own SDK raises its own
//! exception with the message: OpenAI's `{"error": {...}}` for Chat
//! Completions and Responses, Anthropic's `{"type": "error", ...}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::model::wire::Dialect;

/// A refusal of the gateway's, in the dialect of the request it answers.
#[derive(Debug)]
pub struct GatewayError {
    pub dialect: Dialect,
    pub status: StatusCode,
    pub message: String,
    /// The field at fault, when one is.
    pub param: Option<String>,
    /// The session already knows (the model call failed in it, or it has
    /// ended): nothing to tell it.
    pub known: bool,
}

impl GatewayError {
    pub fn new(dialect: Dialect, status: StatusCode, message: impl Into<String>) -> Self {
        GatewayError { dialect, status, message: message.into(), param: None, known: false }
    }

    pub fn known(mut self) -> Self {
        self.known = true;
        self
    }

    pub fn at(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }
}

/// OpenAI's error `type` for a status.
fn openai_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        404 => "not_found_error",
        413 | 400 | 422 => "invalid_request_error",
        429 => "rate_limit_error",
        _ => "server_error",
    }
}

/// Anthropic's error `type` for a status.
fn anthropic_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        _ => "api_error",
    }
}

impl GatewayError {
    pub fn body(&self) -> serde_json::Value {
        // The message may quote what the upstream said; a key it echoed is masked.
        let message = crate::text::secret::redact(&self.message).into_owned();
        match self.dialect {
            Dialect::Chat | Dialect::Responses => json!({"error": {
                "message": message,
                "type": openai_type(self.status),
                "param": self.param,
                "code": null,
            }}),
            Dialect::Anthropic => json!({"type": "error", "error": {
                "type": anthropic_type(self.status),
                "message": message,
            }}),
        }
    }
}

impl IntoResponse for GatewayError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body())).into_response()
    }
}
