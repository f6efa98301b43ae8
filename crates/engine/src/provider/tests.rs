//! Provider-executed approvals and named providers, through the engine against the scripted
//! server speaking the OpenAI Responses API (see `crates/testkit/src/responses.rs` for the
//! documents it follows).

use crate::tests::{inbox_of, turn_end};
use crate::{
    Decision, DecisionKind, DecisionRequest, Engine, EngineConfig, ProviderKind, ProviderSettings,
};
use airlock_core::{DecidedBy, ItemKind, Mode};
use airlock_protocol::Approval;
use airlock_testkit::{Reply, ScriptedApproval, ScriptedCall, ScriptedMcpCall, ScriptedModel};
use serde_json::{Value, json};
use std::time::Duration;

fn responses(model: &ScriptedModel, name: Option<&str>) -> ProviderSettings {
    ProviderSettings {
        name: name.map(str::to_string),
        kind: ProviderKind::OpenaiResponses,
        base_url: model.base_url(),
        model: "scripted".into(),
        ..ProviderSettings::default()
    }
}

fn open(dir: &tempfile::TempDir) -> Engine {
    Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })
    .unwrap()
}

fn ask(id: &str, arguments: &str) -> ScriptedApproval {
    ScriptedApproval {
        id: id.into(),
        server_label: "wiki".into(),
        name: "search".into(),
        arguments: arguments.into(),
    }
}

/// The `mcp_approval_response` items of a recorded request.
fn answers(request: &Value) -> Vec<Value> {
    request["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "mcp_approval_response")
        .cloned()
        .collect()
}

#[tokio::test]
async fn session_modes_decide_provider_approvals_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::McpApprovalRequests(vec![ask("r1", r#"{"q":"a"}"#)]),
        Reply::Text("denied, fine".into()),
        Reply::McpApprovalRequests(vec![ask("r2", r#"{"q":"b"}"#)]),
        Reply::Text("approved, fine".into()),
    ])
    .await
    .unwrap();
    let engine = open(&dir);
    engine.set_provider(responses(&model, None)).unwrap();

    engine.set_mode(Some("deny"), Some(Mode::DenyAll)).unwrap();
    engine.send_message("deny", "go").unwrap();
    assert_eq!(
        turn_end(&engine, "deny").await.answer.as_deref(),
        Some("denied, fine")
    );
    let answer = &answers(&model.requests()[1])[0];
    assert_eq!(answer["approve"], false);
    assert!(
        answer["reason"].as_str().unwrap().contains("deny-all"),
        "{answer}"
    );

    engine
        .set_mode(Some("never"), Some(Mode::NeverAsk))
        .unwrap();
    engine.send_message("never", "go").unwrap();
    assert_eq!(
        turn_end(&engine, "never").await.answer.as_deref(),
        Some("approved, fine")
    );
    assert_eq!(
        answers(&model.requests()[3]),
        vec![
            json!({"type": "mcp_approval_response", "approval_request_id": "r2", "approve": true})
        ]
    );
    assert!(engine.inbox().unwrap().is_empty());
}

#[tokio::test]
async fn unreadable_provider_arguments_and_repeated_ids_are_denied_never_asked() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::McpApprovalRequests(vec![
            ask("r1", "{not json"),
            ask("r2", "[1]"),
            ask("r3", "{}"),
            ask("r3", "{}"),
        ]),
        Reply::Text("ok".into()),
    ])
    .await
    .unwrap();
    let engine = open(&dir);
    engine.set_provider(responses(&model, None)).unwrap();
    engine.send_message("s", "go").unwrap();
    // Only the one readable, unique request asks.
    let items = inbox_of(&engine, 1).await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].kind, ItemKind::ProviderToolCall);
    assert_eq!(items[0].args, json!({}));
    // The provider runs the tool and asks each time: approve or deny, nothing kept, no edit.
    assert_eq!(
        items[0].available_decisions,
        vec![DecisionKind::Approve, DecisionKind::Deny]
    );
    let for_chat = DecisionRequest::new(
        items[0].approval_id.clone(),
        Decision::Approve(Approval {
            for_chat: true,
            ..Approval::default()
        }),
    );
    let refused = engine.decide(for_chat, DecidedBy::Api).unwrap_err();
    assert!(refused.to_string().contains("asks each time"), "{refused}");
    assert_eq!(engine.inbox().unwrap().len(), 1, "still waiting");
    engine
        .decide(
            DecisionRequest::approve(items[0].approval_id.clone()),
            DecidedBy::Api,
        )
        .unwrap();
    turn_end(&engine, "s").await;
    let sent = answers(&model.requests()[1]);
    let by_id = |id: &str| {
        sent.iter()
            .filter(|a| a["approval_request_id"] == id)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(by_id("r1")[0]["approve"], false);
    assert!(
        by_id("r1")[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert_eq!(by_id("r2")[0]["approve"], false);
    assert_eq!(
        by_id("r3").len(),
        1,
        "only the first r3 is answered by its own id: {sent:?}"
    );
    assert_eq!(by_id("r3")[0]["approve"], true);
}

#[tokio::test]
async fn a_function_call_and_a_provider_approval_in_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "fc1",
            "builtin__write_file",
            json!({"path": "mine.txt", "content": "x"}),
        )]),
        Reply::McpApprovalRequests(vec![ask("r1", r#"{"q":"c"}"#)]),
        Reply::McpCall {
            call: ScriptedMcpCall {
                approval_request_id: Some("r1".into()),
                server_label: "wiki".into(),
                name: "search".into(),
                arguments: r#"{"q":"c"}"#.into(),
                output: None,
                error: Some("upstream failed".into()),
            },
            text: "the search failed".into(),
        },
    ])
    .await
    .unwrap();
    let engine = open(&dir);
    engine.set_provider(responses(&model, None)).unwrap();
    engine.send_message("s", "go").unwrap();
    // The function tool goes through Airlock's own hook (write_file asks) and runs here.
    let items = inbox_of(&engine, 1).await;
    assert_eq!(items[0].kind, ItemKind::ToolCall);
    engine
        .decide(
            DecisionRequest::approve(items[0].approval_id.clone()),
            DecidedBy::Api,
        )
        .unwrap();
    let items = loop {
        let items = inbox_of(&engine, 1).await;
        if items[0].kind == ItemKind::ProviderToolCall {
            break items;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    engine
        .decide(
            DecisionRequest::approve(items[0].approval_id.clone()),
            DecidedBy::Api,
        )
        .unwrap();
    let outcome = turn_end(&engine, "s").await;
    assert_eq!(outcome.answer.as_deref(), Some("the search failed"));
    assert!(dir.path().join("workspace/mine.txt").exists());
    let outputs: Vec<Value> = model.requests()[1]["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .cloned()
        .collect();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["call_id"], "fc1");
    // The provider's failure is recorded on the call it asked about and in the audit trail.
    let transcript = engine.transcript("s").unwrap();
    let asked = transcript
        .iter()
        .flat_map(|m| &m.calls)
        .find(|c| c.provider_call_id == "r1")
        .unwrap();
    assert_eq!(asked.state, airlock_core::CallState::Failed);
    assert_eq!(
        asked.result.as_ref().unwrap()["outcome"]["error"],
        "upstream failed"
    );
    let audited = engine.store().audit_rows(100).unwrap();
    assert!(
        audited
            .iter()
            .any(|r| r.action == "provider_tool_outcome" && r.detail["error"] == "upstream failed")
    );
}

#[tokio::test]
async fn cancelling_while_a_provider_approval_waits_answers_no_next_time() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::McpApprovalRequests(vec![ask("r1", "{}")]),
        Reply::Text("ok".into()),
    ])
    .await
    .unwrap();
    let engine = open(&dir);
    engine.set_provider(responses(&model, None)).unwrap();
    engine.send_message("s", "go").unwrap();
    inbox_of(&engine, 1).await;
    assert!(engine.cancel("s").unwrap());
    turn_end(&engine, "s").await;
    assert!(engine.inbox().unwrap().is_empty());
    engine.send_message("s", "again").unwrap();
    assert_eq!(turn_end(&engine, "s").await.answer.as_deref(), Some("ok"));
    let answer = &answers(&model.requests()[1])[0];
    assert_eq!(answer["approve"], false);
}

