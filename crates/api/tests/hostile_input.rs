//! Every way a client can send the local API something wrong — malformed JSON, wrong types,
//! NaN, huge and deeply nested arguments, unknown ids, another session's ids, stale hashes,
//! replays, no token — gets a clear 4xx, and nothing runs and nothing is lost: the request
//! still waits, the file it would write does not exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;

struct Api {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<String>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("content-type", "application/json");
        if let Some(body) = body {
            request = request.body(body);
        }
        // A body over the server's limit may be cut off with the connection instead of
        // answered: status 0 stands for "refused without reading it".
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => return (0, Value::String(error.to_string())),
        };
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn post(&self, path: &str, body: &str) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body.to_string()))
            .await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_hostile_requests_are_refused_and_change_nothing() {
    let common::Waiting {
        host,
        item,
        workspace,
        token,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let id = item.approval_id.clone();
    let api = Api {
        // A fresh connection per request: the server may close one it refused to read (the
        // oversized body), and a pooled connection would then fail the next request.
        http: reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap(),
        base: format!("http://{}", host.addr),
        token: token.clone(),
    };

    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let huge = "x".repeat(8 * 1024 * 1024);
    let hostile: Vec<(&str, String, &[u16])> = vec![
        ("not JSON", "{\"approval_id\":".into(), &[400, 422]),
        (
            "NaN",
            format!(r#"{{"approval_id":"{id}","decision":NaN}}"#),
            &[400, 422],
        ),
        (
            "wrong types",
            r#"{"approval_id":5,"decision":"yes"}"#.into(),
            &[400, 422],
        ),
        (
            "no id",
            r#"{"decision":{"kind":"approve"}}"#.into(),
            &[400, 422],
        ),
        (
            "no such kind of decision",
            format!(r#"{{"approval_id":"{id}","decision":{{"kind":"delegate"}}}}"#),
            &[400, 422],
        ),
        (
            "a kind the item does not offer",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"answer","action":"accept","content":{{}}}}}}"#
            ),
            &[422],
        ),
        (
            "deeply nested args",
            format!(r#"{{"approval_id":"{id}","decision":{{"kind":"approve","args":{deep}}}}}"#),
            &[400, 422],
        ),
        (
            "huge args",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"approve","args":{{"path":"{huge}"}}}}}}"#
            ),
            // 0: the server closed the connection rather than read a body over its limit.
            &[0, 413, 422],
        ),
        (
            "unknown id",
            r#"{"approval_id":"apr_nope","decision":{"kind":"approve"}}"#.into(),
            &[404],
        ),
        (
            "another session's id",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"approve"}},"session":"other"}}"#
            ),
            &[403],
        ),
        (
            "edit not an object",
            format!(r#"{{"approval_id":"{id}","decision":{{"kind":"approve","args":[1]}}}}"#),
            &[422],
        ),
        (
            "edit against the schema",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"approve","args":{{"path":5}}}}}}"#
            ),
            &[422],
        ),
        (
            "edit out of the workspace",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"approve","args":{{"path":"../escape.txt","content":"x"}}}}}}"#
            ),
            &[403, 422],
        ),
        (
            "stale hash",
            format!(
                r#"{{"approval_id":"{id}","decision":{{"kind":"approve"}},"args_hash":"{}"}}"#,
                "0".repeat(64)
            ),
            &[409],
        ),
    ];
    for (what, body, expected) in &hostile {
        let (status, answer) = api.post("/v1/decisions", body).await;
        assert!(expected.contains(&status), "{what}: {status} {answer}");
        if status != 413 && status != 0 {
            assert!(
                answer.get("error").is_some() || answer.is_string(),
                "{what}: no clear error: {answer}"
            );
        }
        assert_eq!(
            host.engine.inbox().unwrap().len(),
            1,
            "{what}: the request no longer waits"
        );
        assert!(
            !workspace.join("target.txt").exists(),
            "{what}: the call ran"
        );
    }
    // A batch with garbage in it: each item answered on its own, the bad ones refused.
    let (status, answer) = api
        .post(
            "/v1/decisions/batch",
            r#"{"decisions":[{"approval_id":"apr_nope","decision":{"kind":"approve"}}]}"#,
        )
        .await;
    assert!(status < 500, "{status} {answer}");
    let (status, _) = api
        .post("/v1/decisions/batch", r#"{"decisions":"all"}"#)
        .await;
    assert!((400..500).contains(&status), "{status}");
    // "Approve all" on 20,000 waiting calls (~2.7 MB, past axum's default limit of 2 MB) is read
    // whole rather than refused for its size: each unknown id is refused on its own, and the
    // request that waits still waits.
    let many: Vec<Value> = (0..20_000)
        .map(|i| {
            serde_json::json!({"approval_id": format!("apr_unknown_{i:06}"), "decision": {"kind": "approve"}, "args_hash": "0".repeat(64)})
        })
        .collect();
    let body = serde_json::json!({ "decisions": many }).to_string();
    assert!(body.len() > 2 * 1024 * 1024, "{} bytes", body.len());
    let (status, answer) = api.post("/v1/decisions/batch", &body).await;
    assert_eq!(status, 200, "{answer}");
    let outcomes = answer.as_array().expect("an answer per item");
    assert_eq!(outcomes.len(), 20_000);
    assert!(
        outcomes.iter().all(|o| o["status"] == 404),
        "{}",
        outcomes[0]
    );
    assert_eq!(host.engine.inbox().unwrap().len(), 1);
    // Other endpoints.
    let (status, _) = api.post("/v1/sessions/s/messages", "{text").await;
    assert!((400..500).contains(&status), "{status}");
    let (status, _) = api
        .post("/v1/rules", r#"{"server":"builtin","tool":"write_file","pointer":"path","pattern":{"kind":"glob","pattern":"*"},"effect":"allow"}"#)
        .await;
    assert!(
        (400..500).contains(&status),
        "a pointer without '/': {status}"
    );
    let (status, _) = api
        .send(reqwest::Method::GET, "/v1/sessions/nope/transcript", None)
        .await;
    assert_eq!(status, 404);
    let (status, answer) = api
        .send(
            reqwest::Method::PUT,
            "/v1/settings/step_limit",
            Some("\"soon\"".into()),
        )
        .await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (400, Some("invalid")),
        "{answer}"
    );
    let unauthorised = api
        .http
        .post(format!("{}/v1/decisions", api.base))
        .header("content-type", "application/json")
        .body(format!(
            r#"{{"approval_id":"{id}","decision":{{"kind":"approve"}}}}"#
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorised.status().as_u16(), 401);
    assert_eq!(host.engine.inbox().unwrap().len(), 1);
    assert!(!workspace.join("target.txt").exists());

    // The real decision still works, once; its replay is refused.
    let approve = format!(
        r#"{{"approval_id":"{id}","decision":{{"kind":"approve"}},"args_hash":"{}"}}"#,
        item.args_hash
    );
    let (status, answer) = api.post("/v1/decisions", &approve).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = api.post("/v1/decisions", &approve).await;
    assert_eq!(status, 409, "a replay: {answer}");
    assert_eq!(answer["code"], "already_decided");
    host.engine.wait_turn("s").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.join("target.txt")).unwrap(),
        "x"
    );
    let approvals = host
        .engine
        .audit(1000)
        .unwrap()
        .into_iter()
        .filter(|row| row.action == "approved")
        .count();
    assert_eq!(approvals, 1);
}
