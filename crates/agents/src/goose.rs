//! goose: its `PreToolUse` hook in a plugin of Airlock's own
//! (`~/.agents/plugins/airlock/hooks/hooks.json`, beside its `plugin.json`), answered with
//! `{"decision": "allow"}` or `{"decision": "block", "reason"}` (the model reads "Tool call
//! denied by policy hook …: <reason>"). Installed with `on_failure: "block"`, so a hook that
//! returns no decision (crashed, timed out) blocks the call. Written from goose's documentation
//! ("Hooks"); not run here (docs/PLATFORMS.md). No edit: goose's hooks cannot change a call.

use crate::{Agent, EventFields, HookDialect, HookEvent};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// Block's goose (`goose`).
#[derive(Debug, Clone, Copy)]
pub struct Goose;

impl Agent for Goose {
    fn name(&self) -> &'static str {
        "goose"
    }

    fn display_name(&self) -> &'static str {
        "goose"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Goose)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &["developer__tree"]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "developer__edit",
            "developer__read_image",
            "developer__shell",
            "developer__tree",
            "developer__write",
        ]
    }
}

/// `{"event": "PreToolUse", "session_id", "tool_name", "tool_input", "working_dir",
/// "tool_call_id"}`.
const FIELDS: EventFields = EventFields {
    session: &["/session_id"],
    cwd: &["/working_dir"],
    tool: "/tool_name",
    input: "/tool_input",
    tool_use_id: &["/tool_call_id"],
    transcript: None,
};

impl HookDialect for Goose {
    fn events(&self) -> &'static [HookEvent] {
        &[HookEvent::PreToolUse]
    }

    fn event(&self, input: &Value) -> Result<HookEvent, String> {
        match input.get("event").and_then(Value::as_str) {
            Some("PreToolUse") => Ok(HookEvent::PreToolUse),
            other => Err(format!(
                "the hook decides goose's PreToolUse, not {}",
                other.unwrap_or("an event without a name")
            )),
        }
    }

    fn editable(&self, _event: HookEvent) -> bool {
        false
    }

    fn render(&self, _event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match answer.verdict {
            AgentVerdict::Allow => json!({"decision": "allow"}),
            // No decision: with `on_failure: "block"` goose blocks the call (it has no prompt
            // of its own for a hook to hand it to).
            AgentVerdict::Deny | AgentVerdict::Undecided => {
                json!({"decision": "block", "reason": reason})
            }
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
            "event": "PreToolUse", "session_id": "s1", "matcher_context": "Bash",
            "tool_name": "Bash", "tool_input": {"command": "git status"},
            "working_dir": "/work/project", "tool_call_id": "toolu_1",
        })
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Goose;
    use crate::connect::hook_writer::{HookWriter, HttpHooks, NO_HTTP_HOOK, Place, PluginManifest};
    use crate::connect::hooks::Layout;
    use crate::connect::{ConfigWriter, Connectable};

    impl Connectable for Goose {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&WRITER);
    }

    /// A plugin of Airlock's own, `{"hooks": {"PreToolUse": [{"hooks": [{"type", "command",
    /// "timeout", "on_failure"}]}]}}` (no matcher: every tool; goose's matchers are regular
    /// expressions), with the manifest goose loads it by.
    const WRITER: HookWriter = HookWriter {
        agent: "goose",
        place: Place::Home(&[".agents", "plugins", "airlock", "hooks", "hooks.json"]),
        layout: Layout {
            group_matcher: Some(""),
            handler_fields: r#"{"type": "command", "on_failure": "block"}"#,
            ..Layout::grouped(&["PreToolUse"])
        },
        own_file: true,
        http: HttpHooks::Refused(NO_HTTP_HOOK),
        manifest: Some(PluginManifest(
            "{\n  \"name\": \"airlock\",\n  \"version\": \"1.0.0\",\n  \"description\": \"Airlock decides goose's tool calls (written by `airlock connect goose`)\"\n}\n",
        )),
        note: "Its tool calls now wait in Airlock's inbox (approve, or deny with a reason the model reads; goose's hooks cannot edit a call). The hook is installed with on_failure: block, so a hook that returns no decision blocks the call, and so does Airlock not running. Written from goose's documentation and not run on Airlock's test machine (docs/PLATFORMS.md). Undo with `airlock disconnect goose`.",
    };
}
