//! What a paired device may do, and nothing else.

use crate::page;
use airlock_engine::commands::{Caller, NoHost};
use airlock_engine::{DecisionRequest, ElicitationAnswer, Engine, EngineError, EngineEvent};
use airlock_protocol::commands::{AnswerElicitation, Command, Decide, Inbox};
use airlock_protocol::{CommandError, DECISIONS_BODY_LIMIT, DecisionOutcome, DeviceView};
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
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

/// Wrong pairing codes accepted from one source in a window before its attempts are refused for
/// a while.
const PAIRING_FAILURES: usize = 5;
const PAIRING_WINDOW: Duration = Duration::from_secs(60);
/// The largest body a device may send, but for a batch of decisions (Approve all).
const MAX_BODY: usize = 1024 * 1024;

struct Remote {
    engine: Engine,
    failures: PairingFailures,
}

/// When each source's latest wrong pairing codes were tried. Counted per source, so that one
/// device on the network that keeps guessing locks out only itself, never the person pairing
/// their phone; what bounds guessing from many addresses is the code space (31^10 codes, each
/// live for five minutes).
#[derive(Default)]
struct PairingFailures(Mutex<HashMap<IpAddr, VecDeque<Instant>>>);

impl PairingFailures {
    /// Whether `source` may try a code now. Failures older than the window are forgotten
    /// (every source's, so the map holds only the last minute's).
    fn allows(&self, source: IpAddr, now: Instant) -> bool {
        let mut failures = self.0.lock().unwrap_or_else(|p| p.into_inner());
        failures.retain(|_, times| {
            times.retain(|at| now.duration_since(*at) <= PAIRING_WINDOW);
            !times.is_empty()
        });
        failures
            .get(&source_of(source))
            .is_none_or(|times| times.len() < PAIRING_FAILURES)
    }

    fn record(&self, source: IpAddr, now: Instant) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(source_of(source))
            .or_default()
            .push_back(now);
    }
}

/// The source a pairing limit counts against: the IPv4 address, or an IPv6 address's /64 (one
/// host usually holds a whole /64 and picks any address in it).
fn source_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn engine_error(e: EngineError) -> Response {
    let status =
        StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error(status, e.to_string())
}

/// The phone inbox's routes for a listener at `served` (the Host every request must name).
pub fn router(engine: Engine, served: SocketAddr) -> Router {
    let state = Arc::new(Remote {
        engine,
        failures: PairingFailures::default(),
    });
    let device_routes = Router::new()
        // The command table's phone subset (`Surface::Phone`): what the phone page calls.
        .route(
            "/v1/commands/{name}",
            post(command).layer(DefaultBodyLimit::max(DECISIONS_BODY_LIMIT)),
        )
        // The same commands at the paths paired phones used first.
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
        .layer(middleware::from_fn_with_state(
            Arc::new(served_hosts(served)),
            check_host,
        ))
        .with_state(state)
}

/// The Hosts a request may name: the address the listener serves, with its port (and without
/// it on 443, as browsers send it), and `localhost` when that address is this machine's
/// loopback (its certificate names both).
fn served_hosts(served: SocketAddr) -> Vec<String> {
    let ip = match served.ip() {
        IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    let mut names = vec![ip];
    if served.ip().is_loopback() {
        names.push("localhost".into());
    }
    let port = served.port();
    let mut hosts: Vec<String> = names.iter().map(|name| format!("{name}:{port}")).collect();
    if port == 443 {
        hosts.extend(names);
    }
    hosts
}

/// Refuses a request that names another Host: a page whose name was made to resolve to this
/// address (DNS rebinding) is not this inbox's page, and may not talk to it.
async fn check_host(
    State(hosts): State<Arc<Vec<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|h| h.to_str().unwrap_or("").to_string())
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    if hosts
        .iter()
        .any(|served| served.eq_ignore_ascii_case(&host))
    {
        return next.run(request).await;
    }
    error(
        StatusCode::FORBIDDEN,
        format!(
            "refused: Host '{host}' is not this phone inbox (it answers at {})",
            hosts
                .first()
                .map(String::as_str)
                .unwrap_or("its own address")
        ),
    )
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
    if !state.failures.allows(peer.ip(), now) {
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            "too many wrong pairing codes; wait a minute and ask for a new code",
        );
    }
    match state.engine.pair_device(&body.code, &body.device_name) {
        Ok((device, token)) => {
            tracing::info!(device = %device.name, %peer, "a device paired with the phone inbox");
            Json(json!({ "token": token, "device": device })).into_response()
        }
        Err(EngineError::NotAllowed(message)) => {
            state.failures.record(peer.ip(), now);
            error(StatusCode::FORBIDDEN, message)
        }
        Err(e) => engine_error(e),
    }
}

fn command_error(e: CommandError) -> Response {
    let status =
        StatusCode::from_u16(e.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(json!({ "error": e.message, "code": e.code }))).into_response()
}

/// Runs one of the table's commands as this device, through the one dispatcher; a command that
/// is not the phone's is refused there (403 `not_allowed`).
async fn run(
    state: &Remote,
    device: &DeviceView,
    name: &str,
    args: Value,
) -> Result<Value, Response> {
    let caller = Caller::Phone {
        device: device.name.clone(),
    };
    airlock_engine::commands::dispatch(&state.engine, &NoHost, &caller, name, args)
        .await
        .map_err(command_error)
}

async fn command(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Path(name): Path<String>,
    args: Option<Json<Value>>,
) -> Response {
    let args = args.map(|Json(args)| args).unwrap_or(Value::Null);
    match run(&state, &device, &name, args).await {
        Ok(value) => Json(value).into_response(),
        Err(refused) => refused,
    }
}

