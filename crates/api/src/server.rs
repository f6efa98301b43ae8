//! The local HTTP API: on 127.0.0.1 (Host and Origin checked so that a web page cannot reach
//! it: DNS rebinding, cross-site requests) and, on Unix, on a socket inside the private data
//! directory (what the CLI, the hook and mcp-proxy use); a bearer token on both, and
//! server-sent events.

use crate::commands::ServeHost;
use airlock_core::AgentFallback;
use airlock_core::{ArgRule, Mode, RuleEffect, RulePattern, ToolSetting};
use airlock_core::{ServerConfig, ServerDefault};
use airlock_engine::commands::Caller;
use airlock_engine::{DecisionRequest, ElicitationAnswer, Engine, EngineError, ProviderSettings};
use airlock_protocol::agents::{AGENT_CALLS_PATH, AGENT_HOOK_PATH, is_agent_calls_path};
use airlock_protocol::commands::{self as cmd, Command};
use airlock_protocol::{AgentCall, AgentCallState, DECISIONS_BODY_LIMIT, DecisionOutcome};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Extension, Json, Router};
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

struct AppState {
    engine: Engine,
    token: String,
    /// On TCP only: a browser reaches loopback ports, never the data directory's socket.
    web: Option<WebChecks>,
}

/// The Host and Origin a request on the loopback port may carry.
struct WebChecks {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
}

impl WebChecks {
    fn for_port(port: u16) -> Self {
        let allowed_hosts: Vec<String> = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        let allowed_origins = allowed_hosts
            .iter()
            .map(|h| format!("http://{h}"))
            .chain([
                "tauri://localhost".to_string(),
                "http://tauri.localhost".to_string(),
            ])
            .collect();
        Self {
            allowed_hosts,
            allowed_origins,
        }
    }

    fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !self.allowed_hosts.iter().any(|allowed| allowed == host) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "bad_host",
                format!("refused: Host '{host}' is not this engine"),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.allowed_origins.iter().any(|allowed| allowed == origin) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "bad_origin",
                    format!("refused: Origin '{origin}' may not use the local API"),
                ));
            }
        }
        Ok(())
    }
}

/// A refusal or failure, as JSON `{"error": message, "code": code}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }
}

impl ApiError {
    fn from_command(error: airlock_protocol::CommandError) -> Self {
        let status = StatusCode::from_u16(error.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self::new(status, error.code.as_str(), error.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "error": self.message, "code": self.code })),
        )
            .into_response()
    }
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> Self {
        let code = error.code();
        let status =
            StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self::new(status, code.as_str(), error.to_string())
    }
}

type ApiResult<T> = Result<Json<T>, ApiError>;

/// Serves the API on an already bound loopback listener until the future is dropped.
pub async fn serve(
    engine: Engine,
    listener: tokio::net::TcpListener,
    token: String,
) -> std::io::Result<()> {
    serve_with(engine, listener, token, Router::new()).await
}

/// [`serve`] with more routes behind the same Host, Origin and token checks (the desktop app's
/// window commands).
pub async fn serve_with(
    engine: Engine,
    listener: tokio::net::TcpListener,
    token: String,
    extra: Router,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("the local API only listens on loopback, not {addr}"),
        ));
    }
    let web = WebChecks::for_port(addr.port());
    axum::serve(listener, router_with(engine, token, Some(web), extra)).await
}

/// [`serve_with`] on the Unix socket in the data directory: the token is checked, Host and
/// Origin are not (only the data directory's owner can connect, and no web page can).
#[cfg(unix)]
pub async fn serve_socket(
    engine: Engine,
    listener: tokio::net::UnixListener,
    token: String,
    extra: Router,
) -> std::io::Result<()> {
    axum::serve(listener, router_with(engine, token, None, extra)).await
}

/// The API for a team server's listener (`airlock serve --listen` beyond loopback, over
/// HTTPS): no Host or Origin check (its clients name it as they reach it), the tokens checked
/// as everywhere: a member's reaches the command table only.
pub fn team_router(engine: Engine, token: String) -> Router {
    router_with(engine, token, None, Router::new())
}

pub fn router(engine: Engine, token: String, addr: SocketAddr) -> Router {
    let web = WebChecks::for_port(addr.port());
    router_with(engine, token, Some(web), Router::new())
}

