use super::*;
use airlock_core::{ApprovalStatus, CallState, DecidedBy, ItemKind, RememberScope, args_hash};
use serde_json::json;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("airlock.db")).unwrap();
    (dir, store)
}

/// One assistant step with `n` pending `fs/write_file` calls; returns (session id, [(approval id, call id)]).
fn pending_step(store: &Store, session: &str, n: usize) -> (String, Vec<(String, String)>) {
    let session = store.ensure_session(session).unwrap();
    let (mut calls, mut approvals, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let args = json!({"path": format!("{i}.txt"), "content": "x"});
        let call_id = airlock_core::ids::new_id("call");
        let approval_id = airlock_core::ids::new_approval_id();
        calls.push(NewCall {
            id: call_id.clone(),
            provider_call_id: format!("call_{i}"),
            model_name: "fs__write_file".into(),
            server: "fs".into(),
            tool: "write_file".into(),
            raw_args: args.to_string(),
            args: Some(args.clone()),
            args_hash: Some(args_hash(&args)),
            state: CallState::Pending,
            policy_step: Some(airlock_core::policy::Step::ServerDefault),
            policy_why: Some("server default".into()),
            result: None,
            grant_use: None,
            same_as: None,
        });
        approvals.push(NewApproval {
            approval_id: approval_id.clone(),
            tool_call_id: Some(call_id.clone()),
            session_id: session.id.clone(),
            kind: ItemKind::ToolCall,
            server: "fs".into(),
            tool: "write_file".into(),
            args_hash: args_hash(&args),
            args,
            why: "server default".into(),
            expires_at: None,
        });
        ids.push((approval_id, call_id));
    }
    store
        .record_assistant_step(&session.id, "", &calls, &approvals)
        .unwrap();
    (session.id, ids)
}

/// One assistant step with one pending call; returns (session id, approval id, call id).
fn pending_call(store: &Store, session: &str) -> (String, String, String) {
    let (session, mut ids) = pending_step(store, session, 1);
    let (approval_id, call_id) = ids.remove(0);
    (session, approval_id, call_id)
}

fn input(id: &str, approve: bool) -> DecisionInput {
    let status = if approve {
        ApprovalStatus::Approved
    } else {
        ApprovalStatus::Denied
    };
    DecisionInput::new(id, status, DecidedBy::Api)
}

#[test]
fn pragmas_are_wal_and_full() {
    let (_dir, store) = open();
    let conn = store.lock();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    let sync: i64 = conn
        .pragma_query_value(None, "synchronous", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(sync, 2, "synchronous=FULL");
}

#[test]
fn newer_database_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("airlock.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err().to_string();
    assert!(err.contains("newer Airlock") && err.contains("99"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!dir.path().join("airlock.db-wal").exists());
}

#[test]
fn reopening_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("airlock.db");
    let approval_id = {
        let store = Store::open(&path).unwrap();
        pending_call(&store, "s").1
    };
    let store = Store::open(&path).unwrap();
    let pending = store.pending_approvals().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].approval_id, approval_id);
    assert_eq!(pending[0].session, "s");
}

#[test]
fn approve_with_edit_sets_run_args_and_audits() {
    let (_dir, store) = open();
    let (_session, approval_id, call_id) = pending_call(&store, "s");
    let edited = json!({"path": "b.txt", "content": "y"});
    let outcome = store
        .decide(&DecisionInput {
            edited_args: Some(edited.clone()),
            for_chat: true,
            ..input(&approval_id, true)
        })
        .unwrap();
    assert_eq!(outcome.run_args, edited);
    let call = store.call(&call_id).unwrap().unwrap();
    // The step's only pending call: its decision also starts it.
    assert_eq!(call.state, CallState::Running);
    assert_eq!(call.run_args, Some(edited));
    assert_eq!(
        store.session_grants(&call.session_id).unwrap(),
        vec![("fs".to_string(), "write_file".to_string())]
    );
    let audit = store.audit_rows(10).unwrap();
    let row = audit.iter().find(|r| r.action == "approved").unwrap();
    assert_eq!(row.actor, "api");
    assert_eq!(row.detail["edited"], json!(true));
    assert!(store.pending_approvals().unwrap().is_empty());
}

