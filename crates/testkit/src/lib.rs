//! A scripted OpenAI-compatible model server for tests and benchmarks: real HTTP on 127.0.0.1,
//! real wire format, every request recorded so a test can read what the model was sent.
//!
//! Wire format: the OpenAI Chat Completions API reference, "Create chat completion"
//! (`POST /v1/chat/completions`, <https://platform.openai.com/docs/api-reference/chat/create>):
//! - without `"stream": true` the answer is one `chat.completion` object
//!   (`choices[0].message` with `role`, `content` and, for tool calls, `tool_calls` of
//!   `{"id", "type": "function", "function": {"name", "arguments"}}`, plus `finish_reason`
//!   `"stop"` or `"tool_calls"` and `usage`);
//! - with `"stream": true` the answer is server-sent events (`Content-Type: text/event-stream`),
//!   one `data: {chat.completion.chunk}` event per delta, ended by `data: [DONE]`
//!   ("The chat completion chunk object"): the first delta carries the role, tool call deltas
//!   carry `index`, the first one per call `id`, `type` and `function.name` (with empty
//!   `arguments`), the later ones fragments of `function.arguments`; the last chunk has an empty
//!   delta and the `finish_reason`. With `stream_options.include_usage` a final chunk with empty
//!   `choices` carries `usage`, and the other chunks carry `"usage": null`;
//! - errors are the status code with `{"error": {"message", "type", "param", "code"}}`
//!   ("Error codes" guide), with a `Retry-After` header when scripted.
//!
//! Unknown request fields are ignored; `GET /v1/models` lists the one scripted model.

pub mod faults;
pub mod mcp_server;
pub mod newest_server;
pub mod oauth_server;
#[cfg(unix)]
pub mod postgres;
#[cfg(target_os = "linux")]
pub mod secret_service;
#[cfg(target_os = "linux")]
pub mod sni_host;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{Notify, oneshot};

/// The model id reported by `GET /v1/models` and used when a request names none.
pub const DEFAULT_MODEL: &str = "scripted";

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Assistant text answer (finish_reason "stop").
    Text(String),
    /// Assistant tool calls (finish_reason "tool_calls").
    ToolCalls(Vec<ScriptedCall>),
    /// An HTTP error status with optional Retry-After seconds and a JSON error body.
    Error {
        status: u16,
        retry_after: Option<u64>,
    },
    /// For streaming requests: send the given tool call's name and only the first half of its
    /// arguments, then close the connection without finish_reason or `[DONE]`. For non-streaming
    /// requests: close the connection without answering.
    CutStream(ScriptedCall),
    /// OpenAI Responses only: the provider asks before running hosted MCP tools
    /// (`mcp_approval_request` output items). Other wire formats answer 500.
    McpApprovalRequests(Vec<ScriptedApproval>),
    /// OpenAI Responses only: the provider ran a hosted MCP tool (an `mcp_call` output item)
    /// and then answered `text`. Other wire formats answer 500.
    McpCall { call: ScriptedMcpCall, text: String },
}

/// An `mcp_approval_request` the scripted provider sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedApproval {
    pub id: String,
    pub server_label: String,
    pub name: String,
    /// JSON text of the arguments.
    pub arguments: String,
}

/// An `mcp_call` the scripted provider reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedMcpCall {
    pub approval_request_id: Option<String>,
    pub server_label: String,
    pub name: String,
    pub arguments: String,
    pub output: Option<String>,
    pub error: Option<String>,
}

/// One scripted tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    /// Sent verbatim as `function.arguments`; may be invalid JSON on purpose.
    pub arguments: String,
}

/// The placeholder [`ScriptedCall::echoing_schema`] leaves in a call's arguments.
const SCHEMA_OF: &str = "$testkit_schema_of";

impl ScriptedCall {
    /// A call whose arguments are `args` serialized as JSON text.
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    /// A call whose argument `field` is the input schema of tool `shown`, exactly as the model
    /// was shown it in the request it answers (a model copying a schema it read), so a test can
    /// see what reached the model. A tool the request does not offer gives `null`.
    pub fn echoing_schema(
        id: impl Into<String>,
        name: impl Into<String>,
        field: &str,
        shown: &str,
    ) -> Self {
        Self::new(id, name, serde_json::json!({ field: { SCHEMA_OF: shown } }))
    }
}

