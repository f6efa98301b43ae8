//! What an ACP permission request is in Airlock's words (an agent's tool call), and Airlock's
//! answer in the agent's (one of the options it offered, chosen by `kind`: the ids differ per
//! agent — `proceed_once`, `once`, `allow`, `approved`, `allow_once`).

use airlock_core::CallState;
use airlock_engine::AgentToolReport;
use airlock_protocol::{AgentCall, AgentEvent, AgentVerdict};
use serde_json::{Map, Value, json};

/// What the agent told of the tool call before and in its permission request, merged.
pub(crate) fn merge(into: &mut Value, update: &Value) {
    if let (Some(into), Some(update)) = (into.as_object_mut(), update.as_object()) {
        for (key, value) in update {
            let empty_object = value.as_object().is_some_and(Map::is_empty);
            if !value.is_null() && !empty_object {
                into.insert(key.clone(), value.clone());
            }
        }
    } else if update.is_object() {
        *into = update.clone();
    }
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// The tool's name: the agent's own where it says it (qwen `_meta.toolName`, Claude Code
/// `_meta.claudeCode.toolName`), Gemini's from its tool-call id (`run_shell_command__…`), else
/// the ACP kind (`execute`, `edit`).
fn tool_name(call: &Value) -> String {
    text(call, "/_meta/toolName")
        .or_else(|| text(call, "/_meta/claudeCode/toolName"))
        .or_else(|| {
            text(call, "/toolCallId")
                .and_then(|id| id.split_once("__").map(|(name, _)| name.to_string()))
                .filter(|name| !name.is_empty())
        })
        .or_else(|| text(call, "/kind"))
        .unwrap_or_else(|| "tool".into())
}

/// The text of the call's `content` blocks (Gemini puts the command's folder and purpose there).
fn content_text(call: &Value) -> Option<String> {
    let texts: Vec<&str> = call
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|c| c.pointer("/content/text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The permission request `params` (with what `earlier` updates said of the same call) as the
/// call Airlock decides, and the agent's own words for it (title, kind, locations).
pub(crate) fn call_of(
    agent: &str,
    acp_session: &str,
    folder: &str,
    params: &Value,
    earlier: Option<&Value>,
) -> (AgentCall, String) {
    let mut call = earlier.cloned().unwrap_or_else(|| json!({}));
    merge(&mut call, params.get("toolCall").unwrap_or(&Value::Null));
    let title = text(&call, "/title");
    let kind = text(&call, "/kind");
    let input = match call.get("rawInput") {
        Some(Value::Object(raw)) if !raw.is_empty() => Value::Object(raw.clone()),
        // No input given (Gemini): the command is its title.
        _ => {
            let mut input = Map::new();
            let key = if kind.as_deref() == Some("execute") {
                "command"
            } else {
                "title"
            };
            input.insert(key.into(), json!(title.clone().unwrap_or_default()));
            if let Some(description) = content_text(&call) {
                input.insert("description".into(), json!(description));
            }
            Value::Object(input)
        }
    };
    let locations: Vec<String> = call
        .get("locations")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|l| l.get("path").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut shown = format!(
        "{agent} asks: {}",
        title.as_deref().unwrap_or("a tool call")
    );
    if let Some(kind) = &kind {
        shown.push_str(&format!(" ({kind})"));
    }
    if !locations.is_empty() {
        shown.push_str(&format!(" in {}", locations.join(", ")));
    }
    let shown: String = shown
        .chars()
        .filter(|c| !c.is_control())
        .take(500)
        .collect();
    (
        AgentCall {
            agent: agent.to_string(),
            source: None,
            client: None,
            agent_session: acp_session.to_string(),
            cwd: Some(folder.to_string()),
            tool: tool_name(&call),
            input,
            tool_use_id: text(&call, "/toolCallId"),
            event: AgentEvent::PermissionRequest,
            editable: false,
            wait_ms: None,
            definition: None,
            prompt: None,
            defer: false,
            takes_reason: None,
        },
        shown,
    )
}

/// The most of a tool's output kept on its card.
const MAX_OUTPUT: usize = 64 * 1024;

/// A `tool_call` or `tool_call_update` (`update`) as the card shows it, with what the agent
/// said of the call before (`merged`, `update` included): its tool's name, the input when this
/// update gives it (a new call without one: its title), its state, and what it reported.
pub(crate) fn report(merged: &Value, update: &Value) -> AgentToolReport {
    let args = match update.get("rawInput") {
        Some(Value::Object(raw)) if !raw.is_empty() => Some(Value::Object(raw.clone())),
        _ if update.get("sessionUpdate").and_then(Value::as_str) == Some("tool_call") => {
            text(update, "/title").map(|title| json!({ "title": title }))
        }
        _ => None,
    };
    let state = match update.get("status").and_then(Value::as_str) {
        Some("pending") => Some(CallState::Proposed),
        Some("in_progress") => Some(CallState::Running),
        Some("completed") => Some(CallState::Succeeded),
        Some("failed") => Some(CallState::Failed),
        _ => None,
    };
    let result = match update.get("rawOutput") {
        Some(output) if !output.is_null() => Some(output.clone()),
        _ => content_text(update)
            .map(|text| {
                let cut: String = text.chars().take(MAX_OUTPUT).collect();
                json!({ "output": cut })
            })
            .or_else(|| {
                update
                    .get("content")
                    .filter(|c| c.as_array().is_some_and(|c| !c.is_empty()))
                    .map(|content| json!({ "content": content }))
            }),
    };
    AgentToolReport {
        tool: Some(tool_name(merged)),
        args,
        state,
        result,
    }
}

/// A `plan` update as the chat shows it: one line per entry, with its status.
pub(crate) fn plan(update: &Value) -> Option<String> {
    let entries = update.get("entries")?.as_array()?;
    let lines: Vec<String> = entries
        .iter()
        .take(100)
        .filter_map(|entry| {
            let content = text(entry, "/content")?;
            let mark = match entry.get("status").and_then(Value::as_str) {
                Some("completed") => "[x]",
                Some("in_progress") => "[~]",
                _ => "[ ]",
            };
            Some(format!("{mark} {content}"))
        })
        .collect();
    (!lines.is_empty()).then(|| format!("The agent's plan:\n{}", lines.join("\n")))
}

/// The option of the first of `kinds` the agent offered.
fn option_of(options: &Value, kinds: &[&str]) -> Option<String> {
    let options = options.as_array()?;
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|o| o.get("kind").and_then(Value::as_str) == Some(kind))
            .and_then(|o| o.get("optionId").and_then(Value::as_str))
            .map(str::to_string)
    })
}

