//! What the hostile-input suites share: a real host whose session `s` waits on one write_file
//! request (to `workspace/target.txt`), the scripted model's next answer "done".
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use airlock_api::host::Host;
use airlock_engine::{InboxItem, ProviderSettings};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub struct Waiting {
    pub host: Host,
    pub item: InboxItem,
    pub workspace: PathBuf,
    pub token: String,
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
    Waiting {
        host,
        item: item.expect("a pending request"),
        workspace,
        token,
        _model: model,
        _dir: dir,
    }
}
