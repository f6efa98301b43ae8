//! The shared store suite: every test here runs against both adapters of the store port, the
//! desktop's SQLite file and a PostgreSQL database of its own in a throwaway cluster (as Zed's
//! collab tests run on both databases). A test is written once, against the port's traits.
// The throwaway cluster runs where PostgreSQL's server does (Unix).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use airlock_core::{
    AgentFallback, ApprovalStatus, ArgRule, CallState, DecidedBy, ItemKind, Mode, RuleEffect,
    RulePattern, ServerDefault, SessionStatus, ToolSetting,
};
use airlock_protocol::TeamRole;
use airlock_store_port::{
    AgentActivity, Approvals, Audit, Calls, DecisionInput, Fence, GrantLimits, Grants,
    HostedCallUpdate, ItemRouting, NewAgentRequest, NewApproval, NewCall, NewMemberRow, NewRoute,
    PinCheck, Requests, Rules, Sessions, Settings, Store, StoreError, Work,
};
use serde_json::{Value, json};

/// Declares each test twice: `sqlite::NAME` and `postgres::NAME`.
macro_rules! test_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    let dir = tempfile::tempdir().unwrap();
                    let store = airlock_store_sqlite::Store::open(&dir.path().join("airlock.db"))
                        .unwrap();
                    super::$name(&store);
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    let url = airlock_testkit::postgres::cluster().database();
                    let store = airlock_store_postgres::PostgresStore::connect(&url, 8).unwrap();
                    super::$name(&store);
                }
            )*
        }
    };
}

test_both! {
    a_session_is_created_once_and_found_by_name_and_id,
    a_session_name_must_be_printable,
    sessions_created_at_once_from_many_threads_are_one,
    a_turn_starts_its_session_and_its_message,
    a_session_keeps_its_mode_status_and_title,
    a_setting_is_kept_and_its_change_audited,
    the_workspace_mode_is_ask_until_set,
    a_rule_is_added_once_and_removed_with_its_audit,
    the_audit_trail_gives_its_newest_rows_in_order,
    nothing_remembered_or_granted_in_a_new_store,
    a_call_that_asks_waits_is_approved_started_and_finished,
    a_request_is_decided_once,
    a_request_decided_from_many_threads_at_once_is_decided_once,
    a_denial_settles_the_call_with_the_persons_reason,
    an_unknown_or_foreign_request_is_refused_and_the_batch_goes_on,
    a_counted_grant_lets_its_calls_run_until_its_last_use,
    allowing_for_the_chat_grants_the_tool_in_that_chat,
    an_identical_call_of_the_step_follows_its_leaders_decision,
    only_an_allowed_or_approved_call_is_marked_running,
    a_turns_fenced_writes_go_through_while_it_is_held_and_not_after_its_take_over,
    a_form_request_is_answered_and_its_answer_read_back,
    an_approval_the_disk_refused_never_runs_its_call,
    a_plain_answer_ends_the_turn,
    a_server_is_added_changed_and_removed_with_all_kept_for_its_tools,
    a_changed_tool_definition_suspends_the_tool_until_reviewed,
    a_seeded_tool_setting_never_overrides_the_persons,
    a_notification_may_approve_only_what_the_person_allowed,
    a_phone_is_paired_found_by_its_token_and_revoked,
    an_agents_request_is_found_again_by_its_key_and_its_agent_fails_closed,
    an_agents_call_with_a_used_up_grant_writes_nothing,
    history_reads_back_the_calls_and_how_they_were_decided,
    a_team_has_one_first_admin_and_finds_members_by_their_tokens_hash,
    the_first_admin_asked_for_from_many_threads_at_once_is_made_once,
    routes_are_kept_in_order_and_removed_with_their_audit,
    an_item_is_routed_once_escalated_once_and_delegated,
    a_quorum_counts_distinct_people_and_an_edit_starts_the_count_again,
    an_agents_token_is_issued_replaced_and_revoked,
    a_hosted_agent_is_kept_hosts_a_chat_and_is_removed,
    a_hosted_agents_tool_call_is_a_card_that_follows_its_reports,
}

fn a_session_is_created_once_and_found_by_name_and_id(store: &impl Sessions) {
    let first = store.ensure_session("chat").unwrap();
    let again = store.ensure_session("chat").unwrap();
    assert_eq!(first, again);
    assert_eq!(first.status, SessionStatus::Idle);
    assert_eq!(first.mode, None);
    assert_eq!(store.session_by_name("chat").unwrap(), Some(first.clone()));
    assert_eq!(store.session(&first.id).unwrap(), Some(first.clone()));
    assert_eq!(store.session_by_name("other").unwrap(), None);
    store.ensure_session("second").unwrap();
    let names: Vec<String> = store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["chat", "second"]);
}

fn a_session_name_must_be_printable(store: &impl Sessions) {
    for name in ["", "  ", "a\nb", &"x".repeat(201)] {
        assert!(
            matches!(store.ensure_session(name), Err(StoreError::Invalid(_))),
            "{name:?}"
        );
        assert!(matches!(
            store.start_turn(name, "hi"),
            Err(StoreError::Invalid(_))
        ));
    }
    assert!(store.sessions().unwrap().is_empty());
}

fn sessions_created_at_once_from_many_threads_are_one(store: &(impl Sessions + Sync)) {
    let barrier = std::sync::Barrier::new(8);
    let ids: Vec<String> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    store.ensure_session("raced").unwrap().id
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    assert_eq!(store.sessions().unwrap().len(), 1);
}

fn a_turn_starts_its_session_and_its_message(store: &impl Sessions) {
    let (session, first) = store.start_turn("new", "hello").unwrap();
    assert_eq!(session.status, SessionStatus::Thinking);
    store
        .set_session_status(&session.id, SessionStatus::Failed, Some("model down"))
        .unwrap();
    let (again, second) = store.start_turn("new", "again").unwrap();
    assert_eq!(again.id, session.id);
    assert_eq!(again.status, SessionStatus::Thinking);
    assert_eq!(again.last_error, None, "a new turn clears the last error");
    assert!(second > first, "{second} after {first}");
}

fn a_session_keeps_its_mode_status_and_title(store: &impl Sessions) {
    let session = store.ensure_session("claude-code:1234").unwrap();
    store
        .set_session_mode(&session.id, Some(Mode::DenyAll))
        .unwrap();
    store
        .set_session_status(&session.id, SessionStatus::Failed, Some("boom"))
        .unwrap();
    store
        .set_session_title(&session.id, "airlock: fix the tests")
        .unwrap();
    let kept = store.session(&session.id).unwrap().unwrap();
    assert_eq!(kept.mode, Some(Mode::DenyAll));
    assert_eq!(kept.status, SessionStatus::Failed);
    assert_eq!(kept.last_error.as_deref(), Some("boom"));
    assert_eq!(kept.title.as_deref(), Some("airlock: fix the tests"));
    store.set_session_mode(&session.id, None).unwrap();
    assert_eq!(store.session(&session.id).unwrap().unwrap().mode, None);
}

