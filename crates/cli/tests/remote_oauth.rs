//! A remote MCP server behind OAuth, end to end: the real `airlock` engine and CLI, the OAuth
//! test server of airlock-testkit on 127.0.0.1, and the sign-in done in Debian's chromium driven
//! by Playwright (ui/browser/oauth-sign-in.browser.mjs), which follows the authorization page's
//! redirect to Airlock's loopback listener. Then a tool call through the inbox, a token refresh,
//! a refused refresh shown as "sign in again", and a logout.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): chromium and the pinned Node through npm's POSIX shim.
#![cfg(unix)]

mod common;
use common::*;

use airlock_testkit::oauth_server::{Misbehave, OAuthMcpServer};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the test server's access tokens live: short, so that the tool call below needs a
/// refreshed one.
const ACCESS_TTL: Duration = Duration::from_secs(3);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `AIRLOCK_BROWSER` for the sign-in: the Playwright script with chromium.
fn browser() -> String {
    let playwright = root().join("ui/node_modules/playwright-core");
    assert!(
        playwright.exists(),
        "playwright-core is not installed: run `(cd ui && npm install --no-audit --no-fund)` (bash scripts/setup.sh --deps-only does)"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "chromium is not installed: run `sudo apt-get install -y chromium` (bash scripts/setup.sh --deps-only does)"
    );
    format!(
        "{} {}",
        node(),
        root()
            .join("ui/browser/oauth-sign-in.browser.mjs")
            .display()
    )
}

fn state(data_dir: &Path, name: &str, wanted: &str) -> Value {
    eventually(&format!("server {name} {wanted}"), || {
        let status = server(data_dir, name)["status"].clone();
        (status["state"] == wanted).then_some(status)
    })
}

/// Runs `airlock ARGS` with the Playwright browser; returns stdout and what the page said.
fn with_browser(data_dir: &Path, args: &[&str]) -> (String, String) {
    let report = data_dir.join("browser-report.txt");
    let _ = std::fs::remove_file(&report);
    let output = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env("AIRLOCK_BROWSER", browser())
        .env("OAUTH_BROWSER_REPORT", &report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "airlock {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let said = eventually("the browser's report", || {
        std::fs::read_to_string(&report).ok()
    });
    (stdout, said)
}

