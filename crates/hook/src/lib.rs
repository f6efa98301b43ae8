//! The coding agents' hook (Claude Code's and Codex's PreToolUse and PermissionRequest): the
//! command an agent runs before each tool call. It reads the event on stdin, asks the engine,
//! waits for the person and prints what that agent understands. It runs as its own small
//! binary, `airlock-hook` (what `airlock connect` installs: an agent starts it for every tool
//! call, and the whole `airlock` binary takes longer to start than the rest of the hook), and
//! as `airlock hook`.
//!
//! Both agents FAIL OPEN when a hook crashes, prints something that is not JSON, or outlives
//! its timeout (the call then goes on to the agent's own permission flow, where it may simply
//! run). So the hook never fails: whatever happens it prints valid JSON, exits 0, and answers
//! before its deadline — the decision, or, when no engine answers or nobody decided in time,
//! the agent's fallback (`deny`, every agent's default; `ask`, where the person chose it: back
//! to the agent's own permission flow), with the cause in its reason. Anything else that is not a decision
//! (input it cannot read or that is too large, an unknown agent or event, an engine answer it
//! cannot read) is a denial at once that names the cause, never retried.

use airlock_client::agents::fallback_of;
use airlock_client::{ClientError, one_shot};
use airlock_core::{AgentFallback, DEFAULT_HOOK_TIMEOUT_SECS, HookAgent};
use airlock_protocol::agents::MAX_INPUT_BYTES;
use airlock_protocol::{AgentAnswer, AgentCall, AgentEvent, AgentVerdict};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most a hook reads from stdin (a tool input is at most 1 MiB; the rest is the envelope).
const MAX_EVENT_BYTES: u64 = 4 * 1024 * 1024;

/// How long before the agent's hook timeout the hook answers its fallback.
pub fn margin(timeout: Duration) -> Duration {
    (timeout / 10).clamp(Duration::from_millis(500), Duration::from_secs(5))
}

/// What the hook prints, and why (for `--explain`-style logs on stderr).
pub struct HookOutput {
    pub stdout: String,
}

impl HookOutput {
    /// A denial when the hook cannot even start (no data directory, no runtime).
    pub fn denied(agent: HookAgent, why: &str) -> Self {
        Self {
            stdout: render(agent, HookEvent::PreToolUse, &denial(why)),
        }
    }
}

/// The hook's command line, `[--data-dir DIR] AGENT [--timeout SECS]` (flags in any order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub data_dir: Option<PathBuf>,
    pub agent: String,
    pub timeout_secs: u64,
}

/// Reads the command line by hand: a parser library costs more to start than the hook's
/// whole request takes, and there are two flags.
pub fn parse_command_line(args: impl IntoIterator<Item = OsString>) -> Result<CommandLine, String> {
    let mut args = args.into_iter();
    let (mut data_dir, mut agent, mut timeout_secs) = (None, None, DEFAULT_HOOK_TIMEOUT_SECS);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--data-dir") => {
                data_dir = Some(PathBuf::from(
                    args.next().ok_or("--data-dir needs a folder")?,
                ));
            }
            Some("--timeout") => {
                timeout_secs = args
                    .next()
                    .and_then(|value| value.to_str()?.parse().ok())
                    .ok_or("--timeout needs a number of seconds")?;
            }
            Some(word) if agent.is_none() && !word.starts_with('-') => agent = Some(word.into()),
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    Ok(CommandLine {
        data_dir,
        agent: agent.ok_or("name the agent: claude-code or codex")?,
        timeout_secs,
    })
}

/// The denial every agent reads: Claude Code's and Codex's PreToolUse answers are the same
/// words, so it also answers an agent the hook does not know.
fn denied_to_any(why: &str) -> String {
    render(HookAgent::ClaudeCode, HookEvent::PreToolUse, &denial(why))
}

/// `airlock-hook ARGS…`: the answer for the agent on stdout, always one JSON object. With a
/// command line it cannot read, the agent gets a denial that says why.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) {
    let args: Vec<OsString> = args.into_iter().collect();
    match parse_command_line(args.clone()) {
        Ok(line) => run_and_print(line.data_dir, &line.agent, line.timeout_secs),
        Err(why) => {
            eprintln!(
                "airlock-hook: {why}\nusage: airlock-hook [--data-dir DIR] claude-code|codex [--timeout SECS]"
            );
            println!(
                "{}",
                denied_to_any(&format!("the hook's command line: {why}"))
            );
        }
    }
}

