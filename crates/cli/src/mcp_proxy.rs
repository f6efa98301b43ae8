//! `airlock mcp-proxy`: an MCP client's server, run through Airlock. The proxy asks the engine
//! that owns the data directory (the local API) about every `tools/call`; with no engine, or
//! an error on the way, the call is denied, never run.

use airlock_api::{ApiClient, one_shot};
use airlock_core::{ServerConfig, validate_proxied_server_name};
use airlock_engine::ElicitationAnswer;
use airlock_hook::{NoEngine, ask_engine};
use airlock_mcp::oauth::TokenStore;
use airlock_mcp::proxy::{Gate, ProxyOptions};
use airlock_protocol::{AgentAnswer, AgentCall};
use anyhow::{Context, bail};
use futures::future::BoxFuture;
use serde_json::{Value, json};
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

pub async fn run(
    data_dir: &Path,
    server: Option<String>,
    name: Option<String>,
    command: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let (name, config) = match (server, name, command.split_first()) {
        (Some(server), None, None) => {
            let config = configured(data_dir, &server).await?;
            (server, config)
        }
        (None, Some(name), Some((program, args))) => {
            validate_proxied_server_name(&name).map_err(anyhow::Error::msg)?;
            let config = ServerConfig::Stdio {
                command: program.clone(),
                args: args.to_vec(),
                env: Default::default(),
                cwd: None,
            };
            (name, config)
        }
        _ => bail!(
            "give a server configured in Airlock (mcp-proxy NAME) or a command (mcp-proxy --name NAME -- COMMAND ARGS...)"
        ),
    };
    let gate = Arc::new(ApiGate {
        data_dir: data_dir.to_path_buf(),
    });
    airlock_mcp::proxy::run(
        ProxyOptions {
            // A remote server signed in to with `airlock servers login NAME` (same data directory).
            sign_in: match &config {
                ServerConfig::Http { url, .. } => Some(TokenStore::new(data_dir, &name, url)),
                ServerConfig::Stdio { .. } => None,
            },
            name,
            config,
            log: None,
        },
        gate,
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
