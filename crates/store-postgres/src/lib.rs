//! The store port on PostgreSQL: a team's one shared database, reached through a pool of
//! connections (deadpool-postgres over tokio-postgres), with migrations of its own.
//!
//! The port is synchronous (see `airlock-store-port`): each operation runs its transaction on
//! this adapter's own small tokio runtime, where the pool's connections live, and the caller
//! waits for it, as a SQLite call waits for its disk. Every operation is one transaction; a
//! lost connection or a full pool is `Unavailable` (decide nothing, retry later), a
//! serialization failure or deadlock `Conflict` (run it again).

mod agent_tokens;
mod agents;
mod approvals;
mod audit;
mod calls;
mod devices;
mod error;
mod grants;
mod history;
mod hosted;
mod migrations;
mod pins;
mod replicas;
mod requests;
mod rules;
mod servers;
mod sessions;
mod settings;
mod team;
mod tool_settings;

use airlock_store_port as port;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Transaction};
use error::Error;
use std::time::Duration;

/// How long an operation waits for a free connection, or for a new one, before the database
/// counts as unavailable.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// Connections each replica (`airlock serve --database-url`) keeps to PostgreSQL.
pub const REPLICA_CONNECTIONS: usize = 16;

/// The store on a PostgreSQL database.
pub struct PostgresStore {
    pool: Pool,
    /// Where the pool connects: the listening connection (`replicas`) is one of its own.
    config: tokio_postgres::Config,
    /// This store's replica id among the engines on the database (`replicas`).
    replica: String,
    /// Whether this replica's lease row was made (after that it is only renewed).
    joined: std::sync::atomic::AtomicBool,
    /// The events to tell the other replicas, published in order by a task of the runtime.
    outgoing: tokio::sync::mpsc::UnboundedSender<String>,
    /// Runs the pool's connections; shut down in the background on drop (dropping a runtime
    /// inside another one's task is not allowed).
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://…` or `host=… user=… dbname=…`; a host that is a path is a
    /// Unix socket's folder) and brings its schema up to date.
    pub fn connect(url: &str, max_connections: usize) -> port::Result<Self> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| port::StoreError::Open {
            path: "postgres".into(),
            message: format!("{e}"),
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("airlock-postgres")
            .enable_all()
            .build()
            .map_err(|e| port::StoreError::Unavailable(e.to_string()))?;
        let manager = Manager::from_config(
            config.clone(),
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .build()
            .map_err(|e| port::StoreError::Unavailable(e.to_string()))?;
        let replica = airlock_core::ids::new_id("replica");
        let (outgoing, events) = tokio::sync::mpsc::unbounded_channel();
        runtime.spawn(replicas::publish_events(
            pool.clone(),
            replica.clone(),
            events,
        ));
        let store = Self {
            pool,
            config,
            replica,
            joined: std::sync::atomic::AtomicBool::new(false),
            outgoing,
            runtime: Some(runtime),
        };
        store.block_on(async {
            let mut client = store.pool.get().await?;
            migrations::run(&mut client).await
        })?;
        Ok(store)
    }

    /// The schema version of the database: how many of this adapter's migrations it has.
    pub fn schema_version(&self) -> port::Result<i64> {
        self.block_on(async {
            let client = self.pool.get().await?;
            migrations::version(&client).await
        })
    }

    /// Runs `work` on the calling thread with this adapter's runtime entered (so the pool can
    /// open connections on it), and turns its error into the port's.
    ///
    /// The caller is often a tokio task (a turn, an API handler) that runs many operations in
    /// one poll. `unconstrained` keeps that task's cooperative budget (128 ready polls of tokio
    /// resources) out of the wait: once it ran out, the pool's semaphore would answer "not
    /// yet" and wake at once, for ever, and this thread would spin without end.
    fn block_on<T>(&self, work: impl Future<Output = Result<T, Error>>) -> port::Result<T> {
        let Some(runtime) = &self.runtime else {
            return Err(port::StoreError::Unavailable("the store is closed".into()));
        };
        let _entered = runtime.enter();
        futures::executor::block_on(tokio::task::unconstrained(work)).map_err(Error::into_port)
    }

    /// Runs `work` in one transaction, committed only if it succeeds.
    fn transaction<T>(
        &self,
        work: impl AsyncFnOnce(&Transaction<'_>) -> Result<T, Error>,
    ) -> port::Result<T> {
        self.block_on(async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let value = work(&tx).await?;
            tx.commit().await?;
            Ok(value)
        })
    }
}

/// Every operation of the port: the engine can hold this store as it holds SQLite's, and one
/// of several engines on the same database.
impl port::Store for PostgresStore {
    fn replicas(&self) -> Option<&dyn port::Replicas> {
        Some(self)
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Stored JSON read back.
fn parse_json(text: &str, what: &'static str) -> Result<serde_json::Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::Store(port::StoreError::CorruptJson {
            what,
            message: e.to_string(),
        })
    })
}

/// A stored enum's text read back.
fn parse_enum<T: std::str::FromStr>(text: &str, what: &'static str) -> Result<T, Error>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>().map_err(|e| {
        Error::Store(port::StoreError::CorruptJson {
            what,
            message: e.to_string(),
        })
    })
}
