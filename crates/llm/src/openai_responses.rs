//! OpenAI Responses API (`POST {base}/responses`), JSON and SSE, with hosted remote MCP tools.
//!
//! Follows the OpenAI API reference "Responses" (create a response, the response object and its
//! output items, <https://platform.openai.com/docs/api-reference/responses>), "Streaming events"
//! (<https://platform.openai.com/docs/api-reference/responses-streaming>) and the guide "Remote
//! MCP" (<https://platform.openai.com/docs/guides/tools-remote-mcp>): a hosted MCP tool with
//! `require_approval` makes the provider emit an `mcp_approval_request` output item
//! `{id, server_label, name, arguments}` and wait; the answer is an input item
//! `mcp_approval_response {approval_request_id, approve, reason}` on the next request, after
//! which the provider runs the tool itself and reports an `mcp_call` item.
//!
//! The conversation is sent whole every time (no `previous_response_id`), so the approval
//! request item is replayed before its answer.

use crate::transport::{Auth, Flow, StreamDecoder, Transport, WireFormat, parse_event};
use crate::types::{
    ChatRequest, LlmError, ModelProvider, ModelReply, ModelToolCall, ProviderApprovalRequest,
    ProviderConfig, ProviderToolOutcome, Role, TextSink,
};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// A remote MCP server the provider calls itself (`{"type": "mcp", ...}` in `tools`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostedMcpTool {
    pub server_label: String,
    pub server_url: String,
    /// `"always"`, `"never"`, or the API's object form; Airlock's default is `"always"`.
    #[serde(default = "always")]
    pub require_approval: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
}

fn always() -> Value {
    json!("always")
}

pub struct OpenAiResponses {
    transport: Transport,
    hosted_mcp: Vec<HostedMcpTool>,
}

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiResponses")
            .field("url", &self.transport.url)
            .field("model", &self.transport.config.model)
            .finish()
    }
}

impl OpenAiResponses {
    pub fn new(config: ProviderConfig, hosted_mcp: Vec<HostedMcpTool>) -> Result<Self, LlmError> {
        Ok(Self {
            transport: Transport::new(config, "/responses", Auth::Bearer, Vec::new())?,
            hosted_mcp,
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut instructions = Vec::new();
        let mut input = Vec::new();
        for message in &request.messages {
            let text = message.content.as_deref().unwrap_or_default();
            match message.role {
                Role::System => instructions.push(text),
                Role::User => {
                    input.push(json!({"type": "message", "role": "user", "content": text}))
                }
                Role::Assistant => {
                    if !text.is_empty() {
                        input
                            .push(json!({"type": "message", "role": "assistant", "content": text}));
                    }
                    for call in &message.tool_calls {
                        input.push(json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}));
                    }
                    for asked in &message.approval_requests {
                        input.push(json!({
                            "type": "mcp_approval_request", "id": asked.id, "server_label": asked.server_label,
                            "name": asked.name, "arguments": asked.arguments,
                        }));
                    }
                }
                Role::Tool => {
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    match &message.approval {
                        Some(answer) => {
                            let mut item = json!({"type": "mcp_approval_response", "approval_request_id": id, "approve": answer.approve});
                            if let Some(reason) = &answer.reason {
                                item["reason"] = json!(reason);
                            }
                            input.push(item);
                            if let Some(ran) = &answer.outcome {
                                input.push(json!({
                                    "type": "mcp_call", "id": ran.id, "server_label": ran.server_label, "name": ran.name,
                                    "arguments": ran.arguments, "output": ran.output, "error": ran.error,
                                    "approval_request_id": ran.approval_request_id,
                                }));
                            }
                        }
                        None => input.push(
                            json!({"type": "function_call_output", "call_id": id, "output": text}),
                        ),
                    }
                }
            }
        }
        let config = &self.transport.config;
        let mut body = json!({ "model": config.model, "input": input, "stream": config.stream });
        if !instructions.is_empty() {
            body["instructions"] = json!(instructions.join("\n\n"));
        }
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": false}))
            .collect();
        for hosted in &self.hosted_mcp {
            let mut tool = json!({
                "type": "mcp", "server_label": hosted.server_label, "server_url": hosted.server_url,
                "require_approval": hosted.require_approval,
            });
            if let Some(allowed) = &hosted.allowed_tools {
                tool["allowed_tools"] = json!(allowed);
            }
            tools.push(tool);
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        body
    }
}

impl ModelProvider for OpenAiResponses {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_text: Option<&'a TextSink>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(async move {
            self.transport
                .complete(&self.body(request), &ResponsesWire, on_text)
                .await
        })
    }
}

struct ResponsesWire;

impl WireFormat for ResponsesWire {
    fn decode_json(&self, bytes: &[u8]) -> Result<ModelReply, LlmError> {
        let response: Value =
            serde_json::from_slice(bytes).map_err(|e| LlmError::Decode(e.to_string()))?;
        if !response.is_object() {
            return Err(LlmError::Decode(
                "the answer is not a response object".into(),
            ));
        }
        reply_of(&response)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder + Send> {
        Box::new(EventReader::default())
    }
}

fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The reply in a whole response object (`status`, `output`, `error`).
fn reply_of(response: &Value) -> Result<ModelReply, LlmError> {
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    if status == "failed" {
        return Err(LlmError::Reported(error_message(response.get("error"))));
    }
    let mut reply = ModelReply::default();
    for item in response
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        add_item(&mut reply, item);
    }
    reply.finish_reason = Some(match status {
        "incomplete" => "incomplete".to_string(),
        _ if !reply.tool_calls.is_empty() || !reply.approval_requests.is_empty() => {
            "tool_calls".to_string()
        }
        _ => "stop".to_string(),
    });
    Ok(reply)
}

