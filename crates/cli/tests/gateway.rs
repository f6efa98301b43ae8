//! The agent gateway with the real coding agents (`tests/agents`, pinned; installed by
//! scripts/setup.sh), run headless and offline against the scripted model server, each configured
//! only through `airlock connect` in a temporary HOME. For Claude Code and Codex alike: approve →
//! the command ran; deny with a reason → the model reads it; edit → the edited command ran; a
//! rule allows → nothing asked; no engine → the fallback (and with `deny` nothing ran); the agent
//! killed while it waits → the item withdrawn; the engine restarted while it waits → the same
//! item, and the decision reaches the agent. Claude Code with its HTTP hook (`connect --http`):
//! approve → ran; deny with a reason → the model reads it; no engine → blocked, even where Claude
//! Code would run the call on its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Unix only (docs/PLATFORMS.md): `connect` writes the hook command for /bin/sh, the agents start
// through npm's POSIX shims, and each runs in its own process group to be killed with `kill`.
#![cfg(unix)]

mod common;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{AgentRun, BIN, Engine, eventually, ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Agent {
    ClaudeCode,
    Codex,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    fn bin(self) -> PathBuf {
        let bin = match self {
            Agent::ClaudeCode => "claude",
            Agent::Codex => "codex",
        };
        common::installed_agent(bin)
    }

    /// The model's reply that runs `command` in a shell.
    fn shell_call(self, command: &str) -> Reply {
        self.shell_call_with_id(command, "01")
    }