fn a_setting_is_kept_and_its_change_audited(store: &(impl Settings + Audit)) {
    assert_eq!(store.setting("step_limit").unwrap(), None);
    store.set_setting("step_limit", &json!(12)).unwrap();
    store.set_setting("step_limit", &json!(20)).unwrap();
    assert_eq!(store.setting("step_limit").unwrap(), Some(json!(20)));
    let audit = store.audit_rows(10).unwrap();
    let changes: Vec<_> = audit
        .iter()
        .filter(|row| row.action == "setting_changed")
        .map(|row| row.detail.clone())
        .collect();
    assert_eq!(
        changes,
        [
            json!({"key": "step_limit", "value": 12}),
            json!({"key": "step_limit", "value": 20})
        ]
    );
}

fn the_workspace_mode_is_ask_until_set(store: &impl Settings) {
    assert_eq!(store.workspace_mode().unwrap(), Mode::Ask);
    store
        .set_setting(
            airlock_core::Setting::WorkspaceMode.key(),
            &json!(Mode::NeverAsk.as_str()),
        )
        .unwrap();
    assert_eq!(store.workspace_mode().unwrap(), Mode::NeverAsk);
}

fn a_rule_is_added_once_and_removed_with_its_audit(store: &(impl Rules + Audit)) {
    let rule = ArgRule {
        id: "rule_1".into(),
        server: "builtin".into(),
        tool: "write_file".into(),
        pointer: "/path".into(),
        pattern: RulePattern::Glob("src/**".into()),
        effect: RuleEffect::Allow,
    };
    let added = store.add_rule(&rule).unwrap();
    assert!(!added.already_existed);
    let same = store
        .add_rule(&ArgRule {
            id: "rule_2".into(),
            ..rule.clone()
        })
        .unwrap();
    assert!(same.already_existed);
    assert_eq!(
        same.rule.id, "rule_1",
        "the rule already there is the answer"
    );
    let rules = store.rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].rule, rule);
    assert!(store.remove_rule("rule_1").unwrap());
    assert!(!store.remove_rule("rule_1").unwrap());
    assert!(store.rules().unwrap().is_empty());
    let actions: Vec<String> = store
        .audit_rows(10)
        .unwrap()
        .into_iter()
        .map(|row| row.action)
        .collect();
    assert_eq!(actions, ["rule_added", "rule_removed"]);
}

fn the_audit_trail_gives_its_newest_rows_in_order(store: &impl Audit) {
    for n in 0..5 {
        store
            .audit("user", "note", Some("ses_1"), None, &json!({ "n": n }))
            .unwrap();
    }
    let rows = store.audit_rows(3).unwrap();
    let numbers: Vec<_> = rows.iter().map(|row| row.detail["n"].clone()).collect();
    assert_eq!(numbers, [json!(2), json!(3), json!(4)]);
    assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
    assert_eq!(rows[0].session_id.as_deref(), Some("ses_1"));
}

fn nothing_remembered_or_granted_in_a_new_store(store: &(impl Grants + Sessions)) {
    let session = store.ensure_session("chat").unwrap();
    assert!(store.remembered().unwrap().is_empty());
    assert!(!store.revoke_remembered("rem_unknown").unwrap());
    assert!(store.session_grants(&session.id).unwrap().is_empty());
}

/// A database that cannot be reached is `Unavailable` (decide nothing, retry later), never a
/// backend's error type.
#[test]
fn postgres_that_cannot_be_reached_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "host={} port=5432 user=airlock dbname=none",
        dir.path().display()
    );
    let error = airlock_store_postgres::PostgresStore::connect(&url, 1).unwrap_err();
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
}

/// The whole store the decision path uses.
trait DecisionStore:
    Sessions + Calls + Approvals + Requests + Grants + Audit + airlock_store_port::Store + Sync
{
}
impl<T: Sessions + Calls + Approvals + Requests + Grants + Audit + airlock_store_port::Store + Sync>
    DecisionStore for T
{
}

fn new_call(id: &str, state: CallState, args: Value) -> NewCall {
    NewCall {
        id: id.into(),
        provider_call_id: format!("p_{id}"),
        model_name: "builtin__write_file".into(),
        server: "builtin".into(),
        tool: "write_file".into(),
        raw_args: args.to_string(),
        args_hash: Some(airlock_core::args_hash(&args)),
        args: Some(args),
        state,
        policy_step: None,
        policy_why: None,
        result: None,
        grant_use: None,
        same_as: None,
    }
}

fn new_approval(id: &str, call: Option<&str>, session_id: &str, kind: ItemKind) -> NewApproval {
    let args = json!({"path": "a.txt", "content": "x"});
    NewApproval {
        approval_id: id.into(),
        tool_call_id: call.map(str::to_string),
        session_id: session_id.into(),
        kind,
        server: "builtin".into(),
        tool: "write_file".into(),
        args_hash: airlock_core::args_hash(&args),
        args,
        why: "required".into(),
        expires_at: None,
    }
}

/// A session with one step whose call `call_1` waits on request `approval_1`: the session id
/// and the step's message id.
fn one_waiting_call(store: &impl DecisionStore) -> (String, i64) {
    let (session, _) = store.start_turn("chat", "write a file").unwrap();
    let args = json!({"path": "a.txt", "content": "x"});
    let message = store
        .record_assistant_step(
            &session.id,
            "",
            &[new_call("call_1", CallState::Pending, args)],
            &[new_approval(
                "approval_1",
                Some("call_1"),
                &session.id,
                ItemKind::ToolCall,
            )],
        )
        .unwrap();
    (session.id, message)
}

fn approve(id: &str) -> DecisionInput {
    DecisionInput::new(id, ApprovalStatus::Approved, DecidedBy::Inbox)
}

fn actions(store: &impl Audit) -> Vec<String> {
    store
        .audit_rows(1000)
        .unwrap()
        .into_iter()
        .map(|row| row.action)
        .collect()
}

