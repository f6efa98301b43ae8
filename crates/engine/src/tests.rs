//! The engine against the project's scripted model server: real HTTP on loopback, a real
//! SQLite file, the real built-in tools. Side effects are checked on disk and in what the model
//! was sent.

use super::*;
use airlock_core::{ArgRule, Mode, RememberScope, ToolSetting};
use airlock_protocol::Approval;
use airlock_store::StoreError;
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::time::Duration;

struct Fixture {
    _dir: tempfile::TempDir,
    engine: Engine,
    model: ScriptedModel,
}

/// An engine on `dir` (its workspace inside) using the scripted model; opened again on the same
/// folder, it is the engine after a restart.
fn open_engine(dir: &std::path::Path, model: &ScriptedModel, stream: bool) -> Engine {
    let engine = Engine::open(EngineConfig {
        data_dir: dir.to_path_buf(),
        workspace: Some(dir.join("workspace")),
    })
    .unwrap();
    engine
        .set_provider(ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            api_key_env: None,
            stream,
            ..ProviderSettings::default()
        })
        .unwrap();
    engine
}

/// An engine on a fresh folder with no model: for what needs no turn (agents' calls, pairing).
pub(crate) fn empty_engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })
    .unwrap();
    (dir, engine)
}

async fn fixture(replies: Vec<Reply>, stream: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(replies).await.unwrap();
    let engine = open_engine(dir.path(), &model, stream);
    Fixture {
        _dir: dir,
        engine,
        model,
    }
}

/// A model that proposes writing `a.txt` (which needs approval), then answers `answer`.
async fn write_then(answer: &str, stream: bool) -> Fixture {
    let write = Reply::ToolCalls(vec![call(
        "c1",
        "builtin__write_file",
        json!({"path": "a.txt", "content": "x"}),
    )]);
    fixture(vec![write, Reply::Text(answer.into())], stream).await
}

/// [`write_then`], with the message sent and its approval request in the inbox.
async fn pending_write(answer: &str, stream: bool) -> (Fixture, InboxItem) {
    let f = write_then(answer, stream).await;
    f.engine.send_message("s", "write").unwrap();
    let item = inbox_of(&f.engine, 1).await.remove(0);
    (f, item)
}

/// Fails when the engine starts running a tool or asks the model within `bound`: the events
/// that would prove a "nothing happens" claim wrong, watched instead of sleeping and looking.
async fn assert_nothing_runs(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    bound: Duration,
    what: &str,
) {
    assert_no_event_within(events, bound, what, |event| {
        matches!(
            event,
            EngineEvent::ToolFinished { .. }
                | EngineEvent::SessionStatus {
                    status: airlock_core::SessionStatus::RunningTools
                        | airlock_core::SessionStatus::Thinking,
                    ..
                }
        )
    })
    .await;
}

