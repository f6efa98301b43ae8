//! Approval requests and the decisions on them. Every decision, from any channel, is written
//! by [`Store::decide_many`] in one immediate transaction: the request, the call, the grant or
//! remembered decision it creates, and the audit row commit together or not at all — for one
//! decision or for ten thousand at once.

use crate::audit::insert_audit;
use crate::{
    CachedExt, DecisionInput, DecisionOutcome, NewApproval, Result, Store, StoreError, now,
    parse_enum, parse_json,
};
use airlock_core::{ApprovalStatus, ItemKind, RememberScope, args_hash, ids};
use airlock_protocol::{AgentOrigin, ApprovalRow};
use airlock_store_port::written;
use rusqlite::{Connection, Row, params};
use serde_json::{Value, json};

/// Keeps a new inbox item; `origin` (another agent's: which, its client, its folder) joins the
/// audit entry, so the trail says who asked.
pub(crate) fn insert_approval(
    tx: &Connection,
    a: &NewApproval,
    at: &str,
    origin: Option<Value>,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO approval_requests (approval_id, tool_call_id, session_id, kind, server, tool,
            args, args_hash, why, status, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11)",
    )?
    .execute(params![
        a.approval_id,
        a.tool_call_id,
        a.session_id,
        a.kind.as_str(),
        a.server,
        a.tool,
        a.args.to_string(),
        a.args_hash,
        a.why,
        at,
        a.expires_at,
    ])?;
    insert_audit(
        tx,
        "policy",
        "approval_requested",
        Some(&a.session_id),
        a.tool_call_id.as_deref(),
        Some(&a.approval_id),
        &written::requested_detail(a, origin),
    )?;
    Ok(())
}

const COLUMNS: &str = "a.approval_id, a.tool_call_id, a.session_id, s.name, a.kind, a.server, a.tool, \
    a.args, a.args_hash, a.why, a.status, a.created_at, a.expires_at, \
    g.agent, g.client, g.agent_session, g.cwd, g.editable, g.deferred";

/// Every query of requests reads the agent's part too (absent for Airlock's own calls).
const FROM: &str = "approval_requests a JOIN sessions s ON s.id = a.session_id \
    LEFT JOIN agent_requests g ON g.approval_id = a.approval_id";

type RawApproval = (
    (
        String,
        Option<String>,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        Option<String>,
    ),
    Option<AgentOrigin>,
);

fn raw(row: &Row<'_>) -> rusqlite::Result<RawApproval> {
    let agent: Option<String> = row.get(13)?;
    let origin = match agent {
        Some(agent) => Some(AgentOrigin {
            agent,
            client: row.get(14)?,
            agent_session: row.get(15)?,
            cwd: row.get(16)?,
            editable: row.get(17)?,
            deferred: row.get(18)?,
        }),
        None => None,
    };
    Ok((
        (
            row.get(0)?,
            row.get(1)?,
            row.get(2)?,
            row.get(3)?,
            row.get(4)?,
            row.get(5)?,
            row.get(6)?,
            row.get(7)?,
            row.get(8)?,
            row.get(9)?,
            row.get(10)?,
            row.get(11)?,
            row.get(12)?,
        ),
        origin,
    ))
}

fn parse((r, agent): RawApproval) -> Result<ApprovalRow> {
    Ok(ApprovalRow {
        approval_id: r.0,
        tool_call_id: r.1,
        session_id: r.2,
        session: r.3,
        kind: parse_enum(&r.4, "approval kind")?,
        server: r.5,
        tool: r.6,
        args: parse_json(&r.7, "approval arguments")?,
        args_hash: r.8,
        why: r.9,
        status: parse_enum(&r.10, "approval status")?,
        created_at: r.11,
        expires_at: r.12,
        agent,
    })
}

pub(crate) fn query(
    conn: &Connection,
    filter: &str,
    param: &dyn rusqlite::ToSql,
) -> Result<Vec<ApprovalRow>> {
    let sql = format!("SELECT {COLUMNS} FROM {FROM} WHERE {filter} ORDER BY a.created_at, a.rowid");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([param], raw)?;
    rows.map(|r| r.map_err(StoreError::from).and_then(parse))
        .collect()
}

impl Store {
    /// Every pending request, oldest first.
    pub fn pending_approvals(&self) -> Result<Vec<ApprovalRow>> {
        self.read(|conn| query(conn, "a.status = ?1", &"pending"))
    }

