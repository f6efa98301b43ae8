//! Other agents' tool calls (the agent gateway): the request kept beside its inbox item, found
//! again by its key; and the agents' fallbacks and last requests.

use crate::approvals::{insert_approval, query};
use crate::audit::insert_audit;
use crate::error::Error;
use crate::grants::take_grant_use;
use crate::{PostgresStore, parse_enum};
use airlock_core::AgentFallback;
use airlock_protocol::AgentView;
use airlock_store_port::{
    self as port, AgentActivity, EarlierAgentRequest, NewAgentRequest, NewApproval, StoreError,
    now, written,
};
use deadpool_postgres::Transaction;
use serde_json::{Value, json};

async fn touch_agent(
    tx: &Transaction<'_>,
    activity: &AgentActivity<'_>,
    at: &str,
) -> Result<(), Error> {
    // A new agent starts with its own default fallback (the one that fails closed).
    tx.execute(
        "INSERT INTO agents (name, last_request_at, last_tool, last_cwd, last_outcome, fallback)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name) DO UPDATE SET last_request_at = excluded.last_request_at,
            last_tool = excluded.last_tool, last_cwd = excluded.last_cwd,
            last_outcome = excluded.last_outcome",
        &[
            &activity.agent,
            &at,
            &activity.tool,
            &activity.cwd,
            &activity.outcome,
            &AgentFallback::default_for(activity.agent).as_str(),
        ],
    )
    .await?;
    Ok(())
}

/// The requests of `(approval_id, decided_at)` rows, in their order.
async fn earlier_requests(
    tx: &Transaction<'_>,
    found: Vec<(String, Option<String>)>,
) -> Result<Vec<EarlierAgentRequest>, Error> {
    let mut earlier = Vec::with_capacity(found.len());
    for (id, decided_at) in found {
        if let Some(row) = query(tx, "a.approval_id = $1", &id, false)
            .await?
            .into_iter()
            .next()
        {
            earlier.push(EarlierAgentRequest { row, decided_at });
        }
    }
    Ok(earlier)
}

