//! People on a team server, through the one dispatcher as each member: a quorum counts distinct
//! people approving the same arguments, escalation moves an unanswered item to the next group
//! (and after the last step it expires as denied), a viewer cannot decide, delegation hands an
//! item to one person. The real loop and the real built-in tool: what runs is checked on disk.

use super::*;
use crate::commands::{Caller, NoHost, dispatch};
use airlock_protocol::{DecisionOutcome, MemberView, TeamRole};

/// A team: `root` (admin), `ana` and `bo` (approvers, group `release`), `cy` (approver, group
/// `oncall`), `vi` (viewer).
struct Team {
    ana: MemberView,
    bo: MemberView,
    cy: MemberView,
    vi: MemberView,
}

fn team(engine: &Engine) -> Team {
    engine.team_init("root").unwrap();
    let add = |name: &str, role: TeamRole, group: &str| {
        let groups = if group.is_empty() {
            Vec::new()
        } else {
            vec![group.to_string()]
        };
        engine.team_add("root", name, role, groups).unwrap().member
    };
    Team {
        ana: add("ana", TeamRole::Approver, "release"),
        bo: add("bo", TeamRole::Approver, "release"),
        cy: add("cy", TeamRole::Approver, "oncall"),
        vi: add("vi", TeamRole::Viewer, ""),
    }
}

fn route(engine: &Engine, to: &str, quorum: u32, escalate: Option<(u64, Option<&str>)>) {
    engine
        .team_route(
            "root",
            "builtin",
            "write_file",
            None,
            None,
            to,
            Some(quorum),
            escalate.map(|(secs, _)| secs),
            escalate.and_then(|(_, next)| next),
        )
        .unwrap();
}

/// The member's `decide` through the dispatcher: the command's error, or the item's outcome.
async fn decide_as(
    engine: &Engine,
    member: &MemberView,
    decision: DecisionRequest,
) -> std::result::Result<DecisionOutcome, airlock_protocol::CommandError> {
    let caller = Caller::Member(member.clone());
    let answer = dispatch(
        engine,
        &NoHost,
        &caller,
        "decide",
        json!({ "decisions": [decision] }),
    )
    .await?;
    let mut outcomes: Vec<DecisionOutcome> = serde_json::from_value(answer).unwrap();
    Ok(outcomes.remove(0))
}

async fn inbox_as(engine: &Engine, member: &MemberView) -> Vec<String> {
    let caller = Caller::Member(member.clone());
    let answer = dispatch(engine, &NoHost, &caller, "inbox", Value::Null)
        .await
        .unwrap();
    let items: Vec<InboxItem> = serde_json::from_value(answer).unwrap();
    items.into_iter().map(|item| item.approval_id).collect()
}

fn pending(engine: &Engine, id: &str) -> bool {
    engine
        .inbox()
        .unwrap()
        .iter()
        .any(|item| item.approval_id == id)
}