async fn inbox(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
) -> Response {
    match run(&state, &device, Inbox::NAME, Value::Null).await {
        Ok(items) => Json(items).into_response(),
        Err(refused) => refused,
    }
}

/// `decide` for a batch, each outcome as the first phone paths gave it: `{approval_id}` or
/// `{approval_id, error, code}`.
async fn decided(
    state: &Remote,
    device: &DeviceView,
    decisions: Vec<DecisionRequest>,
) -> Result<Vec<Value>, Response> {
    let args = serde_json::to_value(Decide {
        decisions,
        channel: None,
    })
    .map_err(|e| error(StatusCode::BAD_REQUEST, e.to_string()))?;
    let outcomes = run(state, device, Decide::NAME, args).await?;
    let outcomes: Vec<DecisionOutcome> = serde_json::from_value(outcomes)
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(outcomes
        .into_iter()
        .map(|outcome| match outcome.error {
            None => json!({ "approval_id": outcome.approval_id }),
            Some(e) => {
                json!({ "approval_id": outcome.approval_id, "error": e.message, "code": e.code })
            }
        })
        .collect())
}

async fn decide(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Json(request): Json<DecisionRequest>,
) -> Response {
    match decided(&state, &device, vec![request]).await {
        Ok(mut outcomes) => {
            let outcome = outcomes.pop().unwrap_or(Value::Null);
            if outcome.get("error").is_some() {
                (StatusCode::CONFLICT, Json(outcome)).into_response()
            } else {
                Json(outcome).into_response()
            }
        }
        Err(refused) => refused,
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
    match decided(&state, &device, batch.decisions).await {
        Ok(outcomes) => Json(outcomes).into_response(),
        Err(refused) => refused,
    }
}

async fn answer(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
    Path(id): Path<String>,
    Json(answer): Json<ElicitationAnswer>,
) -> Response {
    let args = serde_json::to_value(AnswerElicitation {
        approval_id: id.clone(),
        answer,
    })
    .unwrap_or(Value::Null);
    match run(&state, &device, AnswerElicitation::NAME, args).await {
        Ok(_) => Json(json!({ "answered": id })).into_response(),
        Err(refused) => refused,
    }
}

/// What waits and what was decided, live: the inbox's events only, until the device is revoked
/// (the stream ends then, before anything that happens after).
async fn events(
    State(state): State<Arc<Remote>>,
    Extension(device): Extension<DeviceView>,
) -> Response {
    // Listening before the check: a revocation in between is seen by one or the other.
    let events = state.engine.subscribe();
    match state.engine.device_is_paired(&device.id) {
        Ok(true) => {}
        Ok(false) => return error(StatusCode::UNAUTHORIZED, "this device was revoked"),
        Err(e) => return engine_error(e),
    }
    let engine = state.engine.clone();
    let until_revoked = BroadcastStream::new(events).take_while(move |event| match event {
        Ok(EngineEvent::DeviceRevoked { device_id }) => *device_id != device.id,
        Ok(_) => true,
        // Events were missed, this device's revocation maybe among them: ask.
        Err(_) => engine.device_is_paired(&device.id).unwrap_or(false),
    });
    Sse::new(inbox_events(until_revoked))
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn inbox_events(
    events: impl Stream<Item = Result<EngineEvent, BroadcastStreamRecvError>>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    events.filter_map(|event| {
        let event = event.ok()?;
        let kind = match &event {
            EngineEvent::ApprovalRequested { .. } => "approval_requested",
            EngineEvent::ApprovalsDecided { .. } => "approvals_decided",
            _ => return None,
        };
        Event::default().event(kind).json_data(&event).ok().map(Ok)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pairing_limit_counts_an_ipv6_hosts_whole_64_and_forgets_after_its_window() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let failures = PairingFailures::default();
        let start = Instant::now();
        for _ in 0..PAIRING_FAILURES {
            assert!(failures.allows(ip("2001:db8:1:2::5"), start));
            failures.record(ip("2001:db8:1:2::5"), start);
        }
        // Any address in the same /64 is the same source; the next /64 and IPv4 are others.
        assert!(!failures.allows(ip("2001:db8:1:2:ffff::1"), start));
        assert!(failures.allows(ip("2001:db8:1:3::5"), start));
        assert!(failures.allows(ip("192.0.2.7"), start));
        // An IPv4 peer seen through an IPv6 socket is that IPv4 address.
        for _ in 0..PAIRING_FAILURES {
            failures.record(ip("192.0.2.7"), start);
        }
        assert!(!failures.allows(ip("::ffff:192.0.2.7"), start));
        let later = start + PAIRING_WINDOW + Duration::from_secs(1);
        assert!(failures.allows(ip("2001:db8:1:2::5"), later));
        assert!(failures.allows(ip("192.0.2.7"), later));
        assert!(
            failures.0.lock().unwrap().is_empty(),
            "forgotten sources are dropped"
        );
    }

    #[test]
    fn the_hosts_served_are_the_listeners_address_and_localhost_only_on_loopback() {
        let served = |addr: &str| served_hosts(addr.parse().unwrap());
        assert_eq!(served("192.168.1.20:8443"), ["192.168.1.20:8443"]);
        assert_eq!(
            served("127.0.0.1:8443"),
            ["127.0.0.1:8443", "localhost:8443"]
        );
        assert_eq!(
            served("[fd7a:115c::5]:443"),
            ["[fd7a:115c::5]:443", "[fd7a:115c::5]"]
        );
    }
}