/// An MCP client (rmcp's) that launched `airlock mcp-proxy NAME`.
async fn proxy_client(
    data_dir: &Path,
    name: &str,
) -> rmcp::service::RunningService<rmcp::service::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ServiceExt as _;
    let mut process = tokio::process::Command::new(BIN);
    process
        .arg("--data-dir")
        .arg(data_dir)
        .args(["mcp-proxy", name]);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(process)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("test-client", "1.0"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    .serve(transport)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn signs_in_in_the_browser_calls_a_tool_survives_a_refresh_and_logs_out() {
    let remote = OAuthMcpServer::start(Misbehave::None, ACCESS_TTL)
        .await
        .unwrap();
    let model = ScriptedModel::start(vec![]).await.unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();

    // Sign-in: `servers add --url` finds that the server wants one and runs it in the browser.
    let (stdout, said) = with_browser(d, &["servers", "add", "remote", "--url", &remote.url()]);
    assert!(
        stdout.contains("remote: signed in (tokens kept in "),
        "{stdout}"
    );
    assert!(said.contains("Signed in. You can close this tab"), "{said}");
    let status = state(d, "remote", "ready");
    assert_eq!(status["tools"], 1, "{status}");
    // The tokens are nowhere Airlock's other files or the API show.
    let listing = ok(d, &["servers", "--json"]);
    assert!(!listing.contains("access-"), "{listing}");

    // The first access token expires; the call needs a refreshed one.
    tokio::time::sleep(ACCESS_TTL + Duration::from_millis(500)).await;
    model.push(Reply::ToolCalls(vec![ScriptedCall::new(
        "c1",
        "remote__whoami",
        json!({}),
    )]));
    model.push(Reply::Text("done".into()));
    ok(d, &["chat", "--session", "s", "--no-wait", "who am I?"]);
    let items = inbox(d, 1);
    assert_eq!(items[0]["kind"], "tool_call", "{items:?}");
    ok(d, &["approve", items[0]["approval_id"].as_str().unwrap()]);
    ok(d, &["wait", "--session", "s"]);
    let transcript = ok(d, &["transcript", "--session", "s"]);
    assert!(transcript.contains("signed in as someone"), "{transcript}");
    assert_eq!(remote.tool_calls(), 1);
    assert!(remote.refreshes() >= 1, "no refresh happened");
    // Nothing the model was sent carries a token.
    let sent = serde_json::to_string(&model.requests()).unwrap();
    assert!(
        !sent.contains("access-") && !sent.contains("refresh-"),
        "{sent}"
    );

    // A stdio-only MCP client reaches the signed-in server through `airlock mcp-proxy`, gated.
    let proxied = proxy_client(d, "remote").await;
    let tools = proxied.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    let call = tokio::spawn(async move {
        let result = proxied
            .call_tool(rmcp::model::CallToolRequestParams::new("whoami"))
            .await;
        (proxied, result)
    });
    let items = inbox(d, 1);
    ok(d, &["approve", items[0]["approval_id"].as_str().unwrap()]);
    let (proxied, result) = call.await.unwrap();
    let result = serde_json::to_string(&result.unwrap()).unwrap();
    assert!(result.contains("signed in as someone"), "{result}");
    assert_eq!(remote.tool_calls(), 2);
    proxied.cancel().await.unwrap();

    // A refused refresh: the server shows "sign in again" instead of failing silently.
    remote.refuse_refreshes();
    remote.revoke_access_tokens();
    ok(d, &["servers", "enable", "remote"]);
    let status = state(d, "remote", airlock_mcp::SIGN_IN_NEEDED);
    assert_eq!(
        status["reason"], "sign in again: airlock servers login remote",
        "{status}"
    );
    let listing = ok(d, &["servers"]);
    assert!(
        listing.contains("remote\thttp\tsign in again: airlock servers login remote"),
        "{listing}"
    );

    // Logging out forgets the tokens; the server asks for a sign-in again.
    let out = ok(d, &["servers", "logout", "remote"]);
    assert!(out.contains("remote: signed out"), "{out}");
    state(d, "remote", airlock_mcp::SIGN_IN_NEEDED);
    assert!(
        !d.join("oauth").exists() || std::fs::read_dir(d.join("oauth")).unwrap().count() == 0,
        "logout left the tokens"
    );
}

/// The "browser" of a sign-in the test does not look at: curl follows the authorization page's
/// redirect to Airlock's loopback listener, as a browser would.
const CURL_BROWSER: &str = "curl -fsSL -o /dev/null";

/// Starts a Claude Desktop config entry exactly as Claude Desktop would (its command, its
/// arguments, its environment) as an MCP client named `claude-ai`.
async fn desktop_client(
    entry: &Value,
) -> rmcp::service::RunningService<rmcp::service::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ServiceExt as _;
    let mut process = tokio::process::Command::new(entry["command"].as_str().unwrap());
    process
        .args(
            entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        )
        .env("AIRLOCK_BROWSER", CURL_BROWSER);
    for (name, value) in entry["env"].as_object().into_iter().flatten() {
        process.env(name, value.as_str().unwrap());
    }
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(process)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("claude-ai", "0.1"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    .serve(transport)
    .await
    .unwrap()
}

/// Issue 30: `connect claude-desktop` left a remote server as it was (its calls never reached
/// Airlock), and `mcp-proxy` could reach only servers configured in Airlock. Now the URL entry
/// runs `airlock mcp-proxy --name NAME --url URL`, which signs in when the server asks (the
/// browser opened by the proxy), gates every call in the inbox, keeps the sign-in for its next
/// start, and `disconnect` puts the URL entry back.
#[tokio::test(flavor = "multi_thread")]
async fn claude_desktops_remote_server_signs_in_and_is_gated_through_mcp_proxy_url() {
    let remote = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(300))
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let home = tempfile::tempdir().unwrap();
    let config_dir = home.path().join(".config");
    let config = config_dir.join("Claude/claude_desktop_config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let theirs = json!({"mcpServers": {"linear": {"type": "http", "url": remote.url()}}});
    std::fs::write(&config, theirs.to_string()).unwrap();
    let airlock_in_home = |args: &[&str]| {
        let out = std::process::Command::new(BIN)
            .arg("--data-dir")
            .arg(d)
            .args(args)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", &config_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let report = airlock_in_home(&["connect", "claude-desktop"]);
    assert!(report.contains("linear"), "{report}");
    let _engine = Engine::start(d);
    let rewritten: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let entry = rewritten["mcpServers"]["linear"].clone();
    let args = entry["args"].to_string();
    assert!(
        args.contains("\"mcp-proxy\"") && args.contains("\"--url\""),
        "{entry}"
    );

    // Twice, as Claude Desktop starts it again: the first start signs in, the second uses the
    // kept sign-in (no second trip to the authorization page).
    for run in 1..=2u64 {
        let desktop = desktop_client(&entry).await;
        let tools = desktop.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 1, "{tools:?}");
        let peer = desktop.peer().clone();
        let call = tokio::spawn(async move {
            peer.call_tool(rmcp::model::CallToolRequestParams::new("whoami"))
                .await
        });
        let items = inbox(d, 1);
        assert_eq!(items[0]["server"], "linear", "{items:?}");
        assert_eq!(items[0]["client"], "claude-ai", "{items:?}");
        assert_eq!(
            remote.tool_calls(),
            run - 1,
            "a call ran before it was approved"
        );
        ok(d, &["approve", items[0]["approval_id"].as_str().unwrap()]);
        let result = serde_json::to_string(&call.await.unwrap().unwrap()).unwrap();
        assert!(result.contains("signed in as someone"), "{result}");
        assert_eq!(remote.tool_calls(), run);
        desktop.cancel().await.unwrap();
        assert_eq!(
            remote.scopes_requested().len(),
            1,
            "signed in again on run {run}"
        );
    }

    airlock_in_home(&["disconnect", "claude-desktop"]);
    let restored: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(restored, theirs);
}

/// `airlock servers add NAME --url URL` signed in with curl as the browser, the engine (started
/// with curl as its browser too) serving its tools.
fn add_signed_in(d: &Path, name: &str, url: &str) {
    let out = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(d)
        .args(["servers", "add", name, "--url", url])
        .env("AIRLOCK_BROWSER", CURL_BROWSER)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 30 (leftover): a server that answers `tools/list` with `403 insufficient_scope` was a
/// failed server restarted in a loop. Now it shows as needing a wider sign-in while an inbox
/// item asks for one; agreed, the wider sign-in runs in the browser (the scopes granted plus
/// the one asked) and the list is asked again, once: its tools are there.
#[tokio::test(flavor = "multi_thread")]
async fn a_list_refused_for_want_of_scope_asks_for_a_wider_sign_in_then_lists_again() {
    let remote = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(300))
        .await
        .unwrap();
    remote.require_scope_for("tools/list", "mcp:admin");
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let _engine = Engine::start_with_env(d, &[("AIRLOCK_BROWSER", CURL_BROWSER)]);
    add_signed_in(d, "remote", &remote.url());

    let status = state(d, "remote", airlock_mcp::SIGN_IN_NEEDED);
    let reason = status["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("wider sign-in") && reason.contains("mcp:admin"),
        "{status}"
    );
    assert_eq!(status["tools"], 0, "{status}");
    let items = inbox(d, 1);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["kind"], "elicitation", "{items:?}");
    assert_eq!(items[0]["server"], "remote", "{items:?}");
    let asked = items[0].to_string();
    assert!(
        asked.contains("list its tools") && asked.contains("mcp:admin"),
        "{asked}"
    );
    assert_eq!(
        remote.scopes_requested().len(),
        1,
        "a wider sign-in before the person agreed"
    );

    ok(
        d,
        &[
            "answer",
            items[0]["approval_id"].as_str().unwrap(),
            "--accept",
            "{}",
        ],
    );
    let status = state(d, "remote", "ready");
    assert_eq!(status["tools"], 1, "{status}");
    let scopes = remote.scopes_requested();
    assert_eq!(scopes.len(), 2, "{scopes:?}");
    let wider: Vec<&str> = scopes[1].split_whitespace().collect();
    assert!(
        wider.contains(&"mcp:tools") && wider.contains(&"mcp:admin"),
        "{scopes:?}"
    );
}

