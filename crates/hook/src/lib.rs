//! The coding agents' hook (Claude Code's and Codex's PreToolUse and PermissionRequest, Qwen
//! Code's the same, Copilot CLI's and Cursor's preToolUse, Gemini CLI's BeforeTool, goose's
//! PreToolUse, each in its agent's dialect from crates/agents): the command an agent runs
//! before each tool call. It reads the event on stdin, asks the engine,
//! waits for the person and prints what that agent understands. It runs as its own small
//! binary, `airlock-hook` (what `airlock connect` installs: an agent starts it for every tool
//! call, and the whole `airlock` binary takes longer to start than the rest of the hook), and
//! as `airlock hook`.
//!
//! Most agents FAIL OPEN when a hook crashes, prints something that is not JSON, or outlives
//! its timeout (the call then goes on to the agent's own permission flow, where it may simply
//! run). So the hook never fails: whatever happens it prints valid JSON, exits 0, and answers
//! before its deadline — the decision, or, when no engine answers or nobody decided in time,
//! the agent's fallback (`deny`, every agent's default; `ask`, where the person chose it: back
//! to the agent's own permission flow), with the cause in its reason. Anything else that is not a decision
//! (input it cannot read or that is too large, an unknown agent or event, an engine answer it
//! cannot read) is a denial at once that names the cause, never retried.

use airlock_agents::{Agent, HookEvent, denied_to_any};
use airlock_client::agents::fallback_of;
use airlock_client::{ClientError, one_shot};
use airlock_core::{AgentFallback, DEFAULT_HOOK_TIMEOUT_SECS};
use airlock_protocol::agents::MAX_INPUT_BYTES;
use airlock_protocol::{AgentAnswer, AgentCall, AgentVerdict};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most a hook reads from stdin (a tool input is at most 1 MiB; the rest is the envelope).
pub const MAX_EVENT_BYTES: u64 = 4 * 1024 * 1024;

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
    pub fn denied(agent: &dyn Agent, why: &str) -> Self {
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
        agent: agent.ok_or_else(|| format!("name the agent: {}", agent_names()))?,
        timeout_secs,
    })
}

/// The agents whose hooks this answers, for messages: `claude-code or codex`.
fn agent_names() -> String {
    airlock_agents::hook_agent_names().join(" or ")
}

/// The denial every agent reads (it also answers an agent the hook does not know).
fn denied(why: &str) -> String {
    denied_to_any(&format!("Airlock: {why}"))
}

/// `airlock-hook ARGS…`: the answer for the agent on stdout, always one JSON object. With a
/// command line it cannot read, the agent gets a denial that says why.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) {
    let args: Vec<OsString> = args.into_iter().collect();
    match parse_command_line(args.clone()) {
        Ok(line) => run_and_print(line.data_dir, &line.agent, line.timeout_secs),
        Err(why) => {
            eprintln!(
                "airlock-hook: {why}\nusage: airlock-hook [--data-dir DIR] {} [--timeout SECS]",
                airlock_agents::hook_agent_names().join("|")
            );
            println!("{}", denied(&format!("the hook's command line: {why}")));
        }
    }
}

