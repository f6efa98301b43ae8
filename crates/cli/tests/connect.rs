//! `airlock connect` inside Airlock: the agent's read-only tools need no approval in Airlock's
//! own tool settings (never the agent's config), with the engine running or not, and a setting
//! the person made is never overwritten.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{BIN, Engine, ok};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// `airlock --data-dir D connect ARGS --json` with HOME in `home`.
fn connect(data_dir: &Path, home: &Path, agent: &str) -> Value {
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(data_dir)
        .args(["connect", agent, "--json"])
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "connect {agent}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn setting_of(data_dir: &Path, tool: &str) -> String {
    let tools: Value = serde_json::from_str(&ok(data_dir, &["tools", "--json"])).unwrap();
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["server"] == "claude-code" && t["tool"] == tool)
        .unwrap_or_else(|| panic!("claude-code/{tool} is not among the tools: {tools}"))["setting"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn connect_makes_claude_codes_reads_not_required_and_keeps_a_persons_choice() {
    let data = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // No engine yet: connect sets them in the store under the engine lock.
    let first = connect(data.path(), home.path(), "claude-code");
    assert_eq!(
        first["tool_settings"]["set"],
        json!(["Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite"]),
        "{first}"
    );
    // The agent's own config holds only the hook: no permissions were written there.
    let config = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
    assert!(!config.contains("permissions"), "{config}");

    let _engine = Engine::start(data.path());
    assert_eq!(setting_of(data.path(), "Read"), "not-required");
    // The person wants to see every Grep.
    ok(
        data.path(),
        &["tools", "set", "claude-code/Grep", "required"],
    );
    // Connecting again, now through the running engine, keeps that choice.
    let again = connect(data.path(), home.path(), "claude-code");
    assert_eq!(again["tool_settings"]["set"], json!([]), "{again}");
    assert_eq!(setting_of(data.path(), "Grep"), "required");
    assert_eq!(setting_of(data.path(), "Read"), "not-required");
}
