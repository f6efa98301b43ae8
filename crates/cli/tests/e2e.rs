//! End to end: the real `airlock` binary (`serve` and the client commands) with a temporary data
//! directory, against the project's scripted model server on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::Command;

mod common;
use common::*;

fn write_call(id: &str, path: &str, content: &str) -> Reply {
    Reply::ToolCalls(vec![ScriptedCall::new(
        id,
        "builtin__write_file",
        json!({"path": path, "content": content}),
    )])
}

/// One step of three `write_file` calls (`c1`..`c3` writing `{prefix}1.txt`..`{prefix}3.txt`).
fn three_writes(prefix: &str) -> Reply {
    Reply::ToolCalls(
        (1..=3)
            .map(|i| {
                ScriptedCall::new(
                    format!("c{i}"),
                    "builtin__write_file",
                    json!({"path": format!("{prefix}{i}.txt"), "content": "x"}),
                )
            })
            .collect(),
    )
}

fn tool_messages(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_with_edited_arguments_through_the_cli() {
    let model = ScriptedModel::start(vec![
        write_call("c1", "a.txt", "original"),
        Reply::Text("written".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path().to_path_buf();
    let waiter = std::thread::spawn({
        let d = d.clone();
        move || airlock(&d, &["chat", "--session", "work", "please write"])
    });
    let items = inbox(&d, 1);
    let item = &items[0];
    for field in [
        "approval_id",
        "tool_call_id",
        "session",
        "server",
        "tool",
        "args",
        "args_hash",
        "created_at",
        "why",
        "kind",
    ] {
        assert!(
            item.get(field).is_some(),
            "inbox item lacks {field}: {item}"
        );
    }
    assert_eq!(item["kind"], "tool_call");
    assert_eq!(item["session"], "work");
    assert_eq!(
        (item["server"].as_str(), item["tool"].as_str()),
        (Some("builtin"), Some("write_file"))
    );
    let id = item["approval_id"].as_str().unwrap();
    assert!(id.len() >= 32);

    // An edit that fails the schema is refused with the schema's message; nothing changes.
    let out = airlock(&d, &["approve", id, "--args", r#"{"path": 5}"#]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("schema") && stderr.contains("content"),
        "{stderr}"
    );
    assert_eq!(inbox(&d, 1).len(), 1);

    ok(
        &d,
        &[
            "approve",
            id,
            "--args",
            r#"{"path": "edited.txt", "content": "edited"}"#,
        ],
    );
    let out = waiter.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "written");
    let workspace = d.join("workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("edited.txt")).unwrap(),
        "edited"
    );
    assert!(!workspace.join("a.txt").exists());
    let tools = tool_messages(&model.requests()[1]);
    assert!(tools[0]["content"].as_str().unwrap().contains("edited.txt"));

    // A second decision on the same id is refused.
    let out = airlock(&d, &["deny", id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already"));
    let transcript = ok(&d, &["transcript", "--session", "work"]);
    assert!(
        transcript.contains("[succeeded] builtin/write_file"),
        "{transcript}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_with_reason_and_batch_in_reverse_order() {
    let model = ScriptedModel::start(vec![three_writes("f"), Reply::Text("ok".into())])
        .await
        .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    assert_eq!(
        ok(d, &["chat", "--session", "b", "--no-wait", "write three"]).trim(),
        "b"
    );
    let items = inbox(d, 3);
    let ids: Vec<&str> = items
        .iter()
        .map(|i| i["approval_id"].as_str().unwrap())
        .collect();
    ok(d, &["deny", ids[2], "--reason", "not f3"]);
    ok(d, &["deny", ids[1], "--reason", "not f2"]);
    ok(d, &["approve", ids[0]]);
    assert_eq!(ok(d, &["wait", "--session", "b"]).trim(), "ok");
    let workspace = d.join("workspace");
    assert!(workspace.join("f1.txt").exists());
    assert!(!workspace.join("f2.txt").exists() && !workspace.join("f3.txt").exists());
    let tools = tool_messages(&model.requests()[1]);
    let f3: Value = serde_json::from_str(tools[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(f3, json!({"type": "execution-denied", "reason": "not f3"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_many_ids_where_one_is_already_decided() {
    let model = ScriptedModel::start(vec![three_writes("m"), Reply::Text("ok".into())])
        .await
        .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    ok(
        d,
        &["chat", "--session", "many", "--no-wait", "write three"],
    );
    let items = inbox(d, 3);
    let ids: Vec<&str> = items
        .iter()
        .map(|i| i["approval_id"].as_str().unwrap())
        .collect();
    ok(d, &["deny", ids[1], "--reason", "not m2"]);

    // One batch: the two pending ones are approved, the denied one is refused on its own.
    let out = airlock(d, &["approve", ids[0], ids[1], ids[2]]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a refused id makes the command fail"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            format!("approved {}", ids[0]),
            format!("approved {}", ids[2])
        ]
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(ids[1]) && stderr.contains("already denied"),
        "{stderr}"
    );

    assert_eq!(ok(d, &["wait", "--session", "many"]).trim(), "ok");
    let workspace = d.join("workspace");
    assert!(workspace.join("m1.txt").exists() && workspace.join("m3.txt").exists());
    assert!(
        !workspace.join("m2.txt").exists(),
        "the denied call stays denied"
    );
    let tools = tool_messages(&model.requests()[1]);
    let m2: Value = serde_json::from_str(tools[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(m2, json!({"type": "execution-denied", "reason": "not m2"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_nine_while_pending_then_restart_and_approve() {
    let model = ScriptedModel::start(vec![
        write_call("c1", "after.txt", "survived"),
        Reply::Text("finished".into()),
    ])
    .await
    .unwrap();
    let (dir, engine) = setup(&model);
    let d = dir.path();
    ok(
        d,
        &[
            "chat",
            "--session",
            "crash",
            "--no-wait",
            "write after a crash",
        ],
    );
    let before = inbox(d, 1);
    engine.kill9();
    let out = airlock(d, &["inbox"]);
    assert_eq!(out.status.code(), Some(1), "a dead engine must be reported");
    assert!(String::from_utf8_lossy(&out.stderr).contains("airlock serve"));

    let _engine = Engine::start(d);
    let after = inbox(d, 1);
    assert_eq!(after[0]["approval_id"], before[0]["approval_id"]);
    assert_eq!(after[0]["args_hash"], before[0]["args_hash"]);
    assert!(!d.join("workspace/after.txt").exists());
    ok(d, &["approve", after[0]["approval_id"].as_str().unwrap()]);
    assert_eq!(ok(d, &["wait", "--session", "crash"]).trim(), "finished");
    assert_eq!(
        std::fs::read_to_string(d.join("workspace/after.txt")).unwrap(),
        "survived"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the model is asked once per step, even across the restart"
    );
}

/// `rules add` of a rule already there changes nothing and says so; `rules remove ID` removes
/// it (an unknown id fails with a clear message).
#[tokio::test(flavor = "multi_thread")]
async fn rules_are_added_once_and_removed_by_id() {
    let model = ScriptedModel::start(vec![]).await.unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    let add = [
        "rules",
        "add",
        "builtin/read_file",
        "/path",
        "secrets/**",
        "deny",
    ];
    let first = ok(d, &add);
    assert!(first.starts_with("added rule "), "{first}");
    let again = ok(d, &add);
    assert!(
        again.contains("already there") && again.contains("nothing changed"),
        "{again}"
    );
    let rows: Vec<Value> = serde_json::from_str(&ok(d, &["rules", "list", "--json"])).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let id = rows[0]["rule"]["id"].as_str().unwrap().to_string();
    assert!(
        first.contains(&id) && again.contains(&id),
        "{first} / {again}"
    );

    assert!(ok(d, &["rules", "remove", &id]).contains(&id));
    assert_eq!(ok(d, &["rules", "list", "--json"]).trim(), "[]");
    let out = airlock(d, &["rules", "remove", &id]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no rule with id"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_commands() {
    let model = ScriptedModel::start(vec![]).await.unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    let tools: Vec<Value> = serde_json::from_str(&ok(d, &["tools", "--json"])).unwrap();
    let effective = |tools: &[Value], name: &str| {
        tools
            .iter()
            .find(|t| t["tool"] == name)
            .map(|t| t["effective"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(effective(&tools, "read_file"), "not-required");
    assert_eq!(effective(&tools, "write_file"), "required");
    ok(d, &["tools", "set", "builtin/write_file", "blocked"]);
    let tools: Vec<Value> = serde_json::from_str(&ok(d, &["tools", "--json"])).unwrap();
    assert_eq!(effective(&tools, "write_file"), "blocked");
    ok(
        d,
        &[
            "rules",
            "add",
            "builtin/read_file",
            "/path",
            "secrets/**",
            "ask",
        ],
    );
    assert!(ok(d, &["rules", "list"]).contains("secrets/**"));
    let out = airlock(
        d,
        &["rules", "add", "builtin/read_file", "path", "a[", "deny"],
    );
    assert_eq!(out.status.code(), Some(1));
    ok(d, &["mode", "set", "deny-all", "--session", "x"]);
    ok(d, &["mode", "set", "ask"]);
    let out = airlock(d, &["mode", "set", "sometimes"]);
    assert_eq!(out.status.code(), Some(2), "usage errors exit 2");
    let out = airlock(d, &["approve", "does-not-exist"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no approval request"));

    // Approving from a notification: read-only tools by default, then the person's choice.
    let approvable = |name: &str| {
        let tools: Vec<Value> = serde_json::from_str(&ok(d, &["tools", "--json"])).unwrap();
        tools.iter().find(|t| t["tool"] == name).unwrap()["approvable_from_notification"]
            .as_bool()
            .unwrap()
    };
    assert!(approvable("read_file"));
    assert!(!approvable("write_file"));
    ok(
        d,
        &["tools", "from-notification", "builtin/write_file", "on"],
    );
    assert!(approvable("write_file"));
    ok(d, &["servers", "from-notification", "builtin", "off"]);
    assert!(!approvable("read_file"));
    assert!(approvable("write_file"), "the tool's own choice wins");
    ok(
        d,
        &[
            "tools",
            "from-notification",
            "builtin/write_file",
            "default",
        ],
    );
    assert!(!approvable("write_file"));
}

#[tokio::test(flavor = "multi_thread")]
async fn pause_holds_every_agent_until_resume() {
    let model = ScriptedModel::start(vec![Reply::Text("after the pause".into())])
        .await
        .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    assert!(ok(d, &["pause"]).contains("agents paused"));
    assert!(ok(d, &["pause"]).contains("(already)"));
    ok(d, &["chat", "--session", "p", "--no-wait", "hello"]);
    // Watched, not slept on: a request reaching the model within the bound fails at once.
    let asked = model
        .wait_for_requests(1, std::time::Duration::from_millis(500))
        .await;
    assert!(
        asked.is_err(),
        "the model was asked while paused: {asked:?}"
    );
    ok(d, &["resume"]);
    assert_eq!(ok(d, &["wait", "--session", "p"]).trim(), "after the pause");
}

#[test]
fn no_engine_running_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = airlock(dir.path(), &["inbox"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no Airlock engine is running"), "{stderr}");
    let out = airlock(dir.path(), &["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_second_engine_on_the_same_data_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _engine = Engine::start(dir.path());
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .arg("serve")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already owns"));
    // `airlock open` reaches the engine, which says plainly that it has no window.
    let out = airlock(dir.path(), &["open"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("has no window"),
        "{out:?}"
    );
}

/// Sends a raw HTTP request and returns the status code.
fn raw_status(addr: &str, request: &str) -> u16 {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_api_refuses_missing_tokens_and_foreign_hosts_and_origins() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path());
    let addr = engine.addr();
    let token = std::fs::read_to_string(dir.path().join("token")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token is owner-only");
    }
    let get = |headers: &str| {
        raw_status(
            &addr,
            &format!("GET /v1/inbox HTTP/1.1\r\n{headers}Connection: close\r\n\r\n"),
        )
    };
    assert_eq!(
        get(&format!(
            "Host: {addr}\r\nAuthorization: Bearer {token}\r\n"
        )),
        200
    );
    assert_eq!(get(&format!("Host: {addr}\r\n")), 401, "missing token");
    assert_eq!(
        get(&format!("Host: {addr}\r\nAuthorization: Bearer wrong\r\n")),
        401,
        "wrong token"
    );
    assert_eq!(
        get(&format!(
            "Host: evil.example\r\nAuthorization: Bearer {token}\r\n"
        )),
        403,
        "foreign Host"
    );
    assert_eq!(
        get(&format!(
            "Host: {addr}\r\nOrigin: https://evil.example\r\nAuthorization: Bearer {token}\r\n"
        )),
        403,
        "foreign Origin"
    );
}

/// A command that exits non-zero is a failed call in the transcript, with its exit code (it
/// was shown as "succeeded").
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_exits_non_zero_is_failed_in_the_transcript() {
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__run_command",
            json!({"command": "echo partial; exit 3"}),
        )]),
        Reply::Text("it failed".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path().to_path_buf();
    let waiter = std::thread::spawn({
        let d = d.clone();
        move || airlock(&d, &["chat", "--session", "work", "run it"])
    });
    let items = inbox(&d, 1);
    ok(&d, &["approve", items[0]["approval_id"].as_str().unwrap()]);
    let out = waiter.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let transcript = ok(&d, &["transcript", "--session", "work"]);
    assert!(
        transcript.contains("[failed, exit 3] builtin/run_command"),
        "{transcript}"
    );
    let json: Value =
        serde_json::from_str(&ok(&d, &["transcript", "--session", "work", "--json"])).unwrap();
    let call = &json[1]["calls"][0];
    assert_eq!(call["state"], "failed", "{call}");
    assert_eq!(call["result"]["exit_code"], 3, "{call}");
}
