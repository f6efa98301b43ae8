//! Several stores (replicas) on one PostgreSQL database: leases and the work held under them,
//! taken over once and only when the lease ran out; the policy generation moved by the
//! transaction of a change; what the replicas tell each other; the writes of a replica whose
//! work was taken over refused (fencing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::{ApprovalStatus, CallState, DecidedBy, ItemKind};
use airlock_store_port::{
    Approvals, Calls, DecisionInput, NewApproval, NewCall, Replicas, Sessions, Settings, Signal,
    Store, StoreError, Work,
};
use airlock_store_postgres::PostgresStore;
use serde_json::json;
use std::sync::{Barrier, mpsc};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

fn replicas(n: usize) -> Vec<PostgresStore> {
    let url = airlock_testkit::postgres::cluster().database();
    (0..n)
        .map(|_| {
            let store = PostgresStore::connect(&url, 4).unwrap();
            store.renew_lease(LEASE).unwrap();
            store
        })
        .collect()
}

/// Ends `store`'s lease now, as a replica that stopped renewing it.
fn expire(store: &PostgresStore) {
    store.renew_lease(Duration::ZERO).unwrap();
}

#[test]
fn only_work_whose_lease_ran_out_is_taken_and_by_one_replica_once() {
    let stores = replicas(5);
    let (dead, live) = (&stores[0], &stores[1]);
    dead.hold(Work::Turn, "session_1").unwrap();
    dead.hold(Work::AgentItem, "approval_1").unwrap();
    live.hold(Work::AgentItem, "approval_1").unwrap();
    assert!(
        live.take_expired().unwrap().is_empty(),
        "a live replica's work is never taken"
    );
    assert!(live.held_by_live(Work::Turn, "session_1").unwrap());

    expire(dead);
    // Every other replica looks at once; one takes it all.
    let barrier = Barrier::new(stores.len() - 1);
    let taken: Vec<Vec<(Work, String)>> = std::thread::scope(|scope| {
        let looks: Vec<_> = stores[1..]
            .iter()
            .map(|store| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    store.take_expired().unwrap()
                })
            })
            .collect();
        looks.into_iter().map(|l| l.join().unwrap()).collect()
    });
    let mut all: Vec<_> = taken.into_iter().flatten().collect();
    all.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        all,
        [
            (Work::AgentItem, "approval_1".to_string()),
            (Work::Turn, "session_1".to_string())
        ],
        "each piece of the dead replica's work taken once"
    );
    assert!(!live.held_by_live(Work::Turn, "session_1").unwrap());
    assert!(
        live.held_by_live(Work::AgentItem, "approval_1").unwrap(),
        "the live replica still holds what its own hook waits on"
    );
    // The dead replica coming back learns it holds nothing any more.
    assert!(!dead.renew_lease(LEASE).unwrap());
    assert!(dead.renew_lease(LEASE).unwrap());
}

#[test]
fn a_change_the_policy_reads_moves_the_generation_in_its_transaction() {
    let stores = replicas(2);
    let before = stores[0].policy_generation().unwrap();
    stores[1]
        .set_setting("workspace_mode", &json!("never_ask"))
        .unwrap();
    let after = stores[0].policy_generation().unwrap();
    assert!(after > before, "{before} → {after}");
    stores[1].ensure_session("chat").unwrap();
    assert_eq!(
        stores[0].policy_generation().unwrap(),
        after,
        "a session is nothing the policy reads"
    );
}

