//! Signing in to a remote MCP server (crates/mcp/src/oauth.rs) against the OAuth test server of
//! airlock-testkit on 127.0.0.1: the whole flow with a scripted "browser" (an HTTP client that
//! follows the authorization page's redirect to Airlock's loopback listener), the token refresh,
//! and each bad input refused with a clear message and nothing stored.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_mcp::oauth::{self, ClientIdentity, OAuthError, TokenStore};
use airlock_testkit::oauth_server::{Misbehave, OAuthMcpServer};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A "browser": follows the authorization URL's redirects like a real one (the last hop is
/// Airlock's loopback listener), in the background as a real browser would.
fn scripted_browser(
    visited: Arc<Mutex<Vec<String>>>,
) -> impl Fn(&str) -> Result<(), String> + Send + Sync {
    move |url: &str| {
        visited.lock().unwrap().push(url.to_string());
        let url = url.to_string();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    }
}

async fn sign_in(
    server: &OAuthMcpServer,
    store: &TokenStore,
    timeout: Duration,
) -> Result<Vec<String>, OAuthError> {
    let visited = Arc::new(Mutex::new(Vec::new()));
    let browser = scripted_browser(visited.clone());
    let _ = server;
    oauth::sign_in(
        store,
        &ClientIdentity::default(),
        &browser,
        &|_| {},
        timeout,
    )
    .await?;
    let visited = visited.lock().unwrap().clone();
    Ok(visited)
}

fn nothing_stored(dir: &std::path::Path, store: &TokenStore) {
    assert!(!store.is_signed_in(), "a refused sign-in kept a token");
    assert!(
        !dir.join("oauth").exists() || std::fs::read_dir(dir.join("oauth")).unwrap().count() == 0,
        "a refused sign-in left a file"
    );
}

#[tokio::test]
async fn signs_in_with_pkce_and_the_narrowest_scope_and_keeps_the_tokens() {
    let server = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(3600))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path(), "remote", &server.url());
    assert!(!store.is_signed_in());
    let visited = sign_in(&server, &store, Duration::from_secs(30))
        .await
        .unwrap();
    let auth_url = url::Url::parse(&visited[0]).unwrap();
    let query: std::collections::HashMap<_, _> = auth_url.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query["redirect_uri"].starts_with("http://127.0.0.1:"));
    assert!(query.contains_key("state"));
    assert_eq!(query["resource"], server.url());
    // The scope the server's challenge asked for, not everything its metadata lists.
    assert_eq!(server.scopes_requested(), vec!["mcp:tools".to_string()]);
    assert!(store.is_signed_in());
    let client = oauth::authorized_client(&store).await.unwrap();
    assert!(client.is_some());
    assert!(!oauth::needs_sign_in(&store).await);

    store.forget().unwrap();
    assert!(!store.is_signed_in());
    assert!(oauth::needs_sign_in(&store).await);
}

/// A sign-in to a server that misbehaves as `misbehave` says: refused with an error that says
/// `why`, and nothing kept. Returns the server and the data directory for further checks.
async fn refused(
    misbehave: Misbehave,
    wait: Duration,
    why: &str,
) -> (OAuthMcpServer, tempfile::TempDir) {
    let server = OAuthMcpServer::start(misbehave, Duration::from_secs(3600))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path(), "remote", &server.url());
    let error = sign_in(&server, &store, wait).await.unwrap_err();
    assert!(error.to_string().contains(why), "{error}");
    nothing_stored(dir.path(), &store);
    (server, dir)
}

#[tokio::test]
async fn a_redirect_elsewhere_is_refused_and_nothing_stored() {
    refused(
        Misbehave::RedirectElsewhere,
        Duration::from_secs(3),
        "did not come back to Airlock",
    )
    .await;
}

#[tokio::test]
async fn a_callback_with_another_state_is_refused_and_nothing_stored() {
    refused(
        Misbehave::WrongState,
        Duration::from_secs(30),
        "`state` is not the one",
    )
    .await;
}

#[tokio::test]
async fn a_token_for_another_resource_is_refused_and_nothing_stored() {
    refused(
        Misbehave::TokenForAnotherResource,
        Duration::from_secs(30),
        "issued for https://another.example.com/mcp",
    )
    .await;
}

