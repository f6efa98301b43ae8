//! The one decision path. Every way a pending item leaves the inbox — approve, deny, an edit,
//! an expiry, a cancellation (turn cancelled, server removed, connection gone), an elicitation
//! answered, a provider's approval request decided — is a [`Settlement`] given to
//! [`Inner::settle`], which:
//!
//! 1. reads the pending requests (one query for the batch);
//! 2. checks each against the engine's own rules (the arguments the person saw, the tool's
//!    schema, blocked tools and deny rules for what will run, what a notification may approve,
//!    what an elicitation's form accepts) — a refusal is recorded and changes nothing;
//! 3. writes the whole batch in one durable store transaction (approved calls of a fully
//!    decided step become `running` in it);
//! 4. wakes the turns waiting on them;
//! 5. announces them ([`EngineEvent::ApprovalsDecided`]).
//!
//! The store only persists: it never calls back into the engine.

use crate::{EngineError, Inner, Result};
use airlock_core::policy::{GrantPattern, NeedsApproval, RulePattern, forbidden};
use airlock_core::schema::ArgsValidator;
use airlock_core::schema::{check_answer, with_defaults};
use airlock_core::suggest::grant_pattern;
use airlock_core::{ApprovalStatus, DecidedBy, ItemKind, RememberScope};
use airlock_protocol::{
    Approval, ApprovalRow, DecidedItem, Decision, DecisionKind, DecisionRequest, ElicitationAction,
    ElicitationAnswer, EngineEvent, GrantArgs, GrantScope,
};
use airlock_protocol::{MemberView, TeamRole};
use airlock_store::{DecisionInput, GrantLimits, ItemRouting, StoreError};
use serde_json::{Value, json};
use std::collections::HashMap;

/// What happens to the item.
#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    /// Run it, with edited arguments when given.
    Approve {
        args: Option<Value>,
    },
    Deny,
    /// Its approval timeout passed.
    Expire,
    /// Nobody will answer it any more (turn cancelled, server removed, connection gone).
    Cancel,
    /// The agent that asked stopped waiting for it.
    Withdraw,
    /// An elicitation's answer.
    Answer(ElicitationAnswer),
}

/// One item leaving the inbox.
#[derive(Debug, Clone)]
pub(crate) struct Settlement {
    pub approval_id: String,
    pub resolution: Resolution,
    pub reason: Option<String>,
    /// The session (name or id) the channel acts in, when it acts in one.
    pub session: Option<String>,
    /// The hash of the arguments the person was shown.
    pub args_hash: Option<String>,
    pub remember: RememberScope,
    pub exact_args: bool,
    pub for_chat: bool,
    /// A timed or counted grant asked for with an approval.
    pub grant: Option<GrantAsked>,
    /// The paired device (phone inbox) it comes from, by name.
    pub device: Option<String>,
    /// The team member who decides (a team server): who may decide a routed item, and whose
    /// approvals count towards its quorum.
    pub person: Option<MemberView>,
}

/// "Allow this tool for a while, or for the next N calls", as asked: with the chats and the
/// arguments it covers (by default the approval's chat and the suggested pattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrantAsked {
    pub for_secs: Option<u64>,
    /// This call and `times - 1` more.
    pub times: Option<u32>,
    pub scope: GrantScope,
    pub args: GrantArgs,
    /// A glob for the call's command or path instead of the suggested pattern.
    pub pattern: Option<String>,
    /// These exact arguments only.
    pub exact_args: bool,
}

impl GrantAsked {
    /// The grant's limits from now (what it covers is filled in by [`grant_for`]), or why it
    /// cannot be made. `None`: nothing to keep (one call only).
    fn limits(&self) -> std::result::Result<Option<GrantLimits>, String> {
        if self.for_secs.is_none() && self.times.is_none() {
            return Err(
                "a grant's scope or arguments go with a time or a number of calls (--for, --times)"
                    .into(),
            );
        }
        let expires_at = match self.for_secs {
            Some(0) => return Err("a grant lasts at least one second".into()),
            Some(secs) if secs > airlock_core::duration::MAX_GRANT_SECS => {
                return Err(airlock_core::duration::DurationError::TooLong.to_string());
            }
            Some(secs) => Some(crate::clock::expiry_after(secs)),
            None => None,
        };
        let uses = match self.times {
            Some(0) => return Err("--times counts this call too: it is at least 1".into()),
            Some(n) => Some(n - 1),
            None => None,
        };
        if expires_at.is_none() && uses.is_none_or(|n| n == 0) {
            return Ok(None);
        }
        Ok(Some(GrantLimits {
            expires_at,
            uses,
            ..GrantLimits::default()
        }))
    }

