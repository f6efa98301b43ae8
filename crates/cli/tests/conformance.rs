//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/mcp-servers with the Node 22 it needs) run against Airlock's MCP client: the real
//! `airlock` binary driven by tests/conformance/airlock-client.sh, with the scripted model
//! proposing each scenario's tool call and an approver that answers automatically.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): the suite drives Airlock through a shell script, with the
// pinned Node reached through npm's POSIX shim.
#![cfg(unix)]

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

async fn run_scenario(scenario: &str, replies: Vec<Reply>) -> String {
    let modules = root().join("tests/mcp-servers/node_modules");
    assert!(
        modules.join("@modelcontextprotocol/conformance").exists(),
        "run `bash scripts/setup.sh --deps-only` first"
    );
    let model = ScriptedModel::start(replies.clone()).await.unwrap();
    let output_dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(modules.join(".bin/node"));
    command
        .arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"))
        .args([
            "client",
            "--scenario",
            scenario,
            "--timeout",
            "60000",
            "--output-dir",
        ])
        .arg(output_dir.path())
        .arg("--command")
        .arg(format!(
            "bash {}",
            root().join("tests/conformance/airlock-client.sh").display()
        ))
        .env("AIRLOCK_BIN", env!("CARGO_BIN_EXE_airlock"))
        // The script's own `node -e` uses the pinned Node too.
        .env(
            "PATH",
            format!(
                "{}:{}",
                modules.join(".bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        );
    if !replies.is_empty() {
        command.env("AIRLOCK_MODEL_URL", model.base_url());
    }
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    // The suite prints its report on both streams; read them together.
    let stdout = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && stdout.contains("OVERALL: PASSED"),
        "conformance scenario {scenario} failed ({}):\n{stdout}",
        output.status,
    );
    stdout
}

fn call(name: &str, args: serde_json::Value) -> Vec<Reply> {
    vec![
        Reply::ToolCalls(vec![ScriptedCall::new("c1", name, args)]),
        Reply::Text("done".into()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn conformance_initialize() {
    run_scenario("initialize", vec![]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn conformance_tools_call() {
    let stdout = run_scenario(
        "tools_call",
        call("conformance__add_numbers", json!({"a": 2, "b": 3})),
    )
    .await;
    assert!(stdout.contains("Passed: 1/1"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn conformance_elicitation_client_defaults() {
    let stdout = run_scenario(
        "elicitation-sep1034-client-defaults",
        call("conformance__test_client_elicitation_defaults", json!({})),
    )
    .await;
    assert!(stdout.contains("Passed: 5/5"), "{stdout}");
}
