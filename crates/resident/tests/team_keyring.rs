//! Issue 31: the person's team token (Settings → Team server) in the real OS keyring. Every
//! other test of `team_link` keeps the token in memory; here the real `airlock-resident` runs
//! on a private D-Bus session with gnome-keyring's Secret Service (`airlock_testkit::
//! secret_service`, as crates/cli/tests/keyring.rs), beside a real team server. The token is
//! kept there and nowhere else (not the data directory's files, not the resident's log), read
//! back after a restart and deleted with the server; without a keyring, or with a locked one,
//! connecting says why, nothing is kept and nothing is decided.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_api::ApiClient;
use airlock_api::discovery;
use airlock_api::host::Host;
use airlock_protocol::{AgentCall, AgentCallState};
use airlock_testkit::secret_service::SecretService;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RESIDENT: &str = env!("CARGO_BIN_EXE_airlock-resident");
const WAIT: Duration = Duration::from_secs(30);
/// A session bus address with no bus behind it: no keyring at all.
const NO_BUS: &str = "unix:path=/nonexistent/airlock-test-bus";
/// The keyring entries' service name (crates/resident/src/team_link.rs).
const KEYRING_SERVICE: &str = "airlock";

#[path = "support/team_server.rs"]
mod support;
use support::{TeamServer, team_server};

/// An agent's call on the team server, waiting for a person; its answer when it comes.
fn agent_call(host: &Host, command: &str) -> tokio::task::JoinHandle<AgentCallState> {
    let engine = host.engine.clone();
    let call: AgentCall = serde_json::from_value(json!({
        "agent": "claude-code", "agent_session": "remote-1", "tool": "Bash",
        "input": {"command": command}, "tool_use_id": command, "wait_ms": 120_000,
    }))
    .unwrap();
    tokio::spawn(async move { engine.agent_call_with_state(call).await.unwrap() })
}