/// The same refusal, and the person declines the wider sign-in: the server says it needs one
/// (never an empty list, never another trip to the browser or another question by itself).
#[tokio::test(flavor = "multi_thread")]
async fn a_declined_wider_sign_in_leaves_the_server_needing_one() {
    let remote = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(300))
        .await
        .unwrap();
    remote.require_scope_for("tools/list", "mcp:admin");
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let _engine = Engine::start_with_env(d, &[("AIRLOCK_BROWSER", CURL_BROWSER)]);
    add_signed_in(d, "remote", &remote.url());
    let items = inbox(d, 1);
    ok(
        d,
        &[
            "answer",
            items[0]["approval_id"].as_str().unwrap(),
            "--decline",
        ],
    );
    let status = eventually("the declined sign-in said", || {
        let status = server(d, "remote")["status"].clone();
        status["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not agreed"))
            .then_some(status)
    });
    assert_eq!(status["state"], airlock_mcp::SIGN_IN_NEEDED, "{status}");
    assert_eq!(status["tools"], 0, "{status}");
    let reason = status["reason"].as_str().unwrap();
    assert!(reason.contains("airlock servers login remote"), "{reason}");
    assert_eq!(remote.scopes_requested().len(), 1, "signed in anyway");
    let items: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
    assert!(items.is_empty(), "asked again by itself: {items:?}");
}
