//! Keeps the tray and the notifications in step with the engine: the pending count from events
//! (never a re-read per event), the pause line, the grants line (also re-read now and then: a
//! grant ends by its time), the remote servers that need a sign-in again (read when a server
//! changes), and the notifications, which follow the same events themselves. The items waiting
//! for the person on their team server (`team_link`) count on the tray too, and new ones are
//! told in a notification.

use crate::notifications;
use crate::pending::PendingSet;
use crate::shell::Shell;
use crate::tray_lines::TrayLine;
use airlock_engine::{Engine, EngineEvent, InboxItem};
use airlock_protocol::TeamInboxView;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

pub fn follow(shell: Arc<Shell>) -> tokio::task::JoinHandle<()> {
    let mut events = shell.engine.subscribe();
    let opening = shell.clone();
    let notifying = notifications::follow(
        shell.engine.clone(),
        shell.engine.subscribe(),
        move |approval_id| opening.open_inbox(approval_id),
    );
    tokio::spawn(async move {
        // The notifications (and their tasks) end with this task.
        let _notifying = AbortOnDrop(notifying);
        let engine = shell.engine.clone();
        let mut pending = recount(&engine);
        let mut storage_failed = engine.storage_failure().is_some();
        shell.show_in_tray(TrayLine::Pending(pending.len())).await;
        shell.show_in_tray(TrayLine::Paused(engine.paused())).await;
        show_grants(&shell).await;
        let mut sign_in = servers_to_sign_in(&engine);
        shell
            .show_in_tray(TrayLine::SignInNeeded(sign_in.clone()))
            .await;
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(30));
        let mut team = shell.team.subscribe();
        let mut team_seen = TeamSeen::default();
        loop {
            let received = tokio::select! {
                received = events.recv() => received,
                Ok(()) = team.changed() => {
                    let view = team.borrow_and_update().clone();
                    let new = team_seen.update(view.as_ref());
                    if let (Some(view), false) = (&view, new.is_empty())
                        && airlock_engine::commands::notifications_enabled(&engine)
                    {
                        notifications::tell_team(&view.url, &new);
                    }
                    if !storage_failed {
                        shell
                            .show_in_tray(TrayLine::Pending(pending.len() + team_seen.len()))
                            .await;
                    }
                    continue;
                }
                _ = tick.tick() => {
                    show_grants(&shell).await;
                    continue;
                }
                _ = shell.grants_changed.notified() => {
                    show_grants(&shell).await;
                    continue;
                }
            };
            match received {
                Ok(event) => {
                    // Every way an item leaves the inbox (decided, expired, cancelled) is an
                    // ApprovalsDecided event.
                    let changed = pending.apply(&event);
                    match &event {
                        EngineEvent::Paused { paused } => {
                            shell.show_in_tray(TrayLine::Paused(*paused)).await
                        }
                        EngineEvent::StorageFailed { .. } => storage_failed = true,
                        // A grant made with a decision, or a use of one taken by a call.
                        EngineEvent::ApprovalsDecided { .. }
                        | EngineEvent::SessionStatus { .. } => show_grants(&shell).await,
                        EngineEvent::ServersChanged { .. } => {
                            let now = servers_to_sign_in(&engine);
                            if now != sign_in {
                                sign_in = now;
                                shell
                                    .show_in_tray(TrayLine::SignInNeeded(sign_in.clone()))
                                    .await;
                            }
                        }
                        _ => {}
                    }
                    if storage_failed {
                        shell.show_in_tray(TrayLine::StorageFailure).await;
                    } else if changed {
                        shell
                            .show_in_tray(TrayLine::Pending(pending.len() + team_seen.len()))
                            .await;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    pending = recount(&engine);
                    shell
                        .show_in_tray(TrayLine::Pending(pending.len() + team_seen.len()))
                        .await;
                }
                Err(RecvError::Closed) => break,
            }
        }
    })
}

/// The team server's items already counted and told, by id.
#[derive(Debug, Default)]
struct TeamSeen(std::collections::HashSet<String>);

impl TeamSeen {
    /// Takes the view as it is now; the items not seen before.
    fn update(&mut self, view: Option<&TeamInboxView>) -> Vec<InboxItem> {
        let items = view.map(|view| view.items.as_slice()).unwrap_or_default();
        let new = items
            .iter()
            .filter(|item| !self.0.contains(&item.approval_id))
            .cloned()
            .collect();
        self.0 = items.iter().map(|item| item.approval_id.clone()).collect();
        new
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The grants line, read from the engine (a grant also ends by its time).
async fn show_grants(shell: &Shell) {
    let active = match shell.engine.grants() {
        Ok(grants) => grants.len(),
        Err(error) => {
            tracing::warn!("cannot read the grants: {error}");
            0
        }
    };
    shell.show_in_tray(TrayLine::Grants(active)).await;
}

/// The remote servers whose sign-in expired or was refused, by name.
pub fn servers_to_sign_in(engine: &Engine) -> Vec<String> {
    match engine.servers() {
        Ok(servers) => servers
            .into_iter()
            .filter(|server| {
                server
                    .status
                    .as_ref()
                    .is_some_and(|status| status.state == airlock_mcp::SIGN_IN_NEEDED)
            })
            .map(|server| server.name)
            .collect(),
        Err(error) => {
            tracing::warn!("cannot read the servers: {error}");
            Vec::new()
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
