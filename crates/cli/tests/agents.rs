//! The real coding agents Airlock's agent gateway serves (`tests/agents`, pinned and installed by
//! scripts/setup.sh), run headless and offline against the project's scripted model server, with
//! a PreToolUse hook that records what it is sent and answers "deny" with a reason. These pin the
//! contract the gateway's hook is built on (../AGENT-HOOKS facts): what each agent sends on stdin,
//! that a denial's reason reaches the model, and that a denied command does not run.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): the agents start through npm's POSIX shims in
// node_modules/.bin, their hook runs through /bin/sh, and a stuck agent is stopped with `kill -9`.
#![cfg(unix)]

mod common;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A hook command that saves its stdin to `record` and denies with `reason`.
fn recording_deny_hook(record: &Path, event: &str, reason: &str) -> String {
    let answer = json!({"hookSpecificOutput": {
        "hookEventName": event,
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }});
    format!(
        "cat > '{}'; printf '%s' '{}'",
        record.display(),
        answer.to_string().replace('\'', "")
    )
}

/// Runs `command` with a time limit, so a hung agent fails the test instead of hanging it.
fn run_bounded(mut command: Command, limit: Duration) -> std::process::Output {
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("the agent did not finish within {limit:?}");
        }
    }
}

fn text_of(requests: &[Value]) -> String {
    requests
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_sends_its_pre_tool_use_hook_the_call_and_obeys_its_denial() {
    let claude = common::installed_agent("claude");
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "toolu_01",
            "Bash",
            json!({"command": "touch PWNED", "description": "Create a file"}),
        )]),
        Reply::Text("I will not create it.".into()),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let record = home.path().join("hook-input.json");
    let settings = home.path().join("settings.json");
    let hook = recording_deny_hook(&record, "PreToolUse", "Airlock: not in this folder");
    std::fs::write(
        &settings,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": hook, "timeout": 30}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let mut command = Command::new(claude);
    command
        .current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", format!("http://{}", model.addr()))
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args(["-p", "Create a file named PWNED", "--output-format", "json"])
        .arg("--settings")
        .arg(&settings);
    let out = run_bounded(command, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(sent["hook_event_name"], "PreToolUse");
    assert_eq!(sent["tool_name"], "Bash");
    assert_eq!(sent["tool_input"]["command"], "touch PWNED");
    assert_eq!(sent["tool_use_id"], "toolu_01");
    assert!(sent["session_id"].is_string(), "{sent}");
    assert_eq!(
        Path::new(sent["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        project.path().canonicalize().unwrap()
    );
    assert!(
        !project.path().join("PWNED").exists(),
        "a denied command ran"
    );
    let requests = model.requests();
    assert!(
        text_of(&requests).contains("Airlock: not in this folder"),
        "the denial's reason never reached the model: {}",
        text_of(&requests)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_sends_its_pre_tool_use_hook_the_call_and_obeys_its_denial() {
    let codex = common::installed_agent("codex");
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "call_01",
            "exec_command",
            json!({"cmd": "touch PWNED"}),
        )]),
        Reply::Text("I will not create it.".into()),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let project = tempfile::tempdir().unwrap();
    let record = home.path().join("hook-input.json");
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            r#"model = "mock-model"
model_provider = "mock"
[analytics]
enabled = false
[features]
plugins = false
[model_providers.mock]
name = "mock"
base_url = "{}"
wire_api = "responses"
env_key = "MOCK_API_KEY"
"#,
            model.base_url()
        ),
    )
    .unwrap();
    let hook = recording_deny_hook(&record, "PreToolUse", "Airlock: not in this folder");
    std::fs::write(
        codex_home.join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": hook, "timeout": 30}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let mut command = Command::new(codex);
    command
        .current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CODEX_HOME", &codex_home)
        .env("MOCK_API_KEY", "dummy")
        .args(["exec", "--skip-git-repo-check", "-s", "workspace-write"])
        // Hook trust is `airlock connect`'s to record; this test pins what the hook is sent.
        .arg("--dangerously-bypass-hook-trust")
        .arg("-C")
        .arg(project.path())
        .arg("Create a file named PWNED");
    let out = run_bounded(command, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(sent["hook_event_name"], "PreToolUse");
    assert_eq!(sent["tool_name"], "Bash");
    assert_eq!(sent["tool_input"]["command"], "touch PWNED");
    assert_eq!(sent["tool_use_id"], "call_01");
    assert!(sent["session_id"].is_string(), "{sent}");
    assert!(
        !project.path().join("PWNED").exists(),
        "a denied command ran"
    );
    let requests = model.requests();
    assert!(
        text_of(&requests)
            .contains("Command blocked by PreToolUse hook: Airlock: not in this folder"),
        "the denial's reason never reached the model: {}",
        text_of(&requests)
    );
}
