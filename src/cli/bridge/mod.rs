//! The agent bridge's commands: `--agent` on `ui`, `run`, `eval` and `fork`
//! (`agent`: the agent started, its model and MCP gateways set up),
//! `gateway` (the model gateway alone, for an agent started elsewhere) and
//! `mcp` (Switchyard as an MCP server; `mcp login` for a remote server's
//! OAuth). The gateways themselves are `switchyard-bridge`'s.

pub(super) mod agent;
pub(super) mod gateway;
pub(super) mod mcp;
mod mcp_login;
