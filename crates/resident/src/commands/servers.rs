//! MCP servers in Settings, as the window's commands run them: added, started, failed, imported,
//! their log. (The commands themselves are the table's; this holds their tests with real servers.)

#![allow(clippy::unwrap_used, clippy::expect_used)]
use airlock_core::{ServerConfig, ServerDefault};
use airlock_engine::commands::{Caller, DEFAULT_LOG_LINES, import, preview_import};
use airlock_engine::{Engine, ServerView};
use airlock_protocol::{CommandResult, ErrorCode};

fn list(engine: &Engine) -> CommandResult<Vec<ServerView>> {
    engine.servers().map_err(|e| Caller::Window.error(e))
}

fn save(engine: &Engine, name: &str, config: ServerConfig) -> CommandResult<()> {
    engine
        .add_server(name.trim(), config)
        .map_err(|e| Caller::Window.error(e))
}

fn log_tail(engine: &Engine, name: &str, lines: Option<usize>) -> CommandResult<Vec<String>> {
    engine
        .server_log_tail(name, lines.unwrap_or(DEFAULT_LOG_LINES))
        .map_err(|e| Caller::Window.error(e))
}
use airlock_engine::EngineConfig;
use std::path::Path;
use std::time::Duration;

fn engine(dir: &Path) -> Engine {
    Engine::open(EngineConfig {
        data_dir: dir.to_path_buf(),
        workspace: Some(dir.join("workspace")),
    })
    .unwrap()
}

/// `@modelcontextprotocol/server-everything` over stdio, run by the Node pinned in
/// tests/mcp-servers (installed by `scripts/setup.sh --deps-only`). Unix only: that Node is
/// reached through npm's POSIX shim (docs/PLATFORMS.md).
#[cfg(unix)]
fn everything() -> ServerConfig {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules");
    assert!(
        dir.exists(),
        "the test MCP servers are missing: run `bash scripts/setup.sh --deps-only`"
    );
    ServerConfig::Stdio {
        command: dir.join(".bin/node").display().to_string(),
        args: vec![
            dir.join("@modelcontextprotocol/server-everything/dist/index.js")
                .display()
                .to_string(),
            "stdio".into(),
        ],
        env: Default::default(),
        cwd: None,
    }
}

fn view(engine: &Engine, name: &str) -> ServerView {
    list(engine)
        .unwrap()
        .into_iter()
        .find(|s| s.name == name)
        .expect("the server is listed")
}

