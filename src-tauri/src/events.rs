//! Forwards every engine event to the UI and keeps the tray and notifications in step.

use crate::pending::PendingSet;
use crate::{notifications, tray};
use airlock_engine::{Engine, EngineEvent};
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::broadcast::error::RecvError;

/// Every `EngineEvent`, as is.
pub const ENGINE_EVENT: &str = "engine-event";
/// Events were dropped (the UI fell behind): reload everything.
pub const RESYNC_EVENT: &str = "engine-resync";

pub fn forward<R: Runtime>(app: AppHandle<R>, engine: Engine) {
    let mut events = engine.subscribe();
    let notify = notifications::start(app.clone(), engine.clone());
    tauri::async_runtime::spawn(async move {
        let mut pending = recount(&engine);
        let mut storage_failed = engine.storage_failure().is_some();
        tray::show_count(&app, pending.len());
        loop {
            match events.recv().await {
                Ok(event) => {
                    let _ = app.emit(ENGINE_EVENT, &event);
                    // Every way an item leaves the inbox (decided, expired, cancelled) is an
                    // ApprovalsDecided event: the count follows events, never a re-read.
                    let changed = pending.apply(&event);
                    match &event {
                        EngineEvent::ApprovalRequested { item } => {
                            let _ = notify.send((**item).clone());
                        }
                        EngineEvent::Paused { paused } => tray::show_paused(&app, *paused),
                        EngineEvent::StorageFailed { .. } => storage_failed = true,
                        _ => {}
                    }
                    if storage_failed {
                        tray::show_storage_failure(&app);
                    } else if changed {
                        tray::show_count(&app, pending.len());
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    let _ = app.emit(RESYNC_EVENT, ());
                    pending = recount(&engine);
                    tray::show_count(&app, pending.len());
                }
                Err(RecvError::Closed) => break,
            }
        }
    });
}

fn recount(engine: &Engine) -> PendingSet {
    match engine.inbox() {
        Ok(items) => PendingSet::from_items(&items),
        Err(error) => {
            tracing::warn!("cannot read the inbox: {error}");
            PendingSet::default()
        }
    }
}
