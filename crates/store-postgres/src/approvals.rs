//! Approval requests and the decisions on them. A batch of decisions is one transaction; each
//! request is claimed by locking its row (`FOR UPDATE`) before it is decided, so a request
//! decided at once from two places (two replicas, two people) is decided once: the second
//! finds it decided.

use crate::audit::insert_audit;
use crate::error::Error;
use crate::{PostgresStore, parse_enum, parse_json};
use airlock_core::{ApprovalStatus, RememberScope, args_hash, ids};
use airlock_protocol::AgentOrigin;
use airlock_store_port::{
    self as port, ApprovalRow, Decided, DecisionInput, DecisionOutcome, NewApproval, StoreError,
    now, written,
};
use deadpool_postgres::Transaction;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// Keeps a new inbox item; `origin` (another agent's) joins the audit entry.
pub(crate) async fn insert_approval(
    tx: &Transaction<'_>,
    a: &NewApproval,
    at: &str,
    origin: Option<Value>,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO approval_requests (approval_id, tool_call_id, session_id, kind, server, tool,
            args, args_hash, why, status, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)",
        &[
            &a.approval_id,
            &a.tool_call_id,
            &a.session_id,
            &a.kind.as_str(),
            &a.server,
            &a.tool,
            &a.args.to_string(),
            &a.args_hash,
            &a.why,
            &at,
            &a.expires_at,
        ],
    )
    .await?;
    insert_audit(
        tx,
        "policy",
        "approval_requested",
        Some(&a.session_id),
        a.tool_call_id.as_deref(),
        Some(&a.approval_id),
        &written::requested_detail(a, origin),
    )
    .await
}

const COLUMNS: &str = "a.approval_id, a.tool_call_id, a.session_id, s.name, a.kind, a.server, a.tool, \
    a.args, a.args_hash, a.why, a.status, a.created_at, a.expires_at, \
    g.agent, g.client, g.agent_session, g.cwd, g.editable, g.deferred";

/// Every query of requests reads the agent's part too (absent for Airlock's own calls).
const FROM: &str = "approval_requests a JOIN sessions s ON s.id = a.session_id \
    LEFT JOIN agent_requests g ON g.approval_id = a.approval_id";

fn approval_row(row: &Row) -> Result<ApprovalRow, Error> {
    let agent = match row.try_get::<_, Option<String>>(13)? {
        Some(agent) => Some(AgentOrigin {
            agent,
            client: row.try_get(14)?,
            agent_session: row.try_get(15)?,
            cwd: row.try_get(16)?,
            editable: row.try_get(17)?,
            deferred: row.try_get(18)?,
        }),
        None => None,
    };
    Ok(ApprovalRow {
        approval_id: row.try_get(0)?,
        tool_call_id: row.try_get(1)?,
        session_id: row.try_get(2)?,
        session: row.try_get(3)?,
        kind: parse_enum(row.try_get(4)?, "approval kind")?,
        server: row.try_get(5)?,
        tool: row.try_get(6)?,
        args: parse_json(row.try_get(7)?, "approval arguments")?,
        args_hash: row.try_get(8)?,
        why: row.try_get(9)?,
        status: parse_enum(row.try_get(10)?, "approval status")?,
        created_at: row.try_get(11)?,
        expires_at: row.try_get(12)?,
        agent,
    })
}

/// The requests `filter` selects, oldest first; `lock` claims their rows until the
/// transaction ends.
pub(crate) async fn query(
    tx: &Transaction<'_>,
    filter: &str,
    param: &(dyn ToSql + Sync),
    lock: bool,
) -> Result<Vec<ApprovalRow>, Error> {
    let lock = if lock { " FOR UPDATE OF a" } else { "" };
    let sql =
        format!("SELECT {COLUMNS} FROM {FROM} WHERE {filter} ORDER BY a.created_at, a.seq{lock}");
    tx.query(&sql, &[param])
        .await?
        .iter()
        .map(approval_row)
        .collect()
}

impl port::Approvals for PostgresStore {
    fn pending_approvals(&self) -> port::Result<Vec<ApprovalRow>> {
        self.transaction(async |tx| query(tx, "a.status = $1", &"pending", false).await)
    }

