//! Several engines (replicas) on one PostgreSQL database (a throwaway cluster: testkit): a
//! decision made through one replica wakes the turn waiting on another, at once, and its call
//! runs once; the same items approved at once through four replicas are each decided once; a
//! setting changed through one replica holds on another at its next call; an agent's token
//! revoked through one replica is refused by another.

use super::*;
use crate::replicas::RECHECK;
use std::sync::Barrier;
use std::time::Instant;

/// The shared database at `url`, as `airlock serve --database-url` opens it.
fn shared(url: &str) -> Database {
    let url = url.to_string();
    Database::shared(move || {
        airlock_store_postgres::PostgresStore::connect(
            &url,
            airlock_store_postgres::REPLICA_CONNECTIONS,
        )
    })
}

/// One replica: its own data directory and workspace, the shared database.
fn replica(url: &str) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open_on(
        EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        },
        shared(url),
    )
    .unwrap();
    (dir, engine)
}

/// The scripted model as every replica's provider (a setting: kept once, in the database).
fn use_model(engine: &Engine, model: &ScriptedModel) {
    engine
        .set_provider(ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            api_key_env: None,
            stream: false,
            ..ProviderSettings::default()
        })
        .unwrap();
}

fn write(id: &str, path: &str) -> ScriptedCall {
    call(
        id,
        "builtin__write_file",
        json!({"path": path, "content": "x"}),
    )
}

/// Waits for the next `ToolFinished` of `events` (a bound: a call that never runs fails).
async fn next_tool_finished(events: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> String {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match events.recv().await {
                Ok(EngineEvent::ToolFinished { tool_call_id, .. }) => return tool_call_id,
                Ok(_) => {}
                Err(error) => panic!("the engine's events ended: {error}"),
            }
        }
    })
    .await
    .expect("no tool ran within 30 s")
}

