//! The store's one error type: what went wrong said in the engine's words, never a backend's
//! type, so the engine decides the same way whichever database is under it.

use std::path::PathBuf;

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
    /// The caller's own check refused the decision (an edit that fails the tool's schema…).
    #[error("{0}")]
    Refused(String),
    /// The database cannot be reached, or refused a write whose fate is unknown (the disk
    /// under SQLite, a lost connection to PostgreSQL): decide nothing; retry later.
    #[error("{0}")]
    Unavailable(String),
    /// Another writer changed the same rows first (a serialization failure, a deadlock, a busy
    /// database): nothing of this operation was written; run it again.
    #[error("the database was changed by another writer at the same time ({0}); try again")]
    Conflict(String),
    /// The database refused the statement itself (a constraint, a bug): nothing was written.
    #[error("database error: {0}")]
    Database(String),
    #[error("{0}")]
    Invalid(String),
    /// A counted grant had no use left when the step that relied on it was recorded (another
    /// step took the last one first): nothing of that step was written; decide it again.
    #[error("grant {0} has no use left")]
    GrantUsedUp(String),
    /// An approved deferred call was claimed to run before: it runs at most once.
    #[error("the call {id} was already claimed to run at {at}; it runs at most once")]
    AlreadyClaimed { id: String, at: String },
    /// The writer's hold of this work is gone: its lease ran out and another replica took the
    /// work over. Nothing was written; the writer drops the work (it does not fail it).
    #[error("this replica no longer holds {work} {key}: another replica took it over")]
    LeaseLost { work: &'static str, key: String },
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

    /// The database is unavailable: whether this write reached it is unknown, and nothing is
    /// decided until it is back.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }

    /// Running the operation again may succeed.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict(_))
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;
