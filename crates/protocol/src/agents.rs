//! The agent gateway's vocabulary: a tool call another agent asks about (through its hook or
//! the MCP proxy), the answer it gets, and the agents as Settings and `airlock agents` list them.

use airlock_core::AgentFallback;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest input an agent may submit (as the model's own calls). The hook refuses a larger
/// one itself, at once.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// The file in the data directory the hooks read their fallback from when no engine answers
/// (the engine writes it; `airlock_client::agents` reads it).
pub const FALLBACKS_FILE: &str = "agents.json";

/// Which of the agent's questions this is: before the tool runs, or when the agent would show
/// its own permission prompt. Only the first may carry an edited input in every agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AgentEvent {
    #[default]
    PreToolUse,
    PermissionRequest,
    /// A `tools/call` through `airlock mcp-proxy`.
    McpCall,
}

/// One tool call of another agent, as its hook or the MCP proxy submits it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentCall {
    /// `claude-code`, `codex`, `mcp-client`, or `app` (a program of one's own, named by
    /// `client`).
    pub agent: String,
    /// The policy source its tools are named by (`claude-code/Bash`; the proxied server's name
    /// for `mcp-client`). Defaults to `agent`.
    #[serde(default)]
    pub source: Option<String>,
    /// The MCP client's name from its `initialize` (mcp-client), or the program's own name
    /// (`app`: required; it is the agent's name in Settings → Agents and its tools' source).
    #[serde(default)]
    pub client: Option<String>,
    /// The agent's own session id; each becomes an Airlock session (grants "for this chat"
    /// apply to it).
    pub agent_session: String,
    #[serde(default)]
    pub cwd: Option<String>,
    pub tool: String,
    pub input: Value,
    /// The agent's id of this tool use; without one the request is known by its arguments.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub event: AgentEvent,
    /// Whether the agent can run an edited input instead.
    #[serde(default)]
    pub editable: bool,
    /// The longest the caller waits for a person, in milliseconds. `0` defers the call, as
    /// `defer` does.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// The deferred style (an `app`'s): the call stays in the inbox whether or not anyone
    /// waits on it, across restarts, and its decision is read later by the item's id
    /// (`GET /v1/agent-calls/{id}`) or by posting the same call again (same session and
    /// tool-use id). A deferred call needs a tool-use id.
    #[serde(default)]
    pub defer: bool,
    /// Whether a denial's reason reaches the client's model (`None`: it does, as with every
    /// hook). When it cannot, the inbox item says so.
    #[serde(default)]
    pub takes_reason: Option<bool>,
    /// The tool's definition as the MCP server lists it now (`description`, `input_schema`,
    /// `annotations`; mcp-client only): pinned, so a changed definition suspends its grants.
    #[serde(default)]
    pub definition: Option<Value>,
    /// The first prompt of the agent's session, when its hook could read it (from the agent's
    /// transcript): with the folder it names the session for a person.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// What `airlock connect` set inside Airlock: the agent's read-only tools it made "approval not
/// required" (`set`) and those whose setting it kept because the person had chosen one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentToolDefaults {
    pub agent: String,
    pub set: Vec<String>,
    pub kept: Vec<String>,
}

/// What the agent is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AgentVerdict {
    Allow,
    Deny,
    /// Nobody decided in time (or the item was withdrawn): the agent's fallback applies.
    Undecided,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentAnswer {
    pub verdict: AgentVerdict,
    /// For a denial, what the model reads.
    #[serde(default)]
    pub reason: Option<String>,
    /// The person's edit: what runs instead of the proposed input.
    #[serde(default)]
    pub updated_input: Option<Value>,
    /// The inbox item, when the call had to be asked.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// What decided: a person's channel, or `policy`.
    #[serde(default)]
    pub decided_by: Option<String>,
}

impl AgentCall {
    /// Whether the caller collects the decision later instead of holding the request open.
    pub fn is_deferred(&self) -> bool {
        self.defer || self.wait_ms == Some(0)
    }
}