/// Fails when an event `proves_wrong` arrives within `bound` (the claim being that none does).
async fn assert_no_event_within(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    bound: Duration,
    what: &str,
    proves_wrong: impl Fn(&EngineEvent) -> bool,
) {
    let seen = tokio::time::timeout(bound, async {
        loop {
            match events.recv().await {
                Ok(event) if proves_wrong(&event) => return Some(event),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    })
    .await;
    if let Ok(Some(event)) = seen {
        panic!("{what}: {event:?}");
    }
}

fn call(id: &str, name: &str, args: Value) -> ScriptedCall {
    ScriptedCall::new(id, name, args)
}

/// The end of the session's turn, or a failure after a bound: a turn that should run without
/// asking hangs on an approval when the gate regresses, and must fail the test, not hang it.
pub(crate) async fn turn_end(engine: &Engine, session: &str) -> TurnOutcome {
    tokio::time::timeout(Duration::from_secs(30), engine.wait_turn(session))
        .await
        .unwrap_or_else(|_| panic!("the turn of '{session}' did not end within 30 s"))
        .unwrap()
}

pub(crate) async fn inbox_of(engine: &Engine, n: usize) -> Vec<InboxItem> {
    for _ in 0..500 {
        let items = engine.inbox().unwrap();
        if items.len() >= n {
            return items;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the inbox never had {n} items: {:?}",
        engine.inbox().unwrap()
    );
}

fn approve(id: &str) -> DecisionRequest {
    DecisionRequest::approve(id)
}

fn deny(id: &str, reason: &str) -> DecisionRequest {
    DecisionRequest::deny(id, Some(reason.into()))
}

/// An approval with options (an edit, something kept for later).
fn approving(id: &str, approval: Approval) -> DecisionRequest {
    DecisionRequest::new(id, Decision::Approve(approval))
}

/// The tool messages of a recorded request, by tool_call_id.
fn tool_results(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn approve_with_edited_arguments_runs_the_edit() {
    for stream in [false, true] {
        let f = fixture(
            vec![
                Reply::ToolCalls(vec![call(
                    "c1",
                    "builtin__write_file",
                    json!({"path": "a.txt", "content": "original"}),
                )]),
                Reply::Text("done".into()),
            ],
            stream,
        )
        .await;
        f.engine.send_message("s", "write a file").unwrap();
        let items = inbox_of(&f.engine, 1).await;
        assert_eq!(
            (items[0].server.as_str(), items[0].tool.as_str()),
            ("builtin", "write_file")
        );
        assert_eq!(items[0].args_hash, airlock_core::args_hash(&items[0].args));
        let edited = json!({"path": "b.txt", "content": "edited"});
        f.engine
            .decide(
                approving(
                    &items[0].approval_id,
                    Approval {
                        args: Some(edited.clone()),
                        ..Approval::default()
                    },
                ),
                DecidedBy::Inbox,
            )
            .unwrap();
        let outcome = turn_end(&f.engine, "s").await;
        assert_eq!(outcome.status, "completed", "{outcome:?}");
        assert_eq!(outcome.answer.as_deref(), Some("done"));
        assert!(!f.engine.workspace().join("a.txt").exists());
        assert_eq!(
            std::fs::read_to_string(f.engine.workspace().join("b.txt")).unwrap(),
            "edited"
        );
        let requests = f.model.requests();
        assert_eq!(requests.len(), 2);
        let results = tool_results(&requests[1]);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].0, "c1");
        assert!(
            results[0].1.contains("wrote 6 bytes to b.txt"),
            "{results:?}"
        );
        // The transcript shows what ran.
        let transcript = f.engine.transcript("s").unwrap();
        let ran = &transcript[1].calls[0];
        assert_eq!(ran.state, CallState::Succeeded);
        assert_eq!(ran.run_args, Some(edited));
    }
}

#[tokio::test]
async fn deny_with_reason_reaches_the_model_and_nothing_runs() {
    let (f, item) = pending_write("ok, I won't", true).await;
    f.engine
        .decide(
            deny(&item.approval_id, "not in this folder"),
            DecidedBy::Api,
        )
        .unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "completed");
    assert!(!f.engine.workspace().join("a.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    let sent: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(
        sent,
        json!({"type": "execution-denied", "reason": "not in this folder"})
    );
}

#[tokio::test]
async fn three_pending_calls_decided_in_reverse_order() {
    let calls = (1..=3)
        .map(|i| {
            call(
                &format!("c{i}"),
                "builtin__write_file",
                json!({"path": format!("f{i}.txt"), "content": format!("{i}")}),
            )
        })
        .collect();
    let f = fixture(
        vec![Reply::ToolCalls(calls), Reply::Text("all done".into())],
        false,
    )
    .await;
    f.engine.send_message("s", "write three").unwrap();
    let items = inbox_of(&f.engine, 3).await;
    // Nothing a person approved runs while any call of the step waits.
    let mut events = f.engine.subscribe();
    f.engine
        .decide(approve(&items[2].approval_id), DecidedBy::Api)
        .unwrap();
    f.engine
        .decide(deny(&items[1].approval_id, "no f2"), DecidedBy::Api)
        .unwrap();
    let running = f.engine.transcript("s").unwrap()[1]
        .calls
        .iter()
        .filter(|c| c.state == CallState::Running)
        .count();
    assert_eq!(running, 0, "a decision started a call of an undecided step");
    assert_nothing_runs(
        &mut events,
        Duration::from_millis(500),
        "ran before the step was decided",
    )
    .await;
    assert!(
        !f.engine.workspace().join("f3.txt").exists(),
        "ran before the step was fully decided"
    );
    assert_eq!(f.model.requests().len(), 1);
    f.engine
        .decide(approve(&items[0].approval_id), DecidedBy::Api)
        .unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "completed");
    assert!(f.engine.workspace().join("f1.txt").exists());
    assert!(!f.engine.workspace().join("f2.txt").exists());
    assert!(f.engine.workspace().join("f3.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    assert!(results[1].1.contains("no f2"));
}

#[tokio::test]
async fn auto_allowed_read_runs_while_write_waits() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![
                call("r", "builtin__read_file", json!({"path": "notes.txt"})),
                call(
                    "w",
                    "builtin__write_file",
                    json!({"path": "out.txt", "content": "x"}),
                ),
            ]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    std::fs::write(f.engine.workspace().join("notes.txt"), "hello notes").unwrap();
    f.engine.send_message("s", "go").unwrap();
    let items = inbox_of(&f.engine, 1).await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].tool, "write_file");
    let mut read_state = CallState::Proposed;
    for _ in 0..200 {
        let transcript = f.engine.transcript("s").unwrap();
        read_state = transcript[1].calls[0].state;
        if read_state == CallState::Succeeded {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        read_state,
        CallState::Succeeded,
        "read_file should run while write_file waits"
    );
    assert_eq!(
        f.engine.transcript("s").unwrap()[1].calls[1].state,
        CallState::Pending
    );
    f.engine
        .decide(approve(&items[0].approval_id), DecidedBy::Api)
        .unwrap();
    turn_end(&f.engine, "s").await;
    let results = tool_results(&f.model.requests()[1]);
    assert_eq!(results[0], ("r".to_string(), "hello notes".to_string()));
}

#[tokio::test]
async fn edit_that_fails_the_schema_is_refused_and_the_call_still_waits() {
    let (f, item) = pending_write("done", false).await;
    let bad = approving(
        &item.approval_id,
        Approval {
            args: Some(json!({"path": 7})),
            ..Approval::default()
        },
    );
    let err = f
        .engine
        .decide(bad, DecidedBy::Api)
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema") && err.contains("content"), "{err}");
    assert_eq!(
        f.engine.inbox().unwrap().len(),
        1,
        "the request must still be pending"
    );
    let audit = f.engine.store().audit_rows(50).unwrap();
    assert!(audit.iter().any(|r| r.action == "decision_refused"));
    f.engine
        .decide(deny(&item.approval_id, "stop"), DecidedBy::Api)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert!(!f.engine.workspace().join("a.txt").exists());
}

#[tokio::test]
async fn a_busy_chat_says_it_waits_for_the_persons_decision() {
    let (f, item) = pending_write("done", false).await;
    let err = f.engine.send_message("s", "again").unwrap_err();
    assert_eq!(err.code(), airlock_protocol::ErrorCode::Busy);
    let said = err.to_string();
    assert!(
        said.contains("the chat 's' is waiting for you to decide a request"),
        "{said}"
    );
    f.engine
        .decide(deny(&item.approval_id, "stop"), DecidedBy::Api)
        .unwrap();
    turn_end(&f.engine, "s").await;
    f.engine.send_message("s", "again").unwrap();
}

#[tokio::test]
async fn malformed_calls_get_error_results_without_asking() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![
                ScriptedCall {
                    id: "bad".into(),
                    name: "builtin__write_file".into(),
                    arguments: "{not json".into(),
                },
                call("unknown", "nosuch__tool", json!({})),
                call("schema", "builtin__write_file", json!({"path": "a.txt"})),
                call(
                    "escape",
                    "builtin__read_file",
                    json!({"path": "../../etc/passwd"}),
                ),
            ]),
            Reply::Text("sorry".into()),
        ],
        false,
    )
    .await;
    f.engine.send_message("s", "go").unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "completed");
    assert!(f.engine.inbox().unwrap().is_empty());
    let results = tool_results(&f.model.requests()[1]);
    assert!(results[0].1.contains("not valid JSON"), "{results:?}");
    assert!(results[1].1.contains("unknown tool"), "{results:?}");
    assert!(results[2].1.contains("content"), "{results:?}");
    assert!(
        results[3].1.contains("execution-denied") && results[3].1.contains("outside the workspace"),
        "{results:?}"
    );
}