#[test]
fn a_decision_is_heard_by_every_replica_when_it_commits_and_events_by_the_others() {
    let stores = replicas(2);
    let (deciding, waiting) = (&stores[0], &stores[1]);
    let (heard, hearing) = mpsc::channel();
    let heard = std::sync::Mutex::new(heard);
    waiting
        .listen(Box::new(move |signal| {
            let _ = heard.lock().unwrap().send(signal);
        }))
        .unwrap();
    let (session, _) = deciding.start_turn("chat", "write").unwrap();
    let args = json!({"path": "a.txt"});
    deciding
        .record_assistant_step(
            &session.id,
            "",
            &[NewCall {
                id: "call_1".into(),
                provider_call_id: "p1".into(),
                model_name: "builtin__write_file".into(),
                server: "builtin".into(),
                tool: "write_file".into(),
                raw_args: args.to_string(),
                args_hash: Some(airlock_core::args_hash(&args)),
                args: Some(args.clone()),
                state: CallState::Pending,
                policy_step: None,
                policy_why: None,
                result: None,
                grant_use: None,
                same_as: None,
            }],
            &[NewApproval {
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
            }],
        )
        .unwrap();
    deciding
        .decide(&DecisionInput::new(
            "approval_1",
            ApprovalStatus::Approved,
            DecidedBy::Inbox,
        ))
        .unwrap();
    let decided = std::iter::from_fn(|| hearing.recv_timeout(Duration::from_secs(10)).ok())
        .find(|signal| matches!(signal, Signal::Decided(_)))
        .expect("the decision was not heard");
    assert_eq!(decided, Signal::Decided(vec!["approval_1".into()]));
    // Started by the decision, claimed by whichever replica drives the turn: once.
    assert_eq!(waiting.claim_invocation(&["call_1"]).unwrap(), ["call_1"]);
    assert!(deciding.claim_invocation(&["call_1"]).unwrap().is_empty());

    // Events: the other replica's, small and too large for a notification; never its own.
    waiting.publish(r#"{"type":"own"}"#);
    let large = format!(r#"{{"type":"large","text":"{}"}}"#, "x".repeat(20_000));
    deciding.publish(r#"{"type":"small"}"#);
    deciding.publish(&large);
    let events: Vec<String> =
        std::iter::from_fn(|| hearing.recv_timeout(Duration::from_secs(10)).ok())
            .filter_map(|signal| match signal {
                Signal::Event(json) => Some(json),
                _ => None,
            })
            .take(2)
            .collect();
    assert_eq!(events, [r#"{"type":"small"}"#.to_string(), large]);
    assert!(Store::replicas(waiting).is_some());
}

/// The port is synchronous and its callers are often tokio tasks (a turn, an API handler) that
/// run many operations in one poll, as `airlock-bench replicas` did when it opened four
/// replicas and started 16 chats: the operation after the task's cooperative budget ran out
/// spun for ever on the pool's semaphore, and the bench never ended.
#[test]
fn many_operations_in_one_poll_of_a_tokio_task_all_finish() {
    const OPERATIONS: usize = 1000;
    let store = replicas(1).remove(0);
    let (done, finished) = mpsc::channel();
    // On a thread of its own: a store that spins never gives its thread back.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // One poll: nothing here yields to the runtime.
        runtime.block_on(async {
            for _ in 0..OPERATIONS {
                store.policy_generation().unwrap();
            }
        });
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the store's operations in one poll of a task did not finish within 60 s");
}

/// A turn in `store` whose one call (`call_id`) was approved: running, not claimed yet.
fn approved_call(store: &PostgresStore, chat: &str, call_id: &str) -> String {
    let (session, _) = store.start_turn(chat, "write").unwrap();
    let args = json!({"path": "a.txt"});
    let approval_id = format!("approval_of_{call_id}");
    store
        .record_assistant_step(
            &session.id,
            "",
            &[NewCall {
                id: call_id.into(),
                provider_call_id: call_id.into(),
                model_name: "builtin__write_file".into(),
                server: "builtin".into(),
                tool: "write_file".into(),
                raw_args: args.to_string(),
                args_hash: Some(airlock_core::args_hash(&args)),
                args: Some(args.clone()),
                state: CallState::Pending,
                policy_step: None,
                policy_why: None,
                result: None,
                grant_use: None,
                same_as: None,
            }],
            &[NewApproval {
                approval_id: approval_id.clone(),
                tool_call_id: Some(call_id.into()),
                session_id: session.id.clone(),
                kind: ItemKind::ToolCall,
                server: "builtin".into(),
                tool: "write_file".into(),
                args_hash: airlock_core::args_hash(&args),
                args,
                why: "required".into(),
                expires_at: None,
            }],
        )
        .unwrap();
    store
        .decide(&DecisionInput::new(
            &approval_id,
            ApprovalStatus::Approved,
            DecidedBy::Inbox,
        ))
        .unwrap();
    session.id
}

fn lease_lost<T: std::fmt::Debug>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::LeaseLost { .. }))
}

#[test]
fn a_replica_whose_work_was_taken_over_writes_nothing_more_for_it() {
    let stores = replicas(2);
    let (paused, taker) = (&stores[0], &stores[1]);
    let session = approved_call(paused, "chat", "call_1");
    let stale = paused.hold(Work::Turn, &session).unwrap();
    assert_eq!(
        paused.hold(Work::Turn, &session).unwrap(),
        stale,
        "the same hold, the same fence"
    );

    expire(paused);
    assert_eq!(
        taker.take_expired().unwrap(),
        [(Work::Turn, session.clone())]
    );
    let fence = taker.hold(Work::Turn, &session).unwrap();
    assert_ne!(fence.token, stale.token);
    assert!(!paused.holds(&stale).unwrap());
    assert!(taker.holds(&fence).unwrap());

    // The paused replica wakes: it neither claims the call nor writes anything for the turn.
    assert!(lease_lost(
        paused.claim_invocation_fenced(&["call_1"], Some(&stale))
    ));
    assert_eq!(
        taker
            .claim_invocation_fenced(&["call_1"], Some(&fence))
            .unwrap(),
        ["call_1"],
        "the call was not claimed by the refused write"
    );
    let result = json!({"ok": true});
    taker
        .finish_call_fenced("call_1", CallState::Succeeded, &result, Some(&fence))
        .unwrap();
    let overwrite = json!({"type": "error", "message": "interrupted"});
    assert!(lease_lost(paused.finish_call_fenced(
        "call_1",
        CallState::Failed,
        &overwrite,
        Some(&stale)
    )));
    assert!(lease_lost(paused.mark_running_fenced(
        &[("call_1".into(), json!({}))],
        Some(&stale)
    )));
    assert!(lease_lost(paused.record_assistant_step_fenced(
        &session,
        "stale",
        &[],
        &[],
        Some(&stale)
    )));
    assert!(lease_lost(paused.set_session_status_fenced(
        &session,
        airlock_core::SessionStatus::Failed,
        Some("stale"),
        Some(&stale)
    )));
    let call = taker.call("call_1").unwrap().unwrap();
    assert_eq!(
        (call.state, call.result),
        (CallState::Succeeded, Some(result))
    );
    assert_eq!(taker.messages(&session).unwrap().len(), 2, "no stale step");
    // Coming back as a replica again does not give it the old hold back.
    assert!(!paused.renew_lease(LEASE).unwrap());
    assert!(lease_lost(
        paused.claim_invocation_fenced(&["call_1"], Some(&stale))
    ));
}
