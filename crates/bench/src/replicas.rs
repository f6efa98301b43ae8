//! `airlock-bench replicas`: several engines (replicas) on one PostgreSQL database, in this
//! process. Each session's turn is driven by one replica and each of its calls is approved
//! through the next replica (through itself when there is one), so a decision crosses replicas:
//! decisions per second, and the time from a decision to its call having run on the replica
//! that drives the turn (woken by the decision's notification).
//!
//! Each replica's decider is a thread (a decision is a blocking call) told of new items by
//! its replica's own event stream, as a person's client is (another replica's items reach it
//! through the database's notifications); with no news it reads its replica's inbox again every
//! `LOOK_AGAIN`, since another replica's events are best effort. A run that does not end within
//! `--timeout` fails with what each turn was doing; a decider that fails stops the run at once.

use airlock_core::DecidedBy;
use airlock_engine::{
    Database, DecisionRequest, Engine, EngineConfig, EngineEvent, InboxItem, ProviderSettings,
};
use airlock_store_postgres::{PostgresStore, REPLICA_CONNECTIONS};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use anyhow::{Context, bail};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

/// How often a decider with no news reads its replica's inbox anyway.
const LOOK_AGAIN: Duration = Duration::from_millis(500);

/// When each call's decision was sent (by tool call id), and how long until it had run.
#[derive(Default)]
struct Timings {
    sent: HashMap<String, Instant>,
    latencies: Vec<Duration>,
}

/// What the deciders share with the run.
struct Progress {
    total: usize,
    decided: AtomicUsize,
    /// From the first message to the last decision.
    last_decision: Mutex<Option<Duration>>,
    /// Set when the run ends (or fails): the deciders stop.
    stop: AtomicBool,
}

/// A pending item a decider is told of: its approval and its call.
struct Hint {
    approval_id: String,
    tool_call_id: Option<String>,
}

impl From<InboxItem> for Hint {
    fn from(item: InboxItem) -> Self {
        Self {
            approval_id: item.approval_id,
            tool_call_id: item.tool_call_id,
        }
    }
}

/// Which replica drives a bench session's turn (`bench-<n>`: replica n mod N).
fn driver_of(session: &str, replicas: usize) -> Option<usize> {
    session
        .strip_prefix("bench-")
        .and_then(|n| n.parse::<usize>().ok())
        .map(|n| n % replicas)
}

