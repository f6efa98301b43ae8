//! The pending count the tray shows, kept from engine events without asking the store each time.

use airlock_engine::{EngineEvent, InboxItem};
use std::collections::HashSet;

#[derive(Debug, Default)]
pub struct PendingSet {
    ids: HashSet<String>,
}

impl PendingSet {
    pub fn from_items(items: &[InboxItem]) -> Self {
        Self {
            ids: items.iter().map(|item| item.approval_id.clone()).collect(),
        }
    }

    /// Applies one event; returns whether the count changed.
    pub fn apply(&mut self, event: &EngineEvent) -> bool {
        match event {
            EngineEvent::ApprovalRequested { item } => self.ids.insert(item.approval_id.clone()),
            EngineEvent::ApprovalsDecided { decisions } => {
                // Every removal must happen, so no short-circuiting `any`.
                decisions
                    .iter()
                    .filter(|decided| self.ids.remove(&decided.approval_id))
                    .count()
                    > 0
            }
            _ => false,
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use airlock_core::ItemKind;
    use airlock_engine::DecidedItem;
    use serde_json::json;

    /// A pending `builtin/write_file` request, for the shell's tests.
    pub(crate) fn item(id: &str) -> InboxItem {
        InboxItem {
            approval_id: id.into(),
            tool_call_id: None,
            kind: ItemKind::ToolCall,
            session: "s".into(),
            session_id: "ses_1".into(),
            server: "builtin".into(),
            tool: "write_file".into(),
            args: json!({}),
            args_hash: "h".into(),
            why: "required".into(),
            created_at: "now".into(),
            expires_at: None,
            description: None,
            input_schema: None,
            message: None,
            schema: None,
            editable: true,
            available_decisions: vec![
                airlock_protocol::DecisionKind::Approve,
                airlock_protocol::DecisionKind::Edit,
                airlock_protocol::DecisionKind::Deny,
            ],
            agent: None,
            client: None,
            agent_session: None,
            cwd: None,
        }
    }

    /// One batch of decisions (an approve-all is one event).
    fn decided(ids: &[&str]) -> EngineEvent {
        let decided = |id: &&str| DecidedItem {
            approval_id: id.to_string(),
            session: "s".into(),
            approve: true,
            status: airlock_core::ApprovalStatus::Approved,
            decided_by: "inbox".into(),
        };
        EngineEvent::ApprovalsDecided {
            decisions: ids.iter().map(decided).collect(),
        }
    }

    #[test]
    fn the_count_follows_requests_and_decisions() {
        let mut pending = PendingSet::from_items(&[item("a")]);
        assert_eq!(pending.len(), 1);
        assert!(pending.apply(&EngineEvent::ApprovalRequested {
            item: Box::new(item("b"))
        }));
        assert!(pending.apply(&EngineEvent::ApprovalRequested {
            item: Box::new(item("c"))
        }));
        assert_eq!(pending.len(), 3);
        assert!(pending.apply(&decided(&["a"])));
        assert_eq!(pending.len(), 2);
        assert!(pending.apply(&decided(&["b", "c"])));
        assert!(pending.is_empty());
    }

    #[test]
    fn repeats_and_unrelated_events_do_not_change_the_count() {
        let mut pending = PendingSet::default();
        assert!(pending.apply(&EngineEvent::ApprovalRequested {
            item: Box::new(item("a"))
        }));
        assert!(!pending.apply(&EngineEvent::ApprovalRequested {
            item: Box::new(item("a"))
        }));
        assert!(!pending.apply(&decided(&["unknown"])));
        assert!(!pending.apply(&EngineEvent::TextDelta {
            session: "s".into(),
            text: "hi".into()
        }));
        assert_eq!(pending.len(), 1);
    }
}
