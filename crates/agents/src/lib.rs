//! The agents Airlock answers, one module each, and [`AGENTS`], the one list of them.
//!
//! An agent's module holds everything Airlock knows of it: its name (the CLI's value, the
//! engine's and the store's key, its tools' policy source `NAME/TOOL`), the name people read,
//! its hook dialect (the event it sends on stdin read as Airlock's request, Airlock's answer
//! written in its words), its own tools that only read, and — with the `connect` feature — the
//! config writer behind `airlock connect` / `disconnect`. Everything else reads the list: the
//! CLI's value parsers, the hook, the engine (which agents have fallbacks and read-only tools),
//! Settings → Agents and Tools, and the UI's names (generated: [`typescript_names`]).
//!
//! The hook (`airlock-hook`, started for every tool call) uses this crate without `connect`:
//! the dialects need only core, protocol and serde_json.
//!
//! Adding an agent: one file here (a unit struct implementing [`Agent`], [`HookDialect`] where
//! it has a hook, and `connect::Connectable` with its `connect::ConfigWriter` if `connect`
//! connects it), its name in the `agents!` line, and its tests; `registry_tests` then checks
//! it like every other (docs/ARCHITECTURE.md).

mod claude_code;
mod claude_desktop;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod goose;
mod mcp_client;
mod qwen;

#[cfg(feature = "connect")]
pub mod connect;

pub use claude_code::ClaudeCode;
pub use claude_desktop::ClaudeDesktop;
pub use codex::Codex;
pub use copilot::Copilot;
pub use cursor::Cursor;
pub use gemini::Gemini;
pub use goose::Goose;
pub use mcp_client::McpClient;
pub use qwen::Qwen;

use airlock_protocol::{AgentAnswer, AgentCall, AgentEvent};
use serde_json::{Value, json};
use std::io::{BufRead, Read};
use std::path::Path;

/// Declares the list once: [`AGENTS`], and (with `connect`) each agent's config writer beside
/// it, in a list of its own so that the hook, which reads [`AGENTS`], links no config writer.
macro_rules! agents {
    ($($agent:ident),+ $(,)?) => {
        /// Every agent Airlock knows, in the order people see them.
        pub static AGENTS: &[&dyn Agent] = &[$(&$agent),+];

        /// [`AGENTS`] with their config writers (`None`: `connect` does not connect it).
        #[cfg(feature = "connect")]
        pub(crate) static CONFIG_WRITERS: &[(&dyn Agent, Option<&dyn connect::ConfigWriter>)] =
            &[$((&$agent, <$agent as connect::Connectable>::WRITER)),+];
    };
}

agents!(
    ClaudeCode,
    Codex,
    Copilot,
    Qwen,
    Gemini,
    Cursor,
    Goose,
    ClaudeDesktop,
    McpClient
);

/// One agent Airlock answers.
pub trait Agent: Sync {
    /// Its name in Airlock: the CLI's value, the engine's key, its tools' policy source.
    fn name(&self) -> &'static str;

    /// Its name as people write it.
    fn display_name(&self) -> &'static str;

    /// The name its calls reach the engine with: its own, or [`airlock_core::MCP_CLIENT`] for
    /// an agent whose MCP servers run through `airlock mcp-proxy`.
    fn asks_as(&self) -> &'static str {
        self.name()
    }

    /// Its hook's dialect, when Airlock answers its hook (`airlock-hook NAME`).
    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        None
    }

    /// Its own tools that only read (or keep the agent's own to-do list): `connect` sets them
    /// to "approval not required" in Airlock's tool settings unless the person chose otherwise.
    fn read_only_tools(&self) -> &'static [&'static str] {
        &[]
    }

    /// The tools its hook is known to report (Settings → Tools lists them before it first asks).
    fn known_tools(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether its hook asks at PermissionRequest before PreToolUse about the same call (Qwen
    /// Code): the engine then answers that PreToolUse with the decision just made.
    fn asks_permission_first(&self) -> bool {
        false
    }

    /// Whether its own program also speaks ACP, so that Airlock may host it under this name
    /// (`airlock agents add NAME`, the preset of that name): the same agent, one set of settings
    /// and rules, whichever way it asks. Any other agent's name would lend its rules to another
    /// program.
    fn speaks_acp(&self) -> bool {
        false
    }
}

/// The agent called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Agent> {
    AGENTS.iter().copied().find(|agent| agent.name() == name)
}

/// The agents whose hooks Airlock answers (each has a [`HookDialect`]).
pub fn hook_agents() -> impl Iterator<Item = &'static dyn Agent> {
    AGENTS
        .iter()
        .copied()
        .filter(|agent| agent.dialect().is_some())
}