fn a_call_that_asks_waits_is_approved_started_and_finished(store: &impl DecisionStore) {
    let (session, message) = one_waiting_call(store);
    let pending = store.pending_approvals().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].approval_id, "approval_1");
    assert_eq!(pending[0].session, "chat");
    assert_eq!(pending[0].status, ApprovalStatus::Pending);
    assert_eq!(store.approvals_of_message(message).unwrap(), pending);
    assert_eq!(store.pending_of_session(&session).unwrap(), ["approval_1"]);
    let by_ids = store.approvals_by_ids(&["approval_1", "unknown"]).unwrap();
    assert_eq!(by_ids.len(), 1);
    assert_eq!(
        store.calls_of_message(message).unwrap()[0].state,
        CallState::Pending
    );

    let noted = std::sync::Mutex::new(Vec::new());
    let decided = store
        .decide_and_start(&[approve("approval_1")], &|started| {
            noted.lock().unwrap().extend(started.iter().cloned())
        })
        .unwrap();
    assert_eq!(
        decided.started,
        ["call_1"],
        "the step was fully decided: it starts"
    );
    assert_eq!(*noted.lock().unwrap(), ["call_1"]);
    let outcome = decided.outcomes.into_iter().next().unwrap().unwrap();
    assert_eq!(outcome.approval.status, ApprovalStatus::Approved);
    assert_eq!(outcome.run_args, json!({"path": "a.txt", "content": "x"}));
    assert!(store.pending_approvals().unwrap().is_empty());
    assert_eq!(
        store.approval_status("approval_1").unwrap(),
        Some(ApprovalStatus::Approved)
    );
    assert_eq!(
        store.decided_by("approval_1").unwrap().as_deref(),
        Some("inbox")
    );

    let running = store.running_calls().unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].id, "call_1");
    if store.replicas().is_some() {
        // Several engines: the one that drives the turn claims it, once.
        assert_eq!(store.claim_invocation(&["call_1"]).unwrap(), ["call_1"]);
    }
    assert!(
        store.claim_invocation(&["call_1"]).unwrap().is_empty(),
        "claimed once (by the decision on SQLite): nobody claims it again"
    );
    store
        .finish_call(
            "call_1",
            CallState::Succeeded,
            &json!({"ok": true, "exit_code": 0}),
        )
        .unwrap();
    let call = store.call("call_1").unwrap().unwrap();
    assert_eq!(call.state, CallState::Succeeded);
    assert_eq!(call.result, Some(json!({"ok": true, "exit_code": 0})));
    let messages = store.messages(&session).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].calls.len(), 1);
    assert_eq!(
        actions(store),
        ["approval_requested", "approved", "call_succeeded"]
    );
    let finished = store.audit_rows(1).unwrap().remove(0);
    assert_eq!(finished.detail["exit_code"], json!(0));
}

fn a_request_is_decided_once(store: &impl DecisionStore) {
    one_waiting_call(store);
    store.decide(&approve("approval_1")).unwrap();
    let outcomes = store
        .decide_many(&[DecisionInput::new(
            "approval_1",
            ApprovalStatus::Denied,
            DecidedBy::Api,
        )])
        .unwrap();
    assert!(matches!(
        outcomes.as_slice(),
        [Err(StoreError::AlreadyDecided { .. })]
    ));
    assert_eq!(
        store.approval_status("approval_1").unwrap(),
        Some(ApprovalStatus::Approved)
    );
    assert_eq!(
        actions(store).last().map(String::as_str),
        Some("decision_refused")
    );
}

fn a_request_decided_from_many_threads_at_once_is_decided_once(store: &impl DecisionStore) {
    const ITEMS: usize = 20;
    let (session, _) = store.start_turn("chat", "many files").unwrap();
    let calls: Vec<NewCall> = (0..ITEMS)
        .map(|n| new_call(&format!("call_{n}"), CallState::Pending, json!({"path": n})))
        .collect();
    let approvals: Vec<NewApproval> = (0..ITEMS)
        .map(|n| {
            new_approval(
                &format!("approval_{n}"),
                Some(&format!("call_{n}")),
                &session.id,
                ItemKind::ToolCall,
            )
        })
        .collect();
    store
        .record_assistant_step(&session.id, "", &calls, &approvals)
        .unwrap();
    let barrier = std::sync::Barrier::new(8);
    // Per thread, which items it decided (the others it found decided).
    let won: Vec<Vec<usize>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let barrier = &barrier;
                scope.spawn(move || {
                    // Each thread holds a connection before the race starts.
                    store.approval_status("approval_0").unwrap();
                    barrier.wait();
                    let mut won = Vec::new();
                    for item in 0..ITEMS {
                        let status = if (thread + item) % 2 == 0 {
                            ApprovalStatus::Approved
                        } else {
                            ApprovalStatus::Denied
                        };
                        let input =
                            DecisionInput::new(format!("approval_{item}"), status, DecidedBy::Api);
                        match store.decide(&input) {
                            Ok(_) => won.push(item),
                            Err(StoreError::AlreadyDecided { .. }) => {}
                            Err(other) => panic!("approval_{item}: {other:?}"),
                        }
                    }
                    won
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for item in 0..ITEMS {
        let deciders = won.iter().filter(|items| items.contains(&item)).count();
        assert_eq!(
            deciders, 1,
            "approval_{item} decided by {deciders} threads: {won:?}"
        );
    }
    let decisions = actions(store)
        .into_iter()
        .filter(|action| action == "approved" || action == "denied")
        .count();
    assert_eq!(decisions, ITEMS);
}

fn a_denial_settles_the_call_with_the_persons_reason(store: &impl DecisionStore) {
    let (_, message) = one_waiting_call(store);
    let mut deny = DecisionInput::new("approval_1", ApprovalStatus::Denied, DecidedBy::Chat);
    deny.reason = Some("not that file".into());
    let decided = store.decide_and_start(&[deny], &|_| {}).unwrap();
    assert!(decided.started.is_empty());
    let call = &store.calls_of_message(message).unwrap()[0];
    assert_eq!(call.state, CallState::Denied);
    assert_eq!(
        call.result,
        Some(json!({"type": "execution-denied", "reason": "not that file"}))
    );
    assert!(store.running_calls().unwrap().is_empty());
}

fn an_unknown_or_foreign_request_is_refused_and_the_batch_goes_on(store: &impl DecisionStore) {
    let (session, _) = one_waiting_call(store);
    let mut foreign = approve("approval_1");
    foreign.session_id = Some("ses_other".into());
    let mut mine = approve("approval_1");
    mine.session_id = Some(session);
    let outcomes = store
        .decide_many(&[approve("approval_unknown"), foreign, mine])
        .unwrap();
    assert!(matches!(outcomes[0], Err(StoreError::UnknownApproval(_))));
    assert!(matches!(
        outcomes[1],
        Err(StoreError::ForeignSession { .. })
    ));
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    assert!(outcomes[0].as_ref().unwrap_err().is_refusal());
}

fn a_counted_grant_lets_its_calls_run_until_its_last_use(store: &impl DecisionStore) {
    let (session, _) = one_waiting_call(store);
    let mut input = approve("approval_1");
    input.grant = Some(GrantLimits {
        uses: Some(1),
        in_chat: true,
        covers: "any arguments, in this chat, for 1 more call".into(),
        ..GrantLimits::default()
    });
    store.decide(&input).unwrap();
    let remembered = store.remembered().unwrap();
    assert_eq!(remembered.len(), 1);
    let grant = remembered[0].entry.id.clone();
    assert_eq!(remembered[0].entry.uses_left, Some(1));
    assert_eq!(
        remembered[0].entry.session_id.as_deref(),
        Some(session.as_str())
    );
    assert_eq!(
        store.call("call_1").unwrap().unwrap().grant.as_deref(),
        Some("any arguments, in this chat, for 1 more call")
    );

    let allowed = |id: &str| NewCall {
        grant_use: Some(grant.clone()),
        ..new_call(
            id,
            CallState::AutoAllowed,
            json!({"path": "b.txt", "content": "y"}),
        )
    };
    store
        .record_assistant_step(&session, "", &[allowed("call_2")], &[])
        .unwrap();
    assert!(
        store.remembered().unwrap().is_empty(),
        "its last use is taken"
    );
    let messages = store.messages(&session).unwrap().len();
    let error = store
        .record_assistant_step(&session, "", &[allowed("call_3")], &[])
        .unwrap_err();
    assert!(matches!(error, StoreError::GrantUsedUp(_)), "{error:?}");
    assert_eq!(
        store.messages(&session).unwrap().len(),
        messages,
        "nothing of it is written"
    );
    assert!(store.call("call_3").unwrap().is_none());
    assert!(actions(store).contains(&"grant_used_up".to_string()));
}

fn allowing_for_the_chat_grants_the_tool_in_that_chat(store: &impl DecisionStore) {
    let (session, _) = one_waiting_call(store);
    let mut input = approve("approval_1");
    input.for_chat = true;
    store.decide(&input).unwrap();
    assert_eq!(
        store.session_grants(&session).unwrap(),
        [("builtin".to_string(), "write_file".to_string())]
    );
}

fn an_identical_call_of_the_step_follows_its_leaders_decision(store: &impl DecisionStore) {
    let (session, _) = store.start_turn("chat", "twice").unwrap();
    let args = json!({"path": "a.txt", "content": "x"});
    let follower = NewCall {
        same_as: Some("call_1".into()),
        ..new_call("call_2", CallState::Pending, args.clone())
    };
    store
        .record_assistant_step(
            &session.id,
            "",
            &[new_call("call_1", CallState::Pending, args), follower],
            &[new_approval(
                "approval_1",
                Some("call_1"),
                &session.id,
                ItemKind::ToolCall,
            )],
        )
        .unwrap();
    let mut started = store
        .decide_and_start(&[approve("approval_1")], &|_| {})
        .unwrap()
        .started;
    started.sort();
    assert_eq!(
        started,
        ["call_1", "call_2"],
        "the follower runs with its leader"
    );
}

fn only_an_allowed_or_approved_call_is_marked_running(store: &impl DecisionStore) {
    let (session, _) = one_waiting_call(store);
    let error = store
        .mark_running(&[("call_1".into(), json!({}))])
        .unwrap_err();
    assert!(matches!(error, StoreError::Invalid(_)), "{error:?}");
    store
        .record_assistant_step(
            &session,
            "",
            &[new_call(
                "call_2",
                CallState::AutoAllowed,
                json!({"path": "b"}),
            )],
            &[],
        )
        .unwrap();
    store
        .mark_running(&[("call_2".into(), json!({"path": "b"}))])
        .unwrap();
    let running = store.running_calls().unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].run_args, Some(json!({"path": "b"})));
}

