//! Sessions (chats): name, mode override, status.

use crate::{CachedExt, Result, Store, StoreError, now, parse_enum};
use airlock_core::{Mode, SessionStatus, ids};
use airlock_protocol::SessionRow;
use rusqlite::{OptionalExtension, Row, params};

const COLUMNS: &str = "id, name, mode, status, last_error, created_at, updated_at, title";

fn from_row(row: &Row<'_>) -> rusqlite::Result<SessionRowRaw> {
    Ok(SessionRowRaw {
        id: row.get(0)?,
        name: row.get(1)?,
        mode: row.get(2)?,
        status: row.get(3)?,
        last_error: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
        title: row.get(7)?,
    })
}

struct SessionRowRaw {
    id: String,
    name: String,
    mode: Option<String>,
    status: String,
    last_error: Option<String>,
    created_at: String,
    updated_at: String,
    title: Option<String>,
}

impl SessionRowRaw {
    fn parse(self) -> Result<SessionRow> {
        Ok(SessionRow {
            mode: self
                .mode
                .as_deref()
                .map(|m| parse_enum(m, "session mode"))
                .transpose()?,
            status: parse_enum(&self.status, "session status")?,
            id: self.id,
            name: self.name,
            last_error: self.last_error,
            created_at: self.created_at,
            updated_at: self.updated_at,
            title: self.title,
        })
    }
}

impl Store {
    /// The session with this name, created if it does not exist yet.
    pub fn ensure_session(&self, name: &str) -> Result<SessionRow> {
        validate_name(name)?;
        if let Some(existing) = self.session_by_name(name)? {
            return Ok(existing);
        }
        self.write(|tx| {
            let at = now();
            tx.run(
                "INSERT INTO sessions (id, name, status, created_at, updated_at)
                 VALUES (?1, ?2, 'idle', ?3, ?3) ON CONFLICT(name) DO NOTHING",
                params![ids::new_id("ses"), name, at],
            )?;
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE name = ?1");
            let raw = tx.row(&sql, [name], from_row)?;
            raw.parse()
        })
    }

    /// Starts a turn in one transaction: the session (created if new), the user message, and
    /// the status that tells a restarted engine to resume it.
    pub fn start_turn(&self, name: &str, text: &str) -> Result<(SessionRow, i64)> {
        validate_name(name)?;
        self.write_relaxed(|tx| {
            let at = now();
            tx.prepare_cached(
                "INSERT INTO sessions (id, name, status, created_at, updated_at)
                 VALUES (?1, ?2, 'thinking', ?3, ?3)
                 ON CONFLICT(name) DO UPDATE SET status = 'thinking', last_error = NULL, updated_at = ?3",
            )?
            .execute(params![ids::new_id("ses"), name, at])?;
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE name = ?1");
            let session = tx.row(&sql, [name], from_row)?.parse()?;
            tx.prepare_cached("INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'user', ?2, ?3)")?
                .execute(params![session.id, text, at])?;
            Ok((session, tx.last_insert_rowid()))
        })
    }

    pub fn session_by_name(&self, name: &str) -> Result<Option<SessionRow>> {
        self.read(|conn| {
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE name = ?1");
            let raw = conn.row(&sql, [name], from_row).optional()?;
            raw.map(SessionRowRaw::parse).transpose()
        })
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRow>> {
        self.read(|conn| {
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1");
            let raw = conn.row(&sql, [id], from_row).optional()?;
            raw.map(SessionRowRaw::parse).transpose()
        })
    }

    pub fn sessions(&self) -> Result<Vec<SessionRow>> {
        self.read(|conn| {
            let sql = format!("SELECT {COLUMNS} FROM sessions ORDER BY created_at, name");
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map([], from_row)?;
            rows.map(|r| r.map_err(StoreError::from).and_then(SessionRowRaw::parse))
                .collect()
        })
    }

    /// The name a person reads for a session whose name is a key (an agent's session id).
    pub fn set_session_title(&self, id: &str, title: &str) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "UPDATE sessions SET title = ?2 WHERE id = ?1",
                params![id, title],
            )?;
            Ok(())
        })
    }

    pub fn set_session_mode(&self, id: &str, mode: Option<Mode>) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "UPDATE sessions SET mode = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, mode.map(Mode::as_str), now()],
            )?;
            Ok(())
        })
    }

    pub fn set_session_status(
        &self,
        id: &str,
        status: SessionStatus,
        error: Option<&str>,
    ) -> Result<()> {
        self.write_relaxed(|tx| {
            tx.run(
                "UPDATE sessions SET status = ?2, last_error = ?3, updated_at = ?4 WHERE id = ?1",
                params![id, status.as_str(), error, now()],
            )?;
            Ok(())
        })
    }
}

fn validate_name(name: &str) -> Result<()> {
    if !airlock_store_port::valid_session_name(name) {
        return Err(StoreError::Invalid(
            airlock_store_port::SESSION_NAME_RULE.into(),
        ));
    }
    Ok(())
}
