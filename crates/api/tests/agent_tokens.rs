//! An agent's own token on the local API: it posts that agent's calls (`/v1/agent-calls`, its
//! HTTP hook route) and nothing else — not the inbox, not a decision, not a setting, not another
//! agent's call; revoked, it is refused; the main token keeps reaching everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_api::ApiClient;
use airlock_core::{ArgRule, RuleEffect, RulePattern};
use airlock_engine::Engine;
use airlock_protocol::commands as cmd;
use common::{all_not_allowed, send};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

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

/// A new token of `agent`'s own, issued through the main token's `client`.
async fn issue_token(client: &ApiClient, agent: &str) -> String {
    client
        .call(&cmd::IssueAgentToken {
            agent: agent.into(),
        })
        .await
        .unwrap()
        .token
}

/// POSTs `body` to `path` with `token`: the status and the answer.
async fn post(
    addr: std::net::SocketAddr,
    token: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    send(addr, token, Method::POST, path, Some(body)).await
}

/// The answer came with 200, its `field` saying `expected`.
fn assert_ok(status: StatusCode, answer: &Value, field: &str, expected: &str) {
    assert_eq!(
        (status, &answer[field]),
        (StatusCode::OK, &json!(expected)),
        "{answer}"
    );
}

/// An app's deferred call (`delete_file` of books.db) as its client `client` posts it.
fn app_call(client: &str, tool_use_id: &str) -> Value {
    json!({
        "agent": "app", "client": client, "agent_session": "s1", "tool": "delete_file",
        "input": {"path": "books.db"}, "tool_use_id": tool_use_id, "defer": true,
    })
}

/// Posts `app_call(client, "call_9")` with `token`: the new approval's id.
async fn post_app_call(addr: std::net::SocketAddr, token: &str, client: &str) -> String {
    let (status, posted) = post(addr, token, "/v1/agent-calls", app_call(client, "call_9")).await;
    assert_eq!(status, StatusCode::OK, "{posted}");
    posted["approval_id"].as_str().unwrap().to_string()
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
    let waiting = common::one_waiting_write().await;
    let (host, item, main, client) = (
        &waiting.host,
        &waiting.item,
        &waiting.token,
        &waiting.client,
    );
    let addr = host.addr;
    allow_git_status(&host.engine, "claude-code");
    allow_git_status(&host.engine, "codex");
    let issued = issue_token(client, "claude-code").await;
    assert_ne!(&issued, main);
    let agent = issued.as_str();

    // Its own calls, as itself: the plain route and its HTTP hook, answered in its words.
    let (status, answer) = post(
        addr,
        agent,
        "/v1/agent-calls",
        call("claude-code", "git status"),
    )
    .await;
    assert_ok(status, &answer, "verdict", "allow");
    let (status, answer) = post(
        addr,
        agent,
        "/v1/agent-calls/hook/claude-code",
        claude_event("git status --short"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );

    // Nothing else: the inbox, a decision, settings, the table's commands, the events, and
    // another agent's calls.
    let refused = vec![
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
    all_not_allowed(addr, agent, refused).await;
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
    let (status, _) = post(
        addr,
        agent,
        "/v1/agent-calls",
        call("claude-code", "git status"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = post(
        addr,
        agent,
        "/v1/agent-calls/hook/claude-code",
        claude_event("git status"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The main token still reaches everything, any agent's calls included.
    let (status, inbox) = send(addr, main, Method::GET, "/v1/inbox", None).await;
    assert_eq!(status, StatusCode::OK, "{inbox}");
    let (status, answer) = post(addr, main, "/v1/agent-calls", call("codex", "git status")).await;
    assert_ok(status, &answer, "verdict", "allow");
}

/// The HTTP hook route answers every event in Claude Code's words: a rule's denial with its
/// reason, and input it cannot read as a denial that says why (never an error the agent could
/// take for "no answer").
#[tokio::test(flavor = "multi_thread")]
async fn the_http_hook_answers_in_the_agents_own_words() {
    let waiting = common::one_waiting_write().await;
    let (host, main) = (&waiting.host, &waiting.token);
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
    let (status, _) = post(
        hooks,
        main,
        "/v1/agent-calls/hook/cline",
        claude_event("ls"),
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
    let waiting = common::one_waiting_write().await;
    let (host, main, client) = (&waiting.host, &waiting.token, &waiting.client);
    let addr = host.addr;
    let id = post_app_call(addr, main, "ledger-app").await;
    let other = issue_token(client, "claude-code").await;
    let other_app = issue_token(client, "other-app").await;
    let own = issue_token(client, "ledger-app").await;

    let read = format!("/v1/agent-calls/{id}");
    let claim = format!("/v1/agent-calls/{id}/claim");
    let events = format!("/v1/agent-calls/{id}/events?wait_ms=0");
    for token in [&other, &other_app] {
        let requests = vec![
            (Method::GET, read.as_str(), None),
            (Method::POST, claim.as_str(), None),
            (Method::GET, events.as_str(), None),
        ];
        all_not_allowed(addr, token, requests).await;
    }
    for token in [&own, main] {
        let (status, body) = send(addr, token, Method::GET, &read, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "pending", "{body}");
    }

    // The app's own token: its own calls, as itself; nothing else.
    let (status, body) = post(
        addr,
        &own,
        "/v1/agent-calls",
        app_call("ledger-app", "call_10"),
    )
    .await;
    assert_ok(status, &body, "status", "pending");
    let refused = vec![
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
    all_not_allowed(addr, &own, refused).await;
    let (_, body) = send(addr, main, Method::GET, &read, None).await;
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
    let waiting = common::one_waiting_write().await;
    let (host, main, client) = (&waiting.host, &waiting.token, &waiting.client);
    let addr = host.addr;
    let own = issue_token(client, "ledger-app").await;
    let id = post_app_call(addr, &own, "ledger-app").await;
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
    let (status, body) = post(
        addr,
        main,
        "/v1/decisions",
        json!({"approval_id": id, "decision": {"kind": "deny", "reason": "keep the books"}}),
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