fn router_with(engine: Engine, token: String, web: Option<WebChecks>, extra: Router) -> Router {
    let state = Arc::new(AppState { engine, token, web });
    Router::new()
        .route(
            &format!("{}{{name}}", crate::commands::COMMANDS_PATH),
            post(command).layer(DefaultBodyLimit::max(DECISIONS_BODY_LIMIT)),
        )
        .route("/v1/status", get(status))
        .route("/v1/inbox", get(inbox))
        .route("/v1/decisions", post(decide))
        .route(
            "/v1/decisions/batch",
            post(decide_batch).layer(DefaultBodyLimit::max(DECISIONS_BODY_LIMIT)),
        )
        .route("/v1/sessions", get(sessions))
        .route("/v1/sessions/{name}/messages", post(send_message))
        .route("/v1/sessions/{name}/turn", get(wait_turn))
        .route("/v1/sessions/{name}/cancel", post(cancel))
        .route("/v1/sessions/{name}/transcript", get(transcript))
        .route("/v1/provider", get(provider).put(set_provider))
        .route("/v1/provider/key", put(set_provider_key))
        .route("/v1/provider/test", post(test_provider))
        .route("/v1/providers", get(providers))
        .route("/v1/mode", put(set_mode))
        .route("/v1/paused", get(paused).put(set_paused))
        .route("/v1/remote", get(remote).put(set_remote))
        .route("/v1/remote/pair", post(remote_pair))
        .route("/v1/remote/devices", get(remote_devices))
        .route("/v1/remote/devices/{id}", delete(revoke_device))
        .route("/v1/remote/push", get(push).put(set_push))
        .route("/v1/window", post(show_window))
        .route("/v1/settings/{key}", put(set_setting))
        .route("/v1/servers", get(servers).post(add_server))
        .route("/v1/servers/import", post(import_servers))
        .route(
            "/v1/servers/{name}",
            put(update_server).delete(remove_server),
        )
        .route(
            "/v1/servers/{name}/notification",
            put(set_server_from_notification),
        )
        .route("/v1/servers/{name}/changes", get(server_changes))
        .route("/v1/servers/{name}/review", post(accept_server_changes))
        .route("/v1/elicitations", post(elicit))
        .route("/v1/elicitations/{id}/answer", post(answer))
        .route("/v1/tools", get(tools))
        .route("/v1/tools/{server}/{tool}", put(set_tool))
        .route(
            "/v1/tools/{server}/{tool}/notification",
            put(set_tool_from_notification),
        )
        .route("/v1/rules", get(rules).post(add_rule))
        .route("/v1/rules/preview", post(preview_rule))
        .route("/v1/rules/{id}", delete(remove_rule))
        .route("/v1/approvals/{id}/rule-suggestions", get(suggest_rules))
        .route("/v1/approvals/{id}/grant-offer", get(grant_offer))
        .route("/v1/insights", get(insights))
        .route("/v1/remembered", get(remembered))
        .route("/v1/grants", get(grants))
        .route("/v1/remembered/{id}", delete(revoke))
        .route("/v1/audit", get(audit))
        .route(AGENT_CALLS_PATH, post(agent_call))
        .route(
            &format!("{AGENT_HOOK_PATH}{{agent}}"),
            post(agent_hook).layer(DefaultBodyLimit::max(crate::agent_hooks::EVENT_BODY_LIMIT)),
        )
        .route(&format!("{AGENT_CALLS_PATH}/{{id}}"), get(agent_call_state))
        .route(
            &format!("{AGENT_CALLS_PATH}/{{id}}/events"),
            get(agent_call_events),
        )
        .route(
            &format!("{AGENT_CALLS_PATH}/{{id}}/claim"),
            post(agent_call_claim),
        )
        .route("/v1/agents", get(agents))
        .route("/v1/agents/{name}", put(set_agent))
        .route("/v1/agents/{name}/defaults", post(agent_defaults))
        .route("/v1/events", get(events))
        .with_state(state.clone())
        .merge(extra)
        .layer(middleware::from_fn_with_state(state, guard))
}