    pub fn approval(&self, approval_id: &str) -> Result<Option<ApprovalRow>> {
        self.read(|conn| {
            Ok(query(conn, "a.approval_id = ?1", &approval_id)?
                .into_iter()
                .next())
        })
    }

    /// The approval requests raised for the calls of one assistant message.
    pub fn approvals_of_message(&self, message_id: i64) -> Result<Vec<ApprovalRow>> {
        self.read(|conn| {
            query(
                conn,
                "a.tool_call_id IN (SELECT id FROM tool_calls WHERE message_id = ?1)",
                &message_id,
            )
        })
    }

    /// The requests with these ids, by id (unknown ids are absent): one query for a batch.
    pub fn approvals_by_ids(
        &self,
        ids: &[&str],
    ) -> Result<std::collections::HashMap<String, ApprovalRow>> {
        let list = serde_json::to_string(ids).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.read(|conn| {
            Ok(query(
                conn,
                "a.approval_id IN (SELECT value FROM json_each(?1))",
                &list,
            )?
            .into_iter()
            .map(|row| (row.approval_id.clone(), row))
            .collect())
        })
    }

    /// After a restart: an approval whose commit the disk refused at the time (the person was
    /// told it failed) may still have reached the disk. Its call must not run: it is failed,
    /// with no arguments to run, and the audit trail says the decision was not confirmed.
    /// Returns whether a call was changed.
    pub fn unconfirm_decision(&self, approval_id: &str) -> Result<bool> {
        self.write(|tx| {
            let Some(row) = query(tx, "a.approval_id = ?1", &approval_id)?.into_iter().next() else {
                return Ok(false);
            };
            if row.status != ApprovalStatus::Approved {
                return Ok(false);
            }
            let message = written::UNCONFIRMED;
            let changed = match &row.tool_call_id {
                Some(call_id) => tx.run(
                    "UPDATE tool_calls SET state = 'failed', run_args = NULL, result = ?2, updated_at = ?3
                     WHERE id = ?1 AND state IN ('approved', 'running')",
                    params![call_id, json!({"type": "error", "message": message}).to_string(), now()],
                )? > 0,
                None => false,
            };
            insert_audit(
                tx,
                "engine",
                "decision_unconfirmed",
                Some(&row.session_id),
                row.tool_call_id.as_deref(),
                Some(approval_id),
                &json!({ "server": row.server, "tool": row.tool, "why": message }),
            )?;
            Ok(changed)
        })
    }

    /// The ids of a session's pending requests.
    pub fn pending_of_session(&self, session_id: &str) -> Result<Vec<String>> {
        self.read(|conn| {
            Ok(query(
                conn,
                "a.status = 'pending' AND a.session_id = ?1",
                &session_id,
            )?
            .into_iter()
            .map(|row| row.approval_id)
            .collect())
        })
    }

    /// Applies one decision: [`Store::decide_many`] with a batch of one.
    pub fn decide(&self, input: &DecisionInput) -> Result<DecisionOutcome> {
        let mut outcomes = self.decide_many(std::slice::from_ref(input))?;
        outcomes
            .pop()
            .unwrap_or_else(|| Err(StoreError::UnknownApproval(input.approval_id.clone())))
    }

    /// Applies many decisions in one durable transaction (one sync to disk for all of them).
    ///
    /// Each item is applied or refused on its own: a refusal (unknown id, another session's id,
    /// already decided, or the engine's own `refusal`) leaves an audit row, changes nothing
    /// else and does not affect the other items. Any other error rolls the whole batch back:
    /// nothing is decided, nothing runs.
    pub fn decide_many(&self, inputs: &[DecisionInput]) -> Result<Vec<Result<DecisionOutcome>>> {
        Ok(self.decide_and_start(inputs, |_| {})?.outcomes)
    }

