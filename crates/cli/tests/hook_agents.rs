//! The hook dialects of GitHub Copilot CLI, Qwen Code and Gemini CLI with the real agents
//! (`tests/agents`, pinned; installed by scripts/setup.sh), run headless and offline against
//! the scripted model servers (OpenAI chat for Copilot's BYOK provider and Qwen, the Gemini API
//! for Gemini), each configured only through `airlock connect` in a temporary HOME. Per agent:
//! approve → the command ran; deny with a reason → nothing ran and the model's next request
//! holds the reason; edit → the edited command ran (Copilot, Gemini; Qwen edits only where it
//! would ask: headless, with its stream-json input); no engine → nothing ran (fail closed) and the model
//! was told why. Copilot's and Qwen's HTTP hooks: answered by Airlock they work, unanswered
//! they let the call run (why `connect --http` refuses them). And Claude Code's hook with
//! `onFailure: "block"`: a hook that cannot even start blocks the call instead of handing it to
//! Claude Code's own permission flow.
//!
//! Every agent is kept on 127.0.0.1: its model's base URL is the scripted server, HOME is a
//! temporary folder, and HTTPS_PROXY / HTTP_PROXY point at a closed port (NO_PROXY for
//! 127.0.0.1), so anything aimed at a vendor's host fails at once instead of leaving the box.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): `connect` writes the hook command for /bin/sh and the agents
// start through npm's POSIX shims.
#![cfg(unix)]

mod common;

use airlock_testkit::{Fallback, Reply, ScriptedCall, ScriptedModel};
use common::{AgentRun, BIN, ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Agent {
    Copilot,
    /// Qwen Code in yolo mode: nothing of Qwen's asks, PreToolUse (every call) is the gate.
    Qwen,
    /// Qwen Code where it asks (`--approval-mode default`), headless through its stream-json
    /// input (plain `-p` declines before any hook): PermissionRequest is the gate, with edits.
    QwenAsking,
    Gemini,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Copilot => "copilot",
            Agent::Qwen | Agent::QwenAsking => "qwen",
            Agent::Gemini => "gemini",
        }
    }

    fn bin(self) -> PathBuf {
        common::installed_agent(match self {
            Agent::Copilot => "copilot",
            Agent::Qwen | Agent::QwenAsking => "qwen",
            Agent::Gemini => "gemini",
        })
    }

    /// The agent's shell tool as its hook names it.
    fn shell_tool(self) -> &'static str {
        match self {
            Agent::Copilot => "bash",
            Agent::Qwen | Agent::QwenAsking | Agent::Gemini => "run_shell_command",
        }
    }

    /// The model's call of that tool running `command`.
    fn shell_call(self, command: &str) -> ScriptedCall {
        let args = match self {
            Agent::Copilot => json!({
                "command": command, "description": "Run it", "mode": "sync", "initial_wait": 30,
            }),
            Agent::Qwen | Agent::QwenAsking | Agent::Gemini => {
                json!({"command": command, "description": "Run it"})
            }
        };
        ScriptedCall::new("call_1", self.shell_tool(), args)
    }
}

/// A port nothing listens on: the proxy every vendor host is sent to.
const CLOSED_PROXY: &str = "http://127.0.0.1:9";

/// One agent's world: a temporary HOME (its config), a project folder, the model (smart: the
/// agents make side calls a positional script cannot foresee), Airlock's data directory.
struct World {
    agent: Agent,
    bin: PathBuf,
    home: tempfile::TempDir,
    project: tempfile::TempDir,
    data: tempfile::TempDir,
    model: ScriptedModel,
}

impl World {
    async fn new(agent: Agent, command: &str) -> Self {
        let bin = agent.bin();
        let model = ScriptedModel::start_with(
            Vec::new(),
            Fallback::Smart {
                call: agent.shell_call(command),
            },
        )
        .await
        .unwrap();
        let world = Self {
            agent,
            bin,
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            model,
        };
        world.write_agent_settings();
        let shown = world.airlock(&["connect", agent.name(), "--timeout", "60"]);
        assert!(
            shown.contains("/airlock-hook --data-dir")
                && shown.contains(&format!(" {} --timeout 60", agent.name())),
            "{shown}"
        );
        world
    }