fn a_turns_fenced_writes_go_through_while_it_is_held_and_not_after_its_take_over(
    store: &impl DecisionStore,
) {
    let (session, _) = one_waiting_call(store);
    let fence = match store.replicas() {
        Some(replicas) => {
            replicas
                .renew_lease(std::time::Duration::from_secs(30))
                .unwrap();
            replicas.hold(Work::Turn, &session).unwrap()
        }
        // One process holds all it writes: a fence is passed and not looked at.
        None => Fence {
            work: Work::Turn,
            key: session.clone(),
            token: 0,
        },
    };
    let fence = Some(&fence);
    let args = json!({"path": "b"});
    store
        .record_assistant_step_fenced(
            &session,
            "",
            &[new_call("call_2", CallState::AutoAllowed, args.clone())],
            &[],
            fence,
        )
        .unwrap();
    store
        .mark_running_fenced(&[("call_2".into(), args)], fence)
        .unwrap();
    assert!(
        store
            .claim_invocation_fenced(&["call_2"], fence)
            .unwrap()
            .is_empty(),
        "marked running is claimed"
    );
    let result = json!({"ok": true});
    store
        .finish_call_fenced("call_2", CallState::Succeeded, &result, fence)
        .unwrap();
    store
        .set_session_status_fenced(&session, SessionStatus::Idle, None, fence)
        .unwrap();
    if let Some(replicas) = store.replicas() {
        // Its lease runs out and its turn is taken over (here by itself, as another replica).
        replicas.renew_lease(std::time::Duration::ZERO).unwrap();
        assert_eq!(
            replicas.take_expired().unwrap(),
            [(Work::Turn, session.clone())]
        );
        let refused = store.finish_call_fenced(
            "call_2",
            CallState::Failed,
            &json!({"type": "error"}),
            fence,
        );
        assert!(
            matches!(refused, Err(StoreError::LeaseLost { .. })),
            "{refused:?}"
        );
    }
    let call = store.call("call_2").unwrap().unwrap();
    assert_eq!(
        (call.state, call.result),
        (CallState::Succeeded, Some(result))
    );
}

fn a_form_request_is_answered_and_its_answer_read_back(store: &impl DecisionStore) {
    let session = store.ensure_session("chat").unwrap();
    store
        .insert_request(&new_approval(
            "form_1",
            None,
            &session.id,
            ItemKind::Elicitation,
        ))
        .unwrap();
    assert_eq!(
        store.pending_of_kind(ItemKind::Elicitation).unwrap(),
        ["form_1"]
    );
    assert!(
        store
            .pending_of_kind(ItemKind::ToolCall)
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.decision("form_1").unwrap(), None);
    let mut answer = approve("form_1");
    answer.edited_args = Some(json!({"name": "Ada"}));
    store.decide(&answer).unwrap();
    let decision = store.decision("form_1").unwrap().unwrap();
    assert!(decision.approve);
    assert_eq!(decision.edited_args, Some(json!({"name": "Ada"})));
    assert!(
        store
            .pending_of_kind(ItemKind::Elicitation)
            .unwrap()
            .is_empty()
    );
}

fn an_approval_the_disk_refused_never_runs_its_call(store: &impl DecisionStore) {
    one_waiting_call(store);
    store.decide(&approve("approval_1")).unwrap();
    assert!(store.unconfirm_decision("approval_1").unwrap());
    let call = store.call("call_1").unwrap().unwrap();
    assert_eq!(call.state, CallState::Failed);
    assert_eq!(call.run_args, None);
    assert!(store.running_calls().unwrap().is_empty());
    assert!(!store.unconfirm_decision("approval_unknown").unwrap());
    assert_eq!(
        actions(store).last().map(String::as_str),
        Some("decision_unconfirmed")
    );
}

