//! The real `airlock-hook` binary, as an agent runs it, on bad input and against a bad engine:
//! whatever happens it prints one JSON answer that is not a decision to run, and exits 0 —
//! never `{}` (Codex runs a call it gets no decision for), never an allow it was not given.
//! Every failure is a denial that names its cause, at once; only a missing engine gives the
//! agent's fallback (Codex: deny; Claude Code: its own prompt, or deny when chosen). And an
//! answer is the answer to one call: an id an agent reuses for another call asks again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{BIN, Engine, eventually, ok};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const HOOK: &str = env!("CARGO_BIN_EXE_airlock-hook");
const AGENTS: [&str; 2] = ["claude-code", "codex"];

/// Starts the hook for `agent` on `data_dir` and feeds it `input` (on a thread: a hook that
/// stops reading must not block the test).
fn start_hook(data_dir: &Path, agent: &str, timeout_secs: u64, input: Vec<u8>) -> Child {
    let mut child = Command::new(HOOK)
        .arg("--data-dir")
        .arg(data_dir)
        .arg(agent)
        .args(["--timeout", &timeout_secs.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        // The hook may stop reading early (input too large): a broken pipe is expected.
        let _ = stdin.write_all(&input);
    });
    child
}

/// The hook's output once it exits, within `bound` (its own deadline is shorter).
fn finish(mut child: Child, bound: Duration) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > bound {
            let _ = child.kill();
            panic!("the hook did not answer within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    Output {
        status: child.wait().unwrap(),
        stdout,
        stderr,
    }
}

fn run_hook(data_dir: &Path, agent: &str, timeout_secs: u64, input: Vec<u8>) -> Output {
    finish(
        start_hook(data_dir, agent, timeout_secs, input),
        Duration::from_secs(timeout_secs + 30),
    )
}

/// The one JSON object the hook printed (exit 0), as PreToolUse's answer.
fn answer_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the hook failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "not one line: {stdout:?}");
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    answer["hookSpecificOutput"].clone()
}

/// A PreToolUse denial whose reason names `cause`.
fn assert_denied(out: &Output, cause: &str) {
    let answer = answer_of(out);
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    let reason = answer["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains(cause),
        "the reason does not say {cause:?}: {reason}"
    );
}

fn pre_tool_use(tool: &str, input: Value, id: &str) -> Vec<u8> {
    json!({
        "session_id": "s1", "cwd": "/work", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": id,
    })
    .to_string()
    .into_bytes()
}

fn bash(command: &str, id: &str) -> Vec<u8> {
    pre_tool_use("Bash", json!({ "command": command }), id)
}

fn inbox(data_dir: &Path) -> Vec<Value> {
    serde_json::from_str(&ok(data_dir, &["inbox", "--json"])).unwrap()
}

#[test]
fn bad_input_is_denied_at_once_with_its_cause() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let huge = vec![b'x'; 5 * 1024 * 1024];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not JSON", b"{\"hook_event_name\": ".to_vec(), "not JSON"),
        ("empty", Vec::new(), "not JSON"),
        ("larger than any event", huge, "too large"),
        (
            "another event",
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"})
                .to_string()
                .into_bytes(),
            "PostToolUse",
        ),
        (
            "no tool",
            json!({"hook_event_name": "PreToolUse"})
                .to_string()
                .into_bytes(),
            "tool_name",
        ),
    ];
    for agent in AGENTS {
        for (what, input, cause) in &cases {
            let started = Instant::now();
            let out = run_hook(d, agent, 30, input.clone());
            assert_denied(&out, cause);
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{agent}, {what}: not at once"
            );
        }
    }
    // An agent the hook does not know, or a command line it cannot read: still a denial in
    // the words both agents read.
    for args in [vec!["cline"], vec![], vec!["codex", "--timeout"]] {
        let mut child = Command::new(HOOK)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        let out = finish(child, Duration::from_secs(30));
        let answer = answer_of(&out);
        assert_eq!(answer["permissionDecision"], "deny", "{args:?}: {answer}");
    }
}

/// A tool input larger than the engine takes is refused by the hook itself, at once: it is
/// not sent, so not answered with a 413 the hook would retry until its deadline.
#[test]
fn an_oversized_tool_input_is_refused_at_once() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let _engine = Engine::start(d);
    let large = "y".repeat(3 * 1024 * 1024);
    for agent in AGENTS {
        let started = Instant::now();
        let out = run_hook(d, agent, 60, bash(&large, "call_big"));
        assert_denied(&out, "too large");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{agent}: the oversized input was retried"
        );
    }
    assert!(inbox(d).is_empty());
}