    /// How long it lasts, as a person reads it: "for 15 min", "for the next 2 calls".
    fn lasts(&self) -> String {
        let mut parts = Vec::new();
        if let Some(secs) = self.for_secs {
            parts.push(format!(
                "for {}",
                airlock_core::duration::describe_secs(secs.try_into().unwrap_or(i64::MAX))
            ));
        }
        if let Some(more) = self.times.map(|n| n.saturating_sub(1)).filter(|n| *n > 0) {
            parts.push(format!(
                "for the next {more} call{}",
                if more == 1 { "" } else { "s" }
            ));
        }
        parts.join(" or ")
    }
}

impl Settlement {
    pub fn new(approval_id: impl Into<String>, resolution: Resolution) -> Self {
        Self {
            approval_id: approval_id.into(),
            resolution,
            reason: None,
            session: None,
            args_hash: None,
            remember: RememberScope::Once,
            exact_args: false,
            for_chat: false,
            grant: None,
            device: None,
            person: None,
        }
    }

    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

impl From<DecisionRequest> for Settlement {
    fn from(request: DecisionRequest) -> Self {
        let DecisionRequest {
            approval_id,
            decision,
            session,
            args_hash,
        } = request;
        let mut settlement = Settlement::new(approval_id, Resolution::Deny);
        settlement.session = session;
        settlement.args_hash = args_hash;
        match decision {
            Decision::Approve(Approval {
                args,
                for_chat,
                remember,
                exact_args,
                grant,
            }) => {
                settlement.resolution = Resolution::Approve { args };
                settlement.for_chat = for_chat;
                settlement.remember = remember.unwrap_or(RememberScope::Once);
                settlement.exact_args = exact_args;
                settlement.grant = grant.map(|grant| GrantAsked {
                    for_secs: grant.for_secs,
                    times: grant.times,
                    // `remember: always` with a grant meant every chat before grants had a scope.
                    scope: grant
                        .scope
                        .unwrap_or(if remember == Some(RememberScope::Always) {
                            GrantScope::All
                        } else {
                            GrantScope::Chat
                        }),
                    args: grant.args.unwrap_or_default(),
                    pattern: grant.pattern,
                    exact_args,
                });
            }
            Decision::Deny {
                reason,
                remember,
                exact_args,
            } => {
                settlement.reason = reason;
                settlement.remember = remember.unwrap_or(RememberScope::Once);
                settlement.exact_args = exact_args;
            }
            Decision::Answer(answer) => settlement.resolution = Resolution::Answer(answer),
        }
        settlement
    }
}

/// The decisions an item accepts — the one place that says so: the inbox item carries them
/// (`available_decisions`) for every channel to show, and [`Inner::settle`] refuses any other.
/// An elicitation is answered (accept, decline, cancel); a tool call is approved or denied,
/// edited only where the edit can run (not a provider's own tool, not an agent that cannot
/// take one), kept for later calls only where a later call consults what was kept (never for a
/// provider's own tool: the provider asks each time).
pub(crate) fn available_decisions(kind: ItemKind, agent_editable: bool) -> Vec<DecisionKind> {
    use DecisionKind::*;
    match kind {
        ItemKind::Elicitation => vec![Accept, Decline, Cancel],
        ItemKind::ProviderToolCall => vec![Approve, Deny],
        ItemKind::ToolCall => vec![Approve, Edit, Deny, AllowForChat, Remember, Grant],
        ItemKind::AgentToolCall if agent_editable => {
            vec![Approve, Edit, Deny, AllowForChat, Remember, Grant]
        }
        ItemKind::AgentToolCall => vec![Approve, Deny, AllowForChat, Remember, Grant],
    }
}

/// Why an item refuses a kind of decision it does not offer, as the channel's person reads it.
fn not_offered(row: &ApprovalRow, kind: DecisionKind) -> (Refusal, String) {
    let id = &row.approval_id;
    let elicitation = row.kind == ItemKind::Elicitation;
    match kind {
        DecisionKind::Accept | DecisionKind::Decline | DecisionKind::Cancel => (
            Refusal::Answer,
            format!("{id} is a tool call, not an elicitation; use approve or deny"),
        ),
        _ if elicitation => (
            Refusal::Invalid,
            format!("{id} is an elicitation; answer it with `airlock answer`"),
        ),
        DecisionKind::Edit if row.kind == ItemKind::ProviderToolCall => (
            Refusal::Invalid,
            "the provider runs this tool itself; its arguments cannot be edited, only approved or denied".into(),
        ),
        DecisionKind::Edit => (
            Refusal::Invalid,
            format!(
                "{} cannot run an edited input for this request; approve or deny it",
                row.agent.as_ref().map_or("the agent", |a| a.agent.as_str())
            ),
        ),
        DecisionKind::Grant => (
            Refusal::Invalid,
            "the provider runs this tool itself and asks each time; it cannot be granted for later calls".into(),
        ),
        DecisionKind::AllowForChat | DecisionKind::Remember => (
            Refusal::Invalid,
            "the provider runs this tool itself and asks each time; nothing can be kept for later calls".into(),
        ),
        DecisionKind::Approve | DecisionKind::Deny => (
            Refusal::Invalid,
            format!("{id} cannot be decided this way"),
        ),
    }
}

/// Whether the agent that asked can run an edited input instead (its hook said so).
pub(crate) fn agent_editable(row: &ApprovalRow) -> bool {
    row.agent.as_ref().is_some_and(|a| a.editable)
}

/// The decision kinds a settlement uses (none for what the engine does on its own: expire,
/// cancel, withdraw).
fn kinds_of(settlement: &Settlement) -> Vec<DecisionKind> {
    let keeps = settlement.remember != RememberScope::Once;
    match &settlement.resolution {
        Resolution::Approve { args } => {
            let mut kinds = vec![if args.is_some() {
                DecisionKind::Edit
            } else {
                DecisionKind::Approve
            }];
            if settlement.for_chat {
                kinds.push(DecisionKind::AllowForChat);
            }
            if keeps {
                kinds.push(DecisionKind::Remember);
            }
            if settlement.grant.is_some() {
                kinds.push(DecisionKind::Grant);
            }
            kinds
        }
        Resolution::Deny if keeps => vec![DecisionKind::Deny, DecisionKind::Remember],
        Resolution::Deny => vec![DecisionKind::Deny],
        Resolution::Answer(answer) => vec![match answer.action {
            ElicitationAction::Accept => DecisionKind::Accept,
            ElicitationAction::Decline => DecisionKind::Decline,
            ElicitationAction::Cancel => DecisionKind::Cancel,
        }],
        Resolution::Expire | Resolution::Cancel | Resolution::Withdraw => Vec::new(),
    }
}

/// What the store is asked to write for one settlement: the status, the arguments that run
/// (or the elicitation's content), and the engine's reason to refuse, if any.
struct Checked {
    status: ApprovalStatus,
    reason: Option<String>,
    edited_args: Option<Value>,
    grant: Option<GrantLimits>,
    refusal: Option<(Refusal, String)>,
}

/// What a team server makes of one settlement (see [`Inner::team_step`]).
enum TeamStep {
    /// Decide it now (no quorum, a quorum reached, a denial, what the engine does itself).
    Decide,
    /// The approval was counted; the quorum is not reached yet: the item stays pending.
    Counted,
    Refused(Refusal, String),
    Failed(EngineError),
}

/// Why the engine refused a decision, which decides the error the channel gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// The person saw other arguments than those waiting (a stale view or a replay).
    Stale,
    /// The edit does not fit (schema, not editable).
    Invalid,
    /// An elicitation's answer does not fit its form (or the item is not an elicitation).
    Answer,
    /// The call may not run on this approval (blocked, a deny rule, a notification).
    Forbidden,
}

