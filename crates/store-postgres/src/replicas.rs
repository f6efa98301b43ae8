//! Several engines (replicas) on one database: leases, held work, the policy's generation, and
//! what the replicas tell each other through LISTEN/NOTIFY — decisions (notified by the
//! transaction that made them, so delivered exactly when they are committed) and events
//! (published after the fact; one too large for a notification's payload goes through
//! `airlock_outbox`). Policy changes need no notification: each replica reads the generation
//! (moved by schema 2's triggers) before it uses what it cached.

use crate::PostgresStore;
use crate::error::Error;
use airlock_store_port::{self as port, Fence, Replicas, Signal, Work};
use deadpool_postgres::{Pool, Transaction};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// Decided requests' ids (comma separated).
const DECIDED: &str = "airlock_decided";
/// Events: `<replica id> <event JSON>` or `<replica id> @<outbox row>`.
const EVENTS: &str = "airlock_events";
/// A notification's payload must stay under 8000 bytes; the rest goes through the outbox.
const MAX_PAYLOAD: usize = 7000;
/// How long an event too large for a notification stays in the outbox.
const OUTBOX_KEEP: &str = "10 minutes";
/// How long the listener waits before listening again after a lost connection.
const RELISTEN_AFTER: Duration = Duration::from_millis(500);

/// Tells every listening replica, when `tx` commits, that these requests were decided.
pub(crate) async fn notify_decided(tx: &Transaction<'_>, ids: &[&str]) -> Result<(), Error> {
    let mut chunk = String::new();
    for id in ids {
        if !chunk.is_empty() && chunk.len() + id.len() + 1 > MAX_PAYLOAD {
            tx.execute("SELECT pg_notify($1, $2)", &[&DECIDED, &chunk])
                .await?;
            chunk.clear();
        }
        if !chunk.is_empty() {
            chunk.push(',');
        }
        chunk.push_str(id);
    }
    if !chunk.is_empty() {
        tx.execute("SELECT pg_notify($1, $2)", &[&DECIDED, &chunk])
            .await?;
    }
    Ok(())
}

/// Refuses the write of `tx` unless `replica` still holds `fence`'s work under the same hold
/// (another replica took it over if not: [`port::StoreError::LeaseLost`]). The hold's row stays
/// locked until `tx` ends, so a take-over (which deletes it) waits for this write's commit and
/// then drives the work from what it wrote; a write after the take-over is never made.
pub(crate) async fn check_fence(
    tx: &Transaction<'_>,
    replica: &str,
    fence: Option<&Fence>,
) -> Result<(), Error> {
    let Some(fence) = fence else {
        return Ok(());
    };
    let held = tx
        .query_opt(
            format!("{THE_HOLD} FOR SHARE").as_str(),
            &[&fence.work.as_str(), &fence.key, &replica, &fence.token],
        )
        .await?;
    match held {
        Some(_) => Ok(()),
        None => Err(Error::Store(port::StoreError::LeaseLost {
            work: fence.work.as_str(),
            key: fence.key.clone(),
        })),
    }
}

/// The hold a fence names: its work, key, replica and token.
const THE_HOLD: &str = "SELECT 1 FROM airlock_held
     WHERE work = $1 AND key = $2 AND replica = $3 AND token = $4";

/// Publishes the events `outgoing` receives, in order, until the store is dropped.
pub(crate) async fn publish_events(
    pool: Pool,
    replica: String,
    mut outgoing: mpsc::UnboundedReceiver<String>,
) {
    while let Some(event) = outgoing.recv().await {
        // Best effort: a lost event is a hint lost; every waiter reads the store again.
        let _ = publish_one(&pool, &replica, &event).await;
    }
}

async fn publish_one(pool: &Pool, replica: &str, event: &str) -> Result<(), Error> {
    let client = pool.get().await?;
    let payload = if event.len() + replica.len() < MAX_PAYLOAD {
        format!("{replica} {event}")
    } else {
        client
            .execute(
                format!(
                    "DELETE FROM airlock_outbox WHERE created_at < now() - interval '{OUTBOX_KEEP}'"
                )
                .as_str(),
                &[],
            )
            .await?;
        let id: i64 = client
            .query_one(
                "INSERT INTO airlock_outbox (body) VALUES ($1) RETURNING id",
                &[&event],
            )
            .await?
            .try_get(0)?;
        format!("{replica} @{id}")
    };
    client
        .execute("SELECT pg_notify($1, $2)", &[&EVENTS, &payload])
        .await?;
    Ok(())
}

/// Listens until the store is dropped, again after every lost connection.
pub(crate) async fn listen(
    config: tokio_postgres::Config,
    pool: Pool,
    replica: String,
    deliver: Arc<dyn Fn(Signal) + Send + Sync>,
    listening: tokio::sync::oneshot::Sender<()>,
) {
    let mut listening = Some(listening);
    loop {
        let _ = listen_once(&config, &pool, &replica, &*deliver, &mut listening).await;
        tokio::time::sleep(RELISTEN_AFTER).await;
    }
}

