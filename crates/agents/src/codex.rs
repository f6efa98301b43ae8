//! Codex: its hook in `CODEX_HOME/hooks.json` (PreToolUse, and PermissionRequest so an approval
//! given at PreToolUse is not asked for again), and its trust in `config.toml` — Codex skips an
//! untrusted hook silently, so a hook without its trust would gate nothing. Its hook reads a bare
//! `allow` or `ask` as unsupported (it fails open): letting a call through is no decision at all.

use crate::answers::{NONE, permission_request, pre_tool_use};
use crate::{Agent, HookDialect, HookEvent, prompt_text};
use airlock_protocol::{AgentAnswer, AgentVerdict};
use serde_json::{Value, json};

/// OpenAI's Codex CLI (`codex`).
#[derive(Debug, Clone, Copy)]
pub struct Codex;

impl Agent for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn display_name(&self) -> &'static str {
        "Codex"
    }

    fn dialect(&self) -> Option<&'static dyn HookDialect> {
        Some(&Codex)
    }

    /// None: its hook names every command `Bash` and every edit `apply_patch`.
    fn read_only_tools(&self) -> &'static [&'static str] {
        &[]
    }

    fn known_tools(&self) -> &'static [&'static str] {
        &["Bash", "apply_patch"]
    }
}

impl HookDialect for Codex {
    /// Codex rejects an edited input at PermissionRequest.
    fn editable(&self, event: HookEvent) -> bool {
        event != HookEvent::PermissionRequest
    }

    fn render(&self, event: HookEvent, answer: &AgentAnswer) -> String {
        let reason = answer.reason.as_deref().unwrap_or_default();
        match (event, answer.verdict, &answer.updated_input) {
            (HookEvent::PreToolUse, AgentVerdict::Deny, _) => pre_tool_use("deny", reason, None),
            (HookEvent::PreToolUse, AgentVerdict::Allow, Some(input)) => {
                pre_tool_use("allow", "approved in Airlock with an edit", Some(input))
            }
            // A bare "allow" and "ask" are unsupported (they fail open): no decision lets the
            // call through, or gives it to Codex's own approval.
            (HookEvent::PreToolUse, AgentVerdict::Allow | AgentVerdict::Undecided, _) => {
                NONE.into()
            }
            // `updatedInput` is rejected at PermissionRequest: never sent there.
            (HookEvent::PermissionRequest, AgentVerdict::Allow, _) => {
                permission_request(json!({"behavior": "allow"}))
            }
            (HookEvent::PermissionRequest, AgentVerdict::Deny, _) => {
                permission_request(json!({"behavior": "deny", "message": reason}))
            }
            (HookEvent::PermissionRequest, AgentVerdict::Undecided, _) => NONE.into(),
        }
    }

    fn prompt_of(&self, entry: &Value) -> Option<String> {
        match entry.get("type").and_then(Value::as_str)? {
            // Codex 0.169: {"type":"response_item","payload":{"type":"message","role":"user",
            // "content":[{"type":"input_text","text":"…"}]}} (its environment context is such a
            // message too, tagged, skipped by `prompt_text`).
            "response_item"
                if entry.pointer("/payload/type").and_then(Value::as_str) == Some("message")
                    && entry.pointer("/payload/role").and_then(Value::as_str) == Some("user") =>
            {
                prompt_text(
                    entry
                        .pointer("/payload/content")?
                        .as_array()?
                        .iter()
                        .find(|b| b.get("type").and_then(Value::as_str) == Some("input_text"))?
                        .get("text")?
                        .as_str()?,
                )
            }
            // Other Codex versions: {"type":"event_msg","payload":{"type":"user_message","message":"…"}}.
            "event_msg"
                if entry.pointer("/payload/type").and_then(Value::as_str)
                    == Some("user_message") =>
            {
                prompt_text(entry.pointer("/payload/message")?.as_str()?)
            }
            _ => None,
        }
    }
}

#[cfg(feature = "connect")]
mod config {
    use super::Codex;
    use crate::Agent;
    use crate::connect::{
        ConfigWriter, ConnectError, ConnectReport, Options, Result, codex_trust, hooks,
    };
    use std::path::{Path, PathBuf};