#[tokio::test]
async fn modes_and_grants() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![call(
                "c1",
                "builtin__write_file",
                json!({"path": "a.txt", "content": "1"}),
            )]),
            Reply::Text("one".into()),
            Reply::ToolCalls(vec![call(
                "c2",
                "builtin__write_file",
                json!({"path": "b.txt", "content": "2"}),
            )]),
            Reply::Text("two".into()),
            Reply::ToolCalls(vec![call(
                "c3",
                "builtin__write_file",
                json!({"path": "c.txt", "content": "3"}),
            )]),
            Reply::Text("three".into()),
            Reply::ToolCalls(vec![call(
                "c4",
                "builtin__write_file",
                json!({"path": "d.txt", "content": "4"}),
            )]),
            Reply::Text("four".into()),
        ],
        false,
    )
    .await;
    // Allow for this chat: the next write in the same chat runs without asking.
    f.engine.send_message("s", "one").unwrap();
    let items = inbox_of(&f.engine, 1).await;
    f.engine
        .decide(
            approving(
                &items[0].approval_id,
                Approval {
                    for_chat: true,
                    ..Approval::default()
                },
            ),
            DecidedBy::Chat,
        )
        .unwrap();
    turn_end(&f.engine, "s").await;
    f.engine.send_message("s", "two").unwrap();
    assert_eq!(
        turn_end(&f.engine, "s").await.answer.as_deref(),
        Some("two")
    );
    assert!(f.engine.workspace().join("b.txt").exists());
    // Another chat still asks; deny-all denies it without asking.
    f.engine
        .set_mode(Some("other"), Some(Mode::DenyAll))
        .unwrap();
    f.engine.send_message("other", "three").unwrap();
    turn_end(&f.engine, "other").await;
    assert!(!f.engine.workspace().join("c.txt").exists());
    // Never-ask runs at once.
    f.engine
        .set_mode(Some("other"), Some(Mode::NeverAsk))
        .unwrap();
    f.engine.send_message("other", "four").unwrap();
    turn_end(&f.engine, "other").await;
    assert!(f.engine.workspace().join("d.txt").exists());
}

#[tokio::test]
async fn approval_timeout_denies_with_timed_out() {
    let f = write_then("gave up", false).await;
    f.engine
        .set_setting(airlock_core::Setting::ApprovalTimeoutSecs, &json!(1))
        .unwrap();
    f.engine.send_message("s", "write").unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(10), f.engine.wait_turn("s"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, "completed");
    assert!(!f.engine.workspace().join("a.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    assert!(results[0].1.contains("timed out"), "{results:?}");
    let audit = f.engine.store().audit_rows(50).unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.actor == "timeout" && r.action == "expired"),
        "{audit:?}"
    );
}

#[tokio::test]
async fn cancel_cancels_pending_requests() {
    let (f, item) = pending_write("unused", false).await;
    assert!(f.engine.cancel("s").unwrap());
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "cancelled");
    assert!(f.engine.inbox().unwrap().is_empty());
    assert!(
        f.engine
            .decide(approve(&item.approval_id), DecidedBy::Api)
            .is_err()
    );
    assert!(!f.engine.workspace().join("a.txt").exists());
}

#[tokio::test]
async fn step_limit_ends_the_turn() {
    let replies = (0..5)
        .map(|i| Reply::ToolCalls(vec![call(&format!("c{i}"), "builtin__list_dir", json!({}))]))
        .collect();
    let f = fixture(replies, false).await;
    f.engine
        .set_setting(airlock_core::Setting::StepLimit, &json!(3))
        .unwrap();
    f.engine.send_message("s", "loop").unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "step_limit", "{outcome:?}");
    assert_eq!(f.model.requests().len(), 3);
}

