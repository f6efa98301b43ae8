//! GitHub Copilot CLI: its `preToolUse` hook in a file of Airlock's own among the person's
//! hook files (`$COPILOT_HOME/hooks/airlock.json`, by default `~/.copilot/hooks/`), answered
//! with `permissionDecision` `allow` / `deny` (its reason reaches the model as "Denied by
//! preToolUse hook: …") and `modifiedArgs` (the edited arguments run). Copilot fails closed
//! on a hook that errors (the call is denied); a hook that outlives its `timeoutSec` falls
//! through to Copilot's own permission prompt, so the hook answers well before it.

use crate::{Agent, EventFields, HookDialect, HookEvent};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// GitHub Copilot CLI (`copilot`).
#[derive(Debug, Clone, Copy)]
pub struct Copilot;

impl Agent for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn display_name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Copilot)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &["view", "glob", "grep"]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "bash",
            "create",
            "edit",
            "glob",
            "grep",
            "view",
            "web_fetch",
        ]
    }

    fn speaks_acp(&self) -> bool {
        true
    }
}

/// `{"sessionId", "timestamp", "cwd", "toolName", "toolArgs"}` (camelCase; `toolArgs` an
/// object, or JSON text of one).
const FIELDS: EventFields = EventFields {
    session: &["/sessionId"],
    cwd: &["/cwd"],
    tool: "/toolName",
    input: "/toolArgs",
    tool_use_id: &["/toolCallId"],
    transcript: None,
};

impl HookDialect for Copilot {
    fn events(&self) -> &'static [HookEvent] {
        &[HookEvent::PreToolUse]
    }

    /// Its events name no event: a `preToolUse` hook gets the tool's name and arguments.
    fn event(&self, input: &Value) -> Result<HookEvent, String> {
        match input.get("hook_event_name").and_then(Value::as_str) {
            None | Some("preToolUse") if input.get("toolName").is_some() => {
                Ok(HookEvent::PreToolUse)
            }
            other => Err(format!(
                "the hook decides Copilot's preToolUse, not {}",
                other.unwrap_or("an event without a toolName")
            )),
        }
    }

    fn editable(&self, _event: HookEvent) -> bool {
        true
    }

    fn render(&self, _event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match (answer.verdict, &answer.updated_input) {
            (AgentVerdict::Deny, _) => {
                json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
            }
            (AgentVerdict::Allow, Some(edit)) => json!({
                "permissionDecision": "allow",
                "permissionDecisionReason": "approved in Airlock with an edit",
                "modifiedArgs": edit,
            }),
            (AgentVerdict::Allow, None) => json!({
                "permissionDecision": "allow",
                "permissionDecisionReason": crate::answers::approved_by(answer),
            }),
            // No decision: Copilot's own permission flow.
            (AgentVerdict::Undecided, _) => json!({}),
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
            "sessionId": "s1", "timestamp": 1795620660646u64, "cwd": "/work/project",
            "toolName": "Bash", "toolArgs": "{\"command\": \"git status\"}",
            "toolCallId": "toolu_1",
        })
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Copilot;
    use crate::connect::hook_writer::{HookWriter, HttpHooks, Place};
    use crate::connect::hooks::Layout;
    use crate::connect::{ConfigWriter, Connectable, Result};
    use std::path::PathBuf;

    impl Connectable for Copilot {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&WRITER);
    }

    /// `$COPILOT_HOME/hooks/airlock.json`, a file of Airlock's own among the person's hook
    /// files: `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": …,
    /// "timeoutSec": …}]}}`.
    const WRITER: HookWriter = HookWriter {
        agent: "copilot",
        place: Place::Custom(hooks_file),
        layout: Layout {
            events: &["preToolUse"],
            group_matcher: None,
            command_key: "bash",
            timeout_key: "timeoutSec",
            timeout_in_ms: false,
            handler_fields: r#"{"type": "command"}"#,
            file_fields: r#"{"version": 1}"#,
        },
        own_file: true,
        http: HttpHooks::Refused(NO_HTTP_HOOK),
        manifest: None,
        note: "Its tool calls now wait in Airlock's inbox (approve, deny with a reason the model reads, or edit the arguments). When Airlock is not running or nobody decides in time, the call is denied (`airlock agents set copilot --fallback ask` gives it to Copilot's own permission prompt instead); a hook that fails is a denial in Copilot. Undo with `airlock disconnect copilot`.",
    };

    /// Copilot CLI (1.0.102) posts an HTTP `preToolUse` hook to `http://127.0.0.1` only with
    /// `COPILOT_HOOK_ALLOW_LOCALHOST=1` in its environment (else `https://` only), and skips
    /// the hook otherwise, logging why; no file of its can set the variable. (With it, the hook
    /// fails closed.) crates/cli/tests/hook_agents.rs shows both with the real agent.
    const NO_HTTP_HOOK: &str = "GitHub Copilot CLI takes an http:// preToolUse hook only when COPILOT_HOOK_ALLOW_LOCALHOST=1 is in its own environment, which no config file can set, and otherwise skips it with a line in its log: the calls of a Copilot started without it would not reach Airlock (under --allow-all-tools they would run unasked); the command hook (`airlock connect copilot`) reaches Airlock from any environment, and denies the call when it cannot";

    /// `$COPILOT_HOME`, else `~/.copilot`; its `hooks/airlock.json`.
    fn hooks_file() -> Result<PathBuf> {
        let home = match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => crate::connect::home()?.join(".copilot"),
        };
        Ok(home.join("hooks").join("airlock.json"))
    }
}
