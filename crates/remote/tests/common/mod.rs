//! The phone inbox's test harness: an engine with the scripted model, its HTTPS server on
//! 127.0.0.1 with the generated certificate, and a client that trusts exactly that certificate.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use airlock_engine::{Engine, EngineConfig, ProviderSettings};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use std::time::Duration;

pub struct Phone {
    _dir: tempfile::TempDir,
    pub engine: Engine,
    pub model: ScriptedModel,
    pub server: airlock_remote::RemoteServer,
    pub http: reqwest::Client,
    pub data_dir: std::path::PathBuf,
}

pub async fn phone(replies: Vec<Reply>) -> Phone {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(replies).await.unwrap();
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })
    .unwrap();
    engine
        .set_provider(ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            ..ProviderSettings::default()
        })
        .unwrap();
    let server = airlock_remote::start(engine.clone(), dir.path(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    // Pairing names the address it listens on.
    engine.set_remote_listen(Some(server.addr)).unwrap();
    // The phone trusts exactly the certificate Airlock made (as a person does after checking
    // its fingerprint).
    let pem = std::fs::read(dir.path().join("remote-cert.pem")).unwrap();
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    Phone {
        data_dir: dir.path().to_path_buf(),
        _dir: dir,
        engine,
        model,
        server,
        http,
    }
}

impl Phone {
    /// Another client of the inbox, trusting its certificate: over HTTP/1.1 (so a `Host`
    /// header goes out as written) and, when given, from this local address.
    pub fn client_from(&self, local: Option<std::net::IpAddr>) -> reqwest::Client {
        let pem = std::fs::read(self.data_dir.join("remote-cert.pem")).unwrap();
        reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
            .http1_only()
            .local_address(local)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.server.addr)
    }

    pub async fn pair(&self, name: &str) -> String {
        let pairing = airlock_remote::pairing(&self.engine, &self.data_dir).unwrap();
        assert_eq!(pairing.url, format!("https://{}", self.server.addr));
        let answer: Value = self
            .http
            .post(self.url("/v1/pair"))
            .json(&json!({"code": pairing.code, "device_name": name}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["token"].as_str().unwrap().to_string()
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut request = self.http.get(self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

pub fn write(id: &str, path: &str) -> ScriptedCall {
    ScriptedCall::new(
        id,
        "builtin__write_file",
        json!({"path": path, "content": "x"}),
    )
}

/// One model step asking to write a.txt, b.txt and c.txt (c1..c3): three waiting calls.
pub fn three_writes() -> Reply {
    Reply::ToolCalls(vec![
        write("c1", "a.txt"),
        write("c2", "b.txt"),
        write("c3", "c.txt"),
    ])
}