impl Refusal {
    fn error(self, message: String) -> EngineError {
        match self {
            Refusal::Stale => EngineError::Stale(message),
            Refusal::Invalid => EngineError::InvalidEdit(message),
            Refusal::Answer => EngineError::InvalidAnswer(message),
            Refusal::Forbidden => EngineError::NotAllowed(message),
        }
    }
}

impl Inner {
    /// The one decision path (see the module's doc). The outer error means the transaction
    /// failed and nothing was decided; each item is otherwise applied or refused on its own.
    pub(crate) fn settle(
        &self,
        settlements: Vec<Settlement>,
        by: DecidedBy,
    ) -> Result<Vec<Result<ApprovalRow>>> {
        if settlements.is_empty() {
            return Ok(Vec::new());
        }
        // 1) the pending requests
        let ids: Vec<&str> = settlements.iter().map(|s| s.approval_id.as_str()).collect();
        let rows = self.store.approvals_by_ids(&ids)?;
        // Who routed items go to, on a team server only (a desktop reads nothing more).
        let routing = if self.team.active() {
            self.routing_for(rows.values().map(crate::routing::Routable::from))?
        } else {
            HashMap::new()
        };
        let policy = self.policy();
        // 2) the engine's checks
        let mut session_ids: HashMap<String, String> = HashMap::new();
        let mut inputs = Vec::with_capacity(settlements.len());
        let mut kinds = Vec::with_capacity(settlements.len());
        // The results in the batch's order: an approval counted towards a quorum not reached
        // yet (or failing to be counted) is answered here; the rest by the transaction.
        let mut results: Vec<Option<Result<ApprovalRow>>> =
            settlements.iter().map(|_| None).collect();
        let mut decided_settlements = Vec::with_capacity(settlements.len());
        for (position, settlement) in settlements.iter().enumerate() {
            let session_id = match &settlement.session {
                Some(name) => Some(match session_ids.get(name) {
                    Some(id) => id.clone(),
                    None => {
                        let id = self
                            .store
                            .session_by_name(name)?
                            .map(|s| s.id)
                            .unwrap_or_else(|| name.clone());
                        session_ids.insert(name.clone(), id.clone());
                        id
                    }
                }),
                None => None,
            };
            let row = rows.get(&settlement.approval_id);
            let mut checked = self.check(settlement, row, by, policy.as_ref().ok());
            if checked.refusal.is_none()
                && let Some(row) = row
            {
                match self.team_step(settlement, row, routing.get(&row.approval_id), &checked) {
                    TeamStep::Decide => {}
                    TeamStep::Counted => {
                        results[position] = Some(Ok(row.clone()));
                        continue;
                    }
                    TeamStep::Failed(error) => {
                        results[position] = Some(Err(error));
                        continue;
                    }
                    TeamStep::Refused(kind, why) => checked.refusal = Some((kind, why)),
                }
            }
            kinds.push(checked.refusal.as_ref().map(|(kind, _)| *kind));
            decided_settlements.push((position, settlement));
            inputs.push(DecisionInput {
                approval_id: settlement.approval_id.clone(),
                session_id,
                status: checked.status,
                reason: checked.reason,
                edited_args: checked.edited_args,
                remember: settlement.remember,
                remember_exact_args: settlement.exact_args,
                for_chat: settlement.for_chat,
                grant: checked.grant,
                decided_by: by,
                device: settlement.device.clone(),
                person: settlement.person.as_ref().map(|member| member.name.clone()),
                refusal: checked.refusal.map(|(_, why)| why),
            });
        }
        // 3) one durable transaction
        // Noted before any turn can read these calls as running (the store's lock is still
        // held): a turn that finds one knows its decision claimed it, not a failed run.
        let noted = |started: &[String]| {
            if self.store.replicas().is_some() {
                // Left unclaimed: the replica that drives the turn claims each (store port).
                return;
            }
            self.started_by_decision
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(started.iter().cloned());
        };
        let decided_now = if inputs.is_empty() {
            // Every approval of the batch was counted towards a quorum: nothing to write.
            Ok(airlock_store::Decided {
                outcomes: Vec::new(),
                started: Vec::new(),
            })
        } else {
            self.store.decide_and_start(&inputs, &noted)
        };
        let outcomes = match decided_now {
            Ok(decided) => decided.outcomes,
            Err(error) => {
                if error.is_unavailable() {
                    // The person is told it failed; if it reached the disk anyway, the next
                    // start must not run it.
                    let approved: Vec<&str> = inputs
                        .iter()
                        .filter(|input| input.approve())
                        .map(|input| input.approval_id.as_str())
                        .collect();
                    crate::data_dir::note_unconfirmed(&self.data_dir, &approved);
                    self.emit(EngineEvent::StorageFailed {
                        reason: error.to_string(),
                    });
                }
                return Err(error.into());
            }
        };
        let mut invalidate = false;
        let mut decided = Vec::new();
        let settled: Vec<Result<ApprovalRow>> = outcomes
            .into_iter()
            .zip(decided_settlements.iter().zip(kinds))
            .map(|(outcome, ((_, settlement), refusal))| {
                let approval = match outcome {
                    Ok(outcome) => outcome.approval,
                    Err(StoreError::Refused(message)) => {
                        return Err(refusal.unwrap_or(Refusal::Invalid).error(message));
                    }
                    Err(error) => return Err(error.into()),
                };
                invalidate |= settlement.remember != RememberScope::Once
                    || settlement.for_chat
                    || settlement.grant.is_some();
                // 4) wake the waiting turn
                self.router.notify(&approval.approval_id);
                decided.push(DecidedItem {
                    approval_id: approval.approval_id.clone(),
                    session: approval.session.clone(),
                    approve: approval.status == ApprovalStatus::Approved,
                    status: approval.status,
                    decided_by: by.as_str().to_string(),
                });
                Ok(approval)
            })
            .collect();
        for ((position, _), result) in decided_settlements.iter().zip(settled) {
            results[*position] = Some(result);
        }
        let rows: Vec<Result<ApprovalRow>> = results
            .into_iter()
            .map(|result| {
                result.unwrap_or_else(|| Err(EngineError::Invalid("no decision was made".into())))
            })
            .collect();
        if invalidate {
            self.invalidate_policy();
        }
        // 5) announce
        if !decided.is_empty() {
            self.emit(EngineEvent::ApprovalsDecided { decisions: decided });
        }
        Ok(rows)
    }

