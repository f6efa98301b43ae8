//! Signing in to a remote MCP server with OAuth 2.1, built on rmcp's `auth` feature: rmcp does
//! the discovery (protected-resource and authorization-server metadata, RFC 9728 / RFC 8414),
//! the client registration (pre-registered client ID, client ID metadata document, or dynamic
//! registration), PKCE and `state`, the scope selection (the narrowest the server asks for), the
//! code exchange with the `resource` indicator, and the refresh before expiry. Airlock adds what
//! rmcp leaves to the application: the one-time loopback listener the browser comes back to,
//! opening the browser, refusing plain-HTTP metadata and endpoints off loopback, refusing a
//! token issued for another resource, and keeping the tokens in the OS keyring (a 0600 file where
//! there is none) — never in the store, the audit, logs, or anything the model or phone sees.

use rmcp::transport::JwtSigningAlgorithm;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore,
    OAuthClientConfig, StoredCredentials, WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

/// The keyring's service name of every Airlock entry (as crates/engine/src/secrets.rs).
const KEYRING_SERVICE: &str = "airlock";
/// The path the browser comes back to on the loopback listener.
const CALLBACK_PATH: &str = "/callback";
/// How long the sign-in page may take before Airlock stops listening for it.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long one connection to the loopback listener may take to send its request line.
const CALLBACK_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a sign-in (or using its tokens) failed. Every message says what to do; none carries a
/// token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0} is not a valid URL")]
    BadUrl(String),
    #[error(
        "refused: {what} {url} is plain HTTP; only https:// (or http:// on this machine's loopback) may carry a sign-in"
    )]
    Insecure { what: &'static str, url: String },
    #[error("the server's sign-in metadata is unusable: {0}")]
    Discovery(String),
    #[error("the server does not ask for a sign-in (it answered without one)")]
    NotNeeded,
    #[error("cannot register Airlock with the server's sign-in: {0}")]
    Registration(String),
    #[error("cannot open the loopback listener for the sign-in: {0}")]
    Listener(String),
    #[error(
        "the sign-in did not come back to Airlock within {0} s (did the page send the browser elsewhere?)"
    )]
    Timeout(u64),
    #[error("refused the sign-in: {0}")]
    Callback(String),
    #[error("the server refused the sign-in: {0}")]
    Denied(String),
    #[error("cannot exchange the sign-in code for a token: {0}")]
    Exchange(String),
    #[error(
        "refused the token: it was issued for {audience}, not for {resource}; nothing was stored"
    )]
    WrongAudience { audience: String, resource: String },
    #[error("cannot keep the sign-in: {0}")]
    Store(String),
    #[error("cannot open the browser: {0}")]
    Browser(String),
    #[error("the server's sign-in refused Airlock's client credentials: {0}")]
    ClientCredentials(String),
    #[error("no sign-in is kept for this server (sign in first: airlock servers login NAME)")]
    NotSignedIn,
}

fn discovery(error: AuthError) -> OAuthError {
    OAuthError::Discovery(error.to_string())
}

/// Whether `host` is this machine (a loopback address or `localhost`).
fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(domain) => domain.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => IpAddr::V4(*ip).is_loopback(),
        url::Host::Ipv6(ip) => IpAddr::V6(*ip).is_loopback(),
    }
}

/// Refuses anything but `https://`, or `http://` on loopback: tokens, codes and metadata must
/// not cross a network in the clear.
pub fn require_secure(what: &'static str, url: &str) -> Result<Url, OAuthError> {
    let parsed = Url::parse(url).map_err(|_| OAuthError::BadUrl(url.to_string()))?;
    let secure = match parsed.scheme() {
        "https" => true,
        "http" => parsed.host().as_ref().is_some_and(is_loopback_host),
        _ => false,
    };
    if secure {
        Ok(parsed)
    } else {
        Err(OAuthError::Insecure {
            what,
            url: url.to_string(),
        })
    }
}

/// What Airlock keeps for one server's sign-in.
#[derive(Clone, Serialize, Deserialize)]
struct SavedSignIn {
    /// The server URL the tokens are for: a server whose URL changed must sign in again.
    url: String,
    /// A pasted client's secret (rmcp keeps only the client ID).
    client_secret: Option<String>,
    /// A machine client's credential (client-credentials grant), kept to fetch the next token:
    /// that grant has no refresh token and no person to sign in again.
    #[serde(default)]
    machine: Option<MachineClient>,
    credentials: StoredCredentials,
}