#[tokio::test]
async fn a_plain_http_endpoint_off_loopback_is_refused_and_nothing_stored() {
    let (server, dir) = refused(
        Misbehave::PlainHttpTokenEndpoint,
        Duration::from_secs(30),
        "the token endpoint http://auth.example.com/token is plain HTTP",
    )
    .await;

    // A server itself on plain HTTP off loopback is refused once it asks for a sign-in, before
    // any metadata is read or anything sent to it. (0.0.0.0 reaches this machine on Linux
    // without being a loopback address: it stands for a host elsewhere, without a network.)
    let elsewhere = server.url().replace("127.0.0.1", "0.0.0.0");
    let remote = TokenStore::new(dir.path(), "remote", &elsewhere);
    let error = sign_in(&server, &remote, Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("is plain HTTP"), "{error}");
    nothing_stored(dir.path(), &remote);
}

#[tokio::test]
async fn garbage_metadata_is_refused_and_nothing_stored() {
    refused(
        Misbehave::GarbageMetadata,
        Duration::from_secs(30),
        "sign-in metadata is unusable",
    )
    .await;
}

/// Issue 30 (auth/client-credentials-*): a machine client signs in with the client-credentials
/// grant, no browser; a wrong secret is refused with nothing kept; when the server refuses its
/// token (ended, revoked), it gets a new one by itself instead of waiting for a person.
#[tokio::test]
async fn a_machine_client_signs_in_without_a_browser_and_renews_its_own_token() {
    use airlock_testkit::oauth_server::{MACHINE_CLIENT_ID, MACHINE_SECRET};
    let server = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(3600))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path(), "machine", &server.url());
    let client = |secret: &str| oauth::MachineClient {
        client_id: MACHINE_CLIENT_ID.into(),
        secret: oauth::MachineSecret::ClientSecret(secret.into()),
    };
    let refused = oauth::sign_in_machine(&store, &client("wrong"))
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("refused Airlock's client credentials"),
        "{refused}"
    );
    nothing_stored(dir.path(), &store);

    oauth::sign_in_machine(&store, &client(MACHINE_SECRET))
        .await
        .unwrap();
    assert!(store.is_signed_in());
    assert_eq!(server.machine_grants(), 1);
    assert!(oauth::authorized_client(&store).await.unwrap().is_some());

    server.revoke_access_tokens();
    assert!(
        !oauth::needs_sign_in(&store).await,
        "a machine client waited for a person"
    );
    assert_eq!(server.machine_grants(), 2);
}

/// Issue 30 (auth/scope-step-up): the sign-in for a wider scope after a `403
/// insufficient_scope` asks for the scopes granted so far plus the one refused, as the same
/// client (no second registration).
#[tokio::test]
async fn a_wider_sign_in_keeps_the_granted_scopes_and_the_client() {
    let server = OAuthMcpServer::start(Misbehave::None, Duration::from_secs(3600))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path(), "remote", &server.url());
    let first = sign_in(&server, &store, Duration::from_secs(30))
        .await
        .unwrap();
    let base = server.url().trim_end_matches("/mcp").to_string();
    let challenge = format!(
        r#"Bearer error="insufficient_scope", scope="mcp:admin", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
    );
    let visited = Arc::new(Mutex::new(Vec::new()));
    let browser = scripted_browser(visited.clone());
    oauth::sign_in_for_wider_scope(
        &store,
        &challenge,
        &browser,
        &|_| {},
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    assert_eq!(
        server.scopes_requested(),
        ["mcp:tools".to_string(), "mcp:tools mcp:admin".to_string()]
    );
    let client_id = |url: &str| {
        url::Url::parse(url)
            .unwrap()
            .query_pairs()
            .find(|(k, _)| k == "client_id")
            .map(|(_, v)| v.into_owned())
    };
    let second = visited.lock().unwrap().clone();
    assert_eq!(client_id(&first[0]), client_id(&second[0]));
    assert!(store.is_signed_in());

    // A refusal that is not for want of scope asks for no wider sign-in.
    assert_eq!(
        oauth::wider_scope_asked(r#"Bearer error="invalid_token""#, &server.url()),
        None
    );
}