/// The input schema of tool `name` as `request` offers it, in any wire format the scripted
/// model speaks (chat completions, Responses, Anthropic, Gemini).
fn offered_schema(request: &Value, name: &str) -> Option<Value> {
    let tools = request.get("tools")?.as_array()?;
    let declarations = tools.iter().flat_map(|tool| {
        let nested = tool
            .get("functionDeclarations")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let own = tool
            .get("function")
            .cloned()
            .unwrap_or_else(|| tool.clone());
        std::iter::once(own).chain(nested)
    });
    declarations
        .filter(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
        .find_map(|tool| {
            ["parameters", "input_schema", "parametersJsonSchema"]
                .iter()
                .find_map(|key| tool.get(*key).cloned())
        })
}

/// Fills in the schemas [`ScriptedCall::echoing_schema`] asks for, from the request answered.
fn fill_in_schemas(request: &Value, reply: Reply) -> Reply {
    let Reply::ToolCalls(calls) = reply else {
        return reply;
    };
    let filled = calls
        .into_iter()
        .map(|mut call| {
            if let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(&call.arguments) {
                let mut changed = false;
                for value in args.values_mut() {
                    if let Some(shown) = value.get(SCHEMA_OF).and_then(Value::as_str) {
                        *value = offered_schema(request, shown).unwrap_or(Value::Null);
                        changed = true;
                    }
                }
                if changed {
                    call.arguments = Value::Object(args).to_string();
                }
            }
            call
        })
        .collect();
    Reply::ToolCalls(filled)
}

/// What to answer once the queue is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Fallback {
    /// 500 with a JSON error "script exhausted".
    #[default]
    Exhausted,
    /// The benchmark loop: if the last message in the request has role "user", a call to
    /// `tool_name` with `args` (a fresh call id `call_<n>` each time); otherwise `Text("done")`.
    RoundTrip { tool_name: String, args: Value },
    /// For agents that make side calls on the same model (a title, a memory, a classifier;
    /// Qwen Code, Copilot CLI, Gemini CLI), which a positional script cannot foresee: `call`
    /// whenever the request offers its tool and holds no tool result yet; once it holds tool
    /// results, a text that repeats them ("Done. The tool said: …", so a test reads what the
    /// model was told); otherwise the text "ok". OpenAI chat completions and Gemini only.
    Smart { call: ScriptedCall },
}

/// Whether a request (chat completions, Responses or Anthropic Messages) offers a tool `name`.
fn offers_tool(request: &Value, name: &str) -> bool {
    request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools.iter().any(|tool| {
                tool.pointer("/function/name").and_then(Value::as_str) == Some(name)
                    || tool.get("name").and_then(Value::as_str) == Some(name)
            })
        })
}

/// Whether a request already carries a tool's result (in any of the three wire formats).
fn has_tool_result(request: &Value) -> bool {
    let items = request
        .get("messages")
        .or_else(|| request.get("input"))
        .and_then(Value::as_array);
    items.is_some_and(|items| {
        items.iter().any(|item| {
            item.get("role").and_then(Value::as_str) == Some("tool")
                || item.get("type").and_then(Value::as_str) == Some("function_call_output")
                || item
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|blocks| {
                        blocks
                            .iter()
                            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    })
        })
    })
}

pub(crate) struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    fallback: Fallback,
    /// `args` of a `RoundTrip` fallback, serialized once.
    fallback_args: String,
    requests: Mutex<Vec<Value>>,
    /// The headers of each request, in the same order, names lower-case.
    headers: Mutex<Vec<Vec<(String, String)>>>,
    arrived: Notify,
    /// Numbers responses (`chatcmpl-N`) and fallback calls (`call_N`).
    counter: AtomicU64,
    /// Thinking streamed before each chat-completions text answer ([`ScriptedModel::think`]).
    reasoning: Mutex<Option<String>>,
}

/// The running server. Dropping it shuts the server down.
pub struct ScriptedModel {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        // Graceful shutdown: stop accepting, close idle keep-alive connections, let answers in
        // flight finish (they are all finite).
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

impl ScriptedModel {
    /// Binds 127.0.0.1:0 and serves in a tokio task; once `replies` are used up every request
    /// gets a 500 "script exhausted". Must be called inside a tokio runtime.
    pub async fn start(replies: Vec<Reply>) -> std::io::Result<ScriptedModel> {
        Self::start_with(replies, Fallback::Exhausted).await
    }

