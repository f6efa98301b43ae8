//! Messages and the tool calls inside assistant messages, with the call state machine.

use crate::approvals::insert_approval;
use crate::audit::insert_audit;
use crate::error::Error;
use crate::grants::take_grant_use;
use crate::replicas::check_fence;
use crate::{PostgresStore, parse_enum, parse_json};
use airlock_core::CallState;
use airlock_core::policy::Step;
use airlock_store_port::{
    self as port, CallRow, Fence, MessageRow, NewApproval, NewCall, StoreError, now, written,
};
use deadpool_postgres::Transaction;
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// The last column: what a grant made by approving the call covers.
const CALL_COLUMNS: &str = "id, session_id, message_id, position, provider_call_id, model_name, \
    server, tool, raw_args, args, args_hash, state, policy_step, policy_why, run_args, result, \
    created_at, updated_at, \
    (SELECT d.grant_covers FROM approval_requests a JOIN decisions d ON d.approval_id = a.approval_id \
     WHERE a.tool_call_id = tool_calls.id)";

fn call_row(row: &Row) -> Result<CallRow, Error> {
    let json = |index: usize, what| -> Result<Option<Value>, Error> {
        row.try_get::<_, Option<&str>>(index)?
            .map(|text| parse_json(text, what))
            .transpose()
    };
    Ok(CallRow {
        id: row.try_get(0)?,
        session_id: row.try_get(1)?,
        message_id: row.try_get(2)?,
        position: row.try_get(3)?,
        provider_call_id: row.try_get(4)?,
        model_name: row.try_get(5)?,
        server: row.try_get(6)?,
        tool: row.try_get(7)?,
        raw_args: row.try_get(8)?,
        args: json(9, "tool call arguments")?,
        args_hash: row.try_get(10)?,
        state: parse_enum(row.try_get(11)?, "tool call state")?,
        policy_step: row
            .try_get::<_, Option<&str>>(12)?
            .map(|step| parse_enum(step, "policy step"))
            .transpose()?,
        policy_why: row.try_get(13)?,
        run_args: json(14, "tool call run arguments")?,
        result: json(15, "tool call result")?,
        created_at: row.try_get(16)?,
        updated_at: row.try_get(17)?,
        // Known from the whole step only: the engine's views fill it.
        runs_after: 0,
        grant: row.try_get(18)?,
    })
}

async fn query_calls(
    tx: &Transaction<'_>,
    filter: &str,
    param: &[&(dyn ToSql + Sync)],
) -> Result<Vec<CallRow>, Error> {
    let sql = format!(
        "SELECT {CALL_COLUMNS} FROM tool_calls WHERE {filter} ORDER BY message_id, position"
    );
    tx.query(&sql, param).await?.iter().map(call_row).collect()
}

pub(crate) async fn insert_message(
    tx: &Transaction<'_>,
    session_id: &str,
    role: &str,
    content: &str,
    at: &str,
) -> Result<i64, Error> {
    let row = tx
        .query_one(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES ($1, $2, $3, $4)
             RETURNING id",
            &[&session_id, &role, &content, &at],
        )
        .await?;
    Ok(row.try_get(0)?)
}

impl port::Calls for PostgresStore {
    fn append_user_message(&self, session_id: &str, content: &str) -> port::Result<i64> {
        self.transaction(async |tx| insert_message(tx, session_id, "user", content, &now()).await)
    }

