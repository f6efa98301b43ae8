//! Agents hosted over the Agent Client Protocol: their commands, and which chat each hosts.

use crate::{CachedExt, HostedCallUpdate, HostedSession, NewCall, Result, Store, StoreError, now};
use airlock_protocol::AcpAgentView;
use rusqlite::{OptionalExtension, params};
use serde_json::Value;

fn view(name: String, command: String) -> Result<AcpAgentView> {
    let command = serde_json::from_str(&command)
        .map_err(|e| StoreError::Invalid(format!("the command of agent '{name}': {e}")))?;
    Ok(AcpAgentView { name, command })
}

impl Store {
    /// Registers (or replaces the command of) an ACP agent.
    pub fn save_acp_agent(&self, name: &str, command: &[String]) -> Result<()> {
        let command = serde_json::to_string(command)
            .map_err(|e| StoreError::Invalid(format!("the agent's command: {e}")))?;
        self.write(|tx| {
            tx.run(
                "INSERT INTO acp_agents (name, command, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(name) DO UPDATE SET command = ?2",
                params![name, command, now()],
            )?;
            Ok(())
        })
    }

    /// Whether there was such an agent.
    pub fn remove_acp_agent(&self, name: &str) -> Result<bool> {
        self.write(|tx| Ok(tx.run("DELETE FROM acp_agents WHERE name = ?1", [name])? > 0))
    }

    pub fn acp_agents(&self) -> Result<Vec<AcpAgentView>> {
        let rows: Vec<(String, String)> = self.read(|conn| {
            let mut stmt = conn.prepare("SELECT name, command FROM acp_agents ORDER BY name")?;
            let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })?;
        rows.into_iter().map(|(n, c)| view(n, c)).collect()
    }

    pub fn acp_agent(&self, name: &str) -> Result<Option<AcpAgentView>> {
        let row: Option<String> = self.read(|conn| {
            Ok(conn
                .row(
                    "SELECT command FROM acp_agents WHERE name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .optional()?)
        })?;
        row.map(|command| view(name.to_string(), command))
            .transpose()
    }

    /// The chat is hosted by `agent` in `folder` from now on (again, if it ended).
    pub fn host_session(&self, session_id: &str, agent: &str, folder: &str) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO acp_sessions (session_id, agent, folder) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id) DO UPDATE SET agent = ?2, folder = ?3, pid = NULL, ended_at = NULL",
                params![session_id, agent, folder],
            )?;
            Ok(())
        })
    }

    /// The chat's agent, if an ACP agent hosts it (ended or not).
    pub fn hosted_session(&self, session_id: &str) -> Result<Option<HostedSession>> {
        self.read(|conn| {
            Ok(conn
                .row(
                    "SELECT session_id, agent, folder, pid FROM acp_sessions WHERE session_id = ?1",
                    [session_id],
                    |r| {
                        Ok(HostedSession {
                            session_id: r.get(0)?,
                            agent: r.get(1)?,
                            folder: r.get(2)?,
                            pid: r.get(3)?,
                        })
                    },
                )
                .optional()?)
        })
    }

    /// The hosted chats whose agent has not ended.
    pub fn live_hosted_sessions(&self) -> Result<Vec<HostedSession>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT session_id, agent, folder, pid FROM acp_sessions WHERE ended_at IS NULL",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(HostedSession {
                    session_id: r.get(0)?,
                    agent: r.get(1)?,
                    folder: r.get(2)?,
                    pid: r.get(3)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The agent's process while it runs (`None` once it is gone).
    pub fn set_hosted_pid(&self, session_id: &str, pid: Option<u32>) -> Result<()> {
        self.write_relaxed(|tx| {
            tx.run(
                "UPDATE acp_sessions SET pid = ?2 WHERE session_id = ?1",
                params![session_id, pid],
            )?;
            Ok(())
        })
    }

    /// The chat's agent ended: it says so in the chat, and is not waited for again.
    pub fn end_hosted_session(&self, session_id: &str, why: &str) -> Result<()> {
        self.write(|tx| {
            let at = now();
            tx.run(
                "UPDATE acp_sessions SET ended_at = ?2, pid = NULL WHERE session_id = ?1",
                params![session_id, at],
            )?;
            tx.run(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'assistant', ?2, ?3)",
                params![session_id, why, at],
            )?;
            tx.run(
                "UPDATE sessions SET status = 'idle', last_error = ?2, updated_at = ?3 WHERE id = ?1",
                params![session_id, why, at],
            )?;
            Ok(())
        })
    }

    /// An assistant message in a chat (what a hosted agent said, or what Airlock says of it).
    pub fn append_assistant_message(&self, session_id: &str, content: &str) -> Result<i64> {
        self.write_relaxed(|tx| {
            tx.run(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'assistant', ?2, ?3)",
                params![session_id, content, now()],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// A hosted agent's tool call as a card of the chat: in `message`, or in a new assistant
    /// message holding `content` (what the agent said before the call). The message's id.
    /// Cards are the agent's record, not Airlock's decisions: no audit row (the permission's
    /// decision has its own).
    pub fn add_hosted_call(
        &self,
        session_id: &str,
        message: Option<i64>,
        content: &str,
        call: &NewCall,
    ) -> Result<i64> {
        self.write_relaxed(|tx| {
            let at = now();
            let message_id = match message {
                Some(id) => id,
                None => {
                    tx.run(
                        "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'assistant', ?2, ?3)",
                        params![session_id, content, at],
                    )?;
                    tx.last_insert_rowid()
                }
            };
            tx.run(
                "INSERT INTO tool_calls (id, session_id, message_id, position, provider_call_id,
                    model_name, server, tool, raw_args, args, args_hash, state, result, created_at,
                    updated_at)
                 VALUES (?1, ?2, ?3,
                    (SELECT COUNT(*) FROM tool_calls WHERE message_id = ?3),
                    ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
                params![
                    call.id,
                    session_id,
                    message_id,
                    call.provider_call_id,
                    call.model_name,
                    call.server,
                    call.tool,
                    call.raw_args,
                    call.args.as_ref().map(Value::to_string),
                    call.args_hash,
                    call.state.as_str(),
                    call.result.as_ref().map(Value::to_string),
                    at,
                ],
            )?;
            Ok(message_id)
        })
    }

    /// What the hosted agent thought before the answer of `message_id`, kept beside it.
    pub fn set_message_thought(&self, message_id: i64, thought: &str) -> Result<()> {
        self.write_relaxed(|tx| {
            tx.run(
                "UPDATE messages SET thought = ?2 WHERE id = ?1",
                params![message_id, thought],
            )?;
            Ok(())
        })
    }

    /// What changed of a hosted agent's tool call (its card).
    pub fn update_hosted_call(&self, call_id: &str, update: &HostedCallUpdate) -> Result<()> {
        self.write_relaxed(|tx| {
            let args = update.args.as_ref().map(Value::to_string);
            tx.run(
                "UPDATE tool_calls SET tool = COALESCE(?2, tool), model_name = COALESCE(?2, model_name),
                    raw_args = COALESCE(?3, raw_args), args = COALESCE(?3, args),
                    args_hash = COALESCE(?4, args_hash), state = COALESCE(?5, state),
                    result = COALESCE(?6, result), updated_at = ?7
                 WHERE id = ?1",
                params![
                    call_id,
                    update.tool,
                    args,
                    update.args.as_ref().map(airlock_core::canonical::args_hash),
                    update.state.map(|s| s.as_str()),
                    update.result.as_ref().map(Value::to_string),
                    now(),
                ],
            )?;
            Ok(())
        })
    }
}