/// A machine client of the client-credentials grant (SEP-1046): Airlock signs in as itself,
/// with no person and no browser, with a secret or a private key registered with the server's
/// sign-in by hand. Kept with the tokens (in the keyring); never printed.
#[derive(Clone, Serialize, Deserialize)]
pub struct MachineClient {
    pub client_id: String,
    pub secret: MachineSecret,
}

/// How a machine client proves who it is.
#[derive(Clone, Serialize, Deserialize)]
pub enum MachineSecret {
    /// A client secret (`client_secret_basic` or `client_secret_post`, as the server offers).
    ClientSecret(String),
    /// A private key (PEM) signing a JWT assertion (`private_key_jwt`, RFC 7523) with
    /// `algorithm` (RS256, RS384, RS512, ES256 or ES384).
    PrivateKey { pem: String, algorithm: String },
}

impl std::fmt::Debug for MachineClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match &self.secret {
            MachineSecret::ClientSecret(_) => "client secret".to_string(),
            MachineSecret::PrivateKey { algorithm, .. } => format!("private key ({algorithm})"),
        };
        f.debug_struct("MachineClient")
            .field("client_id", &self.client_id)
            .field("secret", &how)
            .finish()
    }
}

/// The JWT signing algorithms `--signing-alg` takes (rmcp's [`JwtSigningAlgorithm`]).
pub const SIGNING_ALGORITHMS: [&str; 5] = ["RS256", "RS384", "RS512", "ES256", "ES384"];

fn signing_algorithm(name: &str) -> Result<JwtSigningAlgorithm, OAuthError> {
    Ok(match name {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(OAuthError::ClientCredentials(format!(
                "unknown signing algorithm '{other}' (one of {})",
                SIGNING_ALGORITHMS.join(", ")
            )));
        }
    })
}

impl MachineClient {
    /// rmcp's configuration of the grant, for `scopes` at `resource`.
    fn config(
        &self,
        scopes: Vec<String>,
        resource: &str,
    ) -> Result<ClientCredentialsConfig, OAuthError> {
        Ok(match &self.secret {
            MachineSecret::ClientSecret(secret) => ClientCredentialsConfig::ClientSecret {
                client_id: self.client_id.clone(),
                client_secret: secret.clone(),
                scopes,
                resource: Some(resource.to_string()),
            },
            MachineSecret::PrivateKey { pem, algorithm } => {
                ClientCredentialsConfig::PrivateKeyJwt {
                    client_id: self.client_id.clone(),
                    signing_key: pem.clone().into_bytes(),
                    signing_algorithm: signing_algorithm(algorithm)?,
                    token_endpoint_audience: None,
                    scopes,
                    resource: Some(resource.to_string()),
                }
            }
        })
    }
}

/// Where a server's tokens are kept: the OS keyring, or a 0600 file in the data directory where
/// no keyring can be reached.
#[derive(Debug, Clone)]
pub struct TokenStore {
    server: String,
    url: String,
    account: String,
    file: PathBuf,
}

impl TokenStore {
    /// The store of server `server` at `url` in the data directory `data_dir`.
    pub fn new(data_dir: &Path, server: &str, url: &str) -> Self {
        // The CLI and the engine may name one data directory differently (relative, a link).
        let data_dir = &data_dir
            .canonicalize()
            .unwrap_or_else(|_| data_dir.to_path_buf());
        Self {
            server: server.to_string(),
            url: url.to_string(),
            account: format!("mcp-oauth:{server}@{}", data_dir.display()),
            file: data_dir
                .join("oauth")
                .join(format!("{}.json", file_stem(server))),
        }
    }

    fn entry(&self) -> Result<keyring::Entry, keyring::Error> {
        keyring::Entry::new(KEYRING_SERVICE, &self.account)
    }