    fn approval(&self, approval_id: &str) -> port::Result<Option<ApprovalRow>> {
        self.transaction(async |tx| {
            Ok(query(tx, "a.approval_id = $1", &approval_id, false)
                .await?
                .into_iter()
                .next())
        })
    }

    fn approvals_of_message(&self, message_id: i64) -> port::Result<Vec<ApprovalRow>> {
        self.transaction(async |tx| {
            query(
                tx,
                "a.tool_call_id IN (SELECT id FROM tool_calls WHERE message_id = $1)",
                &message_id,
                false,
            )
            .await
        })
    }

    fn approvals_by_ids(&self, ids: &[&str]) -> port::Result<HashMap<String, ApprovalRow>> {
        self.transaction(async |tx| {
            Ok(query(tx, "a.approval_id = ANY($1)", &ids, false)
                .await?
                .into_iter()
                .map(|row| (row.approval_id.clone(), row))
                .collect())
        })
    }

    fn unconfirm_decision(&self, approval_id: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            let Some(row) = query(tx, "a.approval_id = $1", &approval_id, true)
                .await?
                .into_iter()
                .next()
            else {
                return Ok(false);
            };
            if row.status != ApprovalStatus::Approved {
                return Ok(false);
            }
            let changed = match &row.tool_call_id {
                Some(call_id) => {
                    tx.execute(
                        "UPDATE tool_calls SET state = 'failed', run_args = NULL, result = $2,
                            updated_at = $3
                         WHERE id = $1 AND state IN ('approved', 'running')",
                        &[
                            call_id,
                            &json!({"type": "error", "message": written::UNCONFIRMED}).to_string(),
                            &now(),
                        ],
                    )
                    .await?
                        > 0
                }
                None => false,
            };
            insert_audit(
                tx,
                "engine",
                "decision_unconfirmed",
                Some(&row.session_id),
                row.tool_call_id.as_deref(),
                Some(approval_id),
                &json!({ "server": row.server, "tool": row.tool, "why": written::UNCONFIRMED }),
            )
            .await?;
            Ok(changed)
        })
    }

    fn pending_of_session(&self, session_id: &str) -> port::Result<Vec<String>> {
        self.transaction(async |tx| {
            Ok(query(
                tx,
                "a.status = 'pending' AND a.session_id = $1",
                &session_id,
                false,
            )
            .await?
            .into_iter()
            .map(|row| row.approval_id)
            .collect())
        })
    }

    fn decide(&self, input: &DecisionInput) -> port::Result<DecisionOutcome> {
        let mut outcomes = self.decide_many(std::slice::from_ref(input))?;
        outcomes
            .pop()
            .unwrap_or_else(|| Err(StoreError::UnknownApproval(input.approval_id.clone())))
    }

    fn decide_many(
        &self,
        inputs: &[DecisionInput],
    ) -> port::Result<Vec<port::Result<DecisionOutcome>>> {
        Ok(self.decide_and_start(inputs, &|_| {})?.outcomes)
    }

    fn decide_and_start(
        &self,
        inputs: &[DecisionInput],
        started: &dyn Fn(&[String]),
    ) -> port::Result<Decided> {
        let decided = self.transaction(async |tx| {
            let mut outcomes = Vec::with_capacity(inputs.len());
            let mut steps = BTreeSet::new();
            for input in inputs {
                tx.batch_execute("SAVEPOINT decision").await?;
                match apply_decision(tx, input, &mut steps).await {
                    Ok(outcome) => {
                        tx.batch_execute("RELEASE SAVEPOINT decision").await?;
                        outcomes.push(Ok(outcome));
                    }
                    Err(Error::Store(error)) if error.is_refusal() => {
                        tx.batch_execute(
                            "ROLLBACK TO SAVEPOINT decision; RELEASE SAVEPOINT decision",
                        )
                        .await?;
                        insert_audit(
                            tx,
                            input.decided_by.as_str(),
                            "decision_refused",
                            input.session_id.as_deref(),
                            None,
                            Some(&input.approval_id),
                            &json!({ "approve": input.approve(), "error": error.to_string(), "person": input.person }),
                        )
                        .await?;
                        outcomes.push(Err(error));
                    }
                    Err(error) => return Err(error),
                }
            }
            let at = now();
            let mut started = Vec::new();
            for message_id in steps {
                started.extend(start_step_if_decided(tx, message_id, &at).await?);
            }
            // Whatever replica waits on these wakes when this commits, not before.
            let decided: Vec<&str> = outcomes
                .iter()
                .filter_map(|outcome| outcome.as_ref().ok())
                .map(|outcome| outcome.approval.approval_id.as_str())
                .collect();
            crate::replicas::notify_decided(tx, &decided).await?;
            Ok(Decided { outcomes, started })
        })?;
        started(&decided.started);
        Ok(decided)
    }
}

