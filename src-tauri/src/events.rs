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
        show_grants(&app, &engine);
        // A grant also ends by its time: the tray's line is read again now and then.
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(30));
        loop {
            let received = tokio::select! {
                received = events.recv() => received,
                _ = tick.tick() => {
                    show_grants(&app, &engine);
                    continue;
                }
            };
            match received {
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
                        // A grant made with a decision, or a use of one taken by a call.
                        EngineEvent::ApprovalsDecided { .. }
                        | EngineEvent::SessionStatus { .. } => show_grants(&app, &engine),
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

/// Shows how many grants are active (see [`tray::show_grants`]).
pub fn show_grants<R: Runtime>(app: &AppHandle<R>, engine: &Engine) {
    match engine.grants() {
        Ok(grants) => tray::show_grants(app, grants.len()),
        Err(error) => tracing::warn!("cannot read the grants: {error}"),
    }
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