    /// The keyring, unless it cannot be reached (then the file).
    fn keyring(&self) -> Option<keyring::Entry> {
        let entry = self.entry().ok()?;
        match entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Some(entry),
            Err(error) => {
                tracing::debug!(%error, "no OS keyring; OAuth tokens go to a 0600 file");
                None
            }
        }
    }

    /// Where the tokens are kept, for people ("the OS keyring" or the file's path).
    pub fn location(&self) -> String {
        match self.keyring() {
            Some(_) => "the OS keyring".to_string(),
            None => format!("{} (no OS keyring here)", self.file.display()),
        }
    }

    fn read(&self) -> Result<Option<SavedSignIn>, OAuthError> {
        let text = match self.keyring() {
            Some(entry) => match entry.get_password() {
                Ok(text) => text,
                Err(keyring::Error::NoEntry) => return Ok(None),
                Err(error) => return Err(OAuthError::Store(error.to_string())),
            },
            None => match std::fs::read_to_string(&self.file) {
                Ok(text) => text,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(error) => {
                    return Err(OAuthError::Store(format!(
                        "{}: {error}",
                        self.file.display()
                    )));
                }
            },
        };
        // Unreadable (an older shape, a hand edit): as good as signed out.
        let saved: Option<SavedSignIn> = serde_json::from_str(&text).ok();
        Ok(saved.filter(|saved| saved.url == self.url))
    }

    fn write(&self, saved: &SavedSignIn) -> Result<(), OAuthError> {
        let text = serde_json::to_string(saved).map_err(|e| OAuthError::Store(e.to_string()))?;
        match self.keyring() {
            Some(entry) => entry
                .set_password(&text)
                .map_err(|e| OAuthError::Store(e.to_string())),
            None => write_private_file(&self.file, &text),
        }
    }

    /// Forgets the server's tokens (nothing to forget is fine).
    pub fn forget(&self) -> Result<(), OAuthError> {
        if let Ok(entry) = self.entry() {
            match entry.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => {}
                Err(error) => tracing::debug!(%error, "no OS keyring to forget the tokens in"),
            }
        }
        match std::fs::remove_file(&self.file) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(OAuthError::Store(format!(
                "{}: {error}",
                self.file.display()
            ))),
        }
    }

    /// Whether a sign-in is kept for this server at this URL.
    pub fn is_signed_in(&self) -> bool {
        matches!(self.read(), Ok(Some(_)))
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The URL of the server the sign-in is for.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// A server name as a file name: names are free text, the file must stay in its folder, and
/// two names must not share a file (every byte but letters, digits and `-` becomes `_XX`).
fn file_stem(server: &str) -> String {
    server
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'-' {
                char::from(b).to_string()
            } else {
                format!("_{b:02x}")
            }
        })
        .collect()
}

