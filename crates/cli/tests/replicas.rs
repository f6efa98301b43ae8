//! Several `airlock serve --database-url` replicas on one PostgreSQL database (a throwaway
//! cluster: testkit). A replica killed with SIGKILL while agents' hooks wait through it: the
//! hooks come back through another replica (as through a load balancer), their request keys find
//! the same items, the surviving replica takes over the dead one's lease and keeps the items its
//! hooks now wait on, and each item is decided once. A replica stopped with SIGSTOP while its
//! call runs, past its lease: the other takes its turn over and finishes it; the stopped one,
//! continued, neither runs the call again nor overwrites what the other recorded.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

mod common;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{Engine, eventually, ok, use_model};
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

/// Sends `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// The session's only tool call as `airlock transcript --json` shows it.
fn only_call(data_dir: &Path, session: &str) -> Value {
    let messages: Value = serde_json::from_str(&ok(
        data_dir,
        &["transcript", "--session", session, "--json"],
    ))
    .unwrap();
    let calls: Vec<Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["calls"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(calls.len(), 1, "{messages}");
    calls[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stopped_past_its_lease_neither_reruns_nor_overwrites_the_turn_taken_over() {
    let url = airlock_testkit::postgres::cluster().database();
    let (a_dir, b_dir, gate) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (runs, go) = (gate.path().join("runs"), gate.path().join("go"));
    // The call runs until the test lets it end: A is stopped in the middle of it.
    let command = format!(
        "echo ran >> '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        runs.display(),
        go.display()
    );
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__run_command",
            json!({ "command": command }),
        )]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let a = replica(a_dir.path(), &url);
    let _b = replica(b_dir.path(), &url);
    use_model(a_dir.path(), &model);

    ok(
        a_dir.path(),
        &["chat", "--session", "s", "--no-wait", "run it"],
    );
    let item = eventually("the call in B's inbox", || {
        pending(b_dir.path()).into_iter().next()
    });
    ok(b_dir.path(), &["approve", &item]);
    eventually("the call running on A", || runs.exists().then_some(()));

    signal(a.pid(), "STOP");
    // A's lease runs out; B takes the turn over: the call A invoked is reported interrupted
    // (not run again) and the turn goes on to its answer.
    eventually("B took over A's turn", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "taken_over" && row["detail"]["work"] == "turn")
    });
    let finished_by_b = eventually("B finished the turn", || {
        let sessions: Vec<Value> =
            serde_json::from_str(&ok(b_dir.path(), &["sessions", "--json"])).unwrap();
        let idle = sessions
            .iter()
            .any(|session| session["name"] == "s" && session["status"] == "idle");
        let call = only_call(b_dir.path(), "s");
        (idle && call["state"] == "failed").then_some(call)
    });

    // The command ends while A is stopped; A continues and finds the call's result.
    std::fs::write(&go, "").unwrap();
    signal(a.pid(), "CONT");
    // A's turn ends there (dropped, or on today's code, driven on from what it held).
    ok(a_dir.path(), &["wait", "--session", "s"]);
    assert_eq!(
        only_call(b_dir.path(), "s"),
        finished_by_b,
        "A overwrote what B recorded of the call"
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap().lines().count(),
        1,
        "the call ran again"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the model was asked from stale state"
    );
    // A found its lease gone and said so.
    eventually("A noticed its lease ran out", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "lease_lost")
    });
}