    fn record_assistant_step_fenced(
        &self,
        session_id: &str,
        content: &str,
        calls: &[NewCall],
        approvals: &[NewApproval],
        fence: Option<&Fence>,
    ) -> port::Result<i64> {
        self.transaction(async |tx| {
            check_fence(tx, &self.replica, fence).await?;
            let at = now();
            if calls.is_empty() {
                // A plain answer ends the turn, in the same transaction.
                tx.execute(
                    "UPDATE sessions SET status = 'idle', last_error = NULL, updated_at = $2
                     WHERE id = $1",
                    &[&session_id, &at],
                )
                .await?;
            }
            let message_id = insert_message(tx, session_id, "assistant", content, &at).await?;
            for (position, call) in calls.iter().enumerate() {
                let args = call.args.as_ref().map(Value::to_string);
                let run_args = match call.state {
                    CallState::AutoAllowed => args.clone(),
                    _ => None,
                };
                tx.execute(
                    "INSERT INTO tool_calls (id, session_id, message_id, position, provider_call_id,
                        model_name, server, tool, raw_args, args, args_hash, state, policy_step,
                        policy_why, run_args, result, created_at, updated_at, same_as)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                        $16, $17, $17, $18)",
                    &[
                        &call.id,
                        &session_id,
                        &message_id,
                        &(position as i64),
                        &call.provider_call_id,
                        &call.model_name,
                        &call.server,
                        &call.tool,
                        &call.raw_args,
                        &args,
                        &call.args_hash,
                        &call.state.as_str(),
                        &call.policy_step.map(Step::as_str),
                        &call.policy_why,
                        &run_args,
                        &call.result.as_ref().map(Value::to_string),
                        &at,
                        &call.same_as,
                    ],
                )
                .await?;
                if let (CallState::AutoAllowed, Some(grant)) = (call.state, &call.grant_use) {
                    take_grant_use(tx, grant, session_id, Some(&call.id), &at).await?;
                }
                if let Some((action, detail)) = written::policy_audit(call) {
                    insert_audit(
                        tx,
                        "policy",
                        action,
                        Some(session_id),
                        Some(&call.id),
                        None,
                        &detail,
                    )
                    .await?;
                }
            }
            for approval in approvals {
                insert_approval(tx, approval, &at, None).await?;
            }
            Ok(message_id)
        })
    }

    fn messages(&self, session_id: &str) -> port::Result<Vec<MessageRow>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT id, session_id, role, content, created_at, thought FROM messages
                     WHERE session_id = $1 ORDER BY id",
                    &[&session_id],
                )
                .await?;
            let mut messages = rows
                .iter()
                .map(|row| {
                    Ok(MessageRow {
                        id: row.try_get(0)?,
                        session_id: row.try_get(1)?,
                        role: row.try_get(2)?,
                        content: row.try_get(3)?,
                        created_at: row.try_get(4)?,
                        calls: Vec::new(),
                        thought: row.try_get(5)?,
                    })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let calls = query_calls(
                tx,
                "message_id IN (SELECT id FROM messages WHERE session_id = $1)",
                &[&session_id],
            )
            .await?;
            for call in calls {
                if let Some(message) = messages.iter_mut().find(|m| m.id == call.message_id) {
                    message.calls.push(call);
                }
            }
            Ok(messages)
        })
    }

    fn calls_of_message(&self, message_id: i64) -> port::Result<Vec<CallRow>> {
        self.transaction(async |tx| query_calls(tx, "message_id = $1", &[&message_id]).await)
    }

    fn call(&self, call_id: &str) -> port::Result<Option<CallRow>> {
        self.transaction(async |tx| {
            Ok(query_calls(tx, "id = $1", &[&call_id])
                .await?
                .into_iter()
                .next())
        })
    }

    fn running_calls(&self) -> port::Result<Vec<CallRow>> {
        self.transaction(async |tx| query_calls(tx, "state = 'running'", &[]).await)
    }

    fn mark_running_fenced(
        &self,
        calls: &[(String, Value)],
        fence: Option<&Fence>,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            check_fence(tx, &self.replica, fence).await?;
            let at = now();
            for (call_id, run_args) in calls {
                let changed = tx
                    .execute(
                        "UPDATE tool_calls SET state = 'running', run_args = $2, updated_at = $3,
                            invoked_at = $3
                         WHERE id = $1 AND state IN ('auto_allowed', 'approved')",
                        &[call_id, &run_args.to_string(), &at],
                    )
                    .await?;
                if changed != 1 {
                    return Err(
                        StoreError::Invalid(format!("call {call_id} is not ready to run")).into(),
                    );
                }
            }
            Ok(())
        })
    }

    fn claim_invocation_fenced(
        &self,
        call_ids: &[&str],
        fence: Option<&Fence>,
    ) -> port::Result<Vec<String>> {
        self.transaction(async |tx| {
            check_fence(tx, &self.replica, fence).await?;
            let at = now();
            let mut claimed = Vec::with_capacity(call_ids.len());
            for id in call_ids {
                let changed = tx
                    .execute(
                        "UPDATE tool_calls SET invoked_at = $2
                         WHERE id = $1 AND state = 'running' AND invoked_at IS NULL",
                        &[id, &at],
                    )
                    .await?;
                if changed == 1 {
                    claimed.push(id.to_string());
                }
            }
            Ok(claimed)
        })
    }

    fn finish_call_fenced(
        &self,
        call_id: &str,
        state: CallState,
        result: &Value,
        fence: Option<&Fence>,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            check_fence(tx, &self.replica, fence).await?;
            let row = tx
                .query_one(
                    "UPDATE tool_calls SET state = $2, result = $3, updated_at = $4 WHERE id = $1
                     RETURNING session_id",
                    &[&call_id, &state.as_str(), &result.to_string(), &now()],
                )
                .await?;
            let session: String = row.try_get(0)?;
            insert_audit(
                tx,
                "engine",
                &format!("call_{}", state.as_str()),
                Some(&session),
                Some(call_id),
                None,
                &written::finished_detail(state, result),
            )
            .await
        })
    }
}