    /// Like [`ScriptedModel::start`], answering with `fallback` once `replies` are used up.
    pub async fn start_with(
        replies: Vec<Reply>,
        fallback: Fallback,
    ) -> std::io::Result<ScriptedModel> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), replies, fallback).await
    }

    /// Like [`ScriptedModel::start_with`] on a chosen address.
    pub async fn start_on(
        addr: SocketAddr,
        replies: Vec<Reply>,
        fallback: Fallback,
    ) -> std::io::Result<ScriptedModel> {
        let fallback_args = match &fallback {
            Fallback::RoundTrip { args, .. } => args.to_string(),
            Fallback::Exhausted | Fallback::Smart { .. } => String::new(),
        };
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            fallback,
            fallback_args,
            requests: Mutex::new(Vec::new()),
            headers: Mutex::new(Vec::new()),
            arrived: Notify::new(),
            counter: AtomicU64::new(0),
            reasoning: Mutex::new(None),
        });
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        // Small SSE writes on loopback must not wait on Nagle + delayed ACK.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .route("/v1/responses", post(responses::create))
            .route("/v1/messages", post(anthropic::create))
            .route("/v1beta/models/{model_action}", post(gemini::create))
            .route("/v1/models", get(models))
            // What a test in another process reads back: every request body so far.
            .route("/testkit/requests", get(recorded_requests))
            .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
            .with_state(shared.clone());
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(ScriptedModel {
            shared,
            addr,
            shutdown: Some(shutdown),
        })
    }

    /// From now on every streamed chat-completions text answer is preceded by `reasoning` as
    /// `reasoning_content` deltas: a reasoning model's thinking, as DeepSeek's and Qwen's APIs
    /// send it.
    pub fn think(&self, reasoning: &str) {
        *lock(&self.shared.reasoning) = Some(reasoning.to_string());
    }

    /// The API base, e.g. `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends a reply to the queue.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// The Gemini API base (`GOOGLE_GEMINI_BASE_URL`), e.g. `http://127.0.0.1:PORT`.
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request body received (on any of the model endpoints; Gemini's `countTokens`
    /// excepted), in order, including ones
    /// answered with errors. A body that is not JSON is recorded as a JSON string of its text.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.requests).clone()
    }

    /// The headers of every request, in the order of [`ScriptedModel::requests`].
    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        lock(&self.shared.headers).clone()
    }

    /// Waits until at least `n` requests were received, up to `timeout`; returns them all, or an
    /// error saying how many arrived.
    pub async fn wait_for_requests(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<Value>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.arrived.notified();
            tokio::pin!(notified);
            // Register before checking so a request arriving in between is not missed.
            notified.as_mut().enable();
            {
                let requests = lock(&self.shared.requests);
                if requests.len() >= n {
                    return Ok(requests.clone());
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let requests = lock(&self.shared.requests);
                if requests.len() >= n {
                    return Ok(requests.clone());
                }
                return Err(format!(
                    "only {} of {n} requests arrived within {timeout:?}",
                    requests.len()
                ));
            }
        }
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

async fn models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{"id": DEFAULT_MODEL, "object": "model", "created": 1_700_000_000, "owned_by": "airlock-testkit"}]
    }))
}

/// What the handler needs from a request besides recording it.
struct Asked {
    stream: bool,
    include_usage: bool,
    model: String,
    prompt_tokens: u64,
}

fn asked(request: &Value, body_len: usize) -> Asked {
    Asked {
        stream: request
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        include_usage: request
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        model: request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_MODEL)
            .to_string(),
        prompt_tokens: (body_len as u64).div_ceil(4),
    }
}

/// Records a request and takes the reply for it: the next scripted one, else the fallback.
/// `last_is_user` says whether the request ends with the user's own words (for the fallback).
/// `Err` is the response to send at once (a body that is not JSON, an exhausted script).
/// The `stream` flag and `model` name of a request, as every wire format spells them.
pub(crate) fn stream_and_model(request: &Value) -> (bool, String) {
    let stream = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_string();
    (stream, model)
}