/// Host, Origin (on TCP) and token, in that order; each refusal says which check failed. The
/// engine's own token is the machine's owner (`Caller::Api`); a team member's token is that
/// member, who reaches the command table only (`/v1/commands/…`), as their role allows; no
/// token at all reaches `team_init` alone, which a team with members refuses.
/// An agent's own token reaches only the agents' routes ([`is_agent_calls_path`]), which then
/// know the request as that agent's ([`AgentCaller`]).
async fn guard(State(state): State<Arc<AppState>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    if let Some(web) = &state.web
        && let Err(refused) = web.check(headers)
    {
        return refused.into_response();
    }
    let refused = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "bad_token",
            "refused: missing or wrong bearer token",
        )
        .into_response()
    };
    let path = request.uri().path();
    let command_path = path.starts_with(crate::commands::COMMANDS_PATH);
    let caller = if token_matches(headers, &state.token) {
        Caller::Api
    } else {
        match bearer(headers) {
            Some(token) => match state.engine.agent_for_token(token) {
                Ok(Some(agent)) if is_agent_calls_path(path) => {
                    let agent = AgentCaller(agent);
                    request.extensions_mut().insert(agent);
                    return next.run(request).await;
                }
                Ok(Some(agent)) => {
                    return ApiError::new(
                        StatusCode::FORBIDDEN,
                        "not_allowed",
                        format!(
                            "refused: {agent}'s own token may only post {agent}'s calls ({AGENT_CALLS_PATH}), nothing else"
                        ),
                    )
                    .into_response();
                }
                // No answer on whose token it is: refused, never let through.
                Err(error) => return ApiError::from(error).into_response(),
                Ok(None) => match state.engine.member_for_token(token) {
                    Ok(Some(member)) if command_path => Caller::Member(member),
                    Ok(Some(member)) => {
                        return ApiError::new(
                            StatusCode::FORBIDDEN,
                            "not_allowed",
                            format!(
                                "refused: a team member ({}) uses the command table ({}NAME) only",
                                member.name,
                                crate::commands::COMMANDS_PATH
                            ),
                        )
                        .into_response();
                    }
                    // An error reading the members is no member: refused, never let through.
                    Ok(None) | Err(_) => return refused(),
                },
            },
            None if path == TEAM_INIT_PATH => Caller::Newcomer,
            None => return refused(),
        }
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// A request that came with an agent's own token, not the main one: it speaks for this agent
/// only (its calls, their decisions). Set by the guard on the agents' routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCaller(pub String);

impl AgentCaller {
    /// Refuses a request that speaks for another agent than the token's.
    pub fn may_speak_for(&self, agent: &str) -> Result<(), ApiError> {
        if self.0 == agent {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not_allowed",
            format!(
                "refused: this token is {}'s own; it cannot post {agent}'s calls",
                self.0
            ),
        ))
    }
}

/// The one path a caller without a token may use: making a team's first admin.
const TEAM_INIT_PATH: &str = "/v1/commands/team_init";

/// The bearer token given, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .filter(|token| !token.is_empty())
}

fn token_matches(headers: &HeaderMap, token: &str) -> bool {
    let given = bearer(headers).unwrap_or("");
    // Constant time in the token's length, so timing does not reveal a prefix.
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A command of the table, run by the one dispatcher ([`crate::commands`]) for the caller the
/// guard found.
async fn command(
    State(s): State<Arc<AppState>>,
    caller: Option<Extension<Caller>>,
    Path(name): Path<String>,
    args: Option<Json<Value>>,
) -> Response {
    let Some(Extension(caller)) = caller else {
        return ApiError::new(StatusCode::UNAUTHORIZED, "bad_token", "refused: no caller")
            .into_response();
    };
    let args = args.map(|Json(args)| args).unwrap_or(Value::Null);
    crate::commands::run(&s.engine, &caller, &name, args).await
}

/// Runs a command of the table for one of the REST routes (the paths and answers the CLI and
/// scripts used before `/v1/commands/{name}`): the same dispatcher, the same engine call.
async fn table<C: Command>(s: &AppState, command: C) -> Result<Value, ApiError> {
    let args = serde_json::to_value(&command)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    airlock_engine::commands::dispatch(&s.engine, &ServeHost, &Caller::Api, C::NAME, args)
        .await
        .map_err(ApiError::from_command)
}

async fn status(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Status {}).await?))
}

async fn inbox(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Inbox {}).await?))
}

/// One decision through the table's `decide`; answers the approval row as decided.
async fn decide(
    State(s): State<Arc<AppState>>,
    Json(request): Json<DecisionRequest>,
) -> ApiResult<Value> {
    let mut outcomes = decide_through_table(&s, vec![request]).await?;
    let outcome = outcomes.pop().ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "no decision was made",
        )
    })?;
    match (outcome.error, outcome.approval) {
        (Some(error), _) => Err(ApiError::from_command(error)),
        (None, approval) => Ok(Json(serde_json::to_value(approval).unwrap_or_default())),
    }
}

/// The table's `decide` for the API, its outcomes typed.
async fn decide_through_table(
    s: &AppState,
    decisions: Vec<DecisionRequest>,
) -> Result<Vec<DecisionOutcome>, ApiError> {
    let outcomes = table(
        s,
        cmd::Decide {
            decisions,
            channel: None,
        },
    )
    .await?;
    serde_json::from_value(outcomes)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))
}

#[derive(Deserialize)]
struct DecisionBatch {
    decisions: Vec<DecisionRequest>,
}