/// Waits (up to a minute, for a loaded machine) until the server's state is `state`.
async fn wait_for_state(engine: &Engine, name: &str, state: &str) -> ServerView {
    for _ in 0..600 {
        let server = view(engine, name);
        if server
            .status
            .as_ref()
            .is_some_and(|s| s.state == state && (state != "ready" || s.tools > 0))
        {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "server {name} never became {state}: {:?}",
        view(engine, name).status
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn an_added_server_gets_ready_with_its_tools_and_its_log_tail_shows_its_stderr() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let mcp = airlock_mcp::McpManager::start(&engine);
    save(&engine, "every", everything()).unwrap();
    let ready = wait_for_state(&engine, "every", "ready").await;
    assert_eq!(ready.kind, "stdio");
    assert_eq!(ready.default, ServerDefault::Required, "new servers ask");
    let status = ready.status.unwrap();
    assert!(status.pid.is_some() && status.log.is_some(), "{status:?}");
    assert!(
        engine
            .tool_views()
            .unwrap()
            .iter()
            .any(|t| t.server == "every"),
        "its tools are offered"
    );
    let log = log_tail(&engine, "every", None).unwrap();
    assert!(log.iter().any(|line| line.contains("STDIO")), "{log:?}");

    // Disabled: stopped, tools gone; enabled again: ready again.
    set_enabled(&engine, "every", false);
    let disabled = wait_for_state(&engine, "every", "disabled").await;
    assert!(!disabled.enabled);
    assert!(
        !engine
            .tool_views()
            .unwrap()
            .iter()
            .any(|t| t.server == "every")
    );
    set_enabled(&engine, "every", true);
    wait_for_state(&engine, "every", "ready").await;

    engine
        .set_server_default("every", ServerDefault::NotRequired)
        .unwrap();
    engine.set_server_trust("every", true).unwrap();
    let changed = view(&engine, "every");
    assert_eq!(
        (changed.default, changed.trust_read_only_hints),
        (ServerDefault::NotRequired, true)
    );
    mcp.stop_all();
}

#[cfg(unix)]
fn set_enabled(engine: &Engine, name: &str, enabled: bool) {
    engine.set_server_enabled(name, enabled).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_is_failed_with_its_reason() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let mcp = airlock_mcp::McpManager::start(&engine);
    let mut events = engine.subscribe();
    let missing = data.path().join("no-such-server").display().to_string();
    save(
        &engine,
        "broken",
        ServerConfig::Stdio {
            command: missing,
            args: vec![],
            env: Default::default(),
            cwd: None,
        },
    )
    .unwrap();
    let failed = wait_for_state(&engine, "broken", "failed").await;
    let reason = failed.status.and_then(|s| s.reason).unwrap_or_default();
    assert!(reason.contains("no-such-server"), "{reason}");
    // Each change of its state was announced, so Settings reads the list again.
    let mut announced = 0;
    while let Ok(event) = events.try_recv() {
        if matches!(&event, airlock_engine::EngineEvent::ServersChanged { server } if server == "broken")
        {
            announced += 1;
        }
    }
    assert!(
        announced >= 2,
        "added, then starting and failed: {announced} announcements"
    );
    mcp.stop_all();
}

/// Security finding: an import started every imported command at once (`npx -y …`
/// downloads and runs code). The preview adds and starts nothing and shows what would run.
#[test]
fn an_import_preview_shows_what_would_run_and_adds_nothing() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@evil/pkg\u202e"], "env": {"TOKEN": "secret"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "bad": {"url": "ftp://example.com"}
        }}"#;
    let preview = preview_import(text).unwrap();
    let runs: Vec<(&str, &str)> = preview
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.runs.as_str()))
        .collect();
    assert_eq!(
        runs,
        [
            ("files", "npx -y @evil/pkg\\u{202E}  [env: TOKEN]"),
            (
                "remote",
                "https://example.com/mcp  [headers: Authorization]"
            ),
        ]
    );
    assert_eq!(preview.refused.len(), 1);
    assert!(
        !runs
            .iter()
            .any(|(_, r)| r.contains("secret") || r.contains("Bearer"))
    );
    let names: Vec<String> = engine
        .servers()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(!names.contains(&"files".to_string()), "{names:?}");
}

#[test]
fn import_adds_what_it_can_and_says_why_the_rest_was_refused() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "legacy": {"type": "sse", "url": "https://example.com/sse"},
            "builtin": {"command": "x"}
        }}"#;
    let report = import(&engine, text).unwrap();
    assert_eq!(report.added, ["files", "remote"]);
    let refused: Vec<(&str, &str)> = report
        .refused
        .iter()
        .map(|r| (r.name.as_str(), r.reason.as_str()))
        .collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert_eq!(refused[0].0, "builtin");
    assert!(refused[0].1.contains("built-in"), "{refused:?}");
    assert_eq!(refused[1].0, "legacy");
    assert!(
        refused[1].1.starts_with("the old SSE transport"),
        "{refused:?}"
    );
    let names: Vec<String> = list(&engine).unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["builtin", "files", "remote"]);
    assert_eq!(view(&engine, "remote").kind, "http");

    let not_json = import(&engine, "{mcpServers").unwrap_err();
    assert_eq!(not_json.code, ErrorCode::Invalid);
    assert!(
        not_json.message.starts_with("not valid JSON"),
        "{}",
        not_json.message
    );
    assert_eq!(import(&engine, "[]").unwrap_err().code, ErrorCode::Invalid);
    assert_eq!(
        import(&engine, "{}").unwrap_err().message,
        "the config has no servers"
    );
}

