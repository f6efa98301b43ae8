//! The window's way in, over the real local API of a real engine (HTTP, the token, a scripted
//! model): every invoke is one of the commands or refused before anything runs, a decision made
//! through it is the engine's, and a window is open exactly while its event stream is — which is
//! also how it hears where to go.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_api::ApiClient;
use airlock_api::host::Host;
use airlock_protocol::commands::{Surface, names_for};
use airlock_resident::autostart::LoginEntry;
use airlock_resident::desktop_api;
use airlock_resident::shell::Shell;
use airlock_resident::window::Windows;
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
#[cfg(unix)]
use futures::StreamExt;
use serde_json::{Value, json};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

struct Resident {
    _host: Host,
    shell: Arc<Shell>,
    api: ApiClient,
}

/// A resident whose windows are started with `window` (a program and its arguments).
async fn resident(data: &Path, window: Option<(std::path::PathBuf, Vec<String>)>) -> Resident {
    let made: Arc<OnceLock<Arc<Shell>>> = Arc::default();
    let slot = made.clone();
    let (host, served) = Host::start_with(
        data,
        Some(data.join("workspace")),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        Box::new(move |engine, addr| {
            let shell = Arc::new(Shell::new(
                engine.clone(),
                addr,
                LoginEntry::unavailable(),
                Windows::new(window),
            ));
            let _ = slot.set(shell.clone());
            desktop_api::routes(shell)
        }),
    )
    .await
    .unwrap();
    tokio::spawn(served);
    let shell = made.get().cloned().unwrap();
    let api = ApiClient::discover(data).unwrap();
    Resident {
        _host: host,
        shell,
        api,
    }
}

async fn invoke(api: &ApiClient, command: &str, args: Value) -> Value {
    api.post(&format!("/v1/desktop/invoke/{command}"), &args)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_decision_through_the_windows_invoke_is_the_engines_and_bad_invokes_run_nothing() {
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__write_file",
            json!({"path": "a.txt", "content": "from the window"}),
        )]),
        Reply::Text("written".into()),
    ])
    .await
    .unwrap();
    let resident = resident(data.path(), None).await;
    let api = &resident.api;
    let provider = json!({"base_url": model.base_url(), "model": "m", "stream": false});
    let set = invoke(api, "set_provider", json!({"provider": provider})).await;
    assert_eq!(set, json!({"Ok": null}));
    invoke(
        api,
        "send_message",
        json!({"session": "s", "text": "write it"}),
    )
    .await;
    let mut items = Value::Null;
    for _ in 0..100 {
        items = invoke(api, "inbox", json!({})).await["Ok"].clone();
        if items.as_array().is_some_and(|i| !i.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let item = items[0].clone();
    let approval_id = item["approval_id"].as_str().unwrap().to_string();

    // Refused before anything runs: an unknown command, a missing or malformed argument.
    let unknown = invoke(api, "run_anything", json!({})).await;
    assert_eq!(unknown["Err"]["code"], "invalid", "{unknown}");
    let missing = invoke(api, "decide", json!({"channel": "inbox"})).await;
    assert_eq!(missing["Err"]["code"], "invalid", "{missing}");
    let malformed = invoke(
        api,
        "decide",
        json!({"decisions": [{"approval_id": approval_id, "decision": "yes"}], "channel": "inbox"}),
    )
    .await;
    assert_eq!(malformed["Err"]["code"], "invalid", "{malformed}");
    // A batch as large as "Approve all" on 20,000 items (~2.7 MB) is read whole (not refused for its
    // size): each unknown id is refused on its own, and nothing else is decided.
    let many: Vec<Value> = (0..20_000)
        .map(|i| json!({"approval_id": format!("apr_unknown_{i:06}"), "decision": {"kind": "approve"}, "args_hash": "0".repeat(64)}))
        .collect();
    let large = invoke(
        api,
        "decide",
        json!({"decisions": many, "channel": "inbox"}),
    )
    .await;
    let outcomes = large["Ok"].as_array().expect("an answer per item");
    assert_eq!(outcomes.len(), 20_000);
    assert!(outcomes.iter().all(|o| o["error"].is_object()));
    // A stale hash is the engine's refusal, per item.
    let stale = invoke(
        api,
        "decide",
        json!({"decisions": [{"approval_id": approval_id, "decision": {"kind": "approve"}, "args_hash": "0".repeat(64)}], "channel": "inbox"}),
    )
    .await;
    assert!(stale["Ok"][0]["error"].is_object(), "{stale}");
    assert!(!data.path().join("workspace/a.txt").exists());
    let still = invoke(api, "inbox", json!({})).await;
    assert_eq!(still["Ok"].as_array().map(Vec::len), Some(1), "{still}");

    // Approved with the hash it was shown with: the call runs, audited as the inbox's.
    let approved = invoke(
        api,
        "decide",
        json!({"decisions": [{"approval_id": approval_id, "decision": {"kind": "approve"}, "args_hash": item["args_hash"]}], "channel": "inbox"}),
    )
    .await;
    assert_eq!(approved["Ok"][0]["error"], Value::Null, "{approved}");
    resident.shell.engine.wait_turn("s").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(data.path().join("workspace/a.txt")).unwrap(),
        "from the window"
    );
    let audit = invoke(api, "audit", json!({"limit": 10})).await;
    assert!(
        audit["Ok"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["actor"] == "inbox" && row["action"] == "approved"),
        "{audit}"
    );

    // Every command the UI calls is the window's in the one table.
    let window_commands = names_for(Surface::Window);
    let api_ts = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/lib/api.ts"),
    )
    .unwrap();
    let called: Vec<&str> = api_ts
        .split("call(")
        .skip(1)
        .filter_map(|rest| rest.split('\'').nth(1))
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    assert!(called.len() > 40, "{called:?}");
    for name in called {
        assert!(
            window_commands.contains(&name),
            "the UI calls `{name}`, which is not a command of the window"
        );
    }
}