/// The agent called `name` when Airlock answers its hook.
pub fn hook_agent(name: &str) -> Option<&'static dyn Agent> {
    hook_agents().find(|agent| agent.name() == name)
}

/// Whether `name` is an agent whose hook Airlock answers (its tools are `NAME/TOOL`).
pub fn is_hook_agent(name: &str) -> bool {
    hook_agent(name).is_some()
}

/// The names of the agents whose hooks Airlock answers: the CLI's values for `hook` and
/// `agents set`.
pub fn hook_agent_names() -> Vec<&'static str> {
    hook_agents().map(|agent| agent.name()).collect()
}

/// Why `name` is not an agent whose hook Airlock answers, naming the ones it is.
pub fn not_a_hook_agent(name: &str) -> String {
    format!(
        "'{name}' is not a valid agent; expected one of: {}",
        hook_agent_names().join(" ")
    )
}

/// The name people read for an agent's name (the name itself for one Airlock does not know).
pub fn display_name(name: &str) -> &str {
    by_name(name).map_or(name, |agent| agent.display_name())
}

/// `ui/src/lib/bindings/agents.ts`: the UI's names of the agents, generated from [`AGENTS`]
/// (written and checked with the other bindings, crates/resident/src/bindings.rs).
pub fn typescript_names() -> String {
    let mut text = String::from(
        "// Generated from crates/agents (AGENTS) by crates/resident/src/bindings.rs. Do not edit.\n\n",
    );
    text.push_str("/** Each agent's name as people write it, by its name in Airlock. */\n");
    text.push_str("export const AGENT_NAMES: Record<string, string> = {\n");
    for agent in AGENTS {
        text.push_str(&format!(
            "  {}: {},\n",
            json!(agent.name()),
            json!(agent.display_name())
        ));
    }
    text.push_str("};\n\n");
    text.push_str(
        "/** The agents whose hooks Airlock answers: their own tools are `NAME/TOOL`. */\n",
    );
    text.push_str("export const HOOK_AGENTS: string[] = [");
    let names: Vec<String> = hook_agents().map(|a| json!(a.name()).to_string()).collect();
    text.push_str(&names.join(", "));
    text.push_str("];\n");
    text
}

/// The hook events Airlock decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PermissionRequest,
}

impl HookEvent {
    pub const ALL: [HookEvent; 2] = [HookEvent::PreToolUse, HookEvent::PermissionRequest];

    /// The event's name in the agents' hook configs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// The event an agent's hook input names (`hook_event_name`), or why it is none the hook
    /// decides.
    pub fn of(input: &Value) -> Result<HookEvent, String> {
        match input.get("hook_event_name").and_then(Value::as_str) {
            Some("PreToolUse") => Ok(HookEvent::PreToolUse),
            Some("PermissionRequest") => Ok(HookEvent::PermissionRequest),
            other => Err(format!(
                "the hook decides PreToolUse and PermissionRequest, not {}",
                other.unwrap_or("an event without a hook_event_name")
            )),
        }
    }
}

/// Where an agent's hook event keeps what Airlock reads, as JSON pointers (the first one
/// present wins).
#[derive(Debug, Clone, Copy)]
pub struct EventFields {
    pub session: &'static [&'static str],
    pub cwd: &'static [&'static str],
    pub tool: &'static str,
    /// The tool's input: an object, or JSON text of one (Cursor's MCP calls).
    pub input: &'static str,
    pub tool_use_id: &'static [&'static str],
    pub transcript: Option<&'static str>,
}

/// Claude Code's event fields, which Codex, Qwen Code and Gemini CLI share.
pub const CLAUDE_FIELDS: EventFields = EventFields {
    session: &["/session_id"],
    cwd: &["/cwd"],
    tool: "/tool_name",
    input: "/tool_input",
    tool_use_id: &["/tool_use_id"],
    transcript: Some("/transcript_path"),
};

