//! `airlock --engine URL [--token T] team …` against a real `airlock serve`: the first admin is
//! made without a token and gets theirs alone on the last line, an admin adds members, a
//! viewer reads and cannot decide, a token that is no member's is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Engine, airlock, ok};

/// The token a `team init` / `team add` printed: alone on its last line.
fn token_of(out: &str) -> String {
    let token = out.lines().last().unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "not a token alone on the last line: {out}");
    token
}

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
