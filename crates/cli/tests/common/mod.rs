//! The harness shared by the end-to-end tests: the real `airlock` binary with a temporary data
//! directory.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use airlock_testkit::ScriptedModel;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_airlock");

pub struct Engine {
    child: Child,
    data_dir: PathBuf,
}

impl Engine {
    pub fn start(data_dir: &Path) -> Self {
        Self::start_with_env(data_dir, &[])
    }

    /// Starts `serve` with extra environment variables (e.g. the API key variable).
    pub fn start_with_env(data_dir: &Path, env: &[(&str, &str)]) -> Self {
        let _ = std::fs::remove_file(data_dir.join("api.json"));
        let child = Command::new(BIN)
            .args([
                "--data-dir",
                data_dir.to_str().unwrap(),
                "serve",
                "--workspace",
            ])
            .arg(data_dir.join("workspace"))
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !data_dir.join("api.json").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "serve did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            data_dir: data_dir.to_path_buf(),
        }
    }

    pub fn kill9(mut self) {
        // SIGKILL: no cleanup of any kind runs in the engine.
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        std::mem::forget(self);
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn addr(&self) -> String {
        let endpoint: Value =
            serde_json::from_str(&std::fs::read_to_string(self.data_dir.join("api.json")).unwrap())
                .unwrap();
        endpoint["addr"].as_str().unwrap().to_string()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SIGTERM first so the engine stops its MCP servers, then make sure. (Windows has no
        // SIGTERM and no `kill` command: straight to the end.)
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve` on a new temporary data directory, with the scripted model as its provider.
pub fn setup(model: &ScriptedModel) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path());
    use_model(dir.path(), model);
    (dir, engine)
}

/// Makes the scripted model the running engine's provider.
pub fn use_model(data_dir: &Path, model: &ScriptedModel) {
    ok(
        data_dir,
        &[
            "provider",
            "set",
            "--base-url",
            &model.base_url(),
            "--model",
            "scripted",
        ],
    );
}

/// The longest any one `airlock` command may take in these tests. A command that should finish
/// without asking (`chat` with a grant, say) hangs on an approval if the gate regresses: it is
/// killed and the test fails instead of hanging.
const COMMAND_BOUND: Duration = Duration::from_secs(60);

pub fn airlock(data_dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the pipes on their own threads so a chatty command cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buffer).map(|_| buffer)
    });
    let err = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut buffer).map(|_| buffer)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > COMMAND_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "airlock {args:?} did not finish within {} s (waiting for an approval it should not need?)",
                COMMAND_BOUND.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

pub fn ok(data_dir: &Path, args: &[&str]) -> String {
    let out = airlock(data_dir, args);
    assert!(
        out.status.success(),
        "airlock {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The token a `team init` / `team add` printed: alone on its last line.
pub fn token_of(out: &str) -> String {
    let token = out.lines().last().unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "not a token alone on the last line: {out}");
    token
}

/// The server `name` as `airlock servers --json` shows it (null when there is none).
pub fn server(data_dir: &Path, name: &str) -> Value {
    let servers: Vec<Value> = serde_json::from_str(&ok(data_dir, &["servers", "--json"])).unwrap();
    servers
        .into_iter()
        .find(|s| s["name"] == name)
        .unwrap_or(Value::Null)
}

/// Polls until `check` returns a value (every step of these tests waits on an outcome, not a time).
pub fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

pub fn inbox(data_dir: &Path, n: usize) -> Vec<Value> {
    eventually(&format!("{n} inbox items"), || {
        let items: Vec<Value> = serde_json::from_str(&ok(data_dir, &["inbox", "--json"])).unwrap();
        (items.len() >= n).then_some(items)
    })
}

/// An installed coding agent from `tests/agents` (pinned; scripts/setup.sh installs it). A test
/// whose agent is missing fails with the command that installs it: it never passes untested.
pub fn installed_agent(bin: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/agents/node_modules/.bin")
        .join(bin);
    assert!(
        path.exists(),
        "{} is missing: run `bash scripts/setup.sh --deps-only` (or `cd tests/agents && npm ci`)",
        path.display()
    );
    path
}

/// The pinned npm MCP servers of `tests/mcp-servers` (scripts/setup.sh installs them).
pub fn npm_servers() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules/@modelcontextprotocol");
    assert!(
        dir.exists(),
        "the test MCP servers are missing: run `bash scripts/setup.sh --deps-only`"
    );
    dir
}

/// The Node that runs them: pinned in the same package.json (any system Node only runs npm).
pub fn node() -> String {
    npm_servers().join("../.bin/node").display().to_string()
}

pub fn everything() -> String {
    npm_servers()
        .join("server-everything/dist/index.js")
        .display()
        .to_string()
}

/// A real coding agent run offline against the scripted model with Airlock answering its hook:
/// what `gateway.rs` (Claude Code, Codex) and `hook_agents.rs` (Copilot CLI, Qwen Code, Gemini
/// CLI) share, so that each scenario below is written once.
pub trait AgentRun {
    fn data_dir(&self) -> &Path;
    /// The folder the agent works in (its commands touch files there).
    fn project(&self) -> &Path;
    /// The scripted model the agent talks to.
    fn model(&self) -> &ScriptedModel;
    /// The agent started on its one prompt.
    fn start(&self) -> Child;
    /// Waits for the agent to end; what it printed.
    fn finish(&self, child: Child) -> String;

    /// The engine, running until the guard is dropped.
    fn engine(&self) -> Engine {
        Engine::start(self.data_dir())
    }

    /// The one item in the inbox (the agent's waiting call), once it is there.
    fn waiting_item(&self) -> Value {
        let items = eventually("the agent's call in the inbox", || {
            let items: Vec<Value> =
                serde_json::from_str(&ok(self.data_dir(), &["inbox", "--json"])).unwrap();
            (!items.is_empty()).then_some(items)
        });
        assert_eq!(items.len(), 1, "{items:?}");
        items[0].clone()
    }

    /// Whether the command that touches `file` ran.
    fn ran(&self, file: &str) -> bool {
        self.project().join(file).exists()
    }

    /// Whether a request to the model carried `text`.
    fn model_saw(&self, text: &str) -> bool {
        self.model()
            .requests()
            .iter()
            .any(|request| request.to_string().contains(text))
    }
}

/// Denied with a reason: the command does not run and the model reads the reason. The agent's
/// prompt touches DENIED.
pub fn deny_reason_reaches_the_model(world: &impl AgentRun) {
    let _engine = world.engine();
    let child = world.start();
    let item = world.waiting_item();
    ok(
        world.data_dir(),
        &[
            "deny",
            item["approval_id"].as_str().unwrap(),
            "--reason",
            "not in this repo, use the sandbox",
        ],
    );
    let out = world.finish(child);
    assert!(!world.ran("DENIED"), "a denied command ran: {out}");
    assert!(
        world.model_saw("not in this repo, use the sandbox"),
        "the reason never reached the model: {out}"
    );
}

/// Approved with edited arguments: the edit runs, the proposal does not. The agent's prompt
/// touches PROPOSED.
pub fn edit_runs_the_edited_command(world: &impl AgentRun) {
    let _engine = world.engine();
    let child = world.start();
    let item = world.waiting_item();
    assert_eq!(item["editable"], true, "{item}");
    let mut edited = item["args"].clone();
    edited["command"] = serde_json::json!("touch EDITED");
    ok(
        world.data_dir(),
        &[
            "approve",
            item["approval_id"].as_str().unwrap(),
            "--args",
            &edited.to_string(),
        ],
    );
    let out = world.finish(child);
    assert!(world.ran("EDITED"), "the edited command did not run: {out}");
    assert!(
        !world.ran("PROPOSED"),
        "the proposed command ran instead of the edit: {out}"
    );
}