/// How one agent's hook speaks (/work/shared/AGENT-HOOKS.md and AGENT-ACP.md have what each
/// was seen to do).
pub trait HookDialect: Sync {
    /// The events `connect` installs its hook on and the hook decides.
    fn events(&self) -> &'static [HookEvent] {
        &HookEvent::ALL
    }

    /// Which of them this input is, or why it is none the hook decides.
    fn event(&self, input: &Value) -> Result<HookEvent, String> {
        HookEvent::of(input)
    }

    /// Whether the agent runs an edited input at this event (Codex rejects one at
    /// PermissionRequest): the inbox offers "edit" only where it does.
    fn editable(&self, event: HookEvent) -> bool;

    /// Airlock's answer in the agent's words: always one JSON object, never a failure (most
    /// agents fail open on anything else).
    fn render(&self, event: HookEvent, answer: &AgentAnswer) -> String;

    /// The person's prompt, when this entry of the agent's transcript (JSON Lines) is one.
    fn prompt_of(&self, entry: &Value) -> Option<String>;

    /// Where its events keep the session, folder, tool and input.
    fn fields(&self) -> &'static EventFields {
        &CLAUDE_FIELDS
    }

    /// The agent's event as Airlock's request, read through [`HookDialect::fields`].
    fn call(&self, agent: &str, event: HookEvent, input: &Value) -> Result<AgentCall, String> {
        let fields = self.fields();
        let text = |pointers: &[&str]| {
            pointers
                .iter()
                .find_map(|p| input.pointer(p).and_then(Value::as_str))
                .map(str::to_string)
        };
        let tool = text(&[fields.tool]).ok_or_else(|| {
            format!(
                "the hook's input names no tool ({})",
                fields.tool.trim_start_matches('/')
            )
        })?;
        let tool_input = match input.pointer(fields.input) {
            None | Some(Value::Null) => json!({}),
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(other) => other.clone(),
        };
        Ok(AgentCall {
            agent: agent.into(),
            source: None,
            client: None,
            agent_session: text(fields.session).unwrap_or_default(),
            cwd: text(fields.cwd),
            tool,
            input: tool_input,
            tool_use_id: text(fields.tool_use_id),
            event: match event {
                HookEvent::PreToolUse => AgentEvent::PreToolUse,
                HookEvent::PermissionRequest => AgentEvent::PermissionRequest,
            },
            editable: self.editable(event),
            wait_ms: None,
            defer: false,
            takes_reason: None,
            definition: None,
            prompt: fields
                .transcript
                .and_then(|pointer| input.pointer(pointer))
                .and_then(Value::as_str)
                .and_then(|path| first_prompt(self, Path::new(path))),
        })
    }

    /// An event of this agent as its hook receives it (for the registry's tests): `Bash`
    /// running `git status` in `/work/project`, session `s1`, call `toolu_1`.
    #[cfg(test)]
    fn example_event(&self, event: HookEvent, transcript: &Path) -> Value {
        json!({
            "session_id": "s1",
            "transcript_path": transcript.display().to_string(),
            "cwd": "/work/project",
            "hook_event_name": event.as_str(),
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
            "tool_use_id": "toolu_1",
        })
    }
}

/// How much of an agent's transcript the hook reads for the session's first prompt.
const TRANSCRIPT_READ_BYTES: u64 = 256 * 1024;

/// The session's first prompt from the agent's transcript (JSON Lines), as its dialect reads
/// it. `None` when the file cannot be read or holds none yet: the session is then named by its
/// folder alone.
pub fn first_prompt(dialect: &(impl HookDialect + ?Sized), transcript: &Path) -> Option<String> {
    let file = std::fs::File::open(transcript).ok()?;
    let reader = std::io::BufReader::new(file.take(TRANSCRIPT_READ_BYTES));
    reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .find_map(|entry| dialect.prompt_of(&entry))
}

/// A prompt as a session's title reads it: trimmed, at most 500 characters, and not a tagged
/// text (slash commands, caveats, environment context are not the person's words).
fn prompt_text(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty() && !text.starts_with('<')).then(|| text.chars().take(500).collect())
}

/// The PreToolUse and PermissionRequest answers both agents read (`hookSpecificOutput`).
mod answers {
    use super::*;

    /// `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": …}}`.
    pub fn pre_tool_use(decision: &str, reason: &str, updated_input: Option<&Value>) -> String {
        let mut out = json!({
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        });
        if let Some(input) = updated_input {
            out["updatedInput"] = input.clone();
        }
        json!({ "hookSpecificOutput": out }).to_string()
    }

    /// `{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": …}}`.
    pub fn permission_request(decision: Value) -> String {
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
            .to_string()
    }

    /// No decision at all: the agent goes on with its own permission flow.
    pub const NONE: &str = "{}";

    /// Why an approved call was let through, for the agent's log.
    pub fn approved_by(answer: &AgentAnswer) -> String {
        match answer.decided_by.as_deref() {
            Some("policy") => "allowed by Airlock's settings".into(),
            Some(channel) => format!("approved in Airlock ({channel})"),
            None => "approved in Airlock".into(),
        }
    }
}

/// The denial every hook agent reads the same way (a PreToolUse `deny` with its reason): what
/// the hook answers before it knows the agent, or when the event is none it decides.
pub fn denied_to_any(reason: &str) -> String {
    answers::pre_tool_use("deny", reason, None)
}

#[cfg(test)]
mod registry_tests;
