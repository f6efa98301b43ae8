use super::*;

async fn post(server: &ScriptedModel, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn data_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn json_text_and_tool_calls() {
    let server = ScriptedModel::start(vec![
        Reply::Text("hello".into()),
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__read_file",
            json!({"path": "a"}),
        )]),
    ])
    .await
    .unwrap();
    let body: Value = post(
        &server,
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "hello");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let body: Value = post(&server, json!({"model": "m", "messages": []}))
        .await
        .json()
        .await
        .unwrap();
    let call = &body["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "builtin__read_file");
    assert_eq!(call["function"]["arguments"], r#"{"path":"a"}"#);
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0]["messages"][0]["content"], "hi");
    // Exhausted script: a 500.
    assert_eq!(post(&server, json!({})).await.status(), 500);
}

#[tokio::test]
async fn streamed_tool_call_fragments_reassemble() {
    let args = json!({"path": "some/longer/path.txt", "content": "hello world"});
    let server = ScriptedModel::start(vec![Reply::ToolCalls(vec![ScriptedCall::new(
        "c1",
        "t",
        args.clone(),
    )])])
    .await
    .unwrap();
    let response = post(&server, json!({"stream": true})).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let lines = data_lines(&response.text().await.unwrap());
    assert_eq!(lines.last().map(String::as_str), Some("[DONE]"));
    let mut arguments = String::new();
    let mut fragments = 0;
    for line in &lines[..lines.len() - 1] {
        let chunk: Value = serde_json::from_str(line).unwrap();
        if let Some(a) =
            chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            && !a.is_empty()
        {
            arguments.push_str(a);
            fragments += 1;
        }
    }
    assert!(fragments >= 2);
    assert_eq!(serde_json::from_str::<Value>(&arguments).unwrap(), args);
}

