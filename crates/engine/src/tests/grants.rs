//! Timed and counted grants through the real loop: exactly as many calls run as were granted
//! (within one step, across steps, across a restart, across sessions racing for the last use),
//! a timed grant ends at its time, and nothing is granted that a person did not approve.

use super::*;
use airlock_protocol::{CallRow, GrantArgs, GrantRequest, GrantScope};

fn write(id: &str, path: &str) -> ScriptedCall {
    call(
        id,
        "builtin__write_file",
        json!({"path": path, "content": "x"}),
    )
}

fn exists(f: &Fixture, path: &str) -> bool {
    f.engine.workspace().join(path).exists()
}

/// Sends `message` in `session`, decides its one waiting call with `decision` (given the item's
/// id) and waits for the turn to end.
async fn grant_first(
    engine: &Engine,
    session: &str,
    message: &str,
    decision: impl FnOnce(&str) -> DecisionRequest,
) {
    engine.send_message(session, message).unwrap();
    let first = inbox_of(engine, 1).await.remove(0);
    engine
        .decide(decision(&first.approval_id), DecidedBy::Inbox)
        .unwrap();
    turn_end(engine, session).await;
}

/// An approval asking for a grant.
fn granting(id: &str, grant: GrantRequest) -> DecisionRequest {
    approving(
        id,
        Approval {
            grant: Some(grant),
            ..Approval::default()
        },
    )
}

fn approve_times(id: &str, times: u32) -> DecisionRequest {
    granting(
        id,
        GrantRequest {
            times: Some(times),
            ..GrantRequest::default()
        },
    )
}

#[tokio::test]
async fn approve_times_three_runs_this_call_and_two_more_even_within_one_step() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "a.txt")]),
            Reply::Text("one".into()),
            // One step of three writes: two uses are left, so the third asks.
            Reply::ToolCalls(vec![
                write("c2", "b.txt"),
                write("c3", "c.txt"),
                write("c4", "d.txt"),
            ]),
            Reply::Text("two".into()),
        ],
        false,
    )
    .await;
    grant_first(&f.engine, "s", "one", |id| approve_times(id, 3)).await;
    let grants = f.engine.grants().unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].entry.uses_left, Some(2));

    f.engine.send_message("s", "two").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].args["path"], "d.txt");
    assert!(
        f.engine.grants().unwrap().is_empty(),
        "the grant is used up"
    );
    f.engine
        .decide(deny(&asked[0].approval_id, "enough"), DecidedBy::Api)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert!(exists(&f, "a.txt") && exists(&f, "b.txt") && exists(&f, "c.txt"));
    assert!(!exists(&f, "d.txt"));
    // History says what decided each call.
    let audit = f.engine.audit(100).unwrap();
    let auto: Vec<_> = audit
        .iter()
        .filter(|row| row.action == "auto_allowed")
        .collect();
    assert_eq!(auto.len(), 2, "{auto:?}");
    assert!(
        auto.iter().all(|row| row.detail["why"]
            .as_str()
            .unwrap()
            .starts_with("allowed by the grant made at")),
        "{auto:?}"
    );
    assert!(audit.iter().any(|row| row.action == "grant_used_up"));
}

#[tokio::test]
async fn a_counted_grant_keeps_its_exact_count_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write("c1", "a.txt")]),
        Reply::Text("one".into()),
        Reply::ToolCalls(vec![write("c2", "b.txt")]),
        Reply::Text("two".into()),
        Reply::ToolCalls(vec![write("c3", "c.txt")]),
        Reply::Text("three".into()),
    ])
    .await
    .unwrap();
    let open = || open_engine(dir.path(), &model, false);
    let engine = open();
    grant_first(&engine, "s", "one", |id| approve_times(id, 2)).await;
    drop(engine);

    let engine = open();
    assert_eq!(engine.grants().unwrap()[0].entry.uses_left, Some(1));
    engine.send_message("s", "two").unwrap();
    turn_end(&engine, "s").await;
    assert!(engine.workspace().join("b.txt").exists());
    drop(engine);

    let engine = open();
    assert!(engine.grants().unwrap().is_empty());
    engine.send_message("s", "three").unwrap();
    let asked = inbox_of(&engine, 1).await;
    assert_eq!(asked[0].args["path"], "c.txt");
    assert!(!engine.workspace().join("c.txt").exists());
}