    /// A team server's part of a decision: who may decide a routed item (its assignee, or an
    /// admin), and a quorum: an approval counts once per person and arguments approved (an
    /// edit's own, so an edit starts the count again), and decides only when enough people
    /// approved the same arguments. A denial is final at once.
    fn team_step(
        &self,
        settlement: &Settlement,
        row: &ApprovalRow,
        routed: Option<&ItemRouting>,
        checked: &Checked,
    ) -> TeamStep {
        if let Some(member) = &settlement.person {
            if member.role < TeamRole::Approver {
                return TeamStep::Refused(
                    Refusal::Forbidden,
                    format!(
                        "{} is a viewer: viewers read, approvers decide",
                        member.name
                    ),
                );
            }
            if let Some(why) = crate::routing::not_theirs(member, routed) {
                return TeamStep::Refused(Refusal::Forbidden, why);
            }
        }
        let Some(routed) = routed else {
            return TeamStep::Decide;
        };
        let approving = matches!(settlement.resolution, Resolution::Approve { .. })
            && checked.status == ApprovalStatus::Approved;
        if routed.quorum <= 1 || !approving {
            return TeamStep::Decide;
        }
        let Some(member) = &settlement.person else {
            return TeamStep::Refused(
                Refusal::Forbidden,
                format!(
                    "{} needs {} team members' approvals; approve it with your member token",
                    row.approval_id, routed.quorum
                ),
            );
        };
        let approved_args = checked
            .edited_args
            .as_ref()
            .map_or_else(|| row.args_hash.clone(), airlock_core::canonical::args_hash);
        match self.store.record_vote(
            &row.approval_id,
            &member.id,
            &member.name,
            &approved_args,
            checked.edited_args.as_ref(),
        ) {
            Ok(approvals) if approvals >= routed.quorum => TeamStep::Decide,
            Ok(_) => TeamStep::Counted,
            Err(error) => TeamStep::Failed(error.into()),
        }
    }

