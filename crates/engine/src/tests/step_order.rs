//! A model step's calls run in the order the model gave them: a call the policy allows, or one
//! approved early, waits for the earlier calls of its step to be decided and run (or denied);
//! a denial does not stop the calls after it. A command that exits non-zero is a failed call.

use super::*;
use airlock_core::{RuleEffect, RulePattern};

/// An allow rule for `run_command` with exactly `command`.
fn allow_command(engine: &Engine, command: &str) {
    engine
        .add_rule(ArgRule {
            id: format!("allow {command}"),
            server: "builtin".into(),
            tool: "run_command".into(),
            pointer: "/command".into(),
            pattern: RulePattern::Glob(command.into()),
            effect: RuleEffect::Allow,
        })
        .unwrap();
}

fn run(id: &str, command: &str) -> ScriptedCall {
    call(id, "builtin__run_command", json!({"command": command}))
}

fn write(id: &str, path: &str) -> ScriptedCall {
    call(
        id,
        "builtin__write_file",
        json!({"path": path, "content": "x"}),
    )
}

/// Fails when a tool starts or finishes within `bound` (the model's own requests are fine).
async fn assert_no_tool_runs(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    bound: Duration,
    what: &str,
) {
    assert_no_event_within(events, bound, what, |event| {
        matches!(
            event,
            EngineEvent::ToolFinished { .. }
                | EngineEvent::SessionStatus {
                    status: airlock_core::SessionStatus::RunningTools,
                    ..
                }
        )
    })
    .await;
}

/// The calls of the session's first step, as every channel's transcript shows them.
fn step_calls(engine: &Engine) -> Vec<CallRow> {
    engine.transcript("s").unwrap()[1].calls.clone()
}

#[tokio::test]
async fn a_call_allowed_by_a_rule_runs_after_the_earlier_call_it_follows() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![write("w", "deploy/x"), run("l", "ls deploy")]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    allow_command(&f.engine, "ls deploy");
    let mut events = f.engine.subscribe();
    f.engine.send_message("s", "deploy").unwrap();
    let items = inbox_of(&f.engine, 1).await;
    assert_eq!(items.len(), 1, "only the write asks: {items:?}");
    assert_eq!(items[0].tool, "write_file");
    assert_no_tool_runs(
        &mut events,
        Duration::from_millis(500),
        "the allowed ls ran before the write before it was decided",
    )
    .await;
    let calls = step_calls(&f.engine);
    assert_eq!(
        (calls[1].state, calls[1].runs_after),
        (CallState::AutoAllowed, 1),
        "the ls says it runs after one earlier call: {calls:?}"
    );
    f.engine
        .decide(approve(&items[0].approval_id), DecidedBy::Inbox)
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    let calls = step_calls(&f.engine);
    assert_eq!(
        calls.iter().map(|c| c.state).collect::<Vec<_>>(),
        [CallState::Succeeded, CallState::Succeeded],
        "{calls:?}"
    );
    assert!(calls.iter().all(|c| c.runs_after == 0), "{calls:?}");
    // The ls saw the file the write made: it ran after it.
    let listed = &calls[1].result.as_ref().unwrap()["stdout"];
    assert_eq!(listed, "x\n", "{calls:?}");
}

#[tokio::test]
async fn a_call_approved_early_runs_after_the_earlier_calls_of_its_step() {
    // The first command takes a while (so that running both at once would show); the person
    // approves the second first, and it still runs only after the first has run.
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![
                run("slow", "sleep 1 && echo x > x.txt"),
                run("read", "cat x.txt"),
            ]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    f.engine.send_message("s", "go").unwrap();
    let items = inbox_of(&f.engine, 2).await;
    let item_of = |command: &str| items.iter().find(|i| i.args["command"] == command).unwrap();
    f.engine
        .decide(approve(&item_of("cat x.txt").approval_id), DecidedBy::Inbox)
        .unwrap();
    let calls = step_calls(&f.engine);
    assert_eq!(
        (calls[1].state, calls[1].runs_after),
        (CallState::Approved, 1),
        "approved — runs after 1 earlier call: {calls:?}"
    );
    f.engine
        .decide(
            approve(&item_of("sleep 1 && echo x > x.txt").approval_id),
            DecidedBy::Inbox,
        )
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    let calls = step_calls(&f.engine);
    assert_eq!(
        calls.iter().map(|c| c.state).collect::<Vec<_>>(),
        [CallState::Succeeded, CallState::Succeeded],
        "the cat ran before the command before it: {calls:?}"
    );
    assert_eq!(calls[1].result.as_ref().unwrap()["stdout"], "x\n");
}

