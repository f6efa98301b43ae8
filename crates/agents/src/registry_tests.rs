//! What every agent in [`AGENTS`] must have, checked by iterating the list: an agent added with
//! one file and one line is held to the same as the others.
#![allow(clippy::unwrap_used)]

use super::*;
use airlock_protocol::AgentVerdict;
use std::collections::HashSet;

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
    assert_eq!(display_name("cline"), "cline");
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
        for &hook_event in dialect.events() {
            let input = dialect.example_event(hook_event, &transcript);
            assert_eq!(dialect.event(&input), Ok(hook_event), "{name}");
            let call = dialect.call(name, hook_event, &input).unwrap();
            assert_eq!(
                (
                    call.agent.as_str(),
                    call.tool.as_str(),
                    call.agent_session.as_str()
                ),
                (name, "Bash", "s1")
            );
            assert_eq!(call.input, json!({"command": "git status"}), "{name}");
            assert_eq!(call.tool_use_id.as_deref(), Some("toolu_1"), "{name}");
            assert_eq!(call.cwd.as_deref(), Some("/work/project"), "{name}");
            assert_eq!(call.editable, dialect.editable(hook_event));
            // Without a tool there is no call; another agent's event is no event of this one.
            let tool = dialect.fields().tool.trim_start_matches('/');
            let mut without_tool = input.clone();
            without_tool[tool] = Value::Null;
            assert!(
                dialect.call(name, hook_event, &without_tool).is_err(),
                "{name}"
            );
            assert!(
                dialect.event(&json!({"hook_event_name": "Stop"})).is_err(),
                "{name}"
            );

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
                    let denies = text.contains("deny") || text.contains("block");
                    match verdict {
                        // A denial is always one the agent reads, with the reason.
                        AgentVerdict::Deny => {
                            assert!(denies, "{name}: {text}");
                            assert!(text.contains("Airlock: the reason"), "{name}: {text}");
                        }
                        // An allow is never a denial; an edit reaches the agent only where it
                        // runs one.
                        AgentVerdict::Allow => {
                            assert!(!denies, "{name}: {text}");
                            assert_eq!(
                                text.contains("git status --short"),
                                edit.is_some() && dialect.editable(hook_event),
                                "{name} {hook_event:?}: {text}"
                            );
                        }
                        // No decision never lets the call through: it goes to the agent's own
                        // flow, or is a denial where the agent has none (Gemini CLI under
                        // Airlock's policy, goose).
                        AgentVerdict::Undecided => {
                            assert!(!text.contains("allow"), "{name}: {text}");
                        }
                    }
                }
            }
        }
    }
    assert!(dialects >= 7, "every hook agent has a dialect");
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
    assert_eq!(
        names,
        [
            "claude-code",
            "codex",
            "copilot",
            "qwen",
            "gemini",
            "cursor",
            "goose",
            "claude-desktop"
        ]
    );
    for name in &names {
        let target = connect::Target::parse(name, None).unwrap();
        assert_eq!(target.name(), *name);
        assert!(connect::Target::parse("cline", None).is_err());
        let _ = target.writer().takes_project();
    }
    let error = connect::Target::parse("codex", Some("/p".into())).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("--project is for claude-code, qwen, cursor only"),
        "{error}"
    );
    assert!(connect::Target::parse(airlock_core::MCP_CLIENT, None).is_err());
}