#[test]
fn deny_writes_execution_denied_result() {
    let (_dir, store) = open();
    let (_s, approval_id, call_id) = pending_call(&store, "s");
    store
        .decide(&DecisionInput {
            reason: Some("not that file".into()),
            remember: RememberScope::Always,
            ..input(&approval_id, false)
        })
        .unwrap();
    let call = store.call(&call_id).unwrap().unwrap();
    assert_eq!(call.state, CallState::Denied);
    assert_eq!(
        call.result,
        Some(json!({"type": "execution-denied", "reason": "not that file"}))
    );
    let remembered = store.remembered().unwrap();
    assert_eq!(remembered.len(), 1);
    assert!(!remembered[0].entry.approve);
    assert_eq!(remembered[0].entry.session_id, None);
}

#[test]
fn refusals_change_nothing_and_leave_an_audit_row() {
    let (_dir, store) = open();
    let (_s, approval_id, call_id) = pending_call(&store, "s");
    let (other_session, _, _) = pending_call(&store, "other");

    let err = store.decide(&input("nope", true)).unwrap_err();
    assert!(matches!(err, StoreError::UnknownApproval(_)), "{err}");

    let err = store
        .decide(&DecisionInput {
            session_id: Some(other_session),
            ..input(&approval_id, true)
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::ForeignSession { .. }), "{err}");
    assert_eq!(
        store.call(&call_id).unwrap().unwrap().state,
        CallState::Pending
    );

    store.decide(&input(&approval_id, false)).unwrap();
    let err = store.decide(&input(&approval_id, true)).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyDecided { .. }), "{err}");
    assert_eq!(
        store.call(&call_id).unwrap().unwrap().state,
        CallState::Denied
    );

    let refusals = store
        .audit_rows(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.action == "decision_refused")
        .count();
    assert_eq!(refusals, 3);
}

#[test]
fn running_is_only_entered_from_approved() {
    let (_dir, store) = open();
    let (_s, approval_id, call_id) = pending_call(&store, "s");
    assert!(
        store.mark_running(&[(call_id.clone(), json!({}))]).is_err(),
        "a pending call must not run"
    );
    store.decide(&input(&approval_id, true)).unwrap();
    assert_eq!(store.running_calls().unwrap().len(), 1);
    assert!(
        store.mark_running(&[(call_id.clone(), json!({}))]).is_err(),
        "a running call is not started twice"
    );
    store
        .finish_call(&call_id, CallState::Succeeded, &json!("ok"))
        .unwrap();
    assert_eq!(
        store.call(&call_id).unwrap().unwrap().state,
        CallState::Succeeded
    );
}

#[test]
fn the_steps_last_decision_starts_its_approved_calls_in_the_same_transaction() {
    let (_dir, store) = open();
    let (_s, ids) = pending_step(&store, "s", 3);
    let state = |i: usize| store.call(&ids[i].1).unwrap().unwrap().state;
    store.decide(&input(&ids[2].0, true)).unwrap();
    assert_eq!(
        state(2),
        CallState::Approved,
        "other calls of the step still wait"
    );
    store.decide(&input(&ids[0].0, true)).unwrap();
    assert_eq!(
        (state(0), state(2)),
        (CallState::Approved, CallState::Approved)
    );
    store.decide(&input(&ids[1].0, false)).unwrap();
    assert_eq!(
        [state(0), state(1), state(2)],
        [CallState::Running, CallState::Denied, CallState::Running]
    );
    // And an approval in another step is not touched by this one.
    let (_s, other) = pending_step(&store, "other", 2);
    store.decide(&input(&other[0].0, true)).unwrap();
    assert_eq!(
        store.call(&other[0].1).unwrap().unwrap().state,
        CallState::Approved
    );
}

