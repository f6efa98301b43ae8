//! A client of the local API, shared by the CLI, the window and the benchmark.

use crate::discovery::DiscoveryError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;
// The client over reqwest is the `api-client` feature's: the hook asks without it (`one_shot`).
#[cfg(feature = "api-client")]
use {
    crate::discovery,
    airlock_protocol::{DecisionRequest, InboxItem, TurnOutcome},
    serde_json::json,
    std::path::Path,
};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error("{message}")]
    Refused {
        status: u16,
        code: String,
        message: String,
    },
    #[error("no Airlock engine answers for {data_dir} ({message}); start one with `airlock serve`")]
    Unreachable {
        data_dir: PathBuf,
        message: String,
        /// Nothing accepted the connection (as opposed to a connection lost mid-request).
        refused: bool,
    },
    #[error("unexpected answer from the engine: {0}")]
    Decode(String),
}

/// The engine's answer: its value, or its refusal `{"error", "code"}` for a status that is not
/// a success.
pub(crate) fn answer<T: DeserializeOwned>(status: u16, body: Value) -> Result<T, ClientError> {
    if !(200..300).contains(&status) {
        let text = |key: &str, default: &str| {
            body.get(key)
                .and_then(Value::as_str)
                .unwrap_or(default)
                .to_string()
        };
        return Err(ClientError::Refused {
            status,
            code: text("code", ""),
            message: text("error", "refused"),
        });
    }
    serde_json::from_value(body).map_err(|e| ClientError::Decode(e.to_string()))
}

#[cfg(feature = "api-client")]
#[derive(Debug, Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    token: String,
    data_dir: PathBuf,
}

#[cfg(feature = "api-client")]
impl ApiClient {
    /// Finds the engine that owns `data_dir` (once its lock is held and its pid alive) and
    /// reaches it over its Unix socket where it has one, else its loopback port.
    pub fn discover(data_dir: &Path) -> Result<Self, ClientError> {
        let (endpoint, token) = discovery::find(data_dir)?;
        let builder = reqwest::Client::builder().tcp_nodelay(true).no_proxy();
        #[cfg(unix)]
        if let Some(socket) = &endpoint.socket {
            let builder = builder.unix_socket(socket.as_path());
            return Self::built(builder, "http://localhost", &token, data_dir);
        }
        Self::built(
            builder,
            &format!("http://{}", endpoint.addr),
            &token,
            data_dir,
        )
    }

    /// No fallback to a default client when building fails: it would send the token elsewhere.
    fn built(
        builder: reqwest::ClientBuilder,
        base: &str,
        token: &str,
        data_dir: &Path,
    ) -> Result<Self, ClientError> {
        let http = builder.build().map_err(|e| ClientError::Unreachable {
            data_dir: data_dir.to_path_buf(),
            message: e.to_string(),
            refused: false,
        })?;
        Ok(Self::with(http, base, token, data_dir))
    }

    /// A client of the API at `base` (loopback TCP).
    pub fn new(base: &str, token: &str, data_dir: &Path) -> Self {
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .no_proxy()
            .build()
            .unwrap_or_default();
        Self::with(http, base, token, data_dir)
    }

