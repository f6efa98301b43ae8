//! Agents hosted over ACP (`airlock agents add NAME`, `airlock chat --agent`), with the six
//! real agents of `tests/agents` (qwen-code, claude-code-acp, opencode, gemini-cli, codex-acp,
//! copilot; pinned, installed by scripts/setup.sh), each registered by its preset (the command
//! and flags a person gets) and run offline against the scripted model servers on 127.0.0.1
//! (OpenAI chat, Anthropic, Gemini, Responses), in a temporary HOME with every variable that
//! keeps it off its vendor's hosts, every proxy variable pointing at a closed local port. For
//! each agent: allowed by a rule → ran, no inbox item; asked → approved → ran (the file is
//! there); denied → nothing ran, the reason in the chat and the audit trail; cancelled while it
//! waits → the turn ends on Airlock's `cancelled` answer, nothing ran, and no process is left
//! once Airlock ends; the agent's process killed while it waits → its item withdrawn and nothing
//! of it left (codex-acp's launcher leaves its native agent behind); Airlock killed while it
//! waits → after the restart the chat says its agent ended, the item is withdrawn, the agent is
//! gone. And an agent that sends garbage or floods is stopped with a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only: the agents start through npm's POSIX shims; processes are found through /proc.
#![cfg(target_os = "linux")]

mod common;

