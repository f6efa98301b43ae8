//! What the API's suites share: a real host whose session `s` waits on one write_file request
//! (to `workspace/target.txt`), the scripted model's next answer "done"; and the requests they
//! send it, with what they expect back.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use airlock_api::host::Host;
use airlock_api::{ApiClient, ClientError};
use airlock_engine::{DecisionRequest, InboxItem, ProviderSettings};
use airlock_protocol::DecisionOutcome;
use airlock_protocol::commands as cmd;
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub struct Waiting {
    pub host: Host,
    pub item: InboxItem,
    pub workspace: PathBuf,
    /// The main token (the data directory's `token`).
    pub token: String,
    /// A client of the host's loopback port with the main token.
    pub client: ApiClient,
    /// Kept alive with the test: bind it (`_model`), do not drop it with `..`.
    pub _model: ScriptedModel,
    pub _dir: tempfile::TempDir,
}

pub async fn one_waiting_write() -> Waiting {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__write_file",
            json!({"path": "target.txt", "content": "x"}),
        )]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let (host, served) = Host::start(
        &dir.path().join("data"),
        Some(workspace.clone()),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap();
    tokio::spawn(served);
    host.engine
        .set_provider(ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            stream: false,
            ..ProviderSettings::default()
        })
        .unwrap();
    host.engine.send_message("s", "write").unwrap();
    let mut item = None;
    for _ in 0..500 {
        if let Some(first) = host.engine.inbox().unwrap().into_iter().next() {
            item = Some(first);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let token = std::fs::read_to_string(dir.path().join("data/token"))
        .unwrap()
        .trim()
        .to_string();
    let client = ApiClient::new(&format!("http://{}", host.addr), &token, dir.path());
    Waiting {
        host,
        item: item.expect("a pending request"),
        workspace,
        token,
        client,
        _model: model,
        _dir: dir,
    }
}

/// A refusal's status and code (anything else fails the test).
pub fn refused(error: ClientError) -> (u16, String) {
    match error {
        ClientError::Refused { status, code, .. } => (status, code),
        other => panic!("expected a refusal, got {other}"),
    }
}

/// One decision through the command table, as `client`.
pub async fn decide(
    client: &ApiClient,
    decision: DecisionRequest,
) -> Result<Vec<DecisionOutcome>, ClientError> {
    client
        .call(&cmd::Decide {
            decisions: vec![decision],
            channel: None,
        })
        .await
}

/// One request with `token` on `addr` (raw HTTP, as an agent's client sends it): its status
/// and JSON body (the text as a string when it is not JSON).
pub async fn send(
    addr: SocketAddr,
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

/// Each request, sent with `token`, is refused as not allowed (403, `not_allowed`).
pub async fn all_not_allowed(
    addr: SocketAddr,
    token: &str,
    requests: Vec<(Method, &str, Option<Value>)>,
) {
    for (method, path, body) in requests {
        let (status, answer) = send(addr, token, method.clone(), path, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {answer}");
        assert_eq!(answer["code"], "not_allowed", "{method} {path}: {answer}");
    }
}
