//! Switchyard's bridge: the gateways an outside agent calls, for its model
//! (`gateway`, OpenAI- and Anthropic-shaped) and for its tools
//! (`mcp_gateway`, an MCP server), each call a call of the session.

pub mod gateway;
pub mod mcp_gateway;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{model, text, tool};
use switchyard_engine::{engine, strategy};
