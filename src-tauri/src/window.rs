//! The window process (`airlock-desktop --window`): the web view and nothing else. Every invoke
//! of the UI goes to the resident process over the local API and its answer comes back as is;
//! the resident's event stream brings engine events and what to show. Closing the window ends
//! this process, web view and all, while Airlock keeps running in the resident.

use airlock_client::ApiClient;
use airlock_protocol::desktop::{
    ENGINE_EVENT, EVENTS_PATH, INVOKE_PATH, NAVIGATE_EVENT, QUIT_EVENT, RESYNC_EVENT, SHOW_EVENT,
};
use futures::StreamExt;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tauri::ipc::{Invoke, InvokeBody, InvokeError};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewWindowBuilder};

pub const MAIN: &str = "main";

/// Runs the window until it is closed (or Airlock quits).
pub fn run(data_dir: &Path) -> anyhow::Result<()> {
    let client = Arc::new(ApiClient::discover(data_dir)?);
    let forwarding = client.clone();
    let app = tauri::Builder::default()
        .invoke_handler(move |invoke| forward(&forwarding, invoke))
        .on_page_load(|webview, payload| {
            if payload.event() == PageLoadEvent::Finished {
                show_if_hidden(webview.app_handle());
            }
        })
        .setup(move |app| {
            create(app.handle());
            tauri::async_runtime::spawn(show_at_the_latest(app.handle().clone()));
            tauri::async_runtime::spawn(follow(app.handle().clone(), client));
            Ok(())
        })
        .build(tauri::generate_context!())?;
    app.run(|_, _| {});
    Ok(())
}

/// One invoke of the UI, answered by the resident: its result, or its `CommandError`; when the
/// resident cannot be reached, an `internal` error the UI shows (nothing ran).
fn forward<R: Runtime>(client: &Arc<ApiClient>, invoke: Invoke<R>) -> bool {
    let path = format!("{INVOKE_PATH}{}", invoke.message.command());
    let args = match invoke.message.payload() {
        InvokeBody::Json(args) => args.clone(),
        InvokeBody::Raw(_) => Value::Null,
    };
    let client = client.clone();
    invoke.resolver.respond_async(async move {
        let answer: Value = client
            .post(&path, &args)
            .await
            .map_err(|error| unreachable_resident(&error.to_string()))?;
        match answer {
            Value::Object(mut answer) => match (answer.remove("Ok"), answer.remove("Err")) {
                (Some(value), _) => Ok(value),
                (None, Some(error)) => Err(InvokeError(error)),
                (None, None) => Err(unreachable_resident("an answer without a result")),
            },
            _ => Err(unreachable_resident("an answer that is not an object")),
        }
    });
    true
}

fn unreachable_resident(why: &str) -> InvokeError {
    InvokeError(serde_json::json!({
        "code": "internal",
        "message": format!("Airlock's engine did not answer: {why}"),
    }))
}

/// Creates the main window from the configuration, hidden: it is shown once its page has
/// loaded ([`PageLoadEvent::Finished`]). Drawn while its web process was still starting, the web
/// view waited up to 500 ms for a frame the web process could not send (it was itself waiting
/// on this process): reopening took ~0.9 s instead of ~0.4 s in one run of three.
fn create<R: Runtime>(app: &AppHandle<R>) {
    let Some(config) = app.config().app.windows.iter().find(|w| w.label == MAIN) else {
        tracing::error!("no window `{MAIN}` in the configuration");
        return;
    };
    let mut config = config.clone();
    config.visible = false;
    if let Err(error) = WebviewWindowBuilder::from_config(app, &config).and_then(|b| b.build()) {
        tracing::error!("could not open the window: {error}");
    }
}

/// A page that never finishes loading (a broken build, a hung web process) still gets its
/// window, empty, rather than none.
const SHOW_AT_THE_LATEST: Duration = Duration::from_secs(3);

async fn show_at_the_latest<R: Runtime>(app: AppHandle<R>) {
    tokio::time::sleep(SHOW_AT_THE_LATEST).await;
    if show_if_hidden(&app) {
        tracing::warn!("the page did not finish loading: the window opens as it is");
    }
}

/// Shows the window the first time only: a page loaded again later (the UI reloading) must not
/// pull the window to the front.
fn show_if_hidden<R: Runtime>(app: &AppHandle<R>) -> bool {
    let hidden = app
        .get_webview_window(MAIN)
        .is_some_and(|window| window.is_visible().is_ok_and(|visible| !visible));
    if hidden {
        show(app);
    }
    hidden
}

fn show<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

/// Passes the resident's events on to the UI; when the stream ends (Airlock quit, or its
/// engine is gone) the window closes.
async fn follow<R: Runtime>(app: AppHandle<R>, client: Arc<ApiClient>) {
    match client.stream(EVENTS_PATH).await {
        Ok(response) => {
            let mut events = eventsource_stream::EventStream::new(response.bytes_stream());
            let mut received = 0u64;
            while let Some(next) = events.next().await {
                let event = match next {
                    Ok(event) => event,
                    Err(error) => {
                        tracing::error!(
                            "the engine's event stream broke after {received} events: {error}"
                        );
                        break;
                    }
                };
                received += 1;
                let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
                match event.event.as_str() {
                    ENGINE_EVENT => {
                        let _ = app.emit(ENGINE_EVENT, data);
                    }
                    RESYNC_EVENT => {
                        tracing::info!(
                            "the window fell behind the engine after {received} events: the UI reloads"
                        );
                        let _ = app.emit(RESYNC_EVENT, data);
                    }
                    NAVIGATE_EVENT => {
                        show(&app);
                        let _ = app.emit(NAVIGATE_EVENT, data);
                    }
                    SHOW_EVENT => show(&app),
                    QUIT_EVENT => {
                        tracing::info!("Airlock quits: the window closes");
                        break;
                    }
                    _ => {}
                }
            }
        }
        Err(error) => tracing::error!("cannot follow Airlock's engine: {error}"),
    }
    tracing::info!("the engine's event stream ended");
    app.exit(0);
}
