//! What every provider shares: one pooled HTTP client, the API key, the request with its
//! timeouts, status handling and retries (see `retry.rs`), and the server-sent-events loop.
//! A provider only says how its body is built and how its answers read ([`WireFormat`]).

use crate::retry::{Attempt, with_retries};
use crate::types::{LlmError, ModelReply, ProviderConfig, TextSink};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// How long to keep reading after the wire's end marker for the end of the body, so the
/// connection can go back to the pool instead of being closed.
const DRAIN_AFTER_END: Duration = Duration::from_millis(250);

/// Error bodies are cut to this many bytes before they reach a message.
const MAX_ERROR_BODY: usize = 2000;

/// How the API key is sent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Auth {
    /// `Authorization: Bearer KEY` (OpenAI).
    Bearer,
    /// The key as the value of this header (Anthropic's `x-api-key`).
    Header(&'static str),
}

/// Whether a stream goes on after an event.
pub(crate) enum Flow {
    Continue,
    /// The wire's end marker (`[DONE]`, `response.completed`, `message_stop`).
    End,
}

/// One wire format's reading of answers.
pub(crate) trait WireFormat: Send + Sync {
    /// A whole JSON answer.
    fn decode_json(&self, bytes: &[u8]) -> Result<ModelReply, LlmError>;
    /// Fresh state for reading one streamed answer.
    fn stream_decoder(&self) -> Box<dyn StreamDecoder + Send>;
}

/// Reads one streamed answer event by event. Events it does not know are skipped.
pub(crate) trait StreamDecoder {
    /// One event: `name` is the SSE `event:` field (empty when absent), `data` its data.
    fn event(
        &mut self,
        name: &str,
        data: &str,
        on_text: Option<&TextSink>,
    ) -> Result<Flow, LlmError>;
    /// The stream is over; `ended` says whether the end marker came. A reply whose end is
    /// missing is cut ([`LlmError::StreamCut`]) and nothing of it may be used.
    fn finish(self: Box<Self>, ended: bool) -> Result<ModelReply, LlmError>;
}

pub(crate) struct Transport {
    pub config: ProviderConfig,
    http: reqwest::Client,
    pub url: String,
    auth: Auth,
    headers: Vec<(&'static str, &'static str)>,
}

impl Transport {
    /// `path` is appended to the base URL, e.g. `/chat/completions`; `headers` go on every request.
    pub fn new(
        config: ProviderConfig,
        path: &str,
        auth: Auth,
        headers: Vec<(&'static str, &'static str)>,
    ) -> Result<Self, LlmError> {
        let url = format!("{}{path}", config.base_url.trim_end_matches('/'));
        let mut builder = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(64)
            .pool_idle_timeout(Duration::from_secs(90))
            .connect_timeout(config.request_timeout.min(Duration::from_secs(10)));
        if is_loopback(&url) {
            // A local model server is never behind the HTTP(S)_PROXY of the environment.
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| LlmError::Transport(describe(&e)))?;
        Ok(Self {
            config,
            http,
            url,
            auth,
            headers,
        })
    }

    fn api_key(&self) -> Result<Option<String>, LlmError> {
        match &self.config.api_key_env {
            None => Ok(self.config.api_key.as_ref().map(|k| k.expose().to_string())),
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
                _ => Err(LlmError::MissingApiKey { var: var.clone() }),
            },
        }
    }

    /// Sends `body` (retrying what is worth retrying) and reads the answer with `wire`.
    pub async fn complete(
        &self,
        body: &Value,
        wire: &dyn WireFormat,
        on_text: Option<&TextSink>,
    ) -> Result<ModelReply, LlmError> {
        let key = self.api_key()?;
        with_retries(&self.config, || {
            self.attempt(body, key.as_deref(), wire, on_text)
        })
        .await
    }

    async fn attempt(
        &self,
        body: &Value,
        key: Option<&str>,
        wire: &dyn WireFormat,
        on_text: Option<&TextSink>,
    ) -> Attempt {
        let timeout = self.config.request_timeout;
        let mut request = self.http.post(&self.url).json(body);
        request = if self.config.stream {
            // A stream may rightly take longer than `timeout` in all; it is bounded instead by
            // `timeout` for the headers and then by `timeout` of silence between events.
            request.header(reqwest::header::ACCEPT, "text/event-stream")
        } else {
            request.timeout(timeout)
        };
        for (name, value) in &self.headers {
            request = request.header(*name, *value);
        }
        if let Some(key) = key {
            request = match self.auth {
                Auth::Bearer => request.bearer_auth(key),
                Auth::Header(name) => request.header(name, key),
            };
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
            if text.len() > MAX_ERROR_BODY {
                let mut cut = MAX_ERROR_BODY;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            let error = LlmError::Status {
                status: status.as_u16(),
                body: text,
            };
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
            .is_some_and(|v| {
                v.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
        let result = if self.config.stream && is_event_stream {
            read_stream(response, wire.stream_decoder(), on_text, timeout).await
        } else {
            // Also what a server that ignores `"stream": true` answers.
            let reply = match tokio::time::timeout(timeout, response.bytes()).await {
                Ok(Ok(bytes)) => wire.decode_json(&bytes),
                Ok(Err(error)) => Err(body_error(error)),
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
            Err(error @ (LlmError::Timeout | LlmError::Transport(_))) => {
                Attempt::Retry(error, None)
            }
            Err(error) => Attempt::Fail(error),
        }
    }
}

/// Feeds every event to `decoder` until its end marker, the end of the body, a broken body,
/// or `idle` of silence (which counts as cut).
async fn read_stream(
    response: reqwest::Response,
    mut decoder: Box<dyn StreamDecoder + Send>,
    on_text: Option<&TextSink>,
    idle: Duration,
) -> Result<ModelReply, LlmError> {
    let mut events = response.bytes_stream().eventsource();
    let mut ended = false;
    loop {
        let event = match tokio::time::timeout(idle, events.next()).await {
            Err(_) => {
                tracing::warn!(
                    idle_ms = idle.as_millis() as u64,
                    "model stream went silent; treating it as ended"
                );
                break;
            }
            Ok(None) => break,
            Ok(Some(Ok(event))) => event,
            Ok(Some(Err(error))) => {
                tracing::warn!(%error, "model stream broke off");
                break;
            }
        };
        let name = if event.event == "message" {
            ""
        } else {
            event.event.as_str()
        };
        if let Flow::End = decoder.event(name, &event.data, on_text)? {
            ended = true;
            // Read the end of the body so the connection is reused rather than closed.
            let _ = tokio::time::timeout(DRAIN_AFTER_END, async {
                while events.next().await.is_some() {}
            })
            .await;
            break;
        }
    }
    decoder.finish(ended)
}

/// Reads `null` as the default, as `#[serde(default)]` does a missing field: servers differ on
/// whether an absent value is left out or sent as `null`.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
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
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A body that breaks off is a transport failure (worth a retry), not a decoding one.
fn body_error(error: reqwest::Error) -> LlmError {
    if error.is_timeout() {
        LlmError::Timeout
    } else {
        LlmError::Transport(describe(&error))
    }
}

/// Parses one event's JSON; an event that is not the expected shape is skipped with a warning
/// (unknown event types and fields are not fatal).
pub(crate) fn parse_event<T: serde::de::DeserializeOwned>(data: &str) -> Option<T> {
    match serde_json::from_str::<T>(data) {
        Ok(value) => Some(value),
        Err(error) => {
            tracing::warn!(%error, data = %data, "ignoring a stream event that is not understood");
            None
        }
    }
}