    /// [`Store::decide_many`], also saying which calls the batch started: those of the steps
    /// it finished deciding, marked `running` and claimed for invocation in the same durable
    /// transaction (no second commit to claim them before they run). `started` is told them
    /// right after the commit, before any other thread can read the store and find them
    /// running: whoever runs them knows they are its own to invoke, not left from a failure.
    pub fn decide_and_start(
        &self,
        inputs: &[DecisionInput],
        started: impl FnOnce(&[String]),
    ) -> Result<Decided> {
        self.write_with(
            true,
            |tx| {
                let mut outcomes = Vec::with_capacity(inputs.len());
                let mut steps = std::collections::BTreeSet::new();
                for input in inputs {
                    tx.run("SAVEPOINT decision", [])?;
                    match apply_decision(tx, input, &mut steps) {
                        Ok(outcome) => {
                            tx.run("RELEASE decision", [])?;
                            outcomes.push(Ok(outcome));
                        }
                        Err(error) if error.is_refusal() => {
                            tx.run("ROLLBACK TO decision", [])?;
                            tx.run("RELEASE decision", [])?;
                            insert_audit(
                                tx,
                                input.decided_by.as_str(),
                                "decision_refused",
                                input.session_id.as_deref(),
                                None,
                                Some(&input.approval_id),
                                &json!({ "approve": input.approve(), "error": error.to_string(), "person": input.person }),
                            )?;
                            outcomes.push(Err(error));
                        }
                        Err(error) => return Err(error),
                    }
                }
                // Once per step the batch touched, not once per decision: 10,000 decisions in 100
                // steps are 100 checks.
                let at = now();
                let mut started = Vec::new();
                for message_id in steps {
                    started.extend(start_step_if_decided(tx, message_id, &at)?);
                }
                Ok(Decided { outcomes, started })
            },
            |decided| started(&decided.started),
        )
    }
}

/// What one batch of decisions did: each decision's outcome, and the calls it started.
#[derive(Debug)]
pub struct Decided {
    pub outcomes: Vec<Result<DecisionOutcome>>,
    /// Calls now `running` and claimed (`invoked_at` set): the engine invokes each once,
    /// without claiming it again; after a restart they are reported interrupted.
    pub started: Vec<String>,
}