/// Two chats race for a grant's last use: one runs, the other asks — never both. The race is
/// forced: both steps decide on the one use left, then both record.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_chats_racing_for_the_last_use_run_one_call_not_two() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "a.txt")]),
            Reply::Text("granted".into()),
            Reply::ToolCalls(vec![write("x1", "x.txt")]),
            Reply::ToolCalls(vec![write("y1", "y.txt")]),
            Reply::Text("done".into()),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    grant_first(&f.engine, "s", "grant", |id| {
        granting(
            id,
            GrantRequest {
                times: Some(2),
                scope: Some(GrantScope::All),
                ..GrantRequest::default()
            },
        )
    })
    .await;
    f.engine.inner.step_gate.hold(2);
    f.engine.send_message("x", "go").unwrap();
    f.engine.send_message("y", "go").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    // The model's replies go out in the order the chats asked: either chat may hold either call.
    let waiting = asked[0].args["path"].as_str().unwrap().to_string();
    let written = if waiting == "x.txt" { "y.txt" } else { "x.txt" };
    let ran = if asked[0].session == "x" { "y" } else { "x" };
    turn_end(&f.engine, ran).await;
    assert!(exists(&f, written));
    assert!(!exists(&f, &waiting), "{waiting} ran without a use left");
    assert!(f.engine.grants().unwrap().is_empty());
    assert_eq!(
        f.engine.inner.step_gate.relied_on_grant(),
        vec![true, true],
        "the steps did not race: both should have counted on the last use before either recorded"
    );
}

#[tokio::test]
async fn a_timed_grant_ends_at_its_time() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "a.txt")]),
            Reply::Text("one".into()),
            Reply::ToolCalls(vec![write("c2", "b.txt")]),
            Reply::Text("two".into()),
            Reply::ToolCalls(vec![write("c3", "c.txt")]),
            Reply::Text("three".into()),
        ],
        false,
    )
    .await;
    grant_first(&f.engine, "s", "one", |id| {
        granting(
            id,
            GrantRequest {
                for_secs: Some(2),
                scope: Some(GrantScope::All),
                ..GrantRequest::default()
            },
        )
    })
    .await;
    let grant = f.engine.grants().unwrap().remove(0);
    let until =
        airlock_core::policy::unix_seconds(grant.entry.expires_at.as_deref().unwrap()).unwrap();
    // Within its time (another chat too: this grant was widened to every chat).
    f.engine.send_message("other", "two").unwrap();
    turn_end(&f.engine, "other").await;
    assert!(exists(&f, "b.txt"));
    // Past its time: asked again.
    while airlock_core::policy::unix_now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(f.engine.grants().unwrap().is_empty());
    f.engine.send_message("s", "three").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    assert_eq!(asked[0].args["path"], "c.txt");
    assert!(!exists(&f, "c.txt"));
}

#[tokio::test]
async fn grants_are_refused_where_nobody_could_see_what_they_let_through() {
    let (f, item) = pending_write("done", false).await;
    let refused = |request: DecisionRequest, by: DecidedBy| {
        let error = f.engine.decide(request, by).unwrap_err();
        assert_eq!(
            error.code(),
            airlock_protocol::ErrorCode::InvalidEdit,
            "{error}"
        );
    };
    // From a notification: one call, never a grant.
    assert!(
        f.engine
            .decide(approve_times(&item.approval_id, 5), DecidedBy::Notification)
            .is_err()
    );
    // Nonsense limits.
    refused(approve_times(&item.approval_id, 0), DecidedBy::Inbox);
    refused(
        granting(
            &item.approval_id,
            GrantRequest {
                for_secs: Some(30 * 24 * 3600),
                ..GrantRequest::default()
            },
        ),
        DecidedBy::Inbox,
    );
    // A denial grants nothing: `Decision::Deny` has no grant to ask for.
    assert!(f.engine.grants().unwrap().is_empty());
    assert_eq!(f.engine.inbox().unwrap().len(), 1, "still waiting");
    // `--times 1` is a plain approval: nothing kept.
    f.engine
        .decide(approve_times(&item.approval_id, 1), DecidedBy::Inbox)
        .unwrap();
    assert!(f.engine.remembered().unwrap().is_empty());
}

fn approve_for_15_min(id: &str) -> DecisionRequest {
    granting(id, for_15_min())
}

fn for_15_min() -> GrantRequest {
    GrantRequest {
        for_secs: Some(900),
        ..GrantRequest::default()
    }
}

/// Issue 27: a grant made from one chat's card (the request the card sends: a time, nothing
/// else) let a different chat's write run unasked. By default a grant covers the chat it was
/// made in; widened to every chat, it covers the other chat too.
#[tokio::test]
async fn a_grant_from_one_chats_card_lets_no_other_chats_write_run() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "a.txt")]),
            Reply::Text("one".into()),
            Reply::ToolCalls(vec![write("c2", "b.txt")]),
            Reply::Text("two".into()),
            Reply::ToolCalls(vec![write("c3", "c.txt")]),
            Reply::Text("three".into()),
        ],
        false,
    )
    .await;
    grant_first(&f.engine, "s", "one", approve_for_15_min).await;
    f.engine.send_message("other", "two").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    assert_eq!(
        (asked[0].session.as_str(), asked[0].args["path"].as_str()),
        ("other", Some("b.txt")),
        "{asked:?}"
    );
    assert!(!exists(&f, "b.txt"), "the other chat's write ran unasked");
    f.engine
        .decide(
            granting(
                &asked[0].approval_id,
                GrantRequest {
                    scope: Some(GrantScope::All),
                    ..for_15_min()
                },
            ),
            DecidedBy::Inbox,
        )
        .unwrap();
    turn_end(&f.engine, "other").await;
    // Widened to every chat: a third chat's write runs.
    f.engine.send_message("third", "three").unwrap();
    turn_end(&f.engine, "third").await;
    assert!(exists(&f, "c.txt"));
}

