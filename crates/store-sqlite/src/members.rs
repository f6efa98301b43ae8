//! The members of a team server: a name, a role, groups, and the hash of their token (never the
//! token). Every change is audited with the person who made it.

use crate::audit::insert_audit;
use crate::{CachedExt, NewMemberRow, Result, Store, StoreError, now, parse_enum, parse_json};
use airlock_protocol::{MemberView, TeamRole};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::json;

const COLUMNS: &str = "id, name, role, groups, created_at";

fn member(row: &Row<'_>) -> rusqlite::Result<(String, String, String, String, String)> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn parsed(
    (id, name, role, groups, created_at): (String, String, String, String, String),
) -> Result<MemberView> {
    let groups =
        serde_json::from_value(parse_json(&groups, "a member's groups")?).map_err(|e| {
            StoreError::CorruptJson {
                what: "a member's groups",
                message: e.to_string(),
            }
        })?;
    Ok(MemberView {
        id,
        name,
        role: parse_enum(&role, "a member's role")?,
        groups,
        created_at,
    })
}

fn count(tx: &Connection) -> Result<i64> {
    Ok(tx.row("SELECT COUNT(*) FROM team_members", [], |row| row.get(0))?)
}

fn by_name(tx: &Connection, name: &str) -> Result<Option<MemberView>> {
    tx.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM team_members WHERE name = ?1"
    ))?
    .query_row([name], member)
    .optional()?
    .map(parsed)
    .transpose()
}

impl Store {
    /// Adds a member. `first` (the team's first admin, who needs no token to be made): refused
    /// once the team has a member, in the same transaction, so two callers cannot both be first.
    pub fn add_member(&self, new: &NewMemberRow, first: bool, by: &str) -> Result<MemberView> {
        self.write(|tx| {
            if first && count(tx)? > 0 {
                return Err(StoreError::Refused(
                    "this team has members already; an admin adds you with `airlock team add`"
                        .into(),
                ));
            }
            if by_name(tx, &new.name)?.is_some() {
                return Err(StoreError::Refused(format!(
                    "there is a member named '{}' already",
                    new.name
                )));
            }
            let groups = serde_json::to_string(&new.groups).unwrap_or_else(|_| "[]".into());
            tx.run(
                "INSERT INTO team_members (id, name, role, groups, token_hash, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    new.id,
                    new.name,
                    new.role.as_str(),
                    groups,
                    new.token_hash,
                    now()
                ],
            )?;
            insert_audit(
                tx,
                by,
                "member_added",
                None,
                None,
                None,
                &json!({ "member": new.name, "role": new.role.as_str(), "groups": new.groups }),
            )?;
            by_name(tx, &new.name)?.ok_or_else(|| StoreError::Invalid("member not added".into()))
        })
    }

    /// Whether the team has any member (a server without members is no team server).
    pub fn has_members(&self) -> Result<bool> {
        self.read(|conn| Ok(count(conn)? > 0))
    }

    /// The member a token's hash belongs to.
    pub fn member_by_token_hash(&self, token_hash: &str) -> Result<Option<MemberView>> {
        self.read(|conn| {
            conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM team_members WHERE token_hash = ?1"
            ))?
            .query_row([token_hash], member)
            .optional()?
            .map(parsed)
            .transpose()
        })
    }

    pub fn member_by_name(&self, name: &str) -> Result<Option<MemberView>> {
        self.read(|conn| by_name(conn, name))
    }

    /// Every member, oldest first.
    pub fn members(&self) -> Result<Vec<MemberView>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM team_members ORDER BY created_at, name"
            ))?;
            let rows = stmt.query_map([], member)?;
            rows.map(|row| parsed(row?)).collect()
        })
    }

    /// Removes a member (their token is refused from now on); false when there is none. The
    /// last admin stays: a team without one could never change its settings again.
    pub fn remove_member(&self, name: &str, by: &str) -> Result<bool> {
        self.write(|tx| {
            let Some(found) = by_name(tx, name)? else {
                return Ok(false);
            };
            if found.role == TeamRole::Admin {
                let admins: i64 = tx.row(
                    "SELECT COUNT(*) FROM team_members WHERE role = 'admin'",
                    [],
                    |row| row.get(0),
                )?;
                if admins <= 1 {
                    return Err(StoreError::Refused(format!(
                        "{name} is the team's last admin; add another admin first"
                    )));
                }
            }
            tx.run("DELETE FROM team_members WHERE id = ?1", [&found.id])?;
            insert_audit(
                tx,
                by,
                "member_removed",
                None,
                None,
                None,
                &json!({ "member": name }),
            )?;
            Ok(true)
        })
    }

    /// A team member's command that changes something, audited with the person (its name
    /// only: arguments may hold an API key; the change itself has its own row).
    pub fn audit_member_command(&self, person: &str, command: &str) -> Result<()> {
        self.write(|tx| {
            insert_audit(
                tx,
                person,
                "member_command",
                None,
                None,
                None,
                &json!({ "person": person, "command": command }),
            )
        })
    }
}
