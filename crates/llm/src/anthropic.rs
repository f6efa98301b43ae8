//! Anthropic Messages API (`POST {base}/messages`), JSON and SSE.
//!
//! Follows Anthropic's API reference "Messages" (<https://docs.anthropic.com/en/api/messages>:
//! `x-api-key` and `anthropic-version` headers, `system`, `messages` of `text` / `tool_use` /
//! `tool_result` blocks, `tools` with `input_schema`, `stop_reason`), the guide "Tool use"
//! (a failed or refused call is a `tool_result` with `is_error: true`) and "Streaming Messages"
//! (<https://docs.anthropic.com/en/docs/build-with-claude/streaming>: `message_start`,
//! `content_block_start`, `content_block_delta` with `text_delta` / `input_json_delta`,
//! `content_block_stop`, `message_delta`, `message_stop`, `ping`, `error`; other event types
//! may be added and are to be ignored).

use crate::transport::{Auth, Flow, StreamDecoder, Transport, WireFormat, parse_event};
use crate::types::{
    ChatRequest, LlmError, ModelProvider, ModelReply, ModelToolCall, ProviderConfig, Role, TextSink,
};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The API version Airlock speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is Airlock's default.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub struct Anthropic {
    transport: Transport,
    max_tokens: u32,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("url", &self.transport.url)
            .field("model", &self.transport.config.model)
            .finish()
    }
}

impl Anthropic {
    pub fn new(config: ProviderConfig, max_tokens: Option<u32>) -> Result<Self, LlmError> {
        let transport = Transport::new(
            config,
            "/messages",
            Auth::Header("x-api-key"),
            vec![("anthropic-version", ANTHROPIC_VERSION)],
        )?;
        Ok(Self {
            transport,
            max_tokens: max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut system = Vec::new();
        // (role, content blocks); consecutive blocks of one role are merged into one message,
        // as the API wants roles to alternate (tool results travel in a user message).
        let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
        let mut push = |role: &'static str, block: Value| match messages.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => messages.push((role, vec![block])),
        };
        for message in &request.messages {
            let text = message.content.as_deref().unwrap_or_default();
            match message.role {
                Role::System => system.push(text),
                Role::User => push("user", json!({"type": "text", "text": text})),
                Role::Assistant => {
                    if !text.is_empty() {
                        push("assistant", json!({"type": "text", "text": text}));
                    }
                    for call in &message.tool_calls {
                        let input = serde_json::from_str::<Value>(&call.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({}));
                        push(
                            "assistant",
                            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                        );
                    }
                }
                // Answers to another provider's approval requests have no place here.
                Role::Tool if message.approval.is_some() => {}
                Role::Tool => {
                    let mut block = json!({"type": "tool_result", "tool_use_id": message.tool_call_id, "content": text});
                    if message.is_error {
                        block["is_error"] = json!(true);
                    }
                    push("user", block);
                }
            }
        }
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let config = &self.transport.config;
        let mut body = json!({ "model": config.model, "max_tokens": self.max_tokens, "messages": messages, "stream": config.stream });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        body
    }
}

impl ModelProvider for Anthropic {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_text: Option<&'a TextSink>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(async move {
            self.transport
                .complete(&self.body(request), &MessagesWire, on_text)
                .await
        })
    }
}

struct MessagesWire;

impl WireFormat for MessagesWire {
    fn decode_json(&self, bytes: &[u8]) -> Result<ModelReply, LlmError> {
        let message: Value =
            serde_json::from_slice(bytes).map_err(|e| LlmError::Decode(e.to_string()))?;
        if message.get("type").and_then(Value::as_str) == Some("error") {
            return Err(LlmError::Reported(error_message(&message)));
        }
        let content = message
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::Decode("the answer has no content".into()))?;
        let mut reply = ModelReply {
            finish_reason: message
                .get("stop_reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..ModelReply::default()
        };
        for block in content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => reply.text.push_str(
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                ),
                Some("tool_use") => reply.tool_calls.push(ModelToolCall {
                    id: text_of(block, "id"),
                    name: text_of(block, "name"),
                    arguments: block
                        .get("input")
                        .map_or_else(|| "{}".to_string(), Value::to_string),
                }),
                _ => {}
            }
        }
        Ok(reply)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder + Send> {
        Box::new(EventReader::default())
    }
}

fn text_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn error_message(event: &Value) -> String {
    let error = event.get("error").unwrap_or(event);
    format!("{} ({})", text_of(error, "message"), text_of(error, "type"))
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    content_block: Option<Value>,
    #[serde(default)]
    delta: Option<Value>,
}

/// A `tool_use` block being streamed.
struct ToolBlock {
    id: String,
    name: String,
    /// `input` of `content_block_start` (normally `{}`), used when no `input_json_delta` came.
    start_input: Value,
    json: String,
}

/// Joins text and `input_json_delta` fragments by block index until `message_stop`. A stream
/// that ends before it is cut, and every call in it is incomplete.
#[derive(Default)]
struct EventReader {
    text: String,
    tools: BTreeMap<u64, ToolBlock>,
    stopped: BTreeSet<u64>,
    stop_reason: Option<String>,
}

impl StreamDecoder for EventReader {
    fn event(
        &mut self,
        name: &str,
        data: &str,
        on_text: Option<&TextSink>,
    ) -> Result<Flow, LlmError> {
        let Some(event) = parse_event::<Event>(data) else {
            return Ok(Flow::Continue);
        };
        let kind = if event.kind.is_empty() {
            name
        } else {
            event.kind.as_str()
        };
        let index = event.index.unwrap_or_default();
        match kind {
            "content_block_start" => {
                if let Some(block) = event
                    .content_block
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                {
                    self.tools.insert(
                        index,
                        ToolBlock {
                            id: text_of(&block, "id"),
                            name: text_of(&block, "name"),
                            start_input: block.get("input").cloned().unwrap_or_else(|| json!({})),
                            json: String::new(),
                        },
                    );
                }
            }
            "content_block_delta" => {
                let delta = event.delta.unwrap_or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(piece) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|p| !p.is_empty())
                        {
                            if let Some(sink) = on_text {
                                sink(piece);
                            }
                            self.text.push_str(piece);
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(tool) = self.tools.get_mut(&index) {
                            tool.json.push_str(
                                delta
                                    .get("partial_json")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default(),
                            );
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                self.stopped.insert(index);
            }
            "message_delta" => {
                if let Some(reason) = event
                    .delta
                    .as_ref()
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_string());
                }
            }
            "message_stop" => return Ok(Flow::End),
            "error" => {
                let event: Value = serde_json::from_str(data).unwrap_or_default();
                return Err(LlmError::Reported(error_message(&event)));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self: Box<Self>, ended: bool) -> Result<ModelReply, LlmError> {
        let EventReader {
            text,
            tools,
            stopped,
            stop_reason,
        } = *self;
        if !ended || tools.keys().any(|index| !stopped.contains(index)) {
            return Err(LlmError::StreamCut {
                text_so_far: text,
                incomplete_tool_calls: tools
                    .into_iter()
                    .filter(|(i, _)| !stopped.contains(i))
                    .map(|(_, t)| t.name)
                    .collect(),
            });
        }
        let tool_calls = tools
            .into_values()
            .map(|tool| ModelToolCall {
                id: tool.id,
                name: tool.name,
                arguments: if tool.json.trim().is_empty() {
                    tool.start_input.to_string()
                } else {
                    tool.json
                },
            })
            .collect();
        Ok(ModelReply {
            text,
            tool_calls,
            finish_reason: stop_reason,
            ..ModelReply::default()
        })
    }
}