/// Runs the hook on a single-threaded runtime and prints its answer (a denial for an agent it
/// does not know: it cannot tell what that agent would do with no decision).
pub fn run_and_print(data_dir: Option<PathBuf>, agent: &str, timeout_secs: u64) {
    let Ok(agent) = agent.parse::<HookAgent>() else {
        println!(
            "{}",
            denied_to_any(&format!(
                "the hook does not know the agent '{agent}' (claude-code or codex)"
            ))
        );
        return;
    };
    let timeout = Duration::from_secs(timeout_secs.max(1));
    let output = match (
        airlock_client::resolve_data_dir(data_dir),
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    ) {
        (Ok(dir), Ok(runtime)) => runtime.block_on(run(&dir, agent, timeout)),
        (Err(error), _) => HookOutput::denied(agent, &error.to_string()),
        (_, Err(error)) => HookOutput::denied(agent, &error.to_string()),
    };
    println!("{}", output.stdout);
}

/// Runs the hook: never returns an error.
pub async fn run(data_dir: &Path, agent: HookAgent, timeout: Duration) -> HookOutput {
    let started = Instant::now();
    let deadline = started + timeout.saturating_sub(margin(timeout));
    let fallback = fallback_of(data_dir, agent);
    let event = match read_event(deadline) {
        Ok(event) => event,
        Err(why) => {
            return HookOutput {
                stdout: render(agent, HookEvent::PreToolUse, &denial(&why)),
            };
        }
    };
    let hook_event = match event.get("hook_event_name").and_then(Value::as_str) {
        Some("PreToolUse") => HookEvent::PreToolUse,
        Some("PermissionRequest") => HookEvent::PermissionRequest,
        // Another event (a misconfigured hook): not a call the hook can let through.
        other => {
            return HookOutput {
                stdout: denied_to_any(&format!(
                    "the hook decides PreToolUse and PermissionRequest, not {}",
                    other.unwrap_or("an event without a hook_event_name")
                )),
            };
        }
    };
    let answer = match agent_call(agent, hook_event, &event) {
        Ok(mut call) => tokio::select! {
            answer = ask_engine(data_dir, &mut call, deadline) => answer,
            // The agent is gone: nobody reads the answer; stop waiting (the item is withdrawn).
            () = parent_gone() => std::process::exit(0),
        },
        Err(why) => Ok(denial(&why)),
    };
    let answer = match answer {
        Ok(answer) if answer.verdict != AgentVerdict::Undecided => answer,
        Ok(_) => fallback_answer(fallback, NOBODY_DECIDED),
        Err(NoEngine(why)) => fallback_answer(fallback, &why),
    };
    HookOutput {
        stdout: render(agent, hook_event, &answer),
    }
}

/// Resolves when the process that started the hook is gone (this process was re-parented): an
/// agent killed outright does not kill its hook.
async fn parent_gone() {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if std::os::unix::process::parent_id() != parent {
                return;
            }
        }
    }
    #[cfg(not(unix))]
    std::future::pending::<()>().await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookEvent {
    PreToolUse,
    PermissionRequest,
}

/// Why the fallback answers when the engine was there but nobody decided before the deadline.
const NOBODY_DECIDED: &str = "nobody decided in Airlock in time";

/// The engine could not be reached (not running, stopped and not back by the deadline): the
/// cause, as the agent's model reads it.
pub struct NoEngine(pub String);

fn denial(why: &str) -> AgentAnswer {
    AgentAnswer {
        verdict: AgentVerdict::Deny,
        reason: Some(format!("Airlock: {why}")),
        updated_input: None,
        approval_id: None,
        decided_by: None,
    }
}

fn fallback_answer(fallback: AgentFallback, why: &str) -> AgentAnswer {
    match fallback {
        AgentFallback::Deny => denial(&format!("{why}; denied (this agent's fallback is deny)")),
        // The person chose the agent's own permission flow.
        AgentFallback::Ask => AgentAnswer {
            verdict: AgentVerdict::Undecided,
            reason: Some(format!("Airlock: {why}")),
            updated_input: None,
            approval_id: None,
            decided_by: None,
        },
    }
}

