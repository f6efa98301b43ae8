//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), JSON and SSE.

use crate::retry::{Attempt, with_retries};
use crate::types::{ChatMessage, ChatRequest, LlmError, ModelProvider, ModelReply, ModelToolCall, ProviderConfig, Role, TextSink};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub struct OpenAiChat {
    config: ProviderConfig,
    http: reqwest::Client,
    url: String,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat").field("url", &self.url).field("model", &self.config.model).finish()
    }
}

impl OpenAiChat {
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(16)
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| LlmError::Transport(e.to_string()))?;
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        Ok(Self { config, http, url })
    }

    fn api_key(&self) -> Result<Option<String>, LlmError> {
        match &self.config.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
                _ => Err(LlmError::MissingApiKey { var: var.clone() }),
            },
        }
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let messages: Vec<WireMessage<'_>> = request.messages.iter().map(WireMessage::from).collect();
        let mut body = json!({ "model": self.config.model, "messages": messages, "stream": self.config.stream });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                .collect();
        }
        body
    }

    async fn attempt(&self, body: &Value, key: Option<&str>, on_text: Option<&TextSink>) -> Attempt {
        let mut request = self.http.post(&self.url).json(body).timeout(self.config.request_timeout);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) if error.is_timeout() => return Attempt::Retry(LlmError::Timeout, None),
            Err(error) => return Attempt::Retry(LlmError::Transport(error.to_string()), None),
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = crate::retry::retry_after(response.headers());
            let mut text = response.text().await.unwrap_or_default();
            if text.len() > 2000 {
                let mut cut = 2000;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            let error = LlmError::Status { status: status.as_u16(), body: text };
            return if status.as_u16() == 429 || status.is_server_error() {
                Attempt::Retry(error, retry_after)
            } else {
                Attempt::Fail(error)
            };
        }
        let result = if self.config.stream { read_stream(response, on_text).await } else { read_json(response).await };
        match result {
            Ok(reply) => Attempt::Done(reply),
            Err(LlmError::Timeout) => Attempt::Retry(LlmError::Timeout, None),
            Err(error) => Attempt::Fail(error),
        }
    }
}

impl ModelProvider for OpenAiChat {
    fn complete<'a>(&'a self, request: &'a ChatRequest, on_text: Option<&'a TextSink>) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(async move {
            let key = self.api_key()?;
            let body = self.body(request);
            with_retries(&self.config, || self.attempt(&body, key.as_deref(), on_text)).await
        })
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
    #[serde(default)]
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
    #[serde(default)]
    tool_calls: Vec<WireCall>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: String,
}

fn decode_error(error: reqwest::Error) -> LlmError {
    if error.is_timeout() { LlmError::Timeout } else { LlmError::Decode(error.to_string()) }
}

async fn read_json(response: reqwest::Response) -> Result<ModelReply, LlmError> {
    let bytes = response.bytes().await.map_err(decode_error)?;
    let completion: Completion = serde_json::from_slice(&bytes).map_err(|e| LlmError::Decode(e.to_string()))?;
    let choice = completion.choices.into_iter().next().ok_or_else(|| LlmError::Decode("the answer has no choices".into()))?;
    Ok(ModelReply {
        text: choice.message.content.unwrap_or_default(),
        tool_calls: choice
            .message
            .tool_calls
            .into_iter()
            .map(|c| ModelToolCall { id: c.id, name: c.function.name, arguments: c.function.arguments })
            .collect(),
        finish_reason: choice.finish_reason,
    })
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<DeltaCall>,
}

#[derive(Deserialize)]
struct DeltaCall {
    #[serde(default)]
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
async fn read_stream(response: reqwest::Response, on_text: Option<&TextSink>) -> Result<ModelReply, LlmError> {
    let mut events = response.bytes_stream().eventsource();
    let mut text = String::new();
    let mut calls: BTreeMap<usize, ModelToolCall> = BTreeMap::new();
    let mut finish_reason: Option<String> = None;
    let mut done = false;
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(_) => break,
        };
        if event.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        if !event.event.is_empty() && event.event != "message" {
            continue;
        }
        let Ok(chunk) = serde_json::from_str::<Chunk>(&event.data) else { continue };
        for choice in chunk.choices {
            if let Some(piece) = choice.delta.content.filter(|p| !p.is_empty()) {
                if let Some(sink) = on_text {
                    sink(&piece);
                }
                text.push_str(&piece);
            }
            for delta in choice.delta.tool_calls {
                let call = calls.entry(delta.index).or_insert_with(|| ModelToolCall {
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
                finish_reason = choice.finish_reason;
            }
        }
    }
    if !done && finish_reason.is_none() {
        return Err(LlmError::StreamCut {
            text_so_far: text,
            incomplete_tool_calls: calls.into_values().map(|c| c.name).collect(),
        });
    }
    Ok(ModelReply { text, tool_calls: calls.into_values().collect(), finish_reason })
}