/// Many decisions in one durable transaction (the table's `decide`). Each item answers on its
/// own, in order: `{"approval_id", "approval": row}` or `{"approval_id", "error", "code",
/// "status"}` with the code and HTTP status the single endpoint would have given. A failed
/// transaction (nothing decided) is the response's own error.
async fn decide_batch(
    State(s): State<Arc<AppState>>,
    Json(batch): Json<DecisionBatch>,
) -> ApiResult<Value> {
    let outcomes = decide_through_table(&s, batch.decisions).await?;
    let items: Vec<Value> = outcomes
        .into_iter()
        .map(|outcome| match outcome.error {
            None => json!({ "approval_id": outcome.approval_id, "approval": outcome.approval }),
            Some(error) => {
                let error = ApiError::from_command(error);
                json!({ "approval_id": outcome.approval_id, "error": error.message, "code": error.code, "status": error.status.as_u16() })
            }
        })
        .collect();
    Ok(Json(Value::Array(items)))
}

async fn sessions(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::ListSessions {}).await?))
}

#[derive(Deserialize)]
struct MessageBody {
    text: String,
    /// A named provider the session uses from this message on.
    #[serde(default)]
    provider: Option<String>,
}

async fn send_message(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Json(body): Json<MessageBody>,
) -> ApiResult<Value> {
    let send = cmd::SendMessage {
        session: name,
        text: body.text,
        provider: body.provider,
    };
    Ok(Json(table(&s, send).await?))
}

async fn wait_turn(State(s): State<Arc<AppState>>, Path(name): Path<String>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::WaitTurn { session: name }).await?))
}

async fn cancel(State(s): State<Arc<AppState>>, Path(name): Path<String>) -> ApiResult<Value> {
    let cancelled = table(&s, cmd::CancelTurn { session: name }).await?;
    Ok(Json(json!({ "cancelled": cancelled })))
}

async fn transcript(State(s): State<Arc<AppState>>, Path(name): Path<String>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Transcript { session: name }).await?))
}

async fn provider(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Provider {}).await?))
}

async fn providers(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Providers {}).await?))
}

async fn set_provider(
    State(s): State<Arc<AppState>>,
    Json(settings): Json<ProviderSettings>,
) -> ApiResult<Value> {
    let provider = settings.clone();
    table(&s, cmd::SetProvider { provider }).await?;
    Ok(Json(serde_json::to_value(settings).unwrap_or_default()))
}

/// An API key pasted for the default provider (`name` absent) or a named one: kept in the OS
/// keyring. The answer never repeats it.
#[derive(Deserialize)]
struct ProviderKeyBody {
    #[serde(default)]
    name: Option<String>,
    key: String,
}

async fn set_provider_key(
    State(s): State<Arc<AppState>>,
    Json(body): Json<ProviderKeyBody>,
) -> ApiResult<Value> {
    let name = body.name.clone();
    table(
        &s,
        cmd::SetProviderKey {
            name: body.name,
            key: body.key,
        },
    )
    .await?;
    Ok(Json(json!({ "name": name, "api_key_in_keyring": true })))
}

#[derive(Deserialize)]
struct ProviderTestBody {
    provider: ProviderSettings,
    #[serde(default)]
    api_key: Option<String>,
}

/// "Test connection": one real request to the provider as given; nothing is saved.
async fn test_provider(
    State(s): State<Arc<AppState>>,
    Json(body): Json<ProviderTestBody>,
) -> ApiResult<Value> {
    let answer = table(
        &s,
        cmd::TestProvider {
            provider: body.provider,
            api_key: body.api_key,
        },
    )
    .await?;
    Ok(Json(json!({ "message": answer })))
}

#[derive(Deserialize)]
struct ModeBody {
    mode: Mode,
    #[serde(default)]
    session: Option<String>,
}

async fn set_mode(State(s): State<Arc<AppState>>, Json(body): Json<ModeBody>) -> ApiResult<Value> {
    let mode = body.mode;
    match body.session.clone() {
        Some(session) => {
            let set = cmd::SetSessionMode {
                session,
                mode: Some(mode),
            };
            table(&s, set).await?;
        }
        None => {
            table(&s, cmd::SetWorkspaceMode { mode }).await?;
        }
    }
    Ok(Json(json!({ "mode": body.mode, "session": body.session })))
}

#[derive(Deserialize)]
struct PausedBody {
    paused: bool,
}

async fn paused(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(json!({ "paused": table(&s, cmd::Paused {}).await? })))
}

/// "Pause all agents" (and resume): no model request or tool run starts while paused.
async fn set_paused(
    State(s): State<Arc<AppState>>,
    Json(body): Json<PausedBody>,
) -> ApiResult<Value> {
    let changed = table(
        &s,
        cmd::SetPaused {
            paused: body.paused,
        },
    )
    .await?;
    Ok(Json(json!({ "paused": body.paused, "changed": changed })))
}