#[test]
fn cancel_marks_requests_and_calls() {
    let (_dir, store) = open();
    let (session, approval_id, call_id) = pending_call(&store, "s");
    assert_eq!(
        store.pending_of_session(&session).unwrap(),
        vec![approval_id.clone()]
    );
    let cancelled = store
        .decide(&DecisionInput::new(
            &approval_id,
            ApprovalStatus::Cancelled,
            DecidedBy::Engine,
        ))
        .unwrap();
    assert_eq!(cancelled.approval.status, ApprovalStatus::Cancelled);
    assert_eq!(
        store.call(&call_id).unwrap().unwrap().state,
        CallState::Cancelled
    );
    assert!(store.decide(&input(&approval_id, true)).is_err());
}

#[test]
fn a_batch_applies_or_refuses_each_item_on_its_own_in_one_transaction() {
    let (_dir, store) = open();
    let (_s, first) = pending_step(&store, "s", 2);
    let (_o, second) = pending_step(&store, "other", 2);
    store.decide(&input(&second[1].0, false)).unwrap();
    let state = |call: &str| store.call(call).unwrap().unwrap().state;
    let before = store.audit_rows(1000).unwrap().len();

    let inputs = [
        input(&first[0].0, true),
        input("nope", true),
        input(&first[1].0, false),
        input(&second[0].0, true),
        input(&second[1].0, true),
        DecisionInput {
            edited_args: Some(json!({"path": "x"})),
            refusal: Some("no edit of write_file".into()),
            ..input(&first[1].0, true)
        },
    ];
    // The engine's own refusal of the last item is recorded like the store's.
    let outcomes = store.decide_many(&inputs).unwrap();
    assert_eq!(outcomes.len(), 6);
    let status = |i: usize| outcomes[i].as_ref().unwrap().approval.status;
    assert_eq!(status(0), ApprovalStatus::Approved);
    assert!(matches!(outcomes[1], Err(StoreError::UnknownApproval(_))));
    assert_eq!(status(2), ApprovalStatus::Denied);
    assert_eq!(status(3), ApprovalStatus::Approved);
    assert!(
        matches!(&outcomes[4], Err(StoreError::AlreadyDecided { status, .. }) if status == "denied")
    );
    assert!(
        matches!(&outcomes[5], Err(StoreError::AlreadyDecided { .. })),
        "an item already decided is reported so, before the engine's refusal"
    );

    // Both steps are complete: each one's approved calls were started by the batch.
    assert_eq!(
        [state(&first[0].1), state(&first[1].1)],
        [CallState::Running, CallState::Denied]
    );
    assert_eq!(
        [state(&second[0].1), state(&second[1].1)],
        [CallState::Running, CallState::Denied]
    );
    assert!(store.pending_approvals().unwrap().is_empty());

    // One audit row per item, refusals included.
    let audit: Vec<_> = store
        .audit_rows(1000)
        .unwrap()
        .into_iter()
        .skip(before)
        .collect();
    let actions: Vec<&str> = audit.iter().map(|r| r.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "approved",
            "decision_refused",
            "denied",
            "approved",
            "decision_refused",
            "decision_refused"
        ]
    );
    let ids: Vec<Option<&str>> = audit.iter().map(|r| r.approval_id.as_deref()).collect();
    let expected: Vec<Option<&str>> = inputs
        .iter()
        .map(|i| Some(i.approval_id.as_str()))
        .collect();
    assert_eq!(ids, expected);
}