    /// The same with the tool-use id ending in `id` (a model backend may repeat one).
    fn shell_call_with_id(self, command: &str, id: &str) -> Reply {
        Reply::ToolCalls(vec![match self {
            Agent::ClaudeCode => ScriptedCall::new(
                format!("toolu_{id}"),
                "Bash",
                json!({"command": command, "description": "Run it"}),
            ),
            Agent::Codex => ScriptedCall::new(
                format!("call_{id}"),
                "exec_command",
                json!({"cmd": command}),
            ),
        }])
    }
}

/// One agent's world: a temporary HOME (its config), a project folder, the model, Airlock's data
/// directory.
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
        Self::scripted(
            agent,
            vec![agent.shell_call(command), Reply::Text("Done.".into())],
        )
        .await
    }

    /// The same with the model's whole script.
    async fn scripted(agent: Agent, replies: Vec<Reply>) -> Self {
        let world = Self::unconnected(agent, replies).await;
        world.connect();
        world
    }

    /// The agent's world before `airlock connect`.
    async fn unconnected(agent: Agent, replies: Vec<Reply>) -> Self {
        let bin = agent.bin();
        let model = ScriptedModel::start(replies).await.unwrap();
        let world = Self {
            agent,
            bin,
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            model,
        };
        if agent == Agent::Codex {
            let codex_home = world.home.path().join(".codex");
            std::fs::create_dir_all(&codex_home).unwrap();
            std::fs::write(
                codex_home.join("config.toml"),
                format!(
                    "model = \"mock-model\"\nmodel_provider = \"mock\"\n[analytics]\nenabled = false\n[features]\nplugins = false\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
                    world.model.base_url()
                ),
            )
            .unwrap();
        }
        world
    }

    /// `airlock connect` with the command hook, as a person would.
    fn connect(&self) {
        let (world, agent) = (self, self.agent);
        let shown = match agent {
            Agent::ClaudeCode => world.airlock(&["connect", agent.name(), "--timeout", "60"]),
            // Codex's trust of the hook: `connect` asks this Codex for the hook's hash.
            Agent::Codex => world.airlock(&[
                "connect",
                "codex",
                "--timeout",
                "60",
                "--codex",
                world.bin.to_str().unwrap(),
            ]),
        };
        // The hook's own small binary beside `airlock` is what the agent runs.
        assert!(
            shown.contains("/airlock-hook --data-dir")
                && shown.contains(&format!(" {} --timeout 60", agent.name())),
            "{shown}"
        );
    }

    /// `airlock --data-dir D ARGS` with this world's HOME.
    fn airlock(&self, args: &[&str]) -> String {
        let out = Command::new(BIN)
            .arg("--data-dir")
            .arg(self.data.path())
            .args(args)
            .env("HOME", self.home.path())
            .env("CODEX_HOME", self.home.path().join(".codex"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "airlock {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The same with more arguments for the agent.
    fn start_with(&self, extra: &[&str]) -> Child {
        let mut command = Command::new(&self.bin);
        command
            .current_dir(self.project.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match self.agent {
            Agent::ClaudeCode => {
                command
                    .env(
                        "ANTHROPIC_BASE_URL",
                        format!("http://{}", self.model.addr()),
                    )
                    .env("ANTHROPIC_API_KEY", "dummy")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .args(["-p", "Run the command", "--output-format", "json"]);
            }
            Agent::Codex => {
                command
                    .env("CODEX_HOME", self.home.path().join(".codex"))
                    .env("MOCK_API_KEY", "dummy")
                    .args([
                        "exec",
                        "--skip-git-repo-check",
                        // Codex's sandbox helper cannot live under /tmp (this test's
                        // CODEX_HOME); the gate is what is tested here, not the sandbox.
                        "-s",
                        "danger-full-access",
                        "-C",
                    ])
                    .arg(self.project.path())
                    .arg("Run the command");
            }
        }
        command.args(extra);
        // Its own process group, so the whole agent can be killed at once (Codex's npm
        // launcher is a node process in front of the native binary).
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command.spawn().unwrap()
    }

    /// Kills the agent as a person stopping it would: Claude Code's one process (its hook
    /// must notice its parent is gone), or Codex's launcher and native binary together (their
    /// process group; killing only the launcher leaves Codex running).
    fn kill(&self, mut child: Child) {
        match self.agent {
            Agent::ClaudeCode => child.kill().unwrap(),
            Agent::Codex => {
                Command::new("kill")
                    .args(["-9", "--", &format!("-{}", child.id())])
                    .status()
                    .unwrap();
            }
        }
        child.wait().unwrap();
    }

    /// Claude Code's hook (`airlock hook claude-code`) asking about `command` for another
    /// session, as its own process.
    fn hook_asking(&self, command: &str) -> Child {
        let mut hook = Command::new(BIN)
            .arg("--data-dir")
            .arg(self.data.path())
            .args(["hook", "claude-code", "--timeout", "120"])
            .env("HOME", self.home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let event = json!({
            "session_id": "another-session", "cwd": self.project.path(),
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": "toolu_other",
        });
        let mut stdin = hook.stdin.take().unwrap();
        std::io::Write::write_all(&mut stdin, event.to_string().as_bytes()).unwrap();
        drop(stdin);
        hook
    }

    fn audit_actions(&self) -> Vec<String> {
        // JSON Lines.
        ok(self.data.path(), &["audit", "--json"])
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter_map(|r| r["action"].as_str().map(str::to_string))
            .collect()
    }
}

fn check_item(world: &World, item: &Value, command: &str) {
    assert_eq!(item["kind"], "agent_tool_call", "{item}");
    assert_eq!(item["agent"], world.agent.name(), "{item}");
    assert_eq!(item["server"], world.agent.name(), "{item}");
    assert_eq!(item["tool"], "Bash", "{item}");
    assert_eq!(item["args"]["command"], command, "{item}");
    assert!(item["agent_session"].is_string(), "{item}");
    assert_eq!(
        Path::new(item["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        world.project.path().canonicalize().unwrap()
    );
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

    /// Starts the agent on a prompt; it runs until the model's script ends.
    fn start(&self) -> Child {
        self.start_with(&[])
    }

    /// Runs the agent to its end (bounded, so a hung agent fails the test).
    fn finish(&self, mut child: Child) -> String {
        let started = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if started.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                panic!("{} did not finish", self.agent.name());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        format!(
            "{}\n{}",
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
    // The session is named for a person by its folder and the first prompt (read by the hook
    // from the agent's transcript); its id stays its name, the key.
    let sessions: Value =
        serde_json::from_str(&ok(world.data.path(), &["sessions", "--json"])).unwrap();
    let session = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == item["session"])
        .unwrap_or_else(|| panic!("no session {}: {sessions}", item["session"]));
    let folder = world.project.path().file_name().unwrap().to_string_lossy();
    let with_prompt = format!("{folder}: Run the command");
    match world.agent {
        // Codex has written its prompt to the transcript before its first hook runs.
        Agent::Codex => assert_eq!(session["title"], with_prompt, "{session}"),
        // Claude Code writes its transcript behind a buffer: under load its first hook can run
        // before the prompt is on disk. The title is then the folder, and gains the prompt at
        // the first later call whose hook can read it (engine test
        // `an_agents_session_is_titled_by_its_folder_and_first_prompt`).
        Agent::ClaudeCode => assert!(
            session["title"] == with_prompt || session["title"] == folder.as_ref(),
            "{session}"
        ),
    }
    ok(
        world.data.path(),
        &["approve", item["approval_id"].as_str().unwrap()],
    );
    let out = world.finish(child);
    assert!(
        world.ran("APPROVED"),
        "the approved command did not run: {out}"
    );
}

async fn deny_reason_reaches_the_model(agent: Agent) {
    common::deny_reason_reaches_the_model(&World::new(agent, "touch DENIED").await);
}

async fn edit_runs_the_edited_command(agent: Agent) {
    common::edit_runs_the_edited_command(&World::new(agent, "touch PROPOSED").await);
}

async fn a_rule_allows_without_asking(agent: Agent) {
    let world = World::new(agent, "touch RULED").await;
    let _engine = world.engine();
    let target = format!("{}/Bash", agent.name());
    ok(
        world.data.path(),
        &["rules", "add", &target, "/command", "touch RULED", "allow"],
    );
    let out = world.finish(world.start());
    assert!(world.ran("RULED"), "the rule's command did not run: {out}");
    assert!(
        !world
            .audit_actions()
            .iter()
            .any(|a| a == "approval_requested"),
        "a call a rule allows was asked"
    );
    let agents: Vec<Value> = serde_json::from_str(&world.airlock(&["agents", "--json"])).unwrap();
    let me = agents
        .iter()
        .find(|a| a["connection"]["agent"] == agent.name())
        .unwrap();
    assert_eq!(me["connection"]["connected"], true, "{me}");
    assert_eq!(me["view"]["last_tool"], "Bash", "{me}");
    assert_eq!(me["view"]["last_outcome"], "allowed", "{me}");
}

async fn no_engine_means_the_fallback(agent: Agent) {
    let world = World::new(agent, "touch FALLBACK").await;
    {
        let _engine = world.engine();
        ok(
            world.data.path(),
            &["agents", "set", agent.name(), "--fallback", "deny"],
        );
    }
    let started = Instant::now();
    let out = world.finish(world.start());
    assert!(
        !world.ran("FALLBACK"),
        "with fallback deny and no engine the command ran: {out}"
    );
    assert!(
        world.model_saw("fallback is deny"),
        "the model was not told why"
    );
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the hook waited for an engine that is not there"
    );
}

async fn killing_the_agent_withdraws_its_item(agent: Agent) {
    let world = World::new(agent, "touch KILLED").await;
    let _engine = world.engine();
    let child = world.start();
    let item = world.waiting_item();
    let group = child.id();
    world.kill(child);
    eventually("the item withdrawn", || {
        let items: Vec<Value> =
            serde_json::from_str(&ok(world.data.path(), &["inbox", "--json"])).unwrap();
        items.is_empty().then_some(())
    });
    assert!(
        world.audit_actions().iter().any(|a| a == "withdrawn"),
        "not audited as withdrawn"
    );
    let id = item["approval_id"].as_str().unwrap();
    let refused = common::airlock(world.data.path(), &["approve", id]);
    assert!(
        !refused.status.success(),
        "a withdrawn item could still be approved"
    );
    // Once nothing of the agent is left (its hook noticed too), nothing can run the command.
    eventually("the agent's processes gone", || {
        let alive = Command::new("kill")
            .args(["-0", "--", &format!("-{group}")])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        (!alive).then_some(())
    });
    assert!(!world.ran("KILLED"));
}

async fn an_engine_restart_keeps_the_item(agent: Agent) {
    let world = World::new(agent, "touch RESTARTED").await;
    let engine = world.engine();
    let child = world.start();
    let before = world.waiting_item();
    // A second call whose hook will not come back after the restart: its item's withdrawal
    // marks the end of the grace a restarted engine gives abandoned items.
    let mut abandoned = world.hook_asking("touch ABANDONED");
    eventually("the second call in the inbox", || {
        let items: Vec<Value> =
            serde_json::from_str(&ok(world.data.path(), &["inbox", "--json"])).unwrap();
        (items.len() == 2).then_some(())
    });
    engine.kill9();
    abandoned.kill().unwrap();
    abandoned.wait().unwrap();
    let _engine = world.engine();
    // Past the grace: the abandoned item is withdrawn; the agent's hook came back, its stays.
    let after = eventually("the abandoned item withdrawn", || {
        let items: Vec<Value> =
            serde_json::from_str(&ok(world.data.path(), &["inbox", "--json"])).unwrap();
        (items.len() == 1).then(|| items[0].clone())
    });
    assert_eq!(
        after["approval_id"], before["approval_id"],
        "the hook did not come back to its item"
    );
    ok(
        world.data.path(),
        &["approve", after["approval_id"].as_str().unwrap()],
    );
    let out = world.finish(child);
    assert!(
        world.ran("RESTARTED"),
        "the approval after the restart did not reach the agent: {out}"
    );
}

/// A model backend that repeats tool-use ids: the approval of the first command is not the
/// answer to the second one with the same id. It is asked; denied, it never runs.
async fn a_reused_tool_use_id_is_asked_again(agent: Agent) {
    let world = World::scripted(
        agent,
        vec![
            agent.shell_call_with_id("touch FIRST", "07"),
            agent.shell_call_with_id("touch PWNED", "07"),
            Reply::Text("Done.".into()),
        ],
    )
    .await;
    let _engine = world.engine();
    let mut child = world.start();
    let first = world.waiting_item();
    assert_eq!(first["args"]["command"], "touch FIRST", "{first}");
    ok(
        world.data.path(),
        &["approve", first["approval_id"].as_str().unwrap()],
    );
    let second = eventually(
        "the second command asked, or the agent done unasked",
        || {
            let items: Vec<Value> =
                serde_json::from_str(&ok(world.data.path(), &["inbox", "--json"])).unwrap();
            if let Some(item) = items.into_iter().next() {
                return Some(item);
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the agent finished without the second command asked (PWNED ran: {})",
                world.ran("PWNED")
            );
            None
        },
    );
    assert_eq!(second["args"]["command"], "touch PWNED", "{second}");
    assert_ne!(second["approval_id"], first["approval_id"]);
    ok(
        world.data.path(),
        &["deny", second["approval_id"].as_str().unwrap()],
    );
    let out = world.finish(child);
    assert!(
        world.ran("FIRST"),
        "the approved command did not run: {out}"
    );
    assert!(!world.ran("PWNED"), "the denied command ran: {out}");
}

macro_rules! for_both_agents {
    ($($scenario:ident),+ $(,)?) => {
        mod claude_code {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread")]
            async fn $scenario() { super::$scenario(Agent::ClaudeCode).await })+
        }
        mod codex {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread")]
            async fn $scenario() { super::$scenario(Agent::Codex).await })+
        }
    };
}

for_both_agents!(
    approve_runs_the_call,
    deny_reason_reaches_the_model,
    edit_runs_the_edited_command,
    a_rule_allows_without_asking,
    no_engine_means_the_fallback,
    killing_the_agent_withdraws_its_item,
    an_engine_restart_keeps_the_item,
    a_reused_tool_use_id_is_asked_again,
);

/// Claude Code with its HTTP hook: `connect --http` while the engine runs (it issues Claude
/// Code's own token); the hook posts to the engine's loopback port and blocks when unanswered.
async fn http_world(command: &str) -> (World, Engine) {
    let world = World::unconnected(
        Agent::ClaudeCode,
        vec![
            Agent::ClaudeCode.shell_call(command),
            Reply::Text("Done.".into()),
        ],
    )
    .await;
    let engine = world.engine();
    let shown = world.airlock(&["connect", "claude-code", "--http", "--timeout", "60"]);
    assert!(shown.contains("HTTP hook"), "{shown}");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(world.home.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let handler = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(handler["type"], "http", "{settings}");
    assert_eq!(handler["onFailure"], "block", "{settings}");
    let token = std::fs::read_to_string(world.data.path().join("token")).unwrap();
    let header = handler["headers"]["Authorization"].as_str().unwrap();
    assert!(
        !header.contains(token.trim()),
        "the main API token was written into the agent's config"
    );
    (world, engine)
}

/// Approve → the command ran; the hook's request held open while the person decides.
async fn http_hook_approve_runs_the_call() {
    let (world, _engine) = http_world("touch APPROVED").await;
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
}

/// Deny with a reason → nothing ran, and the model read the reason.
async fn http_hook_deny_reason_reaches_the_model() {
    let (world, _engine) = http_world("touch DENIED").await;
    let child = world.start();
    let item = world.waiting_item();
    ok(
        world.data.path(),
        &[
            "deny",
            item["approval_id"].as_str().unwrap(),
            "--reason",
            "not over http either",
        ],
    );
    let out = world.finish(child);
    assert!(!world.ran("DENIED"), "a denied command ran: {out}");
    assert!(
        world.model_saw("not over http either"),
        "the reason never reached the model"
    );
}

/// No engine → the call is blocked, even where Claude Code would run it on its own
/// (`--allowedTools Bash`: a hook that failed open would let it through).
async fn http_hook_without_an_engine_blocks_the_call() {
    let (world, engine) = http_world("touch BLOCKED").await;
    drop(engine);
    let out = world.finish(world.start_with(&["--allowedTools", "Bash"]));
    assert!(
        !world.ran("BLOCKED"),
        "with no engine the HTTP hook let the command run: {out}"
    );
}

mod claude_code_http {
    #[tokio::test(flavor = "multi_thread")]
    async fn approve_runs_the_call() {
        super::http_hook_approve_runs_the_call().await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn deny_reason_reaches_the_model() {
        super::http_hook_deny_reason_reaches_the_model().await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn without_an_engine_the_call_is_blocked() {
        super::http_hook_without_an_engine_blocks_the_call().await
    }
}