/// Reads stdin on a thread, so a writer that never closes it cannot hold the hook past its
/// deadline.
fn read_event(deadline: Instant) -> Result<Value, String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        // One byte more than allowed tells a too large input from one that fits exactly.
        let read = std::io::stdin()
            .take(MAX_EVENT_BYTES + 1)
            .read_to_end(&mut bytes);
        let _ = sender.send(read.map(|_| bytes));
    });
    let bytes = match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(error)) => return Err(format!("cannot read the hook's input: {error}")),
        Err(_) => return Err("the hook's input did not arrive in time".into()),
    };
    if bytes.len() as u64 > MAX_EVENT_BYTES {
        return Err(format!(
            "the hook's input is too large (more than {MAX_EVENT_BYTES} bytes)"
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("the hook's input is not JSON: {e}"))
}

/// How much of an agent's transcript the hook reads for the session's first prompt.
const TRANSCRIPT_READ_BYTES: u64 = 256 * 1024;

/// The session's first prompt from the agent's transcript (JSON Lines): Claude Code's first
/// `user` message that is text, or Codex's first `user_message` event. `None` when the file
/// cannot be read or holds none yet: the session is then named by its folder alone.
pub fn first_prompt(transcript: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(transcript).ok()?;
    let reader = std::io::BufReader::new(file.take(TRANSCRIPT_READ_BYTES));
    reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .find_map(|entry| prompt_of(&entry))
}

fn prompt_of(entry: &Value) -> Option<String> {
    let text = match entry.get("type").and_then(Value::as_str)? {
        // Claude Code: {"type":"user","message":{"role":"user","content":"…" or [{"type":"text","text":"…"}]}};
        // tool results are user messages too, and meta entries are not the person's words.
        "user" if entry.get("isMeta").and_then(Value::as_bool) != Some(true) => {
            match entry.pointer("/message/content")? {
                Value::String(text) => text.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))?
                    .get("text")?
                    .as_str()?
                    .to_string(),
                _ => return None,
            }
        }
        // Codex 0.169: {"type":"response_item","payload":{"type":"message","role":"user",
        // "content":[{"type":"input_text","text":"…"}]}} (its environment context is such a
        // message too, tagged, skipped below).
        "response_item"
            if entry.pointer("/payload/type").and_then(Value::as_str) == Some("message")
                && entry.pointer("/payload/role").and_then(Value::as_str) == Some("user") =>
        {
            entry
                .pointer("/payload/content")?
                .as_array()?
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("input_text"))?
                .get("text")?
                .as_str()?
                .to_string()
        }
        // Other Codex versions: {"type":"event_msg","payload":{"type":"user_message","message":"…"}}.
        "event_msg"
            if entry.pointer("/payload/type").and_then(Value::as_str) == Some("user_message") =>
        {
            entry.pointer("/payload/message")?.as_str()?.to_string()
        }
        _ => return None,
    };
    let text = text.trim();
    // Claude Code's slash commands and caveats are tagged text, not a prompt.
    (!text.is_empty() && !text.starts_with('<')).then(|| text.chars().take(500).collect())
}

/// The agent's event as Airlock's request.
fn agent_call(agent: HookAgent, event: HookEvent, input: &Value) -> Result<AgentCall, String> {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
    let tool = text("tool_name").ok_or("the hook's input names no tool (tool_name)")?;
    let tool_input = input
        .get("tool_input")
        .cloned()
        .unwrap_or_else(|| json!({}));
    // Refused here at once: the engine would refuse it too, or not even read it.
    let size = tool_input.to_string().len();
    if size > MAX_INPUT_BYTES {
        return Err(format!(
            "the tool's input is too large for Airlock ({size} bytes; the limit is {MAX_INPUT_BYTES})"
        ));
    }
    Ok(AgentCall {
        agent: agent.as_str().into(),
        source: None,
        client: None,
        agent_session: text("session_id").unwrap_or_default(),
        cwd: text("cwd"),
        tool,
        input: tool_input,
        tool_use_id: text("tool_use_id"),
        event: match event {
            HookEvent::PreToolUse => AgentEvent::PreToolUse,
            HookEvent::PermissionRequest => AgentEvent::PermissionRequest,
        },
        // Codex rejects an edited input at PermissionRequest.
        editable: !(agent == HookAgent::Codex && event == HookEvent::PermissionRequest),
        wait_ms: None,
        definition: None,
        prompt: text("transcript_path").and_then(|path| first_prompt(Path::new(&path))),
    })
}