#[test]
fn a_failed_batch_transaction_decides_nothing() {
    let (dir, store) = open();
    let (_s, ids) = pending_step(&store, "s", 3);
    let conn = rusqlite::Connection::open(dir.path().join("airlock.db")).unwrap();
    // The third decision fails in the database itself (not a refusal).
    conn.execute_batch(&format!(
        "CREATE TRIGGER fail_third BEFORE INSERT ON decisions WHEN NEW.approval_id = '{}'
         BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;",
        ids[2].0
    ))
    .unwrap();
    let before = store.audit_rows(1000).unwrap().len();
    let inputs: Vec<DecisionInput> = ids
        .iter()
        .map(|(approval, _)| input(approval, true))
        .collect();
    let error = store.decide_many(&inputs).unwrap_err();
    assert!(error.to_string().contains("disk trouble"), "{error}");
    assert_eq!(store.pending_approvals().unwrap().len(), 3);
    for (_, call) in &ids {
        assert_eq!(store.call(call).unwrap().unwrap().state, CallState::Pending);
    }
    assert_eq!(
        store.audit_rows(1000).unwrap().len(),
        before,
        "no audit row for a decision not made"
    );
}

#[test]
fn an_engine_refusal_changes_nothing() {
    let (_dir, store) = open();
    let (_s, approval_id, call_id) = pending_call(&store, "s");
    let error = store
        .decide(&DecisionInput {
            refusal: Some("the arguments changed since they were shown".into()),
            ..input(&approval_id, true)
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::Refused(_)), "{error}");
    assert_eq!(
        store.call(&call_id).unwrap().unwrap().state,
        CallState::Pending
    );
    assert_eq!(store.pending_approvals().unwrap().len(), 1);
}

/// Security finding: "edit + remember exact arguments" remembered the proposal's hash, so the
/// proposal (never approved) ran without asking from then on.
#[test]
fn remembering_exact_arguments_remembers_what_runs_not_the_proposal() {
    let (_dir, store) = open();
    let (_s, approval_id, _call) = pending_call(&store, "s");
    let proposed = store.approval(&approval_id).unwrap().unwrap();
    let edited = json!({"path": "safe.txt", "content": "ok"});
    store
        .decide(&DecisionInput {
            edited_args: Some(edited.clone()),
            remember: RememberScope::Always,
            remember_exact_args: true,
            ..input(&approval_id, true)
        })
        .unwrap();
    let remembered = store.remembered().unwrap();
    assert_eq!(remembered.len(), 1);
    let hash = remembered[0].entry.args_hash.clone();
    assert_eq!(hash, Some(airlock_core::args_hash(&edited)));
    assert_ne!(hash, Some(proposed.args_hash));
}