    fn with(http: reqwest::Client, base: &str, token: &str, data_dir: &Path) -> Self {
        Self {
            http,
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            data_dir: data_dir.to_path_buf(),
        }
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let response = request.bearer_auth(&self.token).send().await.map_err(|e| {
            ClientError::Unreachable {
                data_dir: self.data_dir.clone(),
                message: e.to_string(),
                refused: e.is_connect(),
            }
        })?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|e| ClientError::Decode(e.to_string()))?;
        answer(status.as_u16(), body)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A streaming GET (server-sent events): the response once its headers arrived.
    pub async fn stream(&self, path: &str) -> Result<reqwest::Response, ClientError> {
        let response = self
            .http
            .get(self.url(path))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| ClientError::Unreachable {
                data_dir: self.data_dir.clone(),
                message: e.to_string(),
                refused: e.is_connect(),
            })?;
        let status = response.status();
        if !status.is_success() {
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let refused = answer::<Value>(status.as_u16(), body).err();
            return Err(refused.unwrap_or(ClientError::Decode(format!("status {status}"))));
        }
        Ok(response)
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.send(self.http.get(self.url(path))).await
    }

    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, ClientError> {
        self.send(self.http.post(self.url(path)).json(body)).await
    }

    pub async fn put<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, ClientError> {
        self.send(self.http.put(self.url(path)).json(body)).await
    }

    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.send(self.http.delete(self.url(path))).await
    }

    /// Runs one command of the table (`airlock_protocol::commands`) on the local API, typed by
    /// it: the command's arguments in, its response out.
    pub async fn call<C>(&self, command: &C) -> Result<C::Response, ClientError>
    where
        C: airlock_protocol::Command,
        C::Response: DeserializeOwned,
    {
        let args = serde_json::to_value(command).map_err(|e| ClientError::Decode(e.to_string()))?;
        let path = format!("{}{}", airlock_protocol::commands::COMMANDS_PATH, C::NAME);
        self.post(&path, &args).await
    }

    pub async fn inbox(&self) -> Result<Vec<InboxItem>, ClientError> {
        self.get("/v1/inbox").await
    }

    pub async fn decide(&self, request: &DecisionRequest) -> Result<Value, ClientError> {
        self.post(
            "/v1/decisions",
            &serde_json::to_value(request).unwrap_or_default(),
        )
        .await
    }

    /// Many decisions in one transaction; one answer per request, in order, each refused or
    /// not on its own ([`ClientError::Refused`] for a refusal).
    pub async fn decide_many(
        &self,
        requests: &[DecisionRequest],
    ) -> Result<Vec<Result<Value, ClientError>>, ClientError> {
        let answers: Vec<Value> = self
            .post("/v1/decisions/batch", &json!({ "decisions": requests }))
            .await?;
        if answers.len() != requests.len() {
            return Err(ClientError::Decode(format!(
                "{} answers to {} decisions",
                answers.len(),
                requests.len()
            )));
        }
        Ok(answers
            .into_iter()
            .map(|answer| match answer.get("error").and_then(Value::as_str) {
                Some(message) => Err(ClientError::Refused {
                    status: answer
                        .get("status")
                        .and_then(Value::as_u64)
                        .and_then(|s| u16::try_from(s).ok())
                        .unwrap_or(500),
                    code: answer
                        .get("code")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    message: message.to_string(),
                }),
                None => Ok(answer.get("approval").cloned().unwrap_or(Value::Null)),
            })
            .collect())
    }

    pub async fn send_message(&self, session: &str, text: &str) -> Result<Value, ClientError> {
        self.post(
            &format!("/v1/sessions/{}/messages", encode(session)),
            &json!({ "text": text }),
        )
        .await
    }

    /// Sends a message in a session that uses the named provider from now on.
    pub async fn send_message_with_provider(
        &self,
        session: &str,
        text: &str,
        provider: &str,
    ) -> Result<Value, ClientError> {
        self.post(
            &format!("/v1/sessions/{}/messages", encode(session)),
            &json!({ "text": text, "provider": provider }),
        )
        .await
    }

    pub async fn wait_turn(&self, session: &str) -> Result<TurnOutcome, ClientError> {
        self.get(&format!("/v1/sessions/{}/turn", encode(session)))
            .await
    }

    /// Brings the desktop app's window forward (on an inbox item). False when the engine has no
    /// window (`airlock serve`).
    pub async fn show_window(&self, approval_id: Option<&str>) -> Result<bool, ClientError> {
        let reply: Value = self
            .post("/v1/window", &json!({ "approval_id": approval_id }))
            .await?;
        Ok(reply["shown"] == json!(true))
    }
}

/// Percent-encodes a path segment (session names may hold spaces and slashes).
pub fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