#[tokio::test]
async fn sessions_use_their_chosen_named_provider() {
    let dir = tempfile::tempdir().unwrap();
    let default = ScriptedModel::start(vec![Reply::Text("from the default".into())])
        .await
        .unwrap();
    let named = ScriptedModel::start(vec![
        Reply::Text("from the named one".into()),
        Reply::Text("still named".into()),
    ])
    .await
    .unwrap();
    let engine = open(&dir);
    engine
        .set_provider(ProviderSettings {
            base_url: default.base_url(),
            model: "d".into(),
            ..ProviderSettings::default()
        })
        .unwrap();
    engine
        .set_provider(responses(&named, Some("resp")))
        .unwrap();
    assert!(engine.choose_provider("x", "missing").is_err());
    assert!(
        engine
            .set_provider(responses(&named, Some("bad name")))
            .is_err()
    );

    engine.send_message("plain", "hi").unwrap();
    assert_eq!(
        turn_end(&engine, "plain").await.answer.as_deref(),
        Some("from the default")
    );
    engine.choose_provider("chosen", "resp").unwrap();
    engine.send_message("chosen", "hi").unwrap();
    assert_eq!(
        turn_end(&engine, "chosen").await.answer.as_deref(),
        Some("from the named one")
    );
    // The choice stays with the session.
    engine.send_message("chosen", "again").unwrap();
    assert_eq!(
        turn_end(&engine, "chosen").await.answer.as_deref(),
        Some("still named")
    );
    assert_eq!(default.requests().len(), 1);
    assert_eq!(named.requests().len(), 2);
    let all = engine.providers().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].name.as_deref(), Some("resp"));
}

/// The registry is the one list of kinds: its names are the names the settings are stored and
/// sent with, and every kind in it can be built.
#[test]
fn every_registered_kind_is_named_as_it_is_stored_and_builds() {
    for info in crate::provider_kinds() {
        assert_eq!(
            serde_json::to_value(info.kind).unwrap(),
            Value::String(info.name.into())
        );
        let settings = ProviderSettings {
            kind: info.kind,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            ..ProviderSettings::default()
        };
        assert!(
            crate::provider::build(&settings, None).is_ok(),
            "{}",
            info.name
        );
    }
    assert_eq!(
        crate::provider_kind_names(),
        ["openai-chat", "openai-responses", "anthropic"]
    );
}