    /// The agent's own offline settings, before `connect` adds Airlock's hook to them.
    fn write_agent_settings(&self) {
        let home = self.home.path();
        let (file, settings) = match self.agent {
            Agent::Copilot => return,
            Agent::Qwen | Agent::QwenAsking => (
                home.join(".qwen/settings.json"),
                json!({
                    "security": {"auth": {"selectedType": "openai"}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"enableAutoUpdate": false},
                }),
            ),
            Agent::Gemini => (
                home.join(".gemini/settings.json"),
                json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"disableAutoUpdate": true, "enableAutoUpdate": false},
                }),
            ),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, settings.to_string()).unwrap();
    }

    /// `airlock --data-dir D ARGS` with this world's HOME.
    fn airlock(&self, args: &[&str]) -> String {
        let out = Command::new(BIN)
            .arg("--data-dir")
            .arg(self.data.path())
            .args(args)
            .env("HOME", self.home.path())
            .env("COPILOT_HOME", self.home.path().join(".copilot"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "airlock {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Airlock's hook replaced by an HTTP hook to the engine's hook route for this agent, as
    /// `connect --http` writes Claude Code's (the agent's own token, the timeout in the URL and
    /// in the agent's own key), with no fail-closed switch: neither agent has one.
    fn use_http_hook(&self) {
        let _engine = self.engine();
        let issued = self.airlock(&["agents", "token", self.agent.name()]);
        let token = issued.lines().last().unwrap().trim();
        let url = issued
            .lines()
            .find_map(|line| line.strip_prefix("Its HTTP hook posts to "))
            .unwrap_or_else(|| panic!("no hook URL: {issued}"))
            .trim();
        let mut handler = json!({
            "type": "http",
            "url": format!("{url}?timeout=60"),
            "headers": {"Authorization": format!("Bearer {token}")},
        });
        let home = self.home.path();
        match self.agent {
            Agent::Copilot => {
                handler["timeoutSec"] = json!(60);
                let hooks = json!({"version": 1, "hooks": {"preToolUse": [handler]}});
                std::fs::write(home.join(".copilot/hooks/airlock.json"), hooks.to_string())
                    .unwrap();
            }
            Agent::Qwen => {
                // Qwen's HTTP hooks take seconds (its command hooks, milliseconds).
                handler["timeout"] = json!(60);
                let path = home.join(".qwen/settings.json");
                let mut settings: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                for event in ["PreToolUse", "PermissionRequest"] {
                    settings["hooks"][event] = json!([{"matcher": "*", "hooks": [handler]}]);
                }
                std::fs::write(&path, settings.to_string()).unwrap();
            }
            other => panic!("{other:?}: no HTTP hook here"),
        }
    }

    /// Starts the agent on a prompt, headless, with more arguments and environment variables
    /// for it; it runs until its model says it is done.
    fn start_with(&self, extra: &[&str], env: &[(&str, &str)]) -> Child {
        let home = self.home.path();
        let mut command = Command::new(&self.bin);
        command
            .current_dir(self.project.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("HTTPS_PROXY", CLOSED_PROXY)
            .env("HTTP_PROXY", CLOSED_PROXY)
            .env("https_proxy", CLOSED_PROXY)
            .env("http_proxy", CLOSED_PROXY)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let prompt = "Run the command";
        match self.agent {
            Agent::Copilot => {
                command
                    .env("COPILOT_HOME", home.join(".copilot"))
                    .env("COPILOT_PROVIDER_BASE_URL", self.model.base_url())
                    .env("COPILOT_PROVIDER_API_KEY", "dummy")
                    .env("COPILOT_PROVIDER_TYPE", "openai")
                    .env("COPILOT_MODEL", "gpt-4.1")
                    .args(["-p", prompt]);
            }
            Agent::Qwen | Agent::QwenAsking => {
                command
                    .env("QWEN_HOME", home.join(".qwen"))
                    .env("OPENAI_API_KEY", "dummy")
                    .env("OPENAI_BASE_URL", self.model.base_url())
                    .env("OPENAI_MODEL", "mock")
                    .env("QWEN_USAGE_STATISTICS_ENABLED", "0")
                    .args(["-p", prompt]);
                if self.agent == Agent::Qwen {
                    // Headless in its default mode Qwen declines the shell before any hook
                    // (a deny rule): in yolo mode nothing of Qwen's asks and PreToolUse, which
                    // fires for every call, is the gate.
                    command.args(["--approval-mode", "yolo"]);
                } else {
                    // With stream-json input Qwen asks (its PermissionRequest hook first, then
                    // its host over stdout) instead of declining; it runs until its input ends
                    // (`finish` closes it once Qwen reported its result).
                    command
                        .args(["--approval-mode", "default"])
                        .args(["--input-format", "stream-json"])
                        .args(["--output-format", "stream-json"])
                        .stdin(Stdio::piped());
                }
            }
            Agent::Gemini => {
                command
                    .env("GEMINI_API_KEY", "dummy")
                    .env("GOOGLE_GEMINI_BASE_URL", self.model.gemini_base_url())
                    .env("GEMINI_MODEL", "gemini-2.5-flash")
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    .args(["-p", prompt]);
            }
        }
        command.args(extra).envs(env.iter().copied());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command.spawn().unwrap()
    }
}

fn check_item(world: &World, item: &Value, command: &str) {
    assert_eq!(item["kind"], "agent_tool_call", "{item}");
    assert_eq!(item["agent"], world.agent.name(), "{item}");
    assert_eq!(item["tool"], world.agent.shell_tool(), "{item}");
    assert_eq!(item["args"]["command"], command, "{item}");
}

impl AgentRun for World {
    fn data_dir(&self) -> &Path {
        self.data.path()
    }

    fn project(&self) -> &Path {
        self.project.path()
    }

    fn model(&self) -> &ScriptedModel {
        &self.model
    }

    /// Starts the agent on a prompt, headless; it runs until its model says it is done. (With
    /// Copilot's variable for an HTTP hook on 127.0.0.1, `use_http_hook`: its command hook does
    /// not mind it.)
    fn start(&self) -> Child {
        self.start_with(&[], &[COPILOT_ALLOW_LOCALHOST])
    }

    /// Runs the agent to its end (bounded, so a hung agent fails the test). An agent reading
    /// stream-json input has its input closed once it printed its result.
    fn finish(&self, mut child: Child) -> String {
        let started = Instant::now();
        let mut input = child.stdin.take();
        let printed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let reader = input.is_some().then(|| {
            let stdout = child.stdout.take().unwrap();
            let printed = printed.clone();
            std::thread::spawn(move || {
                for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
                    let Ok(line) = line else { break };
                    let mut printed = printed.lock().unwrap();
                    printed.push_str(&line);
                    printed.push('\n');
                }
            })
        });
        loop {
            if input.is_some() && printed.lock().unwrap().contains("\"type\":\"result\"") {
                input = None;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if started.elapsed() > Duration::from_secs(180) {
                let _ = Command::new("kill")
                    .args(["-9", "--", &format!("-{}", child.id())])
                    .status();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "{} did not finish: {}{}",
                    self.agent.name(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        if let Some(reader) = reader {
            reader.join().unwrap();
        }
        format!(
            "{}{}\n{}",
            printed.lock().unwrap(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }
}

async fn approve_runs_the_call(agent: Agent) {
    let world = World::new(agent, "touch APPROVED").await;
    let _engine = world.engine();
    let child = world.start();
    let item = world.waiting_item();
    check_item(&world, &item, "touch APPROVED");
    assert!(!world.ran("APPROVED"), "it ran before the approval");
    ok(
        world.data.path(),
        &["approve", item["approval_id"].as_str().unwrap()],
    );
    let out = world.finish(child);
    assert!(
        world.ran("APPROVED"),
        "the approved command did not run: {out}"
    );
    let items: Vec<Value> =
        serde_json::from_str(&ok(world.data.path(), &["inbox", "--json"])).unwrap();
    assert!(items.is_empty(), "asked twice about one call: {items:?}");
}

async fn deny_reason_reaches_the_model(agent: Agent) {
    common::deny_reason_reaches_the_model(&World::new(agent, "touch DENIED").await);
}

async fn edit_runs_the_edited_command(agent: Agent) {
    common::edit_runs_the_edited_command(&World::new(agent, "touch PROPOSED").await);
}

async fn no_engine_fails_closed(agent: Agent) {
    let world = World::new(agent, "touch FALLBACK").await;
    let started = Instant::now();
    let out = world.finish(world.start());
    assert!(
        !world.ran("FALLBACK"),
        "with no engine the command ran: {out}"
    );
    assert!(
        world.model_saw("Airlock is not running"),
        "the model was not told why: {out}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the hook waited for an engine that is not there"
    );
}

/// What lets Copilot CLI post its HTTP `preToolUse` hook to 127.0.0.1 (else it takes `https://`
/// only): a variable of its environment, which no file of Copilot's can set.
const COPILOT_ALLOW_LOCALHOST: (&str, &str) = ("COPILOT_HOOK_ALLOW_LOCALHOST", "1");

/// Why `connect copilot --http` is refused (README; Copilot's `no_http_hook`). With
/// `COPILOT_HOOK_ALLOW_LOCALHOST=1` Copilot's HTTP hook works with Airlock — a denial's reason
/// reaches the model — and fails closed: nobody answering blocks the call, even under
/// `--allow-all-tools`. Without that variable Copilot skips the hook (it only logs why) and
/// under `--allow-all-tools` runs the call unasked: what a config Airlock wrote would do
/// wherever the variable is not set. Should a newer pinned version stop skipping it, the last
/// check fails: `connect copilot --http` can then be offered.
#[tokio::test(flavor = "multi_thread")]
async fn copilots_http_hook_is_skipped_without_its_variable() {
    // The model's one call touches DENIED, whatever is decided.
    let world = World::new(Agent::Copilot, "touch DENIED").await;
    world.use_http_hook();
    common::deny_reason_reaches_the_model(&world);

    let out = world.finish(world.start_with(&["--allow-all-tools"], &[COPILOT_ALLOW_LOCALHOST]));
    assert!(
        !world.ran("DENIED"),
        "with no engine Copilot's HTTP hook let the call run: {out}"
    );
    let out = world.finish(world.start_with(&["--allow-all-tools"], &[]));
    assert!(
        world.ran("DENIED"),
        "Copilot asked an http:// hook without COPILOT_HOOK_ALLOW_LOCALHOST: `connect copilot --http` may be offered now: {out}"
    );
}

/// Why `connect qwen --http` is refused (README; Qwen's `no_http_hook`). Answered by Airlock,
/// Qwen's HTTP hook works: a denial's reason reaches the model. But with Airlock stopped
/// (nothing listens at the hook's URL) Qwen takes the hook's failure as a non-blocking error
/// and, in yolo mode, runs the call: no setting of Qwen's blocks instead. Should a newer pinned
/// version block, the last check fails: `connect qwen --http` can then be offered.
#[tokio::test(flavor = "multi_thread")]
async fn qwens_unanswered_http_hook_lets_the_call_run() {
    // The model's one call touches DENIED, whatever is decided.
    let world = World::new(Agent::Qwen, "touch DENIED").await;
    world.use_http_hook();
    common::deny_reason_reaches_the_model(&world);

    let out = world.finish(world.start());
    assert!(
        world.ran("DENIED"),
        "Qwen blocked a call its HTTP hook could not ask about: `connect qwen --http` may be offered now: {out}"
    );
}

macro_rules! for_agents {
    ($($agent:ident: [$($scenario:ident),+ $(,)?]),+ $(,)?) => {
        $(
            #[allow(non_snake_case)]
            mod $agent {
                use super::*;
                $(#[tokio::test(flavor = "multi_thread")]
                async fn $scenario() { super::$scenario(Agent::$agent).await })+
            }
        )+
    };
}

for_agents!(
    Copilot: [
        approve_runs_the_call,
        deny_reason_reaches_the_model,
        edit_runs_the_edited_command,
        no_engine_fails_closed,
    ],
    // Qwen's edit is made at PermissionRequest, which fires only where Qwen would ask: with
    // stream-json input headless (QwenAsking, see `start`).
    Qwen: [
        approve_runs_the_call,
        deny_reason_reaches_the_model,
        no_engine_fails_closed,
    ],
    QwenAsking: [
        approve_runs_the_call,
        deny_reason_reaches_the_model,
        edit_runs_the_edited_command,
    ],
    Gemini: [
        approve_runs_the_call,
        deny_reason_reaches_the_model,
        edit_runs_the_edited_command,
        no_engine_fails_closed,
    ],
);

/// Claude Code's hook is installed with `onFailure: "block"`: a hook that cannot answer at all
/// (here its command is gone: `airlock` moved away after `connect`) blocks the call, even one
/// Claude Code's own rules allow (`--allowedTools Bash`), which it would otherwise run.
#[tokio::test(flavor = "multi_thread")]
async fn claude_codes_hook_that_cannot_answer_blocks_the_call() {
    let claude = common::installed_agent("claude");
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "toolu_01",
            "Bash",
            json!({"command": "touch UNGATED", "description": "Run it"}),
        )]),
        Reply::Text("Done.".into()),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // An `airlock` of its own (no `airlock-hook` beside it: the hook is `airlock hook`), which
    // is then removed: the installed hook's command is not found.
    let bin = tempfile::tempdir().unwrap();
    let airlock = bin.path().join("airlock");
    std::fs::hard_link(BIN, &airlock)
        .or_else(|_| std::fs::copy(BIN, &airlock).map(|_| ()))
        .unwrap();
    let out = Command::new(&airlock)
        .arg("--data-dir")
        .arg(data.path())
        .args(["connect", "claude-code", "--timeout", "60"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let settings = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
    assert!(settings.contains("\"onFailure\": \"block\""), "{settings}");
    std::fs::remove_file(&airlock).unwrap();

    let child = Command::new(claude)
        .current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", format!("http://{}", model.addr()))
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args([
            "-p",
            "Run the command",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        model.requests().len() >= 2,
        "Claude Code never reported the call's outcome to the model: {text}"
    );
    assert!(
        !project.path().join("UNGATED").exists(),
        "a call whose hook could not answer ran: {text}"
    );
}
