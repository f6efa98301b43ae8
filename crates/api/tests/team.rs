//! A team server's listener over HTTPS (the certificate pinned by the client): the first admin
//! is made without a token, once; a token that is no member's is refused; a member reaches the
//! command table only, as their role allows; a quorum counts distinct people, an unanswered
//! item escalates, and an agent's own token posts its calls and nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_api::ApiClient;
use airlock_api::host::Host;
use airlock_engine::DecisionRequest;
use airlock_protocol::commands as cmd;
use airlock_protocol::{NewMember, TeamRole};
use common::{decide, refused};
use serde_json::json;
use std::net::SocketAddr;

/// The host's team listener over HTTPS, and clients of it that pin its certificate.
struct TeamServer {
    url: String,
    certificate: String,
}

impl TeamServer {
    async fn start(host: &Host) -> Self {
        let (addr, certificate) = host
            .serve_team(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        Self {
            url: format!("https://{addr}"),
            certificate: certificate.cert_pem,
        }
    }

    /// A client with `token` ("" for none).
    fn as_token(&self, token: &str) -> ApiClient {
        ApiClient::remote(&self.url, token, Some(self.certificate.as_bytes())).unwrap()
    }

    /// The first admin, made without a token (`team_init`).
    async fn first_admin(&self, name: &str) -> NewMember {
        self.as_token("")
            .call(&cmd::TeamInit { name: name.into() })
            .await
            .unwrap()
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
    let team = TeamServer::start(&host).await;
    let approve = || DecisionRequest::approve(item.approval_id.clone());

    // No token: the first admin, once.
    let root = team.first_admin("root").await;
    assert_eq!(root.member.role, TeamRole::Admin);
    let second = team
        .as_token("")
        .call(&cmd::TeamInit { name: "eve".into() })
        .await
        .unwrap_err();
    assert_eq!(refused(second), (403, "not_allowed".into()));
    // No token reaches nothing else; a token that is no member's is refused.
    let anonymous = team.as_token("").call(&cmd::Inbox {}).await.unwrap_err();
    assert_eq!(refused(anonymous).0, 401);
    let stranger = team
        .as_token(&"0".repeat(64))
        .call(&cmd::Inbox {})
        .await
        .unwrap_err();
    assert_eq!(refused(stranger), (401, "bad_token".into()));
    let stranger = decide(&team.as_token("wrong"), approve())
        .await
        .unwrap_err();
    assert_eq!(refused(stranger).0, 401);

    // The admin adds a viewer, who reads the inbox and cannot decide.
    let admin = team.as_token(&root.token);
    let viewer = admin
        .call(&cmd::TeamAdd {
            name: "vi".into(),
            role: TeamRole::Viewer,
            groups: Vec::new(),
        })
        .await
        .unwrap();
    let viewer = team.as_token(&viewer.token);
    assert_eq!(viewer.call(&cmd::Inbox {}).await.unwrap().len(), 1);
    let decided = decide(&viewer, approve()).await.unwrap_err();
    assert_eq!(refused(decided), (403, "not_allowed".into()));
    // A member's token reaches the command table only, not the REST routes beside it.
    let rest: Result<serde_json::Value, _> = viewer.get("/v1/inbox").await;
    assert_eq!(refused(rest.unwrap_err()).0, 403);
    assert!(host.engine.inbox().unwrap().len() == 1);
    assert!(!workspace.join("target.txt").exists());

    // The admin decides, audited with their name.
    let denial = DecisionRequest::deny(item.approval_id.clone(), Some("not now".into()));
    let outcomes = decide(&admin, denial).await.unwrap();
    assert_eq!(outcomes[0].error, None);
    let audit = host.engine.audit(100).unwrap();
    let denied = audit.iter().find(|row| row.action == "denied").unwrap();
    assert_eq!(denied.detail["person"], "root");
}

/// Waits (polling, with a deadline) until `check` holds.
async fn until(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

/// The ids in `client`'s inbox.
async fn inbox_ids(client: &ApiClient) -> Vec<String> {
    client
        .call(&cmd::Inbox {})
        .await
        .unwrap()
        .into_iter()
        .map(|item| item.approval_id)
        .collect()
}

/// The team server over HTTPS, as people on other machines and an agent with its own token use
/// it: Claude Code's `deploy` calls need two people of `release` (one approval does not run it,
/// the same person twice does not, a second person's does); its `migrate` calls go to `release`
/// and, unanswered, to `oncall`; the agent's token posts its calls and can neither read the
/// inbox nor decide.
#[tokio::test(flavor = "multi_thread")]
async fn on_a_team_server_a_quorum_counts_people_escalation_moves_on_and_an_agent_only_posts() {
    let common::Waiting {
        host, _model, _dir, ..
    } = common::one_waiting_write().await;
    let team = TeamServer::start(&host).await;
    let admin = team.as_token(&team.first_admin("root").await.token);
    let add = async |name: &str, group: &str| {
        let added = admin
            .call(&cmd::TeamAdd {
                name: name.into(),
                role: TeamRole::Approver,
                groups: vec![group.into()],
            })
            .await
            .unwrap();
        team.as_token(&added.token)
    };
    let ana = add("ana", "release").await;
    let bo = add("bo", "release").await;
    let cy = add("cy", "oncall").await;
    let route = |pattern: &str, quorum: u32, escalate: Option<u64>| cmd::TeamRoute {
        server: "claude-code".into(),
        tool: "Bash".into(),
        pointer: Some("/command".into()),
        pattern: Some(pattern.into()),
        to: "release".into(),
        quorum: Some(quorum),
        escalate_after_secs: escalate,
        escalate_to: escalate.map(|_| "oncall".into()),
    };
    admin.call(&route("deploy*", 2, None)).await.unwrap();
    admin.call(&route("migrate*", 1, Some(3))).await.unwrap();
    let agent = team.as_token(
        &admin
            .call(&cmd::IssueAgentToken {
                agent: "claude-code".into(),
            })
            .await
            .unwrap()
            .token,
    );
    // The agent's call as its client posts it, waiting for a person.
    let post = |command: &str, tool_use: &str| {
        let agent = agent.clone();
        let body = json!({
            "agent": "claude-code", "agent_session": "remote-1", "tool": "Bash",
            "input": {"command": command}, "tool_use_id": tool_use, "wait_ms": 60_000,
        });
        tokio::spawn(async move {
            agent
                .post::<serde_json::Value>("/v1/agent-calls", &body)
                .await
                .unwrap()
        })
    };
    let pending_of = async |command: &str| {
        let mut found = None;
        until(&format!("'{command}' in the team's inbox"), async || {
            found = admin
                .call(&cmd::Inbox {})
                .await
                .unwrap()
                .into_iter()
                .find(|item| item.args["command"] == command)
                .map(|item| item.approval_id);
            found.is_some()
        })
        .await;
        found.unwrap()
    };

    // Quorum of two.
    let deploy = post("deploy prod", "toolu_deploy");
    let id = pending_of("deploy prod").await;
    // The agent's own token reads nothing and decides nothing.
    let read = agent.call(&cmd::Inbox {}).await.unwrap_err();
    assert_eq!(refused(read).0, 403);
    let approve = || DecisionRequest::approve(id.clone());
    let decided = decide(&agent, approve()).await.unwrap_err();
    assert_eq!(refused(decided).0, 403);
    let rest: Result<serde_json::Value, _> = agent.get("/v1/inbox").await;
    assert_eq!(refused(rest.unwrap_err()).0, 403);
    for (person, who) in [(&ana, "ana"), (&ana, "ana again")] {
        let outcomes = decide(person, approve()).await.unwrap();
        assert_eq!(outcomes[0].error, None, "{who}");
        assert!(
            inbox_ids(&admin).await.contains(&id),
            "one person's approval ({who}) decided a quorum of two"
        );
        assert!(!deploy.is_finished(), "the agent was answered after {who}");
    }
    let outcomes = decide(&bo, approve()).await.unwrap();
    assert_eq!(outcomes[0].error, None);
    let answer = deploy.await.unwrap();
    assert_eq!(answer["verdict"], "allow", "{answer}");
    let audit = host.engine.audit(200).unwrap();
    let counted: Vec<&str> = audit
        .iter()
        .filter(|row| {
            row.action == "approval_counted" && row.approval_id.as_deref() == Some(id.as_str())
        })
        .map(|row| row.actor.as_str())
        .collect();
    assert_eq!(counted, ["ana", "bo"], "each person counted once");

    // Escalation: with release first, then, unanswered for 3 s, with oncall.
    let migrate = post("migrate db", "toolu_migrate");
    let id = pending_of("migrate db").await;
    assert!(inbox_ids(&ana).await.contains(&id));
    assert!(!inbox_ids(&cy).await.contains(&id), "oncall had it at once");
    until("the item escalated to oncall", async || {
        inbox_ids(&cy).await.contains(&id)
    })
    .await;
    assert!(!inbox_ids(&ana).await.contains(&id), "release kept it");
    let outcomes = decide(&cy, DecisionRequest::approve(id.clone()))
        .await
        .unwrap();
    assert_eq!(outcomes[0].error, None);
    let answer = migrate.await.unwrap();
    assert_eq!(answer["verdict"], "allow", "{answer}");
}