/// A grant covers the approved call's suggested pattern (here the file's folder): a write
/// elsewhere is asked again, in the same chat; widened to any arguments, it runs. The approval
/// that made the grant shows what it covers, and a call it lets through says so.
#[tokio::test]
async fn a_grant_covers_the_folder_approved_and_any_arguments_only_when_widened() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "src/a.txt")]),
            Reply::Text("one".into()),
            Reply::ToolCalls(vec![write("c2", "src/b.txt"), write("c3", "docs/c.txt")]),
            Reply::Text("two".into()),
            Reply::ToolCalls(vec![write("c4", "docs/d.txt")]),
            Reply::Text("three".into()),
            Reply::ToolCalls(vec![write("c5", "etc/e.txt")]),
            Reply::Text("four".into()),
        ],
        false,
    )
    .await;
    grant_first(&f.engine, "s", "one", approve_for_15_min).await;
    f.engine.send_message("s", "two").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    assert_eq!(asked[0].args["path"], "docs/c.txt", "{asked:?}");
    f.engine
        .decide(deny(&asked[0].approval_id, "not there"), DecidedBy::Inbox)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert!(exists(&f, "src/b.txt") && !exists(&f, "docs/c.txt"));
    let calls: Vec<CallRow> = f
        .engine
        .transcript("s")
        .unwrap()
        .into_iter()
        .flat_map(|m| m.calls)
        .collect();
    let by_id = |id: &str| calls.iter().find(|c| c.provider_call_id == id).unwrap();
    assert_eq!(
        by_id("c1").grant.as_deref(),
        Some("granted for 15 min: builtin/write_file with anything under src/ in this chat"),
        "the approval shows the grant it made"
    );
    let why = by_id("c2").policy_why.clone().unwrap_or_default();
    assert!(
        why.starts_with("allowed by the grant made at ")
            && why.contains(
                " UTC for builtin/write_file with anything under src/ in this chat, 15 min left"
            ),
        "{why}"
    );
    // Any arguments: asked for explicitly.
    f.engine.send_message("s", "three").unwrap();
    let asked = inbox_of(&f.engine, 1).await;
    f.engine
        .decide(
            granting(
                &asked[0].approval_id,
                GrantRequest {
                    args: Some(GrantArgs::Any),
                    ..for_15_min()
                },
            ),
            DecidedBy::Inbox,
        )
        .unwrap();
    turn_end(&f.engine, "s").await;
    f.engine.send_message("s", "four").unwrap();
    turn_end(&f.engine, "s").await;
    assert!(exists(&f, "etc/e.txt"));
}

/// A pattern typed for a grant must cover the call that makes it, and goes with a time or a
/// number of calls; a grant is for any arguments or a pattern, not both.
#[tokio::test]
async fn a_typed_grant_pattern_must_cover_the_call_approved() {
    let (f, item) = pending_write("done", false).await;
    let refused = |request: DecisionRequest| {
        let error = f.engine.decide(request, DecidedBy::Inbox).unwrap_err();
        assert_eq!(
            error.code(),
            airlock_protocol::ErrorCode::InvalidEdit,
            "{error}"
        );
        error.to_string()
    };
    let id = &item.approval_id;
    let why = refused(granting(
        id,
        GrantRequest {
            pattern: Some("docs/*".into()),
            ..for_15_min()
        },
    ));
    assert!(why.contains("does not cover"), "{why}");
    refused(granting(
        id,
        GrantRequest {
            scope: Some(GrantScope::All),
            ..GrantRequest::default()
        },
    ));
    refused(granting(
        id,
        GrantRequest {
            pattern: Some("*".into()),
            args: Some(GrantArgs::Any),
            ..for_15_min()
        },
    ));
    f.engine
        .decide(
            granting(
                id,
                GrantRequest {
                    pattern: Some("*.txt".into()),
                    ..for_15_min()
                },
            ),
            DecidedBy::Inbox,
        )
        .unwrap();
    let grant = f.engine.grants().unwrap().remove(0);
    assert_eq!(grant.entry.pattern.unwrap().label, "`*.txt`");
    assert!(grant.entry.session_id.is_some(), "this chat by default");
}