/// Runs the hook on a single-threaded runtime and prints its answer (a denial for an agent it
/// does not know: it cannot tell what that agent would do with no decision).
pub fn run_and_print(data_dir: Option<PathBuf>, agent: &str, timeout_secs: u64) {
    let Some(agent) = airlock_agents::hook_agent(agent) else {
        println!(
            "{}",
            denied(&format!(
                "the hook does not know the agent '{agent}' ({})",
                agent_names()
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
pub async fn run(data_dir: &Path, agent: &dyn Agent, timeout: Duration) -> HookOutput {
    let started = Instant::now();
    let deadline = started + timeout.saturating_sub(margin(timeout));
    let fallback = fallback_of(data_dir, agent.name());
    let event = match read_event(deadline) {
        Ok(event) => event,
        Err(why) => {
            return HookOutput {
                stdout: render(agent, HookEvent::PreToolUse, &denial(&why)),
            };
        }
    };
    let (hook_event, mut call) = match request_of(agent, &event) {
        Ok(request) => request,
        Err(stdout) => return HookOutput { stdout },
    };
    let answer = tokio::select! {
        answer = ask_engine(data_dir, &mut call, deadline) => answer,
        // The agent is gone: nobody reads the answer; stop waiting (the item is withdrawn).
        () = parent_gone() => std::process::exit(0),
    };
    HookOutput {
        stdout: answer_for(agent, hook_event, answer, fallback),
    }
}

/// The agent's event as Airlock's request in its dialect, or, when it is none Airlock can ask
/// about (another event, no tool, an input too large), the denial the agent reads at once.
/// The process hook and the agents' HTTP hooks (`crates/api`) read events through this.
pub fn request_of(agent: &dyn Agent, event: &Value) -> Result<(HookEvent, AgentCall), String> {
    let hook_event = match agent.dialect().map(|dialect| dialect.event(event)) {
        Some(Ok(hook_event)) => hook_event,
        // Another event (a misconfigured hook): not a call the hook can let through, denied
        // in the agent's own words (another agent's words may read as no decision).
        Some(Err(why)) => return Err(render(agent, HookEvent::PreToolUse, &denial(&why))),
        None => {
            return Err(denied(&format!(
                "Airlock does not answer {}'s hook",
                agent.display_name()
            )));
        }
    };
    let call = agent_call(agent, hook_event, event)
        .map_err(|why| render(agent, hook_event, &denial(&why)))?;
    Ok((hook_event, call))
}

/// What the agent reads once Airlock answered (or could not): the decision, a refusal as a
/// denial, or — nobody decided in time, no engine — its fallback with the cause. Always one
/// JSON object in the agent's words.
pub fn answer_for(
    agent: &dyn Agent,
    event: HookEvent,
    answer: Result<AgentAnswer, NoEngine>,
    fallback: AgentFallback,
) -> String {
    let answer = match answer {
        Ok(answer) if answer.verdict != AgentVerdict::Undecided => answer,
        Ok(_) => fallback_answer(fallback, NOBODY_DECIDED),
        Err(NoEngine(why)) => fallback_answer(fallback, &why),
    };
    render(agent, event, &answer)
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

/// Why the fallback answers when the engine was there but nobody decided before the deadline.
const NOBODY_DECIDED: &str = "nobody decided in Airlock in time";

/// The engine could not be reached (not running, stopped and not back by the deadline): the
/// cause, as the agent's model reads it.
pub struct NoEngine(pub String);

/// A denial that says why (`Airlock: …`): what the engine's refusal of a call becomes.
pub fn denial(why: &str) -> AgentAnswer {
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

/// The agent's event as Airlock's request, in its dialect. A tool input the engine would
/// refuse (or not even read) is refused here at once.
fn agent_call(agent: &dyn Agent, event: HookEvent, input: &Value) -> Result<AgentCall, String> {
    let dialect = agent
        .dialect()
        .ok_or_else(|| format!("Airlock does not answer {}'s hook", agent.display_name()))?;
    let call = dialect.call(agent.name(), event, input)?;
    let size = call.input.to_string().len();
    if size > MAX_INPUT_BYTES {
        return Err(format!(
            "the tool's input is too large for Airlock ({size} bytes; the limit is {MAX_INPUT_BYTES})"
        ));
    }
    Ok(call)
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

/// What the agent understands, in its dialect: always one JSON object (a hook agent always
/// has a dialect; the denial every agent reads otherwise).
fn render(agent: &dyn Agent, event: HookEvent, answer: &AgentAnswer) -> String {
    match agent.dialect() {
        Some(dialect) => dialect.render(event, answer),
        None => denied_to_any(
            answer
                .reason
                .as_deref()
                .unwrap_or("Airlock: no hook dialect"),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
