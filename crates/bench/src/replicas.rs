//! `airlock-bench replicas`: several engines (replicas) on one PostgreSQL database, in this
//! process. Each session's turn is driven by one replica and each of its calls is approved
//! through the next replica (through itself when there is one), so a decision crosses replicas:
//! decisions per second, and the time from a decision to its call having run on the replica
//! that drives the turn (woken by the decision's notification).

use airlock_core::DecidedBy;
use airlock_engine::{
    Database, DecisionRequest, Engine, EngineConfig, EngineEvent, ProviderSettings,
};
use airlock_store_postgres::{PostgresStore, REPLICA_CONNECTIONS};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use anyhow::{Context, bail};
use serde_json::json;
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When each call's decision was sent (by tool call id), and how long until it had run.
#[derive(Default)]
struct Timings {
    sent: HashMap<String, Instant>,
    latencies: Vec<Duration>,
}

pub async fn replicas(
    counts: Vec<usize>,
    sessions: usize,
    rounds: usize,
) -> anyhow::Result<ExitCode> {
    for replicas in counts {
        run(replicas.max(1), sessions, rounds).await?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn run(replicas: usize, sessions: usize, rounds: usize) -> anyhow::Result<()> {
    // A fresh database per run, in the throwaway cluster (its server runs with fsync off).
    let url = airlock_testkit::postgres::cluster().database();
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
    let driver_of = move |session: &str| {
        session
            .strip_prefix("bench-")
            .and_then(|n| n.parse::<usize>().ok())
            .map(|n| n % replicas)
    };
    let timings = Arc::new(Mutex::new(Timings::default()));
    // Each replica times the calls of the turns it drives.
    let watchers: Vec<_> = engines
        .iter()
        .enumerate()
        .map(|(index, engine)| {
            let mut events = engine.subscribe();
            let timings = timings.clone();
            tokio::spawn(async move {
                while let Ok(event) = events.recv().await {
                    if let EngineEvent::ToolFinished {
                        session,
                        tool_call_id,
                        ..
                    } = event
                        && driver_of(&session) == Some(index)
                    {
                        let mut timings = timings.lock().unwrap_or_else(|p| p.into_inner());
                        if let Some(sent) = timings.sent.remove(&tool_call_id) {
                            timings.latencies.push(sent.elapsed());
                        }
                    }
                }
            })
        })
        .collect();

    let started = Instant::now();
    for s in 0..sessions {
        engines[s % replicas].send_message(&name(s), "write your files")?;
    }
    // Replica r approves the calls of the turns replica r - 1 drives.
    let runtime = tokio::runtime::Handle::current();
    // The steps go to whichever turn asks first: a replica's share is not known in advance, so
    // every decider goes on until all `total` are decided.
    let decided_all = std::sync::atomic::AtomicUsize::new(0);
    let decided = std::thread::scope(|scope| {
        let deciders: Vec<_> = engines
            .iter()
            .enumerate()
            .map(|(index, engine)| {
                let (timings, runtime) = (timings.clone(), runtime.clone());
                let decided_all = &decided_all;
                let drives = (index + replicas - 1) % replicas;
                scope.spawn(move || -> anyhow::Result<usize> {
                    let _entered = runtime.enter();
                    let mut decided = 0;
                    while decided_all.load(std::sync::atomic::Ordering::Acquire) < total {
                        if started.elapsed() > Duration::from_secs(600) {
                            bail!("replica {index}: the decisions took more than 600 s");
                        }
                        let mine: Vec<_> = engine
                            .inbox()?
                            .into_iter()
                            .filter(|item| driver_of(&item.session) == Some(drives))
                            .collect();
                        if mine.is_empty() {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        for item in mine {
                            if let Some(call) = &item.tool_call_id {
                                timings
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .sent
                                    .insert(call.clone(), Instant::now());
                            }
                            engine.decide(
                                DecisionRequest::approve(item.approval_id.clone()),
                                DecidedBy::Api,
                            )?;
                            decided += 1;
                            decided_all.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                        }
                    }
                    Ok(decided)
                })
            })
            .collect();
        deciders
            .into_iter()
            .map(|d| {
                d.join()
                    .map_err(|_| anyhow::anyhow!("a decider panicked"))?
            })
            .sum::<anyhow::Result<usize>>()
    })?;
    let deciding = started.elapsed();
    for s in 0..sessions {
        let outcome = engines[s % replicas].wait_turn(&name(s)).await?;
        if outcome.status != "completed" {
            bail!(
                "{}: the turn ended {}: {:?}",
                name(s),
                outcome.status,
                outcome.error
            );
        }
    }
    let all_ran = started.elapsed();
    watchers.iter().for_each(|w| w.abort());
    let written: usize = dirs
        .iter()
        .map(|dir| std::fs::read_dir(dir.path().join("workspace")).map_or(0, |d| d.count()))
        .sum();
    if decided != total || written != total {
        bail!("{decided} decisions and {written} files written, of {total}");
    }
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
