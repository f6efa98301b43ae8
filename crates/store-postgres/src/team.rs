//! A team server's members and routing on PostgreSQL (schema 3): the SQLite adapter's
//! `members.rs` and `routes.rs` in PostgreSQL's words. Where several replicas could race, the
//! transaction takes the lock that makes the check and the write one step: the member table for
//! the first admin and the last admin, the item's own row for routing, escalation, delegation
//! and counting a vote (so a decision on another replica waits for it or comes first, never in
//! between).

use crate::audit::insert_audit;
use crate::error::Error;
use crate::{PostgresStore, parse_enum, parse_json};
use airlock_protocol::{MemberView, RouteView, TeamRole};
use airlock_store_port::{self as port, ItemRouting, NewMemberRow, NewRoute, StoreError, now};
use deadpool_postgres::Transaction;
use serde_json::{Value, json};
use std::collections::HashMap;
use tokio_postgres::Row;

/// A JSON array of strings read back.
fn strings(text: &str, what: &'static str) -> Result<Vec<String>, Error> {
    serde_json::from_value(parse_json(text, what)?).map_err(|e| {
        Error::Store(StoreError::CorruptJson {
            what,
            message: e.to_string(),
        })
    })
}

/// A stored number that must fit the port's type.
pub(crate) fn number<T: TryFrom<i64>>(stored: i64, what: &'static str) -> Result<T, Error> {
    T::try_from(stored).map_err(|_| {
        Error::Store(StoreError::CorruptJson {
            what,
            message: format!("{stored} is out of range"),
        })
    })
}

