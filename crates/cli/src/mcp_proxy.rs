//! `airlock mcp-proxy`: an MCP client's server, run through Airlock. The proxy asks the engine
//! that owns the data directory (the local API) about every `tools/call`; with no engine, or
//! an error on the way, the call is denied, never run.

use airlock_api::{ApiClient, one_shot};
use airlock_core::{PROXY_HEADERS_ENV, ServerConfig, validate_proxied_server_name};
use airlock_engine::ElicitationAnswer;
use airlock_hook::{NoEngine, ask_engine};
use airlock_mcp::oauth::{self, OAuthError, TokenStore};
use airlock_mcp::proxy::{Gate, ProxyError, ProxyOptions};
use airlock_protocol::{AgentAnswer, AgentCall};
use anyhow::{Context, bail};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a proxied call may wait for a person (the engine's own limit).
const LONGEST_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

/// Asks the engine through its local API.
struct ApiGate {
    data_dir: PathBuf,
}

impl Gate for ApiGate {
    fn decide(&self, mut call: AgentCall) -> BoxFuture<'_, Result<AgentAnswer, String>> {
        Box::pin(async move {
            // The same as the hooks: an engine that restarts mid-wait is asked again, and the
            // same request finds the same item.
            ask_engine(&self.data_dir, &mut call, Instant::now() + LONGEST_WAIT)
                .await
                .map_err(|NoEngine(why)| why)
        })
    }

    fn elicit(
        &self,
        server: String,
        message: String,
        schema: Value,
        meta: Option<Value>,
        property_order: Vec<String>,
    ) -> BoxFuture<'_, Result<ElicitationAnswer, String>> {
        Box::pin(async move {
            let body = json!({
                "server": server, "message": message, "schema": schema, "meta": meta,
                "property_order": property_order,
            });
            one_shot::post(&self.data_dir, "/v1/elicitations", &body)
                .await
                .map_err(|error| error.to_string())
        })
    }
}

/// A server configured in Airlock, as the engine has it.
async fn configured(data_dir: &Path, name: &str) -> anyhow::Result<ServerConfig> {
    validate_proxied_server_name(name).map_err(anyhow::Error::msg)?;
    let client = ApiClient::discover(data_dir)?;
    let servers = client.call(&airlock_protocol::commands::Servers {}).await?;
    let Some(server) = servers.into_iter().find(|s| s.name == name) else {
        bail!(
            "no server named '{name}' in Airlock (see `airlock servers`); to proxy any command: mcp-proxy --name NAME -- COMMAND ARGS..."
        );
    };
    serde_json::from_value(server.config)
        .with_context(|| format!("the server '{name}' has a definition Airlock cannot read"))
}

/// What `mcp-proxy` runs.
pub enum Target {
    /// A server configured in Airlock.
    Configured(String),
    /// Anything else, by the name Airlock's settings and rules know it by.
    Named { name: String, config: ServerConfig },
}

impl Target {
    pub fn from_args(
        server: Option<String>,
        name: Option<String>,
        url: Option<String>,
        headers: Vec<String>,
        command: Vec<String>,
    ) -> anyhow::Result<Self> {
        let config = match (server, name, url, command.split_first()) {
            (Some(server), None, None, None) => return Ok(Target::Configured(server)),
            (None, Some(name), None, Some((program, args))) => (
                name,
                ServerConfig::Stdio {
                    command: program.clone(),
                    args: args.to_vec(),
                    env: Default::default(),
                    cwd: None,
                },
            ),
            (None, Some(name), Some(url), None) => (
                name,
                ServerConfig::Http {
                    url,
                    headers: proxied_headers(&headers)?,
                },
            ),
            _ => bail!(
                "give a server configured in Airlock (mcp-proxy NAME), a command (mcp-proxy --name NAME -- COMMAND ARGS...) or a URL (mcp-proxy --name NAME --url URL)"
            ),
        };
        let (name, config) = config;
        validate_proxied_server_name(&name).map_err(anyhow::Error::msg)?;
        config.validate().map_err(anyhow::Error::msg)?;
        Ok(Target::Named { name, config })
    }
}