fn error_message(error: Option<&Value>) -> String {
    match error {
        Some(error) if error.get("message").is_some() => {
            let code = error
                .get("code")
                .and_then(Value::as_str)
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            format!("{}{code}", str_of(error, "message"))
        }
        Some(other) if !other.is_null() => other.to_string(),
        _ => "the response failed without a message".into(),
    }
}

/// Adds one output item; item types Airlock does not use (reasoning, `mcp_list_tools`, …) are
/// skipped.
fn add_item(reply: &mut ModelReply, item: &Value) {
    match item.get("type").and_then(Value::as_str).unwrap_or_default() {
        "message" => {
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let key = match part.get("type").and_then(Value::as_str) {
                    Some("output_text") => "text",
                    Some("refusal") => "refusal",
                    _ => continue,
                };
                reply
                    .text
                    .push_str(part.get(key).and_then(Value::as_str).unwrap_or_default());
            }
        }
        "function_call" => reply.tool_calls.push(ModelToolCall {
            id: str_of(item, "call_id"),
            name: str_of(item, "name"),
            arguments: str_of(item, "arguments"),
        }),
        "mcp_approval_request" => reply.approval_requests.push(ProviderApprovalRequest {
            id: str_of(item, "id"),
            server_label: str_of(item, "server_label"),
            name: str_of(item, "name"),
            arguments: str_of(item, "arguments"),
        }),
        "mcp_call" => reply.provider_outcomes.push(ProviderToolOutcome {
            id: str_of(item, "id"),
            approval_request_id: item
                .get("approval_request_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            server_label: str_of(item, "server_label"),
            name: str_of(item, "name"),
            arguments: str_of(item, "arguments"),
            output: item
                .get("output")
                .and_then(Value::as_str)
                .map(str::to_string),
            error: item.get("error").filter(|e| !e.is_null()).cloned(),
        }),
        _ => {}
    }
}

/// The fields of a streaming event Airlock reads; the rest are ignored.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

/// Follows `response.output_item.added` / `.done`, text and argument deltas, until
/// `response.completed` (or `response.incomplete`). An item never reported done belongs to a
/// cut stream, and then nothing of the reply is used.
#[derive(Default)]
struct EventReader {
    items: BTreeMap<u64, Value>,
    done: BTreeSet<u64>,
    text: String,
    reply: Option<ModelReply>,
}

impl StreamDecoder for EventReader {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        on_text: Option<&TextSink>,
    ) -> Result<Flow, LlmError> {
        let Some(event) = parse_event::<Event>(data) else {
            return Ok(Flow::Continue);
        };
        let index = event.output_index.unwrap_or_default();
        match event.kind.as_str() {
            "response.output_item.added" => {
                if let Some(item) = event.item {
                    self.items.insert(index, item);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    self.items.insert(index, item);
                    self.done.insert(index);
                }
            }
            "response.output_text.delta" => {
                if let Some(piece) = event
                    .delta
                    .as_ref()
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                {
                    if let Some(sink) = on_text {
                        sink(piece);
                    }
                    self.text.push_str(piece);
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(piece), Some(item)) = (
                    event.delta.as_ref().and_then(Value::as_str),
                    self.items.get_mut(&index),
                ) {
                    let so_far = format!(
                        "{}{piece}",
                        item.get("arguments")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                    );
                    item["arguments"] = json!(so_far);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = event.response.unwrap_or_default();
                let has_output = response
                    .get("output")
                    .and_then(Value::as_array)
                    .is_some_and(|o| !o.is_empty());
                let reply = if has_output {
                    reply_of(&response)?
                } else {
                    let output: Vec<Value> = self
                        .done
                        .iter()
                        .filter_map(|i| self.items.get(i).cloned())
                        .collect();
                    let status = response
                        .get("status")
                        .cloned()
                        .unwrap_or(json!("completed"));
                    reply_of(&json!({"status": status, "output": output}))?
                };
                self.reply = Some(reply);
                return Ok(Flow::End);
            }
            "response.failed" => {
                return Err(LlmError::Reported(error_message(
                    event.response.as_ref().and_then(|r| r.get("error")),
                )));
            }
            "error" => {
                return Err(LlmError::Reported(
                    event.message.unwrap_or_else(|| data.to_string()),
                ));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self: Box<Self>, ended: bool) -> Result<ModelReply, LlmError> {
        match self.reply {
            Some(reply) if ended => Ok(reply),
            _ => Err(LlmError::StreamCut {
                text_so_far: self.text,
                incomplete_tool_calls: self
                    .items
                    .iter()
                    .filter(|(index, item)| {
                        !self.done.contains(index)
                            && matches!(
                                item.get("type").and_then(Value::as_str),
                                Some("function_call" | "mcp_approval_request")
                            )
                    })
                    .map(|(_, item)| str_of(item, "name"))
                    .collect(),
            }),
        }
    }
}
