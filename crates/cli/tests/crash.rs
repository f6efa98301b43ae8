//! Crash safety: the real `airlock serve` is killed with SIGKILL at random points while a
//! session proposes a command, a person approves it and the command runs; after each restart
//! the database and the command's own log must show that:
//!
//! - no decision the API acknowledged was lost;
//! - no tool call ran twice (each run appends one line; lines ≤ calls ever claimed to run);
//! - nothing is marked succeeded that did not run;
//! - no approval is left pending for a call that already ran.
//!
//! `cargo test` runs 50 cycles; `AIRLOCK_CRASH_CYCLES=1000 cargo test -p airlock-cli --test
//! crash -- --nocapture` runs more and prints the figures (RELIABILITY.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_testkit::{Fallback, ScriptedModel};
use common::{Engine, airlock, use_model};
use rand::Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the database says after a crash.
#[derive(Debug, Default)]
struct Seen {
    approved: BTreeSet<String>,
    claimed: usize,
    succeeded: usize,
    pending_but_ran: usize,
}

fn read_db(data_dir: &Path) -> Seen {
    let conn = rusqlite::Connection::open(data_dir.join("airlock.db")).unwrap();
    let ids = |sql: &str| -> BTreeSet<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let count =
        |sql: &str| -> usize { conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize };
    Seen {
        approved: ids("SELECT approval_id FROM approval_requests WHERE status = 'approved'"),
        claimed: count("SELECT COUNT(*) FROM tool_calls WHERE invoked_at IS NOT NULL"),
        succeeded: count("SELECT COUNT(*) FROM tool_calls WHERE state = 'succeeded'"),
        pending_but_ran: count(
            "SELECT COUNT(*) FROM approval_requests a JOIN tool_calls c ON c.id = a.tool_call_id
             WHERE a.status = 'pending' AND (c.invoked_at IS NOT NULL OR c.state IN ('running', 'succeeded', 'failed'))",
        ),
    }
}

fn lines_run(workspace: &Path) -> usize {
    std::fs::read_to_string(workspace.join("ran.log"))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// The pending item of `session`, if it shows up within a few seconds.
fn pending_of(data_dir: &Path, session: &str) -> Option<Value> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let out = airlock(data_dir, &["inbox", "--json"]);
        if out.status.success() {
            let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
            if let Some(item) = items.into_iter().find(|i| i["session"] == session) {
                return Some(item);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_at_random_points_loses_no_decision_and_runs_nothing_twice() {
    let cycles: usize = std::env::var("AIRLOCK_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    // Every user message gets one command that needs approval; every tool result gets "done".
    let model = ScriptedModel::start_with(
        vec![],
        Fallback::RoundTrip {
            tool_name: "builtin__run_command".into(),
            args: json!({"command": "echo ran >> ran.log"}),
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let workspace = d.join("workspace");
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let mut rng = rand::rng();
    let (mut killed_waiting, mut killed_after_ack, mut not_asked) = (0, 0, 0);
    let started = Instant::now();
    for cycle in 0..cycles {
        let engine = Engine::start(d);
        if cycle == 0 {
            use_model(d, &model);
        }
        // Invariants hold after every restart, including what recovery did.
        let session = format!("s{cycle}");
        let sent = airlock(d, &["chat", "--no-wait", "--session", &session, "go"]);
        assert!(sent.status.success(), "{sent:?}");
        let Some(item) = pending_of(d, &session) else {
            // The engine was busy resuming earlier turns; the cycle still crashes it.
            not_asked += 1;
            engine.kill9();
            continue;
        };
        let id = item["approval_id"].as_str().unwrap().to_string();
        if rng.random_bool(0.2) {
            killed_waiting += 1;
            engine.kill9();
        } else {
            let out = airlock(d, &["approve", &id]);
            if out.status.success() {
                acknowledged.insert(id);
            }
            // Somewhere between the decision, the run and the result being recorded.
            std::thread::sleep(Duration::from_micros(rng.random_range(0..20_000)));
            killed_after_ack += 1;
            engine.kill9();
        }
        let seen = read_db(d);
        let ran = lines_run(&workspace);
        let lost: Vec<&String> = acknowledged.difference(&seen.approved).collect();
        assert!(
            lost.is_empty(),
            "cycle {cycle}: acknowledged decisions lost: {lost:?}"
        );
        assert!(
            ran <= seen.claimed,
            "cycle {cycle}: {ran} runs for {} calls ever started: a call ran twice",
            seen.claimed
        );
        assert!(
            seen.succeeded <= ran,
            "cycle {cycle}: {} succeeded but {ran} ran",
            seen.succeeded
        );
        assert_eq!(seen.pending_but_ran, 0, "cycle {cycle}: pending yet ran");
    }
    // One clean start at the end: recovery settles everything, and the invariants still hold.
    let engine = Engine::start(d);
    drop(engine);
    let seen = read_db(d);
    let ran = lines_run(&workspace);
    assert!(ran <= seen.claimed && seen.succeeded <= ran);
    assert!(acknowledged.is_subset(&seen.approved));
    println!(
        "crash cycles: {cycles} in {:.1} s; killed while waiting {killed_waiting}, after an \
         acknowledged approval {killed_after_ack}, before asking {not_asked}; decisions \
         acknowledged {}, lost 0; commands run {ran}, calls started {}, succeeded {}",
        started.elapsed().as_secs_f64(),
        acknowledged.len(),
        seen.claimed,
        seen.succeeded,
    );
}
