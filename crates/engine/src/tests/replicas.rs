//! Several engines (replicas) on one PostgreSQL database (a throwaway cluster: testkit): a
//! decision made through one replica wakes the turn waiting on another, at once, and its call
//! runs once; the same items approved at once through four replicas are each decided once; a
//! setting changed through one replica holds on another at its next call; an agent's token
//! revoked through one replica is refused by another; a replica paused past its lease neither
//! runs nor overwrites the work another replica took over; a form request whose server waited
//! through a stopped replica is cancelled, saying so.

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

/// Four replicas opened and 32 chats started in one poll of one task, as `airlock-bench
/// replicas` does (hundreds of store operations without yielding); each call, approved through
/// the next replica at once, wakes the turn waiting on its own replica, and every turn ends.
/// Before the PostgreSQL store waited outside the calling task's cooperative budget, the
/// operation after that budget ran out spun for ever and nothing ended.
#[test]
fn chats_started_on_four_replicas_in_one_poll_are_each_approved_through_another_and_end() {
    const REPLICAS: usize = 4;
    const SESSIONS: usize = 32;
    let url = airlock_testkit::postgres::cluster().database();
    let (done, finished) = std::sync::mpsc::channel();
    // On a thread of its own: a spinning store never gives its thread back to a bound.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let writes = (0..SESSIONS)
                .map(|n| Reply::ToolCalls(vec![write(&format!("c{n}"), &format!("f{n}.txt"))]));
            let answers = (0..SESSIONS).map(|_| Reply::Text("done".into()));
            let model = ScriptedModel::start(writes.chain(answers).collect())
                .await
                .unwrap();
            // One poll from here to the first wait.
            let replicas: Vec<_> = (0..REPLICAS).map(|_| replica(&url)).collect();
            use_model(&replicas[0].1, &model);
            for s in 0..SESSIONS {
                replicas[s % REPLICAS]
                    .1
                    .send_message(&format!("s{s}"), "write")
                    .unwrap();
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let items = loop {
                let items = replicas[0].1.inbox().unwrap();
                if items.len() == SESSIONS {
                    break items;
                }
                assert!(
                    Instant::now() < deadline,
                    "only {} of {SESSIONS} calls asked within 60 s",
                    items.len()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            // Each through the replica after the one driving its turn (`s<n>`: replica n mod 4).
            for item in &items {
                let driver: usize = item.session[1..].parse().unwrap();
                let decider = &replicas[(driver % REPLICAS + 1) % REPLICAS].1;
                decider
                    .decide(approve(&item.approval_id), DecidedBy::Api)
                    .unwrap();
            }
            for s in 0..SESSIONS {
                let outcome = turn_end(&replicas[s % REPLICAS].1, &format!("s{s}")).await;
                assert_eq!(
                    outcome.status,
                    airlock_core::TurnStatus::Completed,
                    "s{s}: {outcome:?}"
                );
            }
            let written: usize = replicas
                .iter()
                .map(|(dir, _)| {
                    std::fs::read_dir(dir.path().join("workspace"))
                        .unwrap()
                        .count()
                })
                .sum();
            assert_eq!(written, SESSIONS, "each call ran once");
        });
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(180))
        .expect("the chats did not all end within 180 s (or the test failed: see its panic)");
}

/// Polls `check` every 20 ms until it holds (a bound: 30 s).
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

/// Stops `engine`'s lease renewal (as a paused process), ends its lease once no renewal is
/// under way, and waits until `taken` holds (another replica took its work over).
async fn pause_past_lease(engine: &Engine, taken: impl FnMut() -> bool) {
    use std::sync::atomic::Ordering;
    let lease = &engine.inner.lease;
    lease.frozen.store(true, Ordering::SeqCst);
    let skipped = lease.skipped.load(Ordering::SeqCst);
    until("the paused replica skipping a renewal", || {
        lease.skipped.load(Ordering::SeqCst) > skipped
    })
    .await;
    let replicas = engine.store().replicas().unwrap();
    assert!(replicas.renew_lease(Duration::ZERO).unwrap());
    until("the paused replica's work taken over", taken).await;
}

