//! People on a team server: members with their own tokens (only a hash kept) and a role, the
//! routes that send a tool's calls to a person or a group, delegation, quorum and escalation.
//!
//! None of this is a second decision path: a member's decision is a [`Settlement`] with its
//! person, and [`Inner::settle`] checks who may decide a routed item and counts a quorum's
//! approvals (`decision.rs`); an escalation's last step expires the item through `settle` too.
//! Which items go to whom is `routing.rs`. A data directory without members or routes never
//! reads any of it (`TeamState::active`).

use crate::clock::{expiry_after, parse_time};
use crate::decision::{Resolution, Settlement};
use crate::remote::{new_token, token_hash};
use crate::routing::{Routable, not_theirs, probe_rule};
use crate::{Engine, EngineError, Inner, Result};
use airlock_core::DecidedBy;
use airlock_core::policy::RuleProbe;
use airlock_protocol::{
    ApprovalRow, Assignee, DecisionRequest, EngineEvent, InboxItem, MemberView, NewMember,
    RouteView, TeamRole,
};
use airlock_store::{NewMemberRow, NewRoute};
use std::sync::Arc;
use std::time::Duration;

/// The longest member or group name kept.
const MAX_NAME: usize = 64;
/// The escalation task looks again at least this often (it is woken when something changes).
const ESCALATION_RECHECK: Duration = Duration::from_secs(60);

/// A member or group name: letters, digits, `-`, `_`, `.`, `@`; at most 64.
fn checked_name(what: &str, name: &str) -> Result<String> {
    let name = name.trim();
    let fine = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@');
    if name.is_empty() || name.chars().count() > MAX_NAME || !name.chars().all(fine) {
        return Err(EngineError::Invalid(format!(
            "a {what} name is 1 to {MAX_NAME} letters, digits, '-', '_', '.' or '@'; not '{name}'"
        )));
    }
    Ok(name.to_string())
}

impl Engine {
    /// The team server's first admin, accepted only while the team has no member (checked in
    /// the transaction that adds them); their token, returned once.
    pub fn team_init(&self, name: &str) -> Result<NewMember> {
        self.add_member(name, TeamRole::Admin, Vec::new(), true, "team_init")
    }

    /// A new member with a role and groups; their token, returned once. `by`: who added them.
    pub fn team_add(
        &self,
        by: &str,
        name: &str,
        role: TeamRole,
        groups: Vec<String>,
    ) -> Result<NewMember> {
        self.add_member(name, role, groups, false, by)
    }

    fn add_member(
        &self,
        name: &str,
        role: TeamRole,
        groups: Vec<String>,
        first: bool,
        by: &str,
    ) -> Result<NewMember> {
        let name = checked_name("member", name)?;
        let mut groups = groups
            .iter()
            .map(|group| checked_name("group", group))
            .collect::<Result<Vec<_>>>()?;
        groups.sort();
        groups.dedup();
        let token = new_token();
        let member = self
            .inner
            .store
            .add_member(
                &NewMemberRow {
                    id: airlock_core::ids::new_id("mbr"),
                    name,
                    role,
                    groups,
                    token_hash: token_hash(&token),
                },
                first,
                by,
            )
            .map_err(refusal)?;
        self.inner.team.activate();
        Ok(NewMember { member, token })
    }

    pub fn team_members(&self) -> Result<Vec<MemberView>> {
        Ok(self.inner.store.members()?)
    }

    /// Removes a member: their token is refused from now on.
    pub fn team_remove(&self, by: &str, name: &str) -> Result<bool> {
        self.inner.store.remove_member(name, by).map_err(refusal)
    }

    /// The member a bearer token belongs to, if any.
    pub fn member_for_token(&self, token: &str) -> Result<Option<MemberView>> {
        if token.is_empty() {
            return Ok(None);
        }
        Ok(self.inner.store.member_by_token_hash(&token_hash(token))?)
    }

    /// A team member's command that changed something, audited with the person.
    pub fn audit_member_command(&self, person: &str, command: &str) -> Result<()> {
        Ok(self.inner.store.audit_member_command(person, command)?)
    }