/// The phone inbox: where it listens (null: off) and the paired devices.
async fn remote(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    let view = table(&s, cmd::Remote {}).await?;
    Ok(Json(
        json!({ "listen": view["listen"], "devices": view["devices"] }),
    ))
}

#[derive(Deserialize)]
struct RemoteBody {
    listen: Option<String>,
}

/// Turns the phone inbox on at an address (or off with null); answers where it now listens.
async fn set_remote(
    State(s): State<Arc<AppState>>,
    Json(body): Json<RemoteBody>,
) -> ApiResult<Value> {
    table(
        &s,
        cmd::SetRemoteListen {
            listen: body.listen,
        },
    )
    .await?;
    let view = table(&s, cmd::Remote {}).await?;
    Ok(Json(json!({ "listen": view["listen"] })))
}

/// A one-time pairing code with the page's address and the certificate's fingerprint.
async fn remote_pair(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::PairPhone {}).await?))
}

async fn remote_devices(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Devices {}).await?))
}

/// The ntfy push (its token only as `has_token`), or null when off.
async fn push(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Push {}).await?))
}

/// Sets the ntfy push (`null` turns it off); answers what is now set.
async fn set_push(
    State(s): State<Arc<AppState>>,
    Json(body): Json<Option<airlock_protocol::NtfyPush>>,
) -> ApiResult<Value> {
    table(&s, cmd::SetPush { push: body }).await?;
    push(State(s)).await
}

async fn revoke_device(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Value> {
    let revoked = table(&s, cmd::RevokeDevice { id }).await?;
    Ok(Json(json!({ "revoked": revoked })))
}

#[derive(Deserialize, Default)]
struct WindowBody {
    #[serde(default)]
    approval_id: Option<String>,
}

/// Brings the desktop app's window forward (on an inbox item); `shown: false` under `airlock serve`.
async fn show_window(
    State(s): State<Arc<AppState>>,
    body: Option<Json<WindowBody>>,
) -> ApiResult<Value> {
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let shown = table(
        &s,
        cmd::ShowWindow {
            approval_id: body.approval_id,
        },
    )
    .await?;
    Ok(Json(json!({ "shown": shown })))
}

/// Sets one of the settings of [`Setting`] that `airlock settings set` names (the others have
/// their own routes: mode, paused), after checking its kind.
async fn set_setting(
    State(s): State<Arc<AppState>>,
    Path(key): Path<String>,
    Json(value): Json<Value>,
) -> ApiResult<Value> {
    let set = cmd::SetSetting {
        key: key.clone(),
        value: value.clone(),
    };
    table(&s, set).await?;
    Ok(Json(json!({ key: value })))
}

async fn servers(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Servers {}).await?))
}

#[derive(Deserialize)]
struct ServerBody {
    name: String,
    config: ServerConfig,
}

async fn add_server(
    State(s): State<Arc<AppState>>,
    Json(body): Json<ServerBody>,
) -> ApiResult<Value> {
    let name = body.name.clone();
    table(
        &s,
        cmd::SaveServer {
            name: body.name,
            config: body.config,
        },
    )
    .await?;
    Ok(Json(json!({ "name": name })))
}

/// The `mcpServers` object of a Claude Desktop style config (or the whole file): the table's
/// `import_servers` (every valid server added, each refused one reported with why), answered
/// as `{"imported": [names], "refused": [{name, reason}]}`.
async fn import_servers(
    State(s): State<Arc<AppState>>,
    Json(config): Json<Value>,
) -> ApiResult<Value> {
    let text = config.to_string();
    let report = table(&s, cmd::ImportServers { text }).await?;
    Ok(Json(
        json!({ "imported": report["added"], "refused": report["refused"] }),
    ))
}

#[derive(Deserialize)]
struct ServerUpdate {
    #[serde(default)]
    default: Option<ServerDefault>,
    #[serde(default)]
    trust_read_only_hints: Option<bool>,
    #[serde(default)]
    enabled: Option<bool>,
}

async fn update_server(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Json(body): Json<ServerUpdate>,
) -> ApiResult<Value> {
    if let Some(default) = body.default {
        let name = name.clone();
        table(&s, cmd::SetServerDefault { name, default }).await?;
    }
    if let Some(trust) = body.trust_read_only_hints {
        let name = name.clone();
        table(&s, cmd::SetServerTrust { name, trust }).await?;
    }
    if let Some(enabled) = body.enabled {
        let name = name.clone();
        table(&s, cmd::SetServerEnabled { name, enabled }).await?;
    }
    Ok(Json(json!({ "name": name })))
}

