//! One ready MCP server as a [`ToolSource`]: calls go out with a timeout, and a dropped call
//! (the turn was cancelled, or the timeout hit) sends `notifications/cancelled`.

use crate::DEFAULT_TOOL_TIMEOUT_SECS;
use crate::client::InFlight;
use airlock_core::ToolDef;
use airlock_engine::Engine;
use airlock_engine::tools::{CallContext, ToolError, ToolSource};
use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use std::time::Duration;

pub(crate) struct McpTools {
    pub engine: Engine,
    pub server: String,
    pub peer: Peer<RoleClient>,
    pub tools: Vec<ToolDef>,
    pub in_flight: InFlight,
}

/// Keeps a call in the server's in-flight list while it runs.
struct InFlightGuard<'a> {
    list: &'a InFlight,
    context: CallContext,
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(position) = list.iter().rposition(|c| c == &self.context) {
            list.remove(position);
        }
    }
}

impl McpTools {
    fn timeout(&self) -> Duration {
        let seconds = self
            .engine
            .setting(airlock_core::Setting::ToolTimeoutSecs)
            .ok()
            .flatten()
            .and_then(|v| v.as_u64())
            .filter(|s| *s > 0)
            .unwrap_or(DEFAULT_TOOL_TIMEOUT_SECS);
        Duration::from_secs(seconds)
    }

    async fn run(
        &self,
        context: &CallContext,
        tool: &str,
        args: &Value,
    ) -> Result<Value, ToolError> {
        let Value::Object(arguments) = args.clone() else {
            return Err(ToolError::new("arguments must be a JSON object"));
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.clone());
        let _guard = InFlightGuard {
            list: &self.in_flight,
            context: context.clone(),
        };
        let timeout = self.timeout();
        // `call_tool` cancels the request on the server when its future is dropped.
        match tokio::time::timeout(timeout, self.peer.call_tool(params)).await {
            Err(_) => Err(ToolError::new(format!(
                "the server '{}' did not answer within {} s; the call was cancelled",
                self.server,
                timeout.as_secs()
            ))),
            Ok(Err(ServiceError::TransportClosed)) | Ok(Err(ServiceError::TransportSend(_))) => {
                Err(ToolError::new(format!(
                    "the server '{}' stopped during the call (it is being restarted); the call was not retried",
                    self.server
                )))
            }
            Ok(Err(ServiceError::McpError(error))) => Err(ToolError::new(format!(
                "the server '{}' refused the call: {}",
                self.server, error.message
            ))),
            Ok(Err(error)) => Err(ToolError::new(format!(
                "the call to '{}' failed: {error}",
                self.server
            ))),
            Ok(Ok(result)) => result_value(result),
        }
    }
}

/// What the model reads: the text of the result, else its structured content, else the
/// content blocks as JSON. A result flagged as an error is an error.
fn result_value(result: CallToolResult) -> Result<Value, ToolError> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    let all_text = texts.len() == result.content.len() && !texts.is_empty();
    let value = if all_text {
        Value::String(texts.join("\n"))
    } else if let Some(structured) = &result.structured_content {
        structured.clone()
    } else {
        serde_json::to_value(&result.content).unwrap_or(Value::Null)
    };
    if result.is_error == Some(true) {
        let message = match &value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        return Err(ToolError::new(message));
    }
    Ok(value)
}

impl ToolSource for McpTools {
    fn tools(&self) -> Vec<ToolDef> {
        self.tools.clone()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let context = CallContext::default();
            self.run(&context, tool, args).await
        })
    }

    fn call_in<'a>(
        &'a self,
        context: &'a CallContext,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(self.run(context, tool, args))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    #[test]
    fn the_model_reads_text_structured_content_or_the_blocks() {
        let text = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        assert_eq!(result_value(text).unwrap(), json!("a\nb"));
        let mut structured = CallToolResult::success(vec![]);
        structured.structured_content = Some(json!({"sum": 3}));
        assert_eq!(result_value(structured).unwrap(), json!({"sum": 3}));
        let error = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        assert_eq!(result_value(error).unwrap_err().message, "no such file");
    }
}