fn a_plain_answer_ends_the_turn(store: &impl DecisionStore) {
    let (session, _) = store.start_turn("chat", "hello").unwrap();
    store
        .record_assistant_step(&session.id, "hi there", &[], &[])
        .unwrap();
    let kept = store.session(&session.id).unwrap().unwrap();
    assert_eq!(kept.status, SessionStatus::Idle);
    let messages = store.messages(&session.id).unwrap();
    assert_eq!(
        messages.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(),
        ["user", "assistant"]
    );
    assert_eq!(
        store.append_user_message(&session.id, "more").unwrap(),
        messages[1].id + 1
    );
}

fn a_server_is_added_changed_and_removed_with_all_kept_for_its_tools(store: &impl Store) {
    store
        .ensure_server(
            "builtin",
            ServerDefault::Required,
            &json!({"kind": "builtin"}),
        )
        .unwrap();
    store
        .ensure_server("builtin", ServerDefault::NotRequired, &json!({}))
        .unwrap();
    for server in ["fs", "keep"] {
        store
            .upsert_server(server, &json!({"command": server}), "h1")
            .unwrap();
        store
            .set_tool_setting(server, "read", ToolSetting::NotRequired)
            .unwrap();
        store
            .add_rule(&ArgRule {
                id: format!("rule_{server}"),
                server: server.into(),
                tool: "read".into(),
                pointer: "/path".into(),
                pattern: RulePattern::Glob("**".into()),
                effect: RuleEffect::Allow,
            })
            .unwrap();
    }
    store
        .set_server_default("fs", ServerDefault::NotRequired)
        .unwrap();
    store.set_server_trust("fs", true).unwrap();
    store.set_server_enabled("fs", false).unwrap();
    store
        .upsert_server("fs", &json!({"command": "fs2"}), "h1")
        .unwrap();
    let servers = store.servers().unwrap();
    assert_eq!(
        servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["builtin", "fs", "keep"]
    );
    assert_eq!(
        servers[0].default,
        ServerDefault::Required,
        "ensure keeps what is there"
    );
    assert_eq!(servers[1].default, ServerDefault::NotRequired);
    assert!(servers[1].trust_read_only_hints);
    assert!(!servers[1].enabled);
    assert_eq!(servers[1].config, json!({"command": "fs2"}));
    assert!(matches!(
        store.set_server_enabled("nothing", true),
        Err(StoreError::Invalid(_))
    ));

    store.remove_server("fs").unwrap();
    assert!(matches!(
        store.remove_server("fs"),
        Err(StoreError::Invalid(_))
    ));
    let inputs = store.policy_inputs().unwrap();
    assert!(
        inputs
            .tool_settings
            .iter()
            .all(|(server, _, _)| server == "keep")
    );
    assert!(inputs.rules.iter().all(|rule| rule.server == "keep"));
    assert_eq!(inputs.servers.len(), 2);
    assert!(actions(store).contains(&"server_removed".to_string()));
}

fn a_changed_tool_definition_suspends_the_tool_until_reviewed(store: &impl Store) {
    let v1 = json!({"description": "reads", "input_schema": {}, "annotations": null});
    let v2 = json!({"description": "steals", "input_schema": {}, "annotations": null});
    assert_eq!(
        store.check_pin("fs", "read", &v1, "t1").unwrap(),
        PinCheck::New
    );
    assert_eq!(
        store.check_pin("fs", "read", &v1, "t1").unwrap(),
        PinCheck::Same
    );
    assert_eq!(
        store.check_pin("fs", "read", &v2, "t2").unwrap(),
        PinCheck::Changed("description changed".into())
    );
    assert_eq!(
        store.current_definition("fs", "read").unwrap(),
        Some(v2.clone())
    );
    let changes = store.tool_changes("fs").unwrap();
    assert_eq!(
        changes,
        [(
            "read".to_string(),
            "description changed".to_string(),
            v1,
            v2.clone()
        )]
    );
    assert_eq!(store.policy_inputs().unwrap().suspended.len(), 1);
    assert!(store.accept_pin("fs", "read").unwrap());
    assert!(!store.accept_pin("fs", "read").unwrap());
    assert_eq!(
        store.check_pin("fs", "read", &v2, "t2").unwrap(),
        PinCheck::Same
    );
    assert!(store.suspended_tools().unwrap().is_empty());

    store
        .upsert_server("fs", &json!({"command": "a"}), "h1")
        .unwrap();
    store
        .upsert_server("fs", &json!({"command": "b"}), "h2")
        .unwrap();
    let suspended = store.suspended_tools().unwrap();
    assert!(
        suspended[0].2.contains("server definition"),
        "{suspended:?}"
    );
    let reviewed: Vec<String> = actions(store)
        .into_iter()
        .filter(|a| a == "tool_changed" || a == "tool_change_reviewed")
        .collect();
    assert_eq!(reviewed, ["tool_changed", "tool_change_reviewed"]);
}

fn a_seeded_tool_setting_never_overrides_the_persons(store: &impl Store) {
    store
        .set_tool_setting("claude-code", "Read", ToolSetting::Required)
        .unwrap();
    store
        .seed_tool_setting("builtin", "read_file", ToolSetting::NotRequired)
        .unwrap();
    let seeded = store
        .seed_agent_tool_settings("claude-code", &["Read", "Grep"], ToolSetting::NotRequired)
        .unwrap();
    assert_eq!(seeded, ["Grep"]);
    let mut settings = store.tool_settings().unwrap();
    settings.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        settings,
        [
            (
                "builtin".to_string(),
                "read_file".to_string(),
                ToolSetting::NotRequired
            ),
            (
                "claude-code".to_string(),
                "Grep".to_string(),
                ToolSetting::NotRequired
            ),
            (
                "claude-code".to_string(),
                "Read".to_string(),
                ToolSetting::Required
            ),
        ]
    );
    assert!(
        store
            .seed_agent_tool_settings("claude-code", &["Read", "Grep"], ToolSetting::NotRequired)
            .unwrap()
            .is_empty()
    );
}

fn a_notification_may_approve_only_what_the_person_allowed(store: &impl Store) {
    assert!(store.from_notification().unwrap().is_empty());
    store.set_from_notification("fs", None, Some(true)).unwrap();
    store
        .set_from_notification("fs", Some("write"), Some(false))
        .unwrap();
    let mut allowed = store.from_notification().unwrap();
    allowed.sort();
    assert_eq!(
        allowed,
        [
            ("fs".to_string(), None, true),
            ("fs".to_string(), Some("write".to_string()), false)
        ]
    );
    store
        .set_from_notification("fs", Some("write"), None)
        .unwrap();
    assert_eq!(
        store.from_notification().unwrap(),
        [("fs".to_string(), None, true)]
    );
}

