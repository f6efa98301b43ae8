//! Several `airlock serve --database-url` replicas on one PostgreSQL database (a throwaway
//! cluster: testkit). A replica killed with SIGKILL while agents' hooks wait through it: the
//! hooks come back through another replica (as through a load balancer), their request keys find
//! the same items, the surviving replica takes over the dead one's lease and keeps the items its
//! hooks now wait on, and each item is decided once.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

mod common;

use common::{Engine, eventually, ok};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HOOK: &str = env!("CARGO_BIN_EXE_airlock-hook");

/// `airlock serve` on `data_dir`, one replica on the database at `url`.
fn replica(data_dir: &Path, url: &str) -> Engine {
    Engine::start_with_env(data_dir, &[("AIRLOCK_DATABASE_URL", url)])
}

/// Where the hooks' data directory sends them: the replica of `data_dir` (the hooks' folder is
/// a link to it, replaced at once, as a load balancer moves to a live replica).
fn route_hooks(hooks: &Path, data_dir: &Path) {
    let staged = hooks.with_extension("new");
    let _ = std::fs::remove_file(&staged);
    std::os::unix::fs::symlink(data_dir, &staged).unwrap();
    std::fs::rename(&staged, hooks).unwrap();
}

/// Claude Code's hook for one Bash call, waiting up to two minutes.
fn start_hook(hooks: &Path, command: &str, id: &str) -> Child {
    let mut child = Command::new(HOOK)
        .arg("--data-dir")
        .arg(hooks)
        .args(["claude-code", "--timeout", "120"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let event = json!({
        "session_id": "s1", "cwd": "/work", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id,
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    child
}

/// The hook's PreToolUse answer once it exits.
fn answer(mut hook: Child) -> Value {
    let started = Instant::now();
    while hook.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the hook did not answer"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    hook.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let answer: Value = serde_json::from_str(out.trim()).unwrap();
    answer["hookSpecificOutput"].clone()
}

fn pending(data_dir: &Path) -> Vec<String> {
    let items: Vec<Value> = serde_json::from_str(&ok(data_dir, &["inbox", "--json"])).unwrap();
    let mut ids: Vec<String> = items
        .iter()
        .map(|item| item["approval_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn audit(data_dir: &Path) -> Vec<Value> {
    ok(data_dir, &["audit", "--json", "--limit", "1000"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn hooks_waiting_through_a_killed_replica_come_back_through_another_and_are_decided_once() {
    let url = airlock_testkit::postgres::cluster().database();
    let (a_dir, b_dir, links) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let hooks = links.path().join("hooks");
    let a = replica(a_dir.path(), &url);
    let _b = replica(b_dir.path(), &url);
    route_hooks(&hooks, a_dir.path());
    let mut waiting: Vec<Child> = (0..3)
        .map(|n| start_hook(&hooks, &format!("touch K{n}"), &format!("toolu_{n}")))
        .collect();
    // B reads them from the shared database.
    let items = eventually("the three calls in B's inbox", || {
        if let Some(done) = waiting
            .iter_mut()
            .position(|hook| hook.try_wait().unwrap().is_some())
        {
            let answer = answer(waiting.remove(done));
            panic!("a hook answered before any decision: {answer}");
        }
        let ids = pending(b_dir.path());
        (ids.len() == 3).then_some(ids)
    });

    a.kill9();
    route_hooks(&hooks, b_dir.path());
    // A's lease runs out; B takes over what A held and keeps the items whose hooks now wait
    // through it.
    let taken = eventually("B took over A's agents' items", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "taken_over" && row["detail"]["work"] == "agent_item")
    });
    let mut kept: Vec<String> = taken["detail"]["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_string())
        .collect();
    kept.sort();
    assert_eq!(kept, items, "{taken}");
    assert_eq!(
        pending(b_dir.path()),
        items,
        "the same items, none withdrawn"
    );

    for id in &items {
        ok(b_dir.path(), &["approve", id]);
    }
    for hook in waiting {
        let answer = answer(hook);
        assert_eq!(answer["permissionDecision"], "allow", "{answer}");
    }
    let rows = audit(b_dir.path());
    for id in &items {
        let decisions: Vec<&Value> = rows
            .iter()
            .filter(|row| row["approval_id"] == id.as_str())
            .filter(|row| {
                ["approved", "denied", "withdrawn"].contains(&row["action"].as_str().unwrap())
            })
            .collect();
        assert_eq!(decisions.len(), 1, "{id}: {decisions:?}");
        assert_eq!(decisions[0]["action"], "approved");
    }
}
