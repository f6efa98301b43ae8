//! The write-ahead log's upkeep: what each commit wrote, and checkpoints off the committing
//! thread.
//!
//! SQLite's own auto-checkpoint runs inside the COMMIT that crosses its threshold, so one
//! decision in every few dozen waited for hundreds of pages to be copied into the database file
//! and for that file's sync (it grows, so the sync commits the file system's journal too). Here
//! the commit only counts the pages it appended (SQLite's WAL hook reports them) and wakes a
//! checkpointer thread with its own connection once the log holds [`CHECKPOINT_PAGES`]. The log
//! starts again from its beginning only at a write that begins once every page in it is
//! copied; commits keep landing while a checkpoint copies, so the checkpointer copies what they
//! added in a second, short pass during which it holds the store's connection lock (writers
//! wait for that pass: a few pages and two syncs, once per log). From then on commits overwrite
//! the log in place instead of growing it, and `journal_size_limit` keeps it bounded after a
//! burst without shrinking it below its usual size.

use crate::WriteCounters;
use rusqlite::Connection;
use std::cell::Cell;
use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak, mpsc};
use std::thread::JoinHandle;

/// Pages in the log that wake the checkpointer (SQLite's default auto-checkpoint threshold).
pub(crate) const CHECKPOINT_PAGES: u32 = 1000;

/// After a checkpoint that commits overtook (it could not copy their pages, so the log cannot
/// start again yet), the checkpointer is woken again once this many more pages were appended:
/// each pass copies only what arrived during the one before, and each costs two syncs.
const CHECKPOINT_AGAIN_PAGES: u64 = CHECKPOINT_PAGES as u64 / 4;

/// The log's file is truncated back to this size when it restarts after a burst (a batch of
/// thousands of decisions) made it larger; below it, it keeps its size and is overwritten in
/// place. About four times the log at [`CHECKPOINT_PAGES`] 4 KiB pages.
pub(crate) const JOURNAL_SIZE_LIMIT: i64 = 16 * 1024 * 1024;

thread_local! {
    /// Pages the log holds after the last commit on this thread, as the WAL hook reported it.
    /// The hook runs inside COMMIT on the committing thread, and the store reads this right
    /// after the commit returns, under the connection's lock.
    static LOG_PAGES: Cell<Option<u32>> = const { Cell::new(None) };
}

/// The WAL hook: notes how many pages the log holds after this commit (no checkpoint here).
fn note_log_pages(_wal: &rusqlite::hooks::Wal, pages: c_int) -> rusqlite::Result<()> {
    LOG_PAGES.with(|cell| cell.set(Some(u32::try_from(pages).unwrap_or(0))));
    Ok(())
}

/// Installs the hook on the store's connection. Replaces SQLite's auto-checkpoint, which is
/// itself a WAL hook.
pub(crate) fn install(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_size_limit", JOURNAL_SIZE_LIMIT)?;
    conn.wal_hook(Some(note_log_pages));
    Ok(())
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    durable_commits: AtomicU64,
    pages: AtomicU64,
    checkpoints: AtomicU64,
    checkpointed_pages: AtomicU64,
}

/// The log's bookkeeping for one store: counters, the pages in the log after the last commit,
/// and the checkpointer thread.
#[derive(Debug)]
pub(crate) struct Log {
    counters: Arc<Counters>,
    /// Pages in the log after the last commit (changed only under the connection's lock).
    in_log: AtomicU64,
    /// The log's length at which the checkpointer is woken next (idem).
    wake_at: AtomicU64,
    /// Wakes the checkpointer; `None` once it is stopped.
    wake: Option<mpsc::SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Held by tests to keep the checkpointer from checkpointing.
    #[cfg(test)]
    pub(crate) hold: Arc<std::sync::Mutex<()>>,
}

