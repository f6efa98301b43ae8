//! `airlock`: the headless engine (`serve`) and a client of its local API for everything else.
//! Exit codes: 0 done, 1 refused or failed (message on stderr), 2 usage error.

/// The engine allocates many small short-lived values per step (JSON, SQL rows, HTTP frames);
/// mimalloc serves them with less contention between the runtime's threads than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod agents;
mod commands;
mod insights;
mod mcp_proxy;
mod remote;
mod serve;
mod servers;
mod shown;
mod team;

use anyhow::Context;
use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "airlock",
    version,
    about = "Approval inbox for AI agent tool calls"
)]
struct Cli {
    /// The data directory (default: $AIRLOCK_DATA_DIR, else the platform's data folder).
    #[arg(long, global = true, env = "AIRLOCK_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// A team server to talk to instead of this machine's engine (https://HOST:PORT, or
    /// http://127.0.0.1:PORT on this machine).
    #[arg(long, global = true, env = "AIRLOCK_ENGINE", value_name = "URL")]
    engine: Option<String>,
    /// Your member token on that team server (`team init` needs none).
    #[arg(
        long,
        global = true,
        env = "AIRLOCK_TOKEN",
        hide_env_values = true,
        requires = "engine"
    )]
    token: Option<String>,
    /// A PEM certificate to trust for that team server (its own, which `airlock serve
    /// --listen` prints where it keeps).
    #[arg(
        long,
        global = true,
        env = "AIRLOCK_ENGINE_CERT",
        value_name = "PEM",
        requires = "engine"
    )]
    engine_cert: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the headless engine and its local API; on an address other than loopback, also a
    /// team server over HTTPS (its certificate made on first use, in the data directory).
    Serve {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
        /// Folder of the built-in tools (default: Airlock in your documents folder).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Keep the state in this PostgreSQL database (`postgres://…`) instead of the data
        /// directory's SQLite file: several `airlock serve` on one database are replicas of
        /// one team server (docs/TEAM.md).
        #[arg(long, env = "AIRLOCK_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Send a user message; wait for the turn to end and print the answer.
    Chat {
        #[arg(long, default_value = "default")]
        session: String,
        /// Print the session name and return at once.
        #[arg(long)]
        no_wait: bool,
        /// Use this named provider for the session (see `provider set --name`).
        #[arg(long, conflicts_with = "agent")]
        provider: Option<String>,
        /// Host the chat by this agent over ACP (`agents add NAME --acp -- COMMAND…`); later
        /// messages to the session go to it too.
        #[arg(long)]
        agent: Option<String>,
        /// The folder the agent works in (with --agent; default: the workspace).
        #[arg(long, requires = "agent")]
        folder: Option<PathBuf>,
        message: String,
    },
    /// People on a team server: init, add, members, remove, route, routes, unroute.
    Team {
        #[command(subcommand)]
        action: team::TeamAction,
    },
    /// Hand a waiting item to another person on a team server, with a note for them.
    Delegate {
        id: String,
        #[arg(long, value_name = "PERSON")]
        to: String,
        #[arg(long)]
        note: Option<String>,
    },
    /// Pending requests, oldest first.
    Inbox {
        #[arg(long)]
        json: bool,
    },
    /// Approve one or more requests.
    #[command(group(clap::ArgGroup::new("grant").multiple(true).args(["for_duration", "times"])))]
    Approve {
        #[arg(required = true)]
        ids: Vec<String>,
        /// Run with these arguments instead (a JSON object, checked against the tool's schema).
        #[arg(long)]
        args: Option<String>,
        /// Allow this tool for the rest of the chat.
        #[arg(long)]
        for_chat: bool,
        #[arg(long, value_parser = ["session", "always"])]
        remember: Option<String>,
        /// With --remember, --for or --times: only for exactly these arguments.
        #[arg(long)]
        exact_args: bool,
        /// Let later calls of this tool run without asking for this long (15m, 1h, 2h 30m; at
        /// most 7 days): in this chat (see --scope) with arguments like these (see --pattern).
        #[arg(long = "for", value_name = "DURATION")]
        for_duration: Option<String>,
        /// Approve this call and let the next N-1 calls of this tool run without asking (in
        /// this chat, with arguments like these, as --for).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        times: Option<u32>,
        /// With --for or --times: the chats the grant covers, this one (the default; an agent's
        /// call: its session) or every chat.
        #[arg(long, value_parser = ["chat", "all"], requires = "grant")]
        scope: Option<String>,
        /// With --for or --times: a glob the command or path of later calls must match, instead
        /// of the suggested pattern (the file's folder, the command's prefix that cannot chain;
        /// these exact arguments when the call has neither). It must cover this call.
        #[arg(long, value_name = "GLOB", requires = "grant", conflicts_with_all = ["any_args", "exact_args"])]
        pattern: Option<String>,
        /// With --for or --times: any arguments of the tool (for a command tool: any command).
        #[arg(long, requires = "grant", conflicts_with = "exact_args")]
        any_args: bool,
    },
    /// Deny one or more requests; the model reads the reason.
    Deny {
        #[arg(required = true)]
        ids: Vec<String>,
        #[arg(long)]
        reason: Option<String>,
        #[arg(long, value_parser = ["session", "always"])]
        remember: Option<String>,
    },
    /// Answer an elicitation (a server asking for input): accept with a JSON object matching
    /// the requested form, decline, or cancel.
    #[command(group(clap::ArgGroup::new("answer").required(true).args(["accept", "decline", "cancel"])))]
    Answer {
        id: String,
        #[arg(long, value_name = "JSON")]
        accept: Option<String>,
        #[arg(long)]
        decline: bool,
        #[arg(long)]
        cancel: bool,
    },
    /// MCP servers with their state, or add/import/configure one.
    Servers {
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<ServersAction>,
    },
    /// A session's messages and tool calls.
    Transcript {
        #[arg(long)]
        session: String,
        #[arg(long)]
        json: bool,
    },
    /// Wait for a session's turn to end and print the answer (for scripts).
    Wait {
        #[arg(long)]
        session: String,
    },
    /// Cancel a session's running turn.
    Cancel {
        #[arg(long)]
        session: String,
    },
    /// Sessions and their status.
    Sessions {
        #[arg(long)]
        json: bool,
    },
    /// The model provider.
    Provider {
        #[command(subcommand)]
        action: ProviderAction,
    },
    /// Show the desktop app's window, on the inbox item ID when given.
    Open { id: Option<String> },
    /// Pause all agents: no model request or tool run starts until `resume`; waiting requests
    /// stay in the inbox and can still be decided.
    Pause,
    /// Resume the agents after `pause`.
    Resume,
    /// Approval mode of the workspace or of one session.
    Mode {
        #[command(subcommand)]
        action: ModeAction,
    },
    /// Every tool with its effective setting, or `tools set SERVER/TOOL SETTING`.
    Tools {
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<ToolsAction>,
    },
    /// Argument rules.
    Rules {
        #[command(subcommand)]
        action: RulesAction,
    },
    /// Other settings: approval-timeout (seconds, 0 = off), step-limit, system-prompt.
    Settings {
        #[command(subcommand)]
        action: SettingsAction,
    },
    /// Remembered decisions.
    Remembered {
        #[command(subcommand)]
        action: Option<RememberedAction>,
        #[arg(long)]
        json: bool,
    },
    /// Active timed and counted grants (made with `approve --for` / `--times`), with what is
    /// left of each; `grants revoke ID` ends one.
    Grants {
        #[command(subcommand)]
        action: Option<RememberedAction>,
        #[arg(long)]
        json: bool,
    },
    /// Per tool: requests, approved and denied, median time to decide, decisions made within a
    /// second, and suggestions (a rule, or not asking).
    Insights {
        #[arg(long)]
        json: bool,
    },
    /// The audit trail, oldest first.
    Audit {
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// The coding agents' hook (Claude Code's and Codex's PreToolUse / PermissionRequest): reads
    /// the event on stdin, waits for the decision, prints it. Installed by `airlock connect`.
    Hook {
        #[arg(value_parser = PossibleValuesParser::new(airlock_agents::hook_agent_names()))]
        agent: String,
        /// The agent's hook timeout (seconds); the fallback is answered a little before it.
        #[arg(long, default_value_t = airlock_core::DEFAULT_HOOK_TIMEOUT_SECS)]
        timeout: u64,
    },
    /// Send an agent's tool calls through Airlock: `connect claude-code [--project DIR]`,
    /// `codex`, `copilot`, `qwen [--project DIR]`, `gemini`, `cursor [--project DIR]`, `goose`
    /// (their hooks), `claude-desktop` (its MCP servers run through `mcp-proxy`). With `--engine
    /// URL --token T` (an admin's): the agent posts to that team server with a token of its own
    /// (its HTTP hook), which can post its calls and nothing else.
    Connect {
        #[arg(value_parser = PossibleValuesParser::new(airlock_agents::connect::names()))]
        agent: String,
        /// claude-code, qwen, cursor: this project's settings (`.claude/settings.json`,
        /// `.qwen/settings.json`, `.cursor/hooks.json`) instead of your user settings.
        #[arg(long)]
        project: Option<PathBuf>,
        /// The hook's timeout in the agent's config (seconds).
        #[arg(long, default_value_t = airlock_core::DEFAULT_HOOK_TIMEOUT_SECS)]
        timeout: u64,
        /// codex: the Codex binary to ask for the hook's trust hash (default: `codex` on PATH).
        #[arg(long)]
        codex: Option<PathBuf>,
        /// claude-code: an HTTP hook posting straight to the running engine with the agent's
        /// own token (no process per call), instead of the command hook.
        #[arg(long, conflicts_with = "project")]
        http: bool,
        #[arg(long)]
        json: bool,
    },
    /// Undo `connect`.
    Disconnect {
        #[arg(value_parser = PossibleValuesParser::new(airlock_agents::connect::names()))]
        agent: String,
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// An MCP server through Airlock, for any MCP client (Claude Desktop, Cursor, VS Code):
    /// `mcp-proxy NAME` runs a server configured in Airlock, `mcp-proxy --name NAME -- COMMAND
    /// ARGS...` any command, `mcp-proxy --name NAME --url URL` any remote server (signing in
    /// in the browser when it asks). Speaks MCP on stdin/stdout; every tools/call waits for
    /// Airlock.
    #[command(name = "mcp-proxy")]
    McpProxy {
        /// A server configured in Airlock (`airlock servers`).
        #[arg(conflicts_with = "name")]
        server: Option<String>,
        /// The name Airlock's settings and rules know the proxied command or URL by.
        #[arg(long)]
        name: Option<String>,
        /// A remote server (streamable HTTP) not configured in Airlock; its headers come from
        /// `--header` and the environment variable AIRLOCK_MCP_HEADERS (a JSON object).
        #[arg(long, requires = "name", conflicts_with = "command")]
        url: Option<String>,
        /// A header for the remote server, `Name: value` (repeat it).
        #[arg(long = "header", requires = "url")]
        headers: Vec<String>,
        /// The server's command and arguments, after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// The agents: connected or not, their fallback, their last request; or `agents set`.
    Agents {
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<AgentsAction>,
    },
    /// The paired phone inbox (HTTPS on an address you pick): `remote enable --listen
    /// ADDR:PORT`, `disable`, `pair [--json]`, `devices [--json]`, `revoke ID`.
    Remote {
        #[command(subcommand)]
        action: RemoteAction,
    },
}

#[derive(Subcommand, Debug)]
enum AgentsAction {
    /// What the agent's hook answers when Airlock cannot (no engine, or nobody decided in
    /// time): `ask` gives the call back to the agent's own prompt, `deny` denies it.
    Set {
        #[arg(value_parser = PossibleValuesParser::new(airlock_agents::hook_agent_names()))]
        agent: String,
        #[arg(long, value_parser = ["ask", "deny"])]
        fallback: String,
    },
    /// A new token of the agent's own (claude-code, codex, an SDK client's name, …), printed
    /// once on the last line: it may post that agent's calls and read their decisions, nothing
    /// else. It replaces the one the agent had.
    Token { agent: String },
    /// The agent's own token is refused from now on.
    Revoke { agent: String },
    /// Registers an agent Airlock hosts over ACP: `agents add NAME --acp -- COMMAND [ARGS…]`,
    /// or a preset by its name alone when its command is on PATH (qwen, opencode, gemini,
    /// claude-code-acp, codex-acp, copilot; with the flags that make it ask).
    Add {
        name: String,
        /// Speak the Agent Client Protocol to it (the only way Airlock hosts an agent).
        #[arg(long)]
        acp: bool,
        /// The agent's command and arguments, after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Forgets a hosted agent.
    Remove { name: String },
    /// The agents Airlock hosts over ACP, with their commands.
    Hosted {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum ProviderAction {
    /// Set the default provider, or a named one with --name.
    Set(Box<ProviderSet>),
    /// The default provider and the named ones.
    Show,
    /// Keep the provider's API key in the OS keyring (read from stdin, never from an argument:
    /// arguments are visible to other processes); the store keeps only that it is there.
    Key {
        /// A named provider instead of the default one.
        #[arg(long)]
        name: Option<String>,
    },
    /// Send one real request to the provider and say what came back.
    Test {
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
struct ProviderSet {
    #[arg(long)]
    base_url: String,
    #[arg(long)]
    model: String,
    /// Name of the environment variable holding the API key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Ask for whole answers instead of streamed ones.
    #[arg(long)]
    no_stream: bool,
    /// The wire format.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(airlock_engine::provider_kind_names()), default_value = "openai-chat")]
    kind: String,
    /// Store it as a named provider (a session picks it with `chat --provider NAME`)
    /// instead of the default one.
    #[arg(long)]
    name: Option<String>,
    /// openai-responses: a remote MCP server the provider calls itself, LABEL=URL (repeatable).
    #[arg(long = "hosted-mcp", value_name = "LABEL=URL")]
    hosted_mcp: Vec<String>,
    /// openai-responses: whether the provider asks before running hosted MCP tools.
    #[arg(long, value_parser = ["always", "never"], default_value = "always")]
    require_approval: String,
    /// anthropic: max_tokens of each request (default 4096).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Retries on 429, 5xx, timeouts and connection errors (default 4).
    #[arg(long)]
    max_retries: Option<u32>,
    /// Seconds to wait for an answer to start, and of silence in a stream (default 120).
    #[arg(long)]
    timeout_secs: Option<u64>,
}

#[derive(Subcommand, Debug)]
enum ModeAction {
    Set {
        #[arg(value_parser = ["ask", "never-ask", "deny-all"])]
        mode: String,
        #[arg(long)]
        session: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
enum ToolsAction {
    Set {
        /// SERVER/TOOL
        target: String,
        #[arg(value_parser = ["server-default", "required", "not-required", "blocked"])]
        setting: String,
    },
    /// Whether a notification's "Allow once" may approve this tool (`default`: only tools
    /// declared read-only by a trusted source; never `builtin/run_command`).
    FromNotification {
        /// SERVER/TOOL
        target: String,
        #[arg(value_parser = ["on", "off", "default"])]
        allow: String,
    },
}

/// How Airlock identifies itself to a remote server's sign-in, beyond dynamic registration.
#[derive(clap::Args, Debug, Default)]
struct SignInArgs {
    /// A client ID registered with the server's sign-in by hand (used instead of registering).
    #[arg(long)]
    client_id: Option<String>,
    /// The secret of that client ID, for a confidential client.
    #[arg(long, requires = "client_id", conflicts_with = "client_credentials")]
    client_secret: Option<String>,
    /// The HTTPS URL of a client ID metadata document, used where the server supports them.
    #[arg(long)]
    client_metadata_url: Option<String>,
    /// Sign in as a machine client (OAuth client-credentials grant, no browser) with the
    /// --client-id registered with the server, and --client-secret-env or --private-key.
    #[arg(long, requires = "client_id")]
    client_credentials: bool,
    /// The environment variable holding the machine client's secret (never on the command line).
    #[arg(long, requires = "client_credentials", conflicts_with = "private_key")]
    client_secret_env: Option<String>,
    /// The machine client's private key (PEM file) for a signed JWT assertion (private_key_jwt).
    #[arg(long, requires = "client_credentials")]
    private_key: Option<PathBuf>,
    /// The JWT signing algorithm of --private-key.
    #[arg(long, requires = "private_key", default_value = "ES256",
          value_parser = airlock_mcp::oauth::SIGNING_ALGORITHMS)]
    signing_alg: String,
}

#[derive(Subcommand, Debug)]
enum ServersAction {
    /// `servers add NAME -- COMMAND [ARGS...]` (stdio) or `servers add NAME --url URL` (streamable HTTP).
    Add {
        name: String,
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// HTTP header `NAME: VALUE` (repeatable).
        #[arg(long = "header", requires = "url")]
        headers: Vec<String>,
        #[command(flatten)]
        sign_in: SignInArgs,
        /// Add the server without signing in, even when it asks for a sign-in.
        #[arg(long, requires = "url")]
        no_sign_in: bool,
        /// Environment variable `NAME=VALUE` for a stdio server (repeatable).
        #[arg(long = "env")]
        env: Vec<String>,
        /// Working folder of a stdio server.
        #[arg(long)]
        cwd: Option<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// Sign in to a remote server (OAuth): opens the browser on its sign-in page and keeps the
    /// tokens in the OS keyring. Set AIRLOCK_BROWSER to a command to open the page with it.
    Login {
        name: String,
        #[command(flatten)]
        sign_in: SignInArgs,
    },
    /// Forget a remote server's sign-in (its tokens); it shows "sign in again" until `login`.
    Logout {
        name: String,
    },
    /// Import the `mcpServers` of a Claude Desktop style config file.
    Import {
        file: PathBuf,
        /// Add them (each starts at once). Without it, only shows what would be added.
        #[arg(long)]
        yes: bool,
    },
    /// A server's default for tools without their own setting.
    Default {
        name: String,
        #[arg(value_parser = ["required", "not-required"])]
        default: String,
    },
    /// Trust the server's `readOnlyHint: true` annotations (tools without a setting run unasked).
    Trust {
        name: String,
        #[arg(value_parser = ["on", "off"])]
        trust: String,
    },
    /// Whether a notification's "Allow once" may approve this server's tools (a tool's own
    /// choice wins; `default`: only tools declared read-only by a trusted source).
    FromNotification {
        name: String,
        #[arg(value_parser = ["on", "off", "default"])]
        allow: String,
    },
    Enable {
        name: String,
    },
    Disable {
        name: String,
    },
    /// Remove a server with its tool settings, rules and remembered decisions; tool calls still
    /// waiting on it are denied, its questions (elicitations) cancelled.
    Remove {
        name: String,
    },
    /// Show what changed in a server's tools since you last reviewed them (their grants are
    /// suspended until then); `--accept` accepts the changes so the grants apply again.
    Review {
        name: String,
        #[arg(long)]
        accept: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum RulesAction {
    /// `rules add SERVER/TOOL POINTER GLOB allow|ask|deny`
    Add {
        target: String,
        pointer: String,
        pattern: String,
        #[arg(value_parser = ["allow", "ask", "deny"])]
        effect: String,
        /// Treat the pattern as a regular expression instead of a glob.
        #[arg(long)]
        regex: bool,
        /// Add nothing: show how many past calls in History the rule matches, and which of
        /// those a person denied.
        #[arg(long)]
        dry_run: bool,
    },
    /// Rules that would let calls like this inbox item's run without asking, each with the
    /// past calls it matches and those a person denied.
    Suggest {
        id: String,
        #[arg(long)]
        json: bool,
    },
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a rule by its id (from `rules list`); it stops applying at once.
    Remove { id: String },
}

#[derive(Subcommand, Debug)]
enum SettingsAction {
    Set {
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(airlock_core::Setting::cli_names()))]
        key: String,
        value: String,
    },
}

#[derive(Subcommand, Debug)]
enum RemoteAction {
    /// Serve the phone inbox on this address (your LAN address, or a VPN's such as a Tailscale
    /// address; never every interface).
    Enable {
        #[arg(long, value_name = "ADDR:PORT")]
        listen: String,
    },
    /// Stop serving it (paired devices stay listed until revoked).
    Disable,
    /// A one-time code to pair a device, the page's address and the certificate's fingerprint.
    Pair {
        #[arg(long)]
        json: bool,
    },
    /// The paired devices.
    Devices {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a device: its token is refused from now on.
    Revoke { id: String },
    /// A push to your own ntfy topic when approvals wait ("3 approvals waiting"; no tool names
    /// or arguments leave the machine). Without options: what is set.
    Push {
        /// The ntfy server, e.g. https://ntfy.sh or your own.
        #[arg(long, requires = "topic", conflicts_with = "off")]
        server: Option<String>,
        #[arg(long, requires = "server")]
        topic: Option<String>,
        /// The environment variable holding an access token for a protected topic (read now
        /// and kept; a token on the command line would show in the process list).
        #[arg(long, value_name = "VAR", requires = "server")]
        token_env: Option<String>,
        /// Stop pushing.
        #[arg(long)]
        off: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum RememberedAction {
    Revoke { id: String },
}

fn data_dir(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    Ok(airlock_api::host::resolve_data_dir(given)?)
}

/// `airlock inbox | head -1`: when whoever reads the output goes away, Rust's print macros
/// panic ("failed printing to stdout: Broken pipe"). A reader that stopped early is no error, so
/// the command ends there quietly, as other Unix tools do — no panic message, no backtrace.
/// (Not for the hook, which always answers, nor by resetting SIGPIPE, which would also end the
/// process on a broken connection to the engine instead of reporting it.)
fn quiet_on_a_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        report(info);
    }));
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Hook { agent, timeout } = &cli.command {
        // Always one JSON object and exit 0: an agent fails open on anything else.
        airlock_hook::run_and_print(cli.data_dir.clone(), agent, *timeout);
        return ExitCode::SUCCESS;
    }
    quiet_on_a_closed_pipe();
    airlock_api::host::log_to_stderr();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("airlock: cannot start: {error}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("airlock: {error:#}");
            // The engine's error code decides the exit status, as it decides the API's.
            let refused = error
                .downcast_ref::<airlock_api::ClientError>()
                .and_then(|e| match e {
                    airlock_api::ClientError::Refused { code, .. } => {
                        serde_json::from_value::<airlock_engine::ErrorCode>(serde_json::json!(code))
                            .ok()
                    }
                    _ => None,
                });
            ExitCode::from(refused.map_or(1, airlock_engine::ErrorCode::cli_exit))
        }
    }
}

/// The team server `--engine URL` names, reached with `--token` and trusting `--engine-cert`.
fn team_server(cli: &Cli) -> anyhow::Result<Option<airlock_api::ApiClient>> {
    let Some(url) = &cli.engine else {
        return Ok(None);
    };
    let certificate = cli
        .engine_cert
        .as_ref()
        .map(|path| {
            std::fs::read(path).with_context(|| format!("--engine-cert {}", path.display()))
        })
        .transpose()?;
    Ok(Some(airlock_api::ApiClient::remote(
        url,
        cli.token.as_deref().unwrap_or_default(),
        certificate.as_deref(),
    )?))
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let engine = team_server(&cli)?;
    let dir = data_dir(cli.data_dir)?;
    match cli.command {
        Command::Connect {
            agent,
            project,
            timeout,
            codex,
            http,
            json,
        } => {
            let team = match (engine, cli.engine) {
                (Some(client), Some(url)) => Some(agents::TeamServer {
                    url,
                    client,
                    pinned_certificate: cli.engine_cert,
                }),
                _ => None,
            };
            let how = agents::How {
                project,
                timeout_secs: timeout,
                codex,
                http,
                team,
            };
            agents::connect(&dir, &agent, how, json).await
        }
        Command::Disconnect {
            agent,
            project,
            json,
        } => agents::disconnect(&agent, project, json),
        Command::Agents { json, action: None } => agents::list(&dir, json).await,
        Command::McpProxy {
            server,
            name,
            url,
            headers,
            command,
        } => {
            let target = mcp_proxy::Target::from_args(server, name, url, headers, command)?;
            mcp_proxy::run(&dir, target).await
        }
        Command::Serve {
            listen,
            workspace,
            database_url,
        } => serve::run(&dir, &listen, workspace, database_url).await,
        other => commands::run(&dir, engine, other).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(words: &[&str]) -> bool {
        Cli::try_parse_from(std::iter::once("airlock").chain(words.iter().copied())).is_ok()
    }

    /// The CLI's agent values come from the one list: every agent whose hook Airlock answers is
    /// a value of `hook` and `agents set`, every agent `connect` connects one of `connect` and
    /// `disconnect`, and nothing else is.
    #[test]
    fn every_agent_is_a_cli_value_where_it_has_what_the_command_needs() {
        let connectable = airlock_agents::connect::names();
        for agent in airlock_agents::AGENTS {
            let name = agent.name();
            let hook = agent.dialect().is_some();
            assert_eq!(parses(&["hook", name]), hook, "hook {name}");
            assert_eq!(
                parses(&["agents", "set", name, "--fallback", "deny"]),
                hook,
                "agents set {name}"
            );
            let connects = connectable.contains(&name);
            assert_eq!(parses(&["connect", name]), connects, "connect {name}");
            assert_eq!(parses(&["disconnect", name]), connects, "disconnect {name}");
            assert!(
                hook || connects || agent.name() == airlock_core::MCP_CLIENT,
                "{name} is a value of no command"
            );
        }
        assert!(!parses(&["connect", "cline"]));
    }
}