pub async fn replicas(
    counts: Vec<usize>,
    sessions: usize,
    rounds: usize,
    timeout: Duration,
) -> anyhow::Result<ExitCode> {
    for replicas in counts {
        run(replicas.max(1), sessions, rounds, timeout).await?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn run(
    replicas: usize,
    sessions: usize,
    rounds: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    // A fresh database per run, in the throwaway cluster (its server runs with fsync off).
    let url = airlock_testkit::postgres::cluster().database();
    eprintln!("replicas={replicas}: database {url}");
    let total = sessions * rounds;
    // One write per step; the steps are handed out in the order the turns ask, then each turn
    // gets its answer: `total` decisions in all.
    let replies = (0..total)
        .map(|n| {
            Reply::ToolCalls(vec![ScriptedCall::new(
                format!("c{n}"),
                "builtin__write_file",
                json!({"path": format!("f{n}.txt"), "content": "ok"}),
            )])
        })
        .chain((0..sessions).map(|_| Reply::Text("done".into())))
        .collect();
    let scripted = ScriptedModel::start(replies).await?;
    let mut dirs = Vec::new();
    let mut engines = Vec::new();
    for _ in 0..replicas {
        let dir = tempfile::tempdir().context("cannot make a temporary data directory")?;
        engines.push(Engine::open_on(
            EngineConfig {
                data_dir: dir.path().to_path_buf(),
                workspace: Some(dir.path().join("workspace")),
            },
            {
                let url = url.clone();
                Database::shared(move || PostgresStore::connect(&url, REPLICA_CONNECTIONS))
            },
        )?);
        dirs.push(dir);
    }
    engines[0].set_provider(ProviderSettings {
        base_url: scripted.base_url(),
        model: "bench".into(),
        ..ProviderSettings::default()
    })?;
    let name = |s: usize| format!("bench-{s}");
    let timings = Arc::new(Mutex::new(Timings::default()));
    // Each replica times the calls of the turns it drives.
    let watchers: Vec<_> = engines
        .iter()
        .enumerate()
        .map(|(index, engine)| {
            let mut events = engine.subscribe();
            let timings = timings.clone();
            tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(EngineEvent::ToolFinished {
                            session,
                            tool_call_id,
                            ..
                        }) if driver_of(&session, replicas) == Some(index) => {
                            let mut timings = timings.lock().unwrap_or_else(|p| p.into_inner());
                            if let Some(sent) = timings.sent.remove(&tool_call_id) {
                                timings.latencies.push(sent.elapsed());
                            }
                        }
                        Ok(_) => {}
                        Err(RecvError::Lagged(missed)) => {
                            eprintln!("replica {index}: the timer missed {missed} events");
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            })
        })
        .collect();

    let progress = Arc::new(Progress {
        total,
        decided: AtomicUsize::new(0),
        last_decision: Mutex::new(None),
        stop: AtomicBool::new(false),
    });
    let (failed, mut failures) = tokio::sync::mpsc::unbounded_channel::<anyhow::Error>();
    let started = Instant::now();
    // Replica r approves the calls of the turns replica r - 1 drives, told of them by its own
    // event stream (subscribed before the first message).
    let mut forwarders = Vec::new();
    let mut deciders = Vec::new();
    for (index, engine) in engines.iter().enumerate() {
        let drives = (index + replicas - 1) % replicas;
        let (hints, told) = mpsc::channel::<Option<Hint>>();
        let mut events = engine.subscribe();
        forwarders.push(tokio::spawn(async move {
            loop {
                let hint = match events.recv().await {
                    Ok(EngineEvent::ApprovalRequested { item })
                        if driver_of(&item.session, replicas) == Some(drives) =>
                    {
                        Some(Hint::from(*item))
                    }
                    Ok(_) => continue,
                    // Some were missed: the decider reads the inbox.
                    Err(RecvError::Lagged(_)) => None,
                    Err(RecvError::Closed) => return,
                };
                if hints.send(hint).is_err() {
                    return;
                }
            }
        }));
        let (engine, timings, progress, failed) = (
            engine.clone(),
            timings.clone(),
            progress.clone(),
            failed.clone(),
        );
        let runtime = tokio::runtime::Handle::current();
        deciders.push(std::thread::spawn(move || {
            let _entered = runtime.enter();
            let decider = Decider {
                index,
                drives,
                replicas,
                engine,
                timings,
                progress: progress.clone(),
                started,
            };
            if let Err(error) = decider.decide_all(&told) {
                progress.stop.store(true, Ordering::Release);
                let _ = failed.send(error.context(format!("replica {index}'s decider")));
            }
        }));
    }
    drop(failed);
    for s in 0..sessions {
        engines[s % replicas].send_message(&name(s), "write your files")?;
    }

    // Every turn ends, within the deadline, unless a decider failed first.
    let turns = async {
        let mut outcomes = Vec::with_capacity(sessions);
        for s in 0..sessions {
            outcomes.push(engines[s % replicas].wait_turn(&name(s)).await);
        }
        outcomes
    };
    let ended = tokio::select! {
        outcomes = tokio::time::timeout(timeout, turns) => outcomes.ok(),
        Some(error) = failures.recv() => {
            progress.stop.store(true, Ordering::Release);
            return Err(error);
        }
    };
    progress.stop.store(true, Ordering::Release);
    let Some(outcomes) = ended else {
        bail!(
            "the run did not end within {} s:\n{}",
            timeout.as_secs(),
            stuck(&engines, sessions, &progress)
        );
    };
    let all_ran = started.elapsed();
    for (s, outcome) in outcomes.into_iter().enumerate() {
        let outcome = outcome?;
        if outcome.status != airlock_core::TurnStatus::Completed {
            bail!(
                "{}: the turn ended {}: {:?}",
                name(s),
                outcome.status,
                outcome.error
            );
        }
    }
    for decider in deciders {
        decider
            .join()
            .map_err(|_| anyhow::anyhow!("a decider panicked"))?;
    }
    if let Ok(error) = failures.try_recv() {
        return Err(error);
    }
    watchers.iter().chain(&forwarders).for_each(|w| w.abort());
    let decided = progress.decided.load(Ordering::Acquire);
    let written: usize = dirs
        .iter()
        .map(|dir| std::fs::read_dir(dir.path().join("workspace")).map_or(0, |d| d.count()))
        .sum();
    if decided != total || written != total {
        bail!("{decided} decisions and {written} files written, of {total}");
    }
    let deciding = progress
        .last_decision
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .unwrap_or(all_ran);
    let latencies =
        std::mem::take(&mut timings.lock().unwrap_or_else(|p| p.into_inner()).latencies);
    println!(
        "replicas={replicas} sessions={sessions} decisions={total} decisions_per_s={:.1} all_ran_s={:.2}",
        total as f64 / deciding.as_secs_f64(),
        all_ran.as_secs_f64()
    );
    crate::report::report("decide_to_run", latencies, "ms");
    drop(engines);
    Ok(())
}

/// One replica's decider: approves the items of the turns replica `drives` drives.
struct Decider {
    index: usize,
    drives: usize,
    replicas: usize,
    engine: Engine,
    timings: Arc<Mutex<Timings>>,
    progress: Arc<Progress>,
    started: Instant,
}

impl Decider {
    /// Decides what it is told of (`None`: read the inbox), until every item is decided or the
    /// run stops.
    fn decide_all(&self, told: &mpsc::Receiver<Option<Hint>>) -> anyhow::Result<()> {
        let mut decided = HashSet::new();
        let progress = &self.progress;
        while progress.decided.load(Ordering::Acquire) < progress.total
            && !progress.stop.load(Ordering::Acquire)
        {
            let hints = match told.recv_timeout(LOOK_AGAIN) {
                Ok(Some(hint)) => vec![hint],
                Ok(None) | Err(RecvTimeoutError::Timeout) => self
                    .engine
                    .inbox()?
                    .into_iter()
                    .filter(|item| driver_of(&item.session, self.replicas) == Some(self.drives))
                    .map(Hint::from)
                    .collect(),
                Err(RecvTimeoutError::Disconnected) => {
                    bail!("replica {}'s events ended", self.index)
                }
            };
            for hint in hints {
                // Told of it twice (its event, and the inbox read before the event came).
                if !decided.insert(hint.approval_id.clone()) {
                    continue;
                }
                if let Some(call) = hint.tool_call_id {
                    self.timings
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .sent
                        .insert(call, Instant::now());
                }
                self.engine
                    .decide(
                        DecisionRequest::approve(hint.approval_id.clone()),
                        DecidedBy::Api,
                    )
                    .with_context(|| format!("approving {}", hint.approval_id))?;
                if progress.decided.fetch_add(1, Ordering::AcqRel) + 1 == progress.total {
                    *progress
                        .last_decision
                        .lock()
                        .unwrap_or_else(|p| p.into_inner()) = Some(self.started.elapsed());
                }
            }
        }
        Ok(())
    }
}

/// What each session was doing when the run was found stuck, and what waited in the inbox.
fn stuck(engines: &[Engine], sessions: usize, progress: &Progress) -> String {
    let mut report = format!(
        "{} of {} decided\n",
        progress.decided.load(Ordering::Acquire),
        progress.total
    );
    let pending = engines[0].inbox().unwrap_or_default();
    for s in 0..sessions {
        let name = format!("bench-{s}");
        let engine = &engines[s % engines.len()];
        let waiting: Vec<&str> = pending
            .iter()
            .filter(|item| item.session == name)
            .map(|item| item.approval_id.as_str())
            .collect();
        let _ = match engine.session(&name) {
            Ok(row) => writeln!(
                report,
                "{name} (replica {}): {:?} {:?}, pending {waiting:?}",
                s % engines.len(),
                row.status,
                row.last_error
            ),
            Err(error) => writeln!(report, "{name}: {error}"),
        };
    }
    report
}