/// The real resident on a data directory, killed when the test is done with it.
struct Resident {
    child: Child,
    data: PathBuf,
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Resident {
    /// Starts the resident on `data` for the person whose home is `home`, on the session bus
    /// at `bus`, its output (debug logs) appended to `log`; waits until its API answers.
    async fn start(data: &Path, home: &Path, bus: &str, log: &Path) -> Resident {
        let output = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let child = Command::new(RESIDENT)
            .arg("--data-dir")
            .arg(data)
            .arg("--workspace")
            .arg(data.join("workspace"))
            .env_remove("AIRLOCK_DATA_DIR")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("HOME", home)
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .env("RUST_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::from(output.try_clone().unwrap()))
            .stderr(Stdio::from(output))
            .spawn()
            .unwrap();
        let mut resident = Resident {
            child,
            data: data.to_path_buf(),
        };
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok((endpoint, _)) = discovery::find(data)
                && endpoint.pid == resident.child.id()
            {
                return resident;
            }
            if let Some(status) = resident.child.try_wait().unwrap() {
                panic!(
                    "the resident ended as it started: {status}: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the resident never answered: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The window's command `name`: `Ok(result)` or `Err(message)`.
    async fn invoke(&self, name: &str, args: Value) -> Result<Value, String> {
        let answer: Value = ApiClient::discover(&self.data)
            .unwrap()
            .post(&format!("/v1/desktop/invoke/{name}"), &args)
            .await
            .unwrap();
        match (answer.get("Ok"), answer.get("Err")) {
            (Some(ok), None) => Ok(ok.clone()),
            (None, Some(error)) => Err(error["message"].as_str().unwrap_or_default().to_string()),
            _ => panic!("{name}: {answer}"),
        }
    }

    /// Waits until the team inbox the window reads holds `count` items; the view.
    async fn until_team_items(&self, count: usize) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let view = self.invoke("team_inbox", json!({})).await.unwrap();
            if view["items"].as_array().map(Vec::len) == Some(count) {
                return view;
            }
            assert!(
                Instant::now() < deadline,
                "the team inbox never held {count} items: {view}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
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
                found.push(path);
            }
        }
    }
    found
}

fn set_args(server: &TeamServer) -> Value {
    json!({"url": server.url, "token": server.ana, "certificate": server.certificate})
}

/// What the agent was answered.
fn verdict(state: &AgentCallState) -> Value {
    serde_json::to_value(state).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_team_token_lives_in_the_os_keyring_alone_and_leaves_with_the_server() {
    let server = team_server().await;
    let root = tempfile::tempdir().unwrap();
    let (data, home, log) = (
        root.path().join("data"),
        root.path().join("home"),
        root.path().join("resident.log"),
    );
    let keyring = SecretService::start(&home);
    let entries = || keyring.items(&[("service", KEYRING_SERVICE)]);

    let resident = Resident::start(&data, &home, keyring.address(), &log).await;
    let view = resident
        .invoke("set_team_server", set_args(&server))
        .await
        .unwrap();
    assert_eq!(view["url"], json!(server.url));
    assert_eq!(entries(), 1, "the token is not in the keyring");
    let saved = std::fs::read_to_string(data.join("team-server.json")).unwrap();
    assert!(saved.contains(&server.url), "{saved}");

    // Decided on the team server with the token, as ana.
    let deploy = agent_call(&server.host, "make deploy");
    let view = resident.until_team_items(1).await;
    let id = view["items"][0]["approval_id"].clone();
    let outcomes = resident
        .invoke(
            "team_decide",
            json!({"decisions": [{"approval_id": id, "decision": {"kind": "approve"}}]}),
        )
        .await
        .unwrap();
    assert_eq!(outcomes[0]["error"], Value::Null, "{outcomes}");
    assert_eq!(verdict(&deploy.await.unwrap())["verdict"], "allow");
    drop(resident);

    // After a restart the token is read back from the keyring, and works.
    let resident = Resident::start(&data, &home, keyring.address(), &log).await;
    let migrate = agent_call(&server.host, "make migrate");
    let view = resident.until_team_items(1).await;
    assert_eq!(view["url"], json!(server.url));
    let id = view["items"][0]["approval_id"].clone();
    let outcomes = resident
        .invoke(
            "team_decide",
            json!({"decisions": [{"approval_id": id, "decision": {"kind": "deny", "reason": "not before the release"}}]}),
        )
        .await
        .unwrap();
    assert_eq!(outcomes[0]["error"], Value::Null, "{outcomes}");
    let denied = verdict(&migrate.await.unwrap());
    assert_eq!(denied["verdict"], "deny", "{denied}");
    assert!(
        denied.to_string().contains("not before the release"),
        "{denied}"
    );
    let audit = server.host.engine.audit(100).unwrap();
    for action in ["approved", "denied"] {
        assert!(
            audit
                .iter()
                .any(|row| row.action == action && row.detail["person"] == "ana"),
            "{action} as ana: {audit:?}"
        );
    }

    // "Ask someone else…" through the window's commands: the server's members, read with the
    // token, and the item handed to root there, as ana; it leaves her inbox, undecided.
    let _review = agent_call(&server.host, "make review");
    let view = resident.until_team_items(1).await;
    let id = view["items"][0]["approval_id"].clone();
    let members = resident
        .invoke("team_server_members", json!({}))
        .await
        .unwrap();
    let mut names: Vec<&str> = members
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|member| member["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["ana", "root"]);
    assert_eq!(
        resident
            .invoke(
                "team_delegate",
                json!({"approvalId": id, "to": "root", "note": "yours"}),
            )
            .await,
        Ok(Value::Null)
    );
    resident.until_team_items(0).await;
    let still = server.host.engine.inbox().unwrap();
    assert_eq!(still.len(), 1, "{still:?}");
    assert_eq!(json!(still[0].approval_id), id);

    // Disconnected: the keyring's entry and the file go.
    assert_eq!(
        resident.invoke("forget_team_server", json!({})).await,
        Ok(json!(true))
    );
    assert_eq!(entries(), 0, "the token is still in the keyring");
    assert!(!data.join("team-server.json").exists());
    drop(resident);

    // Nowhere else: not in the data directory's files (the store and its WAL included), not in
    // the resident's log.
    let token = server.ana.as_bytes();
    assert_eq!(files_holding(&data, token), Vec::<PathBuf>::new());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.is_empty(), "the resident logged nothing");
    assert!(
        !logged.contains(&server.ana),
        "the resident logged the token"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_keyring_or_with_a_locked_one_connecting_says_why_and_nothing_is_decided() {
    let server = team_server().await;
    let root = tempfile::tempdir().unwrap();
    let (data, home, log) = (
        root.path().join("data"),
        root.path().join("home"),
        root.path().join("resident.log"),
    );
    let waiting = agent_call(&server.host, "make deploy");
    let until_routed = Instant::now() + WAIT;
    while server.host.engine.inbox().unwrap().is_empty() {
        assert!(Instant::now() < until_routed, "the call never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pending = server.host.engine.inbox().unwrap()[0].approval_id.clone();
    let decide = json!({"decisions": [{"approval_id": pending, "decision": {"kind": "approve"}}]});

    // No keyring at all (no Secret Service reachable): the server accepted the token, but it is
    // not kept anywhere else instead, and nothing is set.
    let resident = Resident::start(&data, &home, NO_BUS, &log).await;
    let refused = resident
        .invoke("set_team_server", set_args(&server))
        .await
        .unwrap_err();
    assert!(
        refused.contains("the OS keyring cannot keep the team token")
            && refused.contains("Secret Service"),
        "{refused}"
    );
    assert!(!data.join("team-server.json").exists());
    assert_eq!(
        resident.invoke("team_inbox", json!({})).await,
        Ok(Value::Null)
    );
    let not_set = resident.invoke("team_decide", decide.clone()).await;
    assert!(
        not_set
            .as_ref()
            .is_err_and(|message| message.contains("no team server is set")),
        "{not_set:?}"
    );
    drop(resident);

    // A keyring locked after the token was kept (a screen lock), with nobody to unlock it: the
    // resident starts without the server, says why in its log, and decides nothing; connecting
    // again says the keyring refused.
    let keyring = SecretService::start(&home);
    let resident = Resident::start(&data, &home, keyring.address(), &log).await;
    resident
        .invoke("set_team_server", set_args(&server))
        .await
        .unwrap();
    drop(resident);
    keyring.lock();
    std::fs::write(&log, "").unwrap();
    let resident = Resident::start(&data, &home, keyring.address(), &log).await;
    assert_eq!(
        resident.invoke("team_inbox", json!({})).await,
        Ok(Value::Null)
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("the team server is not set") && logged.contains("OS keyring"),
        "{logged}"
    );
    let not_set = resident.invoke("team_decide", decide.clone()).await;
    assert!(not_set.is_err(), "{not_set:?}");
    let refused = resident
        .invoke("set_team_server", set_args(&server))
        .await
        .unwrap_err();
    assert!(refused.contains("OS keyring"), "{refused}");
    drop(resident);

    // Nothing was decided: the call still waits on the server.
    assert_eq!(
        server
            .host
            .engine
            .inbox()
            .unwrap()
            .iter()
            .map(|item| item.approval_id.clone())
            .collect::<Vec<_>>(),
        [pending]
    );
    assert!(!waiting.is_finished());
    waiting.abort();
    assert!(!std::fs::read_to_string(&log).unwrap().contains(&server.ana));
}
