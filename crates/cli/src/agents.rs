//! `airlock connect`, `disconnect` and `agents`: which agents send their tool calls through
//! Airlock, and what their hooks answer when Airlock cannot.

use airlock_agents::connect::{ConnectReport, HttpHook, Options, Target};
use airlock_api::ApiClient;
use airlock_protocol::{AgentStatus, AgentToolDefaults, AgentView};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The options the installed commands carry: this very binary by absolute path, and the data
/// directory unless it is the default one.
pub fn options(
    data_dir: &Path,
    timeout_secs: u64,
    codex: Option<PathBuf>,
) -> anyhow::Result<Options> {
    let airlock = std::env::current_exe().context("cannot tell where the airlock binary is")?;
    let data_dir = std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let default = airlock_api::host::default_data_dir();
    Ok(Options {
        airlock,
        data_dir: (default.as_ref() != Some(&data_dir)).then_some(data_dir),
        timeout_secs,
        codex,
    })
}

fn print_report(
    report: &ConnectReport,
    defaults: Option<&AgentToolDefaults>,
    json: bool,
    connecting: bool,
) -> anyhow::Result<()> {
    if json {
        let mut value = serde_json::to_value(report)?;
        if let (Some(defaults), Some(object)) = (defaults, value.as_object_mut()) {
            object.insert("tool_settings".into(), serde_json::to_value(defaults)?);
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let verb = if connecting {
        "connected"
    } else {
        "disconnected"
    };
    if !report.changed {
        println!(
            "{}: already {verb} ({} unchanged)",
            report.agent, report.path
        );
        return Ok(());
    }
    println!("{}: {verb} — changed {}", report.agent, report.path);
    for change in &report.changes {
        println!("  {change}");
    }
    if let Some(backup) = &report.backup {
        println!("  (the file as it was: {backup})");
    }
    Ok(())
}

/// Sets the agent's read-only tools to "approval not required" in Airlock's own tool settings
/// (never the agent's config), keeping any setting the person made: on the team server the
/// agent reaches, else through the running engine, else in the store directly under the engine
/// lock.
async fn apply_tool_defaults(
    data_dir: &Path,
    team: Option<&TeamServer>,
    agent: &str,
) -> anyhow::Result<AgentToolDefaults> {
    let client = match team {
        Some(team) => Some(team.client.clone()),
        None => ApiClient::discover(data_dir).ok(),
    };
    if let Some(client) = client {
        let defaults = airlock_protocol::commands::ApplyAgentDefaults {
            agent: agent.to_string(),
        };
        return Ok(client.call(&defaults).await?);
    }
    let _lock = airlock_api::discovery::EngineLock::acquire(data_dir)
        .context("Airlock is starting or does not answer")?;
    Ok(airlock_engine::agents::connect_agent_defaults_offline(
        data_dir, agent,
    )?)
}

fn print_tool_defaults(defaults: &AgentToolDefaults) {
    if defaults.set.is_empty() && defaults.kept.is_empty() {
        println!(
            "  Its hook reports every command as one tool (Bash), so no read-only tool was set; reads ask unless an argument rule allows them (Settings → Argument rules)."
        );
        return;
    }
    if !defaults.set.is_empty() {
        println!(
            "  In Airlock, its read-only tools need no approval now: {} (change it in Settings → Tools).",
            defaults.set.join(", ")
        );
    }
    if !defaults.kept.is_empty() {
        println!("  Your own settings kept: {}.", defaults.kept.join(", "));
    }
}

/// How `connect` connects an agent.
#[derive(Debug)]
pub struct How {
    pub project: Option<PathBuf>,
    pub timeout_secs: u64,
    pub codex: Option<PathBuf>,
    /// An HTTP hook with the agent's own token instead of the command hook.
    pub http: bool,
    /// A team server the agent's hook reaches instead of this machine's engine (`--engine`).
    pub team: Option<TeamServer>,
}

/// A team server an agent on this machine sends its calls to (`airlock --engine URL --token T
/// connect AGENT`): the server issues the agent's own token, and its hook posts there.
#[derive(Debug)]
pub struct TeamServer {
    /// As given (`https://HOST:PORT`); the hook posts beneath it.
    pub url: String,
    /// With the person's member token (an admin's: issuing a token changes who may post).
    pub client: ApiClient,
    /// Whether the client pins the server's own certificate (`--engine-cert`): the agent's
    /// HTTP client trusts only the system's certificates unless told otherwise.
    pub pinned_certificate: Option<PathBuf>,
}

/// The name a team server issues this machine's agent its token for: `AGENT@MACHINE`
/// (`claude-code@build-7`), so that the same agent on each machine has a token of its own, each
/// speaking for the agent; the host name in the letters such a name takes.
fn token_name(agent: &str) -> String {
    let host = gethostname::gethostname().to_string_lossy().to_lowercase();
    let machine: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(64)
        .collect();
    if machine.is_empty() {
        agent.to_string()
    } else {
        format!("{agent}@{machine}")
    }
}

/// The agent's HTTP hook on a team server: a new token of this machine's agent from the server
/// (replacing the one it had there), posting to the server's hook route for the agent.
async fn team_hook(team: &TeamServer, target: &Target) -> anyhow::Result<HttpHook> {
    if let Some(why) = target.writer().no_http_hook() {
        anyhow::bail!(
            "an agent reaches a team server through its HTTP hook, and Airlock installs none for {}: {why}",
            target.name()
        );
    }
    let issued = team
        .client
        .call(&airlock_protocol::commands::IssueAgentToken {
            agent: token_name(target.name()),
        })
        .await
        .with_context(|| format!("the team server {} did not issue a token", team.url))?;
    Ok(HttpHook {
        url: format!(
            "{}{}{}",
            team.url.trim_end_matches('/'),
            airlock_protocol::agents::AGENT_HOOK_PATH,
            target.name()
        ),
        token: issued.token,
    })
}

/// The agent's HTTP hook: a new token of its own from the running engine (replacing the one it
/// had) and the engine's hook URL for it.
async fn http_hook(data_dir: &Path, target: &Target) -> anyhow::Result<HttpHook> {
    if let Some(why) = target.writer().no_http_hook() {
        anyhow::bail!("{}: {why}", target.name());
    }
    let client = ApiClient::discover(data_dir)
        .context("--http needs the running engine (it issues the agent's own token)")?;
    let issued = client
        .call(&airlock_protocol::commands::IssueAgentToken {
            agent: target.name().to_string(),
        })
        .await?;
    let url = issued
        .hook_url
        .context("the running engine does not listen for agents' HTTP hooks (see its log)")?;
    Ok(HttpHook {
        url,
        token: issued.token,
    })
}

pub async fn connect(
    data_dir: &Path,
    agent: &str,
    how: How,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if how.timeout_secs < 2 {
        anyhow::bail!("--timeout must be at least 2 seconds");
    }
    if how.team.is_some() && how.project.is_some() {
        // A project's settings are shared (often in git): no token goes there.
        anyhow::bail!("--engine connects the agent in your user settings; leave out --project");
    }
    let target = Target::parse(agent, how.project)?;
    let options = options(data_dir, how.timeout_secs, how.codex)?;
    let report = match (&how.team, how.http) {
        (Some(team), _) => {
            let hook = team_hook(team, &target).await?;
            airlock_agents::connect::connect_http(&target, &options, &hook)?
        }
        (None, true) => {
            let hook = http_hook(data_dir, &target).await?;
            airlock_agents::connect::connect_http(&target, &options, &hook)?
        }
        (None, false) => airlock_agents::connect::connect(&target, &options)?,
    };
    // An agent whose hook Airlock answers has its own tools, some of which only read.
    let defaults = match target.agent().dialect() {
        None => None,
        Some(_) => Some(
            apply_tool_defaults(data_dir, how.team.as_ref(), target.name())
                .await
                .with_context(|| {
                    format!(
                        "{} is connected ({} changed), but its read-only tools' settings in Airlock were not set; run connect again",
                        target.name(),
                        report.path
                    )
                })?,
        ),
    };
    print_report(&report, defaults.as_ref(), json, true)?;
    if let (false, Some(defaults)) = (json, &defaults) {
        print_tool_defaults(defaults);
    }
    if let (false, Some(note)) = (json, target.writer().connected_note(&report)) {
        println!("  {note}");
    }
    if let (Some(team), false) = (&how.team, json) {
        println!(
            "  Over HTTP to the team server {} with a token of {} on this machine's own, which can post its calls and nothing else (not read the inbox, not decide). When the server does not answer the call is blocked (`onFailure: \"block\"`); `airlock --engine {} --token T agents revoke {}` refuses the token.",
            team.url,
            target.name(),
            team.url,
            token_name(target.name())
        );
        if let Some(pem) = &team.pinned_certificate {
            println!(
                "  The server's certificate is its own: start {} with NODE_EXTRA_CA_CERTS={} so its hook trusts it (or serve the team behind a load balancer with a certificate this machine trusts).",
                target.name(),
                pem.display()
            );
        }
    } else if how.http && !json {
        println!(
            "  Over HTTP: the hook posts to the engine's own loopback port (kept across restarts) with {}'s own token, which can post its calls and nothing else. When Airlock is not running the call is blocked (`onFailure: \"block\"`), whatever the fallback; `airlock agents revoke {}` refuses the token.",
            target.name(),
            target.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `agents token NAME`: a new token of the agent's own, alone on the last line.
pub async fn issue_token(client: &ApiClient, agent: &str) -> anyhow::Result<ExitCode> {
    let issued = client
        .call(&airlock_protocol::commands::IssueAgentToken {
            agent: agent.to_string(),
        })
        .await?;
    println!(
        "{agent}'s own token (shown once; it replaces the one {agent} had): it may post {agent}'s calls and read their decisions, nothing else."
    );
    if let Some(url) = &issued.hook_url {
        println!("Its HTTP hook posts to {url}");
    }
    println!("{}", issued.token);
    Ok(ExitCode::SUCCESS)
}

/// `agents revoke NAME`.
pub async fn revoke_token(client: &ApiClient, agent: &str) -> anyhow::Result<ExitCode> {
    let revoked = client
        .call(&airlock_protocol::commands::RevokeAgentToken {
            agent: agent.to_string(),
        })
        .await?;
    if revoked {
        println!("{agent}'s own token is refused from now on");
    } else {
        println!("{agent} had no token of its own");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn disconnect(agent: &str, project: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let target = Target::parse(agent, project)?;
    let report = airlock_agents::connect::disconnect(&target)?;
    print_report(&report, None, json, false)?;
    Ok(ExitCode::SUCCESS)
}

/// Every agent: its connection (from its own files) and, when an engine runs, its fallback and
/// last request; and the programs that ask through the approval clients (every other agent the
/// engine knows but the MCP proxy's clients).
async fn statuses(
    data_dir: &Path,
) -> anyhow::Result<(Vec<AgentStatus>, Vec<AgentView>, Option<String>)> {
    let (views, engine_note) = match ApiClient::discover(data_dir) {
        Ok(client) => match client
            .call(&airlock_protocol::commands::AgentViews {})
            .await
        {
            Ok(views) => (views, None),
            Err(error) => (Vec::new(), Some(error.to_string())),
        },
        Err(error) => (Vec::new(), Some(error.to_string())),
    };
    let all = airlock_agents::connect::statuses(&views)?;
    let programs = views
        .into_iter()
        .filter(|view| {
            view.name != airlock_core::MCP_CLIENT
                && !all
                    .iter()
                    .any(|status| status.connection.agent == view.name)
        })
        .collect();
    Ok((all, programs, engine_note))
}

pub async fn list(data_dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let (all, programs, note) = statuses(data_dir).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    for status in &all {
        let connection = &status.connection;
        let state = if connection.connected {
            "connected"
        } else {
            "not connected"
        };
        print!("{:<15} {state:<14} {}", connection.agent, connection.path);
        if let Some(view) = &status.view {
            print!("  fallback {}", view.fallback);
            match (&view.last_request_at, &view.last_tool) {
                (Some(at), Some(tool)) => print!(
                    "  last: {tool} at {at}{}{}",
                    view.last_cwd
                        .as_deref()
                        .map(|c| format!(" in {c}"))
                        .unwrap_or_default(),
                    view.last_outcome
                        .as_deref()
                        .map(|o| format!(" ({o})"))
                        .unwrap_or_default()
                ),
                _ => print!("  no requests yet"),
            }
        }
        println!();
    }
    // The programs of one's own (approval clients), listed like the agents; `GET /v1/agents`
    // has them with their views.
    for view in &programs {
        print!("{:<15} {:<14} ", view.name, "program");
        match (&view.last_request_at, &view.last_tool) {
            (Some(at), Some(tool)) => print!(
                "last: {tool} at {at}{}",
                view.last_outcome
                    .as_deref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default()
            ),
            _ => print!("no requests yet"),
        }
        match &view.token_issued_at {
            Some(at) => print!("  own token since {at}"),
            None => print!("  no token of its own"),
        }
        println!();
    }
    if let Some(note) = note {
        println!("(fallbacks and last requests need a running engine: {note})");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn set_fallback(
    client: &ApiClient,
    agent: &str,
    fallback: &str,
) -> anyhow::Result<ExitCode> {
    client
        .call(&airlock_protocol::commands::SetAgentFallback {
            agent: agent.to_string(),
            fallback: serde_json::from_value(serde_json::json!(fallback))?,
        })
        .await?;
    println!("{agent}: when Airlock cannot answer, the hook answers {fallback}");
    Ok(ExitCode::SUCCESS)
}

/// `agents add NAME --acp -- COMMAND…`, or `agents add PRESET` (its command found on PATH).
pub async fn add_hosted(
    client: &ApiClient,
    name: &str,
    acp: bool,
    command: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let (command, note) = if command.is_empty() {
        let Some(preset) = airlock_acp::presets::preset(name) else {
            anyhow::bail!(
                "'{name}' is no preset ({}): give its command, `airlock agents add {name} --acp -- COMMAND [ARGS…]`",
                airlock_acp::presets::names().join(", ")
            );
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        let Some(command) = preset.command_on(&path) else {
            anyhow::bail!(
                "{} is not on PATH (install it: {}), or give its command after `--`",
                preset.program,
                preset.install
            );
        };
        (command, preset.note)
    } else {
        if !acp {
            anyhow::bail!(
                "Airlock hosts agents over ACP only: `airlock agents add {name} --acp -- COMMAND…`"
            );
        }
        (command, "")
    };
    client
        .call(&airlock_protocol::commands::SaveAcpAgent {
            name: name.to_string(),
            command: command.clone(),
        })
        .await?;
    println!(
        "{name}: hosted over ACP as `{}`; start a chat with `airlock chat --agent {name} --session NAME \"…\"`",
        command.join(" ")
    );
    if !note.is_empty() {
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn remove_hosted(client: &ApiClient, name: &str) -> anyhow::Result<ExitCode> {
    let removed = client
        .call(&airlock_protocol::commands::RemoveAcpAgent {
            name: name.to_string(),
        })
        .await?;
    if removed {
        println!("{name}: removed");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("airlock: no hosted agent named '{name}'");
        Ok(ExitCode::from(1))
    }
}

pub async fn list_hosted(client: &ApiClient, json: bool) -> anyhow::Result<ExitCode> {
    let agents = client
        .call(&airlock_protocol::commands::AcpAgents {})
        .await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&agents)?);
    } else if agents.is_empty() {
        println!("no hosted agents (`airlock agents add NAME --acp -- COMMAND…` adds one)");
    } else {
        for agent in agents {
            println!("{}\t{}", agent.name, agent.command.join(" "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
