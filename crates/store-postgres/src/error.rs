//! What goes wrong inside the adapter, turned into the port's words at its edge.

use airlock_store_port::StoreError;
use tokio_postgres::error::SqlState;

#[derive(Debug)]
pub(crate) enum Error {
    /// Said in the port's words already (a refusal, corrupt data).
    Store(StoreError),
    Postgres(tokio_postgres::Error),
    Pool(deadpool_postgres::PoolError),
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::Postgres(error)
    }
}

impl From<deadpool_postgres::PoolError> for Error {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        Self::Pool(error)
    }
}

impl Error {
    /// The port's error: a lost or refused connection is `Unavailable` (whether a commit in
    /// flight reached the database is unknown), a serialization failure or deadlock is a
    /// `Conflict` (nothing was written; run it again), any other refusal of a statement a
    /// `Database` error.
    pub(crate) fn into_port(self) -> StoreError {
        match self {
            Self::Store(error) => error,
            Self::Pool(error) => {
                StoreError::Unavailable(format!("PostgreSQL cannot be reached: {error}"))
            }
            Self::Postgres(error) => {
                let text = describe(&error);
                match error.code() {
                    Some(code)
                        if *code == SqlState::T_R_SERIALIZATION_FAILURE
                            || *code == SqlState::T_R_DEADLOCK_DETECTED
                            || *code == SqlState::LOCK_NOT_AVAILABLE =>
                    {
                        StoreError::Conflict(text)
                    }
                    Some(code) if is_unavailable(code.code()) => {
                        StoreError::Unavailable(format!("PostgreSQL is unavailable: {text}"))
                    }
                    Some(_) => StoreError::Database(text),
                    // No answer from the server: the connection broke.
                    None if connection_lost(&error) => {
                        StoreError::Unavailable(format!("PostgreSQL is unavailable: {text}"))
                    }
                    // The client's own refusal (a row that is not there, a type that differs).
                    None => StoreError::Database(text),
                }
            }
        }
    }
}

/// SQLSTATE classes of a server that cannot serve now: connection exceptions (08), not enough
/// resources (53), an operator's shutdown or a crash (57P), a system error (58).
fn is_unavailable(code: &str) -> bool {
    ["08", "53", "57P", "58"]
        .iter()
        .any(|class| code.starts_with(class))
}

/// The connection is closed or its socket failed.
fn connection_lost(error: &tokio_postgres::Error) -> bool {
    error.is_closed()
        || std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

/// The server's own message where it sent one (tokio-postgres says only "db error").
fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => error.to_string(),
    }
}