#[tokio::test]
async fn errors_carry_retry_after() {
    let server = ScriptedModel::start(vec![Reply::Error {
        status: 429,
        retry_after: Some(3),
    }])
    .await
    .unwrap();
    let response = post(&server, json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
}

#[tokio::test]
async fn cut_stream_has_no_done() {
    let server = ScriptedModel::start(vec![Reply::CutStream(ScriptedCall::new(
        "c",
        "t",
        json!({"path": "abcdef"}),
    ))])
    .await
    .unwrap();
    let response = post(&server, json!({"stream": true})).await;
    let text = response.text().await.unwrap_or_default();
    assert!(!text.contains("[DONE]"));
}

#[tokio::test]
async fn round_trip_fallback_alternates() {
    let server = ScriptedModel::start_with(
        vec![],
        Fallback::RoundTrip {
            tool_name: "x__y".into(),
            args: json!({}),
        },
    )
    .await
    .unwrap();
    let first: Value = post(
        &server,
        json!({"messages": [{"role": "user", "content": "go"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        first["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "x__y"
    );
    let second: Value = post(
        &server,
        json!({"messages": [{"role": "tool", "content": "ok"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(second["choices"][0]["message"]["content"], "done");
    server
        .wait_for_requests(2, Duration::from_secs(1))
        .await
        .unwrap();
}

/// All `chat.completion.chunk` objects of an SSE body, checking each event's framing.
fn chunks(text: &str) -> (Vec<Value>, bool) {
    let mut out = Vec::new();
    let mut done = false;
    for event in text.split("\n\n").filter(|e| !e.is_empty()) {
        let data = event.strip_prefix("data: ").unwrap();
        if data == "[DONE]" {
            done = true;
        } else {
            assert!(!done, "data after [DONE]");
            let chunk: Value = serde_json::from_str(data).unwrap();
            out.push(chunk);
        }
    }
    (out, done)
}

/// Reassembles streamed tool calls: (id, name, arguments) per index.
fn reassemble(chunks: &[Value]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in chunks {
        for delta in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = usize::try_from(delta["index"].as_u64().unwrap()).unwrap();
            if index == calls.len() {
                assert_eq!(delta["type"], "function");
                assert_eq!(delta["function"]["arguments"], "");
                calls.push((
                    delta["id"].as_str().unwrap().to_string(),
                    delta["function"]["name"].as_str().unwrap().to_string(),
                    String::new(),
                ));
            } else {
                assert!(delta.get("id").is_none());
                calls[index]
                    .2
                    .push_str(delta["function"]["arguments"].as_str().unwrap());
            }
        }
    }
    calls
}

/// Sends a raw HTTP/1.1 request and reads until the server closes the connection.
async fn raw_exchange(server: &ScriptedModel, body: &str) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "server kept the connection open");
    received
}

#[tokio::test]
async fn json_completion_shape() {
    let server = ScriptedModel::start(vec![
        Reply::Text("hi there".into()),
        Reply::ToolCalls(vec![
            ScriptedCall::new("c1", "fs__read", json!({"path": "a"})),
            ScriptedCall {
                id: "c2".into(),
                name: "fs__write".into(),
                arguments: "{not json".into(),
            },
        ]),
    ])
    .await
    .unwrap();
    let response = post(
        &server,
        json!({"model": "gpt-x", "messages": [{"role": "user", "content": "q"}], "unknown": 1}),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["id"], "chatcmpl-1");
    assert_eq!(body["model"], "gpt-x");
    assert!(body["created"].as_u64().unwrap() > 1_600_000_000);
    let message = &body["choices"][0]["message"];
    assert_eq!(body["choices"][0]["index"], 0);
    assert_eq!(message["role"], "assistant");
    assert!(message.get("tool_calls").is_none());
    let usage = &body["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
    );

    let body: Value = post(&server, json!({"messages": []}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["model"], DEFAULT_MODEL);
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(
        message["tool_calls"],
        json!([
            {"id": "c1", "type": "function", "function": {"name": "fs__read", "arguments": "{\"path\":\"a\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "fs__write", "arguments": "{not json"}}
        ])
    );
}

#[tokio::test]
async fn streamed_text() {
    let server = ScriptedModel::start(vec![Reply::Text("The quick brown fox — ünïcode".into())])
        .await
        .unwrap();
    let response = post(&server, json!({"model": "m", "stream": true})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let (chunks, done) = chunks(&response.text().await.unwrap());
    assert!(done);
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    let mut text = String::new();
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["id"], chunks[0]["id"]);
        assert_eq!(chunk["model"], "m");
        assert!(chunk.get("usage").is_none());
        text.push_str(
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap_or(""),
        );
    }
    assert_eq!(text, "The quick brown fox — ünïcode");
    assert!(chunks.len() >= 4, "text comes in several content chunks");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );
}

#[tokio::test]
async fn streamed_tool_calls_with_usage() {
    let calls = vec![
        ScriptedCall::new("c1", "a__b", json!({"path": "x/y.txt", "content": "hello"})),
        ScriptedCall {
            id: "c2".into(),
            name: "a__c".into(),
            arguments: "{}".into(),
        },
        ScriptedCall {
            id: "c3".into(),
            name: "a__d".into(),
            arguments: String::new(),
        },
    ];
    let server = ScriptedModel::start(vec![Reply::ToolCalls(calls.clone())])
        .await
        .unwrap();
    let response = post(
        &server,
        json!({"stream": true, "stream_options": {"include_usage": true}}),
    )
    .await;
    let (chunks, done) = chunks(&response.text().await.unwrap());
    assert!(done);
    let got = reassemble(&chunks);
    let want: Vec<_> = calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(got, want);
    // Every call's arguments come in at least two fragments after the head.
    for index in 0..3 {
        let fragments = chunks
            .iter()
            .filter(|c| {
                let d = &c["choices"][0]["delta"]["tool_calls"][0];
                d["index"] == index
                    && d.get("id").is_none()
                    && d["function"].get("arguments").is_some()
            })
            .count();
        assert!(fragments >= 2, "call {index}: {fragments} fragments");
    }
    let usage_chunk = chunks.last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert!(usage_chunk["usage"]["total_tokens"].as_u64().unwrap() > 0);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(finish["usage"], Value::Null);
}

#[tokio::test]
async fn error_bodies_and_recording() {
    let server = ScriptedModel::start(vec![
        Reply::Error {
            status: 503,
            retry_after: None,
        },
        Reply::Error {
            status: 429,
            retry_after: Some(7),
        },
    ])
    .await
    .unwrap();
    let response = post(&server, json!({"n": 1, "stream": true})).await;
    assert_eq!(response.status(), 503);
    assert!(response.headers().get("retry-after").is_none());
    let body: Value = response.json().await.unwrap();
    assert!(body["error"]["message"].is_string());
    assert!(body["error"]["type"].is_string());
    assert_eq!(body["error"]["code"], Value::Null);

    let response = post(&server, json!({"n": 2})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");

    let response = post(&server, json!({"n": 3})).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["message"], "script exhausted");

    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0], json!({"n": 1, "stream": true}));
    assert_eq!(requests[1]["n"], 2);
    assert_eq!(requests[2]["n"], 3);
    assert_eq!(requests[3], json!("not json"));
}

#[tokio::test]
async fn push_and_wait_for_requests() {
    let server = ScriptedModel::start(vec![]).await.unwrap();
    let err = server
        .wait_for_requests(1, Duration::from_millis(30))
        .await
        .unwrap_err();
    assert!(err.contains("0 of 1"), "{err}");
    server.push(Reply::Text("one".into()));
    server.push(Reply::Text("two".into()));
    let url = format!("{}/chat/completions", server.base_url());
    let client = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut texts = Vec::new();
        for i in 0..2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let body: Value = client
                .post(&url)
                .json(&json!({"i": i}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            texts.push(
                body["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        texts
    });
    let requests = server
        .wait_for_requests(2, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(requests, vec![json!({"i": 0}), json!({"i": 1})]);
    assert_eq!(client.await.unwrap(), vec!["one", "two"]);
}

#[tokio::test]
async fn round_trip_fallback_after_script() {
    let server = ScriptedModel::start_with(
        vec![Reply::Text("scripted".into())],
        Fallback::RoundTrip {
            tool_name: "builtin__write_file".into(),
            args: json!({"path": "bench.txt"}),
        },
    )
    .await
    .unwrap();
    let user = json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}]});
    let tool = json!({"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": null}, {"role": "tool", "tool_call_id": "x", "content": "ok"}]});
    let body: Value = post(&server, user.clone()).await.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "scripted");
    let mut ids = Vec::new();
    for _ in 0..3 {
        let body: Value = post(&server, user.clone()).await.json().await.unwrap();
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        let call = &body["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "builtin__write_file");
        assert_eq!(call["function"]["arguments"], r#"{"path":"bench.txt"}"#);
        ids.push(call["id"].as_str().unwrap().to_string());
        let body: Value = post(&server, tool.clone()).await.json().await.unwrap();
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["choices"][0]["message"]["content"], "done");
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "fresh call ids");
    // Streaming works for the fallback too.
    let mut streamed = user.clone();
    streamed["stream"] = json!(true);
    let (chunks, done) = chunks(&post(&server, streamed).await.text().await.unwrap());
    assert!(done);
    assert_eq!(reassemble(&chunks)[0].2, r#"{"path":"bench.txt"}"#);
}

#[tokio::test]
async fn cut_stream_sends_half_and_drops() {
    let call = ScriptedCall::new(
        "c9",
        "fs__write",
        json!({"path": "abcdef", "content": "0123456789"}),
    );
    let server = ScriptedModel::start(vec![
        Reply::CutStream(call.clone()),
        Reply::CutStream(call.clone()),
    ])
    .await
    .unwrap();

    // Through reqwest: the body fails after the partial events.
    let response = post(&server, json!({"stream": true})).await;
    assert_eq!(response.status(), 200);
    let mut received = Vec::new();
    let mut failed = false;
    let mut response = response;
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => received.extend_from_slice(&bytes),
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "a cut stream must end in a body error");
    let text = String::from_utf8(received).unwrap();
    assert!(!text.contains("[DONE]"));
    let (chunks, done) = chunks(&text);
    assert!(!done);
    assert!(
        chunks
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );
    let calls = reassemble(&chunks);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "c9");
    assert_eq!(calls[0].1, "fs__write");
    assert!(!calls[0].2.is_empty() && call.arguments.starts_with(&calls[0].2));
    assert!(calls[0].2.len() <= call.arguments.len() / 2 + 1);

    // On the wire: chunked body without the terminating zero-length chunk.
    let raw = String::from_utf8(raw_exchange(&server, r#"{"stream":true}"#).await).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"));
    assert!(raw.contains("fs__write"));
    assert!(!raw.contains("[DONE]") && !raw.ends_with("0\r\n\r\n"));
}

#[tokio::test]
async fn cut_stream_without_streaming_answers_nothing() {
    let call = ScriptedCall::new("c1", "t", json!({}));
    let server = ScriptedModel::start(vec![Reply::CutStream(call.clone()), Reply::CutStream(call)])
        .await
        .unwrap();
    assert!(raw_exchange(&server, "{}").await.is_empty());
    let err = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&json!({}))
        .send()
        .await
        .unwrap_err();
    assert!(!err.is_status());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn models_endpoint() {
    let server = ScriptedModel::start(vec![]).await.unwrap();
    let body: Value = reqwest::get(format!("{}/models", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"][0]["id"], DEFAULT_MODEL);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn drop_stops_the_server() {
    let server = ScriptedModel::start(vec![]).await.unwrap();
    let addr = server.addr();
    drop(server);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still listening after drop"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn script_files_parse() {
    let replies = parse_script(
        r#"[
            {"text": "hello"},
            {"tool_calls": [{"id": "a", "name": "x__y", "arguments": {"k": 1}}, {"name": "x__z", "arguments": "{raw"}]},
            {"error": {"status": 429, "retry_after": 1}},
            {"error": {"status": 500}},
            {"cut_stream": {"name": "x__y", "arguments": {"k": 2}}}
        ]"#,
    )
    .unwrap();
    assert_eq!(
        replies,
        vec![
            Reply::Text("hello".into()),
            Reply::ToolCalls(vec![
                ScriptedCall::new("a", "x__y", json!({"k": 1})),
                ScriptedCall {
                    id: "call_script_2".into(),
                    name: "x__z".into(),
                    arguments: "{raw".into()
                },
            ]),
            Reply::Error {
                status: 429,
                retry_after: Some(1)
            },
            Reply::Error {
                status: 500,
                retry_after: None
            },
            Reply::CutStream(ScriptedCall::new("call_script_3", "x__y", json!({"k": 2}))),
        ]
    );
    assert!(parse_script(r#"[{"txt": "x"}]"#).is_err());
}

#[test]
fn pieces_cover_the_text() {
    for text in ["", "a", "ab", "abc", "héllo wörld", "{\"path\":\"x\"}"] {
        for parts in 1..5 {
            let p = pieces(text, parts);
            assert_eq!(p.len(), parts);
            assert_eq!(p.concat(), text);
        }
    }
}

async fn post_gemini(server: &ScriptedModel, action: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!(
            "{}/v1beta/models/gemini-2.5-flash:{action}",
            server.gemini_base_url()
        ))
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The Gemini API as Gemini CLI reads it: a streamed function call, then (streamed) text in
/// pieces with `finishReason` on the last; `countTokens` answered and not recorded.
#[tokio::test]
async fn gemini_streams_a_function_call_then_text() {
    let server = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "run_shell_command",
            json!({"command": "ls"}),
        )]),
        Reply::Text("all done here".into()),
    ])
    .await
    .unwrap();
    let asked = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let tokens: Value = post_gemini(&server, "countTokens", asked.clone())
        .await
        .json()
        .await
        .unwrap();
    assert!(tokens["totalTokens"].as_u64().unwrap() > 0, "{tokens}");
    let text = post_gemini(&server, "streamGenerateContent?alt=sse", asked)
        .await
        .text()
        .await
        .unwrap();
    let events: Vec<Value> = data_lines(&text)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    let part = &events[0]["candidates"][0]["content"]["parts"][0];
    assert_eq!(part["functionCall"]["name"], "run_shell_command");
    assert_eq!(part["functionCall"]["args"], json!({"command": "ls"}));
    assert_eq!(events[0]["candidates"][0]["finishReason"], "STOP");

    let text = post_gemini(
        &server,
        "streamGenerateContent?alt=sse",
        json!({"contents": []}),
    )
    .await
    .text()
    .await
    .unwrap();
    let events: Vec<Value> = data_lines(&text)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let joined: String = events
        .iter()
        .map(|e| {
            e["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(joined, "all done here");
    assert!(events.len() > 1, "{text}");
    assert!(events.last().unwrap()["candidates"][0]["finishReason"] == "STOP");
    assert!(events[0]["candidates"][0].get("finishReason").is_none());
    assert_eq!(
        server.requests().len(),
        2,
        "countTokens is not a model turn"
    );
    let error = post_gemini(&server, "generateContent", json!({})).await;
    assert_eq!(error.status(), 500);
    let body: Value = error.json().await.unwrap();
    assert_eq!(body["error"]["status"], "INTERNAL");
}

/// The smart fallback: the call while its tool is offered and no result is there, then the
/// results repeated, and "ok" to side calls that offer no such tool — on both wire formats.
#[tokio::test]
async fn the_smart_fallback_answers_side_calls_and_repeats_tool_results() {
    let call = ScriptedCall::new("call_1", "run_shell_command", json!({"command": "ls"}));
    let server = ScriptedModel::start_with(Vec::new(), Fallback::Smart { call })
        .await
        .unwrap();
    let offer = json!([{"type": "function", "function": {"name": "run_shell_command"}}]);
    let side: Value = post(
        &server,
        json!({"messages": [{"role": "user", "content": "title?"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(side["choices"][0]["message"]["content"], "ok");
    let first: Value = post(
        &server,
        json!({"tools": offer, "messages": [{"role": "user", "content": "go"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        first["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "run_shell_command"
    );
    let after: Value = post(
        &server,
        json!({"tools": offer, "messages": [
            {"role": "user", "content": "go"},
            {"role": "tool", "tool_call_id": "call_1", "content": "denied: not here"},
        ]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        after["choices"][0]["message"]["content"],
        "Done. The tool said: denied: not here"
    );

    let gemini_offer = json!([{"functionDeclarations": [{"name": "run_shell_command"}]}]);
    let asked: Value = post_gemini(
        &server,
        "generateContent",
        json!({"tools": gemini_offer, "contents": [{"role": "user", "parts": [{"text": "go"}]}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        asked["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "run_shell_command"
    );
    let told: Value = post_gemini(
        &server,
        "generateContent",
        json!({"tools": gemini_offer, "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"error": "no"}}}]},
        ]}),
    )
    .await
    .json()
    .await
    .unwrap();
    let said = told["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(said.contains("\"error\":\"no\""), "{said}");
}

/// A call that echoes a schema sends the schema the request offered, keyword for keyword.
#[tokio::test]
async fn a_call_can_echo_the_schema_the_model_was_shown() {
    let server = ScriptedModel::start(vec![Reply::ToolCalls(vec![ScriptedCall::echoing_schema(
        "c1", "echo", "schema", "rich",
    )])])
    .await
    .unwrap();
    let rich = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                      "type": "object", "$defs": {"a": {"$anchor": "x"}}});
    let response = post(
        &server,
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": "function", "function": {"name": "rich", "parameters": rich}},
                         {"type": "function", "function": {"name": "echo", "parameters": {}}}]}),
    )
    .await;
    let body: Value = response.json().await.unwrap();
    let arguments = body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    let sent: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(sent, json!({"schema": rich}));
}