use airlock_testkit::{Fallback, ScriptedCall, ScriptedModel};
use common::{Engine, airlock, eventually, ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const COMMAND: &str = "echo hi > f.txt";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Agent {
    Qwen,
    ClaudeCodeAcp,
    OpenCode,
    Gemini,
    CodexAcp,
    Copilot,
}

impl Agent {
    /// Its name in Airlock: the preset's (`airlock agents add NAME`).
    fn name(self) -> &'static str {
        match self {
            Agent::Qwen => "qwen",
            Agent::ClaudeCodeAcp => "claude-code-acp",
            Agent::OpenCode => "opencode",
            Agent::Gemini => "gemini",
            Agent::CodexAcp => "codex-acp",
            Agent::Copilot => "copilot",
        }
    }

    /// The folder of the pinned agent's program (`tests/agents/node_modules/.bin`); fails with
    /// the command that installs it when it is missing.
    fn bin_dir(self) -> PathBuf {
        let preset = airlock_acp::presets::preset(self.name()).unwrap();
        let bin = common::installed_agent(preset.program);
        bin.parent().unwrap().to_path_buf()
    }

    /// The model's call of the agent's shell tool that writes f.txt.
    fn shell_call(self) -> ScriptedCall {
        let (id, tool, args) = match self {
            Agent::Qwen | Agent::Gemini => (
                "call_1",
                "run_shell_command",
                json!({"command": COMMAND, "description": "write f.txt"}),
            ),
            Agent::ClaudeCodeAcp => (
                "toolu_mock0001",
                "Bash",
                json!({"command": COMMAND, "description": "write f.txt"}),
            ),
            Agent::OpenCode => (
                "call_1",
                "bash",
                json!({"command": COMMAND, "description": "write f.txt"}),
            ),
            Agent::Copilot => (
                "call_1",
                "bash",
                json!({"command": COMMAND, "description": "write f.txt", "mode": "sync", "initial_wait": 30}),
            ),
            Agent::CodexAcp => ("call_1", "exec_command", json!({"cmd": COMMAND})),
        };
        ScriptedCall::new(id, tool, args)
    }

    /// The tool Airlock's policy and inbox know the call by.
    fn tool(self) -> &'static str {
        match self {
            Agent::Qwen | Agent::Gemini => "run_shell_command",
            Agent::ClaudeCodeAcp => "Bash",
            Agent::OpenCode | Agent::CodexAcp | Agent::Copilot => "execute",
        }
    }

    /// Where the command is in the call's arguments (codex-acp gives the argv it runs).
    fn command_pointer(self) -> &'static str {
        match self {
            Agent::CodexAcp => "/command/2",
            _ => "/command",
        }
    }

    /// What keeps the agent offline and in a HOME of its own (AGENT-ACP.md, AGENT-HOOKS.md):
    /// its model on 127.0.0.1, its telemetry, updates and downloads off, every proxy variable
    /// at a closed port.
    fn env(self, home: &Path, model: &ScriptedModel) -> Vec<(String, String)> {
        let mut env = vec![
            ("HOME", home.display().to_string()),
            (
                "XDG_CONFIG_HOME",
                home.join(".config").display().to_string(),
            ),
            (
                "XDG_DATA_HOME",
                home.join(".local/share").display().to_string(),
            ),
            ("XDG_CACHE_HOME", home.join(".cache").display().to_string()),
            (
                "XDG_STATE_HOME",
                home.join(".local/state").display().to_string(),
            ),
            // A closed port: anything that tries to leave the machine fails at once.
            ("HTTPS_PROXY", "http://127.0.0.1:9".into()),
            ("HTTP_PROXY", "http://127.0.0.1:9".into()),
            ("https_proxy", "http://127.0.0.1:9".into()),
            ("http_proxy", "http://127.0.0.1:9".into()),
            ("NO_PROXY", "127.0.0.1,localhost".into()),
            ("no_proxy", "127.0.0.1,localhost".into()),
        ];
        let write = |file: PathBuf, text: String| {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        match self {
            Agent::Qwen => {
                let qwen = home.join(".qwen");
                write(
                    qwen.join("settings.json"),
                    json!({"security": {"auth": {"selectedType": "openai"}},
                        "privacy": {"usageStatisticsEnabled": false},
                        "telemetry": {"enabled": false},
                        "general": {"enableAutoUpdate": false}})
                    .to_string(),
                );
                env.extend([
                    ("QWEN_HOME", qwen.display().to_string()),
                    ("OPENAI_API_KEY", "dummy".into()),
                    ("OPENAI_BASE_URL", model.base_url()),
                    ("OPENAI_MODEL", "mock".into()),
                    ("QWEN_USAGE_STATISTICS_ENABLED", "0".into()),
                ]);
            }
            Agent::ClaudeCodeAcp => env.extend([
                (
                    "ANTHROPIC_BASE_URL",
                    model.base_url().trim_end_matches("/v1").to_string(),
                ),
                ("ANTHROPIC_API_KEY", "dummy".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("DISABLE_TELEMETRY", "1".into()),
                // As root, Claude Code refuses its own permission bypass without it.
                ("IS_SANDBOX", "1".into()),
            ]),
            Agent::OpenCode => {
                // Its model, and `ask` for the shell and edits (opencode's default is allow).
                write(
                    home.join(".config/opencode/opencode.json"),
                    json!({"autoupdate": false, "share": "disabled",
                        "model": "mock/mock", "small_model": "mock/mock",
                        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                            "options": {"baseURL": model.base_url(), "apiKey": "dummy"},
                            "models": {"mock": {"name": "mock", "tool_call": true}}}},
                        "permission": {"bash": "ask", "edit": "ask"}})
                    .to_string(),
                );
                env.extend(
                    [
                        "OPENCODE_DISABLE_MODELS_FETCH",
                        "OPENCODE_DISABLE_AUTOUPDATE",
                        "OPENCODE_DISABLE_LSP_DOWNLOAD",
                        "OPENCODE_DISABLE_SHARE",
                        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
                        "OPENCODE_DISABLE_CLAUDE_CODE",
                        "OPENCODE_DISABLE_EXTERNAL_SKILLS",
                    ]
                    .map(|name| (name, "1".to_string())),
                );
            }
            Agent::Gemini => {
                write(
                    home.join(".gemini/settings.json"),
                    json!({"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
                        "privacy": {"usageStatisticsEnabled": false},
                        "telemetry": {"enabled": false},
                        "general": {"disableAutoUpdate": true, "enableAutoUpdate": false}})
                    .to_string(),
                );
                env.extend([
                    ("GEMINI_API_KEY", "dummy".into()),
                    ("GOOGLE_GEMINI_BASE_URL", model.gemini_base_url()),
                    ("GEMINI_MODEL", "gemini-2.5-flash".into()),
                    ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
                ]);
            }
            Agent::CodexAcp => {
                let codex = home.join(".codex");
                // Asking for everything (`untrusted`) in a read-only sandbox: codex-acp asks only
                // for what its sandbox would block.
                write(
                    codex.join("config.toml"),
                    format!(
                        "model = \"mock-model\"\nmodel_provider = \"mock\"\napproval_policy = \"untrusted\"\nsandbox_mode = \"read-only\"\n[analytics]\nenabled = false\n[features]\nplugins = false\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
                        model.base_url()
                    ),
                );
                env.extend([
                    ("CODEX_HOME", codex.display().to_string()),
                    ("MOCK_API_KEY", "dummy".into()),
                ]);
            }
            Agent::Copilot => env.extend([
                // BYOK: no GitHub login, the model on 127.0.0.1.
                ("COPILOT_HOME", home.join(".copilot").display().to_string()),
                ("COPILOT_PROVIDER_BASE_URL", model.base_url()),
                ("COPILOT_PROVIDER_API_KEY", "dummy".into()),
                ("COPILOT_PROVIDER_TYPE", "openai".into()),
                ("COPILOT_MODEL", "gpt-4.1".into()),
            ]),
        }
        env.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

/// One agent's world: its HOME, the chat's folder, the model, Airlock's data directory.
struct World {
    agent: Agent,
    home: tempfile::TempDir,
    project: PathBuf,
    _project_dir: tempfile::TempDir,
    data: tempfile::TempDir,
    _model: ScriptedModel,
    engine: Option<Engine>,
    /// The agent's process group, once seen.
    group: std::cell::Cell<Option<u32>>,
}

const SESSION: &str = "hosted";

impl World {
    async fn new(agent: Agent) -> Self {
        let bin_dir = agent.bin_dir();
        let model = ScriptedModel::start_with(
            vec![],
            Fallback::Smart {
                call: agent.shell_call(),
            },
        )
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let project_dir = tempfile::tempdir().unwrap();
        let project = project_dir.path().canonicalize().unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut world = Self {
            agent,
            home,
            project,
            _project_dir: project_dir,
            data,
            _model: model,
            engine: None,
            group: std::cell::Cell::new(None),
        };
        world.start_engine();
        world.add_preset(&bin_dir);
        world
    }

    /// `airlock agents add NAME`, the preset, with the pinned agents first on PATH: the test
    /// runs the command (and the flags that make it ask) a person gets.
    fn add_preset(&self, bin_dir: &Path) {
        let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let out = std::process::Command::new(common::BIN)
            .arg("--data-dir")
            .arg(self.data.path())
            .args(["agents", "add", self.agent.name()])
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "agents add {}: {}",
            self.agent.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn start_engine(&mut self) {
        let env = self.agent.env(self.home.path(), &self._model);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.engine = Some(Engine::start_with_env(self.data.path(), &env));
    }

    fn airlock(&self, args: &[&str]) -> std::process::Output {
        airlock(self.data.path(), args)
    }

    fn ok(&self, args: &[&str]) -> String {
        ok(self.data.path(), args)
    }

    /// Starts the chat with the agent, returning at once.
    fn chat(&self) {
        self.ok(&[
            "chat",
            "--agent",
            self.agent.name(),
            "--session",
            SESSION,
            "--folder",
            self.project.to_str().unwrap(),
            "--no-wait",
            "Create the file f.txt containing hi, using the shell.",
        ]);
    }

    fn inbox(&self) -> Vec<Value> {
        serde_json::from_str(&self.ok(&["inbox", "--json"])).unwrap()
    }

    /// The one item the agent's permission request became.
    fn waiting_item(&self) -> Value {
        let started = std::time::Instant::now();
        let items = loop {
            let items = self.inbox();
            if !items.is_empty() {
                break items;
            }
            // An agent that starts slowly on this box (opencode: ~13 s to its session).
            assert!(
                started.elapsed() < std::time::Duration::from_secs(120),
                "no permission request of {} in the inbox; the chat: {}; the model was asked {} times; f.txt: {:?}",
                self.agent.name(),
                self.transcript(),
                self._model.requests().len(),
                self.file()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(items.len(), 1, "{items:#?}");
        let item = items[0].clone();
        assert_eq!(item["server"], self.agent.name(), "{item:#}");
        assert_eq!(item["tool"], self.agent.tool(), "{item:#}");
        assert_eq!(
            item["args"].pointer(self.agent.command_pointer()),
            Some(&json!(COMMAND)),
            "{item:#}"
        );
        item
    }

    /// Waits for the turn to end: the command's output and whether it succeeded.
    fn wait(&self) -> (bool, String) {
        let out = self.airlock(&["wait", "--session", SESSION]);
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    fn transcript(&self) -> String {
        self.ok(&["transcript", "--session", SESSION, "--json"])
    }

    fn file(&self) -> Option<String> {
        std::fs::read_to_string(self.project.join("f.txt")).ok()
    }

    /// The processes of the agent: working in the chat's folder, or in the agent's process
    /// group (once seen), whatever folder they moved to.
    fn processes(&self) -> Vec<u32> {
        let mut found = processes_in(&self.project);
        if let Some(group) = self.group.get() {
            found.extend(
                all_processes().filter(|pid| stat(*pid).is_some_and(|(_, pgrp)| pgrp == group)),
            );
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The process Airlock started for the agent (the leader of its group; an npm launcher for
    /// most agents, with the agent itself its child).
    fn agent_process(&self) -> u32 {
        let engine = self.engine.as_ref().unwrap().pid();
        let leader = eventually("the agent's process", || {
            processes_in(&self.project)
                .into_iter()
                .find(|pid| stat(*pid).is_some_and(|(ppid, _)| ppid == engine))
        });
        self.group.set(Some(leader));
        leader
    }

    /// Stops Airlock (SIGTERM, as a person quitting) and checks nothing of the agent is left.
    fn stop_and_expect_no_orphans(&mut self) {
        drop(self.engine.take());
        eventually("no process left in the agent's folder", || {
            self.processes().is_empty().then_some(())
        });
    }
}

impl Drop for World {
    fn drop(&mut self) {
        drop(self.engine.take());
        for pid in self.processes() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

fn all_processes() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
}

/// A process's parent and process group (`/proc/PID/stat`), while it lives.
fn stat(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "PID (COMM) STATE PPID PGRP …": COMM may hold spaces and parentheses.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(1);
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    // A zombie is gone already; only its parent has yet to reap it.
    (!stat.rsplit_once(')')?.1.trim_start().starts_with('Z')).then_some((ppid, pgrp))
}

fn processes_in(folder: &Path) -> Vec<u32> {
    all_processes()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == folder))
        .collect()
}

async fn allowed_by_a_rule_runs_without_asking(agent: Agent) {
    let mut world = World::new(agent).await;
    let target = format!("{}/{}", agent.name(), agent.tool());
    world.ok(&[
        "rules",
        "add",
        &target,
        agent.command_pointer(),
        COMMAND,
        "allow",
    ]);
    world.chat();
    let (done, said) = world.wait();
    assert!(done, "{said}");
    assert_eq!(
        world.file().as_deref(),
        Some("hi\n"),
        "{}",
        world.transcript()
    );
    assert!(world.inbox().is_empty());
    let audit = world.ok(&["audit", "--json"]);
    assert!(audit.contains("agent_allowed"), "{audit}");
    world.stop_and_expect_no_orphans();
}

async fn asked_and_approved_runs(agent: Agent) {
    let mut world = World::new(agent).await;
    world.chat();
    let item = world.waiting_item();
    assert_eq!(world.file(), None, "nothing runs before the decision");
    assert!(
        item["why"].as_str().unwrap_or_default().contains("asks:"),
        "the agent's own words for the call: {item:#}"
    );
    world.ok(&["approve", item["approval_id"].as_str().unwrap()]);
    let (done, said) = world.wait();
    assert!(done, "{said}");
    assert_eq!(
        world.file().as_deref(),
        Some("hi\n"),
        "{}",
        world.transcript()
    );
    world.stop_and_expect_no_orphans();
}

async fn denied_runs_nothing_and_says_why(agent: Agent) {
    let mut world = World::new(agent).await;
    world.chat();
    let item = world.waiting_item();
    world.ok(&[
        "deny",
        item["approval_id"].as_str().unwrap(),
        "--reason",
        "not in this folder",
    ]);
    let _ = world.wait();
    assert_eq!(world.file(), None);
    let transcript = world.transcript();
    assert!(transcript.contains("not in this folder"), "{transcript}");
    let audit = world.ok(&["audit", "--json"]);
    assert!(audit.contains("not in this folder"), "{audit}");
    world.stop_and_expect_no_orphans();
}

async fn cancelled_while_waiting_runs_nothing(agent: Agent) {
    let mut world = World::new(agent).await;
    world.chat();
    let item = world.waiting_item();
    world.agent_process();
    world.ok(&["cancel", "--session", SESSION]);
    let (done, said) = world.wait();
    assert!(!done, "a cancelled turn: {said}");
    // The turn ended on Airlock's `cancelled` answer (Gemini ignores `session/cancel` while its
    // request is open), not on Airlock stopping an agent that never ended it.
    assert!(!said.contains("did not stop"), "{said}");
    assert!(world.inbox().is_empty(), "the item left the inbox");
    let refused = world.airlock(&["approve", item["approval_id"].as_str().unwrap()]);
    assert!(
        !refused.status.success(),
        "a cancelled call cannot be approved"
    );
    assert_eq!(world.file(), None);
    assert!(
        !world.processes().is_empty(),
        "the agent waits for the next message"
    );
    world.stop_and_expect_no_orphans();
    assert_eq!(world.file(), None);
}

async fn killed_while_waiting_withdraws_its_item(agent: Agent) {
    let mut world = World::new(agent).await;
    world.chat();
    world.waiting_item();
    // Only the process Airlock started (for most agents an npm launcher: codex-acp's leaves its
    // native agent running when killed alone); Airlock ends the rest of its group.
    let agent = world.agent_process();
    std::process::Command::new("kill")
        .args(["-9", &agent.to_string()])
        .status()
        .unwrap();
    eventually("the killed agent's item withdrawn", || {
        world.inbox().is_empty().then_some(())
    });
    eventually("nothing left of the killed agent", || {
        world.processes().is_empty().then_some(())
    });
    let (done, said) = world.wait();
    assert!(!done, "{said}");
    let transcript = world.transcript();
    assert!(transcript.contains("ended"), "{transcript}");
    assert_eq!(world.file(), None);
    world.stop_and_expect_no_orphans();
}

async fn airlock_killed_while_waiting_ends_the_chat(agent: Agent) {
    let mut world = World::new(agent).await;
    world.chat();
    let item = world.waiting_item();
    world.agent_process();
    world.engine.take().unwrap().kill9();
    world.start_engine();
    // At once after the restart: no agent can come back for a hosted chat's item.
    let items = world.inbox();
    assert!(items.is_empty(), "{items:#?}");
    let refused = world.airlock(&["approve", item["approval_id"].as_str().unwrap()]);
    assert!(!refused.status.success());
    let transcript = world.transcript();
    assert!(transcript.contains("Airlock restarted"), "{transcript}");
    eventually("the crashed engine's agent gone", || {
        world.processes().is_empty().then_some(())
    });
    assert_eq!(world.file(), None);
    world.stop_and_expect_no_orphans();
}

/// One module per agent (`acp::gemini::asked_and_approved_runs`), a test per scenario in it.
macro_rules! scenarios_for {
    ($module:ident, $agent:expr, [$($scenario:ident),* $(,)?]) => {
        mod $module {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread")]
            async fn $scenario() {
                super::$scenario($agent).await;
            })*
        }
    };
}

macro_rules! each_agent {
    ($scenarios:tt; $($module:ident => $agent:expr),* $(,)?) => {
        $(scenarios_for!($module, $agent, $scenarios);)*
    };
}

each_agent!(
    [
        allowed_by_a_rule_runs_without_asking,
        asked_and_approved_runs,
        denied_runs_nothing_and_says_why,
        cancelled_while_waiting_runs_nothing,
        killed_while_waiting_withdraws_its_item,
        airlock_killed_while_waiting_ends_the_chat,
    ];
    qwen => Agent::Qwen,
    claude_code_acp => Agent::ClaudeCodeAcp,
    opencode => Agent::OpenCode,
    gemini => Agent::Gemini,
    codex_acp => Agent::CodexAcp,
    copilot => Agent::Copilot,
);

/// A stand-in agent (a shell script) whose output is not what ACP allows.
fn bad_agent(dir: &Path, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn an_agent_that_sends_garbage_or_floods_is_stopped_with_a_clear_error() {
    let data = tempfile::tempdir().unwrap();
    let scripts = tempfile::tempdir().unwrap();
    let _engine = Engine::start(data.path());
    let cases = [
        (
            "garbage",
            "read line; echo 'Welcome to my agent!'; sleep 60",
            "not ACP",
        ),
        (
            "flood",
            "read line; yes '{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}' | head -n 1000000; sleep 60",
            "messages in a second",
        ),
    ];
    for (name, script, says) in cases {
        let folder = tempfile::tempdir().unwrap();
        let folder_path = folder.path().canonicalize().unwrap();
        let agent = bad_agent(scripts.path(), name, script);
        ok(data.path(), &["agents", "add", name, "--acp", "--", &agent]);
        let out = airlock(
            data.path(),
            &[
                "chat",
                "--agent",
                name,
                "--session",
                name,
                "--folder",
                folder_path.to_str().unwrap(),
                "hello",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        eventually(&format!("the {name} agent stopped"), || {
            processes_in(&folder_path).is_empty().then_some(())
        });
    }
}

/// The chat of a hosted qwen-code as the person reads it (`airlock transcript`): while its call
/// waits, the call is a card of the agent's message and the inbox item is that card's (the
/// window shows the prompt on it); once approved and run, the card says it succeeded, with what
/// the agent reported, and the agent's answer follows in the same chat.
#[tokio::test(flavor = "multi_thread")]
async fn a_hosted_qwens_chat_holds_its_text_and_a_card_per_tool_call() {
    let mut world = World::new(Agent::Qwen).await;
    world.chat();
    let item = world.waiting_item();
    let cards = |transcript: &str| -> Vec<Value> {
        let messages: Vec<Value> = serde_json::from_str(transcript).unwrap();
        messages
            .iter()
            .flat_map(|m| m["calls"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    let waiting = world.transcript();
    let card = cards(&waiting)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no card of the agent's call: {waiting}"));
    assert_eq!(card["id"], item["tool_call_id"], "{waiting}\n{item:#}");
    assert_eq!(card["server"], "qwen", "{card:#}");
    assert_eq!(card["tool"], "run_shell_command", "{card:#}");
    assert_eq!(card["args"]["command"], COMMAND, "{card:#}");
    assert_eq!(card["state"], "pending", "{card:#}");
    world.ok(&["approve", item["approval_id"].as_str().unwrap()]);
    let (done, said) = world.wait();
    assert!(done, "{said}");
    assert_eq!(world.file().as_deref(), Some("hi\n"));
    let transcript = world.transcript();
    let cards = cards(&transcript);
    assert_eq!(cards.len(), 1, "{transcript}");
    assert_eq!(cards[0]["state"], "succeeded", "{transcript}");
    assert!(!cards[0]["result"].is_null(), "{transcript}");
    // The scripted model's answer once it read the tool's result, as the agent streamed it.
    let messages: Vec<Value> = serde_json::from_str(&transcript).unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{transcript}");
    assert!(
        last["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Done. The tool said:"),
        "{transcript}"
    );
    world.stop_and_expect_no_orphans();
}

/// No ACP answer carries a reason, so after the turn Airlock sends it to the hosted qwen-code
/// as the next message of the same ACP session: the model's next request carries it.
#[tokio::test(flavor = "multi_thread")]
async fn a_hosted_qwens_model_reads_the_reason_of_a_denial() {
    const REASON: &str = "not in this folder, write it under /tmp";
    let mut world = World::new(Agent::Qwen).await;
    world.chat();
    let item = world.waiting_item();
    let carries = |request: &Value| request.to_string().contains(REASON);
    assert!(!world._model.requests().iter().any(carries));
    world.ok(&[
        "deny",
        item["approval_id"].as_str().unwrap(),
        "--reason",
        REASON,
    ]);
    let (_, said) = world.wait();
    let requests = world._model.requests();
    assert!(
        requests.iter().any(carries),
        "no model request carries the reason ({said}): {requests:#?}"
    );
    assert_eq!(world.file(), None);
    let transcript = world.transcript();
    assert!(
        transcript
            .contains("Airlock told qwen: The person denied your tool call run_shell_command"),
        "{transcript}"
    );
    world.stop_and_expect_no_orphans();
}

/// What a hosted qwen-code's model thinks (its `reasoning_content`, which qwen-code sends as
/// `agent_thought_chunk`s) is kept in the chat beside the message it came before, never as what
/// the agent said, nor as a tool call.
#[tokio::test(flavor = "multi_thread")]
async fn a_hosted_qwens_thinking_is_kept_apart_from_its_answer() {
    const THOUGHT: &str = "The tool ran; I should report what it said.";
    let mut world = World::new(Agent::Qwen).await;
    world._model.think(THOUGHT);
    world.chat();
    let item = world.waiting_item();
    world.ok(&["approve", item["approval_id"].as_str().unwrap()]);
    let (done, said) = world.wait();
    assert!(done, "{said}");
    assert!(
        !said.contains(THOUGHT),
        "the thinking as the answer: {said}"
    );
    let transcript = world.transcript();
    let messages: Vec<Value> = serde_json::from_str(&transcript).unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["thought"].as_str().is_some_and(|t| t.contains(THOUGHT))),
        "no thinking kept: {transcript}"
    );
    assert!(
        !messages
            .iter()
            .any(|m| m["content"].as_str().unwrap_or_default().contains(THOUGHT)),
        "the thinking kept as what qwen said: {transcript}"
    );
    let cards: usize = messages
        .iter()
        .map(|m| m["calls"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(cards, 1, "{transcript}");
    let last = messages.last().unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Done. The tool said:"),
        "{transcript}"
    );
    let printed = world.ok(&["transcript", "--session", SESSION]);
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("assistant (thinking): ") && line.contains(THOUGHT)),
        "{printed}"
    );
    world.stop_and_expect_no_orphans();
}
