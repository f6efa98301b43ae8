//! One engine among several on one database (`airlock serve --database-url`): what the engine
//! keeps in memory is made safe for N replicas here.
//!
//! - Each replica renews a lease in the database; a turn it drives, an agent's item a hook
//!   waits on through it, a form request (elicitation) its server waits on through it and a
//!   chat whose agent it hosts are held under that lease. Only the work of a replica whose
//!   lease ran out is taken over, by one replica, once (the store deletes the holds in the
//!   transaction that returns them): its turns are driven again (a call it had invoked is
//!   reported interrupted, never run again: `claim_invocation`), its agents' items wait for
//!   their hooks to come back through another replica (the same request key finds the same
//!   item), its form requests are cancelled (the server's connection went with it) and its
//!   hosted chats are ended (their agent process went with it), each said so in the chat.
//! - Work is fenced: each hold has a token ([`Fence`]) that every write its holder makes for
//!   it checks in the write's own transaction. A replica paused past its lease (SIGSTOP, a
//!   frozen VM) whose work was taken over finds its writes refused (`LeaseLost`) and drops the
//!   work without failing it; it drops all it held as soon as it sees its lease gone.
//! - A decision's transaction notifies every replica; its waiters (a turn, a hook) look again.
//! - Events are published to the other replicas, which pass them to their own subscribers.
//! - The policy's generation (moved by the transaction of every change the policy or a turn's
//!   settings read) is read before any cached policy, setting or provider is used (`caches`).

use crate::*;
use airlock_core::ApprovalStatus;
use airlock_store::{Fence, Signal, Work};
use serde_json::json;
use std::sync::Weak;
use std::time::Duration;
use tokio::sync::watch;

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

/// This replica's lease as the work held under it sees it.
pub(crate) struct Lease {
    /// Moved each time the lease is found run out: the work held under it is dropped.
    lost: watch::Sender<u64>,
    /// Tests stop renewing the lease (and taking over) here, as a paused process would.
    #[cfg(test)]
    pub frozen: std::sync::atomic::AtomicBool,
    /// How many renewals were skipped while frozen (none is under way after the first).
    #[cfg(test)]
    pub skipped: std::sync::atomic::AtomicU64,
}