    /// The engine's own reasons to refuse one settlement, and what to write for it.
    fn check(
        &self,
        settlement: &Settlement,
        row: Option<&ApprovalRow>,
        by: DecidedBy,
        policy: Option<&std::sync::Arc<airlock_core::PolicyConfig>>,
    ) -> Checked {
        let mut checked = Checked {
            status: ApprovalStatus::Denied,
            reason: settlement.reason.clone(),
            edited_args: None,
            grant: None,
            refusal: None,
        };
        let refuse = |mut checked: Checked, kind: Refusal, why: String| {
            checked.refusal = Some((kind, why));
            checked
        };
        match &settlement.resolution {
            Resolution::Approve { args } => {
                checked.status = ApprovalStatus::Approved;
                checked.edited_args = args.clone();
            }
            Resolution::Deny => {}
            Resolution::Expire => checked.status = ApprovalStatus::Expired,
            Resolution::Cancel => checked.status = ApprovalStatus::Cancelled,
            Resolution::Withdraw => checked.status = ApprovalStatus::Withdrawn,
            Resolution::Answer(answer) => {
                checked.status = match answer.action {
                    ElicitationAction::Accept => ApprovalStatus::Approved,
                    ElicitationAction::Decline => ApprovalStatus::Denied,
                    ElicitationAction::Cancel => ApprovalStatus::Cancelled,
                };
                checked.reason = match answer.action {
                    ElicitationAction::Accept => None,
                    ElicitationAction::Decline => Some("decline".into()),
                    ElicitationAction::Cancel => Some("cancel".into()),
                };
            }
        }
        // An unknown id is the store's to report, in the same transaction.
        let Some(row) = row else {
            return checked;
        };
        if settlement
            .args_hash
            .as_ref()
            .is_some_and(|shown| shown != &row.args_hash)
        {
            return refuse(
                checked,
                Refusal::Stale,
                "the arguments changed since they were shown; look again".into(),
            );
        }
        let offered = available_decisions(row.kind, agent_editable(row));
        if let Some(kind) = kinds_of(settlement)
            .into_iter()
            .find(|kind| !offered.contains(kind))
        {
            let (kind, why) = not_offered(row, kind);
            return refuse(checked, kind, why);
        }
        match &settlement.resolution {
            Resolution::Expire | Resolution::Cancel | Resolution::Withdraw => checked,
            Resolution::Answer(answer) => match answer_content(row, answer) {
                Ok(content) => Checked {
                    edited_args: content,
                    ..checked
                },
                Err(why) => refuse(checked, Refusal::Answer, why),
            },
            Resolution::Deny => checked,
            Resolution::Approve { args } => {
                if let Err((kind, why)) = self.may_approve(row, args.as_ref(), by, policy) {
                    return refuse(checked, kind, why);
                }
                let runs = args.as_ref().unwrap_or(&row.args);
                match settlement
                    .grant
                    .as_ref()
                    .map(|asked| grant_for(row, by, asked, runs))
                {
                    None => checked,
                    Some(Ok(grant)) => Checked { grant, ..checked },
                    Some(Err(why)) => refuse(checked, Refusal::Invalid, why),
                }
            }
        }
    }

