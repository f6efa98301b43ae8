//! Any MCP client whose servers run through `airlock mcp-proxy --name NAME` (Cursor, VS Code,
//! Claude Desktop once connected): no hook and no config Airlock writes; its calls name the
//! proxied server as their source, and the UI shows the client's own name when it gave one.

use crate::Agent;

/// An MCP client through the proxy ([`airlock_core::MCP_CLIENT`]).
#[derive(Debug, Clone, Copy)]
pub struct McpClient;

impl Agent for McpClient {
    fn name(&self) -> &'static str {
        airlock_core::MCP_CLIENT
    }

    fn display_name(&self) -> &'static str {
        "MCP client"
    }
}

/// `connect` does not connect it: its client's own config names `airlock mcp-proxy`.
#[cfg(feature = "connect")]
impl crate::connect::Connectable for McpClient {}