#[tokio::test]
async fn unreadable_settings_mean_deny_never_run() {
    let f = write_then("denied", false).await;
    // Never-ask would run it; a corrupt rule makes the settings unreadable.
    f.engine.set_mode(None, Some(Mode::NeverAsk)).unwrap();
    {
        let conn = rusqlite::Connection::open(f.engine.data_dir().join("airlock.db")).unwrap();
        conn.execute(
            "INSERT INTO rules (id, server, tool, pointer, kind, pattern, effect, created_at)
             VALUES ('broken', 'builtin', 'write_file', '/path', 'glob', 'a[', 'allow', 'now')",
            [],
        )
        .unwrap();
    }
    f.engine.inner.invalidate_policy();
    f.engine.send_message("s", "write").unwrap();
    turn_end(&f.engine, "s").await;
    assert!(!f.engine.workspace().join("a.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    assert!(results[0].1.contains("execution-denied"), "{results:?}");
}

#[tokio::test]
async fn model_errors_end_the_turn_with_a_clear_message_and_keep_the_message() {
    let f = fixture(
        vec![Reply::Error {
            status: 400,
            retry_after: None,
        }],
        false,
    )
    .await;
    f.engine.send_message("s", "hello").unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "failed");
    assert!(outcome.error.unwrap_or_default().contains("400"));
    assert_eq!(f.engine.transcript("s").unwrap()[0].content, "hello");
    assert_eq!(
        f.engine.session("s").unwrap().status,
        airlock_core::SessionStatus::Failed
    );
}

#[tokio::test]
async fn a_call_started_by_a_decision_just_before_a_crash_is_reported_interrupted_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![Reply::Text("understood".into())])
        .await
        .unwrap();
    {
        // What the previous engine left on disk: the decision committed (and with it the call
        // marked running), then the process died before the tool was invoked.
        let store = airlock_store_sqlite::Store::open(&dir.path().join("airlock.db")).unwrap();
        let settings = ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            api_key_env: None,
            stream: false,
            ..ProviderSettings::default()
        };
        store
            .set_setting(
                airlock_core::Setting::DefaultProvider.key(),
                &serde_json::to_value(settings).unwrap(),
            )
            .unwrap();
        let (session, _) = store.start_turn("s", "write a file").unwrap();
        let args = json!({"path": "a.txt", "content": "x"});
        let call = airlock_store::NewCall {
            id: "call_1".into(),
            provider_call_id: "c1".into(),
            model_name: "builtin__write_file".into(),
            server: "builtin".into(),
            tool: "write_file".into(),
            raw_args: args.to_string(),
            args: Some(args.clone()),
            args_hash: Some(airlock_core::args_hash(&args)),
            state: CallState::Pending,
            policy_step: None,
            policy_why: None,
            result: None,
            grant_use: None,
            same_as: None,
        };
        let approval = airlock_store::NewApproval {
            approval_id: "approval_1".into(),
            tool_call_id: Some("call_1".into()),
            session_id: session.id.clone(),
            kind: ItemKind::ToolCall,
            server: "builtin".into(),
            tool: "write_file".into(),
            args_hash: airlock_core::args_hash(&args),
            args,
            why: "required".into(),
            expires_at: None,
        };
        store
            .record_assistant_step(&session.id, "", &[call], &[approval])
            .unwrap();
        store
            .set_session_status(&session.id, airlock_core::SessionStatus::RunningTools, None)
            .unwrap();
        store
            .decide(&airlock_store::DecisionInput::new(
                "approval_1",
                airlock_core::ApprovalStatus::Approved,
                DecidedBy::Api,
            ))
            .unwrap();
        assert_eq!(store.running_calls().unwrap().len(), 1);
    }
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })
    .unwrap();
    let outcome = turn_end(&engine, "s").await;
    assert_eq!(outcome.answer.as_deref(), Some("understood"), "{outcome:?}");
    assert!(
        !engine.workspace().join("a.txt").exists(),
        "the tool must not run after the crash"
    );
    let results = tool_results(&model.requests()[0]);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.contains("interrupted"), "{results:?}");
    assert_eq!(
        engine.transcript("s").unwrap()[1].calls[0].state,
        CallState::Failed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_at_once_each_decision_reaches_its_own_call() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start_with(
        Vec::new(),
        airlock_testkit::Fallback::RoundTrip {
            tool_name: "builtin__write_file".into(),
            args: json!({"path": "shared.txt", "content": "unedited"}),
        },
    )
    .await
    .unwrap();
    let engine = open_engine(dir.path(), &model, false);
    let sessions: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
    for session in &sessions {
        engine.send_message(session, "write your file").unwrap();
    }
    let mut items = inbox_of(&engine, sessions.len()).await;
    // Decide in an order unrelated to the order the requests arrived in.
    items.sort_by(|a, b| b.approval_id.cmp(&a.approval_id));
    for item in &items {
        let args = json!({"path": format!("{}.txt", item.session), "content": item.session});
        engine
            .decide(
                approving(
                    &item.approval_id,
                    Approval {
                        args: Some(args),
                        ..Approval::default()
                    },
                ),
                DecidedBy::Inbox,
            )
            .unwrap();
    }
    for session in &sessions {
        let outcome = turn_end(&engine, session).await;
        assert_eq!(outcome.status, "completed", "{outcome:?}");
        let written =
            std::fs::read_to_string(engine.workspace().join(format!("{session}.txt"))).unwrap();
        assert_eq!(&written, session);
    }
    assert!(
        !engine.workspace().join("shared.txt").exists(),
        "only edited arguments ran"
    );
    assert!(engine.inbox().unwrap().is_empty());
}

