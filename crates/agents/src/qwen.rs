//! Qwen Code: its hooks in `~/.qwen/settings.json` (Claude Code's shape, the timeout in
//! milliseconds). PermissionRequest, where Qwen would ask the person, is the full gate: allow,
//! allow with `updatedInput` (the edited input runs) and deny with a message the model reads.
//! PreToolUse, which fires for every call (also in `--approval-mode yolo`, where nothing asks),
//! can deny but ignores an edited input. Qwen fails open on a hook that errors or times out,
//! so the hook always answers in time with valid JSON.

use crate::answers::{NONE, approved_by, permission_request, pre_tool_use};
use crate::{Agent, HookDialect, HookEvent};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// Qwen Code (`qwen`).
#[derive(Debug, Clone, Copy)]
pub struct Qwen;

impl Agent for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn display_name(&self) -> &'static str {
        "Qwen Code"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Qwen)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &[
            "read_file",
            "read_many_files",
            "list_directory",
            "glob",
            "grep_search",
            "todo_write",
        ]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "edit",
            "glob",
            "grep_search",
            "list_directory",
            "read_file",
            "read_many_files",
            "run_shell_command",
            "save_memory",
            "todo_write",
            "web_fetch",
            "write_file",
        ]
    }

    /// Qwen asks at PermissionRequest first and runs PreToolUse after it allowed the call.
    fn asks_permission_first(&self) -> bool {
        true
    }

    fn speaks_acp(&self) -> bool {
        true
    }
}

impl HookDialect for Qwen {
    /// Qwen runs the original input when PreToolUse answers an edit.
    fn editable(&self, event: HookEvent) -> bool {
        event == HookEvent::PermissionRequest
    }

    fn render(&self, event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match (event, answer.verdict) {
            (HookEvent::PreToolUse, AgentVerdict::Deny) => pre_tool_use("deny", reason, None),
            // An edit is decided at PermissionRequest; PreToolUse would ignore one.
            (HookEvent::PreToolUse, AgentVerdict::Allow) => {
                pre_tool_use("allow", &approved_by(answer), None)
            }
            // "ask" is a denial in Qwen ("User confirmation required"): no decision instead.
            (HookEvent::PreToolUse, AgentVerdict::Undecided) => NONE.into(),
            (HookEvent::PermissionRequest, AgentVerdict::Allow) => {
                let mut decision = json!({"behavior": "allow"});
                if let Some(input) = &answer.updated_input {
                    decision["updatedInput"] = input.clone();
                }
                permission_request(decision)
            }
            (HookEvent::PermissionRequest, AgentVerdict::Deny) => {
                permission_request(json!({"behavior": "deny", "message": reason}))
            }
            (HookEvent::PermissionRequest, AgentVerdict::Undecided) => NONE.into(),
        }
    }

    /// Qwen's transcript: `{"type": "user", "message": {"role": "user", "parts": [{"text"}]}}`.
    fn prompt_of(&self, entry: &Value) -> Option<String> {
        if entry.get("type").and_then(Value::as_str)? != "user" {
            return None;
        }
        let message = entry.get("message")?;
        let blocks = message.get("parts").or_else(|| message.get("content"))?;
        match blocks {
            Value::String(text) => crate::prompt_text(text),
            Value::Array(parts) => crate::prompt_text(
                parts
                    .iter()
                    .find_map(|part| part.get("text").and_then(Value::as_str))?,
            ),
            _ => None,
        }
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Qwen;
    use crate::connect::hook_writer::{HookWriter, HttpHooks, Place};
    use crate::connect::hooks::Layout;
    use crate::connect::{ConfigWriter, Connectable};

    impl Connectable for Qwen {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&WRITER);
    }

    /// `.qwen/settings.json`, PreToolUse first: it is the gate `connected` looks for. Qwen's
    /// timeout is in ms.
    const WRITER: HookWriter = HookWriter {
        agent: "qwen",
        place: Place::HomeOrProject(&[".qwen", "settings.json"]),
        layout: Layout {
            timeout_in_ms: true,
            ..Layout::grouped(&["PreToolUse", "PermissionRequest"])
        },
        own_file: false,
        http: HttpHooks::Refused(NO_HTTP_HOOK),
        manifest: None,
        note: "Its tool calls now wait in Airlock's inbox: where Qwen would ask you (approval mode default) you can approve, deny with a message the model reads, or edit the arguments; in yolo mode every call still waits, but an edit cannot be made there. When Airlock is not running or nobody decides in time, the call is denied (`airlock agents set qwen --fallback ask` gives it to Qwen's own prompt instead). Qwen runs a call whose hook crashes: the hook never does, but no setting of Qwen's makes that closed. Undo with `airlock disconnect qwen`.",
    };

    /// Qwen Code (0.24.4, `HttpHookRunner`) treats an HTTP hook that gets no answer (nothing
    /// listening, a timeout, a status that is not 2xx) as a non-blocking error and goes on with
    /// the call, and no setting of its makes that block: in yolo mode the call then runs.
    const NO_HTTP_HOOK: &str = "Qwen Code runs a call whose HTTP hook gets no answer (Airlock not running, a timeout: a non-blocking error to Qwen) and has no setting that blocks it instead, so an HTTP hook would let calls through whenever Airlock is down; the command hook (`airlock connect qwen`) always answers, with a denial when Airlock is not running";
}
