//! What a paired device may do, and nothing else.

use crate::page;
use airlock_engine::{DecisionRequest, ElicitationAnswer, Engine, EngineError, EngineEvent};
use airlock_protocol::{DECISIONS_BODY_LIMIT, DeviceView};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

/// Wrong pairing codes accepted in a window before every attempt is refused for a while.
const PAIRING_FAILURES: usize = 5;
const PAIRING_WINDOW: Duration = Duration::from_secs(60);
/// The largest body a device may send, but for a batch of decisions (Approve all).
const MAX_BODY: usize = 1024 * 1024;

struct Remote {
    engine: Engine,
    /// When the latest wrong pairing codes were tried (all sources together: the code space is
    /// what an attacker guesses, from however many addresses).
    failures: Mutex<VecDeque<Instant>>,
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn engine_error(e: EngineError) -> Response {
    let status =
        StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error(status, e.to_string())
}

pub fn router(engine: Engine) -> Router {
    let state = Arc::new(Remote {
        engine,
        failures: Mutex::new(VecDeque::new()),
    });
    let device_routes = Router::new()
        .route("/v1/inbox", get(inbox))
        .route("/v1/decisions", post(decide))
        .route(
            "/v1/decisions/batch",
            post(decide_batch).layer(DefaultBodyLimit::max(DECISIONS_BODY_LIMIT)),
        )
        .route("/v1/elicitations/{id}/answer", post(answer))
        .route("/v1/events", get(events))
        // Settings, servers, rules, grants, providers, chats: not for a phone.
        .route("/v1/{*rest}", any(forbidden))
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    Router::new()
        .route("/", get(page::index))
        .route("/assets/{name}", get(page::asset))
        .route("/manifest.webmanifest", get(page::manifest))
        .route("/sw.js", get(page::service_worker))
        .route("/icon-256.png", get(page::icon_256))
        .route("/icon-512.png", get(page::icon_512))
        .route("/v1/pair", post(pair))
        .merge(device_routes)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn(page::security_headers))
        .with_state(state)
}

/// A device's bearer token, else 401.
async fn authenticate(
    State(state): State<Arc<Remote>>,
    headers: HeaderMap,
    mut request: Request,
    next: Next,
) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = token else {
        return error(StatusCode::UNAUTHORIZED, "pair this device first");
    };
    match state.engine.device_for_token(token) {
        Ok(Some(device)) => {
            request.extensions_mut().insert(device);
            next.run(request).await
        }
        Ok(None) => error(
            StatusCode::UNAUTHORIZED,
            "this device is not paired (or was revoked); pair it again",
        ),
        Err(e) => engine_error(e),
    }
}

async fn forbidden() -> Response {
    error(
        StatusCode::FORBIDDEN,
        "a paired device can list what waits and decide it; everything else is on the desktop",
    )
}

#[derive(Deserialize)]
struct PairBody {
    code: String,
    device_name: String,
}

async fn pair(
    State(state): State<Arc<Remote>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Json(body): Json<PairBody>,
) -> Response {
    let now = Instant::now();
    {
        let mut failures = state.failures.lock().unwrap_or_else(|p| p.into_inner());
        while failures
            .front()
            .is_some_and(|at| now.duration_since(*at) > PAIRING_WINDOW)
        {
            failures.pop_front();
        }
        if failures.len() >= PAIRING_FAILURES {
            return error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many wrong pairing codes; wait a minute and ask for a new code",
            );
        }
    }
    match state.engine.pair_device(&body.code, &body.device_name) {
        Ok((device, token)) => {
            tracing::info!(device = %device.name, %peer, "a device paired with the phone inbox");
            Json(json!({ "token": token, "device": device })).into_response()
        }
        Err(EngineError::NotAllowed(message)) => {
            state
                .failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_back(now);
            error(StatusCode::FORBIDDEN, message)
        }
        Err(e) => engine_error(e),
    }
}

async fn inbox(State(state): State<Arc<Remote>>) -> Response {
    match state.engine.inbox() {
        Ok(items) => Json(items).into_response(),
        Err(e) => engine_error(e),
    }
}

fn decided(
    state: &Remote,
    device: &DeviceView,
    requests: Vec<DecisionRequest>,
) -> Result<Vec<Value>, EngineError> {
    let ids: Vec<String> = requests.iter().map(|r| r.approval_id.clone()).collect();
    let outcomes = state
        .engine
        .decide_many_from_device(requests, &device.name)?;
    Ok(ids
        .into_iter()
        .zip(outcomes)
        .map(|(id, outcome)| match outcome {
            Ok(row) => json!({ "approval_id": id, "status": row.status }),
            Err(e) => {
                json!({ "approval_id": id, "error": e.to_string(), "code": e.code().as_str() })
            }
        })
        .collect())
}

async fn decide(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Json(request): Json<DecisionRequest>,
) -> Response {
    match decided(&state, &device, vec![request]) {
        Ok(mut outcomes) => {
            let outcome = outcomes.pop().unwrap_or(Value::Null);
            if outcome.get("error").is_some() {
                (StatusCode::CONFLICT, Json(outcome)).into_response()
            } else {
                Json(outcome).into_response()
            }
        }
        Err(e) => engine_error(e),
    }
}

#[derive(Deserialize)]
struct Batch {
    decisions: Vec<DecisionRequest>,
}

async fn decide_batch(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Json(batch): Json<Batch>,
) -> Response {
    match decided(&state, &device, batch.decisions) {
        Ok(outcomes) => Json(outcomes).into_response(),
        Err(e) => engine_error(e),
    }
}

async fn answer(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Path(id): Path<String>,
    Json(answer): Json<ElicitationAnswer>,
) -> Response {
    match state.engine.answer_from_device(&id, answer, &device.name) {
        Ok(()) => Json(json!({ "answered": id })).into_response(),
        Err(e) => engine_error(e),
    }
}

/// What waits and what was decided, live: the inbox's events only.
async fn events(
    State(state): State<Arc<Remote>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = BroadcastStream::new(state.engine.subscribe()).filter_map(|event| {
        let event = event.ok()?;
        let kind = match &event {
            EngineEvent::ApprovalRequested { .. } => "approval_requested",
            EngineEvent::ApprovalsDecided { .. } => "approvals_decided",
            _ => return None,
        };
        Event::default().event(kind).json_data(&event).ok().map(Ok)
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
