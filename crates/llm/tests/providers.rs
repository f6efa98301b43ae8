//! The OpenAI Responses and Anthropic Messages providers against the project's scripted server
//! (real HTTP on loopback, JSON and SSE). The wire formats the server follows are written down in
//! `crates/testkit/src/responses.rs` and `crates/testkit/src/anthropic.rs`, each with the public
//! document it follows; the streamed answers include events the providers do not use
//! (`response.in_progress`, `response.content_part.*`, `response.mcp_call.completed`, `ping`),
//! which must be skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_llm::{
    Anthropic, ChatMessage, ChatRequest, HostedMcpTool, LlmError, ModelProvider, ModelReply,
    ModelToolCall, OpenAiResponses, ProviderApprovalRequest, ProviderConfig, ToolSpec,
};
use airlock_testkit::{Reply, ScriptedApproval, ScriptedCall, ScriptedMcpCall, ScriptedModel};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn config(server: &ScriptedModel, stream: bool) -> ProviderConfig {
    ProviderConfig {
        base_url: server.base_url(),
        model: "m".into(),
        api_key_env: None,
        api_key: None,
        stream,
        max_retries: 2,
        request_timeout: Duration::from_secs(5),
        max_backoff: Duration::from_secs(5),
        initial_backoff: Duration::from_millis(1),
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "s__t".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
    }]
}

fn hello() -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::system("be brief"), ChatMessage::user("hi")],
        tools: tools(),
    }
}

fn two_calls() -> Vec<ScriptedCall> {
    vec![
        ScriptedCall::new(
            "a",
            "x__one",
            json!({"path": "some/long/path.txt", "content": "hello there"}),
        ),
        ScriptedCall::new("b", "x__two", json!({"n": 2})),
    ]
}

fn approval() -> ScriptedApproval {
    ScriptedApproval {
        id: "mcpr_1".into(),
        server_label: "deepwiki".into(),
        name: "ask_question".into(),
        arguments: r#"{"question":"why?"}"#.into(),
    }
}

fn hosted() -> Vec<HostedMcpTool> {
    vec![HostedMcpTool {
        server_label: "deepwiki".into(),
        server_url: "https://mcp.deepwiki.com/mcp".into(),
        require_approval: json!("always"),
        allowed_tools: None,
    }]
}

/// Completes `hello()` with a text sink: the text arrives whole, and through the sink when streamed.
async fn complete_hello_text(provider: &impl ModelProvider, stream: bool) -> ModelReply {
    let seen = Arc::new(Mutex::new(String::new()));
    let sink_seen = seen.clone();
    let sink = move |t: &str| sink_seen.lock().unwrap().push_str(t);
    let reply = provider.complete(&hello(), Some(&sink)).await.unwrap();
    assert_eq!(reply.text, "hello world");
    if stream {
        assert_eq!(*seen.lock().unwrap(), "hello world");
    }
    reply
}

