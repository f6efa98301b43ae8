//! The provider against the project's scripted server (real HTTP, JSON and SSE).

use super::*;
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn config(server: &ScriptedModel, stream: bool) -> ProviderConfig {
    ProviderConfig {
        base_url: server.base_url(),
        model: "m".into(),
        api_key_env: None,
        api_key: None,
        stream,
        max_retries: 2,
        request_timeout: Duration::from_secs(5),
        max_backoff: Duration::from_millis(20),
        initial_backoff: Duration::from_millis(1),
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::user("hi"),
            ChatMessage::assistant(
                None,
                vec![ModelToolCall {
                    id: "c0".into(),
                    name: "s__t".into(),
                    arguments: "{}".into(),
                }],
            ),
            ChatMessage::tool_result("c0", "result"),
        ],
        tools: vec![ToolSpec {
            name: "s__t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }],
    }
}

#[tokio::test]
async fn text_and_tool_calls_in_json_and_sse() {
    for stream in [false, true] {
        let calls = vec![
            ScriptedCall::new(
                "a",
                "x__one",
                json!({"path": "some/long/path.txt", "content": "hello there"}),
            ),
            ScriptedCall::new("b", "x__two", json!({"n": 2})),
        ];
        let server = ScriptedModel::start(vec![
            Reply::Text("hello world".into()),
            Reply::ToolCalls(calls),
        ])
        .await
        .unwrap();
        let provider = OpenAiChat::new(config(&server, stream)).unwrap();
        let seen = Arc::new(Mutex::new(String::new()));
        let sink_seen = seen.clone();
        let sink = move |t: &str| sink_seen.lock().unwrap().push_str(t);
        let reply = provider.complete(&request(), Some(&sink)).await.unwrap();
        assert_eq!(reply.text, "hello world");
        if stream {
            assert_eq!(*seen.lock().unwrap(), "hello world");
        }
        let reply = provider.complete(&request(), None).await.unwrap();
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[0].id, "a");
        assert_eq!(reply.tool_calls[0].name, "x__one");
        let args: serde_json::Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(args["content"], "hello there");
        assert_eq!(reply.tool_calls[1].arguments, r#"{"n":2}"#);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));

        let sent = &server.requests()[0];
        assert_eq!(sent["model"], "m");
        assert_eq!(sent["stream"], stream);
        assert_eq!(sent["tools"][0]["type"], "function");
        assert_eq!(sent["tools"][0]["function"]["name"], "s__t");
        assert_eq!(
            sent["messages"][1]["tool_calls"][0]["function"]["name"],
            "s__t"
        );
        assert_eq!(sent["messages"][1]["tool_calls"][0]["type"], "function");
        assert_eq!(sent["messages"][2]["role"], "tool");
        assert_eq!(sent["messages"][2]["tool_call_id"], "c0");
    }
}

#[tokio::test]
async fn a_cut_stream_is_an_error_not_a_call() {
    let call = ScriptedCall::new("a", "x__one", json!({"path": "abcdefghijkl"}));
    let server = ScriptedModel::start(vec![Reply::CutStream(call), Reply::Text("never".into())])
        .await
        .unwrap();
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let error = provider.complete(&request(), None).await.unwrap_err();
    match &error {
        LlmError::StreamCut {
            incomplete_tool_calls,
            ..
        } => assert_eq!(incomplete_tool_calls, &["x__one"]),
        other => panic!("expected a cut stream, got {other:?}"),
    }
    assert!(error.to_string().contains("not run"));
    assert_eq!(server.requests().len(), 1, "a cut stream is not retried");
}

#[tokio::test]
async fn retries_429_then_succeeds() {
    let server = ScriptedModel::start(vec![
        Reply::Error {
            status: 429,
            retry_after: Some(0),
        },
        Reply::Text("ok".into()),
    ])
    .await
    .unwrap();
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    assert_eq!(
        provider.complete(&request(), None).await.unwrap().text,
        "ok"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn gives_up_after_the_retries() {
    let server = ScriptedModel::start(vec![
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
        Reply::Text("too late".into()),
    ])
    .await
    .unwrap();
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let error = provider.complete(&request(), None).await.unwrap_err();
    assert!(
        matches!(error, LlmError::RetriesExhausted { attempts: 3, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("503"), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = ScriptedModel::start(vec![Reply::Error {
        status: 400,
        retry_after: None,
    }])
    .await
    .unwrap();
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let error = provider.complete(&request(), None).await.unwrap_err();
    assert!(
        matches!(error, LlmError::Status { status: 400, .. }),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_missing_api_key_sends_nothing() {
    let server = ScriptedModel::start(vec![Reply::Text("x".into())])
        .await
        .unwrap();
    let provider = OpenAiChat::new(ProviderConfig {
        api_key_env: Some("AIRLOCK_TEST_SURELY_UNSET_KEY".into()),
        api_key: None,
        ..config(&server, false)
    })
    .unwrap();
    let error = provider.complete(&request(), None).await.unwrap_err();
    assert!(error.to_string().contains("AIRLOCK_TEST_SURELY_UNSET_KEY"));
    assert!(server.requests().is_empty());
}