    const LAYOUT: hooks::Layout = hooks::Layout::grouped(&["PreToolUse", "PermissionRequest"]);

    /// `$CODEX_HOME`, else `~/.codex`.
    pub fn home() -> Result<PathBuf> {
        if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        dirs::home_dir()
            .map(|h| h.join(".codex"))
            .ok_or_else(|| ConnectError::Invalid("no home folder is set ($HOME)".into()))
    }

    impl crate::connect::Connectable for Codex {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&Codex);
    }

    impl ConfigWriter for Codex {
        fn config_path(&self, _project: Option<&Path>) -> Result<PathBuf> {
            Ok(home()?.join("hooks.json"))
        }

        fn connect(&self, path: &Path, options: &Options) -> Result<ConnectReport> {
            let agent = self.name();
            let stale = hooks::our_keys(path, agent)?;
            let mut report = hooks::connect(path, agent, &LAYOUT, options)?;
            let fresh = hooks::our_keys(path, agent)?;
            let gone: Vec<String> = stale.into_iter().filter(|k| !fresh.contains(k)).collect();
            let mut trusted = codex_trust::forget(path, &gone)?;
            trusted.extend(codex_trust::trust(path, agent, options.codex.as_deref())?);
            report.changes.extend(trusted.iter().cloned());
            report.changed |= !trusted.is_empty();
            Ok(report)
        }

        fn disconnect(&self, path: &Path) -> Result<ConnectReport> {
            let keys = hooks::our_keys(path, self.name())?;
            let mut report = hooks::disconnect(path, self.name(), &LAYOUT, false)?;
            let forgotten = codex_trust::forget(path, &keys)?;
            report.changes.extend(forgotten.iter().cloned());
            report.changed |= !forgotten.is_empty();
            Ok(report)
        }

        fn connected(&self, path: &Path) -> Result<bool> {
            hooks::connected(path, self.name(), &LAYOUT)
        }

        fn connected_note(&self, _report: &ConnectReport) -> Option<&'static str> {
            Some(
                "Its tool calls now wait in Airlock's inbox. When Airlock is not running or nobody decides in time, the call is denied (`airlock agents set codex --fallback ask` gives it to Codex's own approval instead, which may run it); undo with `airlock disconnect codex`.",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::first_prompt;

    /// The session's first prompt as Codex writes its rollout: its first `user_message`, or
    /// (0.169) its first user message after the tagged context.
    #[test]
    fn the_first_prompt_is_read_from_its_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("rollout.jsonl");
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "x"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>…"}]}}),
            json!({"type": "event_msg", "payload": {"type": "user_message", "message": "Run the command"}}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&codex, text.join("\n")).unwrap();
        assert_eq!(
            first_prompt(&Codex, &codex).as_deref(),
            Some("Run the command")
        );

        let lines = [
            json!({"type": "session_meta", "payload": {"id": "x"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>…"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the build"}]}}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&codex, text.join("\n")).unwrap();
        assert_eq!(
            first_prompt(&Codex, &codex).as_deref(),
            Some("Fix the build")
        );
    }

    fn answer(verdict: AgentVerdict, edit: Option<Value>) -> AgentAnswer {
        AgentAnswer {
            verdict,
            reason: Some("no".into()),
            updated_input: edit,
            approval_id: None,
            decided_by: Some("inbox".into()),
        }
    }

    /// A bare allow is unsupported in Codex (it fails open): letting a call through is no
    /// decision; an edit is an allow with `updatedInput`, except at PermissionRequest.
    #[test]
    fn letting_a_call_through_is_no_decision_and_an_edit_never_reaches_permission_request() {
        assert_eq!(
            Codex.render(HookEvent::PreToolUse, &answer(AgentVerdict::Allow, None)),
            "{}"
        );
        let edited = Codex.render(
            HookEvent::PreToolUse,
            &answer(AgentVerdict::Allow, Some(json!({"command": "ls"}))),
        );
        assert!(edited.contains("\"updatedInput\""), "{edited}");
        let permission = Codex.render(
            HookEvent::PermissionRequest,
            &answer(AgentVerdict::Allow, Some(json!({"command": "ls"}))),
        );
        assert!(!permission.contains("updatedInput"), "{permission}");
        assert!(!Codex.editable(HookEvent::PermissionRequest));
    }
}