#[tokio::test]
async fn responses_text_function_calls_and_mcp_approvals_in_json_and_sse() {
    for stream in [false, true] {
        let server = ScriptedModel::start(vec![
            Reply::Text("hello world".into()),
            Reply::ToolCalls(two_calls()),
            Reply::McpApprovalRequests(vec![approval()]),
            Reply::McpCall {
                call: ScriptedMcpCall {
                    approval_request_id: Some("mcpr_1".into()),
                    server_label: "deepwiki".into(),
                    name: "ask_question".into(),
                    arguments: r#"{"question":"why?"}"#.into(),
                    output: Some("because".into()),
                    error: None,
                },
                text: "it is because".into(),
            },
        ])
        .await
        .unwrap();
        let provider = OpenAiResponses::new(config(&server, stream), hosted()).unwrap();
        let reply = complete_hello_text(&provider, stream).await;
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));

        let reply = provider.complete(&hello(), None).await.unwrap();
        assert_eq!(reply.tool_calls.len(), 2, "stream={stream}");
        assert_eq!(
            (
                reply.tool_calls[0].id.as_str(),
                reply.tool_calls[0].name.as_str()
            ),
            ("a", "x__one")
        );
        let args: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(args["content"], "hello there");
        assert_eq!(reply.tool_calls[1].arguments, r#"{"n":2}"#);

        let reply = provider.complete(&hello(), None).await.unwrap();
        assert!(reply.tool_calls.is_empty());
        assert_eq!(
            reply.approval_requests,
            vec![ProviderApprovalRequest {
                id: "mcpr_1".into(),
                server_label: "deepwiki".into(),
                name: "ask_question".into(),
                arguments: r#"{"question":"why?"}"#.into(),
            }]
        );

        // The answer goes back as an `mcp_approval_response` after the replayed request.
        let mut answered = hello();
        let mut assistant = ChatMessage::assistant(None, vec![]);
        assistant.approval_requests = reply.approval_requests.clone();
        answered.messages.push(assistant);
        answered.messages.push(ChatMessage::approval_answer(
            "mcpr_1",
            false,
            Some("not today".into()),
        ));
        let reply = provider.complete(&answered, None).await.unwrap();
        assert_eq!(reply.text, "it is because");
        assert_eq!(reply.provider_outcomes.len(), 1);
        assert_eq!(
            reply.provider_outcomes[0].output.as_deref(),
            Some("because")
        );
        assert_eq!(
            reply.provider_outcomes[0].approval_request_id.as_deref(),
            Some("mcpr_1")
        );

        let sent = server.requests();
        assert_eq!(sent[0]["model"], "m");
        assert_eq!(sent[0]["stream"], json!(stream));
        assert_eq!(sent[0]["instructions"], "be brief");
        assert_eq!(
            sent[0]["input"],
            json!([{"type": "message", "role": "user", "content": "hi"}])
        );
        assert_eq!(sent[0]["tools"][0]["type"], "function");
        assert_eq!(sent[0]["tools"][0]["name"], "s__t");
        assert_eq!(
            sent[0]["tools"][1],
            json!({"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "always"})
        );
        let input = sent[3]["input"].as_array().unwrap();
        assert_eq!(input[1]["type"], "mcp_approval_request");
        assert_eq!(input[1]["id"], "mcpr_1");
        assert_eq!(
            input[2],
            json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": false, "reason": "not today"})
        );
    }
}

#[tokio::test]
async fn responses_history_carries_function_calls_and_outputs() {
    let server = ScriptedModel::start(vec![Reply::Text("ok".into())])
        .await
        .unwrap();
    let provider = OpenAiResponses::new(config(&server, false), vec![]).unwrap();
    let request = ChatRequest {
        messages: vec![
            ChatMessage::user("hi"),
            ChatMessage::assistant(
                Some("let me look".into()),
                vec![ModelToolCall {
                    id: "c0".into(),
                    name: "s__t".into(),
                    arguments: "{}".into(),
                }],
            ),
            ChatMessage::tool_result("c0", "result"),
        ],
        tools: vec![],
    };
    provider.complete(&request, None).await.unwrap();
    let input = server.requests()[0]["input"].clone();
    assert_eq!(
        input,
        json!([
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": "let me look"},
            {"type": "function_call", "call_id": "c0", "name": "s__t", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c0", "output": "result"},
        ])
    );
    assert!(server.requests()[0].get("tools").is_none());
}

#[tokio::test]
async fn anthropic_text_and_two_tool_uses_in_json_and_sse() {
    // Any variable that is set will do as the key; the test cannot set one (no unsafe code).
    let (var, key) = std::env::vars()
        .find(|(k, v)| {
            k.starts_with("CARGO") && !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic())
        })
        .unwrap();
    for stream in [false, true] {
        let server = ScriptedModel::start(vec![
            Reply::Text("hello world".into()),
            Reply::ToolCalls(two_calls()),
        ])
        .await
        .unwrap();
        let provider = Anthropic::new(
            ProviderConfig {
                api_key_env: Some(var.clone()),
                api_key: None,
                ..config(&server, stream)
            },
            Some(1000),
        )
        .unwrap();
        let reply = complete_hello_text(&provider, stream).await;
        assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));

        let reply = provider.complete(&hello(), None).await.unwrap();
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(
            (
                reply.tool_calls[1].id.as_str(),
                reply.tool_calls[1].name.as_str()
            ),
            ("b", "x__two")
        );
        let args: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(
            args,
            json!({"path": "some/long/path.txt", "content": "hello there"})
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));

        let sent = &server.requests()[0];
        assert_eq!(sent["model"], "m");
        assert_eq!(sent["max_tokens"], 1000);
        assert_eq!(sent["system"], "be brief");
        assert_eq!(
            sent["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
        );
        assert_eq!(
            sent["tools"],
            json!([{"name": "s__t", "description": "d", "input_schema": {"type": "object"}}])
        );
        let headers = &server.request_headers()[0];
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header("x-api-key").as_deref(), Some(key.as_str()));
        assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
        assert_eq!(header("authorization"), None);
    }
}