/// Waits (with a deadline, on the engine's events) for the item to be announced again: the
/// escalation's notification.
async fn announced_again(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    approval_id: &str,
) {
    tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match events.recv().await {
                Ok(EngineEvent::ApprovalRequested { item }) if item.approval_id == approval_id => {
                    return;
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(error) => panic!("events ended: {error}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{approval_id} was not escalated within 15 s"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quorum_of_two_runs_only_after_two_different_people_approve_the_same_arguments() {
    let f = write_then("done", false).await;
    let people = team(&f.engine);
    route(&f.engine, "release", 2, None);
    f.engine.send_message("s", "write").unwrap();
    let item = inbox_of(&f.engine, 1).await.remove(0);
    let id = item.approval_id.clone();
    let written = f.engine.workspace().join("a.txt");

    // One approval is counted, and decides nothing.
    let first = decide_as(&f.engine, &people.ana, approve(&id))
        .await
        .unwrap();
    assert_eq!(first.error, None);
    assert!(pending(&f.engine, &id), "one approval of two ran it");
    // The same person again is still one person.
    let again = decide_as(&f.engine, &people.ana, approve(&id))
        .await
        .unwrap();
    assert_eq!(again.error, None);
    assert!(pending(&f.engine, &id), "the same person twice ran it");
    // The desktop's own decision is no team member's: it cannot stand in for one.
    let local = f.engine.decide(approve(&id), DecidedBy::Inbox);
    assert!(
        matches!(local, Err(EngineError::NotAllowed(_))),
        "{local:?}"
    );
    assert!(pending(&f.engine, &id));
    assert!(!written.exists());

    // A second person's approval of the same arguments runs it.
    let second = decide_as(&f.engine, &people.bo, approve(&id))
        .await
        .unwrap();
    assert_eq!(second.error, None);
    assert!(!pending(&f.engine, &id));
    turn_end(&f.engine, "s").await;
    assert!(written.exists(), "two approvals did not run it");

    // Each approval is audited with its person.
    let audit = f.engine.audit(1000).unwrap();
    let counted: Vec<&str> = audit
        .iter()
        .filter(|row| row.action == "approval_counted")
        .map(|row| row.actor.as_str())
        .collect();
    assert_eq!(counted, ["ana", "bo"]);
    let approved = audit
        .iter()
        .find(|row| row.action == "approved")
        .expect("the decision's row");
    assert_eq!(approved.detail["person"], "bo");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_starts_the_count_again_and_one_denial_is_final() {
    let f = write_then("done", false).await;
    let people = team(&f.engine);
    route(&f.engine, "release", 2, None);
    f.engine.send_message("s", "write").unwrap();
    let id = inbox_of(&f.engine, 1).await.remove(0).approval_id;

    decide_as(&f.engine, &people.ana, approve(&id))
        .await
        .unwrap();
    // Bo approves other arguments: that is one approval of those, not a second of ana's.
    let edited = approving(
        &id,
        Approval {
            args: Some(json!({"path": "b.txt", "content": "y"})),
            ..Approval::default()
        },
    );
    let outcome = decide_as(&f.engine, &people.bo, edited).await.unwrap();
    assert_eq!(outcome.error, None);
    assert!(
        pending(&f.engine, &id),
        "an edit was counted with the original"
    );

    // One denial ends it, and its reason reaches the model.
    let denied = decide_as(&f.engine, &people.ana, deny(&id, "not on a Friday"))
        .await
        .unwrap();
    assert_eq!(denied.error, None);
    assert!(!pending(&f.engine, &id));
    turn_end(&f.engine, "s").await;
    let requests = f.model.requests();
    let results = tool_results(requests.last().unwrap());
    assert!(
        results[0].1.contains("not on a Friday"),
        "the model did not read the reason: {results:?}"
    );
    assert!(!f.engine.workspace().join("a.txt").exists());
    assert!(!f.engine.workspace().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_item_escalates_to_the_second_group() {
    let f = write_then("done", false).await;
    let people = team(&f.engine);
    route(&f.engine, "release", 1, Some((3, Some("oncall"))));
    let mut events = f.engine.subscribe();
    f.engine.send_message("s", "write").unwrap();
    let id = inbox_of(&f.engine, 1).await.remove(0).approval_id;

    // First with release, not on-call.
    assert_eq!(
        inbox_as(&f.engine, &people.ana).await,
        std::slice::from_ref(&id)
    );
    assert!(inbox_as(&f.engine, &people.cy).await.is_empty());
    let early = decide_as(&f.engine, &people.cy, approve(&id))
        .await
        .unwrap();
    assert_eq!(
        early.error.map(|e| e.code),
        Some(airlock_protocol::ErrorCode::NotAllowed)
    );

    // Unanswered for 3 s, it goes to on-call, who is notified (announced again).
    // The first announcement is the new item's.
    announced_again(&mut events, &id).await;
    announced_again(&mut events, &id).await;
    assert_eq!(
        inbox_as(&f.engine, &people.cy).await,
        std::slice::from_ref(&id)
    );
    assert!(inbox_as(&f.engine, &people.ana).await.is_empty());
    let late = decide_as(&f.engine, &people.ana, approve(&id))
        .await
        .unwrap();
    assert!(late.error.is_some(), "release still decided it");
    let answered = decide_as(&f.engine, &people.cy, approve(&id))
        .await
        .unwrap();
    assert_eq!(answered.error, None);
    turn_end(&f.engine, "s").await;
    assert!(f.engine.workspace().join("a.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn after_the_last_step_the_item_expires_as_denied() {
    let f = write_then("done", false).await;
    team(&f.engine);
    route(&f.engine, "release", 1, Some((1, None)));
    f.engine.send_message("s", "write").unwrap();
    inbox_of(&f.engine, 1).await;
    // The turn ends on its own: the item expired (fail closed), nothing ran.
    turn_end(&f.engine, "s").await;
    assert!(f.engine.inbox().unwrap().is_empty());
    assert!(!f.engine.workspace().join("a.txt").exists());
    let requests = f.model.requests();
    let results = tool_results(requests.last().unwrap());
    assert!(
        results[0].1.contains("nobody answered in time"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_viewer_reads_the_inbox_and_cannot_decide() {
    let (f, item) = pending_write("done", false).await;
    let people = team(&f.engine);
    assert_eq!(
        inbox_as(&f.engine, &people.vi).await,
        std::slice::from_ref(&item.approval_id)
    );
    let refused = decide_as(&f.engine, &people.vi, approve(&item.approval_id)).await;
    assert_eq!(
        refused.err().map(|e| e.code),
        Some(airlock_protocol::ErrorCode::NotAllowed)
    );
    // Nor does the decision path itself take a viewer's approval.
    let direct = f
        .engine
        .decide_many_as_member(vec![approve(&item.approval_id)], &people.vi)
        .unwrap()
        .remove(0);
    assert!(
        matches!(direct, Err(EngineError::NotAllowed(_))),
        "{direct:?}"
    );
    // Nor change a setting.
    let caller = Caller::Member(people.vi.clone());
    let paused = dispatch(
        &f.engine,
        &NoHost,
        &caller,
        "set_paused",
        json!({"paused": true}),
    )
    .await;
    assert!(paused.is_err());
    assert!(!f.engine.paused());
    assert!(pending(&f.engine, &item.approval_id));
}

#[tokio::test(flavor = "multi_thread")]
async fn delegation_hands_the_item_to_one_person() {
    let f = write_then("done", false).await;
    let people = team(&f.engine);
    route(&f.engine, "release", 1, None);
    f.engine.send_message("s", "write").unwrap();
    let id = inbox_of(&f.engine, 1).await.remove(0).approval_id;

    // Someone else's item is not theirs to hand on.
    let caller = Caller::Member(people.cy.clone());
    let args = json!({"approvalId": id, "to": "cy", "note": "yours"});
    assert!(
        dispatch(&f.engine, &NoHost, &caller, "delegate", args)
            .await
            .is_err()
    );

    let caller = Caller::Member(people.ana.clone());
    let args = json!({"approvalId": id, "to": "cy", "note": "you know this service"});
    dispatch(&f.engine, &NoHost, &caller, "delegate", args)
        .await
        .unwrap();
    assert_eq!(
        inbox_as(&f.engine, &people.cy).await,
        std::slice::from_ref(&id)
    );
    assert!(inbox_as(&f.engine, &people.ana).await.is_empty());
    let bo = decide_as(&f.engine, &people.bo, approve(&id))
        .await
        .unwrap();
    assert!(bo.error.is_some(), "the release group still decided it");
    let cy = decide_as(&f.engine, &people.cy, approve(&id))
        .await
        .unwrap();
    assert_eq!(cy.error, None);
    turn_end(&f.engine, "s").await;
    assert!(f.engine.workspace().join("a.txt").exists());
    let delegated = f
        .engine
        .audit(1000)
        .unwrap()
        .into_iter()
        .find(|row| row.action == "approval_delegated")
        .expect("the delegation is audited");
    assert_eq!(delegated.actor, "ana");
    assert_eq!(delegated.detail["note"], "you know this service");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_admin_is_made_once_and_a_member_is_refused_what_their_role_is_not() {
    let (_dir, engine) = empty_engine();
    let first = dispatch(
        &engine,
        &NoHost,
        &Caller::Newcomer,
        "team_init",
        json!({"name": "root"}),
    )
    .await
    .unwrap();
    let token = first["token"].as_str().unwrap().to_string();
    let root = engine.member_for_token(&token).unwrap().unwrap();
    assert_eq!(root.role, TeamRole::Admin);
    // Only while the team has no member.
    let again = dispatch(
        &engine,
        &NoHost,
        &Caller::Newcomer,
        "team_init",
        json!({"name": "eve"}),
    )
    .await;
    assert!(again.is_err());
    // A newcomer reaches nothing else.
    assert!(
        dispatch(&engine, &NoHost, &Caller::Newcomer, "inbox", Value::Null)
            .await
            .is_err()
    );
    assert_eq!(engine.member_for_token("not-a-token").unwrap(), None);
    // The store keeps a hash, never the token (in the database or its log).
    for entry in std::fs::read_dir(engine.data_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains("airlock.db") {
            let kept = std::fs::read(&path).unwrap();
            assert!(
                !kept.windows(token.len()).any(|w| w == token.as_bytes()),
                "{} holds the token",
                path.display()
            );
        }
    }
    // An approver may not add members; an admin may, and it is audited with them.
    let caller = Caller::Member(root.clone());
    dispatch(
        &engine,
        &NoHost,
        &caller,
        "team_add",
        json!({"name": "ana", "role": "approver"}),
    )
    .await
    .unwrap();
    let ana = engine
        .team_members()
        .unwrap()
        .into_iter()
        .find(|member| member.name == "ana")
        .unwrap();
    let caller = Caller::Member(ana);
    let refused = dispatch(
        &engine,
        &NoHost,
        &caller,
        "team_add",
        json!({"name": "mallory", "role": "admin"}),
    )
    .await;
    assert!(refused.is_err());
    assert!(
        engine
            .audit(100)
            .unwrap()
            .iter()
            .any(|row| row.actor == "root"
                && row.action == "member_command"
                && row.detail["command"] == "team_add")
    );
}