/// Every agent fails closed: a database from before version 9 whose fallbacks nobody set moves
/// them to `deny`; one the person set stays; a new agent starts with the default, deny.
#[test]
fn agents_fail_closed_unless_the_person_chose_ask() {
    for chosen in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("airlock.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrations().to_version(&mut conn, 8).unwrap();
            conn.execute(
                "INSERT INTO agents (name, fallback) VALUES ('codex', 'ask'), ('claude-code', 'ask')",
                [],
            )
            .unwrap();
            if chosen {
                conn.execute(
                    "INSERT INTO audit (at, actor, action, detail) VALUES ('t', 'user', 'agent_fallback_set', '{\"agent\":\"codex\",\"fallback\":\"ask\"}')",
                    [],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let fallback = |name: &str| {
            store
                .agents()
                .unwrap()
                .into_iter()
                .find(|a| a.name == name)
                .unwrap()
                .fallback
        };
        let expected = if chosen {
            airlock_core::AgentFallback::Ask
        } else {
            airlock_core::AgentFallback::Deny
        };
        assert_eq!(fallback("codex"), expected, "chosen: {chosen}");
        // Nobody chose Claude Code's: it fails closed too.
        assert_eq!(fallback("claude-code"), airlock_core::AgentFallback::Deny);
    }
    let (_dir, store) = open();
    store
        .record_agent_call(
            &AgentActivity {
                agent: "codex",
                tool: "Bash",
                cwd: None,
                outcome: "allowed",
            },
            "s1",
            &json!({}),
            None,
        )
        .unwrap();
    assert_eq!(
        store.agents().unwrap()[0].fallback,
        airlock_core::AgentFallback::Deny
    );
}

/// A database as version 11 left it (the migrations before 12), with rows in the tables that
/// migration 12 rebuilds.
fn database_before_round_pages(path: &std::path::Path) {
    let mut conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    Migrations::new(MIGRATIONS[..11].iter().map(|sql| M::up(sql)).collect())
        .to_latest(&mut conn)
        .unwrap();
    conn.execute_batch(
        "INSERT INTO sessions (id, name, created_at, updated_at) VALUES ('ses1', 's', 't', 't');
         INSERT INTO messages (id, session_id, role, content, created_at) VALUES (7, 'ses1', 'user', 'hi', 't');
         INSERT INTO tool_calls (id, session_id, message_id, position, provider_call_id, model_name,
             server, tool, raw_args, state, created_at, updated_at)
             VALUES ('call1', 'ses1', 7, 0, 'c1', 'fs__write_file', 'fs', 'write_file', '{}', 'pending', 't', 't');
         INSERT INTO approval_requests (approval_id, tool_call_id, session_id, kind, server, tool, args,
             args_hash, why, status, created_at)
             VALUES ('ap1', 'call1', 'ses1', 'tool_call', 'fs', 'write_file', '{}', 'h', 'w', 'approved', 't');
         INSERT INTO decisions (approval_id, approve, decided_by, decided_at, grant_covers)
             VALUES ('ap1', 1, 'api', 't', 'granted for 15 min: fs/write_file in this chat');
         INSERT INTO audit (id, at, actor, action) VALUES (41, 't', 'user', 'something');",
    )
    .unwrap();
}

#[test]
fn migration_12_keeps_every_row_and_id_and_drops_what_rewrote_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("airlock.db");
    database_before_round_pages(&path);
    let store = Store::open(&path).unwrap();
    let messages = store.messages("ses1").unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!((messages[0].id, messages[0].calls.len()), (7, 1));
    assert!(store.decision("ap1").unwrap().unwrap().approve);
    assert_eq!(
        messages[0].calls[0].grant.as_deref(),
        Some("granted for 15 min: fs/write_file in this chat"),
        "what a grant covers (migration 10) is kept"
    );
    assert_eq!(store.audit_rows(10).unwrap()[0].id, 41);
    // New rows go on from the largest id, as with AUTOINCREMENT (no row is ever deleted).
    assert_eq!(store.append_user_message("ses1", "again").unwrap(), 8);
    let conn = store.lock();
    let text = |sql: &str| -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(
        text("SELECT name FROM sqlite_sequence WHERE name IN ('messages', 'audit')"),
        Vec::<String>::new(),
        "no sequence page rewritten on every insert"
    );
    let indexes = text(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('tool_calls', 'decisions') ORDER BY name",
    );
    assert_eq!(
        indexes,
        [
            "sqlite_autoindex_tool_calls_1",
            "tool_calls_by_leader",
            "tool_calls_by_message",
            "tool_calls_running"
        ],
        "decisions is its key's own b-tree; no index of calls by session or by every state"
    );
    let fk: Vec<String> = text("SELECT \"table\" FROM pragma_foreign_key_check");
    assert!(fk.is_empty(), "{fk:?}");
}

/// The plan SQLite chose for `sql`, one line per step.
fn plan(store: &Store, sql: &str) -> String {
    let conn = store.lock();
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    stmt.query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .map(|r| r.unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_queries_that_lost_an_index_still_search_one() {
    let (_dir, store) = open();
    let select = |filter: &str| {
        format!(
            "SELECT {} FROM tool_calls WHERE {filter} ORDER BY message_id, position",
            crate::calls::CALL_COLUMNS
        )
    };
    // A session's calls, through its messages.
    let of_session = plan(
        &store,
        &select("message_id IN (SELECT id FROM messages WHERE session_id = 'x')"),
    );
    assert!(
        of_session.contains("SEARCH tool_calls USING INDEX tool_calls_by_message")
            && of_session.contains("USING COVERING INDEX messages_by_session"),
        "{of_session}"
    );
    // The running calls at start: the partial index, no scan of every call.
    let running = plan(&store, &select("state = 'running'"));
    // (The grant a call's approval made is read by key for each call found: no scan there.)
    let mut lines = running.lines();
    assert_eq!(
        lines.next(),
        Some("SCAN tool_calls USING INDEX tool_calls_running"),
        "{running}"
    );
    assert!(lines.all(|line| !line.contains("SCAN")), "{running}");
    // A decision's row, by its key.
    let decision = plan(
        &store,
        "SELECT approve FROM decisions WHERE approval_id = 'x'",
    );
    assert_eq!(
        decision,
        "SEARCH decisions USING PRIMARY KEY (approval_id=?)"
    );
}

#[test]
fn the_steps_last_decision_claims_the_calls_it_starts() {
    let (_dir, store) = open();
    let (_s, ids) = pending_step(&store, "s", 2);
    let first = store
        .decide_and_start(&[input(&ids[0].0, true)], |_| {})
        .unwrap();
    assert!(first.started.is_empty(), "the other call still waits");
    // Told while the store is still locked: no other thread can find the calls running first.
    let mut told = None;
    let last = store
        .decide_and_start(&[input(&ids[1].0, true)], |started| {
            told = Some((started.to_vec(), store.conn.try_lock().is_err()));
        })
        .unwrap();
    let (told, locked) = told.expect("the started calls were told");
    assert!(locked, "told after the store's lock was released");
    assert_eq!(told, last.started);
    let mut started = last.started.clone();
    started.sort();
    let mut expected = vec![ids[0].1.clone(), ids[1].1.clone()];
    expected.sort();
    assert_eq!(started, expected);
    // Claimed in the decision's transaction: nobody claims them again.
    assert!(
        store
            .claim_invocation(&[ids[0].1.as_str(), ids[1].1.as_str()])
            .unwrap()
            .is_empty()
    );
}

/// Commits `n` durable writes of `kib` KiB each (a setting rewritten).
fn write_pages(store: &Store, n: usize, kib: usize) {
    for i in 0..n {
        let value = json!("x".repeat(kib * 1024 + i));
        store.set_setting("filler", &value).unwrap();
    }
}

#[test]
fn commits_never_checkpoint_and_the_log_is_then_rewritten_in_place() {
    let (dir, store) = open();
    let wal = dir.path().join("airlock.db-wal");
    let held = store.log.hold.clone();
    let holding = held.lock().unwrap();
    // Well past the checkpoint threshold, with the checkpointer held.
    write_pages(&store, 12, 400);
    let written = store.write_counters();
    assert!(
        written.pages > u64::from(wal::CHECKPOINT_PAGES),
        "{written:?}"
    );
    let frames_in_file = |len: u64| len.saturating_sub(32) / (4096 + 24);
    let grown = std::fs::metadata(&wal).unwrap().len();
    assert!(
        frames_in_file(grown) >= written.pages,
        "a commit checkpointed the log (and started it again): {} frames in the file, {} written",
        frames_in_file(grown),
        written.pages
    );
    assert_eq!(written.checkpoints, 0);
    // Let the checkpointer go (the commits past the threshold woke it). Commits go on back to
    // back, as under load: the log still starts again from its beginning, at the first write
    // that begins once the checkpointer copied all of it.
    drop(holding);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while store.log.in_log() >= u64::from(wal::CHECKPOINT_PAGES) {
        assert!(
            std::time::Instant::now() < deadline,
            "the log never started again: {} pages in it, {:?}",
            store.log.in_log(),
            store.write_counters()
        );
        write_pages(&store, 1, 1);
    }
    assert!(store.write_counters().checkpoints >= 1);
    // Later commits overwrite the file in place: it neither grows nor shrinks.
    let size = std::fs::metadata(&wal).unwrap().len();
    assert!(size >= grown, "the log's file was truncated");
    write_pages(&store, 3, 8);
    assert_eq!(
        std::fs::metadata(&wal).unwrap().len(),
        size,
        "the log's file kept its size"
    );
}

/// A team server's members and routed items: what the engine's quorum and escalation rely on.
mod team {
    use super::*;
    use airlock_protocol::TeamRole;

    fn member(name: &str, role: TeamRole) -> NewMemberRow {
        NewMemberRow {
            id: format!("mbr_{name}"),
            name: name.into(),
            role,
            groups: vec!["release".into()],
            token_hash: format!("hash-of-{name}"),
        }
    }

    fn routed(approval_id: &str, steps: &[&str]) -> ItemRouting {
        ItemRouting {
            approval_id: approval_id.into(),
            route_id: None,
            steps: steps.iter().map(|s| s.to_string()).collect(),
            step: 0,
            assignee: steps[0].into(),
            quorum: 2,
            escalate_after_secs: Some(60),
            next_at: Some(now()),
            note: None,
        }
    }

    #[test]
    fn the_first_admin_is_made_once_and_the_last_admin_stays() {
        let (_dir, store) = open();
        assert!(!store.has_members().unwrap());
        store
            .add_member(&member("root", TeamRole::Admin), true, "team_init")
            .unwrap();
        let second = store.add_member(&member("eve", TeamRole::Admin), true, "team_init");
        assert!(matches!(second, Err(StoreError::Refused(_))), "{second:?}");
        let found = store.member_by_token_hash("hash-of-root").unwrap().unwrap();
        assert_eq!((found.name.as_str(), found.role), ("root", TeamRole::Admin));
        assert_eq!(found.groups, ["release"]);
        assert!(store.member_by_token_hash("hash-of-eve").unwrap().is_none());
        let last = store.remove_member("root", "root");
        assert!(matches!(last, Err(StoreError::Refused(_))), "{last:?}");
        store
            .add_member(&member("ana", TeamRole::Approver), false, "root")
            .unwrap();
        assert!(store.remove_member("ana", "root").unwrap());
        assert!(store.member_by_token_hash("hash-of-ana").unwrap().is_none());
    }

    #[test]
    fn an_approval_counts_once_per_person_and_arguments() {
        let (_dir, store) = open();
        let (_, id, _) = pending_call(&store, "s");
        assert!(store.route_item(&routed(&id, &["group:release"])).unwrap());
        // Routed once: the first routing stays.
        assert!(!store.route_item(&routed(&id, &["person:eve"])).unwrap());
        let count = |member: &str, hash: &str| store.record_vote(&id, member, member, hash, None);
        assert_eq!(count("ana", "h1").unwrap(), 1);
        assert_eq!(count("ana", "h1").unwrap(), 1, "the same person twice");
        assert_eq!(count("bo", "h2").unwrap(), 1, "other arguments count apart");
        assert_eq!(count("bo", "h1").unwrap(), 2);
        // A decided item counts nothing more.
        store.decide(&input(&id, false)).unwrap();
        assert!(matches!(
            count("cy", "h1"),
            Err(StoreError::AlreadyDecided { .. })
        ));
    }

    #[test]
    fn an_item_escalates_from_each_step_once() {
        let (_dir, store) = open();
        let (_, id, _) = pending_call(&store, "s");
        store
            .route_item(&routed(&id, &["group:release", "group:oncall"]))
            .unwrap();
        assert_eq!(store.timed_routing().unwrap().len(), 1);
        let moved = store.escalate(&id, 0, None).unwrap().unwrap();
        assert_eq!((moved.step, moved.assignee.as_str()), (1, "group:oncall"));
        assert!(store.escalate(&id, 0, None).unwrap().is_none(), "twice");
        assert!(
            store.escalate(&id, 1, None).unwrap().is_none(),
            "past the last step"
        );
        // Handed to one person: the assignee changes, the step stays.
        let handed = store
            .delegate(&id, "person:cy", Some("yours"), "ana")
            .unwrap();
        assert_eq!((handed.step, handed.assignee.as_str()), (1, "person:cy"));
        assert_eq!(handed.note.as_deref(), Some("yours"));
        assert!(store.timed_routing().unwrap().is_empty(), "no time set");
    }
}
