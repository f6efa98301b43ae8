//! Airlock's one SQLite file, the store port's desktop adapter: rusqlite (bundled), migrations,
//! WAL, `BEGIN IMMEDIATE`, and `synchronous=FULL` so that a decision is on disk before the tool
//! it allows runs.
//!
//! One module per table family; every write that belongs together is one immediate transaction.
//! The engine reaches it only through the port's traits (`port.rs`), whose errors carry no
//! rusqlite type; the methods here keep the adapter's own error, `StoreError`.

mod acp;
mod agent_tokens;
mod agents;
mod approvals;
mod audit;
mod calls;
mod devices;
mod grants;
mod history;
mod members;
mod pins;
mod port;
mod remembered;
mod requests;
mod routes;
mod rules;
mod servers;
mod sessions;
mod settings;
mod tool_settings;
mod wal;

pub use airlock_store_port::{
    AgentActivity, ApprovalRow, AskedRow, AuditRow, CallRow, DecisionInput, DecisionOutcome,
    DecisionRow, EarlierAgentRequest, GrantLimits, HostedCallUpdate, HostedSession, ItemRouting,
    MessageRow, NewAgentRequest, NewApproval, NewCall, NewMemberRow, NewRoute, PastCall, PinCheck,
    RememberedRow, RuleRow, ServerRow, SessionRow, WriteCounters, now, time_before,
};
pub use approvals::Decided;

use rusqlite::{Connection, OpenFlags, Params, Row};
use rusqlite_migration::{M, Migrations};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The adapter's own error (with rusqlite's); the port's `StoreError` is what leaves the crate
/// through the traits (`port.rs` converts).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the database {path} was written by a newer Airlock (schema version {found}; this one knows up to {supported}); it was left unchanged — use the newer Airlock"
    )]
    NewerDatabase {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
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
    /// An approved deferred call was claimed to run before: it runs at most once.
    #[error("the call {id} was already claimed to run at {at}; it runs at most once")]
    AlreadyClaimed { id: String, at: String },
    #[error("no session named '{0}'")]
    UnknownSession(String),
    /// The caller's own check refused the decision (an edit that fails the tool's schema…).
    #[error("{0}")]
    Refused(String),
    /// The disk refused a write earlier (I/O error, disk full): nothing more is written, so
    /// nothing more is decided, until Airlock is restarted.
    #[error(
        "Airlock can no longer record decisions: the disk refused a write ({0}); nothing more is decided until it is restarted"
    )]
    Unavailable(String),
    #[error("{0}")]
    Invalid(String),
    /// A counted grant had no use left when the step that relied on it was recorded (another
    /// step took the last one first): nothing of that step was written; decide it again.
    #[error("grant {0} has no use left")]
    GrantUsedUp(String),
}

impl StoreError {
    /// A decision refused on its own merits (the rest of its batch goes on), as opposed to a
    /// failure of the database (the whole batch is rolled back).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::UnknownApproval(_)
                | Self::ForeignSession { .. }
                | Self::AlreadyDecided { .. }
                | Self::Refused(_)
        )
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Every schema change in order; the schema version is how many of them a file has.
const MIGRATIONS: [&str; 17] = [
    include_str!("schema.sql"),
    include_str!("migration_2_mcp.sql"),
    include_str!("migration_3_invoked.sql"),
    include_str!("migration_4_notification.sql"),
    include_str!("migration_5_agents.sql"),
    include_str!("migration_6_grants.sql"),
    include_str!("migration_7_same_call.sql"),
    include_str!("migration_8_devices.sql"),
    include_str!("migration_9_agents_fail_closed.sql"),
    include_str!("migration_10_grant_scope.sql"),
    include_str!("migration_11_session_title.sql"),
    include_str!("migration_12_round_pages.sql"),
    include_str!("migration_13_team.sql"),
    include_str!("migration_14_agent_tokens.sql"),
    include_str!("migration_15_acp.sql"),
    include_str!("migration_16_deferred_agent_calls.sql"),
    include_str!("migration_17_thoughts.sql"),
];

fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect())
}