fn a_phone_is_paired_found_by_its_token_and_revoked(store: &impl Store) {
    let device = store.add_device("dev_1", "Ada's phone", "hash1").unwrap();
    assert_eq!(device.name, "Ada's phone");
    assert_eq!(device.last_used, None);
    let found = store.device_by_token_hash("hash1").unwrap().unwrap();
    assert_eq!(found.id, "dev_1");
    assert_eq!(
        found.last_used, None,
        "the device as found: never used before"
    );
    assert!(
        store.devices().unwrap()[0].last_used.is_some(),
        "using a token notes when"
    );
    assert!(store.device_by_token_hash("other").unwrap().is_none());
    assert!(store.revoke_device("dev_1").unwrap());
    assert!(!store.revoke_device("dev_1").unwrap());
    assert!(store.device_by_token_hash("hash1").unwrap().is_none());
    let devices = store.devices().unwrap();
    assert_eq!(devices.len(), 1);
    assert!(devices[0].revoked_at.is_some());
    assert!(
        matches!(
            store.add_device("dev_2", "again", "hash1"),
            Err(StoreError::Database(_))
        ),
        "a token hash is one device's"
    );
}

fn agent_request(id: &str, session_id: &str, key: &str) -> (NewApproval, NewAgentRequest) {
    let approval = NewApproval {
        tool: "Bash".into(),
        server: "claude-code".into(),
        ..new_approval(id, None, session_id, ItemKind::AgentToolCall)
    };
    let origin = NewAgentRequest {
        request_key: key.into(),
        agent: "claude-code".into(),
        client: None,
        agent_session: "cc-1".into(),
        cwd: Some("/work".into()),
        editable: true,
        deferred: false,
    };
    (approval, origin)
}

fn an_agents_request_is_found_again_by_its_key_and_its_agent_fails_closed(store: &impl Store) {
    let session = store.ensure_session("claude-code:cc-1").unwrap();
    let (first, origin) = agent_request("approval_a", &session.id, "key-1");
    store.insert_agent_request(&first, &origin).unwrap();
    let (second, origin) = agent_request("approval_b", &session.id, "key-1");
    store.insert_agent_request(&second, &origin).unwrap();

    let found = store.agent_requests_by_key("key-1").unwrap();
    let ids: Vec<&str> = found.iter().map(|e| e.row.approval_id.as_str()).collect();
    assert_eq!(ids, ["approval_b", "approval_a"], "newest first");
    let agent = found[0].row.agent.as_ref().unwrap();
    assert_eq!(agent.agent, "claude-code");
    assert!(agent.editable);
    assert!(store.agent_requests_by_key("key-2").unwrap().is_empty());

    store.decide(&approve("approval_b")).unwrap();
    let recent = store
        .recent_agent_request("claude-code", "cc-1", "Bash", &first.args_hash)
        .unwrap()
        .unwrap();
    assert_eq!(recent.row.approval_id, "approval_b");
    assert!(recent.decided_at.is_some());

    let agents = store.agents().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(
        agents[0].fallback,
        AgentFallback::Deny,
        "nobody chose: it fails closed"
    );
    assert_eq!(agents[0].last_outcome.as_deref(), Some("pending"));
    store.note_agent_outcome("claude-code", "allow").unwrap();
    store
        .set_agent_fallback("claude-code", AgentFallback::Ask)
        .unwrap();
    let agents = store.agents().unwrap();
    assert_eq!(agents[0].fallback, AgentFallback::Ask);
    assert_eq!(agents[0].last_outcome.as_deref(), Some("allow"));
    assert_eq!(agents[0].last_cwd.as_deref(), Some("/work"));
}

fn an_agents_call_with_a_used_up_grant_writes_nothing(store: &impl Store) {
    let activity = AgentActivity {
        agent: "codex",
        tool: "Bash",
        cwd: None,
        outcome: "allowed",
    };
    store
        .record_agent_call(&activity, "ses_1", &json!({"server": "codex"}), None)
        .unwrap();
    let before = store.audit_rows(100).unwrap().len();
    let error = store
        .record_agent_call(&activity, "ses_1", &json!({}), Some("mem_unknown"))
        .unwrap_err();
    assert!(matches!(error, StoreError::GrantUsedUp(_)), "{error:?}");
    assert_eq!(store.audit_rows(100).unwrap().len(), before);
    assert_eq!(store.agents().unwrap()[0].fallback, AgentFallback::Deny);
}

fn history_reads_back_the_calls_and_how_they_were_decided(store: &impl Store) {
    let (session, _) = one_waiting_call(store);
    let mut deny = DecisionInput::new("approval_1", ApprovalStatus::Denied, DecidedBy::Inbox);
    deny.reason = Some("no".into());
    store.decide(&deny).unwrap();
    store
        .record_assistant_step(
            &session,
            "",
            &[new_call(
                "call_2",
                CallState::AutoAllowed,
                json!({"path": "b.txt"}),
            )],
            &[],
        )
        .unwrap();
    let past = store.past_calls("builtin", "write_file").unwrap();
    assert_eq!(past.len(), 2, "{past:?}");
    assert!(past[0].denied_by_person);
    assert_eq!(past[1].args, json!({"path": "b.txt"}));
    assert!(!past[1].denied_by_person);
    assert!(store.past_calls("builtin", "other").unwrap().is_empty());
    let asked = store.asked_rows().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].status, "denied");
    assert!(asked[0].decided_at.is_some());
}

fn new_member(name: &str, role: TeamRole, groups: &[&str]) -> NewMemberRow {
    NewMemberRow {
        id: format!("mem_{name}"),
        name: name.into(),
        role,
        groups: groups.iter().map(|g| g.to_string()).collect(),
        token_hash: format!("hash_of_{name}"),
    }
}

fn a_team_has_one_first_admin_and_finds_members_by_their_tokens_hash(store: &impl Store) {
    assert!(!store.has_members().unwrap());
    let ada = store
        .add_member(&new_member("ada", TeamRole::Admin, &[]), true, "ada")
        .unwrap();
    assert_eq!(ada.role, TeamRole::Admin);
    assert!(store.has_members().unwrap());
    let refused = store.add_member(&new_member("eve", TeamRole::Admin, &[]), true, "eve");
    assert!(
        matches!(refused, Err(StoreError::Refused(_))),
        "a team has one first admin: {refused:?}"
    );
    let bob = store
        .add_member(
            &new_member("bob", TeamRole::Approver, &["release", "oncall"]),
            false,
            "ada",
        )
        .unwrap();
    assert_eq!(bob.groups, ["release", "oncall"]);
    assert!(matches!(
        store.add_member(&new_member("bob", TeamRole::Viewer, &[]), false, "ada"),
        Err(StoreError::Refused(_))
    ));
    assert_eq!(
        store.member_by_token_hash("hash_of_bob").unwrap(),
        Some(bob.clone())
    );
    assert_eq!(store.member_by_token_hash("hash_of_nobody").unwrap(), None);
    assert_eq!(store.member_by_name("ada").unwrap(), Some(ada.clone()));
    let names: Vec<String> = store
        .members()
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["ada", "bob"]);

    assert!(
        matches!(
            store.remove_member("ada", "ada"),
            Err(StoreError::Refused(_))
        ),
        "the last admin stays"
    );
    assert!(store.remove_member("bob", "ada").unwrap());
    assert!(!store.remove_member("bob", "ada").unwrap());
    assert_eq!(store.member_by_token_hash("hash_of_bob").unwrap(), None);
    store.audit_member_command("ada", "team_add").unwrap();
    assert_eq!(
        actions(store),
        [
            "member_added",
            "member_added",
            "member_removed",
            "member_command"
        ]
    );
    let removed = &store.audit_rows(2).unwrap()[0];
    assert_eq!(removed.actor, "ada", "audited with the person");
}

