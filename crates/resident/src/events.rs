//! Keeps the tray and the notifications in step with the engine: the pending count from events
//! (never a re-read per event), the pause line, the grants line (also re-read now and then: a
//! grant ends by its time), a notification for each new request.

use crate::notifications;
use crate::pending::PendingSet;
use crate::shell::Shell;
use crate::tray_lines::TrayLines;
use airlock_engine::{Engine, EngineEvent};
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

pub fn follow(shell: Arc<Shell>, tray: TrayLines) -> tokio::task::JoinHandle<()> {
    let mut events = shell.engine.subscribe();
    let notify = notifications::start(shell.clone());
    tokio::spawn(async move {
        let engine = shell.engine.clone();
        let mut pending = recount(&engine);
        let mut storage_failed = engine.storage_failure().is_some();
        tray.show_count(pending.len()).await;
        tray.show_paused(engine.paused()).await;
        tray.show_grants(active_grants(&engine)).await;
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(30));
        loop {
            let received = tokio::select! {
                received = events.recv() => received,
                _ = tick.tick() => {
                    tray.show_grants(active_grants(&engine)).await;
                    continue;
                }
                _ = shell.grants_changed.notified() => {
                    tray.show_grants(active_grants(&engine)).await;
                    continue;
                }
            };
            match received {
                Ok(event) => {
                    // Every way an item leaves the inbox (decided, expired, cancelled) is an
                    // ApprovalsDecided event.
                    let changed = pending.apply(&event);
                    match &event {
                        EngineEvent::ApprovalRequested { item } => {
                            let _ = notify.send((**item).clone());
                        }
                        EngineEvent::Paused { paused } => tray.show_paused(*paused).await,
                        EngineEvent::StorageFailed { .. } => storage_failed = true,
                        // A grant made with a decision, or a use of one taken by a call.
                        EngineEvent::ApprovalsDecided { .. }
                        | EngineEvent::SessionStatus { .. } => {
                            tray.show_grants(active_grants(&engine)).await
                        }
                        _ => {}
                    }
                    if storage_failed {
                        tray.show_storage_failure().await;
                    } else if changed {
                        tray.show_count(pending.len()).await;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    pending = recount(&engine);
                    tray.show_count(pending.len()).await;
                }
                Err(RecvError::Closed) => break,
            }
        }
    })
}

fn active_grants(engine: &Engine) -> usize {
    match engine.grants() {
        Ok(grants) => grants.len(),
        Err(error) => {
            tracing::warn!("cannot read the grants: {error}");
            0
        }
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
