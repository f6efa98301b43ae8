//! Wakes whoever waits on an approval: oneshots per approval id, so decisions can come in any
//! order, from any channel, and each wakes exactly its own waiters (a turn; or every hook that
//! asked about the same agent call). The store is the truth; the router only says "look again".

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::oneshot;

#[derive(Default)]
pub struct ApprovalRouter {
    waiters: Mutex<HashMap<String, Vec<oneshot::Sender<()>>>>,
}

impl ApprovalRouter {
    /// Registers interest in an approval id. Register *before* reading the store, so a decision
    /// that lands in between is not missed.
    pub fn wait_for(&self, approval_id: &str) -> oneshot::Receiver<()> {
        let (sender, receiver) = oneshot::channel();
        let mut waiters = self.lock();
        let senders = waiters.entry(approval_id.to_string()).or_default();
        // A waiter that stopped listening leaves a closed sender behind.
        senders.retain(|s| !s.is_closed());
        senders.push(sender);
        receiver
    }

    /// Wakes the waiter of this approval, if any.
    pub fn notify(&self, approval_id: &str) {
        for sender in self.lock().remove(approval_id).unwrap_or_default() {
            let _ = sender.send(());
        }
    }

    /// Wakes every waiter: each looks at the store again (signals may have been missed).
    pub fn notify_all(&self) {
        for sender in self.lock().drain().flat_map(|(_, senders)| senders) {
            let _ = sender.send(());
        }
    }

    /// Whether anyone waits on this approval here (tests: a decision made after it is seen
    /// must wake them).
    #[cfg(test)]
    pub(crate) fn waited_on(&self, approval_id: &str) -> bool {
        self.lock()
            .get(approval_id)
            .is_some_and(|senders| senders.iter().any(|s| !s.is_closed()))
    }

    pub fn forget(&self, approval_id: &str) {
        self.lock().remove(approval_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<oneshot::Sender<()>>>> {
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn out_of_order_decisions_wake_their_own_waiter() {
        let router = ApprovalRouter::default();
        let mut a = router.wait_for("a");
        let b = router.wait_for("b");
        router.notify("b");
        router.notify("unknown");
        assert!(b.await.is_ok());
        // b's decision (and one for nobody) left a waiting: not woken, not dropped.
        assert!(
            matches!(
                a.try_recv(),
                Err(tokio::sync::oneshot::error::TryRecvError::Empty)
            ),
            "a was woken by another item's decision"
        );
        router.notify("a");
        assert!(a.await.is_ok());
    }

    #[tokio::test]
    async fn every_waiter_of_one_approval_is_woken() {
        let router = ApprovalRouter::default();
        let first = router.wait_for("a");
        let second = router.wait_for("a");
        router.notify("a");
        assert!(first.await.is_ok());
        assert!(second.await.is_ok());
    }
}