/// A number of the port as PostgreSQL keeps it (BIGINT).
fn stored(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

const MEMBER_COLUMNS: &str = "id, name, role, groups, created_at";

fn member(row: &Row) -> Result<MemberView, Error> {
    let role: &str = row.try_get(2)?;
    Ok(MemberView {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        role: parse_enum(role, "a member's role")?,
        groups: strings(row.try_get(3)?, "a member's groups")?,
        created_at: row.try_get(4)?,
    })
}

async fn member_where(
    tx: &Transaction<'_>,
    column: &str,
    value: &str,
) -> Result<Option<MemberView>, Error> {
    let sql = format!("SELECT {MEMBER_COLUMNS} FROM team_members WHERE {column} = $1");
    tx.query_opt(&sql, &[&value])
        .await?
        .as_ref()
        .map(member)
        .transpose()
}

/// Locks the member table against other writers until the transaction ends: a check of who is
/// there (the first admin, the last admin) and the write it allows are one step.
async fn lock_members(tx: &Transaction<'_>) -> Result<(), Error> {
    tx.batch_execute("LOCK TABLE team_members IN SHARE ROW EXCLUSIVE MODE")
        .await?;
    Ok(())
}

const ROUTE_COLUMNS: &str =
    "id, server, tool, pointer, pattern, steps, quorum, escalate_after_secs, created_at";

fn route(row: &Row) -> Result<RouteView, Error> {
    Ok(RouteView {
        id: row.try_get(0)?,
        server: row.try_get(1)?,
        tool: row.try_get(2)?,
        pointer: row.try_get(3)?,
        pattern: row.try_get(4)?,
        steps: strings(row.try_get(5)?, "a route's steps")?,
        quorum: number(row.try_get(6)?, "a route's quorum")?,
        escalate_after_secs: row
            .try_get::<_, Option<i64>>(7)?
            .map(|secs| number(secs, "a route's escalation"))
            .transpose()?,
        created_at: row.try_get(8)?,
    })
}

const ROUTING_COLUMNS: &str =
    "approval_id, route_id, steps, step, assignee, quorum, escalate_after_secs, next_at, note";

fn routing(row: &Row) -> Result<ItemRouting, Error> {
    Ok(ItemRouting {
        approval_id: row.try_get(0)?,
        route_id: row.try_get(1)?,
        steps: strings(row.try_get(2)?, "a routed item's steps")?,
        step: number(row.try_get(3)?, "a routed item's step")?,
        assignee: row.try_get(4)?,
        quorum: number(row.try_get(5)?, "a routed item's quorum")?,
        escalate_after_secs: row
            .try_get::<_, Option<i64>>(6)?
            .map(|secs| number(secs, "a routed item's escalation"))
            .transpose()?,
        next_at: row.try_get(7)?,
        note: row.try_get(8)?,
    })
}

/// The item's routing, if it has one (pending or not).
async fn routing_in(tx: &Transaction<'_>, approval_id: &str) -> Result<Option<ItemRouting>, Error> {
    let sql = format!("SELECT {ROUTING_COLUMNS} FROM approval_routing WHERE approval_id = $1");
    tx.query_opt(&sql, &[&approval_id])
        .await?
        .as_ref()
        .map(routing)
        .transpose()
}

/// Locks the item's row and refuses an unknown item or one no longer pending (as a decision
/// would). A decision on another replica claims the same row: it waits until this transaction
/// ends, or came first and this one sees it decided.
async fn lock_pending(tx: &Transaction<'_>, approval_id: &str) -> Result<(), Error> {
    let status: Option<String> = tx
        .query_opt(
            "SELECT status FROM approval_requests WHERE approval_id = $1 FOR UPDATE",
            &[&approval_id],
        )
        .await?
        .map(|row| row.try_get(0))
        .transpose()?;
    match status.as_deref() {
        None => Err(StoreError::UnknownApproval(approval_id.to_string()).into()),
        Some("pending") => Ok(()),
        Some(status) => Err(StoreError::AlreadyDecided {
            id: approval_id.to_string(),
            status: status.to_string(),
        }
        .into()),
    }
}

/// [`lock_pending`] as a question: false for an unknown item or one decided already.
async fn still_pending(tx: &Transaction<'_>, approval_id: &str) -> Result<bool, Error> {
    match lock_pending(tx, approval_id).await {
        Ok(()) => Ok(true),
        Err(Error::Store(_)) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Writes an item's first routing; false when it had one already (another replica came first).
async fn insert_routing(tx: &Transaction<'_>, routing: &ItemRouting) -> Result<bool, Error> {
    let steps = serde_json::to_string(&routing.steps).unwrap_or_else(|_| "[]".into());
    let written = tx
        .execute(
            "INSERT INTO approval_routing (approval_id, route_id, steps, step, assignee, quorum,
                                           escalate_after_secs, next_at, note, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (approval_id) DO NOTHING",
            &[
                &routing.approval_id,
                &routing.route_id,
                &steps,
                &i64::from(routing.step),
                &routing.assignee,
                &i64::from(routing.quorum),
                &routing.escalate_after_secs.map(stored),
                &routing.next_at,
                &routing.note,
                &now(),
            ],
        )
        .await?;
    Ok(written > 0)
}

impl port::Team for PostgresStore {
    /// `first` (the team's first admin): refused once the team has a member, checked under the
    /// member table's lock, so two callers on two replicas cannot both be first.
    fn add_member(&self, new: &NewMemberRow, first: bool, by: &str) -> port::Result<MemberView> {
        self.transaction(async |tx| {
            lock_members(tx).await?;
            let count: i64 = tx
                .query_one("SELECT COUNT(*) FROM team_members", &[])
                .await?
                .try_get(0)?;
            if first && count > 0 {
                return Err(StoreError::Refused(
                    "this team has members already; an admin adds you with `airlock team add`"
                        .into(),
                )
                .into());
            }
            if member_where(tx, "name", &new.name).await?.is_some() {
                return Err(StoreError::Refused(format!(
                    "there is a member named '{}' already",
                    new.name
                ))
                .into());
            }
            let groups = serde_json::to_string(&new.groups).unwrap_or_else(|_| "[]".into());
            let row = tx
                .query_one(
                    &format!(
                        "INSERT INTO team_members (id, name, role, groups, token_hash, created_at)
                         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {MEMBER_COLUMNS}"
                    ),
                    &[
                        &new.id,
                        &new.name,
                        &new.role.as_str(),
                        &groups,
                        &new.token_hash,
                        &now(),
                    ],
                )
                .await?;
            insert_audit(
                tx,
                by,
                "member_added",
                None,
                None,
                None,
                &json!({ "member": new.name, "role": new.role.as_str(), "groups": new.groups }),
            )
            .await?;
            member(&row)
        })
    }

    fn has_members(&self) -> port::Result<bool> {
        self.transaction(async |tx| {
            Ok(tx
                .query_one("SELECT EXISTS (SELECT 1 FROM team_members)", &[])
                .await?
                .try_get(0)?)
        })
    }

    fn member_by_token_hash(&self, token_hash: &str) -> port::Result<Option<MemberView>> {
        self.transaction(async |tx| member_where(tx, "token_hash", token_hash).await)
    }

    fn member_by_name(&self, name: &str) -> port::Result<Option<MemberView>> {
        self.transaction(async |tx| member_where(tx, "name", name).await)
    }

    fn members(&self) -> port::Result<Vec<MemberView>> {
        self.transaction(async |tx| {
            let sql =
                format!("SELECT {MEMBER_COLUMNS} FROM team_members ORDER BY created_at, name");
            tx.query(&sql, &[]).await?.iter().map(member).collect()
        })
    }

    /// The last admin stays (a team without one could never change its settings again),
    /// counted under the member table's lock: two admins removing each other cannot both go.
    fn remove_member(&self, name: &str, by: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            lock_members(tx).await?;
            let Some(found) = member_where(tx, "name", name).await? else {
                return Ok(false);
            };
            if found.role == TeamRole::Admin {
                let admins: i64 = tx
                    .query_one(
                        "SELECT COUNT(*) FROM team_members WHERE role = 'admin'",
                        &[],
                    )
                    .await?
                    .try_get(0)?;
                if admins <= 1 {
                    return Err(StoreError::Refused(format!(
                        "{name} is the team's last admin; add another admin first"
                    ))
                    .into());
                }
            }
            tx.execute("DELETE FROM team_members WHERE id = $1", &[&found.id])
                .await?;
            insert_audit(
                tx,
                by,
                "member_removed",
                None,
                None,
                None,
                &json!({ "member": name }),
            )
            .await?;
            Ok(true)
        })
    }

    fn audit_member_command(&self, person: &str, command: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            insert_audit(
                tx,
                person,
                "member_command",
                None,
                None,
                None,
                &json!({ "person": person, "command": command }),
            )
            .await
        })
    }

    fn add_route(&self, new: &NewRoute, by: &str) -> port::Result<RouteView> {
        self.transaction(async |tx| {
            let steps = serde_json::to_string(&new.steps).unwrap_or_else(|_| "[]".into());
            let row = tx
                .query_one(
                    &format!(
                        "INSERT INTO team_routes (id, server, tool, pointer, pattern, steps, quorum,
                                                  escalate_after_secs, created_at)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {ROUTE_COLUMNS}"
                    ),
                    &[
                        &new.id,
                        &new.server,
                        &new.tool,
                        &new.pointer,
                        &new.pattern,
                        &steps,
                        &i64::from(new.quorum),
                        &new.escalate_after_secs.map(stored),
                        &now(),
                    ],
                )
                .await?;
            insert_audit(
                tx,
                by,
                "route_added",
                None,
                None,
                None,
                &json!({
                    "route": new.id, "server": new.server, "tool": new.tool,
                    "pointer": new.pointer, "pattern": new.pattern, "steps": new.steps,
                    "quorum": new.quorum, "escalate_after_secs": new.escalate_after_secs,
                }),
            )
            .await?;
            route(&row)
        })
    }

    fn routes(&self) -> port::Result<Vec<RouteView>> {
        self.transaction(async |tx| {
            let sql = format!("SELECT {ROUTE_COLUMNS} FROM team_routes ORDER BY created_at, id");
            tx.query(&sql, &[]).await?.iter().map(route).collect()
        })
    }

    fn remove_route(&self, id: &str, by: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            let removed = tx
                .execute("DELETE FROM team_routes WHERE id = $1", &[&id])
                .await?
                > 0;
            if removed {
                insert_audit(
                    tx,
                    by,
                    "route_removed",
                    None,
                    None,
                    None,
                    &json!({ "route": id }),
                )
                .await?;
            }
            Ok(removed)
        })
    }

    /// An item routed already (on any replica), or no longer pending, keeps what it has.
    fn route_item(&self, item: &ItemRouting) -> port::Result<bool> {
        self.transaction(async |tx| {
            if !still_pending(tx, &item.approval_id).await? {
                return Ok(false);
            }
            if !insert_routing(tx, item).await? {
                return Ok(false);
            }
            insert_audit(
                tx,
                "engine",
                "approval_routed",
                None,
                None,
                Some(&item.approval_id),
                &json!({ "route": item.route_id, "to": item.assignee, "quorum": item.quorum, "next_at": item.next_at }),
            )
            .await?;
            Ok(true)
        })
    }

    fn routing_of(&self, ids: &[&str]) -> port::Result<HashMap<String, ItemRouting>> {
        let ids: Vec<&str> = ids.to_vec();
        self.transaction(async |tx| {
            let sql = format!(
                "SELECT {ROUTING_COLUMNS} FROM approval_routing WHERE approval_id = ANY($1)"
            );
            tx.query(&sql, &[&ids])
                .await?
                .iter()
                .map(|row| routing(row).map(|found| (found.approval_id.clone(), found)))
                .collect()
        })
    }

    fn timed_routing(&self) -> port::Result<Vec<ItemRouting>> {
        self.transaction(async |tx| {
            let sql = format!(
                "SELECT {ROUTING_COLUMNS} FROM approval_routing r
                 WHERE next_at IS NOT NULL AND EXISTS (
                     SELECT 1 FROM approval_requests a
                     WHERE a.approval_id = r.approval_id AND a.status = 'pending')
                 ORDER BY next_at"
            );
            tx.query(&sql, &[]).await?.iter().map(routing).collect()
        })
    }

    /// Each escalation happens once across replicas: the item's row is locked and the step
    /// moves only if it is still `from_step`.
    fn escalate(
        &self,
        approval_id: &str,
        from_step: u32,
        next_at: Option<&str>,
    ) -> port::Result<Option<ItemRouting>> {
        self.transaction(async |tx| {
            if !still_pending(tx, approval_id).await? {
                return Ok(None);
            }
            let Some(current) = routing_in(tx, approval_id).await? else {
                return Ok(None);
            };
            let step = from_step + 1;
            let Some(assignee) = current.steps.get(step as usize) else {
                return Ok(None);
            };
            let moved = tx
                .execute(
                    "UPDATE approval_routing SET step = $3, assignee = $4, next_at = $5, updated_at = $6
                     WHERE approval_id = $1 AND step = $2",
                    &[
                        &approval_id,
                        &i64::from(from_step),
                        &i64::from(step),
                        assignee,
                        &next_at,
                        &now(),
                    ],
                )
                .await?
                > 0;
            if !moved {
                return Ok(None);
            }
            insert_audit(
                tx,
                "engine",
                "approval_escalated",
                None,
                None,
                Some(approval_id),
                &json!({ "from": current.assignee, "to": assignee, "step": step, "next_at": next_at }),
            )
            .await?;
            routing_in(tx, approval_id).await
        })
    }

    fn delegate(
        &self,
        approval_id: &str,
        assignee: &str,
        note: Option<&str>,
        by: &str,
    ) -> port::Result<ItemRouting> {
        self.transaction(async |tx| {
            lock_pending(tx, approval_id).await?;
            let before = routing_in(tx, approval_id).await?;
            match &before {
                Some(_) => {
                    tx.execute(
                        "UPDATE approval_routing SET assignee = $2, note = $3, updated_at = $4
                         WHERE approval_id = $1",
                        &[&approval_id, &assignee, &note, &now()],
                    )
                    .await?;
                }
                None => {
                    insert_routing(
                        tx,
                        &ItemRouting {
                            approval_id: approval_id.to_string(),
                            route_id: None,
                            steps: vec![assignee.to_string()],
                            step: 0,
                            assignee: assignee.to_string(),
                            quorum: 1,
                            escalate_after_secs: None,
                            next_at: None,
                            note: note.map(str::to_string),
                        },
                    )
                    .await?;
                }
            }
            insert_audit(
                tx,
                by,
                "approval_delegated",
                None,
                None,
                Some(approval_id),
                &json!({ "from": before.map(|r| r.assignee), "to": assignee, "note": note, "person": by }),
            )
            .await?;
            routing_in(tx, approval_id)
                .await?
                .ok_or_else(|| StoreError::Invalid("the delegation was not kept".into()).into())
        })
    }

    /// Counted under the item's lock: a decision on another replica cannot land between the
    /// count and the caller's decision on it without this transaction seeing it.
    fn record_vote(
        &self,
        approval_id: &str,
        member_id: &str,
        person: &str,
        args_hash: &str,
        edited_args: Option<&Value>,
    ) -> port::Result<u32> {
        self.transaction(async |tx| {
            lock_pending(tx, approval_id).await?;
            let added = tx
                .execute(
                    "INSERT INTO approval_votes (approval_id, member_id, args_hash, edited_args, at)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                    &[
                        &approval_id,
                        &member_id,
                        &args_hash,
                        &edited_args.map(Value::to_string),
                        &now(),
                    ],
                )
                .await?
                > 0;
            let votes: i64 = tx
                .query_one(
                    "SELECT COUNT(DISTINCT member_id) FROM approval_votes
                     WHERE approval_id = $1 AND args_hash = $2",
                    &[&approval_id, &args_hash],
                )
                .await?
                .try_get(0)?;
            let votes: u32 = number(votes, "an item's approvals")?;
            if added {
                insert_audit(
                    tx,
                    person,
                    "approval_counted",
                    None,
                    None,
                    Some(approval_id),
                    &json!({ "person": person, "args_hash": args_hash, "edited": edited_args.is_some(), "approvals": votes }),
                )
                .await?;
            }
            Ok(votes)
        })
    }
}