/// Removes a server (its tool settings, rules and remembered decisions too) and denies the
/// tool calls still waiting on it (its questions end with it, cancelled).
async fn remove_server(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult<Value> {
    let denied = table(&s, cmd::RemoveServer { name: name.clone() }).await?;
    Ok(Json(json!({ "name": name, "denied": denied })))
}

async fn server_changes(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::ServerChanges { name }).await?))
}

/// Accepts the server's changed tool definitions: `{"changes": [...]}` as the person reviewed
/// them (from `GET /v1/servers/NAME/changes`); refused (409) when they changed since.
async fn accept_server_changes(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Json(body): Json<ReviewedChanges>,
) -> ApiResult<Value> {
    let changes = body.changes;
    Ok(Json(
        table(&s, cmd::AcceptServerChanges { name, changes }).await?,
    ))
}

#[derive(Deserialize)]
struct ReviewedChanges {
    changes: Vec<airlock_engine::ToolChange>,
}

async fn answer(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<ElicitationAnswer>,
) -> ApiResult<Value> {
    let action = body.action;
    table(
        &s,
        cmd::AnswerElicitation {
            approval_id: id.clone(),
            answer: body,
        },
    )
    .await?;
    Ok(Json(json!({ "approval_id": id, "action": action })))
}

/// A form a proxied MCP server asks for when its client cannot show one (`airlock mcp-proxy`).
#[derive(Deserialize)]
struct ElicitBody {
    server: String,
    message: String,
    schema: Value,
    #[serde(default)]
    meta: Option<Value>,
    /// The fields in the server's order (the schema's keys do not keep it).
    #[serde(default)]
    property_order: Vec<String>,
}

/// Held open until a person answers in the inbox; a caller that hangs up cancels the item.
async fn elicit(
    State(s): State<Arc<AppState>>,
    Json(body): Json<ElicitBody>,
) -> ApiResult<ElicitationAnswer> {
    airlock_core::validate_proxied_server_name(&body.server)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid", e))?;
    if !body.schema.is_object() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid",
            "the form's schema must be a JSON object",
        ));
    }
    let request = airlock_engine::ElicitationRequest {
        server: body.server,
        message: body.message,
        schema: body.schema,
        meta: body.meta,
        context: None,
        property_order: body.property_order,
    };
    Ok(Json(s.engine.elicit(request).await?))
}

/// Another agent's tool call (its hook, the MCP proxy, an app's approval client): answered by
/// policy at once, or held open until a person decides or `wait_ms` passes. A caller that hangs
/// up withdraws the item, unless the call was deferred (`defer`, `wait_ms: 0`): then its id
/// comes back at once with `status: pending`, and the item stays for the client to collect.
async fn agent_call(
    State(s): State<Arc<AppState>>,
    caller: Option<Extension<AgentCaller>>,
    Json(call): Json<AgentCall>,
) -> ApiResult<AgentCallState> {
    if let Some(Extension(caller)) = caller {
        // An app speaks as the name it gives itself (`client`), which its token is issued for.
        let speaker = match call.agent.as_str() {
            airlock_core::APP_CLIENT => call.client.as_deref().unwrap_or_default(),
            agent => agent,
        };
        caller.may_speak_for(speaker)?;
    }
    Ok(Json(s.engine.agent_call_with_state(call).await?))
}

/// With an agent's own token: refused unless the call is that agent's.
fn own_call(
    s: &AppState,
    caller: Option<Extension<AgentCaller>>,
    id: &str,
) -> Result<(), ApiError> {
    let Some(Extension(caller)) = caller else {
        return Ok(());
    };
    match s.engine.agent_call_owner(id)? {
        Some(owner) => caller.may_speak_for(&owner),
        None => caller.may_speak_for(""),
    }
}

#[derive(Deserialize)]
struct AgentCallWait {
    /// How long to wait for a decision (a long poll), in milliseconds; 0 (the default) reads
    /// it as it stands.
    #[serde(default)]
    wait_ms: u64,
}

/// An agent call's decision, or `status: pending` once `wait_ms` passed. Reading it never
/// withdraws nor changes it: the same decision each time.
async fn agent_call_state(
    State(s): State<Arc<AppState>>,
    caller: Option<Extension<AgentCaller>>,
    Path(id): Path<String>,
    Query(wait): Query<AgentCallWait>,
) -> ApiResult<AgentCallState> {
    own_call(&s, caller, &id)?;
    let wait = std::time::Duration::from_millis(wait.wait_ms);
    Ok(Json(s.engine.agent_call_state(&id, wait).await?))
}

