//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), JSON and SSE.

use crate::transport::{
    Auth, Flow, StreamDecoder, Transport, WireFormat, null_as_default, parse_event,
};
use crate::types::{
    ChatMessage, ChatRequest, LlmError, ModelProvider, ModelReply, ModelToolCall, ProviderConfig,
    Role, TextSink,
};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub struct OpenAiChat {
    transport: Transport,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("url", &self.transport.url)
            .field("model", &self.transport.config.model)
            .finish()
    }
}

impl OpenAiChat {
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        Ok(Self {
            transport: Transport::new(config, "/chat/completions", Auth::Bearer, Vec::new())?,
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        // Answers to a provider's own approval requests have no place in this wire format.
        let messages: Vec<WireMessage<'_>> = request
            .messages
            .iter()
            .filter(|m| m.approval.is_none())
            .map(WireMessage::from)
            .collect();
        let config = &self.transport.config;
        let mut body =
            json!({ "model": config.model, "messages": messages, "stream": config.stream });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                .collect();
        }
        body
    }
}

impl ModelProvider for OpenAiChat {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_text: Option<&'a TextSink>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(async move {
            self.transport
                .complete(&self.body(request), &ChatWire, on_text)
                .await
        })
    }
}

struct ChatWire;

impl WireFormat for ChatWire {
    fn decode_json(&self, bytes: &[u8]) -> Result<ModelReply, LlmError> {
        read_json(bytes)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder + Send> {
        Box::new(ChunkReader::default())
    }
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> From<&'a ChatMessage> for WireMessage<'a> {
    fn from(m: &'a ChatMessage) -> Self {
        Self {
            role: m.role,
            content: m.content.as_deref(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect(),
            tool_call_id: m.tool_call_id.as_deref(),
        }
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default, deserialize_with = "null_as_default")]
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: WireReply,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireReply {
    #[serde(default)]
    content: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    tool_calls: Vec<WireCall>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default, deserialize_with = "null_as_default")]
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default, deserialize_with = "null_as_default")]
    name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    arguments: String,
}

fn read_json(bytes: &[u8]) -> Result<ModelReply, LlmError> {
    let completion: Completion =
        serde_json::from_slice(bytes).map_err(|e| LlmError::Decode(e.to_string()))?;
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::Decode("the answer has no choices".into()))?;
    Ok(ModelReply {
        text: choice.message.content.unwrap_or_default(),
        tool_calls: choice
            .message
            .tool_calls
            .into_iter()
            .map(|c| ModelToolCall {
                id: c.id,
                name: c.function.name,
                arguments: c.function.arguments,
            })
            .collect(),
        finish_reason: choice.finish_reason,
        ..ModelReply::default()
    })
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default, deserialize_with = "null_as_default")]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default, deserialize_with = "null_as_default")]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    tool_calls: Vec<DeltaCall>,
}

#[derive(Deserialize)]
struct DeltaCall {
    #[serde(default, deserialize_with = "null_as_default")]
    index: usize,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<DeltaFunction>,
}

#[derive(Deserialize)]
struct DeltaFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// Reads `chat.completion.chunk` events until `[DONE]`, joining tool call fragments by index.
/// A stream that ends before a finish reason or `[DONE]` is cut: nothing of it is used.
#[derive(Default)]
struct ChunkReader {
    text: String,
    calls: BTreeMap<usize, ModelToolCall>,
    finish_reason: Option<String>,
}

impl StreamDecoder for ChunkReader {
    fn event(
        &mut self,
        name: &str,
        data: &str,
        on_text: Option<&TextSink>,
    ) -> Result<Flow, LlmError> {
        if data.trim() == "[DONE]" {
            return Ok(Flow::End);
        }
        if !name.is_empty() {
            return Ok(Flow::Continue);
        }
        let Some(chunk) = parse_event::<Chunk>(data) else {
            return Ok(Flow::Continue);
        };
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            tracing::warn!(%error, "the provider reported an error inside the stream");
        }
        for choice in chunk.choices {
            if let Some(piece) = choice.delta.content.filter(|p| !p.is_empty()) {
                if let Some(sink) = on_text {
                    sink(&piece);
                }
                self.text.push_str(&piece);
            }
            for delta in choice.delta.tool_calls {
                let call = self
                    .calls
                    .entry(delta.index)
                    .or_insert_with(|| ModelToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(function) = delta.function {
                    if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                        call.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(self: Box<Self>, ended: bool) -> Result<ModelReply, LlmError> {
        let ChunkReader {
            text,
            calls,
            finish_reason,
        } = *self;
        if !ended && finish_reason.is_none() {
            return Err(LlmError::StreamCut {
                text_so_far: text,
                incomplete_tool_calls: calls.into_values().map(|c| c.name).collect(),
            });
        }
        Ok(ModelReply {
            text,
            tool_calls: calls.into_values().collect(),
            finish_reason,
            ..ModelReply::default()
        })
    }
}