#[tokio::test]
async fn a_store_failure_while_deciding_leaves_the_call_pending_never_run() {
    let (f, item) = pending_write("done", false).await;
    let conn = rusqlite::Connection::open(f.engine.data_dir().join("airlock.db")).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER fail_decisions BEFORE INSERT ON decisions BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;",
    )
    .unwrap();
    let mut events = f.engine.subscribe();
    let error = f
        .engine
        .decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap_err();
    assert!(error.to_string().contains("disk trouble"), "{error}");
    assert_nothing_runs(
        &mut events,
        Duration::from_millis(500),
        "a failed decision ran",
    )
    .await;
    assert!(
        !f.engine.workspace().join("a.txt").exists(),
        "a failed decision must not run the call"
    );
    assert_eq!(
        f.engine.inbox().unwrap().len(),
        1,
        "the request is still pending"
    );
    assert_eq!(
        f.engine.transcript("s").unwrap()[1].calls[0].state,
        CallState::Pending
    );

    conn.execute_batch("DROP TRIGGER fail_decisions;").unwrap();
    f.engine
        .decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap();
    assert_eq!(
        turn_end(&f.engine, "s").await.answer.as_deref(),
        Some("done")
    );
    assert_eq!(
        std::fs::read_to_string(f.engine.workspace().join("a.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn paused_agents_run_nothing_until_resumed() {
    let (f, item) = pending_write("written", false).await;
    let mut events = f.engine.subscribe();
    assert!(f.engine.set_paused(true).unwrap());
    assert!(
        !f.engine.set_paused(true).unwrap(),
        "pausing twice changes nothing"
    );
    let pause_rows = f
        .engine
        .store()
        .audit_rows(100)
        .unwrap()
        .into_iter()
        .filter(|row| row.action == "setting_changed" && row.detail["key"] == "paused")
        .count();
    assert_eq!(
        pause_rows, 1,
        "pausing twice is one setting change in the audit trail"
    );
    assert!(matches!(
        events.recv().await.unwrap(),
        EngineEvent::Paused { paused: true }
    ));
    // A decision is still taken and kept while paused; the call waits for the resume.
    f.engine
        .decide(approve(&item.approval_id), DecidedBy::Api)
        .unwrap();
    assert_nothing_runs(&mut events, Duration::from_millis(500), "ran while paused").await;
    assert!(
        !f.engine.workspace().join("a.txt").exists(),
        "nothing runs while paused"
    );
    assert_eq!(f.model.requests().len(), 1, "no model request while paused");

    f.engine.set_paused(false).unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(
        (outcome.status.as_str(), outcome.answer.as_deref()),
        ("completed", Some("written"))
    );
    assert!(f.engine.workspace().join("a.txt").exists());
}

#[tokio::test]
async fn a_message_sent_while_paused_waits_and_cancel_still_ends_the_turn() {
    let f = fixture(vec![Reply::Text("unused".into())], false).await;
    f.engine.set_paused(true).unwrap();
    let mut events = f.engine.subscribe();
    f.engine.send_message("s", "hello").unwrap();
    assert_nothing_runs(
        &mut events,
        Duration::from_millis(500),
        "asked the model while paused",
    )
    .await;
    assert!(
        f.model.requests().is_empty(),
        "the model is not asked while paused"
    );
    assert!(f.engine.cancel("s").unwrap());
    assert_eq!(turn_end(&f.engine, "s").await.status, "cancelled");
    assert!(f.model.requests().is_empty());
}

#[tokio::test]
async fn the_pause_outlives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        Engine::open(EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap()
    };
    let engine = open();
    assert!(!engine.paused());
    engine.set_paused(true).unwrap();
    drop(engine);
    assert!(open().paused());
}

/// Two sessions with three pending `write_file` calls each (`{session}-{i}.txt`); the inbox items.
async fn two_pending_steps() -> (Fixture, Vec<InboxItem>) {
    let step = |session: &str| {
        let calls = (1..=3)
            .map(|i| {
                call(
                    &format!("{session}{i}"),
                    "builtin__write_file",
                    json!({"path": format!("{session}-{i}.txt"), "content": "x"}),
                )
            })
            .collect();
        Reply::ToolCalls(calls)
    };
    let f = fixture(
        vec![
            step("a"),
            step("b"),
            Reply::Text("done".into()),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    f.engine.send_message("a", "write").unwrap();
    inbox_of(&f.engine, 3).await;
    f.engine.send_message("b", "write").unwrap();
    let items = inbox_of(&f.engine, 6).await;
    (f, items)
}

#[tokio::test]
async fn a_batch_of_mixed_decisions_is_applied_item_by_item_and_starts_every_complete_step() {
    let (f, items) = two_pending_steps().await;
    let id = |session: &str, i: usize| {
        let path = format!("{session}-{i}.txt");
        items
            .iter()
            .find(|item| item.args["path"] == json!(path))
            .unwrap()
            .approval_id
            .clone()
    };
    f.engine
        .decide(deny(&id("b", 3), "decided before"), DecidedBy::Api)
        .unwrap();
    let mut events = f.engine.subscribe();
    let before = f.engine.store().audit_rows(1000).unwrap().len();
    let batch = vec![
        approve(&id("a", 1)),
        deny(&id("a", 2), "not a2"),
        approving(
            &id("a", 3),
            Approval {
                args: Some(json!({"path": "a-3-edited.txt", "content": "edited"})),
                ..Approval::default()
            },
        ),
        approving(
            &id("b", 1),
            Approval {
                args: Some(json!({"path": 7})),
                ..Approval::default()
            },
        ),
        approve(&id("b", 3)),
        approve(&id("b", 2)),
    ];
    let outcomes = f.engine.decide_many(batch, DecidedBy::Inbox).unwrap();
    assert_eq!(outcomes.len(), 6);
    assert!(
        outcomes[0].is_ok() && outcomes[1].is_ok() && outcomes[2].is_ok() && outcomes[5].is_ok(),
        "{outcomes:?}"
    );
    assert!(
        matches!(&outcomes[3], Err(EngineError::InvalidEdit(m)) if m.contains("schema")),
        "{:?}",
        outcomes[3]
    );
    assert!(
        matches!(
            &outcomes[4],
            Err(EngineError::Store(StoreError::AlreadyDecided { .. }))
        ),
        "{:?}",
        outcomes[4]
    );

    // One event for the batch, naming exactly the decided items.
    let decisions = loop {
        if let EngineEvent::ApprovalsDecided { decisions } = events.recv().await.unwrap() {
            break decisions;
        }
    };
    let decided: Vec<&str> = decisions.iter().map(|d| d.approval_id.as_str()).collect();
    assert_eq!(decided, [id("a", 1), id("a", 2), id("a", 3), id("b", 2)]);

    // Session a's step is complete and runs; b's first call (the refused edit) still waits.
    assert_eq!(turn_end(&f.engine, "a").await.status, "completed");
    let workspace = f.engine.workspace();
    assert!(workspace.join("a-1.txt").exists() && !workspace.join("a-2.txt").exists());
    assert_eq!(
        std::fs::read_to_string(workspace.join("a-3-edited.txt")).unwrap(),
        "edited"
    );
    assert!(!workspace.join("a-3.txt").exists());
    let pending = f.engine.inbox().unwrap();
    assert_eq!(
        pending
            .iter()
            .map(|i| i.approval_id.clone())
            .collect::<Vec<_>>(),
        [id("b", 1)]
    );
    assert!(
        !workspace.join("b-2.txt").exists(),
        "b's step still waits for b1"
    );

    // One audit row per item of the batch.
    let audit: Vec<_> = f
        .engine
        .store()
        .audit_rows(1000)
        .unwrap()
        .into_iter()
        .skip(before)
        .collect();
    let decisions: Vec<(&str, Option<&str>)> = audit
        .iter()
        .filter(|r| r.actor == "inbox")
        .map(|r| (r.action.as_str(), r.approval_id.as_deref()))
        .collect();
    let expected = [
        ("approved", id("a", 1)),
        ("denied", id("a", 2)),
        ("approved", id("a", 3)),
        ("decision_refused", id("b", 1)),
        ("decision_refused", id("b", 3)),
        ("approved", id("b", 2)),
    ];
    assert_eq!(
        decisions,
        expected
            .iter()
            .map(|(a, i)| (*a, Some(i.as_str())))
            .collect::<Vec<_>>()
    );

    // Deciding the last one completes b: its approved call runs, the denied one never does.
    f.engine
        .decide_many(vec![approve(&id("b", 1))], DecidedBy::Inbox)
        .unwrap()
        .remove(0)
        .unwrap();
    assert_eq!(turn_end(&f.engine, "b").await.status, "completed");
    assert!(workspace.join("b-1.txt").exists() && workspace.join("b-2.txt").exists());
    assert!(!workspace.join("b-3.txt").exists());
}

#[tokio::test]
async fn a_store_failure_in_the_middle_of_a_batch_decides_nothing_and_runs_nothing() {
    let (f, items) = two_pending_steps().await;
    let last = items.last().unwrap().approval_id.clone();
    let conn = rusqlite::Connection::open(f.engine.data_dir().join("airlock.db")).unwrap();
    conn.execute_batch(&format!(
        "CREATE TRIGGER fail_one BEFORE INSERT ON decisions WHEN NEW.approval_id = '{last}'
         BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;"
    ))
    .unwrap();
    let batch: Vec<DecisionRequest> = items
        .iter()
        .map(|item| approve(&item.approval_id))
        .collect();
    let mut events = f.engine.subscribe();
    let error = f
        .engine
        .decide_many(batch.clone(), DecidedBy::Inbox)
        .unwrap_err();
    assert!(error.to_string().contains("disk trouble"), "{error}");
    assert_nothing_runs(
        &mut events,
        Duration::from_millis(500),
        "a failed batch ran",
    )
    .await;
    assert_eq!(
        f.engine.inbox().unwrap().len(),
        6,
        "every request is still pending"
    );
    for session in ["a", "b"] {
        let calls = &f.engine.transcript(session).unwrap()[1].calls;
        assert!(
            calls.iter().all(|c| c.state == CallState::Pending),
            "{calls:?}"
        );
    }
    assert_eq!(
        std::fs::read_dir(f.engine.workspace()).unwrap().count(),
        0,
        "nothing ran"
    );
    assert_eq!(f.model.requests().len(), 2, "no turn went on");

    conn.execute_batch("DROP TRIGGER fail_one;").unwrap();
    let outcomes = f.engine.decide_many(batch, DecidedBy::Inbox).unwrap();
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    for session in ["a", "b"] {
        assert_eq!(turn_end(&f.engine, session).await.status, "completed");
    }
    assert_eq!(std::fs::read_dir(f.engine.workspace()).unwrap().count(), 6);
}

// ---- the gate under attack (security findings) ----

/// A decision naming other arguments than those waiting is refused, approve or deny, and
/// nothing runs: the field promises it, and a replayed or stale view must not approve.
#[tokio::test]
async fn a_decision_with_another_args_hash_is_refused_and_nothing_runs() {
    let (f, item) = pending_write("done", false).await;
    let stale = |yes: bool| {
        let request = if yes {
            approve(&item.approval_id)
        } else {
            DecisionRequest::deny(&item.approval_id, None)
        };
        request.shown("0".repeat(64))
    };
    for yes in [true, false] {
        let error = f.engine.decide(stale(yes), DecidedBy::Api).unwrap_err();
        assert!(matches!(error, EngineError::Stale(_)), "{error}");
    }
    assert_eq!(f.engine.inbox().unwrap().len(), 1, "still waiting");
    assert!(!f.engine.workspace().join("a.txt").exists());
    f.engine
        .decide(
            approve(&item.approval_id).shown(item.args_hash.clone()),
            DecidedBy::Api,
        )
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    assert!(f.engine.workspace().join("a.txt").exists());
}

/// An edit is checked against the deny rules and blocked settings like a proposal, and so is
/// an approval after the settings changed while the call waited.
#[tokio::test]
async fn an_approval_never_gets_past_a_deny_rule_or_a_blocked_tool() {
    let (f, item) = pending_write("done", false).await;
    f.engine
        .add_rule(ArgRule {
            id: "no-secrets".into(),
            server: "builtin".into(),
            tool: "write_file".into(),
            pointer: "/path".into(),
            pattern: airlock_core::RulePattern::Glob("secret*".into()),
            effect: airlock_core::RuleEffect::Deny,
        })
        .unwrap();
    let edit = approving(
        &item.approval_id,
        Approval {
            args: Some(json!({"path": "secret.txt", "content": "x"})),
            ..Approval::default()
        },
    );
    let error = f.engine.decide(edit, DecidedBy::Inbox).unwrap_err();
    assert!(
        matches!(&error, EngineError::NotAllowed(m) if m.contains("no-secrets")),
        "{error}"
    );
    f.engine
        .set_tool_setting("builtin", "write_file", ToolSetting::Blocked)
        .unwrap();
    let error = f
        .engine
        .decide(approve(&item.approval_id), DecidedBy::Inbox)
        .unwrap_err();
    assert!(
        matches!(&error, EngineError::NotAllowed(m) if m.contains("blocked")),
        "{error}"
    );
    assert_eq!(f.engine.inbox().unwrap().len(), 1, "still waiting");
    f.engine
        .decide(deny(&item.approval_id, "blocked"), DecidedBy::Inbox)
        .unwrap();
    turn_end(&f.engine, "s").await;
    for name in ["a.txt", "secret.txt"] {
        assert!(
            !f.engine.workspace().join(name).exists(),
            "{name} was written"
        );
    }
}

/// A notification shows one line: it may deny anything, but approve only a tool declared
/// read-only whose arguments it showed whole — never write_file or run_command.
#[tokio::test]
async fn a_notification_cannot_approve_a_tool_that_is_not_low_risk() {
    let (f, item) = pending_write("done", false).await;
    let error = f
        .engine
        .decide(approve(&item.approval_id), DecidedBy::Notification)
        .unwrap_err();
    assert!(matches!(error, EngineError::NotAllowed(_)), "{error}");
    assert!(!f.engine.workspace().join("a.txt").exists());
    f.engine
        .decide(deny(&item.approval_id, "no"), DecidedBy::Notification)
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
}

/// The person may allow a tool (or a whole server) from notifications, or take a read-only
/// tool's default away; `run_command` can never be allowed, and an allowed tool still needs its
/// arguments shown whole.
#[tokio::test]
async fn allowing_a_tool_from_notifications_is_the_persons_choice_never_run_command() {
    let (f, item) = pending_write("done", false).await;
    assert!(!f.engine.notification_may_approve(&item));
    f.engine
        .set_from_notification(BUILTIN_SERVER, Some("write_file"), Some(true))
        .unwrap();
    assert!(f.engine.notification_may_approve(&item));
    // The tool's own choice wins over its server's.
    f.engine
        .set_from_notification(BUILTIN_SERVER, None, Some(false))
        .unwrap();
    assert!(f.engine.notification_may_approve(&item));
    let views = f.engine.tool_views().unwrap();
    let view = |tool: &str| views.iter().find(|v| v.tool == tool).unwrap().clone();
    assert_eq!(view("write_file").from_notification, Some(true));
    assert!(view("write_file").approvable_from_notification);
    // read_file (declared read-only) lost its default with the server's "off".
    assert!(!view("read_file").approvable_from_notification);
    let server = f.engine.servers().unwrap();
    assert_eq!(
        server
            .iter()
            .find(|s| s.name == BUILTIN_SERVER)
            .unwrap()
            .from_notification,
        Some(false)
    );
    // Forgetting the tool's choice: the server's "off" applies.
    f.engine
        .set_from_notification(BUILTIN_SERVER, Some("write_file"), None)
        .unwrap();
    assert!(!f.engine.notification_may_approve(&item));
    let refused = f
        .engine
        .decide(approve(&item.approval_id), DecidedBy::Notification)
        .unwrap_err();
    assert!(matches!(refused, EngineError::NotAllowed(_)), "{refused}");
    // run_command can never be allowed, not even through its server.
    let error = f
        .engine
        .set_from_notification(BUILTIN_SERVER, Some("run_command"), Some(true))
        .unwrap_err();
    assert!(matches!(error, EngineError::Invalid(_)), "{error}");
    f.engine
        .set_from_notification(BUILTIN_SERVER, None, Some(true))
        .unwrap();
    let views = f.engine.tool_views().unwrap();
    let run = views.iter().find(|v| v.tool == "run_command").unwrap();
    assert!(!run.approvable_from_notification);
    assert!(matches!(
        f.engine
            .set_from_notification("nope", None, Some(true))
            .unwrap_err(),
        EngineError::UnknownServer(_)
    ));
    // Allowed now, the write is approved from the notification and runs.
    f.engine
        .decide(approve(&item.approval_id), DecidedBy::Notification)
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    assert!(f.engine.workspace().join("a.txt").exists());
}

/// Security finding 1: `approve --args '{"command":"echo ok"}' --remember always --exact-args`
/// remembered the proposal (`touch PWNED`), which then ran without asking.
#[tokio::test]
async fn remembering_an_edited_approval_covers_the_edit_not_the_proposal() {
    let pwned = json!({"command": "touch PWNED"});
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![call("c1", "builtin__run_command", pwned.clone())]),
            Reply::ToolCalls(vec![call("c2", "builtin__run_command", pwned.clone())]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    f.engine.send_message("s", "go").unwrap();
    let first = inbox_of(&f.engine, 1).await.remove(0);
    f.engine
        .decide(
            approving(
                &first.approval_id,
                Approval {
                    args: Some(json!({"command": "echo ok"})),
                    remember: Some(RememberScope::Always),
                    exact_args: true,
                    ..Approval::default()
                },
            ),
            DecidedBy::Api,
        )
        .unwrap();
    // The model proposes the original again: it must wait for a person, not run.
    let second = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let items = f.engine.inbox().unwrap();
            if let Some(item) = items
                .into_iter()
                .find(|i| i.approval_id != first.approval_id)
            {
                return item;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the proposal ran (or was decided) without asking");
    assert_eq!(second.args, pwned);
    assert!(!f.engine.workspace().join("PWNED").exists());
    f.engine
        .decide(deny(&second.approval_id, "no"), DecidedBy::Api)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert!(!f.engine.workspace().join("PWNED").exists());
}

/// The same item approved from a notification, the inbox and the API at the same moment: one
/// decision wins, the others are told it was already decided, and the call runs exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_item_approved_from_three_channels_at_once_runs_once() {
    for round in 0..20 {
        let f = fixture(
            vec![
                Reply::ToolCalls(vec![call(
                    "c1",
                    "builtin__read_file",
                    json!({"path": "note.txt"}),
                )]),
                Reply::Text("done".into()),
            ],
            false,
        )
        .await;
        // read_file is declared read-only, so a notification may approve it; make it ask.
        f.engine
            .set_tool_setting("builtin", "read_file", ToolSetting::Required)
            .unwrap();
        std::fs::write(f.engine.workspace().join("note.txt"), "hi").unwrap();
        f.engine.send_message("s", "read").unwrap();
        let item = inbox_of(&f.engine, 1).await.remove(0);
        let barrier = Arc::new(std::sync::Barrier::new(3));
        let deciders: Vec<_> = [DecidedBy::Notification, DecidedBy::Inbox, DecidedBy::Api]
            .into_iter()
            .map(|by| {
                let (engine, barrier) = (f.engine.clone(), barrier.clone());
                let request = approve(&item.approval_id).shown(item.args_hash.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    engine.decide(request, by)
                })
            })
            .collect();
        let outcomes: Vec<_> = deciders.into_iter().map(|t| t.join().unwrap()).collect();
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {outcomes:?}");
        for outcome in outcomes.iter().filter_map(|o| o.as_ref().err()) {
            assert!(
                matches!(
                    outcome,
                    EngineError::Store(StoreError::AlreadyDecided { .. })
                ),
                "round {round}: {outcome}"
            );
        }
        assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
        let audit = f.engine.inner.store.audit_rows(100).unwrap();
        let count = |action: &str| audit.iter().filter(|r| r.action == action).count();
        assert_eq!(count("approved"), 1, "round {round}");
        assert_eq!(count("call_succeeded"), 1, "round {round}: ran once");
        assert_eq!(count("decision_refused"), 2, "round {round}");
        // The model saw one result for its one call.
        let requests = f.model.requests();
        assert_eq!(tool_results(requests.last().unwrap()).len(), 1);
    }
}

/// Every way an item leaves the inbox is an event: a cancelled turn's requests come as one
/// `ApprovalsDecided` with status `cancelled`, so the shell, the tray and the UI keep their
/// counts from events and never re-read the inbox when a turn ends.
#[tokio::test]
async fn a_cancelled_turn_announces_its_cancelled_requests() {
    let (f, item) = pending_write("done", false).await;
    let mut events = f.engine.subscribe();
    assert!(f.engine.cancel("s").unwrap());
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.status, "cancelled");
    let mut cancelled = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EngineEvent::ApprovalsDecided { decisions } = event {
            cancelled.extend(decisions);
        }
    }
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled[0].approval_id, item.approval_id);
    assert_eq!(cancelled[0].status, airlock_core::ApprovalStatus::Cancelled);
    assert!(!cancelled[0].approve);
    assert!(f.engine.inbox().unwrap().is_empty());
}