/// An agent call's state as server-sent events, so a client waits without polling again: one
/// `state` event at once (the call as it stands), then, while it is pending, one more when a
/// person decides or `wait_ms` passed (still pending then; none given: as long as the engine
/// waits for anyone, a day), and the stream ends. An error after the first event is an `error`
/// event (`{"error", "code"}`): nothing was decided. Keep-alive comments every 15 s.
async fn agent_call_events(
    State(s): State<Arc<AppState>>,
    caller: Option<Extension<AgentCaller>>,
    Path(id): Path<String>,
    Query(wait): Query<AgentCallEventsWait>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    own_call(&s, caller, &id)?;
    let now = s
        .engine
        .agent_call_state(&id, std::time::Duration::ZERO)
        .await?;
    let wait = wait
        .wait_ms
        .map_or(std::time::Duration::MAX, std::time::Duration::from_millis);
    let pending = now.status == Some(airlock_core::ApprovalStatus::Pending);
    let later = futures::stream::once(async move {
        if !pending {
            return None;
        }
        Some(match s.engine.agent_call_state(&id, wait).await {
            Ok(state) => state_event(&state),
            Err(error) => {
                let error = ApiError::from(error);
                Event::default()
                    .event("error")
                    .json_data(json!({"error": error.message, "code": error.code}))
            }
        })
    });
    // An event that cannot be written is left out: a stream that ends without a decided state
    // decides nothing for its client.
    let events = futures::stream::once(std::future::ready(Some(state_event(&now))))
        .chain(later)
        .filter_map(|event| event.and_then(Result::ok).map(Ok));
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

fn state_event(state: &AgentCallState) -> Result<Event, axum::Error> {
    Event::default().event("state").json_data(state)
}

#[derive(Deserialize)]
struct AgentCallEventsWait {
    /// How long to wait for a decision, in milliseconds; none: as long as the engine waits.
    #[serde(default)]
    wait_ms: Option<u64>,
}

/// Claims an approved deferred call for its client to run: the first claim succeeds, any later
/// one is refused (409 `already_decided`), so the tool runs at most once.
async fn agent_call_claim(
    State(s): State<Arc<AppState>>,
    caller: Option<Extension<AgentCaller>>,
    Path(id): Path<String>,
) -> ApiResult<AgentCallState> {
    own_call(&s, caller, &id)?;
    Ok(Json(s.engine.claim_agent_call(&id)?))
}

/// An agent's HTTP hook (Claude Code's `"type": "http"`): its own event in, the answer in its
/// own words out, always 200 with one JSON object (`crate::agent_hooks`).
async fn agent_hook(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(query): Query<crate::agent_hooks::HookQuery>,
    caller: Option<Extension<AgentCaller>>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let agent = airlock_agents::hook_agent(&name).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "invalid",
            airlock_agents::not_a_hook_agent(&name),
        )
    })?;
    if let Some(Extension(caller)) = caller {
        caller.may_speak_for(agent.name())?;
    }
    let text = crate::agent_hooks::answer(&s.engine, agent, &query, &body).await;
    Ok(([(header::CONTENT_TYPE, "application/json")], text).into_response())
}

async fn agents(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::AgentViews {}).await?))
}

#[derive(Deserialize)]
struct AgentBody {
    fallback: AgentFallback,
}

async fn set_agent(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Json(body): Json<AgentBody>,
) -> ApiResult<Value> {
    let fallback = body.fallback;
    table(
        &s,
        cmd::SetAgentFallback {
            agent: name.clone(),
            fallback,
        },
    )
    .await?;
    Ok(Json(json!({ "agent": name, "fallback": fallback })))
}

/// `airlock connect`'s settings inside Airlock: the agent's read-only tools need no approval,
/// unless the person chose otherwise.
async fn agent_defaults(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult<Value> {
    Ok(Json(
        table(&s, cmd::ApplyAgentDefaults { agent: name }).await?,
    ))
}

async fn tools(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Tools {}).await?))
}

#[derive(Deserialize)]
struct ToolSettingBody {
    setting: ToolSetting,
}

async fn set_tool(
    State(s): State<Arc<AppState>>,
    Path((server, tool)): Path<(String, String)>,
    Json(body): Json<ToolSettingBody>,
) -> ApiResult<Value> {
    let setting = body.setting;
    table(
        &s,
        cmd::SetToolSetting {
            server: server.clone(),
            tool: tool.clone(),
            setting,
        },
    )
    .await?;
    Ok(Json(
        json!({ "server": server, "tool": tool, "setting": body.setting }),
    ))
}

/// Whether a notification may approve: `on`, `off`, or `default` (forget the choice).
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum FromNotification {
    On,
    Off,
    Default,
}

#[derive(Deserialize)]
struct FromNotificationBody {
    allow: FromNotification,
}