/// A proxied URL's headers: AIRLOCK_MCP_HEADERS's, then `--header`'s (which win).
fn proxied_headers(flags: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut headers: BTreeMap<String, String> = match std::env::var(PROXY_HEADERS_ENV) {
        Ok(json) => serde_json::from_str(&json).with_context(|| {
            format!("{PROXY_HEADERS_ENV} is not a JSON object of header values")
        })?,
        Err(_) => BTreeMap::new(),
    };
    for flag in flags {
        let (name, value) = flag
            .split_once(':')
            .filter(|(name, _)| !name.trim().is_empty())
            .with_context(|| format!("the header '{flag}' is not 'Name: value'"))?;
        headers.insert(name.trim().to_string(), value.trim_start().to_string());
    }
    Ok(headers)
}

/// A remote server's sign-in, run by the proxy itself when the server asks for one and none is
/// kept (or the kept one is refused): the MCP client that started the proxy (Claude Desktop)
/// has no terminal, so the browser opens and the page's URL goes to stderr (the client's log).
async fn sign_in_when_asked(store: &TokenStore, refused: bool) -> anyhow::Result<()> {
    if store.is_signed_in() && !refused {
        return Ok(());
    }
    let name = store.server().to_string();
    let announce = |page: &str| {
        eprintln!(
            "airlock mcp-proxy: {name}: sign in in the browser (if it did not open, open this page):\n  {page}"
        );
    };
    match oauth::sign_in(
        store,
        &oauth::ClientIdentity::default(),
        &oauth::open_browser,
        &announce,
        oauth::SIGN_IN_TIMEOUT,
    )
    .await
    {
        Ok(()) => {
            eprintln!(
                "airlock mcp-proxy: {name}: signed in (tokens kept in {})",
                store.location()
            );
            Ok(())
        }
        Err(OAuthError::NotNeeded) => Ok(()),
        Err(error) => bail!("{name}: {error}"),
    }
}

pub async fn run(data_dir: &Path, target: Target) -> anyhow::Result<ExitCode> {
    let (name, config) = match target {
        Target::Configured(server) => {
            let config = configured(data_dir, &server).await?;
            (server, config)
        }
        Target::Named { name, config } => (name, config),
    };
    let gate: Arc<dyn Gate> = Arc::new(ApiGate {
        data_dir: data_dir.to_path_buf(),
    });
    // A remote server signed in to with `airlock servers login NAME` (same data directory), or
    // by the proxy when the server asks.
    let sign_in = match &config {
        ServerConfig::Http { url, .. } => Some(TokenStore::new(data_dir, &name, url)),
        ServerConfig::Stdio { .. } => None,
    };
    if let Some(store) = &sign_in {
        sign_in_when_asked(store, false).await?;
    }
    let options = |sign_in: Option<TokenStore>| ProxyOptions {
        sign_in,
        name: name.clone(),
        config: config.clone(),
        log: None,
    };
    let first = airlock_mcp::proxy::run(options(sign_in.clone()), gate.clone()).await;
    // The kept sign-in was refused (expired, revoked): once more after a new one. The client's
    // stdin is not read before the server is connected, so nothing it sent is lost.
    let refused = match (&first, &sign_in) {
        (Err(ProxyError::Upstream { .. }), Some(store)) => oauth::needs_sign_in(store).await,
        _ => false,
    };
    match sign_in.as_ref().filter(|_| refused) {
        Some(store) => {
            sign_in_when_asked(store, true).await?;
            airlock_mcp::proxy::run(options(sign_in.clone()), gate).await?;
        }
        None => first?,
    }
    Ok(ExitCode::SUCCESS)
}
