//! Messages and the tool calls inside assistant messages, with the call state machine.

use crate::approvals::insert_approval;
use crate::audit::insert_audit;
use crate::remembered::take_grant_use;
use crate::{
    CachedExt, NewApproval, NewCall, Result, Store, StoreError, now, parse_enum, parse_json,
};
use airlock_core::CallState;
use airlock_core::policy::Step;
use airlock_protocol::{CallRow, MessageRow};
use airlock_store_port::written;
use rusqlite::{Connection, Row, params};
use serde_json::Value;

/// The last column: what a grant made by approving the call covers.
pub(crate) const CALL_COLUMNS: &str = "id, session_id, message_id, position, provider_call_id, model_name, \
    server, tool, raw_args, args, args_hash, state, policy_step, policy_why, run_args, result, \
    created_at, updated_at, \
    (SELECT d.grant_covers FROM approval_requests a JOIN decisions d ON d.approval_id = a.approval_id \
     WHERE a.tool_call_id = tool_calls.id)";

struct RawCall([Option<String>; 19], i64, i64);

fn raw_call(row: &Row<'_>) -> rusqlite::Result<RawCall> {
    let mut texts: [Option<String>; 19] = Default::default();
    for (index, slot) in texts.iter_mut().enumerate() {
        if index == 2 || index == 3 {
            continue;
        }
        *slot = row.get(index)?;
    }
    Ok(RawCall(texts, row.get(2)?, row.get(3)?))
}

impl RawCall {
    fn parse(self) -> Result<CallRow> {
        let RawCall(mut t, message_id, position) = self;
        let mut take = |i: usize| t.get_mut(i).and_then(Option::take);
        let json_of = |text: Option<String>, what| text.map(|s| parse_json(&s, what)).transpose();
        let id = take(0).unwrap_or_default();
        let session_id = take(1).unwrap_or_default();
        let provider_call_id = take(4).unwrap_or_default();
        let model_name = take(5).unwrap_or_default();
        let server = take(6).unwrap_or_default();
        let tool = take(7).unwrap_or_default();
        let raw_args = take(8).unwrap_or_default();
        let args = json_of(take(9), "tool call arguments")?;
        let args_hash = take(10);
        let state = parse_enum(&take(11).unwrap_or_default(), "tool call state")?;
        let policy_step = take(12)
            .map(|step| parse_enum(&step, "policy step"))
            .transpose()?;
        let policy_why = take(13);
        let run_args = json_of(take(14), "tool call run arguments")?;
        let result = json_of(take(15), "tool call result")?;
        let created_at = take(16).unwrap_or_default();
        let updated_at = take(17).unwrap_or_default();
        let grant = take(18);
        Ok(CallRow {
            id,
            session_id,
            message_id,
            position,
            provider_call_id,
            model_name,
            server,
            tool,
            raw_args,
            args,
            args_hash,
            state,
            policy_step,
            policy_why,
            run_args,
            result,
            created_at,
            updated_at,
            // Known from the whole step only: the engine's views fill it.
            runs_after: 0,
            grant,
        })
    }
}

