//! A remote MCP server behind OAuth 2.1 on 127.0.0.1, for the sign-in tests: protected-resource
//! metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic client registration
//! (RFC 7591), an authorization endpoint that approves at once (it redirects the browser back
//! with a code — the person's consent is not what is tested), a token endpoint (authorization
//! code with PKCE S256, refresh token, and the client-credentials grant of one machine client,
//! [`MACHINE_CLIENT_ID`] with [`MACHINE_SECRET`]), and a streamable-HTTP MCP endpoint (JSON answers) with
//! one tool, `whoami`, that answers only to a valid bearer token. Each way a server can
//! misbehave (`Misbehave`) is a switch, so a test can check that Airlock refuses it. A token is
//! granted the scopes its authorization asked for (`mcp:tools` when none), and a method (listing
//! the tools, calling one) may be made to need one more ([`OAuthMcpServer::require_scope_for`]:
//! a `403 insufficient_scope` until a token has it).

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The machine client the token endpoint knows (client-credentials grant, `client_secret_post`).
pub const MACHINE_CLIENT_ID: &str = "machine-client";
/// Its secret.
pub const MACHINE_SECRET: &str = "machine-secret";

/// One way the server misbehaves.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Misbehave {
    /// Behaves.
    #[default]
    None,
    /// The authorization endpoint sends the browser somewhere other than the redirect URI.
    RedirectElsewhere,
    /// The access token is a JWT whose audience is another resource.
    TokenForAnotherResource,
    /// The authorization-server metadata names a token endpoint on plain HTTP off loopback.
    PlainHttpTokenEndpoint,
    /// The authorization-server metadata is not JSON.
    GarbageMetadata,
    /// The authorization endpoint sends the browser back with another `state`.
    WrongState,
}

#[derive(Default)]
struct Tokens {
    /// access token → when it expires, and its scopes.
    access: HashMap<String, (Instant, String)>,
    /// refresh token → its scopes.
    refresh: HashMap<String, String>,
    /// authorization code → PKCE challenge, and the scopes asked for.
    codes: HashMap<String, (String, String)>,
}

/// The scopes of a token whose authorization asked for none.
const DEFAULT_SCOPE: &str = "mcp:tools";

struct Shared {
    base: String,
    misbehave: Misbehave,
    access_ttl: Duration,
    refuse_refresh: AtomicBool,
    counter: AtomicU64,
    refreshes: AtomicU64,
    machine_grants: AtomicU64,
    tool_calls: AtomicU64,
    scopes_requested: Mutex<Vec<String>>,
    /// The scope a method (`tools/list`, `tools/call`) needs beyond a valid token.
    method_scopes: Mutex<HashMap<String, String>>,
    tokens: Mutex<Tokens>,
}

/// The running server; stops when dropped.
pub struct OAuthMcpServer {
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl OAuthMcpServer {
    /// Starts it on a free port of 127.0.0.1; access tokens live `access_ttl`.
    pub async fn start(misbehave: Misbehave, access_ttl: Duration) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            base: format!("http://127.0.0.1:{}", address.port()),
            misbehave,
            access_ttl,
            refuse_refresh: AtomicBool::new(false),
            counter: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            machine_grants: AtomicU64::new(0),
            tool_calls: AtomicU64::new(0),
            scopes_requested: Mutex::new(Vec::new()),
            method_scopes: Mutex::new(HashMap::new()),
            tokens: Mutex::new(Tokens::default()),
        });
        let app = Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-protected-resource",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(server_metadata),
            )
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/mcp", post(mcp))
            .with_state(shared.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            shared,
            _stop: stop,
        })
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.shared.base)
    }

    /// From now on, refuse every refresh token (`invalid_grant`), as after a revocation.
    pub fn refuse_refreshes(&self) {
        self.shared.refuse_refresh.store(true, Ordering::SeqCst);
    }

    /// Forgets every access token, as a server does when it revokes them.
    pub fn revoke_access_tokens(&self) {
        self.shared
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .access
            .clear();
    }

    /// From now on `method` (`tools/list`, `tools/call`) needs a token with `scope` too:
    /// without it the answer is `403` with `WWW-Authenticate: Bearer error="insufficient_scope",
    /// scope="SCOPE"`.
    pub fn require_scope_for(&self, method: &str, scope: &str) {
        self.shared
            .method_scopes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(method.to_string(), scope.to_string());
    }

    /// How many refresh grants succeeded.
    pub fn refreshes(&self) -> u64 {
        self.shared.refreshes.load(Ordering::SeqCst)
    }

    /// How many client-credentials grants succeeded.
    pub fn machine_grants(&self) -> u64 {
        self.shared.machine_grants.load(Ordering::SeqCst)
    }

    /// How many `tools/call` requests were answered (with a valid token).
    pub fn tool_calls(&self) -> u64 {
        self.shared.tool_calls.load(Ordering::SeqCst)
    }

    /// The `scope` of every authorization request, in order.
    pub fn scopes_requested(&self) -> Vec<String> {
        self.shared
            .scopes_requested
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn next(shared: &Shared, prefix: &str) -> String {
    format!(
        "{prefix}-{}",
        shared.counter.fetch_add(1, Ordering::SeqCst) + 1
    )
}

async fn resource_metadata(State(shared): State<Arc<Shared>>) -> Response {
    axum::Json(json!({
        "resource": format!("{}/mcp", shared.base),
        "authorization_servers": [shared.base],
        "scopes_supported": ["mcp:tools"],
    }))
    .into_response()
}

async fn server_metadata(State(shared): State<Arc<Shared>>) -> Response {
    if shared.misbehave == Misbehave::GarbageMetadata {
        return (
            [(header::CONTENT_TYPE, "application/json")],
            "<html>this is not metadata",
        )
            .into_response();
    }
    let token_endpoint = if shared.misbehave == Misbehave::PlainHttpTokenEndpoint {
        "http://auth.example.com/token".to_string()
    } else {
        format!("{}/token", shared.base)
    };
    axum::Json(json!({
        "issuer": shared.base,
        "authorization_endpoint": format!("{}/authorize", shared.base),
        "token_endpoint": token_endpoint,
        "registration_endpoint": format!("{}/register", shared.base),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        "scopes_supported": ["mcp:tools", "mcp:admin"],
    }))
    .into_response()
}

async fn register(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "client_id": next(&shared, "client"),
            "redirect_uris": request["redirect_uris"],
            "token_endpoint_auth_method": "none",
        })),
    )
        .into_response()
}