    /// Whether this tool call may run with these arguments on a person's approval.
    fn may_approve(
        &self,
        row: &ApprovalRow,
        edit: Option<&Value>,
        by: DecidedBy,
        policy: Option<&std::sync::Arc<airlock_core::PolicyConfig>>,
    ) -> std::result::Result<(), (Refusal, String)> {
        if let Some(args) = edit {
            let invalid = |why: String| (Refusal::Invalid, why);
            if !args.is_object() {
                return Err(invalid("edited arguments must be a JSON object".into()));
            }
            // Whether the item takes an edit at all is settled (`available_decisions`).
            match row.kind {
                ItemKind::AgentToolCall => agent_edit(self, row, args).map_err(invalid)?,
                _ => match self.tools.tool(&row.server, &row.tool) {
                    Some(tool) => tool
                        .validate(args)
                        .map_err(|error| invalid(error.to_string()))?,
                    None => {
                        return Err(invalid(format!(
                            "the tool {}/{} is no longer available",
                            row.server, row.tool
                        )));
                    }
                },
            }
        }
        // An agent's call runs only in its waiting hook: after a restart, until the hook comes
        // back, approving it would run nothing yet tell the person it was approved. On a shared
        // database the hook may wait through another replica. A deferred call's client
        // collects the decision later, so it needs nobody waiting.
        let deferred = row.agent.as_ref().is_some_and(|a| a.deferred);
        if row.kind == ItemKind::AgentToolCall
            && !deferred
            && !self.agent_waits_for(&row.approval_id)
        {
            return Err((
                Refusal::Forbidden,
                "the agent is not waiting for this call (Airlock restarted and its hook has not come back); nothing was approved".into(),
            ));
        }
        let runs = edit.unwrap_or(&row.args);
        // Nothing a person approves gets past a blocked tool or a deny rule: the arguments
        // may be an edit, and the settings may have changed while the call waited.
        let Some(policy) = policy else {
            return Err((
                Refusal::Forbidden,
                "the approval settings could not be read; nothing was approved".into(),
            ));
        };
        if let Some(denied) = forbidden(policy, &row.server, &row.tool, runs) {
            return Err((Refusal::Forbidden, format!("{}; not approved", denied.why)));
        }
        // The tool's own check too (the built-in tools deny paths outside the workspace).
        if let Some(NeedsApproval::Deny(why)) = self
            .tools
            .source(&row.server)
            .and_then(|source| source.needs_approval(&row.tool, runs))
        {
            return Err((Refusal::Forbidden, format!("{why}; not approved")));
        }
        if by == DecidedBy::Notification {
            self.notification_may_approve(row, edit)
                .map_err(|why| (Refusal::Forbidden, why))?;
        }
        Ok(())
    }

