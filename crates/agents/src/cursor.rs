//! Cursor: its `preToolUse` hook in `~/.cursor/hooks.json`, answered with `permission`
//! `allow` / `deny` (with `agent_message` for the model and `user_message` for the person) or
//! `ask` (Cursor's own prompt). Installed with `failClosed: true`, so a hook that cannot
//! answer blocks the call. Written from Cursor's documentation ("Hooks"); not run here
//! (docs/PLATFORMS.md): Cursor does not run on this project's test machine. No edit: the
//! documentation promises none.

use crate::{Agent, EventFields, HookDialect, HookEvent};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// Cursor's agent.
#[derive(Debug, Clone, Copy)]
pub struct Cursor;

impl Agent for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn display_name(&self) -> &'static str {
        "Cursor"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Cursor)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &["Read", "Grep", "Glob", "LS"]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "Delete", "Glob", "Grep", "LS", "MCP", "Read", "Shell", "Write",
        ]
    }
}

/// `{"hook_event_name": "preToolUse", "conversation_id", "tool_name", "tool_input",
/// "workspace_roots": […]}`.
const FIELDS: EventFields = EventFields {
    session: &["/conversation_id"],
    cwd: &["/cwd", "/workspace_roots/0"],
    tool: "/tool_name",
    input: "/tool_input",
    tool_use_id: &["/tool_use_id", "/tool_call_id"],
    transcript: None,
};

impl HookDialect for Cursor {
    fn events(&self) -> &'static [HookEvent] {
        &[HookEvent::PreToolUse]
    }

    fn event(&self, input: &Value) -> Result<HookEvent, String> {
        match input.get("hook_event_name").and_then(Value::as_str) {
            Some("preToolUse") => Ok(HookEvent::PreToolUse),
            other => Err(format!(
                "the hook decides Cursor's preToolUse, not {}",
                other.unwrap_or("an event without a hook_event_name")
            )),
        }
    }

    fn editable(&self, _event: HookEvent) -> bool {
        false
    }

    fn render(&self, _event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match answer.verdict {
            AgentVerdict::Deny => json!({
                "permission": "deny", "agent_message": reason, "user_message": reason,
            }),
            AgentVerdict::Allow => json!({"permission": "allow"}),
            AgentVerdict::Undecided => json!({"permission": "ask", "user_message": reason}),
        }
        .to_string()
    }

    fn prompt_of(&self, _entry: &Value) -> Option<String> {
        None
    }

    fn fields(&self) -> &'static EventFields {
        &FIELDS
    }

    #[cfg(test)]
    fn example_event(&self, _event: HookEvent, _transcript: &std::path::Path) -> Value {
        json!({
            "hook_event_name": "preToolUse", "conversation_id": "s1", "generation_id": "g1",
            "workspace_roots": ["/work/project"], "tool_name": "Bash",
            "tool_input": {"command": "git status"}, "tool_use_id": "toolu_1",
        })
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Cursor;
    use crate::connect::hook_writer::{HookWriter, HttpHooks, NO_HTTP_HOOK, Place};
    use crate::connect::hooks::Layout;
    use crate::connect::{ConfigWriter, Connectable};

    impl Connectable for Cursor {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&WRITER);
    }

    /// `.cursor/hooks.json`: `{"version": 1, "hooks": {"preToolUse": [{"command", "timeout",
    /// "failClosed": true}]}}`.
    const WRITER: HookWriter = HookWriter {
        agent: "cursor",
        place: Place::HomeOrProject(&[".cursor", "hooks.json"]),
        layout: Layout {
            events: &["preToolUse"],
            group_matcher: None,
            command_key: "command",
            timeout_key: "timeout",
            timeout_in_ms: false,
            handler_fields: r#"{"failClosed": true}"#,
            file_fields: r#"{"version": 1}"#,
        },
        own_file: false,
        http: HttpHooks::Refused(NO_HTTP_HOOK),
        manifest: None,
        note: "Its tool calls now wait in Airlock's inbox (approve, or deny with a reason the agent reads; Cursor takes no edited arguments). The hook is installed with failClosed, so a hook that cannot answer blocks the call. Written from Cursor's documentation and not run on Airlock's test machine (docs/PLATFORMS.md). Undo with `airlock disconnect cursor`.",
    };
}