pub(crate) fn take_reply(
    shared: &Shared,
    headers: &HeaderMap,
    body: &Bytes,
    last_is_user: impl Fn(&Value) -> bool,
    smart: impl Fn(&Value, &ScriptedCall) -> Reply,
    error: impl Fn(u16, Option<u64>, &str) -> Response,
) -> Result<(Value, Reply, u64), Box<Response>> {
    let request: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    let valid = request.is_object();
    let user_last = last_is_user(&request);
    lock(&shared.requests).push(request.clone());
    lock(&shared.headers).push(
        headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
    );
    shared.arrived.notify_waiters();
    let n = shared.counter.fetch_add(1, Ordering::Relaxed) + 1;
    if !valid {
        return Err(Box::new(error(
            400,
            None,
            "request body is not a JSON object",
        )));
    }
    let scripted = lock(&shared.replies).pop_front();
    let reply = match scripted {
        Some(reply) => reply,
        None => match &shared.fallback {
            Fallback::Exhausted => return Err(Box::new(error(500, None, "script exhausted"))),
            Fallback::RoundTrip { tool_name, .. } if user_last => {
                Reply::ToolCalls(vec![ScriptedCall {
                    id: format!("call_{n}"),
                    name: tool_name.clone(),
                    arguments: shared.fallback_args.clone(),
                }])
            }
            Fallback::RoundTrip { .. } => Reply::Text("done".to_string()),
            Fallback::Smart { call } => smart(&request, call),
        },
    };
    let reply = fill_in_schemas(&request, reply);
    Ok((request, reply, n))
}

pub(crate) fn openai_error(status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let kind = if status == 429 {
        "rate_limit_error"
    } else if status >= 500 {
        "server_error"
    } else {
        "invalid_request_error"
    };
    error_response(status, retry_after, message, kind)
}

async fn completions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let last_is_user = |request: &Value| {
        request
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|messages| messages.last())
            .and_then(|message| message.get("role"))
            .and_then(Value::as_str)
            == Some("user")
    };
    let (request, reply, n) = match take_reply(
        &shared,
        &headers,
        &body,
        last_is_user,
        smart_chat,
        openai_error,
    ) {
        Ok(taken) => taken,
        Err(response) => return *response,
    };
    let asked = asked(&request, body.len());
    let out = Out {
        id: format!("chatcmpl-{n}"),
        created: now(),
        asked,
    };
    match reply {
        Reply::Error {
            status,
            retry_after,
        } => openai_error(
            status,
            retry_after,
            &format!("scripted error (HTTP {status})"),
        ),
        Reply::CutStream(call) if out.asked.stream => cut_stream(&out, &call),
        Reply::CutStream(_) => cut_connection(),
        Reply::Text(text) if out.asked.stream => {
            let reasoning = lock(&shared.reasoning).clone();
            sse(text_chunks(&out, reasoning.as_deref(), &text))
        }
        Reply::ToolCalls(calls) if out.asked.stream => sse(tool_chunks(&out, &calls)),
        Reply::Text(text) => json_response(out.completion(Some(&text), &[])),
        Reply::ToolCalls(calls) => json_response(out.completion(None, &calls)),
        Reply::McpApprovalRequests(_) | Reply::McpCall { .. } => openai_error(
            500,
            None,
            "scripted hosted-MCP replies exist only in the Responses API",
        ),
    }
}

/// The smart reply ([`Fallback::Smart`]) to a chat completions request.
fn smart_chat(request: &Value, call: &ScriptedCall) -> Reply {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let results: Vec<String> = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
        .map(|m| match m.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        })
        .collect();
    let offered = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools
                .iter()
                .any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(&call.name))
        });
    smart_reply(call, offered, &results)
}

/// What [`Fallback::Smart`] answers, given whether the request offers the call's tool and the
/// tool results it holds.
pub(crate) fn smart_reply(call: &ScriptedCall, offered: bool, results: &[String]) -> Reply {
    if !results.is_empty() {
        Reply::Text(format!("Done. The tool said: {}", results.join(" | ")))
    } else if offered {
        Reply::ToolCalls(vec![call.clone()])
    } else {
        Reply::Text("ok".into())
    }
}

/// The smart reply of the Anthropic and Responses formats: `call` while the request offers its
/// tool and holds no tool result yet, otherwise the text "ok".
pub(crate) fn smart_any(request: &Value, call: &ScriptedCall) -> Reply {
    if offers_tool(request, &call.name) && !has_tool_result(request) {
        Reply::ToolCalls(vec![call.clone()])
    } else {
        Reply::Text("ok".into())
    }
}

