//! One hosted agent: its process (its own process group, killed with the chat, the app, or at
//! the next start after a crash), the JSON-RPC lines on its stdio, and its permission requests
//! on their way through Airlock's decision path.

use crate::mapping;
use airlock_core::{CallState, TurnStatus};
use airlock_engine::{AgentToolReport, Engine, HostedTranscript, HostedTurn};
use airlock_protocol::{AcpAgentView, AgentVerdict};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::pin::pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

/// The longest line (one JSON-RPC message) an agent may send.
const MAX_LINE: usize = 8 * 1024 * 1024;
/// More messages than this within a second is a flood: the agent is stopped.
const MAX_MESSAGES_PER_SECOND: u32 = 2000;
/// How long an agent may take to start and open its session (opencode takes ~13 s here).
const START_WITHIN: Duration = Duration::from_secs(120);
/// How long a cancelled turn may take to end before the agent is stopped.
const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// The most of the agent's answer kept per turn.
const MAX_TEXT: usize = 1024 * 1024;
/// The most tool calls of one turn shown in the chat.
const MAX_TOOL_CALLS: usize = 1000;
/// The stderr lines kept to say why an agent ended.
const STDERR_LINES: usize = 8;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A permission request the agent waits on.
struct Open {
    id: Value,
    task: Option<AbortHandle>,
}

/// What the agent said in the current turn.
#[derive(Default)]
struct TurnLog {
    /// Its answer, all of it (the turn's outcome).
    text: String,
    /// How much it thought this turn (shown apart, never its answer), counted against
    /// [`MAX_TEXT`].
    thought_len: usize,
    /// What each of its tool calls is, as its updates said it (merged), by its id.
    tool_info: HashMap<String, Value>,
    /// What Airlock says of the turn (a denial and its reason), kept in the chat at its end.
    notes: Vec<String>,
    /// The reasons of the turn's denials, for the agent's model (see [`follow_up`]).
    denials: Vec<String>,
    /// The chat's record of the turn: the text and a card per tool call.
    transcript: Option<HostedTranscript>,
    /// The agent's plan as it last sent it (each `plan` update replaces it), kept at the end.
    plan: Option<String>,
}

/// The user message that tells the agent's model why Airlock denied its calls: no ACP answer
/// carries a reason, so it follows the turn as the next prompt of the same ACP session.
fn follow_up(denials: &[String]) -> String {
    denials.join("\n")
}

pub(crate) struct Running {
    engine: Engine,
    /// The Airlock session it hosts.
    session_id: String,
    pub(crate) agent: AcpAgentView,
    folder: String,
    pid: Option<u32>,
    acp_session: Mutex<Option<String>>,
    out: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    calls: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    permissions: Mutex<HashMap<String, Open>>,
    log: Mutex<TurnLog>,
    stderr: Mutex<VecDeque<String>>,
    /// Why it ended, once it did.
    ended: watch::Sender<Option<String>>,
}

/// Reads one line of at most `max` bytes into `line` (without its newline); false at the end.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        if let Some(end) = available.iter().position(|b| *b == b'\n') {
            line.extend_from_slice(&available[..end]);
            reader.consume(end + 1);
            return Ok(true);
        }
        let n = available.len();
        line.extend_from_slice(available);
        reader.consume(n);
        if line.len() > max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("it sent a message over {} MiB", max / (1024 * 1024)),
            ));
        }
    }
}

fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let shown: String = text.chars().filter(|c| !c.is_control()).take(80).collect();
    if shown.len() < text.len() {
        format!("{shown}…")
    } else {
        shown
    }
}