#[test]
fn save_refuses_what_cannot_start_and_edits_keep_the_settings() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let stdio = |command: &str| ServerConfig::Stdio {
        command: command.into(),
        args: vec![],
        env: Default::default(),
        cwd: None,
    };
    let empty = save(&engine, "x", stdio(" ")).unwrap_err();
    assert_eq!(
        (empty.code, empty.message.as_str()),
        (ErrorCode::Invalid, "server 'x': the command is empty")
    );
    let bad_name = save(&engine, "a/b", stdio("true")).unwrap_err();
    assert_eq!(bad_name.code, ErrorCode::Invalid);
    let http = ServerConfig::Http {
        url: "example.com/mcp".into(),
        headers: Default::default(),
    };
    assert!(
        save(&engine, "web", http)
            .unwrap_err()
            .message
            .contains("http://")
    );
    assert!(
        list(&engine).unwrap().iter().all(|s| s.name == "builtin"),
        "nothing refused was stored"
    );

    save(&engine, "tool", stdio("first")).unwrap();
    engine
        .set_server_default("tool", ServerDefault::NotRequired)
        .unwrap();
    save(&engine, "tool", stdio("second")).unwrap();
    let edited = view(&engine, "tool");
    assert_eq!(edited.config["command"], "second");
    assert_eq!(edited.default, ServerDefault::NotRequired);
}

#[test]
fn the_log_of_an_unknown_server_is_an_error_and_a_server_without_one_is_empty() {
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let unknown = log_tail(&engine, "ghost", None).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::UnknownServer);
    assert_eq!(unknown.message, "no server named 'ghost'");
    assert!(log_tail(&engine, "builtin", Some(5)).unwrap().is_empty());
}

/// The sign-in page "opened" by curl, which follows the test server's redirect back to
/// Airlock's loopback listener as a browser would.
#[cfg(unix)]
fn curl_browser(url: &str) -> Result<(), String> {
    std::process::Command::new("curl")
        .args(["-fsSL", "-o", "/dev/null", url])
        .spawn()
        .map(drop)
        .map_err(|e| format!("curl is missing (sudo apt-get install -y curl): {e}"))
}

/// Issue 30: Settings could add a remote server but not sign in to it, and the tray did not
/// say that a server waits for a sign-in. Added as the window adds it, the server waits for a
/// sign-in (and the tray's list names it); the window's sign-in runs the browser, says where
/// the tokens are kept, and the server gets ready with its tools.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_server_added_in_settings_is_signed_in_from_the_window_and_gets_ready() {
    use airlock_testkit::oauth_server::{Misbehave, OAuthMcpServer};
    let remote = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(300))
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let engine = engine(data.path());
    let mcp = airlock_mcp::McpManager::start(&engine);
    let config = ServerConfig::Http {
        url: remote.url(),
        headers: Default::default(),
    };
    save(&engine, "remote", config).unwrap();
    wait_for_state(&engine, "remote", airlock_mcp::SIGN_IN_NEEDED).await;
    assert_eq!(crate::events::servers_to_sign_in(&engine), ["remote"]);

    let said = airlock_api::commands::sign_in_server(&engine, "remote", &curl_browser)
        .await
        .unwrap();
    assert!(
        said.starts_with("Signed in to remote; its tokens are kept in "),
        "{said}"
    );
    let ready = wait_for_state(&engine, "remote", "ready").await;
    assert_eq!(ready.status.unwrap().tools, 1);
    assert!(crate::events::servers_to_sign_in(&engine).is_empty());

    // Only a remote server has a sign-in; an unknown one is named.
    let unknown = airlock_api::commands::sign_in_server(&engine, "ghost", &curl_browser)
        .await
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::UnknownServer);
    save(
        &engine,
        "local",
        ServerConfig::Stdio {
            command: "true".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        },
    )
    .unwrap();
    let local = airlock_api::commands::sign_in_server(&engine, "local", &curl_browser)
        .await
        .unwrap_err();
    assert!(local.message.contains("not a remote server"), "{local:?}");
    mcp.stop_all();
}