    /// Sends the calls of `server/tool` (`*`: any of its tools), whose argument at `pointer`
    /// matches the glob `pattern` when given, to `to` (a member or a group), needing `quorum`
    /// distinct approvals; unanswered for `escalate_after_secs`, to `escalate_to`, and after
    /// the last step they expire as denied.
    #[allow(clippy::too_many_arguments)]
    pub fn team_route(
        &self,
        by: &str,
        server: &str,
        tool: &str,
        pointer: Option<&str>,
        pattern: Option<&str>,
        to: &str,
        quorum: Option<u32>,
        escalate_after_secs: Option<u64>,
        escalate_to: Option<&str>,
    ) -> Result<RouteView> {
        let quorum = quorum.unwrap_or(1);
        if quorum == 0 {
            return Err(EngineError::Invalid("a quorum is at least 1".into()));
        }
        if pointer.is_some() != pattern.is_some() {
            return Err(EngineError::Invalid(
                "a route's argument pointer and pattern go together".into(),
            ));
        }
        if let (Some(pointer), Some(pattern)) = (pointer, pattern) {
            // Compiled now so that a bad pattern is refused here, not when a call comes.
            RuleProbe::new(&probe_rule(server, tool, pointer, pattern))?;
        }
        let mut steps = vec![self.assignee(to)?];
        match (escalate_after_secs, escalate_to) {
            (Some(0), _) => {
                return Err(EngineError::Invalid(
                    "escalation waits at least one second".into(),
                ));
            }
            (Some(_), Some(next)) => steps.push(self.assignee(next)?),
            (None, Some(_)) => {
                return Err(EngineError::Invalid(
                    "--escalate-after says when it goes to the next person or group".into(),
                ));
            }
            // Unanswered after the time, the item expires as denied.
            (Some(_), None) | (None, None) => {}
        }
        let route = self.inner.store.add_route(
            &NewRoute {
                id: airlock_core::ids::new_id("rte"),
                server: server.to_string(),
                tool: tool.to_string(),
                pointer: pointer.map(str::to_string),
                pattern: pattern.map(str::to_string),
                steps,
                quorum,
                escalate_after_secs,
            },
            by,
        )?;
        self.inner.team.activate();
        Ok(route)
    }

    pub fn team_routes(&self) -> Result<Vec<RouteView>> {
        Ok(self.inner.store.routes()?)
    }

    pub fn team_unroute(&self, by: &str, id: &str) -> Result<bool> {
        Ok(self.inner.store.remove_route(id, by)?)
    }

    /// `person:NAME` or `group:NAME` for a name typed: a member's name, else a group some
    /// member is in; `person:` or `group:` in front says which.
    fn assignee(&self, to: &str) -> Result<String> {
        if let Some(explicit) = Assignee::parse(to) {
            let name = match explicit {
                Assignee::Person(name) | Assignee::Group(name) => name,
            };
            checked_name("member or group", name)?;
            return Ok(to.to_string());
        }
        let name = checked_name("member or group", to)?;
        let members = self.inner.store.members()?;
        if members.iter().any(|member| member.name == name) {
            Ok(format!("person:{name}"))
        } else if members.iter().any(|member| member.groups.contains(&name)) {
            Ok(format!("group:{name}"))
        } else {
            Err(EngineError::Invalid(format!(
                "no member or group named '{name}' (`airlock team members`; `group:{name}` names a group nobody is in yet)"
            )))
        }
    }

    /// Hands a pending item to a member, with a note for them; they are notified as for a new
    /// item. A member may hand on only what is theirs to decide (an admin anything).
    pub fn delegate(
        &self,
        by: Option<&MemberView>,
        approval_id: &str,
        to: &str,
        note: Option<&str>,
    ) -> Result<()> {
        let assignee = self.assignee(to)?;
        if !matches!(Assignee::parse(&assignee), Some(Assignee::Person(_))) {
            return Err(EngineError::Invalid(format!(
                "an item is handed to a person, not a group ('{to}')"
            )));
        }
        if let Some(member) = by {
            let rows = self.inner.store.approvals_by_ids(&[approval_id])?;
            let routing = self.inner.routing_for(rows.values().map(Routable::from))?;
            if let Some(why) = not_theirs(member, routing.get(approval_id)) {
                return Err(EngineError::NotAllowed(why));
            }
        }
        let person = by.map_or("user", |member| member.name.as_str());
        self.inner
            .store
            .delegate(approval_id, &assignee, note, person)?;
        self.inner.team.activate();
        self.inner.announce_again(approval_id)?;
        Ok(())
    }

    /// What waits for this member: the items routed to them or their groups, and those no route
    /// sends anywhere (an admin sees everything).
    pub fn inbox_for(&self, member: &MemberView) -> Result<Vec<InboxItem>> {
        let items = self.inbox()?;
        if member.role == TeamRole::Admin {
            return Ok(items);
        }
        let routing = self.inner.routing_for(items.iter().map(Routable::from))?;
        Ok(items
            .into_iter()
            .filter(|item| {
                routing
                    .get(&item.approval_id)
                    .is_none_or(|routed| member.is_assignee(&routed.assignee))
            })
            .collect())
    }