mod grants;
mod replicas;
mod same_step;
mod step_order;
mod team;

/// The diff a person sees for a pending write is against the file the write would replace, read
/// in the workspace when asked (so a file changed since the request shows as it is now).
#[tokio::test]
async fn a_pending_write_shows_what_is_on_disk_where_it_would_write() {
    let (f, item) = pending_write("done", false).await;
    assert_eq!(
        f.engine.file_on_disk(&item.approval_id).unwrap(),
        airlock_protocol::FileOnDisk::Missing {
            path: "a.txt".into()
        }
    );
    std::fs::write(f.engine.workspace().join("a.txt"), "before\n").unwrap();
    assert_eq!(
        f.engine.file_on_disk(&item.approval_id).unwrap(),
        airlock_protocol::FileOnDisk::Text {
            path: "a.txt".into(),
            content: "before\n".into()
        }
    );
    assert!(f.engine.file_on_disk("apr_unknown").is_err());
    // Once decided, nothing more is read for it.
    f.engine
        .decide(deny(&item.approval_id, "no"), DecidedBy::Api)
        .unwrap();
    assert!(f.engine.file_on_disk(&item.approval_id).is_err());
}

/// What one approval round costs the disk (issue 33): the user's message, the model's step
/// with its request, the decision (the round's one durable commit, which also starts and
/// claims the call), the call's result, the answer — five commits, each writing only the pages
/// of the rows it changes and of the indexes a query needs.
#[tokio::test]
async fn an_approval_round_is_five_commits_one_durable_and_few_pages() {
    let f = write_then("done", false).await;
    let before = f.engine.write_counters();
    f.engine.send_message("s", "write").unwrap();
    let item = inbox_of(&f.engine, 1).await.remove(0);
    f.engine
        .decide(approve(&item.approval_id), DecidedBy::Api)
        .unwrap();
    let outcome = turn_end(&f.engine, "s").await;
    assert_eq!(outcome.answer.as_deref(), Some("done"), "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(f.engine.workspace().join("a.txt")).unwrap(),
        "x"
    );
    let round = f.engine.write_counters().since(&before);
    assert_eq!(
        (round.commits, round.durable_commits),
        (5, 1),
        "commits in one round: {round:?}"
    );
    assert!(
        round.pages <= ROUND_PAGES,
        "pages written in one round: {round:?}"
    );
}