pub(crate) fn query_calls(
    conn: &Connection,
    filter: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<CallRow>> {
    let sql = format!(
        "SELECT {CALL_COLUMNS} FROM tool_calls WHERE {filter} ORDER BY message_id, position"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params, raw_call)?;
    rows.map(|r| r.map_err(StoreError::from).and_then(RawCall::parse))
        .collect()
}

impl Store {
    pub fn append_user_message(&self, session_id: &str, content: &str) -> Result<i64> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'user', ?2, ?3)",
                params![session_id, content, now()],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Persists one model step in one transaction: the assistant message, its calls with their
    /// policy outcome, the approval requests for the calls that wait, and an audit row for each
    /// decision the policy made. Nothing is announced or run before this returns.
    pub fn record_assistant_step(
        &self,
        session_id: &str,
        content: &str,
        calls: &[NewCall],
        approvals: &[NewApproval],
    ) -> Result<i64> {
        // Not synced on its own, calls or not: a step lost in an OS crash ran nothing (calls
        // run only after a durable `running` mark or decision, which syncs this step's frames
        // too), and the turn asks the model again. One sync per approval round: the decision's.
        self.write_relaxed(|tx| {
            let at = now();
            if calls.is_empty() {
                // A plain answer ends the turn, in the same transaction.
                tx.prepare_cached("UPDATE sessions SET status = 'idle', last_error = NULL, updated_at = ?2 WHERE id = ?1")?
                    .execute(params![session_id, at])?;
            }
            tx.run(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'assistant', ?2, ?3)",
                params![session_id, content, at],
            )?;
            let message_id = tx.last_insert_rowid();
            for (position, call) in calls.iter().enumerate() {
                let args = call.args.as_ref().map(Value::to_string);
                let run_args = match call.state {
                    CallState::AutoAllowed => args.clone(),
                    _ => None,
                };
                tx.prepare_cached(
                    "INSERT INTO tool_calls (id, session_id, message_id, position, provider_call_id,
                        model_name, server, tool, raw_args, args, args_hash, state, policy_step,
                        policy_why, run_args, result, created_at, updated_at, same_as)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17, ?18)",
                )?
                .execute(params![
                    call.id,
                    session_id,
                    message_id,
                    position as i64,
                    call.provider_call_id,
                    call.model_name,
                    call.server,
                    call.tool,
                    call.raw_args,
                    args,
                    call.args_hash,
                    call.state.as_str(),
                    call.policy_step.map(Step::as_str),
                    call.policy_why,
                    run_args,
                    call.result.as_ref().map(Value::to_string),
                    at,
                    call.same_as,
                ])?;
                if let (CallState::AutoAllowed, Some(grant)) = (call.state, &call.grant_use) {
                    take_grant_use(tx, grant, session_id, Some(&call.id), &at)?;
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
                    )?;
                }
            }
            for approval in approvals {
                insert_approval(tx, approval, &at, None)?;
            }
            Ok(message_id)
        })
    }

    pub fn messages(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, session_id, role, content, created_at, thought FROM messages WHERE session_id = ?1 ORDER BY id",
            )?;
            let mut messages: Vec<MessageRow> = stmt
                .query_map([session_id], |row| {
                    Ok(MessageRow {
                        id: row.get(0)?,
                        session_id: row.get(1)?,
                        role: row.get(2)?,
                        content: row.get(3)?,
                        created_at: row.get(4)?,
                        calls: Vec::new(),
                        thought: row.get(5)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
            // Through the session's messages: no index of calls by session to keep up to date.
            let calls = query_calls(
                conn,
                "message_id IN (SELECT id FROM messages WHERE session_id = ?1)",
                [session_id],
            )?;
            for call in calls {
                if let Some(message) = messages.iter_mut().find(|m| m.id == call.message_id) {
                    message.calls.push(call);
                }
            }
            Ok(messages)
        })
    }

    pub fn calls_of_message(&self, message_id: i64) -> Result<Vec<CallRow>> {
        self.read(|conn| query_calls(conn, "message_id = ?1", [message_id]))
    }

    pub fn call(&self, call_id: &str) -> Result<Option<CallRow>> {
        self.read(|conn| Ok(query_calls(conn, "id = ?1", [call_id])?.into_iter().next()))
    }

    /// The calls left `running` (at start: Airlock stopped while they ran). The literal state
    /// lets the query use the partial index of running calls.
    pub fn running_calls(&self) -> Result<Vec<CallRow>> {
        self.read(|conn| query_calls(conn, "state = 'running'", []))
    }

    /// Marks calls `running` and claimed for invocation — durably, before any of them is
    /// invoked — with the arguments they run with.
    pub fn mark_running(&self, calls: &[(String, Value)]) -> Result<()> {
        self.write(|tx| {
            let at = now();
            for (call_id, run_args) in calls {
                let changed = tx.run(
                    "UPDATE tool_calls SET state = 'running', run_args = ?2, updated_at = ?3, invoked_at = ?3
                     WHERE id = ?1 AND state IN ('auto_allowed', 'approved')",
                    params![call_id, run_args.to_string(), at],
                )?;
                if changed != 1 {
                    return Err(StoreError::Invalid(format!(
                        "call {call_id} is not ready to run"
                    )));
                }
            }
            Ok(())
        })
    }

    /// Claims `running` calls for invocation (a decision started them): returns those claimed
    /// now. A call claimed before — by this engine or one that stopped — is not returned, so
    /// no call is ever invoked twice. Not synced to disk on its own: a crash before the next
    /// sync leaves the call `running`, and recovery reports every `running` call interrupted.
    pub fn claim_invocation(&self, call_ids: &[&str]) -> Result<Vec<String>> {
        self.write_relaxed(|tx| {
            let at = now();
            let mut claimed = Vec::with_capacity(call_ids.len());
            for id in call_ids {
                if tx.run(
                    "UPDATE tool_calls SET invoked_at = ?2 WHERE id = ?1 AND state = 'running' AND invoked_at IS NULL",
                    params![id, at],
                )? == 1
                {
                    claimed.push(id.to_string());
                }
            }
            Ok(claimed)
        })
    }

    /// Settles a call with the result the model will see.
    pub fn finish_call(&self, call_id: &str, state: CallState, result: &Value) -> Result<()> {
        self.write_relaxed(|tx| {
            tx.run(
                "UPDATE tool_calls SET state = ?2, result = ?3, updated_at = ?4 WHERE id = ?1",
                params![call_id, state.as_str(), result.to_string(), now()],
            )?;
            let session: String = tx.row(
                "SELECT session_id FROM tool_calls WHERE id = ?1",
                [call_id],
                |r| r.get(0),
            )?;
            insert_audit(
                tx,
                "engine",
                &format!("call_{}", state.as_str()),
                Some(&session),
                Some(call_id),
                None,
                &written::finished_detail(state, result),
            )?;
            Ok(())
        })
    }
}