/// When this was the last pending call of its step, the step's approved calls become
/// `running` in the decision's transaction (not those the provider runs itself), left for the
/// replica that drives the turn to claim (`claim_invocation`): the decision may be made on
/// another replica, which must not claim what it will not invoke.
async fn start_step_if_decided(
    tx: &Transaction<'_>,
    message_id: i64,
    at: &str,
) -> Result<Vec<String>, Error> {
    let pending: i64 = tx
        .query_one(
            "SELECT COUNT(*) FROM tool_calls WHERE message_id = $1 AND state = 'pending'",
            &[&message_id],
        )
        .await?
        .try_get(0)?;
    if pending > 0 {
        return Ok(Vec::new());
    }
    let rows = tx
        .query(
            "UPDATE tool_calls SET state = 'running', updated_at = $2
             WHERE message_id = $1 AND state = 'approved' AND NOT EXISTS
                (SELECT 1 FROM approval_requests r WHERE r.tool_call_id = tool_calls.id
                 AND r.kind = 'provider_tool_call')
             RETURNING id",
            &[&message_id, &at],
        )
        .await?;
    rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
}

/// Applies one decision; the step of its call goes into `steps`.
async fn apply_decision(
    tx: &Transaction<'_>,
    input: &DecisionInput,
    steps: &mut BTreeSet<i64>,
) -> Result<DecisionOutcome, Error> {
    let row = pending_request(tx, input).await?;
    let id = &input.approval_id;
    let status = input.status;
    let approve = input.approve();
    let at = now();
    let run_args = input
        .edited_args
        .clone()
        .unwrap_or_else(|| row.args.clone());
    tx.execute(
        "UPDATE approval_requests SET status = $2 WHERE approval_id = $1",
        &[id, &status.as_str()],
    )
    .await?;
    tx.execute(
        "INSERT INTO decisions (approval_id, approve, reason, edited_args, remember, for_chat,
            decided_by, decided_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            id,
            &approve,
            &input.reason,
            &input.edited_args.as_ref().map(Value::to_string),
            &input.remember.as_str(),
            &input.for_chat,
            &input.decided_by.as_str(),
            &at,
        ],
    )
    .await?;
    if let Some(call_id) = &row.tool_call_id {
        settle_call(tx, input, call_id, &run_args, &at).await?;
        let step = tx
            .query_one(
                "SELECT message_id FROM tool_calls WHERE id = $1",
                &[call_id],
            )
            .await?;
        steps.insert(step.try_get(0)?);
    }
    if input.for_chat && approve {
        tx.execute(
            "INSERT INTO session_grants (session_id, server, tool, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            &[&row.session_id, &row.server, &row.tool, &at],
        )
        .await?;
    }
    let grant = input.grant.as_ref().filter(|_| approve);
    let mut grant_id = None;
    if input.remember != RememberScope::Once || grant.is_some() {
        let remembered = remember(tx, input, &row, &run_args, &at).await?;
        if let Some(grant) = grant {
            tx.execute(
                "UPDATE decisions SET grant_covers = $2 WHERE approval_id = $1",
                &[&row.approval_id, &grant.covers],
            )
            .await?;
            grant_id = Some(remembered);
        }
    }
    insert_audit(
        tx,
        input.decided_by.as_str(),
        status.as_str(),
        Some(&row.session_id),
        row.tool_call_id.as_deref(),
        Some(id),
        &written::decision_detail(input, &row, &run_args, grant_id.as_deref()),
    )
    .await?;
    let approval = ApprovalRow { status, ..row };
    Ok(DecisionOutcome { approval, run_args })
}

