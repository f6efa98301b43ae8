//! Airlock's one SQLite file: rusqlite (bundled), migrations, WAL, `BEGIN IMMEDIATE`, and
//! `synchronous=FULL` so that a decision is on disk before the tool it allows runs.
//!
//! One module per table family; every write that belongs together is one immediate transaction.

mod approvals;
mod audit;
mod calls;
mod sessions;
mod settings;

pub use approvals::{ApprovalRow, DecisionInput, DecisionOutcome, NewApproval};
pub use audit::AuditRow;
pub use calls::{CallRow, MessageRow, NewCall};
pub use sessions::SessionRow;
pub use settings::{RememberedRow, RuleRow, ServerRow};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use rusqlite_migration::{M, Migrations};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the database {path} was written by a newer Airlock (schema version {found}; this one knows up to {supported}); it was left unchanged — use the newer Airlock"
    )]
    NewerDatabase { path: PathBuf, found: i64, supported: i64 },
    #[error("cannot open the database {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("database migration failed: {0}")]
    Migration(String),
    #[error("stored JSON is corrupt in {what}: {message}")]
    CorruptJson { what: &'static str, message: String },
    #[error("no approval request with id {0}")]
    UnknownApproval(String),
    #[error("approval {id} belongs to another session")]
    ForeignSession { id: String },
    #[error("approval {id} is already {status}")]
    AlreadyDecided { id: String, status: String },
    #[error("no session named '{0}'")]
    UnknownSession(String),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, StoreError>;

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![M::up(include_str!("schema.sql"))])
}

/// The number of migrations this build knows: the newest schema version it can open.
pub fn supported_schema_version() -> i64 {
    1
}

/// Now, as the RFC 3339 text every table stores.
pub fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// The database. One connection behind a mutex: SQLite serialises writers anyway, and the
/// engine's writes are short.
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens (creating if needed) and migrates. A database from a newer version is refused
    /// before anything is written to it.
    pub fn open(path: &Path) -> Result<Self> {
        if path.exists() {
            refuse_newer(path)?;
        }
        let mut conn = Connection::open(path)
            .map_err(|e| StoreError::Open { path: path.to_path_buf(), message: e.to_string() })?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations().to_latest(&mut conn).map_err(|e| StoreError::Migration(e.to_string()))?;
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (transactions roll
        // back on drop), so a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed only if `f` succeeds.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self.lock();
        f(&conn)
    }
}

fn refuse_newer(path: &Path) -> Result<()> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| StoreError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| StoreError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    let supported = supported_schema_version();
    if found > supported {
        return Err(StoreError::NewerDatabase { path: path.to_path_buf(), found, supported });
    }
    Ok(())
}

pub(crate) fn parse_json(text: &str, what: &'static str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| StoreError::CorruptJson { what, message: e.to_string() })
}

pub(crate) fn parse_enum<T: std::str::FromStr>(text: &str, what: &'static str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>().map_err(|e| StoreError::CorruptJson { what, message: e.to_string() })
}

#[cfg(test)]
mod tests;