/// A call's state as the deferred style reads it (`POST /v1/agent-calls`,
/// `GET /v1/agent-calls/{id}`, `POST /v1/agent-calls/{id}/claim`): the answer, and where its
/// inbox item stands. Reading it twice gives the same decision; running an approved call is
/// gated by its one claim (see [`AgentCallState::claimed_at`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentCallState {
    #[serde(flatten)]
    pub answer: AgentAnswer,
    /// The inbox item's status (`pending` while nobody decided); none when the policy answered
    /// at once (no item).
    #[serde(default)]
    pub status: Option<airlock_core::ApprovalStatus>,
    /// When the approved call was claimed to be run. A call is claimed once: the client claims
    /// before it runs the tool, and a second claim (the app resumed after a crash) is refused,
    /// so the tool runs at most once.
    #[serde(default)]
    pub claimed_at: Option<String>,
}

/// A coding agent as Airlock knows it: its fallback and its last request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentView {
    pub name: String,
    pub fallback: AgentFallback,
    pub last_request_at: Option<String>,
    pub last_tool: Option<String>,
    pub last_cwd: Option<String>,
    /// How the last request ended: allow, deny, ask, pending, or a fallback.
    pub last_outcome: Option<String>,
    /// When its own token for the local API was issued (`airlock agents token NAME`, Settings
    /// → Agents); none while it has none (never issued, or revoked).
    #[serde(default)]
    pub token_issued_at: Option<String>,
}

/// Whether an agent's config sends its tool calls through Airlock, and where that config is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentConnection {
    /// `claude-code`, `codex` or `claude-desktop`.
    pub agent: String,
    pub connected: bool,
    /// The file `connect` edits.
    pub path: String,
}

/// What `connect` or `disconnect` did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConnectReport {
    pub agent: String,
    pub path: String,
    /// False when the file already said so (nothing was written).
    pub changed: bool,
    /// The copy of the file as it was, when it was changed.
    pub backup: Option<String>,
    /// One line per change, for the person to read.
    pub changes: Vec<String>,
}

/// An agent as Settings shows it: how it is connected and what it last asked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentStatus {
    pub connection: AgentConnection,
    /// `None` for an agent that is not a coding agent's hook (Claude Desktop's servers go
    /// through `mcp-proxy`).
    pub view: Option<AgentView>,
}

/// An agent Airlock hosts over the Agent Client Protocol (`airlock agents add NAME --acp --
/// COMMAND…`): started in a chat's folder, every permission it asks for decided by Airlock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AcpAgentView {
    /// Its tools' policy source too (`gemini/run_shell_command`).
    pub name: String,
    /// The program and its arguments, run as they are (no shell).
    pub command: Vec<String>,
}

/// Where agents post their calls on the local API; an agent's own token reaches only the paths
/// beneath it (`/v1/agent-calls` and `/v1/agent-calls/…`), never the rest of the API.
pub const AGENT_CALLS_PATH: &str = "/v1/agent-calls";
/// Where an agent's HTTP hook posts its own event (`{AGENT_HOOK_PATH}{agent}`), answered in its
/// own hook dialect.
pub const AGENT_HOOK_PATH: &str = "/v1/agent-calls/hook/";

/// Whether an agent's own token may reach `path`: the agents' routes only.
pub fn is_agent_calls_path(path: &str) -> bool {
    path.strip_prefix(AGENT_CALLS_PATH)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// An agent's own token for the local API, shown once (only its hash is kept).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentToken {
    pub agent: String,
    pub token: String,
    /// Where its HTTP hook posts (loopback, a port kept across restarts), for an agent whose
    /// hook Airlock answers; none while no engine has bound that port.
    pub hook_url: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_token_reaches_the_agents_routes_only() {
        for path in [
            "/v1/agent-calls",
            "/v1/agent-calls/hook/claude-code",
            "/v1/agent-calls/apr_1",
        ] {
            assert!(is_agent_calls_path(path), "{path}");
        }
        for path in [
            "/v1/agent-callsx",
            "/v1/inbox",
            "/v1/commands/decide",
            "/v1/agent",
            "/",
        ] {
            assert!(!is_agent_calls_path(path), "{path}");
        }
    }
}
