//! What every agent in [`AGENTS`] must have, checked by iterating the list: an agent added with
//! one file and one line is held to the same as the others.
#![allow(clippy::unwrap_used)]

use super::*;
use airlock_protocol::AgentVerdict;
use std::collections::HashSet;

/// An event as the agents' hooks send it (Claude Code and Codex alike).
fn event(name: HookEvent, transcript: &Path) -> Value {
    json!({
        "session_id": "s1",
        "transcript_path": transcript.display().to_string(),
        "cwd": "/work/project",
        "hook_event_name": name.as_str(),
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "tool_use_id": "toolu_1",
    })
}

fn answer(verdict: AgentVerdict, edit: Option<Value>) -> AgentAnswer {
    AgentAnswer {
        verdict,
        reason: Some("Airlock: the reason".into()),
        updated_input: edit,
        approval_id: None,
        decided_by: Some("inbox".into()),
    }
}

#[test]
fn every_agent_has_one_name_a_display_name_and_is_found_by_it() {
    let mut names = HashSet::new();
    for agent in AGENTS {
        let name = agent.name();
        assert!(names.insert(name), "two agents are called {name}");
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}: a CLI value is lower-case words joined by '-'"
        );
        assert!(
            !agent.display_name().trim().is_empty(),
            "{name} has no display name"
        );
        assert_eq!(by_name(name).map(|a| a.name()), Some(name));
        assert_eq!(display_name(name), agent.display_name());
        assert!(
            by_name(agent.asks_as()).is_some(),
            "{name} asks as {}, which is no agent",
            agent.asks_as()
        );
        // The UI's names come from the same list.
        assert!(
            typescript_names().contains(&format!(
                "{}: {}",
                json!(name),
                json!(agent.display_name())
            )),
            "{name} is missing from the UI's names"
        );
    }
    assert_eq!(display_name("cursor"), "cursor");
}

/// A hook agent's tools are `NAME/TOOL` in the policy, so no MCP server may take its name: core
/// (which cannot see this crate) reserves exactly the hook agents' names.
#[test]
fn the_hook_agents_are_the_sources_core_reserves() {
    let reserved: Vec<&str> = airlock_core::AGENT_SOURCES.to_vec();
    assert_eq!(
        hook_agent_names(),
        reserved,
        "add the agent's name to airlock_core::AGENT_SOURCES (its tools are NAME/TOOL)"
    );
    for agent in hook_agents() {
        assert!(airlock_core::validate_server_name(agent.name()).is_err());
        for tool in agent.read_only_tools() {
            assert!(
                agent.known_tools().contains(tool),
                "{}: read-only tool {tool} is not among its known tools",
                agent.name()
            );
        }
    }
}

/// Every dialect, at every event it decides: the agent's event read as Airlock's request, and
/// every answer Airlock gives written back as one JSON object the agent reads as meant.
#[test]
fn every_hook_dialect_round_trips_an_event_and_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("transcript.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let mut dialects = 0;
    for agent in hook_agents() {
        dialects += 1;
        let name = agent.name();
        let dialect = agent.dialect().unwrap();
        for hook_event in HookEvent::ALL {
            let input = event(hook_event, &transcript);
            assert_eq!(HookEvent::of(&input), Ok(hook_event));
            let call = dialect.call(name, hook_event, &input).unwrap();
            assert_eq!(
                (
                    call.agent.as_str(),
                    call.tool.as_str(),
                    call.agent_session.as_str()
                ),
                (name, "Bash", "s1")
            );
            assert_eq!(call.input, json!({"command": "git status"}));
            assert_eq!(call.tool_use_id.as_deref(), Some("toolu_1"));
            assert_eq!(call.cwd.as_deref(), Some("/work/project"));
            assert_eq!(call.editable, dialect.editable(hook_event));
            let mut without_tool = input.clone();
            without_tool["tool_name"] = Value::Null;
            assert!(dialect.call(name, hook_event, &without_tool).is_err());

            for verdict in [
                AgentVerdict::Allow,
                AgentVerdict::Deny,
                AgentVerdict::Undecided,
            ] {
                for edit in [None, Some(json!({"command": "git status --short"}))] {
                    let text = dialect.render(hook_event, &answer(verdict, edit.clone()));
                    let value: Value = serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("{name}: {text} is not JSON: {e}"));
                    assert!(value.is_object(), "{name}: {text}");
                    let output = &value["hookSpecificOutput"];
                    match verdict {
                        // A denial is always one the agent reads, with the reason.
                        AgentVerdict::Deny => {
                            assert!(text.contains("deny"), "{name}: {text}");
                            assert!(text.contains("Airlock: the reason"), "{name}: {text}");
                        }
                        // An allow is never a denial; an edit reaches the agent only where it
                        // runs one.
                        AgentVerdict::Allow => {
                            assert!(!text.contains("deny"), "{name}: {text}");
                            let edited = output.get("updatedInput").is_some()
                                || output.pointer("/decision/updatedInput").is_some();
                            assert_eq!(
                                edited,
                                edit.is_some() && dialect.editable(hook_event),
                                "{name} {hook_event:?}: {text}"
                            );
                        }
                        // No decision gives the call back to the agent's own flow: never an
                        // allow, never a deny.
                        AgentVerdict::Undecided => {
                            assert!(
                                !text.contains("allow") && !text.contains("deny"),
                                "{name}: {text}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(dialects >= 2, "Claude Code and Codex have hook dialects");
}

#[test]
fn an_event_the_hook_does_not_decide_is_named() {
    let error = HookEvent::of(&json!({"hook_event_name": "Stop"})).unwrap_err();
    assert!(error.contains("not Stop"), "{error}");
    assert!(HookEvent::of(&json!({})).is_err());
    let denial: Value = serde_json::from_str(&denied_to_any("why")).unwrap();
    assert_eq!(denial["hookSpecificOutput"]["permissionDecision"], "deny");
}

/// Every agent `connect` knows has a CLI value and a config file; the others have none.
#[cfg(feature = "connect")]
#[test]
fn every_connectable_agent_is_a_cli_value_with_a_config_file() {
    let names = connect::names();
    assert_eq!(names, ["claude-code", "codex", "claude-desktop"]);
    for name in &names {
        let target = connect::Target::parse(name, None).unwrap();
        assert_eq!(target.name(), *name);
        assert!(connect::Target::parse("cursor", None).is_err());
        let _ = target.writer().takes_project();
    }
    let error = connect::Target::parse("codex", Some("/p".into())).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("--project is for claude-code only"),
        "{error}"
    );
    assert!(connect::Target::parse(airlock_core::MCP_CLIENT, None).is_err());
}
