//! A team server's listener over HTTPS (the certificate pinned by the client): the first admin
//! is made without a token, once; a token that is no member's is refused; a member reaches the
//! command table only, as their role allows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_api::{ApiClient, ClientError};
use airlock_engine::DecisionRequest;
use airlock_protocol::TeamRole;
use airlock_protocol::commands as cmd;
use std::net::SocketAddr;

fn refused(error: ClientError) -> (u16, String) {
    match error {
        ClientError::Refused { status, code, .. } => (status, code),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn members_reach_the_team_server_with_their_own_tokens_and_nobody_else_does() {
    let common::Waiting {
        host,
        item,
        workspace,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let (addr, certificate) = host
        .serve_team(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let url = format!("https://{addr}");
    let pem = certificate.cert_pem.as_bytes();
    let as_token = |token: &str| ApiClient::remote(&url, token, Some(pem)).unwrap();

    // No token: the first admin, once.
    let root = as_token("")
        .call(&cmd::TeamInit {
            name: "root".into(),
        })
        .await
        .unwrap();
    assert_eq!(root.member.role, TeamRole::Admin);
    let second = as_token("")
        .call(&cmd::TeamInit { name: "eve".into() })
        .await
        .unwrap_err();
    assert_eq!(refused(second), (403, "not_allowed".into()));
    // No token reaches nothing else; a token that is no member's is refused.
    let anonymous = as_token("").call(&cmd::Inbox {}).await.unwrap_err();
    assert_eq!(refused(anonymous).0, 401);
    let stranger = as_token(&"0".repeat(64))
        .call(&cmd::Inbox {})
        .await
        .unwrap_err();
    assert_eq!(refused(stranger), (401, "bad_token".into()));
    let stranger = as_token("wrong")
        .call(&cmd::Decide {
            decisions: vec![DecisionRequest::approve(item.approval_id.clone())],
            channel: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused(stranger).0, 401);

    // The admin adds a viewer, who reads the inbox and cannot decide.
    let admin = as_token(&root.token);
    let viewer = admin
        .call(&cmd::TeamAdd {
            name: "vi".into(),
            role: TeamRole::Viewer,
            groups: Vec::new(),
        })
        .await
        .unwrap();
    let viewer = as_token(&viewer.token);
    assert_eq!(viewer.call(&cmd::Inbox {}).await.unwrap().len(), 1);
    let decided = viewer
        .call(&cmd::Decide {
            decisions: vec![DecisionRequest::approve(item.approval_id.clone())],
            channel: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused(decided), (403, "not_allowed".into()));
    // A member's token reaches the command table only, not the REST routes beside it.
    let rest: Result<serde_json::Value, _> = viewer.get("/v1/inbox").await;
    assert_eq!(refused(rest.unwrap_err()).0, 403);
    assert!(host.engine.inbox().unwrap().len() == 1);
    assert!(!workspace.join("target.txt").exists());

    // The admin decides, audited with their name.
    let outcomes = admin
        .call(&cmd::Decide {
            decisions: vec![DecisionRequest::deny(
                item.approval_id.clone(),
                Some("not now".into()),
            )],
            channel: None,
        })
        .await
        .unwrap();
    assert_eq!(outcomes[0].error, None);
    let audit = host.engine.audit(100).unwrap();
    let denied = audit.iter().find(|row| row.action == "denied").unwrap();
    assert_eq!(denied.detail["person"], "root");
}