impl Running {
    /// Starts the agent's process in `folder`, in a process group of its own.
    pub(crate) fn spawn(
        engine: Engine,
        agent: &AcpAgentView,
        folder: &Path,
        session_id: &str,
    ) -> Result<Arc<Self>, String> {
        let (program, args) = agent
            .command
            .split_first()
            .ok_or_else(|| "the agent has no command".to_string())?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        let pid = child.id();
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the agent's stdio is missing".into());
        };
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        let running = Arc::new(Self {
            engine: engine.clone(),
            session_id: session_id.to_string(),
            agent: agent.clone(),
            folder: folder.to_string_lossy().into_owned(),
            pid,
            acp_session: Mutex::new(None),
            out,
            next_id: AtomicU64::new(1),
            calls: Mutex::new(HashMap::new()),
            permissions: Mutex::new(HashMap::new()),
            log: Mutex::new(TurnLog::default()),
            stderr: Mutex::new(VecDeque::new()),
            ended: watch::channel(None).0,
        });
        if let Err(error) = engine.note_hosted_process(session_id, pid) {
            tracing::warn!(%error, "cannot record a hosted agent's process");
        }
        tokio::spawn(async move {
            while let Some(line) = out_rx.recv().await {
                let written = async {
                    stdin.write_all(line.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if written.await.is_err() {
                    break;
                }
            }
        });
        let me = running.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr);
            let mut line = Vec::new();
            while let Ok(true) = read_line(&mut lines, &mut line, 64 * 1024).await {
                let mut tail = lock(&me.stderr);
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(preview(&line));
                line.clear();
            }
        });
        let me = running.clone();
        tokio::spawn(async move {
            if let Some(why) = me.read(stdout).await {
                me.end(why);
            }
        });
        let me = running.clone();
        tokio::spawn(async move {
            // This task owns the child: dropped with the runtime, the process is killed.
            let status = child.wait().await;
            let last = lock(&me.stderr).back().cloned();
            let why = match (status, last) {
                (Ok(status), Some(last)) => format!("it exited ({status}): {last}"),
                (Ok(status), None) => format!("it exited ({status})"),
                (Err(e), _) => format!("it could not be waited for: {e}"),
            };
            me.end(why);
        });
        Ok(running)
    }

    pub(crate) fn alive(&self) -> bool {
        self.ended.borrow().is_none()
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// `initialize`, then `session/new` in the chat's folder.
    pub(crate) async fn open_session(&self) -> Result<(), String> {
        self.request(
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false},
                "clientInfo": {"name": "airlock", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .await?;
        let session = self
            .request("session/new", json!({"cwd": self.folder, "mcpServers": []}))
            .await?;
        let id = session
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or("its session/new answer has no sessionId")?;
        *lock(&self.acp_session) = Some(id.to_string());
        Ok(())
    }

    /// Waits until the agent ended; why.
    pub(crate) async fn ended(&self) -> String {
        let mut ended = self.ended.subscribe();
        match ended.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            Err(_) => "it ended".into(),
        }
    }

    /// Stops the agent (its whole process group) for `why`; said in its chat, and every item it
    /// waited on withdrawn. The first reason given stays.
    pub(crate) fn end(&self, why: String) {
        let first = self.ended.send_if_modified(|ended| {
            if ended.is_none() {
                *ended = Some(why.clone());
                true
            } else {
                false
            }
        });
        if !first {
            return;
        }
        self.kill();
        for (_, call) in lock(&self.calls).drain() {
            let _ = call.send(Err(why.clone()));
        }
        for (_, open) in lock(&self.permissions).drain() {
            if let Some(task) = open.task {
                // Its wait dropped: the inbox item is withdrawn.
                task.abort();
            }
        }
        let said = format!("The agent {} ended: {why}", self.agent.name);
        if let Err(error) = self.engine.end_hosted(&self.session_id, &said) {
            tracing::warn!(%error, "cannot record that a hosted agent ended");
        }
    }

    /// Kills the agent's process group: the agent and whatever it started.
    fn kill(&self) {
        #[cfg(unix)]
        {
            if let Some(pid) = self
                .pid
                .and_then(|pid| rustix::process::Pid::from_raw(pid as i32))
            {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
    }

    fn send(&self, message: Value) {
        let _ = self.out.send(message.to_string());
    }

    fn respond(&self, id: Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Sends a request and waits for its answer (or the agent's end, or [`START_WITHIN`]).
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let answer = self.start_request(method, params);
        match tokio::time::timeout(START_WITHIN, answer).await {
            Ok(answer) => answer,
            Err(_) => Err(format!(
                "it did not answer {method} within {} s",
                START_WITHIN.as_secs()
            )),
        }
    }

    fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> impl Future<Output = Result<Value, String>> + use<> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.calls).insert(id, tx);
        let gone = self.ended.borrow().clone();
        if gone.is_none() {
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        }
        async move {
            if let Some(why) = gone {
                return Err(why);
            }
            rx.await.unwrap_or_else(|_| Err("it ended".into()))
        }
    }

    /// Reads the agent's messages until its output ends (`None`) or it must be stopped (why).
    async fn read(self: &Arc<Self>, stdout: tokio::process::ChildStdout) -> Option<String> {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        let mut window = Instant::now();
        let mut in_window = 0u32;
        loop {
            line.clear();
            match read_line(&mut reader, &mut line, MAX_LINE).await {
                Ok(false) => return None,
                Ok(true) => {}
                Err(e) => return Some(format!("stopped by Airlock: {e}")),
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if window.elapsed() >= Duration::from_secs(1) {
                window = Instant::now();
                in_window = 0;
            }
            in_window += 1;
            if in_window > MAX_MESSAGES_PER_SECOND {
                return Some(format!(
                    "stopped by Airlock: it sent more than {MAX_MESSAGES_PER_SECOND} messages in a second"
                ));
            }
            let message: Value = match serde_json::from_slice(&line) {
                Ok(message @ Value::Object(_)) => message,
                _ => {
                    return Some(format!(
                        "stopped by Airlock: it sent something that is not ACP (JSON-RPC): {}",
                        preview(&line)
                    ));
                }
            };
            if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Some(format!(
                    "stopped by Airlock: it sent something that is not JSON-RPC 2.0: {}",
                    preview(&line)
                ));
            }
            self.handle(message);
        }
    }

    fn handle(self: &Arc<Self>, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message
            .get("id")
            .filter(|id| id.is_string() || id.is_number())
            .cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some("session/request_permission"), Some(id)) => self.on_permission(id, params),
            (Some(_), Some(id)) => self.send(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"},
            })),
            (Some("session/update"), None) => self.on_update(&params),
            (Some(_), None) => {}
            (None, Some(id)) => {
                let Some(call) = id.as_u64().and_then(|id| lock(&self.calls).remove(&id)) else {
                    return;
                };
                let answer = match (message.get("result"), message.get("error")) {
                    (_, Some(error)) => Err(error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("an error")
                        .to_string()),
                    (Some(result), None) => Ok(result.clone()),
                    (None, None) => Err("an answer without a result".into()),
                };
                let _ = call.send(answer);
            }
            (None, None) => {}
        }
    }

    fn on_update(&self, params: &Value) {
        let Some(update) = params.get("update") else {
            return;
        };
        let mut guard = lock(&self.log);
        let log = &mut *guard;
        match update.get("sessionUpdate").and_then(Value::as_str) {
            Some("agent_message_chunk") => {
                if let Some(text) = update.pointer("/content/text").and_then(Value::as_str)
                    && log.text.len() + text.len() <= MAX_TEXT
                {
                    log.text.push_str(text);
                    if let Some(transcript) = log.transcript.as_mut() {
                        transcript.text(text);
                    }
                }
            }
            // Its thinking: streamed and kept apart from its answer, never the turn's outcome.
            Some("agent_thought_chunk") => {
                if let Some(text) = update.pointer("/content/text").and_then(Value::as_str)
                    && log.thought_len + text.len() <= MAX_TEXT
                {
                    log.thought_len += text.len();
                    if let Some(transcript) = log.transcript.as_mut() {
                        transcript.thought(text);
                    }
                }
            }
            Some("plan") => log.plan = mapping::plan(update),
            Some("tool_call" | "tool_call_update") => {
                let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
                    return;
                };
                if !log.tool_info.contains_key(id) && log.tool_info.len() >= MAX_TOOL_CALLS {
                    return;
                }
                let info = log
                    .tool_info
                    .entry(id.to_string())
                    .or_insert_with(|| json!({}));
                mapping::merge(info, update);
                let report = mapping::report(info, update);
                if let Some(transcript) = log.transcript.as_mut()
                    && let Err(error) = transcript.agent_reports(id, report)
                {
                    tracing::warn!(%error, "cannot keep a hosted agent's tool call in its chat");
                }
            }
            _ => {}
        }
    }

    /// Decides the permission on Airlock's one decision path and answers with the agent's own
    /// option; the answer goes out once (a cancel may answer first).
    fn on_permission(self: &Arc<Self>, id: Value, params: Value) {
        let key = id.to_string();
        let tool_call_id = params
            .pointer("/toolCall/toolCallId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let earlier = tool_call_id
            .as_ref()
            .and_then(|t| lock(&self.log).tool_info.get(t).cloned());
        let acp_session = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let (call, shown) = mapping::call_of(
            &self.agent.name,
            &acp_session,
            &self.folder,
            &params,
            earlier.as_ref(),
        );
        let options = params.get("options").cloned().unwrap_or(Value::Null);
        let title = params
            .pointer("/toolCall/title")
            .or_else(|| earlier.as_ref().and_then(|e| e.get("title")))
            .and_then(Value::as_str)
            .unwrap_or(&call.tool)
            .to_string();
        // Its card in the chat (made now if the agent told nothing of the call before: Gemini)
        // shows the item's prompt, and then Airlock's answer.
        let card_key = tool_call_id.unwrap_or_else(|| format!("permission {key}"));
        let card = lock(&self.log).transcript.as_mut().and_then(|transcript| {
            let report = AgentToolReport {
                tool: Some(call.tool.clone()),
                args: Some(call.input.clone()),
                state: Some(CallState::Pending),
                result: None,
            };
            transcript
                .agent_reports(&card_key, report)
                .inspect_err(|error| tracing::warn!(%error, "cannot show a hosted agent's call"))
                .ok()
        });
        lock(&self.permissions).insert(key.clone(), Open { id, task: None });
        let me = self.clone();
        let own_key = key.clone();
        let task = tokio::spawn(async move {
            let tool = format!("{} ({})", call.tool, shown);
            let call_tool = call.tool.clone();
            let answer = me
                .engine
                .hosted_agent_call(&me.session_id, call, Some(shown), card)
                .await;
            let (verdict, edited) = match &answer {
                Ok(answer) => (Some(answer.verdict), answer.updated_input.is_some()),
                Err(_) => (None, false),
            };
            let mut log = lock(&me.log);
            let (state, result) = match &answer {
                Ok(answer) if answer.verdict == AgentVerdict::Deny => {
                    let reason = answer.reason.as_deref().unwrap_or("denied");
                    log.notes.push(format!("Airlock denied {tool}: {reason}"));
                    let who = match answer.decided_by.as_deref() {
                        Some("policy") => "Airlock's policy denied",
                        Some("engine" | "timeout") | None => "Airlock refused",
                        Some(_) => "The person denied",
                    };
                    log.denials.push(format!(
                        "{who} your tool call {call_tool} ({title}): {reason}"
                    ));
                    (CallState::Denied, airlock_core::execution_denied(reason))
                }
                Ok(answer) if answer.verdict == AgentVerdict::Allow && !edited => {
                    let state = if answer.approval_id.is_some() {
                        CallState::Approved
                    } else {
                        CallState::AutoAllowed
                    };
                    (state, Value::Null)
                }
                Ok(answer) if answer.verdict == AgentVerdict::Allow => {
                    let why = "an ACP answer cannot carry edited arguments, so it did not run";
                    log.notes.push(format!("Airlock cancelled {tool}: {why}"));
                    (
                        CallState::Cancelled,
                        json!({"type": "cancelled", "reason": why}),
                    )
                }
                Ok(_) => {
                    log.notes
                        .push(format!("Nobody decided {tool} in Airlock: it did not run"));
                    let why = "nobody decided it";
                    (
                        CallState::Cancelled,
                        json!({"type": "cancelled", "reason": why}),
                    )
                }
                Err(error) => {
                    let why = format!("Airlock could not decide it: {error}");
                    log.notes.push(format!(
                        "Airlock could not decide {tool}, so it did not run: {error}"
                    ));
                    (
                        CallState::Cancelled,
                        json!({"type": "cancelled", "reason": why}),
                    )
                }
            };
            let result = (!result.is_null()).then_some(result);
            if let Some(transcript) = log.transcript.as_mut()
                && let Err(error) = transcript.answered(&card_key, state, result)
            {
                tracing::warn!(%error, "cannot show Airlock's answer on a hosted agent's call");
            }
            drop(log);
            let result = mapping::outcome(verdict, edited, &options);
            let open = lock(&me.permissions).remove(&key);
            if let Some(open) = open {
                me.respond(open.id, result);
            }
        });
        if let Some(open) = lock(&self.permissions).get_mut(&own_key) {
            open.task = Some(task.abort_handle());
        }
    }

    /// `session/cancel`, and every open permission answered `cancelled` (Gemini waits for that
    /// answer and ignores the cancel until it comes); their items are withdrawn.
    fn cancel_turn(&self) {
        if let Some(session) = lock(&self.acp_session).clone() {
            self.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}));
        }
        let open: Vec<Open> = lock(&self.permissions).drain().map(|(_, o)| o).collect();
        for open in open {
            if let Some(task) = open.task {
                task.abort();
            }
            self.respond(open.id, mapping::cancelled());
        }
    }

    /// One turn: the person's message to the agent, what it says into the chat (its text as
    /// it comes, a card per tool call), until its answer, a cancel, or its end. When Airlock
    /// denied a call with a reason, the reason follows as the next message of the same ACP
    /// session (no ACP answer carries one), once per turn, before the turn ends.
    pub(crate) async fn prompt(self: &Arc<Self>, mut turn: HostedTurn) {
        *lock(&self.log) = TurnLog {
            transcript: Some(turn.transcript(&self.agent.name)),
            ..TurnLog::default()
        };
        let Some(session) = lock(&self.acp_session).clone() else {
            turn.finish(
                TurnStatus::Failed,
                None,
                Some("the agent has no session".into()),
            );
            return;
        };
        let mut text = turn.text.clone();
        let mut followed_up = false;
        let (result, cancelled) = loop {
            let (result, cancelled) = self.exchange(&session, &text, &mut turn).await;
            if cancelled || followed_up || result.is_err() || *turn.cancel.borrow() {
                break (result, cancelled);
            }
            let denials = std::mem::take(&mut lock(&self.log).denials);
            if denials.is_empty() {
                break (result, cancelled);
            }
            text = follow_up(&denials);
            followed_up = true;
            // Said in the chat before the agent answers it.
            let mut guard = lock(&self.log);
            let log = &mut *guard;
            log.notes
                .push(format!("Airlock told {}: {text}", self.agent.name));
            let notes = std::mem::take(&mut log.notes);
            if let Some(transcript) = log.transcript.as_mut()
                && let Err(error) = transcript.note(&notes.join("\n"))
            {
                tracing::warn!(%error, "cannot keep what Airlock said of a hosted turn");
            }
        };
        let mut log = std::mem::take(&mut *lock(&self.log));
        if let Some(plan) = log.plan.take() {
            log.notes.insert(0, plan);
        }
        if let Some(mut transcript) = log.transcript.take() {
            let kept = transcript.end().and_then(|()| {
                if log.notes.is_empty() {
                    Ok(())
                } else {
                    transcript.note(&log.notes.join("\n"))
                }
            });
            if let Err(error) = kept {
                tracing::warn!(%error, "cannot keep what a hosted agent said");
            }
        }
        let answer_text = (!log.text.trim().is_empty()).then(|| log.text.trim().to_string());
        match result {
            Ok(result) => {
                let stop = result.get("stopReason").and_then(Value::as_str);
                let status = if cancelled || stop == Some("cancelled") {
                    TurnStatus::Cancelled
                } else {
                    TurnStatus::Completed
                };
                let answer_text =
                    answer_text.or_else(|| (!log.notes.is_empty()).then(|| log.notes.join("\n")));
                turn.finish(status, answer_text, None);
            }
            Err(why) => {
                let status = if cancelled {
                    TurnStatus::Cancelled
                } else {
                    TurnStatus::Failed
                };
                turn.finish(
                    status,
                    answer_text,
                    Some(format!("the agent {}: {why}", self.agent.name)),
                );
            }
        }
    }

    /// One `session/prompt` with `text`, until its answer, a cancel (then `true`), or the
    /// agent's end.
    async fn exchange(
        self: &Arc<Self>,
        session: &str,
        text: &str,
        turn: &mut HostedTurn,
    ) -> (Result<Value, String>, bool) {
        let mut answer = pin!(self.start_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        ));
        let mut ended = pin!(self.ended());
        let mut cancelled = false;
        let mut watching = true;
        let mut deadline = pin!(tokio::time::sleep(Duration::from_secs(365 * 24 * 3600)));
        let result = loop {
            tokio::select! {
                answer = &mut answer => break answer,
                why = &mut ended => break Err(why),
                changed = turn.cancel.changed(), if watching && !cancelled => {
                    match changed {
                        Ok(()) if *turn.cancel.borrow() => {
                            cancelled = true;
                            self.cancel_turn();
                            deadline.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                        }
                        Ok(()) => {}
                        Err(_) => watching = false,
                    }
                }
                () = &mut deadline, if cancelled => {
                    let why = format!("it did not stop within {} s of the cancel", CANCEL_GRACE.as_secs());
                    self.end(why.clone());
                    break Err(why);
                }
            }
        };
        (result, cancelled)
    }
}
