use super::*;

async fn post(server: &ScriptedModel, body: Value) -> reqwest::Response {
    reqwest::Client::new().post(format!("{}/chat/completions", server.base_url())).json(&body).send().await.unwrap()
}

fn data_lines(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix("data: ")).map(str::to_string).collect()
}

#[tokio::test]
async fn json_text_and_tool_calls() {
    let server = ScriptedModel::start(vec![
        Reply::Text("hello".into()),
        Reply::ToolCalls(vec![ScriptedCall::new("c1", "builtin__read_file", json!({"path": "a"}))]),
    ])
    .await
    .unwrap();
    let body: Value = post(&server, json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})).await.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "hello");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let body: Value = post(&server, json!({"model": "m", "messages": []})).await.json().await.unwrap();
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
    let server = ScriptedModel::start(vec![Reply::ToolCalls(vec![ScriptedCall::new("c1", "t", args.clone())])]).await.unwrap();
    let response = post(&server, json!({"stream": true})).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let lines = data_lines(&response.text().await.unwrap());
    assert_eq!(lines.last().map(String::as_str), Some("[DONE]"));
    let mut arguments = String::new();
    let mut fragments = 0;
    for line in &lines[..lines.len() - 1] {
        let chunk: Value = serde_json::from_str(line).unwrap();
        if let Some(a) = chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
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
    let server = ScriptedModel::start(vec![Reply::Error { status: 429, retry_after: Some(3) }]).await.unwrap();
    let response = post(&server, json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
}

#[tokio::test]
async fn cut_stream_has_no_done() {
    let server = ScriptedModel::start(vec![Reply::CutStream(ScriptedCall::new("c", "t", json!({"path": "abcdef"})))]).await.unwrap();
    let response = post(&server, json!({"stream": true})).await;
    let text = response.text().await.unwrap_or_default();
    assert!(!text.contains("[DONE]"));
}

#[tokio::test]
async fn round_trip_fallback_alternates() {
    let server = ScriptedModel::start_with(vec![], Fallback::RoundTrip { tool_name: "x__y".into(), args: json!({}) }).await.unwrap();
    let first: Value = post(&server, json!({"messages": [{"role": "user", "content": "go"}]})).await.json().await.unwrap();
    assert_eq!(first["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "x__y");
    let second: Value = post(&server, json!({"messages": [{"role": "tool", "content": "ok"}]})).await.json().await.unwrap();
    assert_eq!(second["choices"][0]["message"]["content"], "done");
    server.wait_for_requests(2, Duration::from_secs(1)).await.unwrap();
}
