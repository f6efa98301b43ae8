//! One engine among several on one database (`airlock serve --database-url`): what the engine
//! keeps in memory is made safe for N replicas here.
//!
//! - Each replica renews a lease in the database; a turn it drives and an agent's item a hook
//!   waits on through it are held under that lease. Only the work of a replica whose lease ran
//!   out is taken over, by one replica, once (the store deletes the holds in the transaction
//!   that returns them): its turns are driven again (a call it had invoked is reported
//!   interrupted, never run again: `claim_invocation`), its agents' items wait for their hooks
//!   to come back through another replica (the same request key finds the same item).
//! - A decision's transaction notifies every replica; its waiters (a turn, a hook) look again.
//! - Events are published to the other replicas, which pass them to their own subscribers.
//! - The policy's generation (moved by the transaction of every change the policy or a turn's
//!   settings read) is read before any cached policy, setting or provider is used (`caches`).

use crate::*;
use airlock_store::{Signal, Work};
use serde_json::json;
use std::sync::Weak;
use std::time::Duration;

/// How long a replica's lease runs without being renewed: after that its work is taken over.
pub(crate) const LEASE: Duration = Duration::from_secs(10);
/// How often the lease is renewed and expired work looked for.
const RENEW_EVERY: Duration = Duration::from_secs(2);
/// How often a waiting turn reads its requests again on a shared database, should a
/// notification be lost with its connection (it is woken at once otherwise).
#[cfg(not(test))]
pub(crate) const RECHECK: Duration = Duration::from_secs(1);
/// In the engine's tests, never within a test: a turn woken there was woken by a notification.
#[cfg(test)]
pub(crate) const RECHECK: Duration = Duration::from_secs(600);

impl Inner {
    /// Marks `key` as this replica's work (nothing on a store only this engine opens).
    pub(crate) fn hold(&self, work: Work, key: &str) {
        if let Some(replicas) = self.store.replicas()
            && let Err(error) = replicas.hold(work, key)
        {
            tracing::warn!(%error, key, "cannot hold {} as this replica's", work.as_str());
        }
    }

    /// This replica no longer holds `key`.
    pub(crate) fn release(&self, work: Work, key: &str) {
        if let Some(replicas) = self.store.replicas()
            && let Err(error) = replicas.release(work, key)
        {
            tracing::warn!(%error, key, "cannot release {}", work.as_str());
        }
    }

    /// Whether a live replica (this one included) holds `key`. On a store only this engine
    /// opens: never (what it does not hold itself, nobody does). An unreadable database counts
    /// as held: nothing is withdrawn on a guess.
    pub(crate) fn held_by_a_replica(&self, work: Work, key: &str) -> bool {
        self.store
            .replicas()
            .is_some_and(|replicas| replicas.held_by_live(work, key).unwrap_or(true))
    }

    /// Whether an agent's hook waits for the item `approval_id`: on this replica, or through
    /// another live one (its hold). An unreadable database is a no: an approval never rests on
    /// a guess.
    pub(crate) fn agent_waits_for(&self, approval_id: &str) -> bool {
        self.agent_waiters.waited_on(approval_id)
            || self.store.replicas().is_some_and(|replicas| {
                replicas
                    .held_by_live(Work::AgentItem, approval_id)
                    .unwrap_or(false)
            })
    }

    /// Tells the other replicas of an event this one emits.
    pub(crate) fn publish(&self, event: &EngineEvent) {
        if let Some(replicas) = self.store.replicas()
            && let Ok(json) = serde_json::to_string(event)
        {
            replicas.publish(&json);
        }
    }

    /// What another replica (or the database) told this one (on the store's own runtime:
    /// nothing here may wait for the store).
    fn hear(&self, signal: Signal) {
        match signal {
            Signal::Decided(ids) => ids.iter().for_each(|id| self.router.notify(id)),
            Signal::Event(json) => match serde_json::from_str::<EngineEvent>(&json) {
                // To this replica's subscribers only: it is not published again.
                Ok(event) => {
                    let _ = self.events.send(event);
                }
                Err(error) => tracing::debug!(%error, "an event of another replica"),
            },
            Signal::Resync => {
                self.invalidate_policy();
                self.agent_tokens.forget();
                self.router.notify_all();
            }
        }
    }

    /// Takes over the work of replicas whose lease ran out.
    fn take_over(self: &Arc<Self>, taken: Vec<(Work, String)>) -> Result<()> {
        let mut items = Vec::new();
        for (work, key) in taken {
            match work {
                Work::Turn => {
                    if let Some(session) = self.store.session(&key)?
                        && driver::needs_driving(&session)
                    {
                        self.store.audit(
                            "engine",
                            "taken_over",
                            Some(&session.id),
                            None,
                            &json!({ "work": work.as_str(), "why": "the replica driving this turn stopped" }),
                        )?;
                        driver::start(self, &session);
                    }
                }
                Work::AgentItem => items.push(key),
            }
        }
        if !items.is_empty() {
            // Their hooks come back through another replica (the same request key), or they go.
            let inner = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(agents::REATTACH_GRACE).await;
                let kept: Vec<&String> = items
                    .iter()
                    .filter(|id| {
                        inner.agent_waiters.waited_on(id)
                            || inner.held_by_a_replica(Work::AgentItem, id)
                    })
                    .collect();
                let detail = json!({
                    "work": Work::AgentItem.as_str(),
                    "why": "the replica its hook waited through stopped",
                    "kept": kept,
                });
                if let Err(error) = inner
                    .store
                    .audit("engine", "taken_over", None, None, &detail)
                {
                    tracing::warn!(%error, "cannot audit taking over agents' items");
                }
                inner.withdraw_abandoned(&items);
            });
        }
        Ok(())
    }
}

/// Joins the replicas on the store's database: the lease, listening to the others, the work of
/// replicas whose lease ran out; then keeps the lease while the engine lives.
pub(crate) fn join(inner: &Arc<Inner>) -> Result<()> {
    let Some(replicas) = inner.store.replicas() else {
        return Ok(());
    };
    replicas.renew_lease(LEASE)?;
    let weak = Arc::downgrade(inner);
    replicas.listen(Box::new(move |signal| {
        if let Some(inner) = weak.upgrade() {
            inner.hear(signal);
        }
    }))?;
    inner.take_over(replicas.take_expired()?)?;
    tokio::spawn(keep_lease(Arc::downgrade(inner)));
    Ok(())
}

/// Renews the lease and takes over expired work, until the engine is dropped.
async fn keep_lease(weak: Weak<Inner>) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let Some(inner) = weak.upgrade() else { return };
        let Some(replicas) = inner.store.replicas() else {
            return;
        };
        match replicas.renew_lease(LEASE) {
            Ok(true) => {}
            // Paused longer than its lease: another replica may have taken its work, which it
            // no longer holds; it goes on as a new replica.
            Ok(false) => tracing::error!(
                "this replica's lease ran out; its turns and agents' items may be driven by another replica now"
            ),
            Err(error) => tracing::warn!(%error, "cannot renew this replica's lease"),
        }
        // A team made through another replica.
        if !inner.team.active() && matches!(inner.store.has_members(), Ok(true)) {
            inner.team.activate();
        }
        match replicas.take_expired() {
            Ok(taken) => {
                if let Err(error) = inner.take_over(taken) {
                    tracing::error!(%error, "cannot take over a stopped replica's work");
                }
            }
            Err(error) => tracing::warn!(%error, "cannot look for a stopped replica's work"),
        }
    }
}