/// Writes `text` to `path` readable by its owner only (0600 from creation on Unix).
fn write_private_file(path: &Path, text: &str) -> Result<(), OAuthError> {
    let fail = |e: std::io::Error| OAuthError::Store(format!("{}: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let temporary = path.with_extension("json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).map_err(fail)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    std::fs::rename(&temporary, path).map_err(fail)
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
            .map(|saved| saved.map(|saved| saved.credentials))
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let kept = self.read().ok().flatten();
        let (client_secret, machine) = match kept {
            Some(kept) => (kept.client_secret, kept.machine),
            None => (None, None),
        };
        self.write(&SavedSignIn {
            url: self.url.clone(),
            client_secret,
            machine,
            credentials,
        })
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.forget()
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

/// How the client identifies itself to the authorization server, beyond dynamic registration.
#[derive(Debug, Clone, Default)]
pub struct ClientIdentity {
    /// A client ID registered with the server by hand (pasted); wins over everything else.
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<String>,
    /// The HTTPS URL of a client ID metadata document, used where the server supports them.
    pub client_metadata_url: Option<String>,
}

/// Opens the browser on the authorization URL.
pub type OpenBrowser<'a> = &'a (dyn Fn(&str) -> Result<(), String> + Send + Sync);

/// Opens the system browser (`open`: xdg-open, `open`, `start`).
pub fn open_system_browser(url: &str) -> Result<(), String> {
    open::that_detached(url).map_err(|e| e.to_string())
}

/// Names a command that opens the sign-in page instead of the system browser (the URL is its
/// last argument): a browser of the person's choice, or a test's.
pub const BROWSER_ENV: &str = "AIRLOCK_BROWSER";

/// Opens the sign-in page with `AIRLOCK_BROWSER` where it is set, else the system browser.
pub fn open_browser(url: &str) -> Result<(), String> {
    let Ok(command) = std::env::var(BROWSER_ENV) else {
        return open_system_browser(url);
    };
    let words: Vec<&str> = command.split_whitespace().collect();
    let (program, args) = words
        .split_first()
        .ok_or_else(|| format!("{BROWSER_ENV} is empty"))?;
    std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("{BROWSER_ENV} ({program}): {e}"))
}

/// Runs the whole sign-in of server `server` at `url`: discovery, registration, the browser on
/// the authorization page, the code back on a one-time loopback listener, the token exchange,
/// and the tokens kept (only once every check passed; a refused sign-in stores nothing).
/// `on_url` hears the authorization URL first (the CLI prints it, for a browser elsewhere).
pub async fn sign_in(
    store: &TokenStore,
    identity: &ClientIdentity,
    open_browser: OpenBrowser<'_>,
    on_url: &(dyn Fn(&str) + Send + Sync),
    timeout: Duration,
) -> Result<(), OAuthError> {
    // A server that asks for no sign-in may be anywhere; one that does must be secure.
    let challenge = probe(&store.url).await?;
    browser_sign_in(
        store,
        identity,
        challenge,
        Vec::new(),
        open_browser,
        on_url,
        timeout,
    )
    .await
}

/// The scope a server's refusal asks for when it refused a request for want of scope (a 403
/// with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`); `None` for any
/// other refusal.
pub fn wider_scope_asked(challenge: &str, server_url: &str) -> Option<String> {
    let base = Url::parse(server_url).ok()?;
    let params = WWWAuthenticateParams::parse(challenge, &base);
    if !params.is_insufficient_scope() {
        return None;
    }
    params.scope.filter(|scope| !scope.trim().is_empty())
}

/// The scopes of a wider sign-in: those granted so far and those asked for now (SEP-2350: a new
/// sign-in must not lose what the first one had).
fn scope_union(granted: &[String], asked: &str) -> Vec<String> {
    let mut scopes = granted.to_vec();
    for scope in asked.split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
    scopes
}

/// Signs in again in the browser for a wider scope, after the server refused a call with `403
/// insufficient_scope` (`challenge` is its `WWW-Authenticate`): the same client as the kept
/// sign-in, the scopes granted so far plus the ones asked for. The caller asks the person first.
pub async fn sign_in_for_wider_scope(
    store: &TokenStore,
    challenge: &str,
    open_browser: OpenBrowser<'_>,
    on_url: &(dyn Fn(&str) + Send + Sync),
    timeout: Duration,
) -> Result<(), OAuthError> {
    let saved = store.read()?.ok_or(OAuthError::NotSignedIn)?;
    let asked = wider_scope_asked(challenge, &store.url).ok_or_else(|| {
        OAuthError::Discovery("the server's refusal names no scope to sign in for".into())
    })?;
    let scopes = scope_union(&saved.credentials.granted_scopes, &asked);
    let identity = ClientIdentity {
        client_id: Some(saved.credentials.client_id.clone()),
        client_secret: saved.client_secret.clone(),
        client_metadata_url: None,
    };
    browser_sign_in(
        store,
        &identity,
        Some(challenge.to_string()),
        scopes,
        open_browser,
        on_url,
        timeout,
    )
    .await
}

/// The browser part of a sign-in, from the server's challenge on: `scopes` empty lets rmcp pick
/// the narrowest the server asks for.
async fn browser_sign_in(
    store: &TokenStore,
    identity: &ClientIdentity,
    challenge: Option<String>,
    scopes: Vec<String>,
    open_browser: OpenBrowser<'_>,
    on_url: &(dyn Fn(&str) + Send + Sync),
    timeout: Duration,
) -> Result<(), OAuthError> {
    let server_url = require_secure("the server URL", &store.url)?;

    // The loopback listener first: its port is part of the redirect URI registered below.
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| OAuthError::Listener(e.to_string()))?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Listener(e.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");

    let (manager, staging) = staged_manager(&server_url, challenge.as_deref(), |metadata| {
        require_secure(
            "the authorization endpoint",
            &metadata.authorization_endpoint,
        )?;
        if let Some(registration) = &metadata.registration_endpoint {
            require_secure("the registration endpoint", registration)?;
        }
        Ok(())
    })
    .await?;

    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name("Airlock");
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(challenge) = &challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(client_id) = &identity.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = &identity.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(metadata_url) = &identity.client_metadata_url {
        request = request.with_client_metadata_url(metadata_url);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| match e {
            AuthError::RegistrationFailed(reason) => OAuthError::Registration(reason),
            other => discovery(other),
        })?;
    let auth_url = session.get_authorization_url().to_string();
    require_secure("the authorization page", &auth_url)?;

    on_url(&auth_url);
    open_browser(&auth_url).map_err(OAuthError::Browser)?;
    let callback = tokio::time::timeout(timeout, receive_callback(listener, port))
        .await
        .map_err(|_| OAuthError::Timeout(timeout.as_secs()))??;
    session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| match e {
            AuthError::InternalError(reason) if reason.contains("state not found") => {
                OAuthError::Callback(
                    "its `state` is not the one Airlock sent (a forged or stale sign-in)".into(),
                )
            }
            AuthError::TokenExchangeFailed(reason) => OAuthError::Exchange(reason),
            other => OAuthError::Callback(other.to_string()),
        })?;

    let Some(credentials) = staging
        .load()
        .await
        .map_err(|e| OAuthError::Store(e.to_string()))?
    else {
        return Err(OAuthError::Exchange("no token came back".into()));
    };
    if let Some(token) = credentials.token_response.as_ref() {
        use oauth2::TokenResponse as _;
        check_audience(token.access_token().secret(), &server_url)?;
    }
    store.write(&SavedSignIn {
        url: store.url.clone(),
        client_secret: identity.client_secret.clone(),
        machine: None,
        credentials,
    })
}