/// The parts shared by every object of one answer.
struct Out {
    id: String,
    created: u64,
    asked: Asked,
}

impl Out {
    fn usage(&self, completion_chars: usize) -> Value {
        let completion_tokens = (completion_chars as u64).div_ceil(4).max(1);
        json!({
            "prompt_tokens": self.asked.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": self.asked.prompt_tokens + completion_tokens
        })
    }

    fn completion(&self, text: Option<&str>, calls: &[ScriptedCall]) -> Value {
        let mut message = json!({"role": "assistant", "content": text, "refusal": null});
        if !calls.is_empty() {
            message["tool_calls"] = calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
        }
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let completion_chars = text.map_or(0, str::len)
            + calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>();
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.asked.model,
            "system_fingerprint": "fp_airlock_testkit",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": self.usage(completion_chars),
        })
    }

    /// One `data: {chunk}\n\n` event appended to `body`.
    fn chunk(&self, body: &mut String, delta: Value, finish: Option<&str>) {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.asked.model,
            "system_fingerprint": "fp_airlock_testkit",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if self.asked.include_usage {
            chunk["usage"] = Value::Null;
        }
        push_event(body, &chunk.to_string());
    }

    /// The finishing chunk, the usage chunk if asked for, and `[DONE]`.
    fn finish(&self, body: &mut String, finish: &str, completion_chars: usize) {
        self.chunk(body, json!({}), Some(finish));
        if self.asked.include_usage {
            let usage = json!({
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.asked.model,
                "system_fingerprint": "fp_airlock_testkit",
                "choices": [],
                "usage": self.usage(completion_chars),
            });
            push_event(body, &usage.to_string());
        }
        push_event(body, "[DONE]");
    }
}

pub(crate) fn push_event(body: &mut String, data: &str) {
    body.push_str("data: ");
    body.push_str(data);
    body.push_str("\n\n");
}

/// Splits `text` into `parts` pieces on character boundaries; always exactly `parts` pieces,
/// some possibly empty when the text is shorter than that.
pub(crate) fn pieces(text: &str, parts: usize) -> Vec<&str> {
    let parts = parts.max(1);
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let chars = boundaries.len() - 1;
    (0..parts)
        .map(|p| {
            let start = boundaries[chars * p / parts];
            let end = boundaries[chars * (p + 1) / parts];
            &text[start..end]
        })
        .collect()
}

fn text_chunks(out: &Out, reasoning: Option<&str>, text: &str) -> String {
    let mut body = String::with_capacity(512 + text.len() * 2);
    out.chunk(&mut body, json!({"role": "assistant", "content": ""}), None);
    for piece in pieces(reasoning.unwrap_or_default(), 2) {
        if !piece.is_empty() {
            out.chunk(&mut body, json!({"reasoning_content": piece}), None);
        }
    }
    for piece in pieces(text, 3) {
        if !piece.is_empty() {
            out.chunk(&mut body, json!({"content": piece}), None);
        }
    }
    out.finish(&mut body, "stop", text.len());
    body
}

fn call_head(index: usize, call: &ScriptedCall) -> Value {
    json!({"tool_calls": [{
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""}
    }]})
}

fn call_fragment(index: usize, fragment: &str) -> Value {
    json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
}

fn tool_chunks(out: &Out, calls: &[ScriptedCall]) -> String {
    let mut body =
        String::with_capacity(1024 + calls.iter().map(|c| c.arguments.len() * 2).sum::<usize>());
    out.chunk(&mut body, json!({"role": "assistant", "content": ""}), None);
    for (index, call) in calls.iter().enumerate() {
        out.chunk(&mut body, call_head(index, call), None);
        let parts = if call.arguments.chars().count() >= 3 {
            3
        } else {
            2
        };
        for fragment in pieces(&call.arguments, parts) {
            out.chunk(&mut body, call_fragment(index, fragment), None);
        }
    }
    let completion_chars = calls.iter().map(|c| c.name.len() + c.arguments.len()).sum();
    out.finish(&mut body, "tool_calls", completion_chars);
    body
}

pub(crate) fn sse(body: String) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

pub(crate) fn json_response(value: Value) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        value.to_string(),
    )
        .into_response()
}

