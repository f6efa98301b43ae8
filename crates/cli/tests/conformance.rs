//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/mcp-servers with the Node 22 it needs) run against Airlock's MCP client: the real
//! `airlock` binary driven by tests/conformance/airlock-client.sh, with the scripted model
//! proposing each scenario's tool call and an approver that answers automatically.
//!
//! Every client scenario the suite lists is run (core, sse-retry, every auth/*, the 2026-07-28
//! ones). Each must pass, except those tests/conformance/README.md lists as unable to pass, with
//! the reason; those must still fail (a listed scenario that passes fails this test, so that the
//! list stays true).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): the suite drives Airlock through a shell script, with the
// pinned Node reached through npm's POSIX shim.
#![cfg(unix)]

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// Scenarios run at once (each starts its own `airlock serve`).
const PARALLEL: usize = 3;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn modules() -> PathBuf {
    let modules = root().join("tests/mcp-servers/node_modules");
    assert!(
        modules.join("@modelcontextprotocol/conformance").exists(),
        "the MCP conformance suite is not installed: run `bash scripts/setup.sh --deps-only`"
    );
    modules
}

fn suite() -> Command {
    let modules = modules();
    let mut command = Command::new(modules.join(".bin/node"));
    command.arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"));
    command
}

/// Every client scenario the pinned suite has, from `conformance list`.
fn client_scenarios() -> Vec<String> {
    let output = suite().arg("list").output().unwrap();
    assert!(
        output.status.success(),
        "conformance list failed: {output:?}"
    );
    let listing = String::from_utf8_lossy(&output.stdout).to_string();
    let mut in_client = false;
    let mut scenarios = Vec::new();
    for line in listing.lines() {
        if !line.starts_with(' ') {
            in_client = line.starts_with("Client scenarios");
            continue;
        }
        if in_client && let Some(name) = line.trim().strip_prefix("- ") {
            scenarios.push(name.split_whitespace().next().unwrap().to_string());
        }
    }
    assert!(scenarios.len() > 20, "unexpected listing:\n{listing}");
    scenarios
}

/// The scenarios tests/conformance/README.md lists as unable to pass (rows `| \`name\` | why |`).
fn known_failures() -> BTreeMap<String, String> {
    let readme = std::fs::read_to_string(root().join("tests/conformance/README.md")).unwrap();
    readme
        .lines()
        .filter_map(|line| {
            let row = line.strip_prefix("| `")?;
            let (name, rest) = row.split_once('`')?;
            let reason = rest
                .trim_start_matches(" |")
                .trim()
                .trim_end_matches('|')
                .trim();
            Some((name.to_string(), reason.to_string()))
        })
        .collect()
}

/// The tool calls the scripted model proposes in a scenario (its server's tools, with the
/// arguments the scenario asks a client to send), in one step.
fn scenario_calls(scenario: &str) -> Vec<(&'static str, serde_json::Value)> {
    match scenario {
        "tools_call" => vec![("conformance__add_numbers", json!({"a": 2, "b": 3}))],
        "elicitation-sep1034-client-defaults" => {
            vec![("conformance__test_client_elicitation_defaults", json!({}))]
        }
        "sse-retry" => vec![("conformance__test_reconnection", json!({}))],
        "http-standard-headers" => vec![("conformance__test_headers", json!({}))],
        // The suite's own value (not π, though it looks like it).
        #[allow(clippy::approx_constant)]
        "http-custom-headers" => vec![
            (
                "conformance__test_custom_headers",
                json!({"region": "us-west1", "priority": 42, "verbose": false, "debug": true,
                       "empty_val": "", "method_val": "test-method", "float_val": 3.14159,
                       "non_ascii_val": "Hello, 世界", "whitespace_val": " padded ",
                       "leading_space_val": " us-west1", "trailing_space_val": "us-west1 ",
                       "internal_space_val": "us west 1", "control_char_val": "line1\nline2",
                       "crlf_val": "line1\r\nline2", "tab_val": "\tindented",
                       "query": "SELECT * FROM users"}),
            ),
            (
                "conformance__test_custom_headers_null",
                json!({"region": "us-east1", "priority": 1, "verbose": null, "query": "SELECT 1"}),
            ),
        ],
        "http-invalid-tool-headers" => {
            vec![("conformance__valid_tool", json!({"region": "us-west1"}))]
        }
        // 2026-07-28's multi round-trip requests: each call comes back asking for input,
        // except the unrelated one (which must not carry another call's answers).
        "sep-2322-client-request-state" => vec![
            ("conformance__test_mrtr_echo_state", json!({})),
            ("conformance__test_mrtr_no_state", json!({})),
            ("conformance__test_mrtr_unrelated", json!({})),
            ("conformance__test_mrtr_no_result_type", json!({})),
        ],
        auth if auth.starts_with("auth/") => vec![("conformance__test-tool", json!({}))],
        _ => Vec::new(),
    }
}

