//! `airlock servers`: MCP servers with their state; add, import and configure them.

use crate::shown::text;
use crate::{ServersAction, SignInArgs};
use airlock_api::ApiClient;
use airlock_core::display::visible_line;
use airlock_core::{ServerConfig, ServerDefault};
use airlock_engine::ToolChange;
use airlock_mcp::oauth::{self, ClientIdentity, OAuthError, TokenStore};
use airlock_protocol::commands as cmd;
use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

fn pairs(
    items: &[String],
    separator: char,
    what: &str,
) -> anyhow::Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|item| {
            item.split_once(separator)
                .map(|(k, v)| (k.trim().to_string(), v.trim_start().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .with_context(|| format!("{what} '{item}' is not NAME{separator}VALUE"))
        })
        .collect()
}

/// `on`, `off` or `default` (forget the choice), as `from-notification` takes it.
pub fn from_notification(allow: &str) -> Option<bool> {
    match allow {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

pub async fn run(
    client: &ApiClient,
    data_dir: &Path,
    json: bool,
    action: Option<ServersAction>,
) -> anyhow::Result<ExitCode> {
    let Some(action) = action else {
        return list(client, json).await;
    };
    match action {
        ServersAction::Add {
            name,
            url,
            headers,
            sign_in: identity,
            no_sign_in,
            env,
            cwd,
            command,
        } => {
            let config = match url {
                Some(url) => {
                    let config = ServerConfig::Http {
                        url: url.clone(),
                        headers: pairs(&headers, ':', "header")?,
                    };
                    config.validate().map_err(anyhow::Error::msg)?;
                    if server_url(client, &name).await.is_ok() {
                        bail!("a server named '{name}' exists already");
                    }
                    // Signed in before it is added, so that its first connection has the token.
                    if !no_sign_in {
                        sign_in(data_dir, &name, &url, identity, true).await?;
                    }
                    config
                }
                None => {
                    let Some((program, args)) = command.split_first() else {
                        bail!(
                            "give the server's command after `--` (servers add NAME -- COMMAND ARGS...) or --url URL"
                        );
                    };
                    ServerConfig::Stdio {
                        command: program.clone(),
                        args: args.to_vec(),
                        env: pairs(&env, '=', "env")?,
                        cwd,
                    }
                }
            };
            client
                .call(&cmd::SaveServer {
                    name: name.clone(),
                    config,
                })
                .await?;
            println!(
                "added server '{name}' (new servers ask before every tool call; see `airlock servers`)"
            );
        }
        ServersAction::Login {
            name,
            sign_in: identity,
        } => {
            let url = server_url(client, &name).await?;
            sign_in(data_dir, &name, &url, identity, false).await?;
            restart(client, &name).await?;
        }
        ServersAction::Logout { name } => {
            let url = server_url(client, &name).await?;
            TokenStore::new(data_dir, &name, &url).forget()?;
            restart(client, &name).await?;
            println!("{name}: signed out (its tokens are forgotten)");
        }
        ServersAction::Import { file, yes } => {
            let contents = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            // Importing starts every server, and a command such as `npx -y …` downloads and
            // runs code: show what would run and start nothing until the person confirms.
            if !yes {
                let preview = client
                    .call(&cmd::PreviewImportServers { text: contents })
                    .await?;
                println!("{} would add (each starts at once):", file.display());
                for server in &preview.servers {
                    println!("  {}: {}", visible_line(&server.name), server.runs);
                }
                for refused in &preview.refused {
                    println!(
                        "  {}: refused: {}",
                        visible_line(&refused.name),
                        refused.reason
                    );
                }
                println!(
                    "Nothing was added. To add them: airlock servers import {} --yes",
                    file.display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            // Every valid server is added; each refused one is reported, and the exit status
            // says some were.
            let report = client.call(&cmd::ImportServers { text: contents }).await?;
            for name in &report.added {
                println!("imported server '{}'", visible_line(name));
            }
            for refused in &report.refused {
                eprintln!(
                    "refused server '{}': {}",
                    visible_line(&refused.name),
                    refused.reason
                );
            }
            if !report.refused.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
        }
        ServersAction::Default { name, default } => {
            let value = if default == "required" {
                ServerDefault::Required
            } else {
                ServerDefault::NotRequired
            };
            client
                .call(&cmd::SetServerDefault {
                    name: name.clone(),
                    default: value,
                })
                .await?;
            println!("{name}: tools without their own setting are approval {default}");
        }
        ServersAction::FromNotification { name, allow } => {
            client
                .call(&cmd::SetFromNotification {
                    server: name.clone(),
                    tool: None,
                    allow: from_notification(&allow),
                })
                .await?;
            println!("{name}: approve its tools from a notification {allow}");
        }
        ServersAction::Trust { name, trust } => {
            let on = trust == "on";
            client
                .call(&cmd::SetServerTrust {
                    name: name.clone(),
                    trust: on,
                })
                .await?;
            println!(
                "{name}: read-only hints {}",
                if on { "trusted" } else { "not trusted" }
            );
        }
        ServersAction::Enable { name } => {
            client
                .call(&cmd::SetServerEnabled {
                    name: name.clone(),
                    enabled: true,
                })
                .await?;
            println!("{name}: enabled");
        }
        ServersAction::Disable { name } => {
            client
                .call(&cmd::SetServerEnabled {
                    name: name.clone(),
                    enabled: false,
                })
                .await?;
            println!("{name}: disabled");
        }
        ServersAction::Remove { name } => {
            let denied = client
                .call(&cmd::RemoveServer { name: name.clone() })
                .await?;
            match denied {
                0 => println!("removed server '{name}'"),
                1 => println!("removed server '{name}'; denied 1 waiting request"),
                n => println!("removed server '{name}'; denied {n} waiting requests"),
            }
        }
        ServersAction::Review { name, accept, json } => {
            let changes = client
                .call(&cmd::ServerChanges { name: name.clone() })
                .await?;
            if json && !accept {
                println!("{}", serde_json::to_string_pretty(&changes)?);
                return Ok(ExitCode::SUCCESS);
            }
            if changes.is_empty() {
                println!("{name}: nothing changed since the last review");
                return Ok(ExitCode::SUCCESS);
            }
            print!("{}", review_text(&changes));
            if accept {
                let accepted = client
                    .call(&cmd::AcceptServerChanges {
                        name: name.clone(),
                        changes,
                    })
                    .await?;
                println!(
                    "accepted {} changed tool(s) of '{name}'; their grants apply again",
                    accepted.len()
                );
            } else {
                println!(
                    "Their grants stay suspended (every call asks). Accept: airlock servers review {name} --accept"
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What changed in each tool, field by field, as `-` (reviewed) and `+` (now) lines; hidden
/// characters shown escaped.
fn review_text(changes: &[ToolChange]) -> String {
    use airlock_core::display::visible;
    let mut out = String::new();
    for change in changes {
        out.push_str(&format!(
            "{}/{}: {}\n",
            visible(&change.server),
            visible(&change.tool),
            visible(&change.change)
        ));
        for field in ["description", "input_schema", "annotations"] {
            let (before, after) = (change.before.get(field), change.after.get(field));
            if before == after {
                continue;
            }
            out.push_str(&format!("  {field}:\n"));
            let lines = |value: Option<&Value>| -> String {
                match value {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
                    None => "(none)".into(),
                }
            };
            for (sign, value) in [("-", before), ("+", after)] {
                for line in lines(value).lines() {
                    out.push_str(&format!("    {sign} {}\n", visible(line)));
                }
            }
        }
    }
    out
}

/// The URL of remote server `name`.
async fn server_url(client: &ApiClient, name: &str) -> anyhow::Result<String> {
    let servers = client.call_json(&cmd::Servers {}).await?;
    let server = servers
        .as_array()
        .into_iter()
        .flatten()
        .find(|server| server["name"] == json!(name))
        .with_context(|| format!("no server named '{name}' (see `airlock servers`)"))?;
    server["config"]["url"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("'{name}' is not a remote server (it has no URL to sign in to)"))
}

/// Restarts a server so that it connects with its new sign-in (or without its old one).
async fn restart(client: &ApiClient, name: &str) -> anyhow::Result<()> {
    client
        .call(&cmd::SetServerEnabled {
            name: name.to_string(),
            enabled: true,
        })
        .await?;
    Ok(())
}

/// Signs in to the server at `url` (OAuth in the browser). `optional`: a server that does not
/// ask for a sign-in is fine (when adding one).
async fn sign_in(
    data_dir: &Path,
    name: &str,
    url: &str,
    identity: SignInArgs,
    optional: bool,
) -> anyhow::Result<()> {
    let store = TokenStore::new(data_dir, name, url);
    if identity.client_credentials {
        let client = machine_client(&identity)?;
        return match oauth::sign_in_machine(&store, &client).await {
            Ok(()) => {
                println!(
                    "{name}: signed in as machine client '{}' (its credential and tokens kept in {})",
                    client.client_id,
                    store.location()
                );
                Ok(())
            }
            Err(OAuthError::NotNeeded) if optional => Ok(()),
            Err(error) => Err(anyhow::anyhow!("{name}: {error}")),
        };
    }
    let identity = ClientIdentity {
        client_id: identity.client_id,
        client_secret: identity.client_secret,
        client_metadata_url: identity.client_metadata_url,
    };
    let announce = |url: &str| {
        eprintln!("{name}: sign in in the browser (if it did not open, open this page):\n  {url}");
    };
    match oauth::sign_in(
        &store,
        &identity,
        &oauth::open_browser,
        &announce,
        oauth::SIGN_IN_TIMEOUT,
    )
    .await
    {
        Ok(()) => {
            println!("{name}: signed in (tokens kept in {})", store.location());
            Ok(())
        }
        Err(OAuthError::NotNeeded) if optional => Ok(()),
        Err(error) => Err(anyhow::anyhow!("{name}: {error}")),
    }
}

/// The machine client of `--client-credentials`: its secret from the environment variable
/// named, or its private key from the file (neither is ever on the command line).
fn machine_client(identity: &SignInArgs) -> anyhow::Result<oauth::MachineClient> {
    let client_id = identity
        .client_id
        .clone()
        .context("--client-credentials needs --client-id")?;
    let secret = match (&identity.client_secret_env, &identity.private_key) {
        (Some(variable), None) => {
            let secret = std::env::var(variable)
                .ok()
                .filter(|secret| !secret.is_empty())
                .with_context(|| format!("the environment variable {variable} holds no secret"))?;
            oauth::MachineSecret::ClientSecret(secret)
        }
        (None, Some(file)) => oauth::MachineSecret::PrivateKey {
            pem: std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the private key {}", file.display()))?,
            algorithm: identity.signing_alg.clone(),
        },
        _ => bail!("--client-credentials needs --client-secret-env VAR or --private-key FILE"),
    };
    Ok(oauth::MachineClient { client_id, secret })
}

async fn list(client: &ApiClient, json: bool) -> anyhow::Result<ExitCode> {
    let servers = client.call_json(&cmd::Servers {}).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&servers)?);
        return Ok(ExitCode::SUCCESS);
    }
    for server in servers.as_array().into_iter().flatten() {
        let status = &server["status"];
        let state = match (text(&status["state"]).as_str(), server["kind"].as_str()) {
            (_, Some("builtin")) => "ready".to_string(),
            ("failed", _) => format!("failed: {}", text(&status["reason"])),
            (airlock_mcp::SIGN_IN_NEEDED, _) => text(&status["reason"]),
            ("", _) => "stopped".to_string(),
            (state, _) => state.to_string(),
        };
        let trust = if server["trust_read_only_hints"] == json!(true) {
            "\ttrusts read-only hints"
        } else {
            ""
        };
        for skipped in status["skipped_tools"].as_array().into_iter().flatten() {
            eprintln!(
                "airlock: {}: tool skipped: {}",
                text(&server["name"]),
                text(skipped)
            );
        }
        println!(
            "{}\t{}\t{state}\tdefault: approval {}{trust}",
            text(&server["name"]),
            text(&server["kind"]),
            text(&server["default"])
        );
    }
    Ok(ExitCode::SUCCESS)
}
