//! Routing on a team server, as the decision path needs it: which items are routed where (an
//! item is routed once, when the engine first sees it), and who may decide a routed item. The
//! members, routes, delegation and escalation themselves are `team.rs`.

use crate::clock::expiry_after;
use crate::{Inner, Result};
use airlock_core::policy::RuleProbe;
use airlock_core::{ArgRule, ItemKind, RuleEffect, RulePattern};
use airlock_protocol::{ApprovalRow, InboxItem, MemberView, RouteView, TeamRole};
use airlock_store::ItemRouting;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// The team's state in the engine: whether it has members or routes at all, and what wakes the
/// escalation task.
#[derive(Debug, Default)]
pub(crate) struct TeamState {
    active: AtomicBool,
    wake: Arc<Notify>,
}

impl TeamState {
    /// Whether the decision path must look at routing (a team with members or routes).
    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The team has members or routes from now on; the escalation task looks again.
    pub(crate) fn activate(&self) {
        self.active.store(true, Ordering::Relaxed);
        self.wake.notify_one();
    }

    /// Wakes the escalation task (an item was routed: its time may be the soonest).
    pub(crate) fn wake_escalations(&self) {
        self.wake.notify_one();
    }

    /// What the escalation task sleeps on besides its next time.
    pub(crate) fn wakes(&self) -> Arc<Notify> {
        self.wake.clone()
    }
}

/// Why a member may not decide (or hand on) an item routed to someone else; an admin may.
pub(crate) fn not_theirs(member: &MemberView, routing: Option<&ItemRouting>) -> Option<String> {
    let routing = routing?;
    (member.role != TeamRole::Admin && !member.is_assignee(&routing.assignee)).then(|| {
        format!(
            "{} is routed to {}; it is not {}'s to decide",
            routing.approval_id,
            routing.assignee.replace(':', " "),
            member.name
        )
    })
}

/// A rule probe for a route's argument pattern (the policy's own glob matching).
pub(crate) fn probe_rule(server: &str, tool: &str, pointer: &str, pattern: &str) -> ArgRule {
    ArgRule {
        id: String::new(),
        server: server.to_string(),
        tool: tool.to_string(),
        pointer: pointer.to_string(),
        pattern: RulePattern::Glob(pattern.to_string()),
        effect: RuleEffect::Ask,
    }
}

impl Inner {
    /// The routing of these items: as kept, or — for an item not routed yet, whichever of the
    /// decision path, an inbox or its announcement sees it first — that of the first route
    /// that matches it, kept now (an item is routed once: the store keeps the first).
    pub(crate) fn routing_for<'a>(
        &self,
        items: impl IntoIterator<Item = Routable<'a>>,
    ) -> Result<std::collections::HashMap<String, ItemRouting>> {
        let items: Vec<Routable<'a>> = items.into_iter().collect();
        let ids: Vec<&str> = items.iter().map(|item| item.approval_id).collect();
        let mut routing = self.store.routing_of(&ids)?;
        let unrouted: Vec<&Routable<'a>> = items
            .iter()
            .filter(|item| item.kind != ItemKind::Elicitation)
            .filter(|item| !routing.contains_key(item.approval_id))
            .collect();
        if unrouted.is_empty() {
            return Ok(routing);
        }
        let routes = self.store.routes()?;
        let mut routed = false;
        for item in unrouted {
            let Some(route) = routes.iter().find(|route| route_matches(route, item)) else {
                continue;
            };
            let Some(first) = route.steps.first() else {
                continue;
            };
            let new = ItemRouting {
                approval_id: item.approval_id.to_string(),
                route_id: Some(route.id.clone()),
                steps: route.steps.clone(),
                step: 0,
                assignee: first.clone(),
                quorum: route.quorum,
                escalate_after_secs: route.escalate_after_secs,
                next_at: route.escalate_after_secs.map(expiry_after),
                note: None,
            };
            routed |= self.store.route_item(&new)?;
            // Another caller may have routed it first: what the store kept is what holds.
            if let Some(kept) = self
                .store
                .routing_of(&[item.approval_id])?
                .remove(item.approval_id)
            {
                routing.insert(kept.approval_id.clone(), kept);
            }
        }
        if routed {
            self.team.wake_escalations();
        }
        Ok(routing)
    }
}

/// What routing needs of an item (a row of the decision path, an inbox item).
pub(crate) struct Routable<'a> {
    pub approval_id: &'a str,
    pub kind: ItemKind,
    pub server: &'a str,
    pub tool: &'a str,
    pub args: &'a serde_json::Value,
}

impl<'a> From<&'a InboxItem> for Routable<'a> {
    fn from(item: &'a InboxItem) -> Self {
        Self {
            approval_id: &item.approval_id,
            kind: item.kind,
            server: &item.server,
            tool: &item.tool,
            args: &item.args,
        }
    }
}

impl<'a> From<&'a ApprovalRow> for Routable<'a> {
    fn from(row: &'a ApprovalRow) -> Self {
        Self {
            approval_id: &row.approval_id,
            kind: row.kind,
            server: &row.server,
            tool: &row.tool,
            args: &row.args,
        }
    }
}

/// Whether a route covers an item: its server, its tool (or `*`), and its argument pattern.
fn route_matches(route: &RouteView, item: &Routable<'_>) -> bool {
    if route.server != item.server || (route.tool != "*" && route.tool != item.tool) {
        return false;
    }
    match (&route.pointer, &route.pattern) {
        (Some(pointer), Some(pattern)) => {
            RuleProbe::new(&probe_rule(item.server, item.tool, pointer, pattern))
                .is_ok_and(|probe| probe.matches(item.args))
        }
        _ => true,
    }
}