    /// A notification shows a line of text: it may approve only a tool the person allowed from
    /// notifications (by default one declared read-only by a trusted source) whose arguments it
    /// showed whole, unedited. Deny is always allowed.
    fn notification_may_approve(
        &self,
        row: &ApprovalRow,
        edit: Option<&Value>,
    ) -> std::result::Result<(), String> {
        if edit.is_none()
            && self.low_risk_for_notification(row.kind, &row.server, &row.tool, &row.args)
        {
            Ok(())
        } else {
            Err(format!(
                "{}/{} cannot be approved from a notification; open the inbox to see the whole call",
                row.server, row.tool
            ))
        }
    }

    pub(crate) fn low_risk_for_notification(
        &self,
        kind: ItemKind,
        server: &str,
        tool: &str,
        args: &Value,
    ) -> bool {
        kind == ItemKind::ToolCall
            && airlock_core::display::fits_notification(args)
            && self.tools.tool(server, tool).is_some_and(|registered| {
                self.policy().is_ok_and(|policy| {
                    policy.approvable_from_notification(server, tool, registered.def.read_only_hint)
                })
            })
    }
}

/// The grant an approval asks for, where one can be kept: not from a notification (one line
/// and two buttons; a provider's own tool never offers one, see [`available_decisions`]). It covers the arguments asked for, judged on those that run
/// (`runs`, an edit included).
fn grant_for(
    row: &ApprovalRow,
    by: DecidedBy,
    asked: &GrantAsked,
    runs: &Value,
) -> std::result::Result<Option<GrantLimits>, String> {
    if by == DecidedBy::Notification {
        return Err("a notification approves one call; grants are made in the inbox".into());
    }
    let Some(limits) = asked.limits()? else {
        return Ok(None);
    };
    let suggested = grant_pattern(&row.tool, runs);
    let (pattern, exact_args) = match (asked.args, &asked.pattern) {
        (GrantArgs::Any, Some(_)) => {
            return Err("a grant covers any arguments or a pattern, not both".into());
        }
        (GrantArgs::Any, None) if asked.exact_args => {
            return Err("a grant covers any arguments or exactly these, not both".into());
        }
        (GrantArgs::Any, None) => (None, false),
        (GrantArgs::Suggested, Some(glob)) => {
            (Some(typed_pattern(row, runs, suggested, glob)?), false)
        }
        (GrantArgs::Suggested, None) if asked.exact_args => (None, true),
        (GrantArgs::Suggested, None) => (suggested.clone(), suggested.is_none()),
    };
    let what = match (&pattern, exact_args) {
        (Some(pattern), _) => pattern.label.clone(),
        (None, true) => "these exact arguments".to_string(),
        (None, false) => "any arguments".to_string(),
    };
    let scope = match asked.scope {
        GrantScope::Chat => "in this chat",
        GrantScope::All => "in every chat",
    };
    Ok(Some(GrantLimits {
        in_chat: asked.scope == GrantScope::Chat,
        exact_args,
        covers: format!(
            "granted {}: {}/{} with {what} {scope}",
            asked.lasts(),
            row.server,
            row.tool
        ),
        pattern,
        ..limits
    }))
}