/// Every hook agent's config writer (Codex aside: its trust needs Codex itself, tested in
/// crates/cli/tests/gateway.rs) on a fresh HOME-like folder: connecting writes the agent's own
/// shape with its fail-closed switch where it has one, twice changes once, and disconnecting
/// leaves no hook of Airlock's (and no file Airlock alone wrote).
#[cfg(all(feature = "connect", unix))]
#[test]
fn every_hook_config_writer_connects_once_and_disconnects_cleanly() {
    let expected: &[(&str, &[&str])] = &[
        (
            "claude-code",
            &[
                "\"PreToolUse\"",
                "\"onFailure\": \"block\"",
                "\"timeout\": 30",
            ],
        ),
        (
            "copilot",
            &[
                "\"version\": 1",
                "\"preToolUse\"",
                "\"bash\": \"exec ",
                "\"timeoutSec\": 30",
            ],
        ),
        (
            "qwen",
            &[
                "\"PreToolUse\"",
                "\"PermissionRequest\"",
                "\"timeout\": 30000",
            ],
        ),
        (
            "gemini",
            &[
                "\"BeforeTool\"",
                "\"matcher\": \".*\"",
                "\"timeout\": 30000",
            ],
        ),
        (
            "cursor",
            &[
                "\"version\": 1",
                "\"preToolUse\"",
                "\"failClosed\": true",
                "\"timeout\": 30",
            ],
        ),
        (
            "goose",
            &[
                "\"PreToolUse\"",
                "\"on_failure\": \"block\"",
                "\"timeout\": 30",
            ],
        ),
    ];
    let options = connect::Options {
        airlock: "/opt/airlock/airlock".into(),
        data_dir: None,
        timeout_secs: 30,
        codex: None,
    };
    for (name, shape) in expected {
        let writer = connect::Target::parse(name, None).unwrap().writer();
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".agent/plugin/hooks/config.json");
        let first = writer.connect(&path, &options).unwrap();
        assert!(first.changed, "{name}: {first:?}");
        let text = std::fs::read_to_string(&path).unwrap();
        for part in *shape {
            assert!(text.contains(part), "{name}: {part} is not in {text}");
        }
        assert!(
            text.contains(&format!("airlock-hook {name} --timeout 30"))
                || text.contains(&format!("airlock hook {name} --timeout 30")),
            "{name}: {text}"
        );
        assert!(writer.connected(&path).unwrap(), "{name}");
        let second = writer.connect(&path, &options).unwrap();
        assert!(!second.changed, "{name} changed twice: {second:?}");

        let undone = writer.disconnect(&path).unwrap();
        assert!(undone.changed, "{name}: {undone:?}");
        assert!(!writer.connected(&path).unwrap(), "{name}");
        if let Ok(left) = std::fs::read_to_string(&path) {
            assert!(!left.contains("airlock"), "{name} left its hook: {left}");
        }
        let again = writer.disconnect(&path).unwrap();
        assert!(!again.changed, "{name}: {again:?}");
    }
    // Gemini's policy of Airlock's own is there only while connected; goose's plugin likewise.
    let home = tempfile::tempdir().unwrap();
    let gemini = connect::Target::parse("gemini", None).unwrap().writer();
    let settings = home.path().join(".gemini/settings.json");
    gemini.connect(&settings, &options).unwrap();
    let policy = home.path().join(".gemini/policies/airlock.toml");
    let rule = std::fs::read_to_string(&policy).unwrap();
    assert!(rule.contains("toolName = \"*\"") && rule.contains("decision = \"allow\""));
    gemini.disconnect(&settings).unwrap();
    assert!(!policy.exists());
    let goose = connect::Target::parse("goose", None).unwrap().writer();
    let hooks = home.path().join("plugins/airlock/hooks/hooks.json");
    goose.connect(&hooks, &options).unwrap();
    assert!(home.path().join("plugins/airlock/plugin.json").exists());
    goose.disconnect(&hooks).unwrap();
    assert!(!hooks.exists() && !home.path().join("plugins/airlock/plugin.json").exists());
}

/// `connect --http` installs an HTTP hook only where every call then reaches Airlock or is
/// blocked (Claude Code's `onFailure: "block"`). Qwen Code runs a call its HTTP hook got no
/// answer for; Copilot CLI skips an http:// hook unless a variable of its environment allows it
/// (crates/cli/tests/hook_agents.rs shows both with the real agents): refused, saying why and
/// naming the command hook, with nothing written.
#[cfg(feature = "connect")]
#[test]
fn an_http_hook_is_installed_only_where_the_agent_blocks_an_unanswered_call() {
    let options = connect::Options {
        airlock: "/opt/airlock/airlock".into(),
        data_dir: None,
        timeout_secs: 30,
        codex: None,
    };
    let hook = connect::HttpHook {
        url: "http://127.0.0.1:23456/v1/agent-calls/hook/AGENT".into(),
        token: "airlock_agent_secret".into(),
    };
    let mut installs = Vec::new();
    for name in connect::names() {
        let writer = connect::Target::parse(name, None).unwrap().writer();
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config.json");
        match writer.no_http_hook() {
            None => {
                writer.connect_http(&path, &options, &hook).unwrap();
                installs.push(name);
            }
            Some(why) => {
                let error = writer.connect_http(&path, &options, &hook).unwrap_err();
                assert_eq!(error.to_string(), why, "{name}");
                assert!(!path.exists(), "{name}: a refused HTTP hook was written");
            }
        }
    }
    assert_eq!(installs, ["claude-code"]);
    for name in ["copilot", "qwen"] {
        let why = connect::Target::parse(name, None)
            .unwrap()
            .writer()
            .no_http_hook()
            .unwrap();
        assert!(
            why.contains("HTTP hook") || why.contains("http:// preToolUse hook"),
            "{name}: {why}"
        );
        assert!(
            why.contains(&format!("the command hook (`airlock connect {name}`)")),
            "{name}: {why}"
        );
    }
}
