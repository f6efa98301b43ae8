//! The nouns of Airlock's domain, with the string forms the store, the API and the CLI share.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// An error parsing one of the enums below from its string form.
#[derive(Debug, thiserror::Error)]
#[error("'{value}' is not a valid {what}; expected one of: {expected}")]
pub struct ParseEnumError {
    pub what: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// Declares a string-backed enum with `Display`, `FromStr` and serde in one place, so the
/// spelling used on disk, on the wire and on the command line can never drift apart.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        pub enum $name { $(#[serde(rename = $text)] $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
        impl FromStr for $name {
            type Err = ParseEnumError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(ParseEnumError {
                        what: $what,
                        value: s.to_string(),
                        expected: concat!($($text, " "),+),
                    }),
                }
            }
        }
    };
}

string_enum!(
    /// Workspace default and per-session override (step 2 of the decision order).
    Mode, "mode" { Ask => "ask", NeverAsk => "never-ask", DenyAll => "deny-all" }
);

string_enum!(
    /// Per-tool approval setting.
    ToolSetting, "tool setting" {
        ServerDefault => "server-default",
        Required => "required",
        NotRequired => "not-required",
        Blocked => "blocked",
    }
);

string_enum!(
    /// Per-server default (the last step of the decision order).
    ServerDefault, "server default" { Required => "required", NotRequired => "not-required" }
);

string_enum!(
    /// How far a decision is remembered.
    RememberScope, "remember scope" { Once => "once", Session => "session", Always => "always" }
);

string_enum!(
    /// The state machine of a tool call.
    CallState, "call state" {
        Proposed => "proposed",
        Invalid => "invalid",
        AutoAllowed => "auto_allowed",
        Pending => "pending",
        Approved => "approved",
        Denied => "denied",
        Expired => "expired",
        Cancelled => "cancelled",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
    }
);

string_enum!(
    /// How a turn ended (`idle` when none was running).
    TurnStatus, "turn status" {
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
        StepLimit => "step_limit",
        Idle => "idle",
    }
);

/// Compared with its text, as the CLI and the tests read it.
impl PartialEq<&str> for TurnStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

string_enum!(
    /// Where an inbox item stands: waiting, or how it left the inbox (`withdrawn`: the agent
    /// that asked stopped waiting — its hook was killed, or it gave up).
    ApprovalStatus, "approval status" {
        Pending => "pending",
        Approved => "approved",
        Denied => "denied",
        Expired => "expired",
        Cancelled => "cancelled",
        Withdrawn => "withdrawn",
    }
);

string_enum!(
    /// Who or what made a decision.
    DecidedBy, "decider" {
        Inbox => "inbox",
        Chat => "chat",
        Notification => "notification",
        Api => "api",
        Policy => "policy",
        Timeout => "timeout",
        Engine => "engine",
        Remote => "remote",
        Member => "member",
    }
);

string_enum!(
    /// What an inbox item asks for (`agent_tool_call`: a tool call of another agent — Claude
    /// Code, Codex, an MCP client through the proxy — asked through its hook or the gateway).
    ItemKind, "item kind" {
        ToolCall => "tool_call",
        ProviderToolCall => "provider_tool_call",
        Elicitation => "elicitation",
        AgentToolCall => "agent_tool_call",
    }
);

/// The agents' own default hook timeout (seconds), which `airlock connect` installs unless told
/// otherwise.
pub const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 600;

/// The hook's own small binary, installed beside `airlock` (an agent starts it for every call).
pub const HOOK_BINARY: &str = "airlock-hook";

string_enum!(
    /// What an agent's hook answers when Airlock cannot decide in time (no engine, unreachable,
    /// nobody decided): give the call back to the agent's own prompt, or deny it.
    AgentFallback, "fallback" { Ask => "ask", Deny => "deny" }
);

impl AgentFallback {
    /// The fallback of an agent nobody chose one for: deny, for every agent. Giving the call
    /// back is not a person's decision: Codex's own approval may simply run it, and Claude
    /// Code's `ask` passes it on to its permission flow, which runs it under allow rules or
    /// `bypassPermissions`. An MCP client through the proxy has no prompt to give it back to.
    pub fn default_for(_agent: &str) -> Self {
        AgentFallback::Deny
    }
}

/// The agent kind of a call through `airlock mcp-proxy` (any MCP client).
pub const MCP_CLIENT: &str = "mcp-client";

/// The environment variable that carries `airlock mcp-proxy --url`'s headers (a JSON object of
/// names to values), so that `connect claude-desktop` keeps them out of the command line, where
/// other users of the machine could read them.
pub const PROXY_HEADERS_ENV: &str = "AIRLOCK_MCP_HEADERS";

/// The agent kind of a call posted by a program of one's own through an approval client
/// (`clients/python`, `clients/typescript`): it names itself as the call's `client`, which
/// becomes its agent name and the policy source of its tools (`my-app/delete_file`).
pub const APP_CLIENT: &str = "app";