#[test]
fn no_engine_gives_the_fallback_with_its_cause() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    // Codex fails closed by default.
    let out = run_hook(d, "codex", 30, bash("touch X", "call_1"));
    assert_denied(&out, "Airlock is not running");
    assert_denied(&out, "fallback is deny");
    // So does Claude Code: its `ask` would pass the call on to its own permission flow.
    let out = run_hook(d, "claude-code", 30, bash("touch X", "toolu_1"));
    assert_denied(&out, "Airlock is not running");
    assert_denied(&out, "fallback is deny");
    // Chosen: ask (the file the engine writes when the person sets it), saying why.
    std::fs::write(d.join("agents.json"), r#"{"claude-code":"ask"}"#).unwrap();
    let out = run_hook(d, "claude-code", 30, bash("touch X", "toolu_2"));
    let answer = answer_of(&out);
    assert_eq!(answer["permissionDecision"], "ask", "{answer}");
    assert!(
        answer["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("Airlock is not running"),
        "{answer}"
    );
}

/// An engine that holds the data directory's lock and answers every request with `response`
/// (a raw HTTP response).
struct FakeEngine {
    _lock: airlock_api::discovery::EngineLock,
}

impl FakeEngine {
    fn start(data_dir: &Path, response: &'static [u8]) -> Self {
        let lock = airlock_api::discovery::EngineLock::acquire(data_dir).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::fs::write(data_dir.join("token"), "t".repeat(64)).unwrap();
        // Over TCP (no socket named): the hook reaches it as it reaches an engine on Windows.
        airlock_api::discovery::publish(
            data_dir,
            &airlock_api::discovery::Endpoint {
                addr,
                pid: std::process::id(),
                socket: None,
            },
        )
        .unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                std::thread::spawn(move || {
                    read_request(&mut stream);
                    let _ = stream.write_all(response);
                });
            }
        });
        Self { _lock: lock }
    }
}

/// Reads one HTTP request: its head, then as many bytes as its Content-Length says.
fn read_request(stream: &mut std::net::TcpStream) {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let Ok(n) = stream.read(&mut buffer) else {
            return;
        };
        if n == 0 {
            return;
        }
        seen.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return;
            }
        }
    }
}

#[test]
fn an_engine_answer_that_is_no_decision_is_a_denial_at_once() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot json!",
            "garbled",
        ),
        (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 21\r\nconnection: close\r\n\r\n{\"verdict\":\"perhaps\"}",
            "garbled",
        ),
        (
            b"HTTP/1.1 413 Payload Too Large\r\ncontent-type: text/plain\r\ncontent-length: 21\r\nconnection: close\r\n\r\nlength limit exceeded",
            "garbled",
        ),
    ];
    for (response, cause) in cases {
        let data = tempfile::tempdir().unwrap();
        let d = data.path();
        let _fake = FakeEngine::start(d, response);
        for agent in AGENTS {
            let started = Instant::now();
            let out = run_hook(d, agent, 30, bash("touch X", "call_1"));
            assert_denied(&out, cause);
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{agent}: the engine's answer was retried until the deadline"
            );
        }
    }
}

/// The engine killed while the call waits and not back by the hook's deadline: Codex's call
/// is denied (it ran 18 s later when its fallback was `ask`), saying why.
#[test]
fn an_engine_killed_while_the_call_waits_means_deny() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let engine = Engine::start(d);
    let hook = start_hook(d, "codex", 6, bash("touch KILLED", "call_k"));
    eventually("the call in the inbox", || {
        (!inbox(d).is_empty()).then_some(())
    });
    engine.kill9();
    let out = finish(hook, Duration::from_secs(30));
    assert_denied(&out, "Airlock stopped while the call waited");
    assert_denied(&out, "fallback is deny");
}

/// A model backend that repeats tool-use ids: after a `Read` with id X was approved, a `Bash`
/// with id X is a new request in the inbox; the hook waits for it and prints no allow.
#[test]
fn a_tool_use_id_reused_for_another_call_is_asked() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let _engine = Engine::start(d);
    let read = start_hook(
        d,
        "claude-code",
        60,
        pre_tool_use("Read", json!({"file_path": "/work/README.md"}), "toolu_X"),
    );
    let item = eventually("the Read in the inbox", || inbox(d).into_iter().next());
    ok(d, &["approve", item["approval_id"].as_str().unwrap()]);
    let answer = answer_of(&finish(read, Duration::from_secs(60)));
    assert_eq!(answer["permissionDecision"], "allow", "{answer}");

    let mut pwned = start_hook(d, "claude-code", 60, bash("touch PWNED", "toolu_X"));
    let asked = eventually("the Bash asked, or answered unasked", || {
        if let Some(item) = inbox(d).into_iter().next() {
            return Some(item);
        }
        let exited = pwned.try_wait().unwrap().is_some();
        assert!(!exited, "the reused id was answered without asking");
        None
    });
    assert_eq!(asked["tool"], "Bash", "{asked}");
    assert!(
        asked["why"].as_str().unwrap().contains("reused the id"),
        "{asked}"
    );
    assert_ne!(asked["approval_id"], item["approval_id"]);
    assert!(pwned.try_wait().unwrap().is_none());
    ok(
        d,
        &[
            "deny",
            asked["approval_id"].as_str().unwrap(),
            "--reason",
            "not that",
        ],
    );
    assert_denied(&finish(pwned, Duration::from_secs(60)), "not that");
    let audit = ok(d, &["audit", "--json"]);
    assert!(audit.contains("agent_id_reused"), "{audit}");
}

#[test]
fn connect_codex_says_its_calls_are_denied_when_airlock_cannot_answer() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(data.path())
        .args(["connect", "codex"])
        .env("HOME", home.path())
        .env("CODEX_HOME", home.path().join(".codex"))
        // No Codex to ask for the hook's trust: connect says so and goes on.
        .env("PATH", home.path())
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("the call is denied"), "{shown}");
    assert!(shown.contains("--fallback ask"), "{shown}");
}
