//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), JSON and SSE.

use crate::retry::{Attempt, with_retries};
use crate::types::{ChatMessage, ChatRequest, LlmError, ModelProvider, ModelReply, ModelToolCall, ProviderConfig, Role, TextSink};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long to keep reading after `[DONE]` for the end of the body, so the connection can go
/// back to the pool instead of being closed.
const DRAIN_AFTER_DONE: Duration = Duration::from_millis(250);

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
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        let mut builder = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(64)
            .pool_idle_timeout(Duration::from_secs(90))
            .connect_timeout(config.request_timeout.min(Duration::from_secs(10)));
        if is_loopback(&url) {
            // A local model server is never behind the HTTP(S)_PROXY of the environment.
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| LlmError::Transport(describe(&e)))?;
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
        let timeout = self.config.request_timeout;
        let mut request = self.http.post(&self.url).json(body);
        request = if self.config.stream {
            // A stream may rightly take longer than `timeout` in all; it is bounded instead by
            // `timeout` for the headers and then by `timeout` of silence between events.
            request.header(reqwest::header::ACCEPT, "text/event-stream")
        } else {
            request.timeout(timeout)
        };
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = match tokio::time::timeout(timeout, request.send()).await {
            Err(_) => return Attempt::Retry(LlmError::Timeout, None),
            Ok(Ok(response)) => response,
            Ok(Err(error)) if error.is_timeout() => return Attempt::Retry(LlmError::Timeout, None),
            Ok(Err(error)) => return Attempt::Retry(LlmError::Transport(describe(&error)), None),
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = crate::retry::retry_after(response.headers());
            let mut text = match tokio::time::timeout(timeout, response.text()).await {
                Ok(Ok(text)) => text,
                _ => String::new(),
            };
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
        let is_event_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        let result = if self.config.stream && is_event_stream {
            read_stream(response, on_text, timeout).await
        } else {
            // Also what a server that ignores `"stream": true` answers.
            let reply = match tokio::time::timeout(timeout, read_json(response)).await {
                Ok(reply) => reply,
                Err(_) => Err(LlmError::Timeout),
            };
            if let (Ok(reply), Some(sink), true) = (&reply, on_text, self.config.stream)
                && !reply.text.is_empty()
            {
                sink(&reply.text);
            }
            reply
        };
        match result {
            Ok(reply) => Attempt::Done(reply),
            // Only a whole JSON body fails this way: nothing was passed on yet, so a retry is safe.
            Err(error @ (LlmError::Timeout | LlmError::Transport(_))) => Attempt::Retry(error, None),
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
    #[serde(default, deserialize_with = "null_as_default")]
    choices: Vec<Choice>,
}

/// Reads `null` as the default, as `#[serde(default)]` does a missing field: OpenAI-compatible
/// servers differ on whether an absent value is left out or sent as `null`.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
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

/// A reqwest error with its causes ("error sending request…: client error (Connect): tcp
/// connect error: Connection refused"): the top level alone rarely says what went wrong.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn is_loopback(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else { return false };
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A body that breaks off is a transport failure (worth a retry), not a decoding one.
fn body_error(error: reqwest::Error) -> LlmError {
    if error.is_timeout() { LlmError::Timeout } else { LlmError::Transport(describe(&error)) }
}

async fn read_json(response: reqwest::Response) -> Result<ModelReply, LlmError> {
    let bytes = response.bytes().await.map_err(body_error)?;
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
/// `idle` bounds the silence between two events; a stream quiet for longer counts as cut.
async fn read_stream(response: reqwest::Response, on_text: Option<&TextSink>, idle: Duration) -> Result<ModelReply, LlmError> {
    let mut events = response.bytes_stream().eventsource();
    let mut text = String::new();
    let mut calls: BTreeMap<usize, ModelToolCall> = BTreeMap::new();
    let mut finish_reason: Option<String> = None;
    let mut done = false;
    loop {
        let event = match tokio::time::timeout(idle, events.next()).await {
            Err(_) => {
                tracing::warn!(idle_ms = idle.as_millis() as u64, "model stream went silent; treating it as ended");
                break;
            }
            Ok(None) => break,
            Ok(Some(Ok(event))) => event,
            Ok(Some(Err(error))) => {
                tracing::warn!(%error, "model stream broke off");
                break;
            }
        };
        if event.data.trim() == "[DONE]" {
            done = true;
            // Read the end of the body so the connection is reused rather than closed.
            let _ = tokio::time::timeout(DRAIN_AFTER_DONE, async { while events.next().await.is_some() {} }).await;
            break;
        }
        if !event.event.is_empty() && event.event != "message" {
            continue;
        }
        let chunk = match serde_json::from_str::<Chunk>(&event.data) {
            Ok(chunk) => chunk,
            Err(error) => {
                tracing::warn!(%error, data = %event.data, "ignoring a stream event that is not a completion chunk");
                continue;
            }
        };
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            tracing::warn!(%error, "the provider reported an error inside the stream");
        }
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
