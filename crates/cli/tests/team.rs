//! `airlock --engine URL [--token T] team …` against a real `airlock serve`: the first admin is
//! made without a token and gets theirs alone on the last line, an admin adds members, a
//! viewer reads and cannot decide, a token that is no member's is refused; an agent on another
//! machine is connected to the team server with a token of its own, which posts its calls and
//! can neither read the inbox nor decide.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{BIN, Engine, airlock, eventually, ok, token_of};
use serde_json::{Value, json};
use std::path::Path;

#[test]
fn people_reach_a_team_server_with_their_own_tokens() {
    let server_dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(server_dir.path());
    let url = format!("http://{}", engine.addr());
    // The client's own data directory has no engine: every command goes to --engine.
    let client_dir = tempfile::tempdir().unwrap();
    let c = client_dir.path();

    let root = token_of(&ok(c, &["--engine", &url, "team", "init", "root"]));
    let again = airlock(c, &["--engine", &url, "team", "init", "eve"]);
    assert!(!again.status.success(), "a second first admin was made");

    let as_root = ["--engine", url.as_str(), "--token", root.as_str()];
    let add = |name: &str, role: &str| {
        let mut args = as_root.to_vec();
        args.extend(["team", "add", name, "--role", role, "--group", "release"]);
        token_of(&ok(c, &args))
    };
    let viewer = add("vi", "viewer");
    add("ana", "approver");
    let mut members = as_root.to_vec();
    members.extend(["team", "members"]);
    let listed = ok(c, &members);
    assert!(listed.contains("ana\tapprover\trelease"), "{listed}");
    assert!(listed.contains("vi\tviewer\trelease"), "{listed}");

    // A viewer reads and may not change anything.
    let as_viewer = ["--engine", url.as_str(), "--token", viewer.as_str()];
    let mut inbox = as_viewer.to_vec();
    inbox.extend(["inbox", "--json"]);
    assert_eq!(ok(c, &inbox).trim(), "[]");
    let mut pause = as_viewer.to_vec();
    pause.push("pause");
    let refused = airlock(c, &pause);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("viewer"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    // A token that is no member's is refused.
    let wrong = "0".repeat(64);
    let stranger = airlock(c, &["--engine", &url, "--token", &wrong, "inbox"]);
    assert!(!stranger.status.success());
    assert!(
        String::from_utf8_lossy(&stranger.stderr).contains("bearer token"),
        "{}",
        String::from_utf8_lossy(&stranger.stderr)
    );
    drop(engine);
}

/// `airlock ARGS` with `home` as HOME (where the agent's config is written).
fn with_home(data_dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "airlock {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `airlock --engine URL --token ADMIN connect claude-code` on another machine: Claude Code gets
/// a token of its own from the team server and its HTTP hook posts there. Its call waits in the
/// team's inbox until a member decides; its token can neither read the inbox nor decide.
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_on_another_machine_posts_to_the_team_server_with_its_own_token() {
    let server_dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(server_dir.path());
    let url = format!("http://{}", engine.addr());
    let machine = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let c = machine.path();
    let root = token_of(&ok(c, &["--engine", &url, "team", "init", "root"]));
    let as_root = ["--engine", url.as_str(), "--token", root.as_str()];

    let mut connect = as_root.to_vec();
    connect.extend(["connect", "claude-code", "--timeout", "60"]);
    let shown = with_home(c, home.path(), &connect);
    assert!(shown.contains("team server"), "{shown}");
    assert!(
        shown.contains("agents revoke claude-code@"),
        "the token is not this machine's own: {shown}"
    );
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let handler = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(handler["type"], "http", "{settings}");
    assert_eq!(handler["onFailure"], "block", "{settings}");
    let hook_url = handler["url"].as_str().unwrap().to_string();
    assert!(
        hook_url.starts_with(&format!("{url}/v1/agent-calls/hook/claude-code")),
        "the hook does not post to the team server: {hook_url}"
    );
    let header = handler["headers"]["Authorization"].as_str().unwrap();
    let agent_token = header.strip_prefix("Bearer ").unwrap().to_string();
    assert_ne!(
        agent_token, root,
        "the admin's token was written into the agent's config"
    );

    // Claude Code's PreToolUse, as its HTTP hook posts it: held open until someone decides.
    let http = reqwest::Client::new();
    let event = json!({
        "session_id": "remote-1", "cwd": "/srv", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "make deploy"}, "tool_use_id": "toolu_1",
    });
    let posted = tokio::spawn(
        http.post(&hook_url)
            .bearer_auth(&agent_token)
            .json(&event)
            .send(),
    );
    let mut inbox = as_root.to_vec();
    inbox.extend(["inbox", "--json"]);
    let item = eventually("the agent's call in the team's inbox", || {
        let items: Vec<Value> = serde_json::from_str(&ok(c, &inbox)).unwrap();
        items.into_iter().next()
    });
    assert_eq!(item["server"], "claude-code", "{item}");
    let id = item["approval_id"].as_str().unwrap().to_string();

    // Its own token reads nothing and decides nothing on the team server.
    let refused = [
        (reqwest::Method::POST, "/v1/commands/inbox", json!({})),
        (
            reqwest::Method::POST,
            "/v1/commands/decide",
            json!({"decisions": [{"approval_id": id, "decision": {"kind": "approve"}}]}),
        ),
        (reqwest::Method::GET, "/v1/inbox", Value::Null),
        (reqwest::Method::GET, "/v1/events", Value::Null),
    ];
    for (method, path, body) in refused {
        let mut request = http
            .request(method.clone(), format!("{url}{path}"))
            .bearer_auth(&agent_token);
        if !body.is_null() {
            request = request.json(&body);
        }
        let status = request.send().await.unwrap().status();
        assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "{method} {path}");
    }
    assert!(
        !posted.is_finished(),
        "the call was answered before anyone decided"
    );
    let mut still = as_root.to_vec();
    still.extend(["inbox", "--json"]);
    let pending: Vec<Value> = serde_json::from_str(&ok(c, &still)).unwrap();
    assert_eq!(pending.len(), 1, "the agent's token decided its own call");

    // A member decides; the agent's hook reads the answer.
    let mut approve = as_root.to_vec();
    approve.extend(["approve", id.as_str()]);
    ok(c, &approve);
    let answer: Value = posted.await.unwrap().unwrap().json().await.unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );
    drop(engine);
}