    /// Decisions by a team member: the one path, audited with the person. A grant or a
    /// remembered decision is the team's settings, so an admin's alone.
    pub fn decide_many_as_member(
        &self,
        requests: Vec<DecisionRequest>,
        member: &MemberView,
    ) -> Result<Vec<Result<ApprovalRow>>> {
        if member.role != TeamRole::Admin
            && let Some(standing) = requests.iter().find(|r| r.decision.keeps_anything())
        {
            return Err(EngineError::NotAllowed(format!(
                "{}: grants and remembered decisions change the team's settings; an admin makes them",
                standing.approval_id
            )));
        }
        let settlements = requests
            .into_iter()
            .map(|request| {
                let mut settlement: Settlement = request.into();
                settlement.person = Some(member.clone());
                settlement
            })
            .collect();
        self.inner.settle(settlements, DecidedBy::Member)
    }
}

/// The store's refusal (first admin taken, a name in use, the last admin) as the engine's.
fn refusal(error: airlock_store::StoreError) -> EngineError {
    match error {
        airlock_store::StoreError::Refused(why) => EngineError::NotAllowed(why),
        other => other.into(),
    }
}

impl Inner {
    /// Announces a new item, routed first when a route matches it, so that whoever it goes to
    /// is notified (the one place new items are announced).
    pub(crate) fn announce_request(&self, item: InboxItem) {
        if self.team.active()
            && let Err(error) = self.routing_for([Routable::from(&item)])
        {
            // Unrouted, it stays in everyone's inbox: nobody is kept from denying it.
            tracing::warn!(approval = %item.approval_id, "cannot route: {error}");
        }
        self.emit(EngineEvent::ApprovalRequested {
            item: Box::new(item),
        });
    }

    /// Announces a pending item again (escalated, delegated): its new assignee is notified.
    fn announce_again(&self, approval_id: &str) -> Result<()> {
        if let Some(row) = self
            .store
            .approvals_by_ids(&[approval_id])?
            .remove(approval_id)
        {
            let item = self.inbox_item(row);
            self.emit(EngineEvent::ApprovalRequested {
                item: Box::new(item),
            });
        }
        Ok(())
    }

    /// Moves on every routed item whose time came: to its next step (announced again), or
    /// after its last step, expired as denied. The soonest time another one comes.
    fn escalate_due(&self) -> Result<Option<time::OffsetDateTime>> {
        let now = time::OffsetDateTime::now_utc();
        let mut soonest: Option<time::OffsetDateTime> = None;
        let mut expired = Vec::new();
        for routing in self.store.timed_routing()? {
            let Some(at) = routing.next_at.as_deref().and_then(parse_time) else {
                continue;
            };
            if at > now {
                soonest = Some(soonest.map_or(at, |s| s.min(at)));
                continue;
            }
            if routing.at_last_step() {
                expired.push(
                    Settlement::new(&routing.approval_id, Resolution::Expire).with_reason(format!(
                        "nobody answered in time (last asked: {}); denied",
                        routing.assignee.replace(':', " ")
                    )),
                );
                continue;
            }
            let next_at = routing.escalate_after_secs.map(expiry_after);
            if self
                .store
                .escalate(&routing.approval_id, routing.step, next_at.as_deref())?
                .is_some()
            {
                self.announce_again(&routing.approval_id)?;
                if let Some(at) = next_at.as_deref().and_then(parse_time) {
                    soonest = Some(soonest.map_or(at, |s| s.min(at)));
                }
            }
        }
        if !expired.is_empty() {
            // An item decided meanwhile is refused on its own; the rest expire.
            self.settle(expired, DecidedBy::Timeout)?;
        }
        Ok(soonest)
    }
}

/// Starts the task that escalates routed items when their time comes (woken when an item is
/// routed or the team changes; it ends with the engine).
pub(crate) fn start_escalations(inner: &Arc<Inner>) {
    if let Ok(active) = inner
        .store
        .has_members()
        .and_then(|members| Ok(members || !inner.store.routes()?.is_empty()))
        && active
    {
        inner.team.activate();
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = Arc::downgrade(inner);
    let wake = inner.team.wakes();
    runtime.spawn(async move {
        loop {
            let soonest = {
                let Some(inner) = weak.upgrade() else { return };
                if !inner.team.active() {
                    None
                } else {
                    match inner.escalate_due() {
                        Ok(soonest) => soonest,
                        Err(error) => {
                            tracing::warn!("escalation: {error}");
                            None
                        }
                    }
                }
            };
            let wait = soonest.map_or(ESCALATION_RECHECK, |at| {
                let left = at - time::OffsetDateTime::now_utc();
                Duration::from_millis(left.whole_milliseconds().clamp(0, 60_000) as u64)
            });
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = wake.notified() => {}
            }
        }
    });
}