/// The request a decision is for, claimed (its row locked) if it may be decided: known, of the
/// channel's session, still pending, not refused by the engine, and the decision leaves it.
async fn pending_request(
    tx: &Transaction<'_>,
    input: &DecisionInput,
) -> Result<ApprovalRow, Error> {
    let id = &input.approval_id;
    let row = query(tx, "a.approval_id = $1", id, true)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| StoreError::UnknownApproval(id.clone()))?;
    if let Some(session) = &input.session_id
        && session != &row.session_id
        && session != &row.session
    {
        return Err(StoreError::ForeignSession { id: id.clone() }.into());
    }
    if row.status != ApprovalStatus::Pending {
        return Err(StoreError::AlreadyDecided {
            id: id.clone(),
            status: row.status.to_string(),
        }
        .into());
    }
    if let Some(refusal) = &input.refusal {
        return Err(StoreError::Refused(refusal.clone()).into());
    }
    if input.status == ApprovalStatus::Pending {
        return Err(
            StoreError::Invalid(format!("{id}: a decision cannot leave it pending")).into(),
        );
    }
    Ok(row)
}

/// The call of a decided request, and the step's identical calls that follow it.
async fn settle_call(
    tx: &Transaction<'_>,
    input: &DecisionInput,
    call_id: &str,
    run_args: &Value,
    at: &str,
) -> Result<(), Error> {
    if write_outcome(tx, input, call_id, run_args, at).await? != 1 {
        return Err(StoreError::AlreadyDecided {
            id: input.approval_id.clone(),
            status: "settled".into(),
        }
        .into());
    }
    let followers = tx
        .query(
            "SELECT id, session_id FROM tool_calls WHERE same_as = $1 AND state = 'pending'",
            &[&call_id],
        )
        .await?;
    for follower in &followers {
        let (follower, session_id): (String, String) = (follower.try_get(0)?, follower.try_get(1)?);
        if write_outcome(tx, input, &follower, run_args, at).await? == 1 {
            insert_audit(
                tx,
                input.decided_by.as_str(),
                input.status.as_str(),
                Some(&session_id),
                Some(&follower),
                Some(&input.approval_id),
                &json!({ "same_as": call_id, "args_run": input.approve().then_some(run_args) }),
            )
            .await?;
        }
    }
    Ok(())
}

/// A decision's outcome on one waiting call; how many calls changed (0: it no longer waits).
async fn write_outcome(
    tx: &Transaction<'_>,
    input: &DecisionInput,
    call_id: &str,
    run_args: &Value,
    at: &str,
) -> Result<u64, Error> {
    if input.approve() {
        return Ok(tx
            .execute(
                "UPDATE tool_calls SET state = 'approved', run_args = $2, updated_at = $3
                 WHERE id = $1 AND state = 'pending'",
                &[&call_id, &run_args.to_string(), &at],
            )
            .await?);
    }
    Ok(tx
        .execute(
            "UPDATE tool_calls SET state = $2, result = $3, updated_at = $4
             WHERE id = $1 AND state = 'pending'",
            &[
                &call_id,
                &input.status.as_str(),
                &written::unapproved_result(input).to_string(),
                &at,
            ],
        )
        .await?)
}

/// A decision kept for later calls, or a grant; its id.
async fn remember(
    tx: &Transaction<'_>,
    input: &DecisionInput,
    row: &ApprovalRow,
    run_args: &Value,
    at: &str,
) -> Result<String, Error> {
    let grant = input.grant.as_ref().filter(|_| input.approve());
    let in_chat = grant.map_or(input.remember == RememberScope::Session, |g| g.in_chat);
    let session = in_chat.then_some(&row.session_id);
    // What the person approved is what runs (an edit included), never the proposal.
    let exact = grant.map_or(input.remember_exact_args, |g| g.exact_args);
    let hash = exact.then(|| args_hash(run_args));
    let pattern = grant
        .and_then(|g| g.pattern.as_ref())
        .map(serde_json::to_string)
        .transpose()
        .map_err(|error| StoreError::Invalid(error.to_string()))?;
    let uses = grant.and_then(|g| g.uses).map(i64::from);
    let id = ids::new_id("mem");
    tx.execute(
        "INSERT INTO remembered (id, server, tool, args_hash, session_id, approve, created_at,
            expires_at, uses_left, pattern)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &id,
            &row.server,
            &row.tool,
            &hash,
            &session,
            &input.approve(),
            &at,
            &grant.and_then(|g| g.expires_at.clone()),
            &uses,
            &pattern,
        ],
    )
    .await?;
    Ok(id)
}
