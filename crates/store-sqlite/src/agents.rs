//! Other agents' tool calls (the agent gateway): the request kept beside its inbox item, found
//! again by its key; and the agents' fallbacks and last requests.

use crate::approvals::{insert_approval, query};
use crate::audit::insert_audit;
use crate::remembered::take_grant_use;
use crate::{
    AgentActivity, CachedExt, EarlierAgentRequest, NewAgentRequest, NewApproval, Result, Store,
    StoreError, now, parse_enum,
};
use airlock_core::AgentFallback;
use airlock_protocol::AgentView;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

fn touch_agent(tx: &rusqlite::Connection, activity: &AgentActivity<'_>, at: &str) -> Result<()> {
    // A new agent starts with its own default fallback (the one that fails closed).
    tx.run(
        "INSERT INTO agents (name, last_request_at, last_tool, last_cwd, last_outcome, fallback)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(name) DO UPDATE SET last_request_at = ?2, last_tool = ?3, last_cwd = ?4,
            last_outcome = ?5",
        params![
            activity.agent,
            at,
            activity.tool,
            activity.cwd,
            activity.outcome,
            AgentFallback::default_for(activity.agent).as_str()
        ],
    )?;
    Ok(())
}

/// The requests of `approval_id, decided_at` rows, in their order.
fn earlier_requests(
    conn: &Connection,
    found: Vec<(String, Option<String>)>,
) -> Result<Vec<EarlierAgentRequest>> {
    let mut earlier = Vec::with_capacity(found.len());
    for (id, decided_at) in found {
        if let Some(row) = query(conn, "a.approval_id = ?1", &id)?.into_iter().next() {
            earlier.push(EarlierAgentRequest { row, decided_at });
        }
    }
    Ok(earlier)
}