/// How many `ToolFinished` are left in `events` now.
fn tools_finished(events: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> usize {
    std::iter::from_fn(|| events.try_recv().ok())
        .filter(|event| matches!(event, EngineEvent::ToolFinished { .. }))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_held_through_one_replica_is_approved_through_another_and_runs_once() {
    let url = airlock_testkit::postgres::cluster().database();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write("c1", "a.txt")]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let (dir_a, a) = replica(&url);
    let (dir_b, b) = replica(&url);
    use_model(&a, &model);
    let mut on_a = a.subscribe();
    let mut on_b = b.subscribe();

    a.send_message("s", "write").unwrap();
    let item = inbox_of(&b, 1).await.remove(0);
    // Decided only once A's turn waits on it: only a wakeup can move it on then.
    tokio::time::timeout(Duration::from_secs(30), async {
        while !a.inner.router.waited_on(&item.approval_id) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("A's turn never waited for the decision");
    let decided = Instant::now();
    b.decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap();
    next_tool_finished(&mut on_a).await;
    let woken_after = decided.elapsed();
    // A waiting turn's own look again is RECHECK (600 s in these tests) away: the decision's
    // notification woke it. (The bound allows for a busy machine; BENCHMARKS.md has the
    // measured time.)
    assert!(
        woken_after < Duration::from_secs(3) && woken_after < RECHECK,
        "the turn on A ran the call {woken_after:?} after B's decision"
    );
    // B's subscribers hear of it too (A publishes its events).
    next_tool_finished(&mut on_b).await;

    let outcome = turn_end(&a, "s").await;
    assert_eq!(outcome.status, airlock_core::TurnStatus::Completed);
    assert_eq!(outcome.answer.as_deref(), Some("done"));
    assert_eq!(
        std::fs::read_to_string(dir_a.path().join("workspace/a.txt")).unwrap(),
        "x"
    );
    assert!(
        !dir_b.path().join("workspace/a.txt").exists(),
        "the call ran on the replica that decided, not the one driving the turn"
    );
    assert_eq!(tools_finished(&mut on_a), 0, "the call ran twice");
    assert_eq!(model.requests().len(), 2);
    let approvals = a
        .store()
        .audit_rows(1000)
        .unwrap()
        .into_iter()
        .filter(|row| row.action == "approved")
        .count();
    assert_eq!(approvals, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_items_approved_at_once_through_four_replicas_are_each_decided_once() {
    const ITEMS: usize = 50;
    let url = airlock_testkit::postgres::cluster().database();
    let writes = (0..ITEMS)
        .map(|n| write(&format!("c{n}"), &format!("f{n}.txt")))
        .collect();
    let model = ScriptedModel::start(vec![Reply::ToolCalls(writes), Reply::Text("done".into())])
        .await
        .unwrap();
    let replicas: Vec<_> = (0..4).map(|_| replica(&url)).collect();
    let (dir_a, a) = &replicas[0];
    use_model(a, &model);
    let mut on_a = a.subscribe();
    a.send_message("s", "write").unwrap();
    let items = inbox_of(&replicas[1].1, ITEMS).await;
    assert_eq!(items.len(), ITEMS);

    // Every replica approves every item, all 200 decisions released at once.
    let barrier = Barrier::new(replicas.len() * ITEMS);
    let runtime = tokio::runtime::Handle::current();
    let outcomes: Vec<(String, Result<ApprovalRow>)> = std::thread::scope(|scope| {
        let threads: Vec<_> = replicas
            .iter()
            .flat_map(|(_, engine)| items.iter().map(move |item| (engine, item)))
            .map(|(engine, item)| {
                let (barrier, runtime) = (&barrier, &runtime);
                scope.spawn(move || {
                    let _entered = runtime.enter();
                    barrier.wait();
                    let id = item.approval_id.clone();
                    (id.clone(), engine.decide(approve(&id), DecidedBy::Api))
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for item in &items {
        let mine: Vec<_> = outcomes
            .iter()
            .filter(|(id, _)| *id == item.approval_id)
            .map(|(_, outcome)| outcome)
            .collect();
        assert_eq!(mine.len(), 4);
        assert_eq!(
            mine.iter().filter(|outcome| outcome.is_ok()).count(),
            1,
            "{} was decided other than once: {mine:?}",
            item.approval_id
        );
        for refused in mine.iter().filter_map(|outcome| outcome.as_ref().err()) {
            assert_eq!(refused.code(), ErrorCode::AlreadyDecided, "{refused}");
        }
    }

    let outcome = turn_end(a, "s").await;
    assert_eq!(outcome.status, airlock_core::TurnStatus::Completed);
    assert_eq!(tools_finished(&mut on_a), ITEMS, "each call ran once");
    for n in 0..ITEMS {
        assert!(dir_a.path().join(format!("workspace/f{n}.txt")).exists());
    }
    let approved = a
        .store()
        .audit_rows(10_000)
        .unwrap()
        .into_iter()
        .filter(|row| row.action == "approved")
        .count();
    assert_eq!(approved, ITEMS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setting_changed_through_one_replica_holds_on_another_at_its_next_call() {
    let url = airlock_testkit::postgres::cluster().database();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write("c1", "a.txt")]),
        Reply::Text("asked".into()),
        Reply::ToolCalls(vec![write("c2", "b.txt")]),
        Reply::Text("not asked".into()),
    ])
    .await
    .unwrap();
    let (dir_a, a) = replica(&url);
    let (_dir_b, b) = replica(&url);
    use_model(&a, &model);

    // A compiles its policy: the write asks.
    a.send_message("s", "write").unwrap();
    let item = inbox_of(&a, 1).await.remove(0);
    a.decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap();
    assert_eq!(turn_end(&a, "s").await.answer.as_deref(), Some("asked"));

    // Through B: the write no longer asks. A's next call follows at once.
    b.set_tool_setting(
        airlock_core::BUILTIN_SERVER,
        "write_file",
        ToolSetting::NotRequired,
    )
    .unwrap();
    // (A chat of its own: a second message to a chat asks whether an agent hosts it, which the
    // PostgreSQL store does not answer yet.)
    a.send_message("t", "write again").unwrap();
    let outcome = turn_end(&a, "t").await;
    assert_eq!(outcome.answer.as_deref(), Some("not asked"), "{outcome:?}");
    assert!(dir_a.path().join("workspace/b.txt").exists());
    assert!(a.inbox().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_token_revoked_through_one_replica_is_refused_by_another() {
    let url = airlock_testkit::postgres::cluster().database();
    let (_dir_a, a) = replica(&url);
    let (_dir_b, b) = replica(&url);

    let token = a.issue_agent_token("claude-code").unwrap();
    // B reads (and caches) the tokens: the new one is the agent's there too.
    assert_eq!(
        b.agent_for_token(&token.token).unwrap().as_deref(),
        Some("claude-code")
    );
    assert!(a.revoke_agent_token("claude-code").unwrap());
    assert_eq!(
        b.agent_for_token(&token.token).unwrap(),
        None,
        "a token revoked through A still speaks for its agent through B"
    );
}