/// rmcp's manager for `server_url` with the server's metadata discovered from `challenge`: its
/// tokens stay in the returned in-memory store until every check passed (only then are they
/// kept); `check` sees the metadata first, then the token endpoint must be secure.
async fn staged_manager(
    server_url: &Url,
    challenge: Option<&str>,
    check: impl FnOnce(&AuthorizationMetadata) -> Result<(), OAuthError>,
) -> Result<(AuthorizationManager, InMemoryCredentialStore), OAuthError> {
    let mut manager = AuthorizationManager::new(server_url.as_str())
        .await
        .map_err(discovery)?;
    let staging = InMemoryCredentialStore::new();
    manager.set_credential_store(staging.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(discovery)?;
    check(&resolution.metadata)?;
    require_secure("the token endpoint", &resolution.metadata.token_endpoint)?;
    manager.set_metadata(resolution.metadata);
    Ok((manager, staging))
}

/// Signs in as machine client `client` with the client-credentials grant (no browser): the
/// server's metadata, rmcp's token request (`client_secret_basic`/`_post` or a signed JWT
/// assertion, as the server offers), the same checks as a person's sign-in, and the tokens kept
/// with the credential (only once every check passed).
pub async fn sign_in_machine(store: &TokenStore, client: &MachineClient) -> Result<(), OAuthError> {
    let challenge = probe(&store.url).await?;
    let server_url = require_secure("the server URL", &store.url)?;
    let refused = |e: AuthError| OAuthError::ClientCredentials(e.to_string());
    let (mut manager, staging) =
        staged_manager(&server_url, challenge.as_deref(), |_| Ok(())).await?;
    let scopes = manager.select_initial_scopes(&[]).await;
    let config = client.config(scopes, server_url.as_str())?;
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(refused)?;
    manager
        .configure_client_credentials(&config)
        .map_err(refused)?;
    // rmcp 3.11's token request (with `auth-client-credentials-jwt`) is a future that is not
    // `Send` (it keeps a form serializer across an await): it runs on a blocking thread of its
    // own, on this runtime.
    let runtime = tokio::runtime::Handle::current();
    let token = tokio::task::spawn_blocking(move || {
        runtime.block_on(async move { manager.exchange_client_credentials(&config).await })
    })
    .await
    .map_err(|e| OAuthError::ClientCredentials(e.to_string()))?
    .map_err(refused)?;
    {
        use oauth2::TokenResponse as _;
        check_audience(token.access_token().secret(), &server_url)?;
    }
    let Some(credentials) = staging
        .load()
        .await
        .map_err(|e| OAuthError::Store(e.to_string()))?
    else {
        return Err(OAuthError::Exchange("no token came back".into()));
    };
    store.write(&SavedSignIn {
        url: store.url.clone(),
        client_secret: None,
        machine: Some(client.clone()),
        credentials,
    })
}

/// Whether the kept token is gone or ends within a minute.
fn expiring(credentials: &StoredCredentials) -> bool {
    use oauth2::TokenResponse as _;
    let Some(token) = &credentials.token_response else {
        return true;
    };
    let (Some(lifetime), Some(received)) = (token.expires_in(), credentials.token_received_at)
    else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(u64::MAX);
    received.saturating_add(lifetime.as_secs()) < now.saturating_add(60)
}

/// A machine client's next token, when its kept one is expiring (or `force`): the
/// client-credentials grant again. `Ok(false)` for a person's sign-in (only they can renew it).
async fn renew_machine_sign_in(store: &TokenStore, force: bool) -> Result<bool, OAuthError> {
    let Some(saved) = store.read()? else {
        return Ok(false);
    };
    let Some(machine) = saved.machine else {
        return Ok(false);
    };
    if force || expiring(&saved.credentials) {
        sign_in_machine(store, &machine).await?;
    }
    Ok(true)
}

/// The request that asks a server whether it wants a sign-in: a well-formed 2026-07-28
/// `server/discover` (its headers and `_meta`), which opens no session and is harmless to a
/// server of an older revision (it refuses an unknown method, or answers 401 like any request
/// when it wants a sign-in).
fn discover_request(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
) -> reqwest::RequestBuilder {
    const VERSION: &str = "2026-07-28";
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        // Every request's `_meta` names the client too (SEP-2575), this one included.
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {
                "name": "airlock", "version": env!("CARGO_PKG_VERSION"),
            },
        }},
    });
    let request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "server/discover")
        .json(&body);
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