#[tokio::test]
async fn anthropic_tool_results_merge_into_one_user_message_with_is_error_for_denials() {
    let server = ScriptedModel::start(vec![Reply::Text("ok".into())])
        .await
        .unwrap();
    let provider = Anthropic::new(config(&server, true), None).unwrap();
    let call = |id: &str| ModelToolCall {
        id: id.into(),
        name: "s__t".into(),
        arguments: r#"{"a":1}"#.into(),
    };
    let denied = json!({"type": "execution-denied", "reason": "not that one"}).to_string();
    let request = ChatRequest {
        messages: vec![
            ChatMessage::user("hi"),
            ChatMessage::assistant(Some("two things".into()), vec![call("t1"), call("t2")]),
            ChatMessage::tool_result("t1", "done"),
            ChatMessage::tool_error("t2", denied.clone()),
        ],
        tools: vec![],
    };
    provider.complete(&request, None).await.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent["max_tokens"], 4096);
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "two things"},
                {"type": "tool_use", "id": "t1", "name": "s__t", "input": {"a": 1}},
                {"type": "tool_use", "id": "t2", "name": "s__t", "input": {"a": 1}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
                {"type": "tool_result", "tool_use_id": "t2", "content": denied, "is_error": true},
            ]},
        ])
    );
}

#[tokio::test]
async fn a_stream_cut_mid_arguments_is_incomplete_and_not_retried_in_every_format() {
    let call = ScriptedCall::new(
        "c1",
        "builtin__write_file",
        json!({"path": "a.txt", "content": "a long enough content"}),
    );
    for format in ["responses", "anthropic"] {
        let server = ScriptedModel::start(vec![
            Reply::CutStream(call.clone()),
            Reply::Text("never asked".into()),
        ])
        .await
        .unwrap();
        let provider: Box<dyn ModelProvider> = match format {
            "responses" => Box::new(OpenAiResponses::new(config(&server, true), vec![]).unwrap()),
            _ => Box::new(Anthropic::new(config(&server, true), None).unwrap()),
        };
        let error = provider.complete(&hello(), None).await.unwrap_err();
        match &error {
            LlmError::StreamCut {
                incomplete_tool_calls,
                ..
            } => {
                assert_eq!(
                    incomplete_tool_calls,
                    &vec!["builtin__write_file".to_string()],
                    "{format}"
                )
            }
            other => panic!("{format}: expected a cut stream, got {other:?}"),
        }
        assert!(
            error
                .to_string()
                .contains("incomplete tool calls, not run: builtin__write_file"),
            "{error}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{format}: a cut stream is not retried"
        );
    }
}

#[tokio::test]
async fn retry_after_then_success_and_server_errors_exhaust_in_every_format() {
    for format in ["responses", "anthropic"] {
        let server = ScriptedModel::start(vec![
            Reply::Error {
                status: 429,
                retry_after: Some(1),
            },
            Reply::Text("after the wait".into()),
            Reply::Error {
                status: 500,
                retry_after: None,
            },
            Reply::Error {
                status: 502,
                retry_after: None,
            },
            Reply::Error {
                status: 503,
                retry_after: None,
            },
        ])
        .await
        .unwrap();
        let provider: Box<dyn ModelProvider> = match format {
            "responses" => Box::new(OpenAiResponses::new(config(&server, true), vec![]).unwrap()),
            _ => Box::new(Anthropic::new(config(&server, true), None).unwrap()),
        };
        let started = Instant::now();
        let reply = provider.complete(&hello(), None).await.unwrap();
        assert_eq!(reply.text, "after the wait");
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{format}: Retry-After: 1 was honoured"
        );
        let error = provider.complete(&hello(), None).await.unwrap_err();
        assert!(
            matches!(error, LlmError::RetriesExhausted { attempts: 3, .. }),
            "{format}: {error:?}"
        );
        assert!(error.to_string().contains("HTTP 503"), "{error}");
        assert_eq!(server.requests().len(), 5);
    }
}