/// Pages (WAL frames) one approval round of a new session may write: 27 for its rows and
/// indexes, and the pages a young database adds as its tables grow. 36 before issue 33.
const ROUND_PAGES: u64 = 28;

/// Issue 28: an elicitation offers accept, decline and cancel — nothing else — and is answered
/// through the one decision path like any item: a decision of kind `answer`.
#[tokio::test]
async fn an_elicitation_offers_its_answers_and_takes_one_as_a_decision() {
    let (_dir, engine) = empty_engine();
    let asked = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .elicit(crate::ElicitationRequest {
                    server: "forms".into(),
                    message: "Your name?".into(),
                    schema: json!({"type": "object", "required": ["name"],
                        "properties": {"name": {"type": "string"}}}),
                    meta: None,
                    context: None,
                    property_order: Vec::new(),
                })
                .await
        })
    };
    let item = loop {
        if let Some(item) = engine.inbox().unwrap().pop() {
            break item;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(
        item.available_decisions,
        vec![
            DecisionKind::Accept,
            DecisionKind::Decline,
            DecisionKind::Cancel
        ]
    );
    // Approve, deny and an edit are not what a form takes.
    for decision in [
        Decision::approve(),
        Decision::edit(json!({"name": "x"})),
        DecisionRequest::deny("", None).decision,
    ] {
        let request = DecisionRequest::new(&item.approval_id, decision);
        assert!(engine.decide(request, DecidedBy::Inbox).is_err());
    }
    let answer = ElicitationAnswer {
        action: ElicitationAction::Accept,
        content: Some(json!({"name": "Ada"})),
    };
    engine
        .decide(
            DecisionRequest::new(&item.approval_id, Decision::Answer(answer.clone()))
                .shown(item.args_hash.clone()),
            DecidedBy::Inbox,
        )
        .unwrap();
    assert_eq!(asked.await.unwrap().unwrap(), answer);
}