/// Learns whether the server wants a sign-in (it answers 401), and its `WWW-Authenticate`
/// challenge (where its metadata is, which scopes it wants).
async fn probe(url: &str) -> Result<Option<String>, OAuthError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| OAuthError::Discovery(e.to_string()))?;
    let response = discover_request(&client, url, None)
        .send()
        .await
        .map_err(|e| OAuthError::Discovery(format!("{url}: {e}")))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Err(OAuthError::NotNeeded);
    }
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string))
}

/// Waits for the browser's one request on the loopback listener, answers it and closes the
/// listener; returns the full callback URL. A request that is not the callback, or that carries
/// the authorization server's `error`, ends the sign-in with that reason.
async fn receive_callback(listener: TcpListener, port: u16) -> Result<String, OAuthError> {
    loop {
        let (mut socket, _) = listener
            .accept()
            .await
            .map_err(|e| OAuthError::Listener(e.to_string()))?;
        // A connection that sends nothing (a browser's speculative preconnect) is not the
        // request: drop it and keep listening.
        let Ok(Some(target)) =
            tokio::time::timeout(CALLBACK_READ_TIMEOUT, read_request_target(&mut socket)).await
        else {
            continue;
        };
        let url = format!("http://127.0.0.1:{port}{target}");
        let outcome = check_callback(&url);
        let page = match &outcome {
            Ok(_) => "Signed in. You can close this tab and go back to Airlock.".to_string(),
            Err(error) => format!("Airlock refused this sign-in: {error}"),
        };
        let body = format!(
            "<!doctype html><meta charset=utf-8><title>Airlock</title><p>{}</p>",
            html_escape(&page)
        );
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
        return outcome.map(|()| url);
    }
}

