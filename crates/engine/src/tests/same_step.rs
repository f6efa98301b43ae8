//! Within one model step, identical calls (same tool, same arguments) ask once: the others follow
//! that request's decision — its edit, its denial and reason — and never run without it.

use super::*;

fn write(id: &str, path: &str, content: &str) -> ScriptedCall {
    call(
        id,
        "builtin__write_file",
        json!({"path": path, "content": content}),
    )
}

/// Waits until `session` waits for a person (its step is recorded, its items asked).
async fn waits_for_a_person(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    session: &str,
) {
    let waiting = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match events.recv().await {
                Ok(EngineEvent::SessionStatus {
                    session: name,
                    status: airlock_core::SessionStatus::AwaitingApproval,
                }) if name == session => return,
                Ok(_) => {}
                Err(error) => panic!("the engine's events ended: {error}"),
            }
        }
    })
    .await;
    assert!(
        waiting.is_ok(),
        "session {session} never waited for a person"
    );
}

#[tokio::test]
async fn identical_calls_of_one_step_ask_once_and_follow_its_decision() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![
                write("c1", "a.txt", "x"),
                write("c2", "a.txt", "x"),
                write("c3", "b.txt", "x"),
                write("c4", "a.txt", "x"),
            ]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    let mut events = f.engine.subscribe();
    f.engine.send_message("s", "write").unwrap();
    // The step is recorded whole before its session waits for a person: every item it asks
    // is in the inbox by then.
    waits_for_a_person(&mut events, "s").await;
    let items = f.engine.inbox().unwrap();
    assert_eq!(items.len(), 2, "asked once per distinct call: {items:?}");
    let a = items.iter().find(|i| i.args["path"] == "a.txt").unwrap();
    let b = items.iter().find(|i| i.args["path"] == "b.txt").unwrap();
    // An edit of the one request is what all three identical calls run.
    f.engine
        .decide(
            approving(
                &a.approval_id,
                Approval {
                    args: Some(json!({"path": "a.txt", "content": "edited"})),
                    ..Approval::default()
                },
            ),
            DecidedBy::Inbox,
        )
        .unwrap();
    assert!(
        !f.engine.workspace().join("a.txt").exists(),
        "nothing runs while another call of the step waits"
    );
    f.engine
        .decide(deny(&b.approval_id, "not b"), DecidedBy::Inbox)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert_eq!(
        std::fs::read_to_string(f.engine.workspace().join("a.txt")).unwrap(),
        "edited"
    );
    assert!(!f.engine.workspace().join("b.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    assert_eq!(results.len(), 4, "{results:?}");
    for (id, content) in &results {
        if id == "c3" {
            assert!(content.contains("not b"), "{content}");
        } else {
            assert!(!content.contains("execution-denied"), "{id}: {content}");
        }
    }
}

#[tokio::test]
async fn a_denial_reaches_every_identical_call_with_its_reason() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("c1", "a.txt", "x"), write("c2", "a.txt", "x")]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    f.engine.send_message("s", "write").unwrap();
    let item = inbox_of(&f.engine, 1).await.remove(0);
    f.engine
        .decide(deny(&item.approval_id, "use notes.txt"), DecidedBy::Inbox)
        .unwrap();
    turn_end(&f.engine, "s").await;
    assert!(!f.engine.workspace().join("a.txt").exists());
    let results = tool_results(&f.model.requests()[1]);
    assert_eq!(results.len(), 2);
    for (_, content) in results {
        assert!(
            content.contains("execution-denied") && content.contains("use notes.txt"),
            "{content}"
        );
    }
}
