//! The MCP server itself, on `rmcp`: `initialize`, `ping`, `tools/list`
//! (paged), `tools/call` and `notifications/tools/list_changed`, each
//! answered from a [`ToolDesk`].

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use serde_json::{Value, json};

use super::content;
use super::desk::{DeskError, ToolDesk};

/// Tools per `tools/list` page: a library may hold 16,000.
pub const PAGE: usize = 100;

const INSTRUCTIONS: &str = "Switchyard's tool library. Every call runs in a Switchyard session, where it may be \
paused, approved, edited, refused by the budget or made to fail on purpose: read a tool error as the tool's answer.";

#[derive(Clone)]
pub struct Handler {
    desk: Arc<dyn ToolDesk>,
}

impl Handler {
    pub fn new(desk: Arc<dyn ToolDesk>) -> Self {
        Handler { desk }
    }
}

fn protocol_error(code: ErrorCode, message: String) -> ErrorData {
    ErrorData::new(code, message, None)
}

/// A page's first tool, from the cursor the previous page gave.
fn page_start(cursor: Option<&str>, total: usize) -> Result<usize, ErrorData> {
    let Some(cursor) = cursor else { return Ok(0) };
    match cursor.parse::<usize>() {
        Ok(n) if n <= total => Ok(n),
        _ => Err(protocol_error(
            ErrorCode::INVALID_PARAMS,
            format!("invalid cursor '{cursor}': pass the nextCursor of the previous tools/list page"),
        )),
    }
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| protocol_error(ErrorCode::INTERNAL_ERROR, e.to_string()))
}

impl rmcp::ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(Implementation::new("switchyard", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let offered = self.desk.offered().await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let start = page_start(cursor, offered.len())?;
        let end = (start + PAGE).min(offered.len());
        let tools: Vec<Value> = offered[start..end].iter().map(|t| content::listed(t)).collect();
        // Revision 2026-07-28 requires `resultType`; rmcp strips it for
        // older peers.
        let mut page = json!({ "tools": tools, "resultType": "complete" });
        if end < offered.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        from_json(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let spec = self.desk.find(&name).await.map_err(desk_error)?;
        let result = self.desk.call(&name, content::arguments(request.arguments)).await.map_err(desk_error)?;
        let result: CallToolResult = from_json(content::result(&spec, &result))?;
        Ok(result.into())
    }

    /// From now on the client hears of every change of the offered set,
    /// until it hangs up.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.desk.changes();
        changes.mark_unchanged();
        let peer = context.peer;
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// An unknown tool is the caller's mistake (invalid params, as MCP says);
/// a session that ended, the server's.
fn desk_error(e: DeskError) -> ErrorData {
    let code = match e {
        DeskError::UnknownTool { .. } => ErrorCode::INVALID_PARAMS,
        DeskError::Stopped => ErrorCode::INTERNAL_ERROR,
    };
    protocol_error(code, e.to_string())
}

pub async fn serve_stdio(desk: Arc<dyn ToolDesk>) -> Result<(), String> {
    let running = rmcp::serve_server(Handler::new(desk), rmcp::transport::io::stdio())
        .await
        .map_err(|e| format!("the MCP client did not initialize: {e}"))?;
    running.waiting().await.map(|_| ()).map_err(|e| format!("the MCP connection failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_a_place_in_the_list() {
        assert_eq!(page_start(None, 5).unwrap(), 0);
        assert_eq!(page_start(Some("3"), 5).unwrap(), 3);
        assert!(page_start(Some("6"), 5).is_err());
        assert!(page_start(Some("abc"), 5).unwrap_err().message.contains("invalid cursor 'abc'"));
    }
}
