//! Claude Code: its PreToolUse hook in its `settings.json` (the person's, or a project's
//! `.claude/settings.json`), answered with `allow` / `deny` / `ask` and `updatedInput`. The hook
//! is installed with `onFailure: "block"` (Claude Code 2.1.295 and later): a hook that cannot
//! answer (not found, crashed, killed) blocks the call instead of handing it to Claude Code's
//! own permission flow, which may run it.

use crate::answers::{NONE, approved_by, permission_request, pre_tool_use};
use crate::{Agent, HookDialect, HookEvent, prompt_text};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// Claude Code (`claude`).
#[derive(Debug, Clone, Copy)]
pub struct ClaudeCode;

impl Agent for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn display_name(&self) -> &'static str {
        "Claude Code"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&ClaudeCode)
    }

    fn read_only_tools(&self) -> &'static [&'static str] {
        &["Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite"]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &[
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "LS",
            "MultiEdit",
            "NotebookEdit",
            "NotebookRead",
            "Read",
            "Task",
            "TodoWrite",
            "WebFetch",
            "WebSearch",
            "Write",
        ]
    }
}

impl HookDialect for ClaudeCode {
    fn editable(&self, _event: HookEvent) -> bool {
        true
    }

    fn render(&self, event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        let edit = answer.updated_input.as_ref();
        match (event, answer.verdict) {
            (HookEvent::PreToolUse, AgentVerdict::Deny) => pre_tool_use("deny", reason, None),
            (HookEvent::PreToolUse, AgentVerdict::Allow) if edit.is_some() => {
                pre_tool_use("allow", "approved in Airlock with an edit", edit)
            }
            (HookEvent::PreToolUse, AgentVerdict::Allow) => {
                pre_tool_use("allow", &approved_by(answer), None)
            }
            // Back to Claude Code's own permission flow.
            (HookEvent::PreToolUse, AgentVerdict::Undecided) => pre_tool_use("ask", reason, None),
            (HookEvent::PermissionRequest, AgentVerdict::Allow) => {
                let mut decision = json!({"behavior": "allow"});
                if let Some(input) = edit {
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

    /// `{"type":"user","message":{"role":"user","content":"…" or [{"type":"text","text":"…"}]}}`;
    /// tool results are user messages too, and meta entries are not the person's words.
    fn prompt_of(&self, entry: &Value) -> Option<String> {
        if entry.get("type").and_then(Value::as_str)? != "user"
            || entry.get("isMeta").and_then(Value::as_bool) == Some(true)
        {
            return None;
        }
        match entry.pointer("/message/content")? {
            Value::String(text) => prompt_text(text),
            Value::Array(blocks) => prompt_text(
                blocks
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))?
                    .get("text")?
                    .as_str()?,
            ),
            _ => None,
        }
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::ClaudeCode;
    use crate::connect::hook_writer::{HookWriter, HttpHooks, Place};
    use crate::connect::hooks::Layout;
    use crate::connect::{ConfigWriter, Connectable};

    impl Connectable for ClaudeCode {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&WRITER);
    }

    /// Its PreToolUse hook in `.claude/settings.json`, blocking when the hook fails; or its
    /// HTTP hook (`connect --http`).
    const WRITER: HookWriter = HookWriter {
        agent: "claude-code",
        place: Place::HomeOrProject(&[".claude", "settings.json"]),
        layout: Layout {
            handler_fields: r#"{"type": "command", "onFailure": "block"}"#,
            ..Layout::grouped(&["PreToolUse"])
        },
        own_file: false,
        http: HttpHooks::Blocking,
        manifest: None,
        note: "Its tool calls now wait in Airlock's inbox. When Airlock is not running or nobody decides in time, the call is denied (and when the hook itself cannot answer, Claude Code blocks it: `onFailure: block`, Claude Code 2.1.295 or later) (`airlock agents set claude-code --fallback ask` gives it to Claude Code's own permission flow instead, which runs it under its allow rules or bypassPermissions); undo with `airlock disconnect claude-code`.",
    };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::first_prompt;

    /// The session's first prompt as Claude Code writes its transcript: the first user text
    /// (not a meta entry, not a tagged command).
    #[test]
    fn the_first_prompt_is_read_from_its_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude.jsonl");
        let lines = [
            json!({"type": "summary", "summary": "x"}),
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "Caveat"}}),
            json!({"type": "user", "message": {"role": "user", "content": "<command-name>/clear</command-name>"}}),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Fix the test"}]}}),
            json!({"type": "user", "message": {"role": "user", "content": "later"}}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&claude, text.join("\n")).unwrap();
        assert_eq!(
            first_prompt(&ClaudeCode, &claude).as_deref(),
            Some("Fix the test")
        );
        assert_eq!(
            first_prompt(&ClaudeCode, &dir.path().join("missing.jsonl")),
            None
        );
    }

    #[test]
    fn a_denial_at_permission_request_is_the_message_the_model_reads() {
        let answer = AgentAnswer {
            verdict: AgentVerdict::Deny,
            reason: Some("no".into()),
            updated_input: None,
            approval_id: None,
            decided_by: Some("inbox".into()),
        };
        let denied = ClaudeCode.render(HookEvent::PermissionRequest, &answer);
        assert!(
            denied.contains("\"behavior\":\"deny\"") && denied.contains("\"message\":\"no\""),
            "{denied}"
        );
    }
}
