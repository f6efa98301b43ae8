//! The real app, end to end, through WebDriver (tauri-driver + WebKitWebDriver) under a display,
//! against the scripted model server. Run by `scripts/e2e.sh`, which provides Xvfb and
//! tauri-driver; ignored in a plain `cargo test`. Screenshots go to `$AIRLOCK_E2E_OUT`
//! (default `test-output/e2e`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_api::ApiClient;
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A minimal W3C WebDriver client: just what this test needs.
struct Driver {
    http: reqwest::Client,
    base: String,
    /// Where screenshots go, including one of the screen when a wait times out.
    out: PathBuf,
}

impl Driver {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let value: Value = response.json().await.unwrap();
        value["value"].clone()
    }

    async fn try_find(&self, css: &str) -> Option<String> {
        let found = self.call(reqwest::Method::POST, "/elements", Some(json!({"using": "css selector", "value": css}))).await;
        found.as_array()?.first()?[ELEMENT].as_str().map(str::to_string)
    }

    /// Waits for an element to appear (the UI updates from engine events).
    async fn find(&self, css: &str) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(id) = self.try_find(css).await {
                return id;
            }
            if tokio::time::Instant::now() >= deadline {
                self.screenshot(&self.out, "failure").await;
                panic!("no element {css} appeared (see failure.png)");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.call(reqwest::Method::POST, &format!("/element/{id}/click"), Some(json!({}))).await;
    }

    async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.call(reqwest::Method::POST, &format!("/element/{id}/clear"), Some(json!({}))).await;
        self.call(reqwest::Method::POST, &format!("/element/{id}/value"), Some(json!({"text": text}))).await;
    }

    async fn run(&self, script: &str) -> Value {
        self.call(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": []}))).await
    }

    /// Waits until the script returns `true`.
    async fn until(&self, what: &str, script: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.run(script).await != Value::Bool(true) {
            if tokio::time::Instant::now() >= deadline {
                self.screenshot(&self.out, "failure").await;
                panic!("timed out waiting for {what} (see failure.png)");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    async fn screenshot(&self, out: &Path, name: &str) {
        let data = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap()).unwrap();
        std::fs::write(out.join(format!("{name}.png")), png).unwrap();
    }
}

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on right now (other test runs on this machine may use the defaults).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn write_file(id: &str, path: &str, content: &str) -> ScriptedCall {
    ScriptedCall::new(id, "builtin__write_file", json!({"path": path, "content": content}))
}

#[tokio::test]
#[ignore = "needs a display and tauri-driver; run through scripts/e2e.sh"]
async fn approve_an_edited_call_and_deny_a_batch_with_a_reason() {
    let out = PathBuf::from(std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()));
    std::fs::create_dir_all(&out).unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write_file("c1", "notes.txt", "draft")]),
        Reply::Text("Saved notes.txt.".into()),
        Reply::ToolCalls(vec![write_file("c2", "a.txt", "a"), write_file("c3", "b.txt", "b"), write_file("c4", "c.txt", "c")]),
        Reply::Text("Understood, I will not write them.".into()),
    ])
    .await
    .unwrap();

    let driver_bin = std::env::var("TAURI_DRIVER").unwrap_or_else(|_| "tauri-driver".into());
    let (port, native_port) = (free_port(), free_port());
    let _tauri_driver = Process(
        Command::new(&driver_bin)
            .args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {driver_bin}: {e}")),
    );
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let capabilities = json!({"capabilities": {"alwaysMatch": {
        "browserName": "wry",
        "tauri:options": {
            "application": env!("CARGO_BIN_EXE_airlock-desktop"),
            "args": ["--data-dir", data.path()],
        }
    }}});
    let mut session = Value::Null;
    for _ in 0..50 {
        if let Ok(response) = http.post(format!("http://127.0.0.1:{port}/session")).json(&capabilities).send().await {
            session = response.json().await.unwrap();
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let session_id = session["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {session}"));
    let ui = Driver { http: http.clone(), base: format!("http://127.0.0.1:{port}/session/{session_id}"), out: out.clone() };

    // The app serves the local API: configure the provider through it, as the CLI would.
    let mut api = None;
    for _ in 0..100 {
        if let Ok(client) = ApiClient::discover(data.path()) {
            api = Some(client);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let api = api.expect("the app published its local API");
    let _: Value = api
        .put("/v1/provider", &json!({"base_url": model.base_url(), "model": "scripted", "stream": true}))
        .await
        .unwrap();

    // 1. Send a message: the pending call shows the prompt in the chat and in the inbox.
    ui.click("[data-testid=nav-chat]").await;
    ui.click("button.new").await;
    ui.type_into("input[aria-label='New chat name']", "e2e\u{E007}").await;
    ui.type_into("textarea[aria-label=Message]", "Save my notes").await;
    ui.click("form.composer button[type=submit]").await;
    ui.find("[data-testid=assistant-message] section[aria-label='Permission request']").await;
    ui.until("the inbox count", "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '1'").await;
    ui.screenshot(&out, "chat-pending").await;

    // 2. Edit the arguments in the inbox and approve.
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    ui.screenshot(&out, "inbox").await;
    ui.click("[data-testid=edit-args]").await;
    ui.type_into("textarea[aria-label='Arguments (JSON)']", r#"{"path": "notes.txt", "content": "final"}"#).await;
    ui.find("[data-testid=edit-diff]").await;
    ui.screenshot(&out, "inbox-edit").await;
    ui.click("[data-testid=approve-edited]").await;

    // 3. The result appears in the same assistant message, after the call.
    ui.click("[data-testid=nav-chat]").await;
    ui.until(
        "the answer in the same message as the call",
        "const m = [...document.querySelectorAll('[data-testid=assistant-message]')].pop();
         return !!m && m.querySelector('[data-testid=tool-call][data-state=succeeded]') !== null
             && m.textContent.includes('Saved notes.txt.');",
    )
    .await;
    assert_eq!(std::fs::read_to_string(data.path().join("workspace/notes.txt")).unwrap(), "final");
    ui.click("[data-testid=tool-call] button").await;
    ui.find("[data-testid=tool-result]").await;
    ui.screenshot(&out, "chat-done").await;

    // 4. Three pending calls: select all, deny with one reason; the model reads it.
    ui.type_into("textarea[aria-label=Message]", "Write three files").await;
    ui.click("form.composer button[type=submit]").await;
    ui.until("three pending", "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '3'").await;
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    ui.click("input[aria-label='Select all']").await;
    ui.screenshot(&out, "inbox-batch").await;
    ui.click("[data-testid=deny-selected]").await;
    ui.type_into("input[aria-label='Deny reason']", "E2E: not in this folder").await;
    ui.click("form.deny button[type=submit]").await;
    let requests = model.wait_for_requests(4, WAIT).await.unwrap();
    let last = requests[3]["messages"].as_array().unwrap();
    let denials: Vec<&Value> = last.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(denials.len(), 4, "{last:?}");
    for denial in &denials[1..] {
        let content = denial["content"].as_str().unwrap();
        assert!(content.contains("execution-denied") && content.contains("E2E: not in this folder"), "{content}");
    }

    // 5. The other screens, for the record.
    ui.until("an empty inbox", "return document.querySelector('[data-testid=nav-inbox-count]') === null").await;
    ui.click("[data-testid=nav-settings]").await;
    ui.find("section h2").await;
    ui.screenshot(&out, "settings").await;
    ui.click("[data-testid=nav-history]").await;
    ui.find("table tbody tr").await;
    ui.screenshot(&out, "history").await;
    ui.click("[data-testid=nav-chat]").await;
    ui.until("the final answer", "return document.body.textContent.includes('Understood, I will not write them.')").await;
    ui.screenshot(&out, "chat-batch-denied").await;

    let _ = http.delete(format!("http://127.0.0.1:{port}/session/{session_id}")).send().await;
}