fn the_first_admin_asked_for_from_many_threads_at_once_is_made_once(store: &impl Store) {
    const CALLERS: usize = 8;
    let barrier = std::sync::Barrier::new(CALLERS);
    let made = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..CALLERS)
            .map(|n| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let name = format!("admin{n}");
                    barrier.wait();
                    store.add_member(&new_member(&name, TeamRole::Admin, &[]), true, &name)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|added| match added {
                Ok(_) => true,
                Err(StoreError::Refused(_)) => false,
                Err(other) => panic!("{other:?}"),
            })
            .count()
    });
    assert_eq!(made, 1);
    assert_eq!(store.members().unwrap().len(), 1);
}

fn new_route(id: &str, steps: &[&str], quorum: u32, escalate_after_secs: Option<u64>) -> NewRoute {
    NewRoute {
        id: id.into(),
        server: "builtin".into(),
        tool: "write_file".into(),
        pointer: Some("/path".into()),
        pattern: Some("prod/*".into()),
        steps: steps.iter().map(|s| s.to_string()).collect(),
        quorum,
        escalate_after_secs,
    }
}

fn routes_are_kept_in_order_and_removed_with_their_audit(store: &impl Store) {
    let first = store
        .add_route(
            &new_route("route_1", &["group:release", "group:oncall"], 2, Some(600)),
            "ada",
        )
        .unwrap();
    assert_eq!(first.steps, ["group:release", "group:oncall"]);
    assert_eq!(first.quorum, 2);
    assert_eq!(first.escalate_after_secs, Some(600));
    assert_eq!(first.pointer.as_deref(), Some("/path"));
    store
        .add_route(&new_route("route_2", &["person:bob"], 1, None), "ada")
        .unwrap();
    let routes = store.routes().unwrap();
    let ids: Vec<&str> = routes.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["route_1", "route_2"], "oldest first");
    assert_eq!(routes[0], first);
    assert_eq!(routes[1].escalate_after_secs, None);
    assert!(store.remove_route("route_1", "ada").unwrap());
    assert!(!store.remove_route("route_1", "ada").unwrap());
    assert_eq!(store.routes().unwrap().len(), 1);
    assert_eq!(
        actions(store),
        ["route_added", "route_added", "route_removed"]
    );
}

fn routed(approval_id: &str) -> ItemRouting {
    ItemRouting {
        approval_id: approval_id.into(),
        route_id: Some("route_1".into()),
        steps: vec!["group:release".into(), "group:oncall".into()],
        step: 0,
        assignee: "group:release".into(),
        quorum: 2,
        escalate_after_secs: Some(60),
        next_at: Some("2026-01-01T00:01:00Z".into()),
        note: None,
    }
}

fn an_item_is_routed_once_escalated_once_and_delegated(store: &impl Store) {
    one_waiting_call(store);
    assert!(
        !store.route_item(&routed("approval_unknown")).unwrap(),
        "an unknown item is not routed"
    );
    assert!(store.route_item(&routed("approval_1")).unwrap());
    let mut other = routed("approval_1");
    other.assignee = "person:eve".into();
    assert!(
        !store.route_item(&other).unwrap(),
        "the first routing stays"
    );
    let found = store
        .routing_of(&["approval_1", "approval_unknown"])
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found["approval_1"], routed("approval_1"));
    assert_eq!(store.timed_routing().unwrap(), [routed("approval_1")]);

    let next_at = "2026-01-01T00:02:00Z";
    let escalated = store
        .escalate("approval_1", 0, Some(next_at))
        .unwrap()
        .unwrap();
    assert_eq!(escalated.step, 1);
    assert_eq!(escalated.assignee, "group:oncall");
    assert_eq!(escalated.next_at.as_deref(), Some(next_at));
    assert_eq!(
        store.escalate("approval_1", 0, Some(next_at)).unwrap(),
        None,
        "each step moves once"
    );
    assert_eq!(
        store.escalate("approval_1", 1, None).unwrap(),
        None,
        "there is no step after the last"
    );

    let delegated = store
        .delegate("approval_1", "person:bob", Some("you know prod"), "ada")
        .unwrap();
    assert_eq!(delegated.assignee, "person:bob");
    assert_eq!(delegated.note.as_deref(), Some("you know prod"));
    assert_eq!(delegated.step, 1, "the escalation clock keeps running");

    store.decide(&approve("approval_1")).unwrap();
    assert!(
        store.timed_routing().unwrap().is_empty(),
        "decided: nothing moves on"
    );
    assert_eq!(store.escalate("approval_1", 1, None).unwrap(), None);
    assert!(matches!(
        store.delegate("approval_1", "person:eve", None, "ada"),
        Err(StoreError::AlreadyDecided { .. })
    ));
    assert!(matches!(
        store.delegate("approval_unknown", "person:eve", None, "ada"),
        Err(StoreError::UnknownApproval(_))
    ));
    let trail = actions(store);
    for action in [
        "approval_routed",
        "approval_escalated",
        "approval_delegated",
    ] {
        assert_eq!(
            trail.iter().filter(|a| *a == action).count(),
            1,
            "{action} in {trail:?}"
        );
    }
}