impl port::AgentRequests for PostgresStore {
    fn insert_agent_request(
        &self,
        approval: &NewApproval,
        origin: &NewAgentRequest,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            let at = now();
            insert_approval(tx, approval, &at, Some(written::agent_origin(origin))).await?;
            tx.execute(
                "INSERT INTO agent_requests (approval_id, request_key, agent, client,
                    agent_session, cwd, editable, deferred)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &approval.approval_id,
                    &origin.request_key,
                    &origin.agent,
                    &origin.client,
                    &origin.agent_session,
                    &origin.cwd,
                    &origin.editable,
                    &origin.deferred,
                ],
            )
            .await?;
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
            .await
        })
    }

    fn agent_requests_by_key(&self, request_key: &str) -> port::Result<Vec<EarlierAgentRequest>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT g.approval_id, d.decided_at FROM agent_requests g
                     LEFT JOIN decisions d ON d.approval_id = g.approval_id
                     WHERE g.request_key = $1 ORDER BY g.seq DESC LIMIT 16",
                    &[&request_key],
                )
                .await?;
            let found = rows
                .iter()
                .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            earlier_requests(tx, found).await
        })
    }

    fn recent_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
        args_hash: &str,
    ) -> port::Result<Option<EarlierAgentRequest>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT g.approval_id, d.decided_at FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     LEFT JOIN decisions d ON d.approval_id = g.approval_id
                     WHERE g.agent = $1 AND g.agent_session = $2 AND a.tool = $3
                       AND a.args_hash = $4
                     ORDER BY g.seq DESC LIMIT 1",
                    &[&agent, &agent_session, &tool, &args_hash],
                )
                .await?;
            let found = row
                .map(|row| Ok::<_, Error>((row.try_get(0)?, row.try_get(1)?)))
                .transpose()?;
            Ok(earlier_requests(tx, found.into_iter().collect())
                .await?
                .into_iter()
                .next())
        })
    }

    fn latest_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
    ) -> port::Result<Option<EarlierAgentRequest>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT g.approval_id, d.decided_at FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     LEFT JOIN decisions d ON d.approval_id = g.approval_id
                     WHERE g.agent = $1 AND g.agent_session = $2 AND a.tool = $3
                     ORDER BY g.seq DESC LIMIT 1",
                    &[&agent, &agent_session, &tool],
                )
                .await?;
            let found = row
                .map(|row| Ok::<_, Error>((row.try_get(0)?, row.try_get(1)?)))
                .transpose()?;
            Ok(earlier_requests(tx, found.into_iter().collect())
                .await?
                .into_iter()
                .next())
        })
    }

    fn claim_agent_call(&self, approval_id: &str) -> port::Result<String> {
        self.transaction(async |tx| {
            let found = tx
                .query_opt(
                    "SELECT a.status, g.deferred, g.claimed_at, a.session_id FROM agent_requests g
                     JOIN approval_requests a ON a.approval_id = g.approval_id
                     WHERE g.approval_id = $1 FOR UPDATE OF g",
                    &[&approval_id],
                )
                .await?;
            let Some(row) = found else {
                return Err(Error::Store(StoreError::UnknownApproval(
                    approval_id.to_string(),
                )));
            };
            let status: String = row.try_get(0)?;
            let deferred: bool = row.try_get(1)?;
            let claimed_at: Option<String> = row.try_get(2)?;
            let session_id: String = row.try_get(3)?;
            if let Some(at) = claimed_at {
                return Err(Error::Store(StoreError::AlreadyClaimed {
                    id: approval_id.to_string(),
                    at,
                }));
            }
            if !deferred || status != airlock_core::ApprovalStatus::Approved.as_str() {
                return Err(Error::Store(StoreError::Refused(format!(
                    "{approval_id} is {status}{}: only an approved deferred call is claimed to run",
                    if deferred { "" } else { " and not deferred" }
                ))));
            }
            let at = now();
            tx.execute(
                "UPDATE agent_requests SET claimed_at = $2 WHERE approval_id = $1",
                &[&approval_id, &at],
            )
            .await?;
            insert_audit(
                tx,
                "agent",
                "agent_call_claimed",
                Some(&session_id),
                None,
                Some(approval_id),
                &serde_json::json!({ "claimed_at": at }),
            )
            .await?;
            Ok(at)
        })
    }

    fn agent_call_claimed_at(&self, approval_id: &str) -> port::Result<Option<String>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT claimed_at FROM agent_requests WHERE approval_id = $1",
                    &[&approval_id],
                )
                .await?;
            Ok(match row {
                Some(row) => row.try_get::<_, Option<String>>(0)?,
                None => None,
            })
        })
    }

    fn record_agent_call(
        &self,
        activity: &AgentActivity<'_>,
        session_id: &str,
        detail: &Value,
        grant_use: Option<&str>,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            let at = now();
            if let Some(grant) = grant_use {
                take_grant_use(tx, grant, session_id, None, &at).await?;
            }
            touch_agent(tx, activity, &at).await?;
            insert_audit(
                tx,
                "policy",
                &format!("agent_{}", activity.outcome),
                Some(session_id),
                None,
                None,
                detail,
            )
            .await
        })
    }

    fn note_agent_outcome(&self, agent: &str, outcome: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "UPDATE agents SET last_outcome = $2 WHERE name = $1",
                &[&agent, &outcome],
            )
            .await?;
            Ok(())
        })
    }

    fn agents(&self) -> port::Result<Vec<AgentView>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT name, fallback, last_request_at, last_tool, last_cwd, last_outcome
                     FROM agents ORDER BY name",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    Ok(AgentView {
                        name: row.try_get(0)?,
                        fallback: parse_enum(row.try_get(1)?, "fallback")?,
                        last_request_at: row.try_get(2)?,
                        last_tool: row.try_get(3)?,
                        last_cwd: row.try_get(4)?,
                        last_outcome: row.try_get(5)?,
                        token_issued_at: None,
                    })
                })
                .collect()
        })
    }

    fn set_agent_fallback(&self, agent: &str, fallback: AgentFallback) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO agents (name, fallback) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET fallback = excluded.fallback",
                &[&agent, &fallback.as_str()],
            )
            .await?;
            insert_audit(
                tx,
                "user",
                "agent_fallback_set",
                None,
                None,
                None,
                &json!({ "agent": agent, "fallback": fallback.as_str() }),
            )
            .await
        })
    }
}