/// Asks the engine, coming back after a restart (the same request finds the same item) until
/// the deadline. An answer it cannot read or a refusal is a denial at once; only an engine that
/// is not there (yet) is waited for.
pub async fn ask_engine(
    data_dir: &Path,
    call: &mut AgentCall,
    deadline: Instant,
) -> Result<AgentAnswer, NoEngine> {
    let mut last_error = String::new();
    // Until the engine answered once, "no engine" means the fallback at once; after that a lost
    // connection is an engine restarting, and the hook comes back to its item.
    let mut reached = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NoEngine(if last_error.is_empty() {
                NOBODY_DECIDED.into()
            } else {
                format!(
                    "Airlock stopped while the call waited and was not back in time ({last_error})"
                )
            }));
        }
        call.wait_ms = Some(left.as_millis() as u64);
        let body = serde_json::to_value(&*call).unwrap_or_default();
        let request = one_shot::post::<AgentAnswer>(data_dir, "/v1/agent-calls", &body);
        match tokio::time::timeout(left, request).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(ClientError::Refused { message, .. })) => return Ok(denial(&message)),
            Ok(Err(ClientError::Decode(error))) => {
                return Ok(denial(&format!(
                    "the engine's answer was garbled ({error}); the call was not run"
                )));
            }
            // No engine (no discovery file, or nothing listening) before it ever answered.
            Ok(Err(ClientError::Discovery(error))) if !reached => {
                return Err(NoEngine(format!("Airlock is not running ({error})")));
            }
            Ok(Err(ClientError::Unreachable {
                message,
                refused: true,
                ..
            })) if !reached => {
                return Err(NoEngine(format!("Airlock is not running ({message})")));
            }
            Ok(Err(error)) => {
                if !matches!(
                    error,
                    ClientError::Discovery(_) | ClientError::Unreachable { refused: true, .. }
                ) {
                    reached = true;
                }
                last_error = error.to_string();
            }
            Err(_) => return Err(NoEngine(NOBODY_DECIDED.into())),
        }
        tokio::time::sleep(Duration::from_millis(200).min(left)).await;
    }
}

/// What each agent understands (../AGENT-HOOKS.md): always one JSON object.
fn render(agent: HookAgent, event: HookEvent, answer: &AgentAnswer) -> String {
    let reason = answer.reason.clone().unwrap_or_default();
    let output = match event {
        HookEvent::PreToolUse => {
            let mut out = json!({"hookEventName": "PreToolUse"});
            match (answer.verdict, agent, &answer.updated_input) {
                (AgentVerdict::Deny, _, _) => {
                    out["permissionDecision"] = json!("deny");
                    out["permissionDecisionReason"] = json!(reason);
                }
                (AgentVerdict::Allow, _, Some(input)) => {
                    out["permissionDecision"] = json!("allow");
                    out["permissionDecisionReason"] = json!("approved in Airlock with an edit");
                    out["updatedInput"] = input.clone();
                }
                (AgentVerdict::Allow, HookAgent::ClaudeCode, None) => {
                    out["permissionDecision"] = json!("allow");
                    out["permissionDecisionReason"] = json!(approved_by(answer));
                }
                // Codex: a bare "allow" is unsupported (it fails open); letting it through is
                // no decision at all.
                (AgentVerdict::Allow, HookAgent::Codex, None) => return "{}".into(),
                (AgentVerdict::Undecided, HookAgent::ClaudeCode, _) => {
                    out["permissionDecision"] = json!("ask");
                    out["permissionDecisionReason"] = json!(reason);
                }
                // Codex's "ask" is unsupported too: no decision gives it its own approval.
                (AgentVerdict::Undecided, HookAgent::Codex, _) => return "{}".into(),
            }
            out
        }
        HookEvent::PermissionRequest => {
            let decision = match answer.verdict {
                AgentVerdict::Allow => {
                    let mut decision = json!({"behavior": "allow"});
                    if let (Some(input), HookAgent::ClaudeCode) = (&answer.updated_input, agent) {
                        decision["updatedInput"] = input.clone();
                    }
                    decision
                }
                AgentVerdict::Deny => json!({"behavior": "deny", "message": reason}),
                AgentVerdict::Undecided => return "{}".into(),
            };
            json!({"hookEventName": "PermissionRequest", "decision": decision})
        }
    };
    json!({ "hookSpecificOutput": output }).to_string()
}