/// The window adds a rule once (an identical one says it was there) and removes it by id; an
/// unknown id is `unknown_rule`.
#[tokio::test]
async fn the_window_adds_a_rule_once_and_removes_it() {
    let data = tempfile::tempdir().unwrap();
    let resident = resident(data.path(), None).await;
    let api = &resident.api;
    let rule = json!({
        "server": "builtin", "tool": "read_file", "pointer": "/path",
        "pattern": {"kind": "glob", "pattern": "secrets/**"}, "effect": "deny",
    });
    let first = invoke(api, "add_rule", rule.clone()).await;
    assert_eq!(first["Ok"]["already_existed"], false, "{first}");
    let again = invoke(api, "add_rule", rule).await;
    assert_eq!(again["Ok"]["already_existed"], true, "{again}");
    let id = first["Ok"]["id"].clone();
    assert_eq!(again["Ok"]["id"], id);
    assert_eq!(resident.shell.engine.rules().unwrap().len(), 1);

    let removed = invoke(api, "remove_rule", json!({"id": id})).await;
    assert_eq!(removed, json!({"Ok": null}));
    assert!(resident.shell.engine.rules().unwrap().is_empty());
    let unknown = invoke(api, "remove_rule", json!({"id": id})).await;
    assert_eq!(unknown["Err"]["code"], "unknown_rule", "{unknown}");
}

/// Reads the next event's name and data from a window's stream.
#[cfg(unix)]
async fn next_event(
    events: &mut (
             impl futures::Stream<
        Item = Result<
            eventsource_stream::Event,
            eventsource_stream::EventStreamError<reqwest::Error>,
        >,
    > + Unpin
         ),
) -> (String, Value) {
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .unwrap();
    (event.event, serde_json::from_str(&event.data).unwrap())
}

// Unix: the stand-in for a window process is `/bin/sh`.
#[cfg(unix)]
#[tokio::test]
async fn a_window_is_open_while_it_listens_and_a_new_one_lands_where_it_was_asked() {
    let data = tempfile::tempdir().unwrap();
    let started = data.path().join("window-started");
    // "Starting a window" here writes a file: what matters is that the resident starts one.
    let window = (
        std::path::PathBuf::from("/bin/sh"),
        vec![
            "-c".to_string(),
            format!("echo started >> '{}'", started.display()),
        ],
    );
    let resident = resident(data.path(), Some(window)).await;
    let (api, shell) = (&resident.api, &resident.shell);
    let view = |v: Value| (v["open"].clone(), v["landed"].clone());

    // No window: opening one on an item starts a window process, and its page takes the item.
    shell.open_inbox(Some("apr_1".into()));
    for _ in 0..100 {
        if started.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started.exists(), "no window was started");
    let events = api.stream("/v1/desktop/events").await.unwrap();
    let mut events = eventsource_stream::EventStream::new(events.bytes_stream());
    for _ in 0..100 {
        let windows: Value = api.get("/v1/desktop/windows").await.unwrap();
        if windows["open"] == json!(1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let taken = invoke(api, "take_navigation", json!({})).await;
    assert_eq!(
        taken["Ok"],
        json!({"screen": "inbox", "approval_id": "apr_1"})
    );
    let windows: Value = api.get("/v1/desktop/windows").await.unwrap();
    assert_eq!(
        view(windows),
        (json!(1), json!({"screen": "inbox", "approval_id": "apr_1"}))
    );

    // Open: asked again, it is shown and told where to go; no second window starts.
    shell.open_inbox(Some("apr_2".into()));
    assert_eq!(next_event(&mut events).await, ("show".into(), Value::Null));
    assert_eq!(
        next_event(&mut events).await,
        (
            "navigate".into(),
            json!({"screen": "inbox", "approval_id": "apr_2"})
        )
    );
    // Engine events reach it as they are.
    shell.engine.set_paused(true).unwrap();
    let (name, data_) = next_event(&mut events).await;
    assert_eq!(name, "engine-event");
    assert_eq!(data_["type"], "paused", "{data_}");
    // Starting a window happens within `open_inbox`, which has returned: counted, not waited for.
    let windows: Value = api.get("/v1/desktop/windows").await.unwrap();
    assert_eq!(
        windows["windows_started"],
        json!(1),
        "a second window was started while one was open: {windows}"
    );

    // Closed (its stream ends): no window is open, and Quit tells open windows to close.
    drop(events);
    for _ in 0..100 {
        let windows: Value = api.get("/v1/desktop/windows").await.unwrap();
        if windows["open"] == json!(0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let windows: Value = api.get("/v1/desktop/windows").await.unwrap();
    assert_eq!(windows["open"], json!(0), "{windows}");
    let events = api.stream("/v1/desktop/events").await.unwrap();
    let mut events = eventsource_stream::EventStream::new(events.bytes_stream());
    for _ in 0..100 {
        if shell.windows.open_count() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shell.windows.close_all();
    assert_eq!(next_event(&mut events).await, ("quit".into(), Value::Null));
}