impl Store {
    /// Puts an agent's tool call in the inbox, with where it comes from, in one durable
    /// transaction.
    pub fn insert_agent_request(
        &self,
        approval: &NewApproval,
        origin: &NewAgentRequest,
    ) -> Result<()> {
        self.write(|tx| {
            let at = now();
            insert_approval(
                tx,
                approval,
                &at,
                Some(airlock_store_port::written::agent_origin(origin)),
            )?;
            tx.run(
                "INSERT INTO agent_requests (approval_id, request_key, agent, client, agent_session, cwd, editable, deferred)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    approval.approval_id,
                    origin.request_key,
                    origin.agent,
                    origin.client,
                    origin.agent_session,
                    origin.cwd,
                    origin.editable,
                    origin.deferred
                ],
            )?;
            touch_agent(
                tx,
                &AgentActivity {
                    agent: &origin.agent,
                    tool: &approval.tool,
                    cwd: origin.cwd.as_deref(),
                    outcome: "pending",
                },
                &at,
            )
        })
    }

    /// Claims an approved deferred call for its client to run, once, durably and audited:
    /// [`StoreError::AlreadyClaimed`] when it was claimed before (the app resumed after it ran,
    /// or crashed in between: at most once), [`StoreError::Refused`] when it is not an approved
    /// deferred call. Returns when it was claimed.
    pub fn claim_agent_call(&self, approval_id: &str) -> Result<String> {
        self.write(|tx| {
            let found: Option<(String, bool, Option<String>, String)> = tx
                .query_row(
                    "SELECT a.status, g.deferred, g.claimed_at, a.session_id FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     WHERE g.approval_id = ?1",
                    [approval_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()?;
            let Some((status, deferred, claimed_at, session_id)) = found else {
                return Err(StoreError::UnknownApproval(approval_id.to_string()));
            };
            if let Some(at) = claimed_at {
                return Err(StoreError::AlreadyClaimed {
                    id: approval_id.to_string(),
                    at,
                });
            }
            if !deferred || status != airlock_core::ApprovalStatus::Approved.as_str() {
                return Err(StoreError::Refused(format!(
                    "{approval_id} is {status}{}: only an approved deferred call is claimed to run",
                    if deferred { "" } else { " and not deferred" }
                )));
            }
            let at = now();
            tx.run(
                "UPDATE agent_requests SET claimed_at = ?2 WHERE approval_id = ?1",
                params![approval_id, at],
            )?;
            insert_audit(
                tx,
                "agent",
                "agent_call_claimed",
                Some(&session_id),
                None,
                Some(approval_id),
                &json!({ "claimed_at": at }),
            )?;
            Ok(at)
        })
    }

    /// When a deferred call was claimed to run, if it was.
    pub fn agent_call_claimed_at(&self, approval_id: &str) -> Result<Option<String>> {
        self.read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT claimed_at FROM agent_requests WHERE approval_id = ?1",
                    [approval_id],
                    |r| r.get::<_, Option<String>>(0),
                )
                .optional()?
                .flatten())
        })
    }

    /// The newest requests asked with this key (the last few), whatever their status: one
    /// call asked again, or an id the agent used for other calls too.
    pub fn agent_requests_by_key(&self, request_key: &str) -> Result<Vec<EarlierAgentRequest>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT g.approval_id, d.decided_at FROM agent_requests g
                 LEFT JOIN decisions d ON d.approval_id = g.approval_id
                 WHERE g.request_key = ?1 ORDER BY g.rowid DESC LIMIT 16",
            )?;
            let found = stmt
                .query_map([request_key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            earlier_requests(conn, found)
        })
    }

    /// The newest request of this agent session for these exact arguments of this tool: the
    /// agent asking again about a call it already asked about (Codex's PermissionRequest after
    /// its PreToolUse).
    pub fn recent_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
        args_hash: &str,
    ) -> Result<Option<EarlierAgentRequest>> {
        self.read(|conn| {
            let found: Option<(String, Option<String>)> = conn
                .query_row(
                    "SELECT g.approval_id, d.decided_at FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     LEFT JOIN decisions d ON d.approval_id = g.approval_id
                     WHERE g.agent = ?1 AND g.agent_session = ?2 AND a.tool = ?3 AND a.args_hash = ?4
                     ORDER BY g.rowid DESC LIMIT 1",
                    params![agent, agent_session, tool, args_hash],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            Ok(earlier_requests(conn, found.into_iter().collect())?
                .into_iter()
                .next())
        })
    }

    /// The newest request of this agent session for this tool, whatever its arguments: the
    /// call an agent runs with the arguments it was approved with, edited (Qwen Code's
    /// PreToolUse after its PermissionRequest).
    pub fn latest_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
    ) -> Result<Option<EarlierAgentRequest>> {
        self.read(|conn| {
            let found: Option<(String, Option<String>)> = conn
                .query_row(
                    "SELECT g.approval_id, d.decided_at FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     LEFT JOIN decisions d ON d.approval_id = g.approval_id
                     WHERE g.agent = ?1 AND g.agent_session = ?2 AND a.tool = ?3
                     ORDER BY g.rowid DESC LIMIT 1",
                    params![agent, agent_session, tool],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            Ok(earlier_requests(conn, found.into_iter().collect())?
                .into_iter()
                .next())
        })
    }

    /// Records an agent's call the policy decided without asking (History shows it) and the
    /// agent's last request. Not synced on its own: nothing waits on it.
    /// Records an agent's call the policy decided at once. `grant_use`: the counted grant
    /// that lets it run, whose use is taken in the same (then durable) transaction, or the
    /// call is refused with [`StoreError::GrantUsedUp`] and nothing is written.
    pub fn record_agent_call(
        &self,
        activity: &AgentActivity<'_>,
        session_id: &str,
        detail: &Value,
        grant_use: Option<&str>,
    ) -> Result<()> {
        let write = |tx: &Connection| {
            let at = now();
            if let Some(grant) = grant_use {
                take_grant_use(tx, grant, session_id, None, &at)?;
            }
            touch_agent(tx, activity, &at)?;
            insert_audit(
                tx,
                "policy",
                &format!("agent_{}", activity.outcome),
                Some(session_id),
                None,
                None,
                detail,
            )
        };
        match grant_use {
            Some(_) => self.write(write),
            None => self.write_relaxed(write),
        }
    }

    /// Notes how an agent's last request ended (a decision, a fallback).
    pub fn note_agent_outcome(&self, agent: &str, outcome: &str) -> Result<()> {
        self.write_relaxed(|tx| {
            tx.run(
                "UPDATE agents SET last_outcome = ?2 WHERE name = ?1",
                params![agent, outcome],
            )?;
            Ok(())
        })
    }

    pub fn agents(&self) -> Result<Vec<AgentView>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT name, fallback, last_request_at, last_tool, last_cwd, last_outcome FROM agents ORDER BY name",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?;
            rows.map(|row| {
                let (name, fallback, last_request_at, last_tool, last_cwd, last_outcome) = row?;
                Ok(AgentView {
                    name,
                    fallback: parse_enum(&fallback, "fallback")?,
                    last_request_at,
                    last_tool,
                    last_cwd,
                    last_outcome,
                    token_issued_at: None,
                })
            })
            .collect()
        })
    }

    pub fn set_agent_fallback(&self, agent: &str, fallback: AgentFallback) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO agents (name, fallback) VALUES (?1, ?2)
                 ON CONFLICT(name) DO UPDATE SET fallback = ?2",
                params![agent, fallback.as_str()],
            )?;
            insert_audit(
                tx,
                "user",
                "agent_fallback_set",
                None,
                None,
                None,
                &serde_json::json!({ "agent": agent, "fallback": fallback.as_str() }),
            )
        })
    }
}
