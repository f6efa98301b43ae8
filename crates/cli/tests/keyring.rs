//! The provider's API key pasted once is kept in the OS keyring (here a real Secret Service:
//! gnome-keyring on a private D-Bus session), used for the provider's requests and a restart,
//! and never written to the store, the engine's output or an API answer. The same for a remote
//! MCP server's OAuth tokens: kept in the keyring (no file), used by the engine, forgotten on
//! logout.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The Secret Service is Linux's keyring; macOS and Windows use the platform's own.
#![cfg(target_os = "linux")]

mod common;

use airlock_testkit::secret_service::SecretService;
use airlock_testkit::{Reply, ScriptedModel};
use common::BIN;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A key nobody would type by chance, to look for in every file and answer.
const KEY: &str = "sk-airlock-test-9f8e7d6c5b4a39281706";

/// The engine (`airlock serve`) on the test's bus, its output kept to look for the key.
fn serve(data: &Path, home: &Path, service: &SecretService) -> Child {
    let _ = std::fs::remove_file(data.join("api.json"));
    let child = Command::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .arg("serve")
        .env("DBUS_SESSION_BUS_ADDRESS", service.address())
        .env("HOME", home)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !data.join("api.json").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "serve did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn stop(mut engine: Child) -> String {
    let _ = engine.kill();
    let out = engine.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn airlock(
    data: &Path,
    home: &Path,
    service: &SecretService,
    args: &[&str],
    stdin: &str,
) -> Output {
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("DBUS_SESSION_BUS_ADDRESS", service.address())
        .env("HOME", home)
        // A sign-in's "browser": curl follows the test server's redirect to the loopback port.
        .env("AIRLOCK_BROWSER", "curl -fsSL -o /dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "airlock {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file of the data directory, as bytes (the store, its WAL, settings files).
fn contains_in_files(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn authorizations(model: &ScriptedModel) -> Vec<String> {
    model
        .request_headers()
        .iter()
        .map(|headers| {
            headers
                .iter()
                .find(|(name, _)| name == "authorization")
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_api_key_lives_in_the_os_keyring_and_nowhere_else() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let service = SecretService::start(home.path());
    let model = ScriptedModel::start(vec![
        Reply::Text("OK".into()),
        Reply::Text("Hello from the model".into()),
    ])
    .await
    .unwrap();
    let engine = serve(data.path(), home.path(), &service);
    let run = |args: &[&str], stdin: &str| airlock(data.path(), home.path(), &service, args, stdin);
    run(
        &[
            "provider",
            "set",
            "--base-url",
            &model.base_url(),
            "--model",
            "scripted",
        ],
        "",
    );
    let said = run(&["provider", "key"], &format!("{KEY}\n"));
    assert!(!String::from_utf8_lossy(&said.stdout).contains(KEY));
    // "Test connection": one real request, with the key from the keyring.
    let tested = run(&["provider", "test"], "");
    assert!(
        String::from_utf8_lossy(&tested.stdout).contains("The provider answered: “OK”"),
        "{}",
        String::from_utf8_lossy(&tested.stdout)
    );
    assert_eq!(authorizations(&model), [format!("Bearer {KEY}")]);
    // The settings say the key is in the keyring; no answer carries it.
    let shown = run(&["provider", "show"], "");
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(shown.contains("\"api_key_in_keyring\": true"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    let output = stop(engine);

    // After a restart the key still comes from the keyring.
    let engine = serve(data.path(), home.path(), &service);
    let chat = run(&["chat", "hello", "--session", "s"], "");
    let chat = String::from_utf8_lossy(&chat.stdout).to_string();
    assert!(chat.contains("Hello from the model"), "{chat}");
    assert_eq!(authorizations(&model)[1], format!("Bearer {KEY}"));
    let output = output + &stop(engine);

    assert!(!output.contains(KEY), "the engine printed the key");
    let found = contains_in_files(data.path(), KEY.as_bytes());
    assert!(found.is_empty(), "the key is in {found:?}");
    let settings: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(settings[0]["api_key_env"], Value::Null);
}

/// The engine's view of one server, by `airlock servers --json`.
fn server_state(data: &Path, home: &Path, service: &SecretService, name: &str) -> Value {
    let out = airlock(data, home, service, &["servers", "--json"], "");
    let servers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    servers
        .into_iter()
        .find(|s| s["name"] == name)
        .map(|s| s["status"].clone())
        .unwrap_or(Value::Null)
}

fn until_state(data: &Path, home: &Path, service: &SecretService, name: &str, state: &str) {
    let started = Instant::now();
    loop {
        let status = server_state(data, home, service, name);
        if status["state"] == state {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{name} never became {state}: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 30: the keyring path of a sign-in's token store was never tested (every test ran
/// where no keyring exists, so the tokens went to the 0600 file). With a real Secret Service
/// the tokens go to it and nowhere in the data directory, the engine reads them back to
/// connect, and logging out deletes them from it.
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_servers_sign_in_lives_in_the_os_keyring_and_logout_forgets_it() {
    use airlock_testkit::oauth_server::{Misbehave, OAuthMcpServer};
    let remote = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(300))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let service = SecretService::start(home.path());
    let engine = serve(data.path(), home.path(), &service);
    let run = |args: &[&str]| airlock(data.path(), home.path(), &service, args, "");

    let added = run(&["servers", "add", "remote", "--url", &remote.url()]);
    let said = String::from_utf8_lossy(&added.stdout).to_string();
    assert!(
        said.contains("remote: signed in (tokens kept in the OS keyring)"),
        "{said}"
    );
    until_state(data.path(), home.path(), &service, "remote", "ready");
    assert!(
        !data.path().join("oauth").exists(),
        "a token file was written although a keyring exists"
    );
    for token in [&b"access-"[..], &b"refresh-"[..]] {
        let found = contains_in_files(data.path(), token);
        assert!(found.is_empty(), "a token is in {found:?}");
    }

    // Read back from the keyring after a restart of the engine, too.
    let output = stop(engine);
    let engine = serve(data.path(), home.path(), &service);
    until_state(data.path(), home.path(), &service, "remote", "ready");

    let out = run(&["servers", "logout", "remote"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("remote: signed out"));
    until_state(
        data.path(),
        home.path(),
        &service,
        "remote",
        airlock_mcp::SIGN_IN_NEEDED,
    );
    let output = output + &stop(engine);
    assert!(
        !output.contains("access-") && !output.contains("refresh-"),
        "the engine printed a token"
    );
}
