//! Routing on a team server: the routes (a tool's calls to a person or a group, with a quorum
//! and escalation), each routed item's state (who has it now, when it escalates), delegation,
//! and the approvals counted towards a quorum. Persists only: the engine decides what routes
//! where and when an item escalates.

use crate::audit::insert_audit;
use crate::{CachedExt, ItemRouting, NewRoute, Result, Store, StoreError, now, parse_json};
use airlock_protocol::RouteView;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::{Value, json};
use std::collections::HashMap;

fn strings(text: &str, what: &'static str) -> Result<Vec<String>> {
    serde_json::from_value(parse_json(text, what)?).map_err(|e| StoreError::CorruptJson {
        what,
        message: e.to_string(),
    })
}

const ROUTE_COLUMNS: &str =
    "id, server, tool, pointer, pattern, steps, quorum, escalate_after_secs, created_at";

fn route(row: &Row<'_>) -> rusqlite::Result<(RouteView, String)> {
    Ok((
        RouteView {
            id: row.get(0)?,
            server: row.get(1)?,
            tool: row.get(2)?,
            pointer: row.get(3)?,
            pattern: row.get(4)?,
            steps: Vec::new(),
            quorum: row.get(6)?,
            escalate_after_secs: row.get::<_, Option<i64>>(7)?.map(secs),
            created_at: row.get(8)?,
        },
        row.get(5)?,
    ))
}

fn with_steps((mut view, steps): (RouteView, String)) -> Result<RouteView> {
    view.steps = strings(&steps, "a route's steps")?;
    Ok(view)
}

const ROUTING_COLUMNS: &str = "r.approval_id, r.route_id, r.steps, r.step, r.assignee, r.quorum, r.escalate_after_secs, r.next_at, r.note";

type RawRouting = (
    String,
    Option<String>,
    String,
    u32,
    String,
    u32,
    Option<i64>,
    Option<String>,
    Option<String>,
);

fn routing(row: &Row<'_>) -> rusqlite::Result<RawRouting> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ))
}

fn parsed(raw: RawRouting) -> Result<ItemRouting> {
    let (approval_id, route_id, steps, step, assignee, quorum, escalate_after_secs, next_at, note) =
        raw;
    Ok(ItemRouting {
        approval_id,
        route_id,
        steps: strings(&steps, "a routed item's steps")?,
        step,
        assignee,
        quorum,
        escalate_after_secs: escalate_after_secs.map(secs),
        next_at,
        note,
    })
}

/// Seconds as SQLite keeps them (an i64), and back.
fn secs(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}

fn stored_secs(secs: Option<u64>) -> Option<i64> {
    secs.map(|secs| i64::try_from(secs).unwrap_or(i64::MAX))
}

/// The item's routing, if it has one (pending or not).
fn routing_in(tx: &Connection, approval_id: &str) -> Result<Option<ItemRouting>> {
    tx.prepare_cached(&format!(
        "SELECT {ROUTING_COLUMNS} FROM approval_routing r WHERE r.approval_id = ?1"
    ))?
    .query_row([approval_id], routing)
    .optional()?
    .map(parsed)
    .transpose()
}

/// The item's status, refusing an unknown item or one no longer pending (as a decision would).
fn pending(tx: &Connection, approval_id: &str) -> Result<()> {
    let status: Option<String> = tx
        .prepare_cached("SELECT status FROM approval_requests WHERE approval_id = ?1")?
        .query_row([approval_id], |row| row.get(0))
        .optional()?;
    match status.as_deref() {
        None => Err(StoreError::UnknownApproval(approval_id.to_string())),
        Some("pending") => Ok(()),
        Some(status) => Err(StoreError::AlreadyDecided {
            id: approval_id.to_string(),
            status: status.to_string(),
        }),
    }
}

