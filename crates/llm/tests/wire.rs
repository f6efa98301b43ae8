//! Wire-level behaviour against a raw HTTP/1.1 server written on the spot: every byte the
//! provider sees is chosen here, so quirks of real servers (nulls, split writes, cut bodies,
//! slow streams, missing ids) can be reproduced exactly.

// clippy.toml allows unwrap inside tests, but not in this file's helper functions.
#![allow(clippy::unwrap_used)]

use airlock_llm::{
    ChatMessage, ChatRequest, LlmError, ModelProvider, ModelToolCall, OpenAiChat, ProviderConfig,
    ToolSpec,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What one connection gets: byte pieces written in order with a pause before each but the
/// first, then the connection is closed (unless `hang` is set, when it stays open and silent).
#[derive(Clone)]
struct Canned {
    pieces: Vec<Vec<u8>>,
    pause: Duration,
    hang: bool,
}

impl Canned {
    fn whole(text: String) -> Self {
        Self {
            pieces: vec![text.into_bytes()],
            pause: Duration::ZERO,
            hang: false,
        }
    }
}

#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: String,
}

impl Seen {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

struct Server {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Connection n gets `script[n]`, or the last entry once the script is used up.
    async fn start(script: Vec<Canned>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1/", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while let Ok((socket, _)) = listener.accept().await {
                let canned = script[n.min(script.len() - 1)].clone();
                n += 1;
                tokio::spawn(serve(socket, canned, record.clone()));
            }
        });
        Server { base_url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(mut socket: TcpStream, canned: Canned, seen: Arc<Mutex<Vec<Seen>>>) {
    let _ = socket.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        })
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).to_string();
    seen.lock().unwrap().push(Seen { head, body });
    for (i, piece) in canned.pieces.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(canned.pause).await;
        }
        if socket.write_all(piece).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
    }
    if canned.hang {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let _ = socket.shutdown().await;
}

fn json_response(status: u16, extra_headers: &str, body: &str) -> Canned {
    Canned::whole(format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    ))
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

fn sse_text(events: &[Value], done: bool) -> String {
    let mut text = String::from(SSE_HEAD);
    for event in events {
        text.push_str(&format!("data: {event}\n\n"));
    }
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    text
}

fn sse(events: &[Value], done: bool) -> Canned {
    Canned::whole(sse_text(events, done))
}

fn content(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn call_delta(index: u32, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
    let mut function = json!({"arguments": args});
    if let Some(name) = name {
        function["name"] = json!(name);
    }
    let mut call = json!({"index": index, "function": function});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": null}]})
}

fn config(server: &Server, stream: bool) -> ProviderConfig {
    ProviderConfig {
        base_url: server.base_url.clone(),
        model: "test-model".into(),
        api_key_env: None,
        api_key: None,
        stream,
        max_retries: 2,
        request_timeout: Duration::from_secs(5),
        max_backoff: Duration::from_millis(10),
        initial_backoff: Duration::from_millis(1),
    }
}

fn hello() -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        tools: Vec::new(),
    }
}

type Deltas = Arc<Mutex<Vec<String>>>;

fn collector() -> (Deltas, impl Fn(&str) + Send + Sync + 'static) {
    let deltas: Deltas = Arc::new(Mutex::new(Vec::new()));
    let sink_deltas = deltas.clone();
    (deltas, move |t: &str| {
        sink_deltas.lock().unwrap().push(t.to_string())
    })
}

#[tokio::test]
async fn non_streaming_text() {
    let body = json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "hello", "tool_calls": null, "refusal": null},
        "finish_reason": "stop", "logprobs": null}], "usage": {"total_tokens": 3}});
    let server = Server::start(vec![json_response(200, "", &body.to_string())]).await;
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "hello");
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].head.starts_with("POST /v1/chat/completions "),
        "{}",
        seen[0].head
    );
    assert_eq!(seen[0].json()["stream"], false);
    assert_eq!(seen[0].header("authorization"), None);
}