/// When this was the last pending call of its step, the step's approved calls become `running`
/// and claimed for invocation in the same durable transaction as the decision (not those the
/// provider runs itself): the engine invokes them next without another commit, and a crash in
/// between reports them as interrupted — never runs them. Returns the calls started.
fn start_step_if_decided(tx: &Connection, message_id: i64, at: &str) -> Result<Vec<String>> {
    let pending: i64 = tx.row(
        "SELECT COUNT(*) FROM tool_calls WHERE message_id = ?1 AND state = 'pending'",
        [message_id],
        |r| r.get(0),
    )?;
    if pending > 0 {
        return Ok(Vec::new());
    }
    let mut stmt = tx.prepare_cached(
        "UPDATE tool_calls SET state = 'running', updated_at = ?2, invoked_at = ?2
         WHERE message_id = ?1 AND state = 'approved' AND NOT EXISTS
            (SELECT 1 FROM approval_requests r WHERE r.tool_call_id = tool_calls.id AND r.kind = 'provider_tool_call')
         RETURNING id",
    )?;
    let started = stmt
        .query_map(params![message_id, at], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(started)
}

/// Applies one decision; the step of its call goes into `steps`, to be started (when fully
/// decided) once the whole batch is applied.
fn apply_decision(
    tx: &Connection,
    input: &DecisionInput,
    steps: &mut std::collections::BTreeSet<i64>,
) -> Result<DecisionOutcome> {
    let row = pending_request(tx, input)?;
    let id = &input.approval_id;
    let status = input.status;
    let approve = input.approve();
    let at = now();
    let run_args = input
        .edited_args
        .clone()
        .unwrap_or_else(|| row.args.clone());
    tx.run(
        "UPDATE approval_requests SET status = ?2 WHERE approval_id = ?1",
        params![id, status.as_str()],
    )?;
    tx.run(
        "INSERT INTO decisions (approval_id, approve, reason, edited_args, remember, for_chat, decided_by, decided_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            id,
            approve,
            input.reason,
            input.edited_args.as_ref().map(Value::to_string),
            input.remember.as_str(),
            input.for_chat,
            input.decided_by.as_str(),
            at,
        ],
    )?;
    // A hosted agent's call (an agent item with a card in its chat) runs in the agent, never
    // here: its card follows the agent's answer and reports, not the decision.
    if let Some(call_id) = &row.tool_call_id
        && row.kind != ItemKind::AgentToolCall
    {
        settle_call(tx, input, call_id, &run_args, &at)?;
        steps.insert(tx.row(
            "SELECT message_id FROM tool_calls WHERE id = ?1",
            [call_id],
            |r| r.get(0),
        )?);
    }
    if input.for_chat && approve {
        tx.run(
            "INSERT OR IGNORE INTO session_grants (session_id, server, tool, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![row.session_id, row.server, row.tool, at],
        )?;
    }
    let grant = input.grant.as_ref().filter(|_| approve);
    let mut grant_id = None;
    if input.remember != RememberScope::Once || grant.is_some() {
        let id = remember(tx, input, &row, &run_args, &at)?;
        if let Some(grant) = grant {
            tx.run(
                "UPDATE decisions SET grant_covers = ?2 WHERE approval_id = ?1",
                params![row.approval_id, grant.covers],
            )?;
            grant_id = Some(id);
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
    )?;
    let approval = ApprovalRow { status, ..row };
    Ok(DecisionOutcome { approval, run_args })
}

/// The request a decision is for, if it may be decided: known, of the channel's session, still
/// pending, not refused by the engine, and the decision leaves it.
fn pending_request(tx: &Connection, input: &DecisionInput) -> Result<ApprovalRow> {
    let id = &input.approval_id;
    let row = query(tx, "a.approval_id = ?1", id)?
        .into_iter()
        .next()
        .ok_or_else(|| StoreError::UnknownApproval(id.clone()))?;
    if let Some(session) = &input.session_id
        && session != &row.session_id
        && session != &row.session
    {
        return Err(StoreError::ForeignSession { id: id.clone() });
    }
    if row.status != ApprovalStatus::Pending {
        return Err(StoreError::AlreadyDecided {
            id: id.clone(),
            status: row.status.to_string(),
        });
    }
    if let Some(refusal) = &input.refusal {
        return Err(StoreError::Refused(refusal.clone()));
    }
    if input.status == ApprovalStatus::Pending {
        return Err(StoreError::Invalid(format!(
            "{id}: a decision cannot leave it pending"
        )));
    }
    Ok(row)
}

/// The call of a decided request: approved with the arguments it runs with, or settled with
/// the result the model reads (denied, expired, cancelled).
fn settle_call(
    tx: &Connection,
    input: &DecisionInput,
    call_id: &str,
    run_args: &Value,
    at: &str,
) -> Result<()> {
    if write_outcome(tx, input, call_id, run_args, at)? != 1 {
        return Err(StoreError::AlreadyDecided {
            id: input.approval_id.clone(),
            status: "settled".into(),
        });
    }
    settle_followers(tx, input, call_id, run_args, at)
}

/// Writes a decision's outcome to one waiting call: approved with the arguments it runs with,
/// or the result the model reads. How many calls changed (0 when it no longer waits).
fn write_outcome(
    tx: &Connection,
    input: &DecisionInput,
    call_id: &str,
    run_args: &Value,
    at: &str,
) -> Result<usize> {
    if input.approve() {
        return Ok(tx.run(
            "UPDATE tool_calls SET state = 'approved', run_args = ?2, updated_at = ?3
             WHERE id = ?1 AND state = 'pending'",
            params![call_id, run_args.to_string(), at],
        )?);
    }
    let result = written::unapproved_result(input);
    Ok(tx.run(
        "UPDATE tool_calls SET state = ?2, result = ?3, updated_at = ?4 WHERE id = ?1 AND state = 'pending'",
        params![call_id, input.status.as_str(), result.to_string(), at],
    )?)
}

/// The step's calls identical to this one, which were not asked again: the same decision, the
/// same arguments to run (an edit included), each with its own audit row.
fn settle_followers(
    tx: &Connection,
    input: &DecisionInput,
    call_id: &str,
    run_args: &Value,
    at: &str,
) -> Result<()> {
    let followers: Vec<(String, String)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT id, session_id FROM tool_calls WHERE same_as = ?1 AND state = 'pending'",
        )?;
        let rows = stmt.query_map([call_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (follower, session_id) in followers {
        if write_outcome(tx, input, &follower, run_args, at)? == 1 {
            insert_audit(
                tx,
                input.decided_by.as_str(),
                input.status.as_str(),
                Some(&session_id),
                Some(&follower),
                Some(&input.approval_id),
                &json!({ "same_as": call_id, "args_run": input.approve().then_some(run_args) }),
            )?;
        }
    }
    Ok(())
}

/// A decision kept for later calls (session or always; the whole tool, or exactly the
/// arguments that run), or a grant (its chat or every chat; a pattern, these arguments, or
/// any). Its id.
fn remember(
    tx: &Connection,
    input: &DecisionInput,
    row: &ApprovalRow,
    run_args: &Value,
    at: &str,
) -> Result<String> {
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
    let id = ids::new_id("mem");
    tx.run(
        "INSERT INTO remembered (id, server, tool, args_hash, session_id, approve, created_at,
            expires_at, uses_left, pattern)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            id,
            row.server,
            row.tool,
            hash,
            session,
            input.approve(),
            at,
            grant.and_then(|g| g.expires_at.clone()),
            grant.and_then(|g| g.uses),
            pattern,
        ],
    )?;
    Ok(id)
}