/// Reads the request line and returns its target (`/callback?...`); `None` for anything that is
/// not an HTTP GET.
async fn read_request_target(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buffer.windows(2).any(|w| w == b"\r\n") {
        if buffer.len() > 16 * 1024 {
            return None;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let line = String::from_utf8_lossy(&buffer);
    let mut parts = line.lines().next()?.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

/// Refuses a callback on another path, or one saying the sign-in failed.
fn check_callback(url: &str) -> Result<(), OAuthError> {
    let parsed = Url::parse(url).map_err(|_| OAuthError::Callback("unreadable".into()))?;
    if parsed.path() != CALLBACK_PATH {
        return Err(OAuthError::Callback(format!(
            "the browser came back to {}, not to {CALLBACK_PATH}",
            parsed.path()
        )));
    }
    let query = |name: &str| {
        parsed
            .query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    if let Some(error) = query("error") {
        let description = query("error_description").unwrap_or_default();
        return Err(OAuthError::Denied(
            format!("{error} {description}").trim().to_string(),
        ));
    }
    Ok(())
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Refuses a token whose audience (when it says one: a JWT with `aud`) is not this server. A
/// token for another resource would let that resource's owner replay what Airlock sends.
fn check_audience(token: &str, server_url: &Url) -> Result<(), OAuthError> {
    use base64::Engine as _;
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Ok(()); // opaque: only the server can tell
    };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload) else {
        return Ok(());
    };
    let Ok(claims) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Ok(());
    };
    let audiences: Vec<String> = match &claims["aud"] {
        serde_json::Value::String(one) => vec![one.clone()],
        serde_json::Value::Array(many) => many
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect(),
        _ => return Ok(()),
    };
    let resource = server_url.as_str().trim_end_matches('/');
    // RFC 8707: the resource may name the server's base (its origin or a parent path).
    let covers = |audience: &str| {
        let audience = audience.trim_end_matches('/');
        resource == audience || resource.starts_with(&format!("{audience}/"))
    };
    if audiences.iter().any(|a| covers(a)) {
        Ok(())
    } else {
        Err(OAuthError::WrongAudience {
            audience: audiences.join(", "),
            resource: resource.to_string(),
        })
    }
}

/// The HTTP client of a server that has a sign-in kept: rmcp's `AuthClient`, which sends the
/// token, refreshes it before it expires (and once more when the server refuses it), and keeps
/// the refreshed tokens. `None` when no sign-in is kept (the server is used without one).
pub async fn authorized_client(
    store: &TokenStore,
) -> Result<Option<AuthClient<reqwest::Client>>, OAuthError> {
    // A machine client has no refresh token: it asks for a new token before connecting.
    renew_machine_sign_in(store, false).await?;
    let Some(saved) = store.read()? else {
        return Ok(None);
    };
    let mut manager = AuthorizationManager::new(store.url.as_str())
        .await
        .map_err(discovery)?;
    manager.set_credential_store(store.clone());
    if !manager.initialize_from_store().await.map_err(discovery)? {
        return Ok(None);
    }
    if let Some(secret) = saved.client_secret {
        manager
            .configure_client(
                OAuthClientConfig::new(saved.credentials.client_id, store.url.clone())
                    .with_client_secret(secret),
            )
            .map_err(discovery)?;
    }
    Ok(Some(AuthClient::new(reqwest::Client::new(), manager)))
}

/// Whether the server refuses Airlock for want of a (new) sign-in: it answers 401 to the kept
/// token (after rmcp's refresh, when one was possible), or to none.
pub async fn needs_sign_in(store: &TokenStore) -> bool {
    // A machine client signs in again by itself (its token ended during a connection).
    match renew_machine_sign_in(store, true).await {
        Ok(true) => return false,
        Ok(false) => {}
        Err(error) => {
            tracing::warn!(server = %store.server, %error, "the machine client's new token was refused");
        }
    }
    let token = store.read().ok().flatten().and_then(|saved| {
        use oauth2::TokenResponse as _;
        saved
            .credentials
            .token_response
            .map(|t| t.access_token().secret().to_string())
    });
    let Ok(client) = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
    else {
        return false;
    };
    let request = discover_request(&client, &store.url, token.as_deref());
    matches!(request.send().await, Ok(r) if r.status() == reqwest::StatusCode::UNAUTHORIZED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_refused_off_loopback() {
        assert!(require_secure("x", "https://example.com/mcp").is_ok());
        assert!(require_secure("x", "http://127.0.0.1:8080/mcp").is_ok());
        assert!(require_secure("x", "http://localhost/mcp").is_ok());
        assert!(require_secure("x", "http://[::1]/mcp").is_ok());
        let refused = require_secure("the token endpoint", "http://example.com/token")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("the token endpoint http://example.com/token is plain HTTP"));
        assert!(require_secure("x", "ftp://example.com/").is_err());
        assert!(require_secure("x", "not a url").is_err());
    }

    fn jwt(claims: serde_json::Value) -> String {
        use base64::Engine as _;
        let encode = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.sig",
            encode(br#"{"alg":"none"}"#),
            encode(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn a_token_for_another_resource_is_refused() {
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let ok =
            |aud: serde_json::Value| check_audience(&jwt(serde_json::json!({"aud": aud})), &server);
        assert!(ok(serde_json::json!("https://mcp.example.com/mcp")).is_ok());
        assert!(ok(serde_json::json!("https://mcp.example.com")).is_ok());
        assert!(ok(serde_json::json!(["other", "https://mcp.example.com/"])).is_ok());
        let refused = ok(serde_json::json!("https://other.example.com/mcp")).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("issued for https://other.example.com/mcp")
        );
        assert!(ok(serde_json::json!("https://mcp.example.com/mcp-other")).is_err());
        // Opaque tokens say nothing; only the server can tell.
        assert!(check_audience("opaque-token", &server).is_ok());
    }

    #[test]
    fn callbacks_on_another_path_or_with_an_error_are_refused() {
        assert!(check_callback("http://127.0.0.1:1/callback?code=c&state=s").is_ok());
        let elsewhere = check_callback("http://127.0.0.1:1/elsewhere?code=c&state=s").unwrap_err();
        assert!(elsewhere.to_string().contains("came back to /elsewhere"));
        let denied =
            check_callback("http://127.0.0.1:1/callback?error=access_denied&error_description=no")
                .unwrap_err();
        assert_eq!(
            denied.to_string(),
            "the server refused the sign-in: access_denied no"
        );
    }

    #[test]
    fn only_an_insufficient_scope_refusal_asks_for_a_wider_sign_in() {
        let url = "http://127.0.0.1:9/mcp";
        let step_up = r#"Bearer scope="mcp:write", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", error="insufficient_scope""#;
        assert_eq!(
            wider_scope_asked(step_up, url).as_deref(),
            Some("mcp:write")
        );
        // A 401 for a missing or expired token is no request for more scope.
        let unauthorized = r#"Bearer scope="mcp:basic", error="invalid_token""#;
        assert_eq!(wider_scope_asked(unauthorized, url), None);
        assert_eq!(
            wider_scope_asked(r#"Bearer error="insufficient_scope""#, url),
            None
        );
        // The new sign-in keeps what was granted and adds what is asked, once.
        assert_eq!(
            scope_union(&["mcp:basic".into()], "mcp:write mcp:basic"),
            vec!["mcp:basic".to_string(), "mcp:write".to_string()]
        );
    }

    #[test]
    fn a_machine_clients_secret_is_never_shown() {
        let client = MachineClient {
            client_id: "ci".into(),
            secret: MachineSecret::ClientSecret("hunter2".into()),
        };
        let shown = format!("{client:?}");
        assert!(
            shown.contains("ci") && !shown.contains("hunter2"),
            "{shown}"
        );
        let keyed = MachineClient {
            client_id: "ci".into(),
            secret: MachineSecret::PrivateKey {
                pem: "-----BEGIN PRIVATE KEY-----secret".into(),
                algorithm: "ES256".into(),
            },
        };
        assert!(!format!("{keyed:?}").contains("BEGIN"));
        assert!(keyed.config(vec![], "http://127.0.0.1:9/mcp").is_ok());
        let unknown = MachineClient {
            secret: MachineSecret::PrivateKey {
                pem: String::new(),
                algorithm: "HS256".into(),
            },
            ..keyed
        };
        assert!(unknown.config(vec![], "x").is_err());
    }

    #[test]
    fn the_token_file_is_private_and_named_safely() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore {
            server: "remote".into(),
            url: "https://mcp.example.com/mcp".into(),
            account: String::new(),
            file: dir.path().join("oauth/remote.json"),
        };
        let saved = SavedSignIn {
            url: store.url.clone(),
            client_secret: None,
            machine: None,
            credentials: StoredCredentials::new("client".into(), None, vec![], None),
        };
        write_private_file(&store.file, &serde_json::to_string(&saved).unwrap()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&store.file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(file_stem("a/../b c"), "a_2f_2e_2e_2fb_20c");
        assert_ne!(file_stem("a_b"), file_stem("a.b"));
    }
}
