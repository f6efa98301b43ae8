//! Opening one connection with rmcp: a child process for stdio servers (stderr appended to the
//! server's log, or passed on when there is none), or a streamable-HTTP transport.

use crate::oauth::TokenStore;
use airlock_core::ServerConfig;
use rmcp::model::ProtocolVersion;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;

pub(crate) struct Connection<C: ClientHandler> {
    pub running: RunningService<RoleClient, C>,
    pub pid: Option<u32>,
}

/// A remote server is asked for the newest protocol first (2026-07-28: `server/discover`, no
/// session); one that does not know it gets the `initialize` handshake of the newest revision
/// before it (rmcp's fallback, also when `server/discover` goes unanswered for 10 s).
fn newest_first() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

pub(crate) async fn connect<C: ClientHandler + Clone>(
    config: &ServerConfig,
    log: Option<&Path>,
    client: C,
    sign_in: Option<&TokenStore>,
) -> Result<Connection<C>, String> {
    match config {
        ServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            // Whatever drops the server's process without waiting for it (a runtime shut down
            // as Airlock quits) kills it rather than leaving it running.
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let stderr = match log {
                Some(path) => {
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)
                            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                    }
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .map_err(|e| format!("cannot open the log {}: {e}", path.display()))?;
                    Stdio::from(file)
                }
                None => Stdio::inherit(),
            };
            let (process, _) = TokioChildProcess::builder(cmd)
                .stderr(stderr)
                .spawn()
                .map_err(|e| format!("cannot start '{command}': {e}"))?;
            let pid = process.id();
            let running = client
                .serve(process)
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            Ok(Connection { running, pid })
        }
        ServerConfig::Http { url, headers } => {
            let mut transport = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let mut custom = HashMap::new();
            for (name, value) in headers {
                if name.eq_ignore_ascii_case("authorization") {
                    let token = value.strip_prefix("Bearer ").unwrap_or(value);
                    transport.auth_header = Some(token.to_string());
                    continue;
                }
                let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header '{name}': {e}"))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| format!("header '{name}': {e}"))?;
                custom.insert(header, value);
            }
            transport.custom_headers = custom;
            // A server signed in to: rmcp's AuthClient sends (and refreshes) its token.
            let authorized = match sign_in {
                Some(store) => crate::oauth::authorized_client(store)
                    .await
                    .map_err(|e| e.to_string())?,
                None => None,
            };
            let newest = match authorized.clone() {
                Some(auth_client) => {
                    let transport =
                        StreamableHttpClientTransport::with_client(auth_client, transport.clone());
                    client
                        .clone()
                        .serve_with_lifecycle(transport, newest_first())
                        .await
                }
                None => {
                    let http = StreamableHttpClientTransport::from_config(transport.clone());
                    client
                        .clone()
                        .serve_with_lifecycle(http, newest_first())
                        .await
                }
            };
            let running = match newest {
                Ok(running) => running,
                // A server that answers `server/discover` with something unusable (not the
                // "unknown method" error rmcp falls back on) still gets the `initialize` of
                // the revision before, on a new connection.
                Err(error) => {
                    tracing::debug!(%error, %url, "server/discover failed; trying initialize");
                    match authorized {
                        Some(auth_client) => {
                            let transport =
                                StreamableHttpClientTransport::with_client(auth_client, transport);
                            client.serve(transport).await
                        }
                        None => {
                            client
                                .serve(StreamableHttpClientTransport::from_config(transport))
                                .await
                        }
                    }
                    .map_err(|e| format!("cannot connect to {url}: {e}"))?
                }
            };
            Ok(Connection { running, pid: None })
        }
    }
}
