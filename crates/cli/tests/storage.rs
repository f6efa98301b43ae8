//! Storage faults: the disk refuses the sync of a decision (fdatasync fails with EIO), or the
//! disk is full (every write and sync fails with ENOSPC), injected into the running engine with
//! strace. The approval is refused and the call does not run;
//! the engine says it can no longer record decisions and refuses every further one; after a
//! restart the approval — which may have reached the disk although its commit failed — is
//! shown as not confirmed, and its call never runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Linux only: the faults are injected with strace.
#![cfg(target_os = "linux")]

mod common;

use airlock_testkit::faults::{DISK_FULL, Fault, SYNC_FAILS, inject, require_strace};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{Engine, airlock, eventually, inbox, ok, setup};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_the_disk_refuses_never_runs_and_stops_the_engine_deciding() {
    a_refused_decision_never_runs(SYNC_FAILS).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_on_a_full_disk_never_runs_and_stops_the_engine_deciding() {
    a_refused_decision_never_runs(DISK_FULL).await;
}

async fn a_refused_decision_never_runs(fault: Fault) {
    require_strace();
    let write = |id: &str, path: &str| {
        Reply::ToolCalls(vec![ScriptedCall::new(
            id,
            "builtin__write_file",
            json!({"path": path, "content": "x"}),
        )])
    };
    let model = ScriptedModel::start(vec![write("c1", "refused.txt"), write("c2", "second.txt")])
        .await
        .unwrap();
    let (dir, engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--no-wait", "--session", "a", "write"]);
    ok(d, &["chat", "--no-wait", "--session", "b", "write"]);
    let items = inbox(d, 2);
    let id_of = |session: &str| {
        items.iter().find(|i| i["session"] == session).unwrap()["approval_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (first, second) = (id_of("a"), id_of("b"));

    let tracer = inject(engine.pid(), fault);
    let out = airlock(d, &["approve", &first]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "the refused approval was acknowledged"
    );
    assert!(
        stderr.contains("disk") || stderr.contains("I/O"),
        "{stderr}"
    );
    // The engine says it can no longer record decisions, and refuses every further one.
    let out = airlock(d, &["approve", &second]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success());
    assert!(
        stderr.contains("can no longer record decisions"),
        "{stderr}"
    );
    let token = std::fs::read_to_string(d.join("token")).unwrap();
    let status: Value = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("http://{}/v1/status", engine.addr()))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(status["storage_error"].is_string(), "{status}");
    drop(tracer);
    assert!(!d.join("workspace/refused.txt").exists());
    assert!(!d.join("workspace/second.txt").exists());

    // Restarted: whatever reached the disk, the refused approval's call never runs.
    engine.kill9();
    model.push(Reply::Text("after the restart".into()));
    let _engine = Engine::start(d);
    eventually("session a settled", || {
        let transcript: Value =
            serde_json::from_str(&ok(d, &["transcript", "--session", "a", "--json"])).ok()?;
        let state = transcript.as_array()?.get(1)?["calls"][0]["state"].clone();
        (state != "running" && state != "approved").then_some(state)
    });
    assert!(
        !d.join("workspace/refused.txt").exists(),
        "a refused approval ran"
    );
    let audit = ok(d, &["audit", "--json", "--limit", "1000"]);
    assert!(!audit.contains("\"call_succeeded\""), "{audit}");
    let pending: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
    let first_pending = pending.iter().any(|i| i["approval_id"] == first.as_str());
    eprintln!(
        "after the restart the refused approval was {}",
        if first_pending {
            "pending again"
        } else {
            "marked not confirmed"
        }
    );
    // Either the refused approval never reached the disk (it waits again) or it did and is
    // marked not confirmed.
    assert!(
        first_pending || audit.contains("decision_unconfirmed"),
        "neither pending nor marked unconfirmed: {audit}"
    );
}
