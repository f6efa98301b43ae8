//! The PostgreSQL schema's own migrations, in order: the schema version is how many a database
//! has. Applied in one transaction under an advisory lock, so replicas that start together
//! migrate once; a database from a newer Airlock is refused before anything is changed.

use crate::error::Error;
use airlock_store_port::StoreError;

/// Every schema change in order (`schema_N.sql` is the N-th).
const MIGRATIONS: &[&str] = &[
    include_str!("schema_1.sql"),
    include_str!("schema_2.sql"),
    include_str!("schema_3.sql"),
    include_str!("schema_4.sql"),
    include_str!("schema_5.sql"),
    include_str!("schema_6_thoughts.sql"),
];

/// The advisory lock every migrating replica takes (any constant of Airlock's own).
const MIGRATION_LOCK: i64 = 0x0041_6972_6c6f_636b;

/// Brings the schema up to date.
pub(crate) async fn run(client: &mut deadpool_postgres::Client) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS airlock_schema (version BIGINT NOT NULL)")
        .await?;
    let found = match tx
        .query_opt("SELECT version FROM airlock_schema", &[])
        .await?
    {
        Some(row) => row.try_get::<_, i64>(0)?,
        None => {
            tx.execute("INSERT INTO airlock_schema (version) VALUES (0)", &[])
                .await?;
            0
        }
    };
    let supported = MIGRATIONS.len() as i64;
    if found > supported {
        return Err(StoreError::NewerDatabase {
            path: "postgres".into(),
            found,
            supported,
        }
        .into());
    }
    for sql in MIGRATIONS.iter().skip(found as usize) {
        tx.batch_execute(sql).await?;
    }
    tx.execute("UPDATE airlock_schema SET version = $1", &[&supported])
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The database's schema version.
pub(crate) async fn version(client: &deadpool_postgres::Client) -> Result<i64, Error> {
    let row = client
        .query_one("SELECT version FROM airlock_schema", &[])
        .await?;
    Ok(row.try_get(0)?)
}
