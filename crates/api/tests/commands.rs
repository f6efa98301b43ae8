//! The command table on the local API (`POST /v1/commands/{name}`), through the CLI's typed
//! client: the API's commands run, the window's and unknown ones are refused before anything
//! runs, and a decision made this way is the engine's like any other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_engine::DecisionRequest;
use airlock_protocol::commands as cmd;
use common::{decide, refused};

#[tokio::test(flavor = "multi_thread")]
async fn the_api_runs_its_commands_of_the_table_and_refuses_the_windows() {
    let common::Waiting {
        host,
        item,
        workspace,
        client,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;

    let inbox = client.call(&cmd::Inbox {}).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].approval_id, item.approval_id);

    // The window's own commands and unknown ones are refused, and nothing ran.
    let tray = client.call(&cmd::TrayMenu {}).await.unwrap_err();
    assert_eq!(refused(tray), (403, "not_allowed".into()));
    let unknown: Result<serde_json::Value, _> = client
        .post("/v1/commands/format_disk", &serde_json::json!({}))
        .await;
    assert_eq!(refused(unknown.unwrap_err()), (400, "invalid".into()));
    let malformed: Result<serde_json::Value, _> = client
        .post(
            "/v1/commands/set_paused",
            &serde_json::json!({"paused": "yes"}),
        )
        .await;
    assert_eq!(refused(malformed.unwrap_err()), (400, "invalid".into()));
    assert!(!host.engine.paused());

    // A stale hash is refused on its own; the right one denies.
    let stale = DecisionRequest {
        args_hash: Some("0".repeat(64)),
        ..DecisionRequest::approve(item.approval_id.clone())
    };
    let outcomes = decide(&client, stale).await.unwrap();
    assert_eq!(
        outcomes[0].error.as_ref().map(|e| e.code),
        Some(airlock_protocol::ErrorCode::StaleArguments)
    );
    let deny = DecisionRequest {
        args_hash: Some(item.args_hash.clone()),
        ..DecisionRequest::deny(item.approval_id.clone(), Some("not now".into()))
    };
    let outcomes = decide(&client, deny).await.unwrap();
    assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    // The API's caller gets the row decided (what `/v1/decisions` answers).
    assert_eq!(
        outcomes[0]
            .approval
            .as_ref()
            .map(|row| row.approval_id.as_str()),
        Some(item.approval_id.as_str())
    );
    assert!(client.call(&cmd::Inbox {}).await.unwrap().is_empty());
    assert!(!workspace.join("target.txt").exists());
    let audit = host.engine.audit(100).unwrap();
    assert!(
        audit
            .iter()
            .any(|row| row.actor == "api" && row.action == "denied"),
        "{audit:?}"
    );
}

/// The REST paths that used to call the engine themselves are aliases of table commands: the
/// same answer, the same refusals, through the one dispatcher.
#[tokio::test(flavor = "multi_thread")]
async fn the_rest_paths_answer_what_their_commands_do() {
    let common::Waiting {
        host,
        client,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;

    let status = client.call(&cmd::Status {}).await.unwrap();
    let rest: serde_json::Value = client.get("/v1/status").await.unwrap();
    assert_eq!(rest, serde_json::to_value(&status).unwrap());
    assert!(!status.paused);

    assert!(client.call(&cmd::SetPaused { paused: true }).await.unwrap());
    assert!(!client.call(&cmd::SetPaused { paused: true }).await.unwrap());
    let paused: serde_json::Value = client.get("/v1/paused").await.unwrap();
    assert_eq!(paused["paused"], true);
    let resumed: serde_json::Value = client
        .put("/v1/paused", &serde_json::json!({"paused": false}))
        .await
        .unwrap();
    assert_eq!(resumed["changed"], true);
    assert!(!host.engine.paused());

    // A setting no one sets by name is refused the same way on both paths.
    let unknown = client
        .call(&cmd::SetSetting {
            key: "no_such_setting".into(),
            value: serde_json::json!(1),
        })
        .await
        .unwrap_err();
    assert_eq!(refused(unknown), (404, "unknown_setting".into()));
    let unknown: Result<serde_json::Value, _> = client
        .put("/v1/settings/no_such_setting", &serde_json::json!(1))
        .await;
    assert_eq!(
        refused(unknown.unwrap_err()),
        (404, "unknown_setting".into())
    );

    // Nothing of a desktop under `airlock serve`: no window to show.
    let shown = client
        .call(&cmd::ShowWindow { approval_id: None })
        .await
        .unwrap();
    assert!(!shown);
    let push = client.call(&cmd::Push {}).await.unwrap();
    let rest: serde_json::Value = client.get("/v1/remote/push").await.unwrap();
    assert_eq!(rest, serde_json::to_value(&push).unwrap());
}