async fn authorize(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let (Some(redirect), Some(state), Some(challenge)) = (
        query.get("redirect_uri"),
        query.get("state"),
        query.get("code_challenge"),
    ) else {
        return (
            StatusCode::BAD_REQUEST,
            "missing redirect_uri, state or PKCE",
        )
            .into_response();
    };
    if query.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return (StatusCode::BAD_REQUEST, "PKCE S256 only").into_response();
    }
    let scope = query.get("scope").cloned().unwrap_or_default();
    shared
        .scopes_requested
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(scope.clone());
    let code = next(&shared, "code");
    shared
        .tokens
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .codes
        .insert(code.clone(), (challenge.clone(), scope));
    let target = match shared.misbehave {
        // Port 9 (discard) on loopback: nobody Airlock knows listens there.
        Misbehave::RedirectElsewhere => {
            format!("http://127.0.0.1:9/elsewhere?code={code}&state={state}")
        }
        Misbehave::WrongState => format!("{redirect}?code={code}&state=not-{state}"),
        _ => format!("{redirect}?code={code}&state={state}"),
    };
    (StatusCode::FOUND, [(header::LOCATION, target)]).into_response()
}

fn form(body: &Bytes) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest) == challenge
}

fn token_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
}

async fn token(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let form = form(&body);
    let mut tokens = shared.tokens.lock().unwrap_or_else(|p| p.into_inner());
    let scope = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let asked = form.get("code").and_then(|code| tokens.codes.remove(code));
            let verified = match (&asked, form.get("code_verifier")) {
                (Some((challenge, _)), Some(verifier)) => pkce_matches(verifier, challenge),
                _ => false,
            };
            if !verified {
                return token_error("invalid_grant");
            }
            asked.map(|(_, scope)| scope).unwrap_or_default()
        }
        Some("refresh_token") => {
            let known = form
                .get("refresh_token")
                .and_then(|t| tokens.refresh.get(t))
                .cloned();
            let Some(scope) = known.filter(|_| !shared.refuse_refresh.load(Ordering::SeqCst))
            else {
                return token_error("invalid_grant");
            };
            shared.refreshes.fetch_add(1, Ordering::SeqCst);
            scope
        }
        Some("client_credentials") => {
            let known = form.get("client_id").map(String::as_str) == Some(MACHINE_CLIENT_ID)
                && form.get("client_secret").map(String::as_str) == Some(MACHINE_SECRET);
            if !known {
                return (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"error": "invalid_client"})),
                )
                    .into_response();
            }
            shared.machine_grants.fetch_add(1, Ordering::SeqCst);
            String::new()
        }
        _ => return token_error("unsupported_grant_type"),
    };
    let scope = if scope.trim().is_empty() {
        DEFAULT_SCOPE.to_string()
    } else {
        scope
    };
    let access = if shared.misbehave == Misbehave::TokenForAnotherResource {
        use base64::Engine as _;
        let encode = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let claims = json!({"aud": "https://another.example.com/mcp", "sub": "someone"});
        format!(
            "{}.{}.unsigned",
            encode(br#"{"alg":"none","typ":"JWT"}"#),
            encode(claims.to_string().as_bytes())
        )
    } else {
        next(&shared, "access")
    };
    let refresh = next(&shared, "refresh");
    tokens.access.insert(
        access.clone(),
        (Instant::now() + shared.access_ttl, scope.clone()),
    );
    tokens.refresh.insert(refresh.clone(), scope.clone());
    axum::Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": shared.access_ttl.as_secs(),
        "refresh_token": refresh,
        "scope": scope,
    }))
    .into_response()
}

/// The scopes of the request's bearer token, while it is valid.
fn authorized(shared: &Shared, headers: &HeaderMap) -> Option<String> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))?;
    let tokens = shared.tokens.lock().unwrap_or_else(|p| p.into_inner());
    tokens
        .access
        .get(token)
        .filter(|(expires, _)| *expires > Instant::now())
        .map(|(_, scope)| scope.clone())
}

async fn mcp(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(granted) = authorized(&shared, &headers) else {
        let challenge = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#,
            shared.base
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            "sign in first",
        )
            .into_response();
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let needed = shared
        .method_scopes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(request["method"].as_str().unwrap_or_default())
        .cloned();
    if let Some(needed) = needed
        && !granted.split_whitespace().any(|s| s == needed)
    {
        let challenge = format!(
            r#"Bearer error="insufficient_scope", scope="{needed}", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
            shared.base
        );
        return (
            StatusCode::FORBIDDEN,
            [(header::WWW_AUTHENTICATE, challenge)],
            "a wider scope is needed",
        )
            .into_response();
    }
    let Some(id) = request.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response(); // a notification
    };
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-test-server", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says who the token belongs to",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => {
            shared.tool_calls.fetch_add(1, Ordering::SeqCst);
            json!({"content": [{"type": "text", "text": "signed in as someone"}]})
        }
        _ => json!({}),
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}