#[tokio::test]
async fn a_denied_call_does_not_stop_the_calls_after_it() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![
                write("w1", "a.txt"),
                write("w2", "b.txt"),
                run("l", "ls"),
            ]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    allow_command(&f.engine, "ls");
    let mut events = f.engine.subscribe();
    f.engine.send_message("s", "write").unwrap();
    let items = inbox_of(&f.engine, 2).await;
    let item_of = |path: &str| items.iter().find(|i| i.args["path"] == path).unwrap();
    f.engine
        .decide(
            deny(&item_of("a.txt").approval_id, "not a"),
            DecidedBy::Inbox,
        )
        .unwrap();
    assert_no_tool_runs(
        &mut events,
        Duration::from_millis(500),
        "the allowed ls ran while the write before it waited",
    )
    .await;
    assert_eq!(step_calls(&f.engine)[2].runs_after, 1);
    f.engine
        .decide(approve(&item_of("b.txt").approval_id), DecidedBy::Inbox)
        .unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    assert!(!f.engine.workspace().join("a.txt").exists());
    assert!(f.engine.workspace().join("b.txt").exists());
    let calls = step_calls(&f.engine);
    assert_eq!(
        calls.iter().map(|c| c.state).collect::<Vec<_>>(),
        [
            CallState::Denied,
            CallState::Succeeded,
            CallState::Succeeded
        ],
        "{calls:?}"
    );
    assert_eq!(calls[2].result.as_ref().unwrap()["stdout"], "b.txt\n");
    let results = tool_results(&f.model.requests()[1]);
    assert_eq!(results.len(), 3, "the model gets each result: {results:?}");
    assert!(results[0].1.contains("not a"), "{results:?}");
    assert!(results[1].1.contains("wrote"), "{results:?}");
}

#[tokio::test]
async fn a_command_that_exits_non_zero_is_a_failed_call_with_its_exit_code() {
    let f = fixture(
        vec![
            Reply::ToolCalls(vec![run("c", "echo partial; exit 3")]),
            Reply::Text("done".into()),
        ],
        false,
    )
    .await;
    f.engine.set_mode(Some("s"), Some(Mode::NeverAsk)).unwrap();
    f.engine.send_message("s", "run").unwrap();
    assert_eq!(turn_end(&f.engine, "s").await.status, "completed");
    let call = step_calls(&f.engine).remove(0);
    assert_eq!(call.state, CallState::Failed, "{call:?}");
    let result = call.result.unwrap();
    assert_eq!(result["exit_code"], json!(3), "{result}");
    assert_eq!(result["stdout"], "partial\n", "{result}");
    // History: the audit trail records a failed call with its exit code.
    let audit = f.engine.audit(100).unwrap();
    let finished: Vec<&AuditRow> = audit
        .iter()
        .filter(|row| row.tool_call_id.as_deref() == Some(call.id.as_str()))
        .filter(|row| row.action.starts_with("call_"))
        .collect();
    assert_eq!(finished.len(), 1, "{audit:?}");
    assert_eq!(finished[0].action, "call_failed");
    assert_eq!(
        finished[0].detail["exit_code"],
        json!(3),
        "{:?}",
        finished[0]
    );
    // The model reads it as an error result.
    let request = &f.model.requests()[1];
    let tool = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{tool}"
    );
}