/// The `session/request_permission` result for Airlock's verdict: allow → the agent's allow-once
/// option (never allow-always: Airlock keeps its own memory and the agent asks again), deny →
/// its reject option, anything else (undecided, an edit it cannot run, an error) → cancelled.
pub(crate) fn outcome(verdict: Option<AgentVerdict>, edited: bool, options: &Value) -> Value {
    let chosen = match verdict {
        Some(AgentVerdict::Allow) if !edited => option_of(options, &["allow_once"]),
        Some(AgentVerdict::Deny) => option_of(options, &["reject_once", "reject_always"]),
        _ => None,
    };
    match chosen {
        Some(id) => json!({"outcome": {"outcome": "selected", "optionId": id}}),
        None => cancelled(),
    }
}

pub(crate) fn cancelled() -> Value {
    json!({"outcome": {"outcome": "cancelled"}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Value {
        json!([
            {"optionId": "proceed_always", "kind": "allow_always"},
            {"optionId": "proceed_once", "kind": "allow_once"},
            {"optionId": "cancel", "kind": "reject_once"}
        ])
    }

    #[test]
    fn options_are_chosen_by_kind_and_never_allow_always() {
        let selected = |v: Value| v.pointer("/outcome/optionId").cloned();
        assert_eq!(
            selected(outcome(Some(AgentVerdict::Allow), false, &options())),
            Some(json!("proceed_once"))
        );
        assert_eq!(
            selected(outcome(Some(AgentVerdict::Deny), false, &options())),
            Some(json!("cancel"))
        );
        for (verdict, edited) in [
            (Some(AgentVerdict::Undecided), false),
            (None, false),
            (Some(AgentVerdict::Allow), true),
        ] {
            assert_eq!(outcome(verdict, edited, &options()), cancelled());
        }
        let only_always = json!([{"optionId": "a", "kind": "allow_always"}]);
        assert_eq!(
            outcome(Some(AgentVerdict::Allow), false, &only_always),
            cancelled()
        );
    }

    #[test]
    fn an_agents_tool_call_reports_become_its_card() {
        let first = json!({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Shell",
            "kind": "execute", "status": "pending", "rawInput": {}});
        let mut merged = json!({});
        merge(&mut merged, &first);
        let report = report(&merged, &first);
        assert_eq!(report.tool.as_deref(), Some("execute"));
        assert_eq!(report.args, Some(json!({"title": "Shell"})));
        assert_eq!(report.state, Some(CallState::Proposed));
        let done = json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
            "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "hi"}}]});
        merge(&mut merged, &done);
        let report = super::report(&merged, &done);
        assert_eq!(
            report.args, None,
            "an update without input keeps the card's"
        );
        assert_eq!(report.state, Some(CallState::Succeeded));
        assert_eq!(report.result, Some(json!({"output": "hi"})));
        let plan = json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "status": "completed"}, {"content": "write", "status": "pending"}]});
        assert_eq!(
            super::plan(&plan).as_deref(),
            Some("The agent's plan:\n[x] read\n[ ] write")
        );
    }

    #[test]
    fn each_agents_request_names_its_tool_and_input() {
        // qwen: its tool's name in _meta, the input in rawInput.
        let qwen = json!({"toolCall": {"toolCallId": "call_1", "title": "echo hi > f.txt (write f.txt)",
            "kind": "execute", "rawInput": {"command": "echo hi > f.txt", "description": "write f.txt"},
            "_meta": {"toolName": "run_shell_command"}}});
        let (call, shown) = call_of("qwen", "s", "/w", &qwen, None);
        assert_eq!(call.tool, "run_shell_command");
        assert_eq!(call.input["command"], "echo hi > f.txt");
        assert_eq!(call.tool_use_id.as_deref(), Some("call_1"));
        assert!(shown.starts_with("qwen asks: echo hi > f.txt"), "{shown}");
        // Gemini: no rawInput; the name in the id, the command in the title.
        let gemini = json!({"toolCall": {"toolCallId": "run_shell_command__run_shell_command_1_0",
            "title": "echo hi > f.txt", "kind": "execute",
            "content": [{"type": "content", "content": {"type": "text", "text": "[cwd /w] (write f.txt)"}}]}});
        let (call, _) = call_of("gemini", "s", "/w", &gemini, None);
        assert_eq!(call.tool, "run_shell_command");
        assert_eq!(call.input["command"], "echo hi > f.txt");
        // Claude Code: the kind and the tool's name came in the earlier tool_call update.
        let earlier = json!({"toolCallId": "toolu_1", "kind": "execute",
            "_meta": {"claudeCode": {"toolName": "Bash"}}, "rawInput": {}});
        let claude = json!({"toolCall": {"toolCallId": "toolu_1", "title": "`echo hi`",
            "rawInput": {"command": "echo hi", "description": "d"}}});
        let (call, shown) = call_of("claude-code-acp", "s", "/w", &claude, Some(&earlier));
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.input["command"], "echo hi");
        assert!(shown.contains("(execute)"), "{shown}");
    }
}