/// The policy sources of the coding agents' own tools (`claude-code/Bash`), which no server may
/// take as its name. The agents themselves are declared in crates/agents (its `AGENTS`), which
/// core cannot see; that crate's test `the_hook_agents_are_the_sources_core_reserves` keeps
/// this list equal to its hook agents.
pub const AGENT_SOURCES: &[&str] = &[
    "claude-code",
    "codex",
    "copilot",
    "qwen",
    "gemini",
    "cursor",
    "goose",
];

/// The policy source of calls made by MCP clients through `airlock mcp-proxy --name NAME`
/// is NAME; the agents' own tools are `claude-code/TOOL` and `codex/TOOL`.
pub fn is_hook_agent(source: &str) -> bool {
    AGENT_SOURCES.contains(&source)
}

string_enum!(
    /// Where a session's turn stands, as the UI and the CLI show it.
    SessionStatus, "session status" {
        Idle => "idle",
        Thinking => "thinking",
        AwaitingApproval => "awaiting_approval",
        RunningTools => "running_tools",
        Failed => "failed",
    }
);

impl CallState {
    /// A call in one of these states has its outcome settled and will not change again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            CallState::Invalid
                | CallState::Denied
                | CallState::Expired
                | CallState::Cancelled
                | CallState::Succeeded
                | CallState::Failed
        )
    }
}

/// The built-in server's name; its tools are confined to the workspace folder.
pub const BUILTIN_SERVER: &str = "builtin";

/// Tools no notification may approve whatever the person set: a command line is code, and a
/// notification shows one line of it.
pub fn never_from_notification(server: &str, tool: &str) -> bool {
    server == BUILTIN_SERVER && tool == "run_command"
}

/// Separator between server and tool in the names the model sees; servers may not contain it.
pub const MODEL_NAME_SEPARATOR: &str = "__";

/// A tool as offered by a server: name, description, input schema, MCP annotations.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolDef {
    pub server: String,
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(default)]
    pub read_only_hint: bool,
    /// The MCP annotations as the server sent them (hints only: never trusted by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl ToolDef {
    /// The name the model sees: unique across servers.
    pub fn model_name(&self) -> String {
        model_tool_name(&self.server, &self.name)
    }
}

pub fn model_tool_name(server: &str, tool: &str) -> String {
    format!("{server}{MODEL_NAME_SEPARATOR}{tool}")
}

/// Splits a model-facing tool name into `(server, tool)`.
pub fn split_model_tool_name(name: &str) -> Option<(&str, &str)> {
    name.split_once(MODEL_NAME_SEPARATOR)
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

/// A server name is safe in model tool names, paths and URLs.
pub fn validate_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("a server name needs 1 to 64 characters".into());
    }
    if name.contains(MODEL_NAME_SEPARATOR) {
        return Err(format!(
            "a server name may not contain '{MODEL_NAME_SEPARATOR}'"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("a server name may use letters, digits, '-' and '_' only".into());
    }
    if is_hook_agent(name) {
        return Err(format!(
            "'{name}' names a coding agent's own tools in Airlock (e.g. {name}/Bash); choose another server name"
        ));
    }
    Ok(())
}

/// A name `airlock mcp-proxy` may give the server it runs: a valid server name that is not the
/// built-in server's (whose tools are Airlock's own).
pub fn validate_proxied_server_name(name: &str) -> Result<(), String> {
    validate_server_name(name)?;
    if name == BUILTIN_SERVER {
        return Err(format!(
            "'{BUILTIN_SERVER}' is Airlock's built-in server; a proxied server needs another name"
        ));
    }
    Ok(())
}

/// The result a model receives for a denied call (`{"type": "execution-denied", "reason": …}`).
pub fn execution_denied(reason: &str) -> Value {
    serde_json::json!({ "type": "execution-denied", "reason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_through_strings() {
        for mode in Mode::ALL {
            assert_eq!(mode.as_str().parse::<Mode>().ok(), Some(*mode));
        }
        for state in CallState::ALL {
            assert_eq!(state.as_str().parse::<CallState>().ok(), Some(*state));
        }
        let err = "sometimes"
            .parse::<Mode>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("ask never-ask deny-all"), "{err}");
    }

    #[test]
    fn model_names_split_back() {
        assert_eq!(
            split_model_tool_name("builtin__write_file"),
            Some(("builtin", "write_file"))
        );
        assert_eq!(split_model_tool_name("fs__a__b"), Some(("fs", "a__b")));
        assert_eq!(split_model_tool_name("nothing"), None);
        assert!(validate_server_name("my-server_2").is_ok());
        assert!(validate_server_name("a__b").is_err());
        assert!(validate_server_name("a b").is_err());
    }
}