impl Default for Lease {
    fn default() -> Self {
        Self {
            lost: watch::channel(0).0,
            #[cfg(test)]
            frozen: std::sync::atomic::AtomicBool::new(false),
            #[cfg(test)]
            skipped: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl Lease {
    /// Changes when the lease is found run out.
    pub(crate) fn lost(&self) -> watch::Receiver<u64> {
        self.lost.subscribe()
    }

    fn lose(&self) {
        self.lost.send_modify(|times| *times += 1);
    }

    #[cfg(test)]
    fn is_frozen(&self) -> bool {
        use std::sync::atomic::Ordering;
        let frozen = self.frozen.load(Ordering::SeqCst);
        if frozen {
            self.skipped.fetch_add(1, Ordering::SeqCst);
        }
        frozen
    }

    #[cfg(not(test))]
    fn is_frozen(&self) -> bool {
        false
    }
}

impl Inner {
    /// Marks `key` as this replica's work: the fence its writes for it pass (none on a store
    /// only this engine opens, or when the hold could not be written: then no replica can take
    /// the work over either).
    pub(crate) fn hold(&self, work: Work, key: &str) -> Option<Fence> {
        let replicas = self.store.replicas()?;
        match replicas.hold(work, key) {
            Ok(fence) => Some(fence),
            Err(error) => {
                tracing::warn!(%error, key, "cannot hold {} as this replica's", work.as_str());
                None
            }
        }
    }

    /// Whether this replica still has the hold `fence` names. Unknown (the database cannot be
    /// read) counts as held: the work's own writes are fenced anyway.
    pub(crate) fn still_holds(&self, fence: &Fence) -> bool {
        self.store
            .replicas()
            .is_none_or(|replicas| replicas.holds(fence).unwrap_or(true))
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
                // Its hold is gone already: the rest is taken over whatever happens to one.
                Work::Elicitation => {
                    if let Err(error) = self.cancel_orphaned_elicitation(&key) {
                        tracing::error!(%error, key, "cannot cancel a stopped replica's form request");
                    }
                }
                Work::HostedChat => {
                    if let Err(error) = self.end_orphaned_hosted_chat(&key) {
                        tracing::error!(%error, key, "cannot end a stopped replica's hosted chat");
                    }
                }
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

    /// A form request whose server waited through a replica that stopped: that connection is
    /// gone, so nobody can receive an answer; it is cancelled, saying why, in the inbox.
    fn cancel_orphaned_elicitation(&self, approval_id: &str) -> Result<()> {
        if self.store.approval_status(approval_id)? != Some(ApprovalStatus::Pending) {
            return Ok(());
        }
        let why = "the server that asked waited through an Airlock replica that stopped; its answer can no longer be delivered";
        self.store.audit(
            "engine",
            "taken_over",
            None,
            Some(approval_id),
            &json!({ "work": Work::Elicitation.as_str(), "why": why }),
        )?;
        let cancel = Settlement::new(approval_id.to_string(), Resolution::Cancel).with_reason(why);
        for error in self
            .settle(vec![cancel], DecidedBy::Engine)?
            .into_iter()
            .filter_map(|outcome| outcome.err())
        {
            tracing::debug!(%error, "an orphaned form request was settled meanwhile");
        }
        Ok(())
    }

    /// A chat whose agent a stopped replica hosted: the agent's process went with it (an
    /// agent is never driven as a model loop), so the chat ends, saying why, and its waiting
    /// items are withdrawn.
    fn end_orphaned_hosted_chat(&self, session_id: &str) -> Result<()> {
        let Some(hosted) = self
            .store
            .live_hosted_sessions()?
            .into_iter()
            .find(|hosted| hosted.session_id == session_id)
        else {
            return Ok(());
        };
        self.store.audit(
            "engine",
            "taken_over",
            Some(session_id),
            None,
            &json!({ "work": Work::HostedChat.as_str(), "why": "the replica hosting this chat's agent stopped" }),
        )?;
        hosted::end_hosted(
            self,
            session_id,
            &format!(
                "The agent {} ended: the Airlock replica that ran it stopped. Send a message to start it again.",
                hosted.agent
            ),
        )
    }

    /// This replica's lease ran out (it was paused, or could not reach the database, for
    /// longer than the lease): its holds may be another replica's now. Its turns and hosted
    /// agents' turns whose hold was taken over stop at once (their writes are fenced anyway);
    /// nothing is failed.
    fn drop_held_work(&self) {
        // The turns this engine drives look at their hold on this (driver::start).
        self.lease.lose();
        let running: Vec<String> = self
            .turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, turn)| turn.state.borrow().running)
            .map(|(session_id, _)| session_id.clone())
            .collect();
        let replica = self
            .store
            .replicas()
            .map(|replicas| replicas.replica_id().to_string());
        let detail = json!({
            "replica": replica,
            "why": "this replica's lease ran out (it was paused or cut off for longer than its lease): its work may be another replica's now",
            "running": running,
        });
        if let Err(error) = self
            .store
            .audit("engine", "lease_lost", None, None, &detail)
        {
            tracing::warn!(%error, "cannot audit a lost lease");
        }
        for session_id in running {
            // A hosted agent's turn is stopped through its host (what it still writes for the
            // turn is fenced).
            if matches!(self.store.hosted_session(&session_id), Ok(Some(_)))
                && !self.held_by_a_replica(Work::HostedChat, &session_id)
                && let Some(turn) = self
                    .turns
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&session_id)
            {
                let _ = turn.cancel.send(true);
            }
        }
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
        if inner.lease.is_frozen() {
            continue;
        }
        match replicas.renew_lease(LEASE) {
            Ok(true) => {}
            // Paused longer than its lease: another replica may have taken its work, which it
            // no longer holds; it drops that work and goes on as a new replica.
            Ok(false) => {
                tracing::error!(
                    "this replica's lease ran out; its turns, agents' items, form requests and hosted chats may be another replica's now: dropped here"
                );
                inner.drop_held_work();
            }
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
