//! "Pause all agents": while paused no turn asks its model or runs a tool; requests already
//! waiting stay in the inbox and can still be decided. A running tool call or model request is
//! let finish (it cannot be taken back), and nothing starts after it. Approval timeouts wait
//! too: a request that expired while paused is denied as timed out right after the resume. Kept
//! in the store, so a pause outlives a restart: a person who paused expects the agents to stay
//! stopped.

use crate::{Engine, EngineEvent, Inner, Result};
use serde_json::Value;
use tokio::sync::watch;

pub(crate) fn load(store: &dyn airlock_store::Store) -> Result<watch::Sender<bool>> {
    let paused = matches!(
        store.setting(airlock_core::Setting::Paused.key())?,
        Some(Value::Bool(true))
    );
    Ok(watch::Sender::new(paused))
}

impl Engine {
    /// Pauses or resumes every agent; returns whether the switch changed. Setting it to what it
    /// already is writes nothing (no setting change lands in the audit trail). The store is
    /// written under the switch's lock, so racing calls cannot leave store and switch apart.
    pub fn set_paused(&self, paused: bool) -> Result<bool> {
        let mut stored = Ok(());
        let changed = self.inner.paused.send_if_modified(|current| {
            if *current == paused {
                return false;
            }
            stored = self
                .inner
                .store
                .set_setting(airlock_core::Setting::Paused.key(), &Value::Bool(paused));
            if stored.is_ok() {
                *current = paused;
            }
            stored.is_ok()
        });
        stored?;
        if changed {
            self.inner.emit(EngineEvent::Paused { paused });
        }
        Ok(changed)
    }

    pub fn paused(&self) -> bool {
        *self.inner.paused.borrow()
    }
}

impl Inner {
    /// Waits while the agents are paused. Returns true when the turn was cancelled meanwhile.
    pub(crate) async fn wait_while_paused(&self, cancel: &mut watch::Receiver<bool>) -> bool {
        let mut paused = self.paused.subscribe();
        if !*paused.borrow_and_update() {
            return false;
        }
        tokio::select! {
            _ = paused.wait_for(|paused| !*paused) => false,
            _ = cancel.changed() => true,
        }
    }
}