/// The number of migrations this build knows: the newest schema version it can open.
pub fn supported_schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// The database. One connection behind a mutex: SQLite serialises writers anyway, and the
/// engine's writes are short.
pub struct Store {
    /// Declared before `conn`: dropped first, so the checkpointer's connection closes before
    /// the store's own, which then checkpoints the whole log as the last one open.
    log: wal::Log,
    /// Shared with the checkpointer, which holds it (without using the connection) for the
    /// short last pass of a checkpoint, so that the log can start again.
    conn: std::sync::Arc<Mutex<Connection>>,
    /// Whether the connection is currently at `synchronous=FULL` (changed only under the lock).
    full_sync: std::sync::atomic::AtomicBool,
    /// Set when the disk refused a write: whether that transaction reached the disk is unknown,
    /// so no further write (and so no decision) is attempted.
    failure: Mutex<Option<String>>,
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
        let mut conn = Connection::open(path).map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // 32 MiB of page cache (default 2 MiB): a 10,000-item inbox and its batch decision
        // otherwise re-read the same pages from the OS thousands of times.
        conn.pragma_update(None, "cache_size", -32_000)?;
        // Off while migrating: a migration that rebuilds a table drops the old one, which other
        // tables reference (the rebuilt one keeps every row and key).
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        let migrated = migrations()
            .to_latest(&mut conn)
            .map_err(|e| StoreError::Migration(e.to_string()));
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrated?;
        conn.set_prepared_statement_cache_capacity(64);
        wal::install(&conn)?;
        let conn = std::sync::Arc::new(Mutex::new(conn));
        let log = wal::Log::start(path, std::sync::Arc::downgrade(&conn))?;
        Ok(Self {
            log,
            conn,
            full_sync: true.into(),
            failure: Mutex::new(None),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the store wrote since it was opened (commits, pages, checkpoints): for the bench
    /// and the tests that keep a round's cost from growing back.
    pub fn write_counters(&self) -> WriteCounters {
        self.log.counters()
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (transactions roll
        // back on drop), so a poisoned lock is safe to keep using.
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed only if `f` succeeds. The
    /// BEGIN and COMMIT statements are cached like every other hot statement.
    ///
    /// Durable: `synchronous=FULL`, the WAL is on disk when this returns. Every write on the
    /// approval path (requests, decisions, `running` marks) and every setting uses this.
    fn write<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.write_with(true, f, |_| {})
    }

    /// For writes off the approval path (messages, results, status): `synchronous=NORMAL`. In
    /// WAL mode such a commit survives a crash of the process (kill -9) at once, and a power
    /// failure from the next durable commit on, which syncs every frame before it.
    fn write_relaxed<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.write_with(false, f, |_| {})
    }

    /// Why the store stopped writing, if the disk refused a write.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// `committed` runs after the commit, before anyone else can use the connection: what it
    /// records is in place before another thread can read what the transaction wrote.
    fn write_with<T>(
        &self,
        full: bool,
        f: impl FnOnce(&Connection) -> Result<T>,
        committed: impl FnOnce(&T),
    ) -> Result<T> {
        if let Some(why) = self.failure() {
            return Err(StoreError::Unavailable(why));
        }
        let result = self.write_once(full, f, committed);
        if let Err(StoreError::Sql(error)) = &result
            && is_disk_failure(error)
        {
            *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.to_string());
        }
        result
    }

    fn write_once<T>(
        &self,
        full: bool,
        f: impl FnOnce(&Connection) -> Result<T>,
        committed: impl FnOnce(&T),
    ) -> Result<T> {
        use std::sync::atomic::Ordering;
        let conn = self.lock();
        if self.full_sync.load(Ordering::Relaxed) != full {
            conn.pragma_update(None, "synchronous", if full { "FULL" } else { "NORMAL" })?;
            self.full_sync.store(full, Ordering::Relaxed);
        }
        if !conn.is_autocommit() {
            // A panic mid-transaction left it open: undo that before starting anew.
            let _ = conn.run("ROLLBACK", []);
        }
        conn.run("BEGIN IMMEDIATE", [])?;
        self.log.begin();
        match f(&conn) {
            Ok(value) => match conn.run("COMMIT", []) {
                Ok(_) => {
                    self.log.committed(full);
                    committed(&value);
                    Ok(value)
                }
                Err(error) => {
                    let _ = conn.run("ROLLBACK", []);
                    Err(error.into())
                }
            },
            Err(error) => {
                let _ = conn.run("ROLLBACK", []);
                Err(error)
            }
        }
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self.lock();
        f(&conn)
    }
}

/// An error of the disk under the database, after which a commit's fate is unknown.
fn is_disk_failure(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(
            rusqlite::ErrorCode::SystemIoFailure
                | rusqlite::ErrorCode::DiskFull
                | rusqlite::ErrorCode::DatabaseCorrupt
                | rusqlite::ErrorCode::CannotOpen
        )
    )
}

impl StoreError {
    /// The disk refused this write (or an earlier one): whether it reached the disk is unknown.
    pub fn is_disk_failure(&self) -> bool {
        match self {
            StoreError::Sql(error) => is_disk_failure(error),
            StoreError::Unavailable(_) => true,
            _ => false,
        }
    }
}

fn refuse_newer(path: &Path) -> Result<()> {
    let conn =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|e| {
            StoreError::Open {
                path: path.to_path_buf(),
                message: e.to_string(),
            }
        })?;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let supported = supported_schema_version();
    if found > supported {
        return Err(StoreError::NewerDatabase {
            path: path.to_path_buf(),
            found,
            supported,
        });
    }
    Ok(())
}

/// Statements through the connection's prepared-statement cache: parsing SQL again for every
/// call cost more than running it.
pub(crate) trait CachedExt {
    fn run<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    fn row<T, P: Params, F: FnOnce(&Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T>;
}

impl CachedExt for Connection {
    fn run<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn row<T, P: Params, F: FnOnce(&Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}

pub(crate) fn parse_json(text: &str, what: &'static str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| StoreError::CorruptJson {
        what,
        message: e.to_string(),
    })
}

pub(crate) fn parse_enum<T: std::str::FromStr>(text: &str, what: &'static str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>().map_err(|e| StoreError::CorruptJson {
        what,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests;
