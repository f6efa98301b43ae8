//! An agent's own token on the local API: it posts that agent's calls (`/v1/agent-calls`, its
//! HTTP hook route) and nothing else — not the inbox, not a decision, not a setting, not another
//! agent's call; revoked, it is refused; the main token keeps reaching everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_api::ApiClient;
use airlock_core::{ArgRule, RuleEffect, RulePattern};
use airlock_engine::Engine;
use airlock_protocol::commands as cmd;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// One request with `token` on the engine's loopback port: its status and JSON body.
async fn send(
    addr: std::net::SocketAddr,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method, format!("http://{addr}{path}"))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn allow_git_status(engine: &Engine, agent: &str) {
    engine
        .add_rule(ArgRule {
            id: Engine::new_rule_id(),
            server: agent.into(),
            tool: "Bash".into(),
            pointer: "/command".into(),
            pattern: RulePattern::Glob("git status*".into()),
            effect: RuleEffect::Allow,
        })
        .unwrap();
}

fn call(agent: &str, command: &str) -> Value {
    json!({
        "agent": agent, "agent_session": "s1", "tool": "Bash",
        "input": {"command": command}, "tool_use_id": "toolu_1", "wait_ms": 50,
    })
}

/// Claude Code's PreToolUse event as its HTTP hook posts it.
fn claude_event(command: &str) -> Value {
    json!({
        "session_id": "s1", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_2",
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_token_posts_its_own_calls_and_nothing_else() {
    let common::Waiting {
        host,
        item,
        token: main,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let addr = host.addr;
    let client = ApiClient::new(&format!("http://{addr}"), &main, _dir.path());
    allow_git_status(&host.engine, "claude-code");
    allow_git_status(&host.engine, "codex");
    let issued = client
        .call(&cmd::IssueAgentToken {
            agent: "claude-code".into(),
        })
        .await
        .unwrap();
    assert_ne!(issued.token, main);
    let agent = issued.token.as_str();

    // Its own calls, as itself: the plain route and its HTTP hook, answered in its words.
    let (status, answer) = send(
        addr,
        agent,
        Method::POST,
        "/v1/agent-calls",
        Some(call("claude-code", "git status")),
    )
    .await;
    assert_eq!(
        (status, &answer["verdict"]),
        (StatusCode::OK, &json!("allow")),
        "{answer}"
    );
    let (status, answer) = send(
        addr,
        agent,
        Method::POST,
        "/v1/agent-calls/hook/claude-code",
        Some(claude_event("git status --short")),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );

    // Nothing else: the inbox, a decision, settings, the table's commands, the events, and
    // another agent's calls.
    let refused: Vec<(Method, &str, Option<Value>)> = vec![
        (Method::GET, "/v1/inbox", None),
        (Method::GET, "/v1/events", None),
        (Method::GET, "/v1/audit", None),
        (Method::POST, "/v1/commands/inbox", Some(json!({}))),
        (
            Method::POST,
            "/v1/decisions",
            Some(json!({"approval_id": item.approval_id, "decision": {"kind": "approve"}})),
        ),
        (
            Method::POST,
            "/v1/commands/decide",
            Some(
                json!({"decisions": [{"approval_id": item.approval_id, "decision": {"kind": "approve"}}]}),
            ),
        ),
        (Method::PUT, "/v1/paused", Some(json!({"paused": true}))),
        (
            Method::POST,
            "/v1/commands/set_paused",
            Some(json!({"paused": true})),
        ),
        (
            Method::POST,
            "/v1/commands/issue_agent_token",
            Some(json!({"agent": "codex"})),
        ),
        (
            Method::POST,
            "/v1/agent-calls",
            Some(call("codex", "git status")),
        ),
        (
            Method::POST,
            "/v1/agent-calls/hook/codex",
            Some(claude_event("git status")),
        ),
    ];
    for (method, path, body) in refused {
        let (status, answer) = send(addr, agent, method.clone(), path, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {answer}");
        assert_eq!(answer["code"], "not_allowed", "{method} {path}: {answer}");
    }
    assert!(!host.engine.paused(), "an agent's token paused Airlock");
    let inbox = host.engine.inbox().unwrap();
    assert_eq!(inbox.len(), 1, "an agent's token decided an item");
    assert_eq!(inbox[0].approval_id, item.approval_id);

    // Revoked: refused as any wrong token, everywhere.
    assert!(
        client
            .call(&cmd::RevokeAgentToken {
                agent: "claude-code".into(),
            })
            .await
            .unwrap()
    );
    let (status, _) = send(
        addr,
        agent,
        Method::POST,
        "/v1/agent-calls",
        Some(call("claude-code", "git status")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = send(
        addr,
        agent,
        Method::POST,
        "/v1/agent-calls/hook/claude-code",
        Some(claude_event("git status")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The main token still reaches everything, any agent's calls included.
    let (status, inbox) = send(addr, &main, Method::GET, "/v1/inbox", None).await;
    assert_eq!(status, StatusCode::OK, "{inbox}");
    let (status, answer) = send(
        addr,
        &main,
        Method::POST,
        "/v1/agent-calls",
        Some(call("codex", "git status")),
    )
    .await;
    assert_eq!(
        (status, &answer["verdict"]),
        (StatusCode::OK, &json!("allow")),
        "{answer}"
    );
}

/// The HTTP hook route answers every event in Claude Code's words: a rule's denial with its
/// reason, and input it cannot read as a denial that says why (never an error the agent could
/// take for "no answer").
#[tokio::test(flavor = "multi_thread")]
async fn the_http_hook_answers_in_the_agents_own_words() {
    let common::Waiting {
        host,
        token: main,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    host.engine
        .add_rule(ArgRule {
            id: Engine::new_rule_id(),
            server: "claude-code".into(),
            tool: "Bash".into(),
            pointer: "/command".into(),
            pattern: RulePattern::Glob("rm *".into()),
            effect: RuleEffect::Deny,
        })
        .unwrap();
    let agent = host.engine.issue_agent_token("claude-code").unwrap();
    // It is served on the hooks' own port, which the engine gave out in the hook's URL.
    let hook_url = agent.hook_url.clone().unwrap();
    let port = host.engine.agent_hook_port().unwrap().unwrap();
    assert_eq!(
        hook_url,
        format!("http://127.0.0.1:{port}/v1/agent-calls/hook/claude-code")
    );
    let hooks: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let client = reqwest::Client::new();
    let denied: Value = client
        .post(format!("{hook_url}?timeout=30"))
        .bearer_auth(&agent.token)
        .json(&claude_event("rm -rf build"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let out = &denied["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{denied}");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("Airlock: "),
        "{denied}"
    );
    for (body, why) in [
        ("not json".to_string(), "not JSON"),
        (json!({"hook_event_name": "Stop"}).to_string(), "PreToolUse"),
        (
            json!({"hook_event_name": "PreToolUse", "session_id": "s"}).to_string(),
            "tool_name",
        ),
    ] {
        let response = client
            .post(format!("http://{hooks}/v1/agent-calls/hook/claude-code"))
            .bearer_auth(&agent.token)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{body}");
        let answer: Value = response.json().await.unwrap();
        let out = &answer["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny", "{body}: {answer}");
        assert!(
            out["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains(why),
            "{body}: {answer}"
        );
    }
    // An agent without a hook Airlock answers has no hook route.
    let (status, _) = send(
        hooks,
        &main,
        Method::POST,
        "/v1/agent-calls/hook/cline",
        Some(claude_event("ls")),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A deferred call is read and claimed by the agent that posted it only: another agent's own
/// token is refused both, the poster's own token (an app's is issued for its client name) and
/// the main token read it.
#[tokio::test(flavor = "multi_thread")]
async fn an_agents_token_reads_and_claims_only_its_own_calls() {
    let common::Waiting {
        host,
        token: main,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let addr = host.addr;
    let client = ApiClient::new(&format!("http://{addr}"), &main, _dir.path());
    let (status, posted) = send(
        addr,
        &main,
        Method::POST,
        "/v1/agent-calls",
        Some(json!({
            "agent": "app", "client": "ledger-app", "agent_session": "s1", "tool": "delete_file",
            "input": {"path": "books.db"}, "tool_use_id": "call_9", "defer": true,
        })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{posted}");
    let id = posted["approval_id"].as_str().unwrap().to_string();
    let token_of = |agent: &str| cmd::IssueAgentToken {
        agent: agent.into(),
    };
    let other = client.call(&token_of("claude-code")).await.unwrap().token;
    let own = client.call(&token_of("ledger-app")).await.unwrap().token;

    let read = format!("/v1/agent-calls/{id}");
    let claim = format!("/v1/agent-calls/{id}/claim");
    for (method, path) in [(Method::GET, &read), (Method::POST, &claim)] {
        let (status, body) = send(addr, &other, method, path, None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
    }
    for token in [&own, &main] {
        let (status, body) = send(addr, token, Method::GET, &read, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "pending", "{body}");
    }
}