/// A glob typed for the call's command or path (the first field of the suggested pattern; the
/// other fields keep theirs), which must cover the call approved.
fn typed_pattern(
    row: &ApprovalRow,
    runs: &Value,
    suggested: Option<GrantPattern>,
    glob: &str,
) -> std::result::Result<GrantPattern, String> {
    let Some(mut pattern) = suggested else {
        return Err(format!(
            "{}/{}'s arguments hold no command or path for a pattern to match; a grant covers these exact arguments, or any with --any-args",
            row.server, row.tool
        ));
    };
    let Some(first) = pattern.fields.first_mut() else {
        return Err("the suggested pattern has no field".into());
    };
    first.pattern = RulePattern::Glob(glob.to_string());
    let pointer = first.pointer.clone();
    let rest: Vec<&str> = pattern.label.split(", ").skip(1).collect();
    pattern.label = std::iter::once(format!("`{glob}`"))
        .chain(rest.into_iter().map(str::to_string))
        .collect::<Vec<_>>()
        .join(", ");
    let covered = pattern
        .compile(&row.server, &row.tool)
        .map_err(|error| format!("the pattern `{glob}`: {error}"))?
        .covers(runs);
    if !covered {
        return Err(format!(
            "the pattern `{glob}` does not cover this call's {pointer}; a grant covers the call that makes it"
        ));
    }
    Ok(pattern)
}

/// An edit of an agent's call: the agent can run one (`available_decisions`), checked against the tool's
/// schema when Airlock knows the tool (an MCP server proxied by name), and a shell command must
/// stay a command.
fn agent_edit(inner: &Inner, row: &ApprovalRow, args: &Value) -> std::result::Result<(), String> {
    if let Some(tool) = inner.tools.tool(&row.server, &row.tool) {
        return tool.validate(args).map_err(|error| error.to_string());
    }
    // A tool of a server only the MCP proxy runs: its schema as last listed.
    let listed = inner
        .store
        .current_definition(&row.server, &row.tool)
        .map_err(|error| error.to_string())?;
    if let Some(schema) = listed.as_ref().and_then(|d| d.get("input_schema")) {
        return ArgsValidator::new(schema)
            .and_then(|validator| validator.validate(args))
            .map_err(|error| error.to_string());
    }
    if row.args.get("command").is_some_and(Value::is_string)
        && args
            .get("command")
            .and_then(Value::as_str)
            .is_none_or(|c| c.trim().is_empty())
    {
        return Err("the edited input needs a \"command\" (a non-empty string)".into());
    }
    Ok(())
}

/// An accepted elicitation's content, checked against the requested form (after its defaults
/// are filled in).
fn answer_content(
    row: &ApprovalRow,
    answer: &ElicitationAnswer,
) -> std::result::Result<Option<Value>, String> {
    if answer.action != ElicitationAction::Accept {
        return Ok(None);
    }
    let content = answer.content.clone().unwrap_or_else(|| json!({}));
    if !content.is_object() {
        return Err("the accepted content must be a JSON object".into());
    }
    let schema = row
        .args
        .get("schema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let content = with_defaults(&schema, content);
    check_answer(&schema, &content)?;
    Ok(Some(content))
}
