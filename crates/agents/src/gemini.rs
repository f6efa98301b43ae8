//! Gemini CLI: its `BeforeTool` hook in `~/.gemini/settings.json` (the timeout in
//! milliseconds), answered with `decision` `deny` and a `reason` (sent to the model as the
//! tool's error) or `allow`, with `hookSpecificOutput.tool_input` for an edit (merged over the
//! model's arguments). A hook cannot let a call past Gemini's own policy, so `connect` also
//! writes a policy of Airlock's own (`~/.gemini/policies/airlock.toml`) that allows every tool:
//! Airlock's hook is then the one gate. Gemini runs a call whose hook fails (any exit but 0 and
//! 2 is a warning), so the hook always answers in time with valid JSON, and "no decision" is a
//! denial here: with that policy Gemini has no prompt of its own to hand the call to.

use crate::{Agent, HookDialect, HookEvent};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// Google's Gemini CLI (`gemini`).
#[derive(Debug, Clone, Copy)]
pub struct Gemini;

impl Agent for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Gemini)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &[
            "read_file",
            "read_many_files",
            "list_directory",
            "glob",
            "search_file_content",
            "grep_search",
            "write_todos",
        ]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "glob",
            "google_web_search",
            "grep_search",
            "list_directory",
            "read_file",
            "read_many_files",
            "replace",
            "run_shell_command",
            "save_memory",
            "search_file_content",
            "web_fetch",
            "write_file",
            "write_todos",
        ]
    }

    fn speaks_acp(&self) -> bool {
        true
    }
}

/// The event Gemini names its hook's input with.
const BEFORE_TOOL: &str = "BeforeTool";

impl HookDialect for Gemini {
    fn events(&self) -> &'static [HookEvent] {
        &[HookEvent::PreToolUse]
    }

    fn event(&self, input: &Value) -> Result<HookEvent, String> {
        match input.get("hook_event_name").and_then(Value::as_str) {
            Some(BEFORE_TOOL) => Ok(HookEvent::PreToolUse),
            other => Err(format!(
                "the hook decides Gemini's BeforeTool, not {}",
                other.unwrap_or("an event without a hook_event_name")
            )),
        }
    }

    fn editable(&self, _event: HookEvent) -> bool {
        true
    }

    fn render(&self, _event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match (answer.verdict, &answer.updated_input) {
            (AgentVerdict::Deny, _) => json!({"decision": "deny", "reason": reason}),
            (AgentVerdict::Allow, Some(edit)) => json!({
                "decision": "allow",
                "hookSpecificOutput": {"hookEventName": BEFORE_TOOL, "tool_input": edit},
            }),
            (AgentVerdict::Allow, None) => json!({"decision": "allow"}),
            // Its policy lets every call through while connected: no decision would run it.
            (AgentVerdict::Undecided, _) => json!({
                "decision": "deny",
                "reason": format!("{reason} (Gemini CLI has no prompt of its own while Airlock decides its calls)"),
            }),
        }
        .to_string()
    }

    /// Its transcript is one JSON document, not JSON Lines: the session stays named by its
    /// folder.
    fn prompt_of(&self, _entry: &Value) -> Option<String> {
        None
    }

    #[cfg(test)]
    fn example_event(&self, _event: HookEvent, transcript: &std::path::Path) -> Value {
        json!({
            "session_id": "s1",
            "transcript_path": transcript.display().to_string(),
            "cwd": "/work/project",
            "hook_event_name": BEFORE_TOOL,
            "timestamp": "2026-11-26T05:00:00.000Z",
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
            "tool_use_id": "toolu_1",
        })
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Gemini;
    use crate::Agent;
    use crate::connect::hooks::{self, Layout};
    use crate::connect::{ConfigWriter, ConnectError, ConnectReport, Options, Result, files};
    use std::path::{Path, PathBuf};

    /// Matchers are regular expressions in Gemini (`*` alone is none).
    const LAYOUT: Layout = Layout {
        group_matcher: Some(".*"),
        timeout_in_ms: true,
        handler_fields: r#"{"type": "command", "name": "airlock"}"#,
        ..Layout::grouped(&["BeforeTool"])
    };

    /// The policy that lets every call past Gemini's own check: Airlock's hook decides.
    const POLICY: &str = "# Written by `airlock connect gemini`: Airlock's BeforeTool hook decides every tool call,\n# so Gemini CLI itself lets them all through. `airlock disconnect gemini` removes this file.\n[[rule]]\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 999\n";

    fn policy_path(settings: &Path) -> PathBuf {
        settings.with_file_name("policies").join("airlock.toml")
    }

    fn write_error(path: &Path, error: std::io::Error) -> ConnectError {
        ConnectError::Write {
            path: path.into(),
            message: error.to_string(),
        }
    }

    impl crate::connect::Connectable for Gemini {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&Gemini);
    }

    impl ConfigWriter for Gemini {
        fn config_path(&self, _project: Option<&Path>) -> Result<PathBuf> {
            Ok(crate::connect::home()?
                .join(".gemini")
                .join("settings.json"))
        }

        fn connect(&self, path: &Path, options: &Options) -> Result<ConnectReport> {
            let mut report = hooks::connect(path, self.name(), &LAYOUT, options)?;
            let policy = policy_path(path);
            if std::fs::read_to_string(&policy).ok().as_deref() != Some(POLICY) {
                files::write_with_backup(&policy, POLICY)?;
                report.changes.push(format!(
                    "+ {}: Gemini CLI allows every tool; Airlock's hook decides",
                    policy.display()
                ));
                report.changed = true;
            }
            Ok(report)
        }

        fn disconnect(&self, path: &Path) -> Result<ConnectReport> {
            let mut report = hooks::disconnect(path, self.name(), &LAYOUT, false)?;
            let policy = policy_path(path);
            if policy.exists() {
                std::fs::remove_file(&policy).map_err(|e| write_error(&policy, e))?;
                report
                    .changes
                    .push(format!("- {}: Gemini CLI asks again", policy.display()));
                report.changed = true;
            }
            Ok(report)
        }

        fn connected(&self, path: &Path) -> Result<bool> {
            Ok(hooks::connected(path, self.name(), &LAYOUT)? && policy_path(path).exists())
        }

        fn connected_note(&self, _report: &ConnectReport) -> Option<&'static str> {
            Some(
                "Its tool calls now wait in Airlock's inbox (approve, deny with a reason the model reads, or edit the arguments). Gemini CLI lets a hook deny or edit a call but not approve one, so connect also wrote a policy that allows every tool (policies/airlock.toml): Gemini no longer asks by itself, Airlock asks. When Airlock is not running or nobody decides in time, the call is denied. Gemini runs a call whose hook crashes: the hook never does, but no setting of Gemini's makes that closed. Undo with `airlock disconnect gemini`.",
            )
        }
    }
}
