//! A client of the local API, shared by the CLI, the window and the benchmark.

use crate::discovery::DiscoveryError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;
// The client over reqwest is the `api-client` feature's: the hook asks without it (`one_shot`).
#[cfg(feature = "api-client")]
use {
    crate::discovery,
    airlock_protocol::commands as cmd,
    airlock_protocol::{DecisionRequest, InboxItem, TurnOutcome},
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

    /// A client of a team server at `url` (`http://` on loopback, else `https://`) with a
    /// member's token (none: only `team_init` answers). `certificate`: a PEM certificate to
    /// trust instead of the system's (a team server's own, made on first use).
    pub fn remote(url: &str, token: &str, certificate: Option<&[u8]>) -> Result<Self, ClientError> {
        let unreachable = |message: String| ClientError::Unreachable {
            data_dir: PathBuf::from(url),
            message,
            refused: false,
        };
        let mut builder = reqwest::Client::builder().tcp_nodelay(true);
        if let Some(pem) = certificate {
            let certificate = reqwest::Certificate::from_pem(pem)
                .map_err(|e| unreachable(format!("the engine's certificate: {e}")))?;
            // That certificate only: the team server's own, pinned.
            builder = builder.tls_certs_only([certificate]);
        }
        let http = builder.build().map_err(|e| unreachable(e.to_string()))?;
        Ok(Self::with(http, url, token, Path::new(url)))
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
        let response =
            self.authorized(request)
                .send()
                .await
                .map_err(|e| ClientError::Unreachable {
                    data_dir: self.data_dir.clone(),
                    message: e.to_string(),
                    refused: e.is_connect(),
                })?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|e| ClientError::Decode(e.to_string()))?;
        answer(status.as_u16(), body)
    }

    /// The request with the token, when there is one (a team server's `team_init` takes none).
    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if self.token.is_empty() {
            request
        } else {
            request.bearer_auth(&self.token)
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A streaming GET (server-sent events): the response once its headers arrived.
    pub async fn stream(&self, path: &str) -> Result<reqwest::Response, ClientError> {
        let request = self.http.get(self.url(path));
        let response =
            self.authorized(request)
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

    /// [`Self::call`] with the response as the JSON it came as: for the CLI's listings, which
    /// print it (`--json`) or read a few fields of it.
    pub async fn call_json<C: airlock_protocol::Command>(
        &self,
        command: &C,
    ) -> Result<Value, ClientError> {
        let args = serde_json::to_value(command).map_err(|e| ClientError::Decode(e.to_string()))?;
        let path = format!("{}{}", airlock_protocol::commands::COMMANDS_PATH, C::NAME);
        self.post(&path, &args).await
    }

    pub async fn inbox(&self) -> Result<Vec<InboxItem>, ClientError> {
        self.call(&cmd::Inbox {}).await
    }

    /// One decision; the approval row as decided.
    pub async fn decide(&self, request: &DecisionRequest) -> Result<Value, ClientError> {
        self.decide_many(std::slice::from_ref(request))
            .await?
            .pop()
            .unwrap_or_else(|| Err(ClientError::Decode("no answer to the decision".into())))
    }

    /// Many decisions in one transaction (the table's `decide`); one answer per request, in
    /// order, each refused or not on its own ([`ClientError::Refused`] for a refusal).
    pub async fn decide_many(
        &self,
        requests: &[DecisionRequest],
    ) -> Result<Vec<Result<Value, ClientError>>, ClientError> {
        let outcomes = self
            .call(&cmd::Decide {
                decisions: requests.to_vec(),
                channel: None,
            })
            .await?;
        if outcomes.len() != requests.len() {
            return Err(ClientError::Decode(format!(
                "{} answers to {} decisions",
                outcomes.len(),
                requests.len()
            )));
        }
        Ok(outcomes
            .into_iter()
            .map(|outcome| match outcome.error {
                Some(error) => Err(ClientError::Refused {
                    status: error.code.http_status(),
                    code: error.code.as_str().to_string(),
                    message: error.message,
                }),
                None => Ok(serde_json::to_value(outcome.approval).unwrap_or(Value::Null)),
            })
            .collect())
    }

    pub async fn send_message(&self, session: &str, text: &str) -> Result<Value, ClientError> {
        self.call_json(&cmd::SendMessage {
            session: session.to_string(),
            text: text.to_string(),
            provider: None,
        })
        .await
    }

    /// Sends a message in a session that uses the named provider from now on.
    pub async fn send_message_with_provider(
        &self,
        session: &str,
        text: &str,
        provider: &str,
    ) -> Result<Value, ClientError> {
        self.call_json(&cmd::SendMessage {
            session: session.to_string(),
            text: text.to_string(),
            provider: Some(provider.to_string()),
        })
        .await
    }

    pub async fn wait_turn(&self, session: &str) -> Result<TurnOutcome, ClientError> {
        self.call(&cmd::WaitTurn {
            session: session.to_string(),
        })
        .await
    }

    /// Brings the desktop app's window forward (on an inbox item). False when the engine has no
    /// window (`airlock serve`).
    pub async fn show_window(&self, approval_id: Option<&str>) -> Result<bool, ClientError> {
        self.call(&cmd::ShowWindow {
            approval_id: approval_id.map(str::to_string),
        })
        .await
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