impl Log {
    /// Starts the checkpointer with its own connection to `path` (already migrated, in WAL
    /// mode). A checkpoint that fails (a full or failing disk) leaves the pages in the log,
    /// where they are as durable as before; the next wake tries again.
    pub(crate) fn start(path: &Path, writers: Weak<Mutex<Connection>>) -> rusqlite::Result<Self> {
        let counters = Arc::new(Counters::default());
        let conn = Connection::open(path)?;
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let shared = counters.clone();
        #[cfg(test)]
        let hold = Arc::new(std::sync::Mutex::new(()));
        #[cfg(test)]
        let held = hold.clone();
        let thread = std::thread::Builder::new()
            .name("airlock-checkpoint".into())
            .spawn(move || {
                // What the previous checkpoint saw: the log's pages and how many of them had
                // been copied (SQLite reports totals for the log, not for one checkpoint).
                let mut seen = (0, 0);
                // One pass, counting what it copied.
                let mut pass = || match checkpoint(&conn) {
                    Ok((in_log, copied)) => {
                        // A shorter log than last time: it started again since.
                        let before = if in_log >= seen.0 && copied >= seen.1 {
                            seen.1
                        } else {
                            0
                        };
                        let new = copied.saturating_sub(before);
                        seen = (in_log, copied);
                        if new > 0 {
                            shared.checkpoints.fetch_add(1, Ordering::Relaxed);
                            shared.checkpointed_pages.fetch_add(new, Ordering::Relaxed);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "checkpoint failed; the log keeps its pages");
                    }
                };
                while woken.recv().is_ok() {
                    #[cfg(test)]
                    let _held = held.lock().unwrap_or_else(|p| p.into_inner());
                    // The long pass, while commits go on.
                    pass();
                    // What they added meanwhile, with writers held back, so that the log is
                    // wholly copied when the next write begins (nothing to copy: no sync).
                    let Some(writers) = writers.upgrade() else {
                        break;
                    };
                    let _writing = writers.lock().unwrap_or_else(|p| p.into_inner());
                    pass();
                }
            })
            .map_err(|e| {
                rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                    Some(format!("cannot start the checkpointer: {e}")),
                )
            })?;
        Ok(Self {
            counters,
            in_log: AtomicU64::new(0),
            wake_at: AtomicU64::new(u64::from(CHECKPOINT_PAGES)),
            wake: Some(wake),
            thread: Some(thread),
            #[cfg(test)]
            hold,
        })
    }

    /// Before a write transaction: forgets what an earlier, failed commit may have noted.
    pub(crate) fn begin(&self) {
        LOG_PAGES.with(|cell| cell.set(None));
    }

    /// After a commit: counts the pages it appended and wakes the checkpointer when the log is
    /// long enough. Called under the connection's lock.
    pub(crate) fn committed(&self, durable: bool) {
        self.counters.commits.fetch_add(1, Ordering::Relaxed);
        if durable {
            self.counters
                .durable_commits
                .fetch_add(1, Ordering::Relaxed);
        }
        // No hook call: the transaction wrote nothing.
        let Some(now) = LOG_PAGES.with(Cell::take).map(u64::from) else {
            return;
        };
        let before = self.in_log.swap(now, Ordering::Relaxed);
        // Fewer pages than before: this commit started the log again from its beginning.
        let appended = if now >= before {
            now - before
        } else {
            self.wake_at
                .store(u64::from(CHECKPOINT_PAGES), Ordering::Relaxed);
            now
        };
        self.counters.pages.fetch_add(appended, Ordering::Relaxed);
        if now >= self.wake_at.load(Ordering::Relaxed)
            && let Some(wake) = &self.wake
        {
            self.wake_at
                .store(now + CHECKPOINT_AGAIN_PAGES, Ordering::Relaxed);
            // Full: a wake is already pending.
            let _ = wake.try_send(());
        }
    }

    /// Pages in the log after the last commit.
    #[cfg(test)]
    pub(crate) fn in_log(&self) -> u64 {
        self.in_log.load(Ordering::Relaxed)
    }

    pub(crate) fn counters(&self) -> WriteCounters {
        let c = &self.counters;
        WriteCounters {
            commits: c.commits.load(Ordering::Relaxed),
            durable_commits: c.durable_commits.load(Ordering::Relaxed),
            pages: c.pages.load(Ordering::Relaxed),
            checkpoints: c.checkpoints.load(Ordering::Relaxed),
            checkpointed_pages: c.checkpointed_pages.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Log {
    /// Stops the checkpointer and closes its connection first, so that the store's own
    /// connection is the last one and checkpoints the whole log when it closes.
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One passive checkpoint (it never blocks a writer): the pages in the log, and how many of
/// them are now copied into the database file.
fn checkpoint(conn: &Connection) -> rusqlite::Result<(u64, u64)> {
    let (_busy, in_log, copied): (i64, i64, i64) =
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?;
    Ok((
        u64::try_from(in_log).unwrap_or(0),
        u64::try_from(copied).unwrap_or(0),
    ))
}