pub(crate) fn error_response(
    status: u16,
    retry_after: Option<u64>,
    message: &str,
    kind: &str,
) -> Response {
    error_with_body(
        status,
        retry_after,
        json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
    )
}

/// An error status with a JSON body and, for 429/503 scripts, a `Retry-After` header.
pub(crate) fn error_with_body(status: u16, retry_after: Option<u64>, body: Value) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, json_response(body)).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// Sends the role chunk, the call's head and the first half of its arguments, then fails the
/// body so hyper drops the connection mid-stream (no terminating chunk, no finish, no `[DONE]`).
fn cut_stream(out: &Out, call: &ScriptedCall) -> Response {
    let mut body = String::new();
    out.chunk(&mut body, json!({"role": "assistant", "content": ""}), None);
    out.chunk(&mut body, call_head(0, call), None);
    let chars = call.arguments.chars().count();
    let half = pieces(&call.arguments, 2).first().copied().unwrap_or("");
    if chars > 1 {
        out.chunk(&mut body, call_fragment(0, half), None);
    }
    send_then_cut(body)
}

/// Sends `body` as an event stream, then fails the body so hyper drops the connection
/// mid-stream (no terminating chunk).
pub(crate) fn send_then_cut(body: String) -> Response {
    let sent = Bytes::from(body);
    let stream = futures::stream::unfold(0u8, move |step| {
        let sent = sent.clone();
        async move {
            match step {
                0 => Some((Ok(sent), 1)),
                1 => {
                    // Let hyper flush what was sent before the error drops the connection.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "scripted cut",
                        )),
                        2,
                    ))
                }
                _ => None,
            }
        }
    });
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        )],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A body that fails before yielding anything: hyper drops the connection without writing the
/// (still buffered) response head, so the client sees the connection close with no answer.
pub(crate) fn cut_connection() -> Response {
    let stream = futures::stream::once(async {
        Err::<Bytes, _>(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "scripted cut",
        ))
    });
    Body::from_stream(stream).into_response()
}

/// `GET /testkit/requests`: the request bodies received so far, in order (as
/// [`ScriptedModel::requests`]), for tests that run the server as its own process.
async fn recorded_requests(State(shared): State<Arc<Shared>>) -> Response {
    let requests = lock(&shared.requests).clone();
    json_response(Value::Array(requests))
}

/// One reply of a script file, e.g. for `airlock-scripted-model --script FILE`:
/// `{"text": "..."}`, `{"tool_calls": [{"id": "c1", "name": "t", "arguments": {...} or "raw"}]}`,
/// `{"error": {"status": 429, "retry_after": 1}}` or `{"cut_stream": {"name": "t", "arguments": ...}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptEntry {
    Text(String),
    ToolCalls(Vec<ScriptEntryCall>),
    Error {
        status: u16,
        #[serde(default)]
        retry_after: Option<u64>,
    },
    CutStream(ScriptEntryCall),
}

/// A tool call in a script file; `arguments` given as a string is sent verbatim, any other JSON
/// value is serialized. A missing id becomes `call_script_<n>`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptEntryCall {
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
}

impl ScriptEntryCall {
    fn into_call(self, fallback_id: String) -> ScriptedCall {
        let arguments = match self.arguments {
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
            None => "{}".to_string(),
        };
        ScriptedCall {
            id: self.id.unwrap_or(fallback_id),
            name: self.name,
            arguments,
        }
    }
}

/// Parses a script: a JSON array of [`ScriptEntry`].
pub fn parse_script(text: &str) -> Result<Vec<Reply>, serde_json::Error> {
    let entries: Vec<ScriptEntry> = serde_json::from_str(text)?;
    let mut calls = 0usize;
    let mut next_id = move || {
        calls += 1;
        format!("call_script_{calls}")
    };
    Ok(entries
        .into_iter()
        .map(|entry| match entry {
            ScriptEntry::Text(text) => Reply::Text(text),
            ScriptEntry::Error {
                status,
                retry_after,
            } => Reply::Error {
                status,
                retry_after,
            },
            ScriptEntry::ToolCalls(list) => {
                Reply::ToolCalls(list.into_iter().map(|c| c.into_call(next_id())).collect())
            }
            ScriptEntry::CutStream(call) => Reply::CutStream(call.into_call(next_id())),
        })
        .collect())
}

mod anthropic;
mod gemini;
mod responses;

#[cfg(test)]
mod tests;