#[tokio::test]
async fn non_streaming_tool_call_with_null_content() {
    let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "fs__read", "arguments": "{\"path\": \"a\"}"}},
        {"type": "function", "function": {"name": "fs__list", "arguments": null}}
    ]}, "finish_reason": "tool_calls"}]});
    let server = Server::start(vec![json_response(200, "", &body.to_string())]).await;
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "");
    assert_eq!(
        reply.tool_calls,
        vec![
            ModelToolCall {
                id: "call_1".into(),
                name: "fs__read".into(),
                arguments: r#"{"path": "a"}"#.into()
            },
            // No id and null arguments: left empty (the engine names such calls itself).
            ModelToolCall {
                id: String::new(),
                name: "fs__list".into(),
                arguments: String::new()
            },
        ]
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn streaming_text_deltas_reach_the_sink_even_when_split_across_writes() {
    let mut events =
        vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})];
    events.extend(["Hel", "lo, ", "wörld"].map(content));
    // Some servers send explicit nulls for absent fields.
    events.push(json!({"choices": [{"index": 0, "delta": {"content": "!", "tool_calls": null}, "finish_reason": null}]}));
    events.push(finish("stop"));
    events.push(json!({"choices": [], "usage": {"total_tokens": 7}}));
    let mut text = sse_text(&events, true).into_bytes();
    // An unknown event type and a comment line are ignored.
    let extra = b": keep-alive\n\nevent: ping\ndata: {}\n\n".to_vec();
    text.splice(SSE_HEAD.len()..SSE_HEAD.len(), extra);
    let pieces: Vec<Vec<u8>> = text.chunks(7).map(<[u8]>::to_vec).collect();
    let server = Server::start(vec![Canned {
        pieces,
        pause: Duration::from_millis(1),
        hang: false,
    }])
    .await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let (deltas, sink) = collector();
    let reply = provider.complete(&hello(), Some(&sink)).await.unwrap();
    assert_eq!(reply.text, "Hello, wörld!");
    assert_eq!(*deltas.lock().unwrap(), ["Hel", "lo, ", "wörld", "!"]);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    let seen = server.seen();
    assert_eq!(seen[0].json()["stream"], true);
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn streaming_tool_calls_join_fragments_by_index() {
    let events = vec![
        content("Let me look."),
        call_delta(0, Some("call_a"), Some("fs__read"), ""),
        call_delta(0, None, None, "{\"pa"),
        call_delta(1, Some("call_b"), Some("fs__list"), "{\"dir\""),
        call_delta(0, None, None, "th\": \"x"),
        call_delta(1, None, None, ": \"/\"}"),
        call_delta(0, None, None, ".txt\"}"),
        finish("tool_calls"),
    ];
    let server = Server::start(vec![sse(&events, true)]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let (deltas, sink) = collector();
    let reply = provider.complete(&hello(), Some(&sink)).await.unwrap();
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(*deltas.lock().unwrap(), ["Let me look."]);
    assert_eq!(
        reply.tool_calls,
        vec![
            ModelToolCall {
                id: "call_a".into(),
                name: "fs__read".into(),
                arguments: r#"{"path": "x.txt"}"#.into()
            },
            ModelToolCall {
                id: "call_b".into(),
                name: "fs__list".into(),
                arguments: r#"{"dir": "/"}"#.into()
            },
        ]
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn a_finish_reason_then_eof_without_done_is_complete() {
    let server = Server::start(vec![sse(&[content("ok"), finish("stop")], false)]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "ok");
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_stream_cut_mid_arguments_is_reported_and_not_retried() {
    let events = vec![
        content("Reading"),
        call_delta(0, Some("c"), Some("fs__write"), "{\"path\": \"a\", \"con"),
    ];
    let server = Server::start(vec![sse(&events, false), sse(&[content("never")], true)]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    match &error {
        LlmError::StreamCut {
            text_so_far,
            incomplete_tool_calls,
        } => {
            assert_eq!(text_so_far, "Reading");
            assert_eq!(incomplete_tool_calls, &["fs__write"]);
        }
        other => panic!("expected StreamCut, got {other:?}"),
    }
    assert!(error.to_string().contains("fs__write"), "{error}");
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_stream_broken_inside_a_chunked_body_is_cut() {
    let mut text = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    let event = format!("data: {}\n\n", content("partial"));
    text.push_str(&format!("{:x}\r\n{event}\r\n", event.len()));
    // Announce a chunk, then close the connection in the middle of it.
    text.push_str("40\r\ndata: {\"choi");
    let server = Server::start(vec![Canned::whole(text)]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::StreamCut { text_so_far, .. } if text_so_far == "partial"),
        "{error:?}"
    );
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_slow_stream_is_fine_while_it_keeps_talking() {
    // Each event comes well within the timeout, the whole stream takes longer than it.
    let mut pieces = vec![SSE_HEAD.as_bytes().to_vec()];
    for word in ["a", "b", "c", "d", "e", "f"] {
        pieces.push(format!("data: {}\n\n", content(word)).into_bytes());
    }
    pieces.push(format!("data: {}\n\ndata: [DONE]\n\n", finish("stop")).into_bytes());
    let server = Server::start(vec![Canned {
        pieces,
        pause: Duration::from_millis(120),
        hang: false,
    }])
    .await;
    let provider = OpenAiChat::new(ProviderConfig {
        request_timeout: Duration::from_millis(400),
        ..config(&server, true)
    })
    .unwrap();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "abcdef");
}

#[tokio::test]
async fn a_stalled_stream_is_cut_after_the_timeout() {
    let pieces = vec![format!("{SSE_HEAD}data: {}\n\n", content("thinking")).into_bytes()];
    let server = Server::start(vec![Canned {
        pieces,
        pause: Duration::ZERO,
        hang: true,
    }])
    .await;
    let provider = OpenAiChat::new(ProviderConfig {
        request_timeout: Duration::from_millis(300),
        ..config(&server, true)
    })
    .unwrap();
    let started = Instant::now();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&error, LlmError::StreamCut { text_so_far, .. } if text_so_far == "thinking"),
        "{error:?}"
    );
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn no_answer_at_all_is_a_timeout_and_retried() {
    let server = Server::start(vec![Canned {
        pieces: Vec::new(),
        pause: Duration::ZERO,
        hang: true,
    }])
    .await;
    for stream in [false, true] {
        let provider = OpenAiChat::new(ProviderConfig {
            request_timeout: Duration::from_millis(200),
            max_retries: 1,
            ..config(&server, stream)
        })
        .unwrap();
        let error = provider.complete(&hello(), None).await.unwrap_err();
        match error {
            LlmError::RetriesExhausted { attempts: 2, last } => {
                assert!(matches!(*last, LlmError::Timeout), "{last:?}")
            }
            other => panic!("expected a timeout twice, got {other:?}"),
        }
    }
    assert_eq!(server.seen().len(), 4);
}

#[tokio::test]
async fn retry_after_429_then_success() {
    let ok = json!({"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]});
    let server = Server::start(vec![
        json_response(
            429,
            "Retry-After: 0\r\n",
            r#"{"error": {"message": "slow down"}}"#,
        ),
        json_response(
            503,
            "Retry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n",
            "busy",
        ),
        json_response(200, "", &ok.to_string()),
    ])
    .await;
    // A long backoff cap: the waits must come from Retry-After (0 s and a date in the past).
    let provider = OpenAiChat::new(ProviderConfig {
        max_backoff: Duration::from_secs(30),
        initial_backoff: Duration::from_secs(10),
        ..config(&server, false)
    })
    .unwrap();
    let started = Instant::now();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "fine");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn server_errors_every_time_exhaust_the_retries() {
    let server = Server::start(vec![json_response(500, "", r#"{"error": "boom"}"#)]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts: 3, last } => {
            assert!(
                matches!(&**last, LlmError::Status { status: 500, body } if body.contains("boom")),
                "{last:?}"
            )
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_bad_request_is_not_retried_and_its_body_is_kept_short() {
    let long = format!(
        r#"{{"error": {{"message": "bad tools: {}"}}}}"#,
        "é".repeat(3000)
    );
    let server = Server::start(vec![json_response(400, "", &long)]).await;
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    match &error {
        LlmError::Status { status: 400, body } => {
            assert!(
                body.starts_with(r#"{"error": {"message": "bad tools: "#),
                "{body}"
            );
            assert!(body.len() <= 2100, "{}", body.len());
        }
        other => panic!("expected Status, got {other:?}"),
    }
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn connection_refused_is_retried_and_explained() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = OpenAiChat::new(ProviderConfig {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "m".into(),
        api_key_env: None,
        api_key: None,
        stream: false,
        max_retries: 1,
        max_backoff: Duration::from_millis(5),
        initial_backoff: Duration::from_millis(1),
        ..ProviderConfig::default()
    })
    .unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts: 2, last } => {
            assert!(matches!(**last, LlmError::Transport(_)), "{last:?}")
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert!(
        error.to_string().to_lowercase().contains("refused"),
        "{error}"
    );
}

#[tokio::test]
async fn a_json_body_cut_short_is_retried() {
    let ok = json!({"choices": [{"message": {"content": "second time"}, "finish_reason": "stop"}]});
    let cut = Canned::whole(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"choices\": [".to_string(),
    );
    let server = Server::start(vec![cut, json_response(200, "", &ok.to_string())]).await;
    let provider = OpenAiChat::new(config(&server, false)).unwrap();
    let reply = provider.complete(&hello(), None).await.unwrap();
    assert_eq!(reply.text, "second time");
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_accepted() {
    let body =
        json!({"choices": [{"message": {"content": "not streamed"}, "finish_reason": "stop"}]});
    let server = Server::start(vec![json_response(200, "", &body.to_string())]).await;
    let provider = OpenAiChat::new(config(&server, true)).unwrap();
    let (deltas, sink) = collector();
    let reply = provider.complete(&hello(), Some(&sink)).await.unwrap();
    assert_eq!(reply.text, "not streamed");
    assert_eq!(*deltas.lock().unwrap(), ["not streamed"]);
}

#[tokio::test]
async fn the_request_body_is_in_openai_wire_format() {
    let body = json!({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]});
    let server = Server::start(vec![json_response(200, "", &body.to_string())]).await;
    // Any variable that is set will do as the key; the test cannot set one (no unsafe code).
    let (var, key) = std::env::vars()
        .find(|(k, v)| {
            k.starts_with("CARGO") && !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic())
        })
        .or_else(|| {
            std::env::vars().find(|(_, v)| !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic()))
        })
        .unwrap();
    let provider = OpenAiChat::new(ProviderConfig {
        api_key_env: Some(var),
        api_key: None,
        ..config(&server, false)
    })
    .unwrap();
    let call = ModelToolCall {
        id: "call_9".into(),
        name: "fs__read".into(),
        arguments: r#"{"path":"a"}"#.into(),
    };
    let request = ChatRequest {
        messages: vec![
            ChatMessage::system("be brief"),
            ChatMessage::user("read a"),
            ChatMessage::assistant(None, vec![call]),
            ChatMessage::tool_result("call_9", "contents"),
            ChatMessage::assistant(Some("done".into()), Vec::new()),
        ],
        tools: vec![ToolSpec {
            name: "fs__read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    };
    provider.complete(&request, None).await.unwrap();
    let seen = &server.seen()[0];
    assert_eq!(seen.header("authorization"), Some(format!("Bearer {key}")));
    assert_eq!(
        seen.header("content-type").as_deref(),
        Some("application/json")
    );
    let sent = seen.json();
    assert_eq!(sent["model"], "test-model");
    assert_eq!(sent["stream"], false);
    assert_eq!(
        sent["tools"],
        json!([{"type": "function", "function": {"name": "fs__read", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
    );
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "fs__read", "arguments": "{\"path\":\"a\"}"}}
            ]},
            {"role": "tool", "content": "contents", "tool_call_id": "call_9"},
            {"role": "assistant", "content": "done"},
        ])
    );

    // Without tools the field is left out.
    provider.complete(&hello(), None).await.unwrap();
    assert!(server.seen()[1].json().get("tools").is_none());
}

#[tokio::test]
async fn a_missing_key_sends_nothing() {
    let server = Server::start(vec![json_response(200, "", "{}")]).await;
    let provider = OpenAiChat::new(ProviderConfig {
        api_key_env: Some("AIRLOCK_LLM_WIRE_TEST_UNSET_KEY".into()),
        api_key: None,
        ..config(&server, true)
    })
    .unwrap();
    let error = provider.complete(&hello(), None).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::MissingApiKey { var } if var == "AIRLOCK_LLM_WIRE_TEST_UNSET_KEY"),
        "{error:?}"
    );
    // No wait needed: the server records a request before it answers, and `complete` has
    // returned, so any request it made was recorded by now.
    assert!(server.seen().is_empty());
}