fn a_quorum_counts_distinct_people_and_an_edit_starts_the_count_again(store: &impl Store) {
    one_waiting_call(store);
    // An item no route sent anywhere, delegated: it gets a routing of its own.
    let own = store
        .delegate("approval_1", "group:release", None, "ada")
        .unwrap();
    assert_eq!((own.quorum, own.step), (1, 0));
    assert_eq!(own.steps, ["group:release"]);

    let vote = |member: &str, hash: &str, edited: Option<&Value>| {
        store.record_vote("approval_1", &format!("mem_{member}"), member, hash, edited)
    };
    assert_eq!(vote("ana", "hash_a", None).unwrap(), 1);
    assert_eq!(
        vote("ana", "hash_a", None).unwrap(),
        1,
        "the same person twice"
    );
    assert_eq!(vote("bob", "hash_a", None).unwrap(), 2, "a second person");
    let edited = json!({"path": "b.txt"});
    assert_eq!(
        vote("cid", "hash_b", Some(&edited)).unwrap(),
        1,
        "an edit is an approval of other arguments: its count starts again"
    );
    assert_eq!(vote("ana", "hash_b", Some(&edited)).unwrap(), 2);
    let counted: Vec<_> = store
        .audit_rows(100)
        .unwrap()
        .into_iter()
        .filter(|row| row.action == "approval_counted")
        .map(|row| (row.actor, row.detail["approvals"].clone()))
        .collect();
    assert_eq!(
        counted,
        [
            ("ana".to_string(), json!(1)),
            ("bob".to_string(), json!(2)),
            ("cid".to_string(), json!(1)),
            ("ana".to_string(), json!(2)),
        ],
        "each counted approval is its own row, with its person"
    );

    store.decide(&approve("approval_1")).unwrap();
    assert!(matches!(
        vote("dan", "hash_a", None),
        Err(StoreError::AlreadyDecided { .. })
    ));
    assert!(matches!(
        store.record_vote("approval_unknown", "mem_dan", "dan", "hash_a", None),
        Err(StoreError::UnknownApproval(_))
    ));
}

fn an_agents_token_is_issued_replaced_and_revoked(store: &impl Store) {
    assert!(store.agent_token_hashes().unwrap().is_empty());
    store.set_agent_token("codex", "hash_1").unwrap();
    store.set_agent_token("claude-code", "hash_2").unwrap();
    store.set_agent_token("codex", "hash_3").unwrap();
    assert_eq!(
        store.agent_token_hashes().unwrap(),
        [
            ("claude-code".to_string(), "hash_2".to_string()),
            ("codex".to_string(), "hash_3".to_string())
        ],
        "one token per agent: a new one replaces the old"
    );
    assert!(store.revoke_agent_token("codex").unwrap());
    assert!(!store.revoke_agent_token("codex").unwrap());
    assert_eq!(store.agent_token_hashes().unwrap().len(), 1);
    let issued = store.agent_tokens_issued().unwrap();
    assert_eq!(
        issued
            .iter()
            .map(|(agent, _)| agent.as_str())
            .collect::<Vec<_>>(),
        ["claude-code"],
        "Settings → Agents shows who has a token of its own"
    );
    assert!(!issued[0].1.is_empty(), "and since when");
    assert!(
        store.set_agent_token("gemini", "hash_2").is_err(),
        "a token's hash is one agent's"
    );
    assert_eq!(
        actions(store),
        [
            "agent_token_issued",
            "agent_token_issued",
            "agent_token_issued",
            "agent_token_revoked"
        ]
    );
}

fn a_hosted_agent_is_kept_hosts_a_chat_and_is_removed(store: &impl Store) {
    let command = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    store
        .save_acp_agent("gemini", &command(&["gemini", "--acp"]))
        .unwrap();
    store.save_acp_agent("qwen", &command(&["qwen"])).unwrap();
    store
        .save_acp_agent("gemini", &command(&["gemini", "--experimental-acp"]))
        .unwrap();
    let agents = store.acp_agents().unwrap();
    let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["gemini", "qwen"]);
    assert_eq!(
        store.acp_agent("gemini").unwrap().unwrap().command,
        ["gemini", "--experimental-acp"]
    );
    assert_eq!(store.acp_agent("other").unwrap(), None);

    let session = store.ensure_session("hosted").unwrap();
    store.host_session(&session.id, "gemini", "/work").unwrap();
    store.set_hosted_pid(&session.id, Some(4242)).unwrap();
    let hosted = store.hosted_session(&session.id).unwrap().unwrap();
    assert_eq!(
        (hosted.agent.as_str(), hosted.folder.as_str(), hosted.pid),
        ("gemini", "/work", Some(4242))
    );
    assert_eq!(store.live_hosted_sessions().unwrap(), [hosted]);
    let said = store
        .append_assistant_message(&session.id, "hello")
        .unwrap();
    store
        .end_hosted_session(&session.id, "the agent exited")
        .unwrap();
    assert!(store.live_hosted_sessions().unwrap().is_empty());
    assert_eq!(
        store.hosted_session(&session.id).unwrap().unwrap().pid,
        None
    );
    let messages = store.messages(&session.id).unwrap();
    let contents: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["hello", "the agent exited"]);
    assert_eq!(messages[0].id, said);
    let ended = store.session(&session.id).unwrap().unwrap();
    assert_eq!(ended.status, SessionStatus::Idle);
    assert_eq!(ended.last_error.as_deref(), Some("the agent exited"));

    store.host_session(&session.id, "qwen", "/other").unwrap();
    assert_eq!(
        store.live_hosted_sessions().unwrap().len(),
        1,
        "hosted again: live again"
    );
    assert!(store.remove_acp_agent("gemini").unwrap());
    assert!(!store.remove_acp_agent("gemini").unwrap());
    assert_eq!(store.acp_agents().unwrap().len(), 1);
}

fn a_hosted_agents_tool_call_is_a_card_that_follows_its_reports(store: &impl Store) {
    let session = store.ensure_session("hosted-card").unwrap();
    let proposed = |id: &str| NewCall {
        server: "qwen".into(),
        tool: "run_shell_command".into(),
        model_name: "run_shell_command".into(),
        ..new_call(id, CallState::Proposed, json!({"command": "ls"}))
    };
    let message = store
        .add_hosted_call(&session.id, None, "Let me look.", &proposed("card_1"))
        .unwrap();
    let same = store
        .add_hosted_call(&session.id, Some(message), "", &proposed("card_2"))
        .unwrap();
    assert_eq!(same, message, "a second call joins the same message");
    store
        .update_hosted_call(
            "card_1",
            &HostedCallUpdate {
                args: Some(json!({"command": "ls -la"})),
                state: Some(CallState::Succeeded),
                result: Some(json!("done")),
                ..HostedCallUpdate::default()
            },
        )
        .unwrap();
    let card = store.call("card_1").unwrap().unwrap();
    assert_eq!(card.state, CallState::Succeeded);
    assert_eq!(
        card.tool, "run_shell_command",
        "what the agent did not report stays"
    );
    assert_eq!(card.args, Some(json!({"command": "ls -la"})));
    assert_eq!(
        card.args_hash.as_deref(),
        Some(airlock_core::args_hash(&json!({"command": "ls -la"})).as_str())
    );
    let messages = store.messages(&session.id).unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].content, "Let me look.");
    assert_eq!(messages[0].thought, None);
    // The agent's thinking is kept beside the message, never in its content.
    store
        .set_message_thought(message, "ls first, then read")
        .unwrap();
    let messages = store.messages(&session.id).unwrap();
    assert_eq!(messages[0].content, "Let me look.");
    assert_eq!(messages[0].thought.as_deref(), Some("ls first, then read"));
}