/// The scenario's calls as the scripted model proposes them: fixed arguments, except that
/// `json-schema-2020-12-preservation` echoes back the input schema the model was shown for the
/// rich tool (what reached the model is what the scenario checks).
fn scripted_calls(scenario: &str) -> Vec<ScriptedCall> {
    if scenario == "json-schema-2020-12-preservation" {
        return vec![ScriptedCall::echoing_schema(
            "c0",
            "conformance__json_schema_echo",
            "schema",
            "conformance__json_schema_2020_12_tool",
        )];
    }
    scenario_calls(scenario)
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| ScriptedCall::new(format!("c{i}"), name, args))
        .collect()
}

struct Outcome {
    passed: bool,
    report: String,
}

async fn run_scenario(scenario: String) -> Outcome {
    let calls = scripted_calls(&scenario);
    let replies = if calls.is_empty() {
        Vec::new()
    } else {
        vec![Reply::ToolCalls(calls), Reply::Text("done".into())]
    };
    let model = ScriptedModel::start(replies.clone()).await.unwrap();
    let output_dir = tempfile::tempdir().unwrap();
    let modules = modules();
    let mut command = suite();
    command
        .args([
            "client",
            "--scenario",
            &scenario,
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
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Outcome {
        passed: output.status.success() && report.contains("OVERALL: PASSED"),
        report,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn conformance_every_client_scenario() {
    let all = client_scenarios();
    let mut scenarios = all.clone();
    // AIRLOCK_CONFORMANCE_ONLY=a,b runs only those (while working on them).
    if let Ok(only) = std::env::var("AIRLOCK_CONFORMANCE_ONLY") {
        let only: Vec<&str> = only.split(',').collect();
        scenarios.retain(|s| only.contains(&s.as_str()));
    }
    let known = known_failures();
    for name in known.keys() {
        assert!(
            all.contains(name),
            "tests/conformance/README.md lists '{name}', which the suite does not have"
        );
    }
    let slots = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut runs = Vec::new();
    for scenario in &scenarios {
        let slots = slots.clone();
        let scenario = scenario.clone();
        runs.push(tokio::spawn(async move {
            let _slot = slots.acquire_owned().await.unwrap();
            let outcome = run_scenario(scenario.clone()).await;
            (scenario, outcome)
        }));
    }
    let mut passed = 0;
    let mut wrong = Vec::new();
    for run in runs {
        let (scenario, outcome) = run.await.unwrap();
        let expected_to_pass = !known.contains_key(&scenario);
        eprintln!(
            "conformance {scenario}: {}{}",
            if outcome.passed { "passed" } else { "failed" },
            if expected_to_pass {
                ""
            } else {
                " (listed as unable to pass)"
            }
        );
        if outcome.passed {
            passed += 1;
        }
        if outcome.passed != expected_to_pass {
            wrong.push(if outcome.passed {
                format!("{scenario} passes now: remove it from tests/conformance/README.md")
            } else {
                format!("{scenario} failed:\n{}", outcome.report)
            });
        }
    }
    eprintln!(
        "conformance: {passed}/{} client scenarios passed",
        scenarios.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