/// One listening connection, until it is lost.
async fn listen_once(
    config: &tokio_postgres::Config,
    pool: &Pool,
    replica: &str,
    deliver: &(dyn Fn(Signal) + Send + Sync),
    listening: &mut Option<tokio::sync::oneshot::Sender<()>>,
) -> Result<(), Error> {
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
    let (notified, mut notifications) = mpsc::unbounded_channel();
    // The connection must be polled for the client's own statements to be answered too.
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notification) = message
                && notified.send(notification).is_err()
            {
                return;
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {DECIDED}; LISTEN {EVENTS}"))
        .await?;
    match listening.take() {
        Some(first) => {
            let _ = first.send(());
        }
        // Whatever was notified while no connection listened is lost: look again.
        None => deliver(Signal::Resync),
    }
    while let Some(notification) = notifications.recv().await {
        match notification.channel() {
            DECIDED => deliver(Signal::Decided(
                notification
                    .payload()
                    .split(',')
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .collect(),
            )),
            EVENTS => {
                let Some((from, event)) = notification.payload().split_once(' ') else {
                    continue;
                };
                if from == replica {
                    continue;
                }
                match event.strip_prefix('@').map(str::parse::<i64>) {
                    None => deliver(Signal::Event(event.to_string())),
                    Some(Ok(id)) => {
                        let client = pool.get().await?;
                        if let Some(row) = client
                            .query_opt("SELECT body FROM airlock_outbox WHERE id = $1", &[&id])
                            .await?
                        {
                            deliver(Signal::Event(row.try_get(0)?));
                        }
                    }
                    Some(Err(_)) => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

impl Replicas for PostgresStore {
    fn replica_id(&self) -> &str {
        &self.replica
    }

    fn renew_lease(&self, ttl: Duration) -> port::Result<bool> {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let joined = self.joined.load(std::sync::atomic::Ordering::Acquire);
        let renewed = self.transaction(async |tx| {
            if !joined {
                tx.execute(
                    "INSERT INTO airlock_replicas (id, lease_until)
                     VALUES ($1, now() + $2::bigint * interval '1 millisecond')",
                    &[&self.replica, &ttl_ms],
                )
                .await?;
                return Ok(true);
            }
            Ok(tx
                .execute(
                    "UPDATE airlock_replicas
                     SET lease_until = now() + $2::bigint * interval '1 millisecond'
                     WHERE id = $1",
                    &[&self.replica, &ttl_ms],
                )
                .await?
                == 1)
        })?;
        if !renewed {
            // Taken over: join again as a replica that holds nothing.
            self.joined
                .store(false, std::sync::atomic::Ordering::Release);
            self.renew_lease(ttl)?;
            return Ok(false);
        }
        self.joined
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(true)
    }

    fn hold(&self, work: Work, key: &str) -> port::Result<Fence> {
        self.transaction(async |tx| {
            // Held already: the same hold, the same token.
            let token: i64 = tx
                .query_one(
                    "INSERT INTO airlock_held (work, key, replica) VALUES ($1, $2, $3)
                     ON CONFLICT (work, key, replica) DO UPDATE SET token = airlock_held.token
                     RETURNING token",
                    &[&work.as_str(), &key, &self.replica],
                )
                .await?
                .try_get(0)?;
            Ok(Fence {
                work,
                key: key.to_string(),
                token,
            })
        })
    }

    fn release(&self, work: Work, key: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "DELETE FROM airlock_held WHERE work = $1 AND key = $2 AND replica = $3",
                &[&work.as_str(), &key, &self.replica],
            )
            .await?;
            Ok(())
        })
    }

    fn take_expired(&self) -> port::Result<Vec<(Work, String)>> {
        self.transaction(async |tx| {
            let dead: Vec<String> = tx
                .query(
                    "DELETE FROM airlock_replicas WHERE lease_until < now() RETURNING id",
                    &[],
                )
                .await?
                .iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()?;
            // Also what a replica held that has no lease at all (it never joined, or its
            // lease was taken while it still wrote).
            let rows = tx
                .query(
                    "DELETE FROM airlock_held WHERE replica = ANY($1)
                        OR replica NOT IN (SELECT id FROM airlock_replicas)
                     RETURNING work, key",
                    &[&dead],
                )
                .await?;
            let mut taken = Vec::with_capacity(rows.len());
            for row in &rows {
                let work: String = row.try_get(0)?;
                if let Some(work) = Work::parse(&work) {
                    taken.push((work, row.try_get(1)?));
                }
            }
            Ok(taken)
        })
    }

    fn holds(&self, fence: &Fence) -> port::Result<bool> {
        self.transaction(async |tx| {
            Ok(tx
                .query_opt(
                    THE_HOLD,
                    &[
                        &fence.work.as_str(),
                        &fence.key,
                        &self.replica,
                        &fence.token,
                    ],
                )
                .await?
                .is_some())
        })
    }

    fn held_by_live(&self, work: Work, key: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            Ok(tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM airlock_held h JOIN airlock_replicas r
                        ON r.id = h.replica
                     WHERE h.work = $1 AND h.key = $2 AND r.lease_until >= now())",
                    &[&work.as_str(), &key],
                )
                .await?
                .try_get(0)?)
        })
    }

    fn policy_generation(&self) -> port::Result<i64> {
        self.block_on(async {
            let client = self.pool.get().await?;
            Ok(client
                .query_one("SELECT generation FROM airlock_policy", &[])
                .await?
                .try_get(0)?)
        })
    }

    fn publish(&self, event_json: &str) {
        let _ = self.outgoing.send(event_json.to_string());
    }

    fn listen(&self, deliver: Box<dyn Fn(Signal) + Send + Sync>) -> port::Result<()> {
        let Some(runtime) = &self.runtime else {
            return Err(port::StoreError::Unavailable("the store is closed".into()));
        };
        let (listening, listened) = tokio::sync::oneshot::channel();
        runtime.spawn(listen(
            self.config.clone(),
            self.pool.clone(),
            self.replica.clone(),
            Arc::from(deliver),
            listening,
        ));
        // Listening before this returns: nothing committed after it is missed.
        self.block_on(async {
            tokio::time::timeout(crate::POOL_WAIT, listened)
                .await
                .ok()
                .and_then(Result::ok)
                .ok_or_else(|| {
                    Error::Store(port::StoreError::Unavailable(
                        "cannot listen for the other replicas' notifications".into(),
                    ))
                })
        })
    }
}
