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
/// token, and another app's, are refused reading it, claiming it and its event stream; the
/// poster's own token (an app's is issued for its client name) and the main token read it. The
/// app's own token posts its calls and nothing else: not as another app, not the inbox, not a
/// decision.
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
    let other_app = client.call(&token_of("other-app")).await.unwrap().token;
    let own = client.call(&token_of("ledger-app")).await.unwrap().token;

    let read = format!("/v1/agent-calls/{id}");
    let claim = format!("/v1/agent-calls/{id}/claim");
    let events = format!("/v1/agent-calls/{id}/events?wait_ms=0");
    for token in [&other, &other_app] {
        for (method, path) in [
            (Method::GET, &read),
            (Method::POST, &claim),
            (Method::GET, &events),
        ] {
            let (status, body) = send(addr, token, method, path, None).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
            assert_eq!(body["code"], "not_allowed", "{path}: {body}");
        }
    }
    for token in [&own, &main] {
        let (status, body) = send(addr, token, Method::GET, &read, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "pending", "{body}");
    }

    // The app's own token: its own calls, as itself; nothing else.
    let app_call = |client: &str, tool_use_id: &str| {
        json!({
            "agent": "app", "client": client, "agent_session": "s1", "tool": "delete_file",
            "input": {"path": "books.db"}, "tool_use_id": tool_use_id, "defer": true,
        })
    };
    let (status, body) = send(
        addr,
        &own,
        Method::POST,
        "/v1/agent-calls",
        Some(app_call("ledger-app", "call_10")),
    )
    .await;
    assert_eq!(
        (status, &body["status"]),
        (StatusCode::OK, &json!("pending")),
        "{body}"
    );
    let refused: Vec<(Method, &str, Option<Value>)> = vec![
        (
            Method::POST,
            "/v1/agent-calls",
            Some(app_call("other-app", "call_11")),
        ),
        (Method::GET, "/v1/inbox", None),
        (Method::POST, "/v1/commands/inbox", Some(json!({}))),
        (Method::GET, "/v1/agents", None),
        (
            Method::POST,
            "/v1/decisions",
            Some(json!({"approval_id": id, "decision": {"kind": "approve"}})),
        ),
        (
            Method::POST,
            "/v1/commands/decide",
            Some(json!({"decisions": [{"approval_id": id, "decision": {"kind": "approve"}}]})),
        ),
        (
            Method::POST,
            "/v1/commands/revoke_agent_token",
            Some(json!({"agent": "other-app"})),
        ),
    ];
    for (method, path, body) in refused {
        let (status, answer) = send(addr, &own, method.clone(), path, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {answer}");
        assert_eq!(answer["code"], "not_allowed", "{method} {path}: {answer}");
    }
    let (_, body) = send(addr, &main, Method::GET, &read, None).await;
    assert_eq!(
        body["status"], "pending",
        "the app's own token decided its call: {body}"
    );
    assert!(
        host.engine
            .agent_for_token(&other_app)
            .unwrap()
            .is_some_and(|agent| agent == "other-app"),
        "the app's own token revoked another's"
    );
}

/// The event stream of a call (`GET /v1/agent-calls/{id}/events`): its state at once, pending;
/// then, without asking again, the decision when a person makes it, and the stream ends. With
/// `wait_ms`, a pending state at the deadline ends it.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_waits_for_its_decision_on_the_event_stream() {
    let common::Waiting {
        host,
        token: main,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let addr = host.addr;
    let client = ApiClient::new(&format!("http://{addr}"), &main, _dir.path());
    let own = client
        .call(&cmd::IssueAgentToken {
            agent: "ledger-app".into(),
        })
        .await
        .unwrap()
        .token;
    let (status, posted) = send(
        addr,
        &own,
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
    let stream = |query: &str| {
        reqwest::Client::new()
            .get(format!("http://{addr}/v1/agent-calls/{id}/events{query}"))
            .bearer_auth(&own)
            .send()
    };
    let states = |text: &str| -> Vec<Value> {
        text.split("\n\n")
            .filter(|event| event.lines().any(|line| line == "event: state"))
            .filter_map(|event| {
                let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
                serde_json::from_str(data).ok()
            })
            .collect()
    };
    let deadline = std::time::Duration::from_secs(30);

    // With a deadline and nobody deciding: pending at once, pending at the deadline, the end.
    let response = stream("?wait_ms=100").await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = tokio::time::timeout(deadline, response.text())
        .await
        .unwrap()
        .unwrap();
    let seen = states(&text);
    assert_eq!(seen.len(), 2, "{text}");
    assert!(seen.iter().all(|s| s["status"] == "pending"), "{text}");

    // Without one: pending at once; the denial the moment it is made; the end.
    let mut response = stream("").await.unwrap();
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(deadline, response.chunk())
            .await
            .unwrap()
            .unwrap()
            .expect("the first state before the stream ends");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert_eq!(states(&text)[0]["status"], "pending", "{text}");
    let (status, body) = send(
        addr,
        &main,
        Method::POST,
        "/v1/decisions",
        Some(json!({"approval_id": id, "decision": {"kind": "deny", "reason": "keep the books"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rest = tokio::time::timeout(deadline, response.text())
        .await
        .unwrap()
        .unwrap();
    text.push_str(&rest);
    let seen = states(&text);
    assert_eq!(seen.len(), 2, "{text}");
    assert_eq!(seen[1]["status"], "denied", "{text}");
    assert_eq!(seen[1]["verdict"], "deny", "{text}");
    assert_eq!(seen[1]["reason"], "keep the books", "{text}");

    // Decided already: one state, the end; an unknown call is refused as JSON, not a stream.
    let text = stream("").await.unwrap().text().await.unwrap();
    assert_eq!(states(&text).len(), 1, "{text}");
    let (status, body) = send(addr, &own, Method::GET, "/v1/agent-calls/nope/events", None).await;
    assert!(status.is_client_error(), "{status}: {body}");
}