impl Store {
    pub fn add_route(&self, new: &NewRoute, by: &str) -> Result<RouteView> {
        self.write(|tx| {
            let steps = serde_json::to_string(&new.steps).unwrap_or_else(|_| "[]".into());
            tx.run(
                "INSERT INTO team_routes (id, server, tool, pointer, pattern, steps, quorum, escalate_after_secs, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    new.id,
                    new.server,
                    new.tool,
                    new.pointer,
                    new.pattern,
                    steps,
                    new.quorum,
                    stored_secs(new.escalate_after_secs),
                    now()
                ],
            )?;
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
            )?;
            tx.prepare_cached(&format!(
                "SELECT {ROUTE_COLUMNS} FROM team_routes WHERE id = ?1"
            ))?
            .query_row([&new.id], route)
            .map_err(StoreError::from)
            .and_then(with_steps)
        })
    }

    /// Every route, oldest first: the first that matches a call applies.
    pub fn routes(&self) -> Result<Vec<RouteView>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {ROUTE_COLUMNS} FROM team_routes ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map([], route)?;
            rows.map(|row| with_steps(row?)).collect()
        })
    }

    /// Removes a route; items routed by it keep their routing. False when there was none.
    pub fn remove_route(&self, id: &str, by: &str) -> Result<bool> {
        self.write(|tx| {
            let removed = tx.run("DELETE FROM team_routes WHERE id = ?1", [id])? > 0;
            if removed {
                insert_audit(
                    tx,
                    by,
                    "route_removed",
                    None,
                    None,
                    None,
                    &json!({ "route": id }),
                )?;
            }
            Ok(removed)
        })
    }

    /// Keeps an item's routing as it came (a route matched it); an item routed already, or no
    /// longer pending, keeps what it has. Whether it was written.
    pub fn route_item(&self, routing: &ItemRouting) -> Result<bool> {
        self.write(|tx| {
            if pending(tx, &routing.approval_id).is_err()
                || routing_in(tx, &routing.approval_id)?.is_some()
            {
                return Ok(false);
            }
            insert_routing(tx, routing)?;
            insert_audit(
                tx,
                "engine",
                "approval_routed",
                None,
                None,
                Some(&routing.approval_id),
                &json!({ "route": routing.route_id, "to": routing.assignee, "quorum": routing.quorum, "next_at": routing.next_at }),
            )?;
            Ok(true)
        })
    }

    /// The routing of each of these items that has one.
    pub fn routing_of(&self, ids: &[&str]) -> Result<HashMap<String, ItemRouting>> {
        self.read(|conn| {
            let mut found = HashMap::new();
            for id in ids {
                if let Some(routing) = routing_in(conn, id)? {
                    found.insert(routing.approval_id.clone(), routing);
                }
            }
            Ok(found)
        })
    }

    /// The pending items that move on at some time (escalation or expiry), with their routing.
    pub fn timed_routing(&self) -> Result<Vec<ItemRouting>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {ROUTING_COLUMNS} FROM approval_routing r
                 JOIN approval_requests a ON a.approval_id = r.approval_id
                 WHERE a.status = 'pending' AND r.next_at IS NOT NULL"
            ))?;
            let rows = stmt.query_map([], routing)?;
            rows.map(|row| parsed(row?)).collect()
        })
    }

    /// Moves a pending item from step `from_step` to the next (its assignee that step's),
    /// moving on again at `next_at`. None when it is no longer at that step or pending (another
    /// pass, a delegation or a decision came first): each escalation happens once.
    pub fn escalate(
        &self,
        approval_id: &str,
        from_step: u32,
        next_at: Option<&str>,
    ) -> Result<Option<ItemRouting>> {
        self.write(|tx| {
            if pending(tx, approval_id).is_err() {
                return Ok(None);
            }
            let Some(current) = routing_in(tx, approval_id)? else {
                return Ok(None);
            };
            let step = from_step + 1;
            let Some(assignee) = current.steps.get(step as usize) else {
                return Ok(None);
            };
            let moved = tx.run(
                "UPDATE approval_routing SET step = ?3, assignee = ?4, next_at = ?5, updated_at = ?6
                 WHERE approval_id = ?1 AND step = ?2",
                params![approval_id, from_step, step, assignee, next_at, now()],
            )? > 0;
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
            )?;
            routing_in(tx, approval_id)
        })
    }

    /// Hands a pending item to `assignee` with a note; an item no route sent anywhere gets a
    /// routing of its own (one approval, no escalation). Audited with the person who did it.
    pub fn delegate(
        &self,
        approval_id: &str,
        assignee: &str,
        note: Option<&str>,
        by: &str,
    ) -> Result<ItemRouting> {
        self.write(|tx| {
            pending(tx, approval_id)?;
            let before = routing_in(tx, approval_id)?;
            match &before {
                Some(_) => {
                    tx.run(
                        "UPDATE approval_routing SET assignee = ?2, note = ?3, updated_at = ?4 WHERE approval_id = ?1",
                        params![approval_id, assignee, note, now()],
                    )?;
                }
                None => insert_routing(
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
                )?,
            }
            insert_audit(
                tx,
                by,
                "approval_delegated",
                None,
                None,
                Some(approval_id),
                &json!({ "from": before.map(|r| r.assignee), "to": assignee, "note": note, "person": by }),
            )?;
            routing_in(tx, approval_id)?
                .ok_or_else(|| StoreError::Invalid("the delegation was not kept".into()))
        })
    }

    /// Counts one person's approval of a pending item with the arguments `args_hash` (an edit's
    /// own), once per person and arguments: how many distinct people approved these arguments.
    pub fn record_vote(
        &self,
        approval_id: &str,
        member_id: &str,
        person: &str,
        args_hash: &str,
        edited_args: Option<&Value>,
    ) -> Result<u32> {
        self.write(|tx| {
            pending(tx, approval_id)?;
            let added = tx.run(
                "INSERT OR IGNORE INTO approval_votes (approval_id, member_id, args_hash, edited_args, at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    approval_id,
                    member_id,
                    args_hash,
                    edited_args.map(Value::to_string),
                    now()
                ],
            )? > 0;
            let votes: u32 = tx.row(
                "SELECT COUNT(DISTINCT member_id) FROM approval_votes WHERE approval_id = ?1 AND args_hash = ?2",
                params![approval_id, args_hash],
                |row| row.get(0),
            )?;
            if added {
                insert_audit(
                    tx,
                    person,
                    "approval_counted",
                    None,
                    None,
                    Some(approval_id),
                    &json!({ "person": person, "args_hash": args_hash, "edited": edited_args.is_some(), "approvals": votes }),
                )?;
            }
            Ok(votes)
        })
    }
}

fn insert_routing(tx: &Connection, routing: &ItemRouting) -> Result<()> {
    let steps = serde_json::to_string(&routing.steps).unwrap_or_else(|_| "[]".into());
    tx.run(
        "INSERT INTO approval_routing (approval_id, route_id, steps, step, assignee, quorum, escalate_after_secs, next_at, note, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            routing.approval_id,
            routing.route_id,
            steps,
            routing.step,
            routing.assignee,
            routing.quorum,
            stored_secs(routing.escalate_after_secs),
            routing.next_at,
            routing.note,
            now()
        ],
    )?;
    Ok(())
}
