//! Sessions (chats): name, mode override, status.

use crate::error::Error;
use crate::{PostgresStore, parse_enum};
use airlock_core::{Mode, SessionStatus, ids};
use airlock_store_port::{self as port, SessionRow, StoreError, now};
use deadpool_postgres::Transaction;
use tokio_postgres::Row;

const COLUMNS: &str = "id, name, mode, status, last_error, created_at, updated_at, title";

fn session_row(row: &Row) -> Result<SessionRow, Error> {
    Ok(SessionRow {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        mode: row
            .try_get::<_, Option<&str>>(2)?
            .map(|mode| parse_enum(mode, "session mode"))
            .transpose()?,
        status: parse_enum(row.try_get(3)?, "session status")?,
        last_error: row.try_get(4)?,
        created_at: row.try_get(5)?,
        updated_at: row.try_get(6)?,
        title: row.try_get(7)?,
    })
}

async fn by(tx: &Transaction<'_>, column: &str, value: &str) -> Result<Option<SessionRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM sessions WHERE {column} = $1");
    tx.query_opt(&sql, &[&value])
        .await?
        .as_ref()
        .map(session_row)
        .transpose()
}

fn check_name(name: &str) -> port::Result<()> {
    if port::valid_session_name(name) {
        Ok(())
    } else {
        Err(StoreError::Invalid(port::SESSION_NAME_RULE.into()))
    }
}

impl port::Sessions for PostgresStore {
    fn ensure_session(&self, name: &str) -> port::Result<SessionRow> {
        check_name(name)?;
        self.transaction(async |tx| {
            let at = now();
            tx.execute(
                "INSERT INTO sessions (id, name, status, created_at, updated_at)
                 VALUES ($1, $2, 'idle', $3, $3) ON CONFLICT (name) DO NOTHING",
                &[&ids::new_id("ses"), &name, &at],
            )
            .await?;
            by(tx, "name", name)
                .await?
                .ok_or_else(|| StoreError::UnknownSession(name.to_string()).into())
        })
    }

    fn start_turn(&self, name: &str, text: &str) -> port::Result<(SessionRow, i64)> {
        check_name(name)?;
        self.transaction(async |tx| {
            let at = now();
            let sql = format!(
                "INSERT INTO sessions (id, name, status, created_at, updated_at)
                 VALUES ($1, $2, 'thinking', $3, $3)
                 ON CONFLICT (name) DO UPDATE SET status = 'thinking', last_error = NULL,
                    updated_at = $3
                 RETURNING {COLUMNS}"
            );
            let row = tx
                .query_one(&sql, &[&ids::new_id("ses"), &name, &at])
                .await?;
            let session = session_row(&row)?;
            let message = tx
                .query_one(
                    "INSERT INTO messages (session_id, role, content, created_at)
                     VALUES ($1, 'user', $2, $3) RETURNING id",
                    &[&session.id, &text, &at],
                )
                .await?;
            Ok((session, message.try_get(0)?))
        })
    }

    fn session_by_name(&self, name: &str) -> port::Result<Option<SessionRow>> {
        self.transaction(async |tx| by(tx, "name", name).await)
    }

    fn session(&self, id: &str) -> port::Result<Option<SessionRow>> {
        self.transaction(async |tx| by(tx, "id", id).await)
    }

    fn sessions(&self) -> port::Result<Vec<SessionRow>> {
        self.transaction(async |tx| {
            let sql = format!("SELECT {COLUMNS} FROM sessions ORDER BY created_at, name");
            tx.query(&sql, &[]).await?.iter().map(session_row).collect()
        })
    }

    fn set_session_title(&self, id: &str, title: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "UPDATE sessions SET title = $2 WHERE id = $1",
                &[&id, &title],
            )
            .await?;
            Ok(())
        })
    }

    fn set_session_mode(&self, id: &str, mode: Option<Mode>) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "UPDATE sessions SET mode = $2, updated_at = $3 WHERE id = $1",
                &[&id, &mode.map(Mode::as_str), &now()],
            )
            .await?;
            Ok(())
        })
    }

    fn set_session_status_fenced(
        &self,
        id: &str,
        status: SessionStatus,
        error: Option<&str>,
        fence: Option<&port::Fence>,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            crate::replicas::check_fence(tx, &self.replica, fence).await?;
            tx.execute(
                "UPDATE sessions SET status = $2, last_error = $3, updated_at = $4 WHERE id = $1",
                &[&id, &status.as_str(), &error, &now()],
            )
            .await?;
            Ok(())
        })
    }
}