impl FromNotification {
    fn choice(self) -> Option<bool> {
        match self {
            Self::On => Some(true),
            Self::Off => Some(false),
            Self::Default => None,
        }
    }
}

async fn set_tool_from_notification(
    State(s): State<Arc<AppState>>,
    Path((server, tool)): Path<(String, String)>,
    Json(body): Json<FromNotificationBody>,
) -> ApiResult<Value> {
    table(
        &s,
        cmd::SetFromNotification {
            server: server.clone(),
            tool: Some(tool.clone()),
            allow: body.allow.choice(),
        },
    )
    .await?;
    Ok(Json(
        json!({ "server": server, "tool": tool, "from_notification": body.allow.choice() }),
    ))
}

async fn set_server_from_notification(
    State(s): State<Arc<AppState>>,
    Path(name): Path<String>,
    Json(body): Json<FromNotificationBody>,
) -> ApiResult<Value> {
    table(
        &s,
        cmd::SetFromNotification {
            server: name.clone(),
            tool: None,
            allow: body.allow.choice(),
        },
    )
    .await?;
    Ok(Json(
        json!({ "server": name, "from_notification": body.allow.choice() }),
    ))
}

async fn rules(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::ListRules {}).await?))
}

#[derive(Deserialize)]
struct RuleBody {
    server: String,
    tool: String,
    pointer: String,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    regex: Option<String>,
    effect: RuleEffect,
}

impl RuleBody {
    fn rule(self) -> Result<ArgRule, ApiError> {
        let pattern = match (self.glob, self.regex) {
            (Some(glob), None) => RulePattern::Glob(glob),
            (None, Some(regex)) => RulePattern::Regex(regex),
            _ => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid",
                    "give exactly one of glob or regex",
                ));
            }
        };
        Ok(ArgRule {
            id: airlock_engine::Engine::new_rule_id(),
            server: self.server,
            tool: self.tool,
            pointer: self.pointer,
            pattern,
            effect: self.effect,
        })
    }
}

/// What a rule would have matched in History, without adding it.
async fn preview_rule(
    State(s): State<Arc<AppState>>,
    Json(body): Json<RuleBody>,
) -> ApiResult<Value> {
    let rule = body.rule()?;
    let preview = cmd::PreviewRule {
        server: rule.server,
        tool: rule.tool,
        pointer: rule.pointer,
        pattern: rule.pattern,
        effect: rule.effect,
    };
    Ok(Json(table(&s, preview).await?))
}

async fn suggest_rules(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Value> {
    Ok(Json(
        table(&s, cmd::RuleSuggestions { approval_id: id }).await?,
    ))
}

async fn grant_offer(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Value> {
    Ok(Json(
        table(&s, cmd::GrantOfferCommand { approval_id: id }).await?,
    ))
}

async fn insights(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::InsightsCommand {}).await?))
}

/// The rule added, or the identical one already there with `already_existed: true`.
async fn add_rule(State(s): State<Arc<AppState>>, Json(body): Json<RuleBody>) -> ApiResult<Value> {
    let rule = body.rule()?;
    let add = cmd::AddRule {
        server: rule.server,
        tool: rule.tool,
        pointer: rule.pointer,
        pattern: rule.pattern,
        effect: rule.effect,
    };
    Ok(Json(table(&s, add).await?))
}

/// Removes a rule; 404 `unknown_rule` when there is none with this id.
async fn remove_rule(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Value> {
    table(&s, cmd::RemoveRule { id: id.clone() }).await?;
    Ok(Json(json!({ "removed": id })))
}

async fn remembered(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Remembered {}).await?))
}

async fn grants(State(s): State<Arc<AppState>>) -> ApiResult<Value> {
    Ok(Json(table(&s, cmd::Grants {}).await?))
}

async fn revoke(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Value> {
    let revoked = table(&s, cmd::RevokeRemembered { id }).await?;
    Ok(Json(json!({ "revoked": revoked })))
}

#[derive(Deserialize)]
struct AuditQuery {
    #[serde(default)]
    limit: Option<usize>,
}

async fn audit(
    State(s): State<Arc<AppState>>,
    Query(query): Query<AuditQuery>,
) -> ApiResult<Value> {
    let limit = Some(query.limit.unwrap_or(1000));
    Ok(Json(table(&s, cmd::Audit { limit }).await?))
}

async fn events(
    State(s): State<Arc<AppState>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = BroadcastStream::new(s.engine.subscribe()).filter_map(|event| {
        let event = event.ok()?;
        let kind = serde_json::to_value(&event)
            .ok()?
            .get("type")?
            .as_str()?
            .to_string();
        Event::default().event(kind).json_data(&event).ok().map(Ok)
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