fn approved_by(answer: &AgentAnswer) -> String {
    match answer.decided_by.as_deref() {
        Some("policy") => "allowed by Airlock's settings".into(),
        Some(channel) => format!("approved in Airlock ({channel})"),
        None => "approved in Airlock".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The session's first prompt, as each agent writes its transcript: Claude Code's first
    /// user text (not a tool result, not a tagged command), Codex's first `user_message`.
    #[test]
    fn the_first_prompt_is_read_from_either_agents_transcript() {
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
        assert_eq!(first_prompt(&claude).as_deref(), Some("Fix the test"));

        let codex = dir.path().join("rollout.jsonl");
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "x"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>…"}]}}),
            json!({"type": "event_msg", "payload": {"type": "user_message", "message": "Run the command"}}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&codex, text.join("\n")).unwrap();
        assert_eq!(first_prompt(&codex).as_deref(), Some("Run the command"));

        // Codex 0.169 writes the prompt as a user message after its tagged context.
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "x"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>…"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the build"}]}}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&codex, text.join("\n")).unwrap();
        assert_eq!(first_prompt(&codex).as_deref(), Some("Fix the build"));

        assert_eq!(first_prompt(&dir.path().join("missing.jsonl")), None);
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

    #[test]
    fn every_answer_is_one_json_object_in_the_agents_own_words() {
        for agent in HookAgent::ALL {
            for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
                for verdict in [
                    AgentVerdict::Allow,
                    AgentVerdict::Deny,
                    AgentVerdict::Undecided,
                ] {
                    for edit in [None, Some(json!({"command": "ls"}))] {
                        let text = render(*agent, event, &answer(verdict, edit));
                        let value: Value = serde_json::from_str(&text).unwrap();
                        assert!(value.is_object(), "{text}");
                    }
                }
            }
        }
        // Codex: letting a call through is no decision; never a bare allow (unsupported: open).
        assert_eq!(
            render(
                HookAgent::Codex,
                HookEvent::PreToolUse,
                &answer(AgentVerdict::Allow, None)
            ),
            "{}"
        );
        let edited = render(
            HookAgent::Codex,
            HookEvent::PreToolUse,
            &answer(AgentVerdict::Allow, Some(json!({"command": "ls"}))),
        );
        assert!(edited.contains("\"updatedInput\""), "{edited}");
        let denied = render(
            HookAgent::ClaudeCode,
            HookEvent::PermissionRequest,
            &answer(AgentVerdict::Deny, None),
        );
        assert!(
            denied.contains("\"behavior\":\"deny\"") && denied.contains("\"message\":\"no\""),
            "{denied}"
        );
        // Codex rejects updatedInput at PermissionRequest: never sent there.
        let permission = render(
            HookAgent::Codex,
            HookEvent::PermissionRequest,
            &answer(AgentVerdict::Allow, Some(json!({"command": "ls"}))),
        );
        assert!(!permission.contains("updatedInput"), "{permission}");
    }

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn the_command_line_connect_installs_is_read_and_anything_else_is_refused() {
        assert_eq!(
            parse_command_line(words("--data-dir /d claude-code --timeout 30")).unwrap(),
            CommandLine {
                data_dir: Some("/d".into()),
                agent: "claude-code".into(),
                timeout_secs: 30
            }
        );
        let plain = parse_command_line(words("codex")).unwrap();
        assert_eq!(
            (plain.data_dir, plain.timeout_secs),
            (None, DEFAULT_HOOK_TIMEOUT_SECS)
        );
        for bad in [
            "",
            "codex --timeout",
            "codex --timeout soon",
            "codex extra",
            "--data-dir",
        ] {
            assert!(parse_command_line(words(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_fallback_comes_well_before_the_agents_timeout() {
        assert_eq!(margin(Duration::from_secs(600)), Duration::from_secs(5));
        assert_eq!(margin(Duration::from_secs(10)), Duration::from_secs(1));
        assert!(margin(Duration::from_secs(1)) >= Duration::from_millis(500));
    }
}