/// The call the model asked for as `provider_call_id` in the session.
fn call_of(engine: &Engine, session_id: &str, provider_call_id: &str) -> airlock_store::CallRow {
    engine
        .store()
        .messages(session_id)
        .unwrap()
        .into_iter()
        .flat_map(|message| message.calls)
        .find(|call| call.provider_call_id == provider_call_id)
        .unwrap()
}

fn taken_over(engine: &Engine, work: &str) -> bool {
    engine
        .store()
        .audit_rows(1000)
        .unwrap()
        .iter()
        .any(|row| row.action == "taken_over" && row.detail["work"] == work)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_past_its_lease_neither_runs_nor_overwrites_the_turn_taken_over() {
    let url = airlock_testkit::postgres::cluster().database();
    let gate = tempfile::tempdir().unwrap();
    let (runs, go) = (gate.path().join("runs"), gate.path().join("go"));
    // The call runs until the test lets it finish: A is "paused" in the middle of it.
    let command = format!(
        "echo ran >> '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        runs.display(),
        go.display()
    );
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![call(
            "c1",
            "builtin__run_command",
            json!({ "command": command }),
        )]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let (_dir_a, a) = replica(&url);
    let (_dir_b, b) = replica(&url);
    use_model(&a, &model);

    let session = a.send_message("s", "run it").unwrap();
    let item = inbox_of(&a, 1).await.remove(0);
    a.decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap();
    until("the call running on A", || runs.exists()).await;

    // A stops renewing its lease while its call runs; B takes its turn over.
    pause_past_lease(&a, || taken_over(&b, "turn")).await;
    // B finds the call invoked by A: reported interrupted, not run again; the turn goes on.
    until("B finished the turn", || {
        b.store()
            .messages(&session.id)
            .unwrap()
            .last()
            .is_some_and(|m| m.role == "assistant" && m.content == "done")
    })
    .await;
    let call_after_b = call_of(&b, &session.id, "c1");
    assert_eq!(call_after_b.state, CallState::Failed, "{call_after_b:?}");

    // A wakes: its call returns. It must not overwrite B's result nor drive the turn on.
    std::fs::write(&go, "").unwrap();
    tokio::time::timeout(Duration::from_secs(30), a.wait_turn("s"))
        .await
        .expect("A's turn did not stop")
        .unwrap();
    let call = call_of(&a, &session.id, "c1");
    assert_eq!(
        (call.state, &call.result),
        (call_after_b.state, &call_after_b.result),
        "A overwrote the result B recorded"
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap().lines().count(),
        1,
        "the call ran more than once"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the model was asked from stale state"
    );
    let finished: Vec<String> = a
        .store()
        .audit_rows(1000)
        .unwrap()
        .into_iter()
        .filter(|row| {
            row.tool_call_id.as_deref() == Some(call.id.as_str()) && row.action.starts_with("call_")
        })
        .map(|row| row.action)
        .collect();
    assert!(
        finished
            .iter()
            .filter(|action| *action == "call_failed")
            .count()
            == 1
            && !finished.iter().any(|action| action == "call_succeeded"),
        "{finished:?}"
    );
    assert_eq!(
        a.store().session(&session.id).unwrap().unwrap().status,
        airlock_core::SessionStatus::Idle
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_request_whose_server_waited_through_a_stopped_replica_is_cancelled_saying_so() {
    let url = airlock_testkit::postgres::cluster().database();
    let (_dir_a, a) = replica(&url);
    let (_dir_b, b) = replica(&url);
    let asking = a.clone();
    let asked = tokio::spawn(async move {
        asking
            .elicit(crate::ElicitationRequest {
                server: "forms".into(),
                message: "Your name?".into(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                meta: None,
                context: None,
                property_order: Vec::new(),
            })
            .await
    });
    let item = inbox_of(&b, 1).await.remove(0);

    pause_past_lease(&a, || {
        b.store().approval_status(&item.approval_id).unwrap()
            != Some(airlock_core::ApprovalStatus::Pending)
    })
    .await;
    assert!(taken_over(&b, "elicitation"));
    let row = b.store().approval(&item.approval_id).unwrap().unwrap();
    assert_eq!(
        row.status,
        airlock_core::ApprovalStatus::Cancelled,
        "{row:?}"
    );
    let decision = b.store().decision(&item.approval_id).unwrap().unwrap();
    assert!(
        decision
            .reason
            .as_deref()
            .is_some_and(|why| why.contains("replica that stopped")),
        "{decision:?}"
    );
    assert!(b.inbox().unwrap().is_empty());
    // The server waiting through A (were it still there) is told it was cancelled.
    let answer = tokio::time::timeout(Duration::from_secs(30), asked)
        .await
        .expect("the elicitation did not end")
        .unwrap()
        .unwrap();
    assert_eq!(answer.action, airlock_protocol::ElicitationAction::Cancel);
}

/// Keeps the hosted turns it is given (the agent never answers) to look at them.
#[derive(Default)]
struct SilentHost {
    turns: std::sync::Mutex<Vec<crate::HostedTurn>>,
}

impl crate::AgentHost for SilentHost {
    fn prompt(
        &self,
        _engine: Engine,
        _agent: airlock_protocol::AcpAgentView,
        _folder: std::path::PathBuf,
        turn: crate::HostedTurn,
    ) {
        self.turns.lock().unwrap().push(turn);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_chat_whose_replica_stopped_is_ended_saying_so_and_its_turn_dropped_there() {
    let url = airlock_testkit::postgres::cluster().database();
    let (dir_a, a) = replica(&url);
    let (_dir_b, b) = replica(&url);
    let host = Arc::new(SilentHost::default());
    a.set_agent_host(host.clone());
    a.save_acp_agent("fake", &["/bin/true".to_string()])
        .unwrap();
    let folder = dir_a.path().canonicalize().unwrap();
    let session = a
        .chat_with_agent("fake", "chat", "hello", folder.to_str())
        .unwrap();
    // The agent asks through A for a permission; it waits.
    let asking = {
        let a = a.clone();
        let session = session.id.clone();
        tokio::spawn(async move {
            let call = airlock_protocol::AgentCall {
                agent: "fake".into(),
                source: None,
                client: None,
                agent_session: "acp-1".into(),
                cwd: Some("/work".into()),
                tool: "run_shell_command".into(),
                input: json!({"command": "echo hi > f.txt"}),
                tool_use_id: Some("call_1".into()),
                event: airlock_protocol::AgentEvent::PermissionRequest,
                editable: false,
                wait_ms: None,
                definition: None,
                prompt: None,
                defer: false,
                takes_reason: None,
            };
            a.hosted_agent_call(&session, call, None, None).await
        })
    };
    let item = inbox_of(&b, 1).await.remove(0);

    pause_past_lease(&a, || {
        b.store().live_hosted_sessions().unwrap().is_empty()
            && b.store().approval_status(&item.approval_id).unwrap()
                != Some(airlock_core::ApprovalStatus::Pending)
    })
    .await;
    assert!(taken_over(&b, "hosted_chat"));
    let said = b.transcript("chat").unwrap();
    assert!(
        said.iter().any(|m| m
            .content
            .contains("the Airlock replica that ran it stopped")),
        "{said:?}"
    );
    assert_eq!(
        b.store().approval_status(&item.approval_id).unwrap(),
        Some(airlock_core::ApprovalStatus::Withdrawn),
        "the agent's waiting item went with it"
    );
    assert!(b.inbox().unwrap().is_empty());

    // A wakes, finds its lease gone, and stops its agent's turn (nothing is failed there).
    a.inner
        .lease
        .frozen
        .store(false, std::sync::atomic::Ordering::SeqCst);
    until("A stopped the hosted turn", || {
        host.turns
            .lock()
            .unwrap()
            .iter()
            .all(|turn| *turn.cancel.borrow())
    })
    .await;
    assert!(
        a.store()
            .audit_rows(1000)
            .unwrap()
            .iter()
            .any(|row| row.action == "lease_lost")
    );
    asking.abort();
}
