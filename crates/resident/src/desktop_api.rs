//! The window's way in: the local API's `/v1/desktop` routes, behind the same Host, Origin and
//! token checks as the rest of it. `invoke/{command}` runs one of [`crate::commands`] for the
//! window's UI; `events` is the open window's stream of engine events and of what the resident
//! tells it (show, go to an item, quit). A window is open exactly as long as its stream is.

use crate::commands;
use crate::shell::Connected;
use crate::shell::Shell;
use crate::window::{self, WindowMessage};
use airlock_engine::EngineEvent;
use airlock_protocol::DECISIONS_BODY_LIMIT;
use airlock_protocol::desktop::{
    ENGINE_EVENT, EVENTS_PATH, INVOKE_PATH, NAVIGATE_EVENT, QUIT_EVENT, RESYNC_EVENT, SHOW_EVENT,
    WINDOWS_PATH,
};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::Stream;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

pub fn routes(shell: Arc<Shell>) -> Router {
    Router::new()
        .route(
            &format!("{INVOKE_PATH}{{command}}"),
            post(invoke).layer(DefaultBodyLimit::max(DECISIONS_BODY_LIMIT)),
        )
        .route(EVENTS_PATH, get(events))
        .route(WINDOWS_PATH, get(windows))
        .with_state(shell)
}

/// `{"Ok": result}` or `{"Err": CommandError}`: a refused command is an answer, not a failure of
/// the request.
async fn invoke(
    State(shell): State<Arc<Shell>>,
    Path(command): Path<String>,
    args: Option<Json<Value>>,
) -> Json<Value> {
    let args = args.map(|Json(args)| args).unwrap_or(Value::Null);
    Json(match commands::dispatch(&shell, &command, &args).await {
        Ok(value) => json!({ "Ok": value }),
        Err(error) => json!({ "Err": error }),
    })
}

async fn windows(State(shell): State<Arc<Shell>>) -> Json<window::WindowsView> {
    Json(shell.windows_view())
}

async fn events(
    State(shell): State<Arc<Shell>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let engine_events = shell.engine.subscribe();
    let (connected, messages) = shell.connect_window();
    Sse::new(window_stream(connected, engine_events, messages)).keep_alive(KeepAlive::default())
}

struct Streams {
    /// Held for the stream's life: the window counts as open while it is.
    _connected: Connected,
    engine: broadcast::Receiver<EngineEvent>,
    messages: broadcast::Receiver<WindowMessage>,
}

fn window_stream(
    connected: Connected,
    engine: broadcast::Receiver<EngineEvent>,
    messages: broadcast::Receiver<WindowMessage>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let streams = Streams {
        _connected: connected,
        engine,
        messages,
    };
    futures::stream::unfold(streams, |mut streams| async move {
        let event = tokio::select! {
            received = streams.engine.recv() => match received {
                Ok(event) => Event::default().event(ENGINE_EVENT).json_data(&event).ok()?,
                Err(RecvError::Lagged(_)) => Event::default().event(RESYNC_EVENT).data("null"),
                Err(RecvError::Closed) => return None,
            },
            received = streams.messages.recv() => match received {
                Ok(WindowMessage::Show) => Event::default().event(SHOW_EVENT).data("null"),
                Ok(WindowMessage::Navigate(navigate)) => {
                    Event::default().event(NAVIGATE_EVENT).json_data(&navigate).ok()?
                }
                Ok(WindowMessage::Quit) | Err(RecvError::Closed) => {
                    Event::default().event(QUIT_EVENT).data("null")
                }
                Err(RecvError::Lagged(_)) => Event::default().event(SHOW_EVENT).data("null"),
            },
        };
        Some((Ok(event), streams))
    })
}
