//! Agents hosted over the Agent Client Protocol on PostgreSQL (schema 3): their commands, and
//! which chat each hosts.

use crate::PostgresStore;
use crate::calls::insert_message;
use crate::error::Error;
use crate::team::number;
use airlock_protocol::AcpAgentView;
use airlock_store_port::{self as port, HostedCallUpdate, HostedSession, NewCall, StoreError, now};
use serde_json::Value;
use tokio_postgres::Row;

fn acp_agent(row: &Row) -> Result<AcpAgentView, Error> {
    let name: String = row.try_get(0)?;
    let command: &str = row.try_get(1)?;
    let command = serde_json::from_str(command)
        .map_err(|e| StoreError::Invalid(format!("the command of agent '{name}': {e}")))?;
    Ok(AcpAgentView { name, command })
}

fn hosted(row: &Row) -> Result<HostedSession, Error> {
    Ok(HostedSession {
        session_id: row.try_get(0)?,
        agent: row.try_get(1)?,
        folder: row.try_get(2)?,
        pid: row
            .try_get::<_, Option<i64>>(3)?
            .map(|pid| number(pid, "a hosted agent's process"))
            .transpose()?,
    })
}

impl port::HostedAgents for PostgresStore {
    fn save_acp_agent(&self, name: &str, command: &[String]) -> port::Result<()> {
        let command = serde_json::to_string(command)
            .map_err(|e| StoreError::Invalid(format!("the agent's command: {e}")))?;
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO acp_agents (name, command, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET command = EXCLUDED.command",
                &[&name, &command, &now()],
            )
            .await?;
            Ok(())
        })
    }

    fn remove_acp_agent(&self, name: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            Ok(tx
                .execute("DELETE FROM acp_agents WHERE name = $1", &[&name])
                .await?
                > 0)
        })
    }

    fn acp_agents(&self) -> port::Result<Vec<AcpAgentView>> {
        self.transaction(async |tx| {
            tx.query("SELECT name, command FROM acp_agents ORDER BY name", &[])
                .await?
                .iter()
                .map(acp_agent)
                .collect()
        })
    }

    fn acp_agent(&self, name: &str) -> port::Result<Option<AcpAgentView>> {
        self.transaction(async |tx| {
            tx.query_opt(
                "SELECT name, command FROM acp_agents WHERE name = $1",
                &[&name],
            )
            .await?
            .as_ref()
            .map(acp_agent)
            .transpose()
        })
    }

    fn host_session(&self, session_id: &str, agent: &str, folder: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO acp_sessions (session_id, agent, folder) VALUES ($1, $2, $3)
                 ON CONFLICT (session_id) DO UPDATE
                 SET agent = EXCLUDED.agent, folder = EXCLUDED.folder, pid = NULL, ended_at = NULL",
                &[&session_id, &agent, &folder],
            )
            .await?;
            Ok(())
        })
    }

    fn hosted_session(&self, session_id: &str) -> port::Result<Option<HostedSession>> {
        self.transaction(async |tx| {
            tx.query_opt(
                "SELECT session_id, agent, folder, pid FROM acp_sessions WHERE session_id = $1",
                &[&session_id],
            )
            .await?
            .as_ref()
            .map(hosted)
            .transpose()
        })
    }

    fn live_hosted_sessions(&self) -> port::Result<Vec<HostedSession>> {
        self.transaction(async |tx| {
            tx.query(
                "SELECT session_id, agent, folder, pid FROM acp_sessions
                 WHERE ended_at IS NULL ORDER BY session_id",
                &[],
            )
            .await?
            .iter()
            .map(hosted)
            .collect()
        })
    }

    fn set_hosted_pid(&self, session_id: &str, pid: Option<u32>) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "UPDATE acp_sessions SET pid = $2 WHERE session_id = $1",
                &[&session_id, &pid.map(i64::from)],
            )
            .await?;
            Ok(())
        })
    }

    fn end_hosted_session(&self, session_id: &str, why: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            let at = now();
            tx.execute(
                "UPDATE acp_sessions SET ended_at = $2, pid = NULL WHERE session_id = $1",
                &[&session_id, &at],
            )
            .await?;
            insert_message(tx, session_id, "assistant", why, &at).await?;
            tx.execute(
                "UPDATE sessions SET status = 'idle', last_error = $2, updated_at = $3 WHERE id = $1",
                &[&session_id, &why, &at],
            )
            .await?;
            Ok(())
        })
    }

    fn append_assistant_message(&self, session_id: &str, content: &str) -> port::Result<i64> {
        self.transaction(async |tx| {
            insert_message(tx, session_id, "assistant", content, &now()).await
        })
    }

    /// A card for the agent's tool call, in the message that carries the agent's text so far
    /// (or in a new one).
    fn add_hosted_call(
        &self,
        session_id: &str,
        message: Option<i64>,
        content: &str,
        call: &NewCall,
    ) -> port::Result<i64> {
        self.transaction(async |tx| {
            let at = now();
            let message_id = match message {
                Some(id) => id,
                None => insert_message(tx, session_id, "assistant", content, &at).await?,
            };
            tx.execute(
                "INSERT INTO tool_calls (id, session_id, message_id, position, provider_call_id,
                    model_name, server, tool, raw_args, args, args_hash, state, result,
                    created_at, updated_at)
                 VALUES ($1, $2, $3, (SELECT COUNT(*) FROM tool_calls WHERE message_id = $3),
                    $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
                &[
                    &call.id,
                    &session_id,
                    &message_id,
                    &call.provider_call_id,
                    &call.model_name,
                    &call.server,
                    &call.tool,
                    &call.raw_args,
                    &call.args.as_ref().map(Value::to_string),
                    &call.args_hash,
                    &call.state.as_str(),
                    &call.result.as_ref().map(Value::to_string),
                    &at,
                ],
            )
            .await?;
            Ok(message_id)
        })
    }

    fn set_message_thought(&self, message_id: i64, thought: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "UPDATE messages SET thought = $2 WHERE id = $1",
                &[&message_id, &thought],
            )
            .await?;
            Ok(())
        })
    }

    /// What the agent reported about its call since (each field only when it says).
    fn update_hosted_call(&self, call_id: &str, update: &HostedCallUpdate) -> port::Result<()> {
        self.transaction(async |tx| {
            let args = update.args.as_ref().map(Value::to_string);
            tx.execute(
                "UPDATE tool_calls SET tool = COALESCE($2, tool), model_name = COALESCE($2, model_name),
                    raw_args = COALESCE($3, raw_args), args = COALESCE($3, args),
                    args_hash = COALESCE($4, args_hash), state = COALESCE($5, state),
                    result = COALESCE($6, result), updated_at = $7
                 WHERE id = $1",
                &[
                    &call_id,
                    &update.tool,
                    &args,
                    &update.args.as_ref().map(airlock_core::canonical::args_hash),
                    &update.state.map(|state| state.as_str()),
                    &update.result.as_ref().map(Value::to_string),
                    &now(),
                ],
            )
            .await?;
            Ok(())
        })
    }
}
