//! Chats hosted by an agent over the Agent Client Protocol (ACP): Airlock starts the agent in
//! the chat's folder (`crates/acp`, behind [`AgentHost`]), sends it the person's messages, keeps
//! what it says in the chat, and decides every permission it asks for on the one decision path
//! ([`Engine::hosted_agent_call`]). A hosted chat's turn is an ordinary turn of the engine's:
//! `wait_turn`, `cancel_turn` and a busy refusal work on it as on Airlock's own loop.
//!
//! Nothing outlives the engine: after a restart every chat still hosted says its agent ended,
//! its waiting items are withdrawn (nothing is approved on anyone's behalf) and the agent's
//! process group, if a crash left it running, is killed.

use crate::{Engine, EngineError, Inner, Result, Turn, TurnWatch};
use airlock_core::{CallState, SessionStatus, TurnStatus, args_hash, ids};
use airlock_protocol::{AcpAgentView, EngineEvent, SessionRow, TurnOutcome};
use airlock_store::{HostedCallUpdate, NewCall};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::watch;

/// Runs hosted agents. Implemented by `airlock_acp::AcpHost`, set by the composition root.
pub trait AgentHost: Send + Sync {
    /// Sends the turn's message to the chat's agent (started in `folder` when it does not run)
    /// and ends `turn` when the agent's turn ends.
    fn prompt(&self, engine: Engine, agent: AcpAgentView, folder: PathBuf, turn: HostedTurn);
}

/// One turn of a hosted chat: what the agent says goes into the chat; dropping it unfinished
/// ends it as failed.
pub struct HostedTurn {
    inner: Arc<Inner>,
    pub session: SessionRow,
    /// The person's message.
    pub text: String,
    /// Becomes true when the person cancels the turn.
    pub cancel: watch::Receiver<bool>,
    state: watch::Sender<TurnWatch>,
    finished: bool,
    /// The chat's hold under this replica's lease: ending the turn is fenced by it.
    fence: Option<airlock_store::Fence>,
}

impl std::fmt::Debug for HostedTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedTurn")
            .field("session", &self.session.name)
            .finish_non_exhaustive()
    }
}

/// The most text of the agent's kept unsaved at once (a segment of its answer).
const MAX_SEGMENT: usize = 1024 * 1024;

/// The chat's record of a hosted turn, as Airlock's own loop keeps its steps: the agent's text
/// streams to whoever watches the chat ([`EngineEvent::TextDelta`]) and is kept as an
/// assistant message when the agent starts a tool call (or the turn ends); each tool call is
/// a card of that message, its state following the agent's reports and Airlock's answer. A
/// permission the agent asks for shows its prompt on the card (the item's `tool_call_id`).
/// What the agent thinks streams apart ([`EngineEvent::ThoughtDelta`]) and is kept beside
/// the message it came before (`MessageRow::thought`), never in its text.
pub struct HostedTranscript {
    inner: Arc<Inner>,
    session_id: String,
    session: String,
    agent: String,
    /// Text streamed since the last message kept.
    unsaved: String,
    /// Thinking streamed since the last message kept: kept with the next one.
    unsaved_thought: String,
    /// The message the next card joins; none: the next card starts one.
    message: Option<i64>,
    /// The agent's tool-call ids → their cards.
    cards: HashMap<String, Card>,
}

struct Card {
    id: String,
    state: CallState,
}

impl std::fmt::Debug for HostedTranscript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedTranscript")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// What the agent said of one of its tool calls: the fields it gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentToolReport {
    pub tool: Option<String>,
    pub args: Option<Value>,
    pub state: Option<CallState>,
    pub result: Option<Value>,
}

impl HostedTranscript {
    /// Streams a piece of the agent's answer to whoever watches the chat.
    pub fn text(&mut self, text: &str) {
        if text.is_empty() || self.unsaved.len() + text.len() > MAX_SEGMENT {
            return;
        }
        if self.unsaved.is_empty() && self.unsaved_thought.is_empty() && self.message.is_some() {
            // Text after the cards: the agent answers again, as after a step of the own loop.
            self.status(SessionStatus::Thinking);
        }
        self.unsaved.push_str(text);
        self.inner.emit(EngineEvent::TextDelta {
            session: self.session.clone(),
            text: text.to_string(),
        });
    }

    /// Streams a piece of the agent's thinking to whoever watches the chat, apart from its
    /// answer; kept with the message it comes before.
    pub fn thought(&mut self, text: &str) {
        if text.is_empty() || self.unsaved_thought.len() + text.len() > MAX_SEGMENT {
            return;
        }
        if self.unsaved.is_empty() && self.unsaved_thought.is_empty() && self.message.is_some() {
            // Thinking after the cards: the agent goes on, as after a step of the own loop.
            self.status(SessionStatus::Thinking);
        }
        self.unsaved_thought.push_str(text);
        self.inner.emit(EngineEvent::ThoughtDelta {
            session: self.session.clone(),
            text: text.to_string(),
        });
    }

    /// The card of the agent's tool call `agent_call_id`, if it has one.
    pub fn card(&self, agent_call_id: &str) -> Option<String> {
        self.cards.get(agent_call_id).map(|card| card.id.clone())
    }

    /// Records what the agent reports of its tool call `agent_call_id` (its first report makes
    /// the card, after the text said before it); the card's id. A state Airlock set by its
    /// answer (denied, cancelled) stays: the agent's "failed" that follows says nothing more.
    pub fn agent_reports(
        &mut self,
        agent_call_id: &str,
        report: AgentToolReport,
    ) -> Result<String> {
        if let Some(card) = self.cards.get(agent_call_id) {
            let id = card.id.clone();
            let kept = matches!(card.state, CallState::Denied | CallState::Cancelled);
            let state = report.state.filter(|_| !kept);
            let result = report.result.filter(|_| !kept);
            self.update(
                agent_call_id,
                HostedCallUpdate {
                    tool: report.tool,
                    args: report.args,
                    state,
                    result,
                },
            )?;
            return Ok(id);
        }
        let tool = report.tool.unwrap_or_else(|| "tool".into());
        let args = report
            .args
            .unwrap_or_else(|| Value::Object(Default::default()));
        let state = report.state.unwrap_or(CallState::Proposed);
        let call = NewCall {
            id: ids::new_id("call"),
            provider_call_id: agent_call_id.to_string(),
            model_name: tool.clone(),
            server: self.agent.clone(),
            tool,
            raw_args: args.to_string(),
            args_hash: Some(args_hash(&args)),
            args: Some(args),
            state,
            policy_step: None,
            policy_why: None,
            result: report.result,
            grant_use: None,
            same_as: None,
        };
        let content = std::mem::take(&mut self.unsaved);
        let thought = std::mem::take(&mut self.unsaved_thought);
        // Thinking before the call starts a message of its own, which it stands above.
        let message = if content.trim().is_empty() && thought.trim().is_empty() {
            self.message
        } else {
            None
        };
        let message =
            self.inner
                .store
                .add_hosted_call(&self.session_id, message, content.trim(), &call)?;
        self.message = Some(message);
        self.cards.insert(
            agent_call_id.to_string(),
            Card {
                id: call.id.clone(),
                state,
            },
        );
        self.keep_thought(message, &thought)?;
        // The streamed text is in the transcript now: whoever watches reads it again.
        self.status(SessionStatus::RunningTools);
        Ok(call.id)
    }

    /// Airlock's answer to the agent's permission for `agent_call_id`: the card's state (and,
    /// for a refusal, what was refused and why).
    pub fn answered(
        &mut self,
        agent_call_id: &str,
        state: CallState,
        result: Option<Value>,
    ) -> Result<()> {
        self.update(
            agent_call_id,
            HostedCallUpdate {
                state: Some(state),
                result,
                ..HostedCallUpdate::default()
            },
        )?;
        // The chat no longer waits for the person: the agent runs the call, or goes on.
        self.status(match state {
            CallState::Approved | CallState::AutoAllowed => SessionStatus::RunningTools,
            _ => SessionStatus::Thinking,
        });
        Ok(())
    }

    /// Keeps what Airlock says of the turn (a denial and its reason) after what the agent said.
    pub fn note(&mut self, text: &str) -> Result<()> {
        self.flush()?;
        self.inner
            .store
            .append_assistant_message(&self.session_id, text)?;
        self.message = None;
        Ok(())
    }

    /// The turn ends: the text not kept yet is kept, and a call still waiting for Airlock's
    /// answer did not run (its item went with the turn).
    pub fn end(&mut self) -> Result<()> {
        self.flush()?;
        let waiting: Vec<String> = self
            .cards
            .iter()
            .filter(|(_, card)| card.state == CallState::Pending)
            .map(|(agent_call_id, _)| agent_call_id.clone())
            .collect();
        for agent_call_id in waiting {
            let result = serde_json::json!({"type": "cancelled", "reason": "the turn ended before it was decided"});
            let update = HostedCallUpdate {
                state: Some(CallState::Cancelled),
                result: Some(result),
                ..HostedCallUpdate::default()
            };
            self.update(&agent_call_id, update)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let content = std::mem::take(&mut self.unsaved);
        let thought = std::mem::take(&mut self.unsaved_thought);
        if !content.trim().is_empty() || !thought.trim().is_empty() {
            let message = self
                .inner
                .store
                .append_assistant_message(&self.session_id, content.trim())?;
            self.keep_thought(message, &thought)?;
            self.message = None;
        }
        Ok(())
    }

    fn keep_thought(&self, message: i64, thought: &str) -> Result<()> {
        if thought.trim().is_empty() {
            return Ok(());
        }
        Ok(self
            .inner
            .store
            .set_message_thought(message, thought.trim())?)
    }

    fn update(&mut self, agent_call_id: &str, update: HostedCallUpdate) -> Result<()> {
        let Some(card) = self.cards.get_mut(agent_call_id) else {
            return Ok(());
        };
        if update == HostedCallUpdate::default() {
            return Ok(());
        }
        self.inner.store.update_hosted_call(&card.id, &update)?;
        if let Some(state) = update.state {
            card.state = state;
        }
        self.inner.emit(EngineEvent::ToolFinished {
            session: self.session.clone(),
            tool_call_id: card.id.clone(),
            state: card.state.as_str().to_string(),
        });
        Ok(())
    }

    fn status(&self, status: SessionStatus) {
        if let Err(error) = self
            .inner
            .store
            .set_session_status(&self.session_id, status, None)
        {
            tracing::warn!(%error, "cannot record a hosted chat's status");
        }
        self.inner.emit(EngineEvent::SessionStatus {
            session: self.session.clone(),
            status,
        });
    }
}

impl HostedTurn {
    /// The turn's record in the chat (the agent's text and tool calls).
    pub fn transcript(&self, agent: &str) -> HostedTranscript {
        HostedTranscript {
            inner: self.inner.clone(),
            session_id: self.session.id.clone(),
            session: self.session.name.clone(),
            agent: agent.to_string(),
            unsaved: String::new(),
            unsaved_thought: String::new(),
            message: None,
            cards: HashMap::new(),
        }
    }

    /// Ends the turn: `answer` is what the agent said last, `error` why it failed.
    pub fn finish(mut self, status: TurnStatus, answer: Option<String>, error: Option<String>) {
        self.end(status, answer, error);
    }

    fn end(&mut self, status: TurnStatus, answer: Option<String>, error: Option<String>) {
        if self.finished {
            return;
        }
        self.finished = true;
        let session_status = if status == TurnStatus::Failed {
            SessionStatus::Failed
        } else {
            SessionStatus::Idle
        };
        match self.inner.store.set_session_status_fenced(
            &self.session.id,
            session_status,
            error.as_deref(),
            self.fence.as_ref(),
        ) {
            Ok(()) => {}
            // Another replica took the chat over (and ended it): nothing more is written here.
            Err(airlock_store::StoreError::LeaseLost { .. }) => {
                tracing::warn!(session = %self.session.name, "a hosted turn ended after another replica took its chat over");
            }
            Err(e) => tracing::error!(%e, "cannot record the end of a hosted turn"),
        }
        let outcome = TurnOutcome {
            session: self.session.name.clone(),
            status,
            answer,
            error,
        };
        self.inner.emit(EngineEvent::SessionStatus {
            session: self.session.name.clone(),
            status: session_status,
        });
        self.inner.emit(EngineEvent::TurnEnded {
            outcome: outcome.clone(),
        });
        self.state.send_replace(TurnWatch {
            running: false,
            outcome: Some(outcome),
        });
    }
}

impl Drop for HostedTurn {
    fn drop(&mut self) {
        self.end(
            TurnStatus::Failed,
            None,
            Some("the agent's turn ended without an answer".into()),
        );
    }
}

/// A hosted agent's name: a policy source of its own, so never a coding agent's, the built-in
/// server's or an MCP server's.
fn check_agent_name(inner: &Inner, name: &str) -> Result<()> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !fits {
        return Err(EngineError::Invalid(
            "an agent's name needs 1 to 64 letters, digits, '-', '_' or '.'".into(),
        ));
    }
    // A hook agent whose own program speaks ACP keeps its name when hosted (`Agent::speaks_acp`).
    let hostable_hook_agent = airlock_agents::hook_agent(name).is_some_and(|a| a.speaks_acp());
    if name == airlock_core::BUILTIN_SERVER
        || name == airlock_core::MCP_CLIENT
        || name == airlock_core::APP_CLIENT
        || ((airlock_core::AGENT_SOURCES.contains(&name)
            || airlock_agents::hook_agent(name).is_some())
            && !hostable_hook_agent)
        || inner.store.servers()?.iter().any(|s| s.name == name)
    {
        return Err(EngineError::Invalid(format!(
            "'{name}' is already the name of a server or of an agent Airlock answers; pick another"
        )));
    }
    Ok(())
}

impl Engine {
    pub fn set_agent_host(&self, host: Arc<dyn AgentHost>) {
        *self
            .inner
            .agent_host
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(host);
    }

    /// The agents Airlock can host, by name.
    pub fn acp_agents(&self) -> Result<Vec<AcpAgentView>> {
        Ok(self.inner.store.acp_agents()?)
    }

    /// Registers an agent to host (or changes its command).
    pub fn save_acp_agent(&self, name: &str, command: &[String]) -> Result<()> {
        check_agent_name(&self.inner, name)?;
        if command
            .first()
            .is_none_or(|program| program.trim().is_empty())
            || command
                .iter()
                .any(|a| a.len() > 4096 || a.contains('\0') || a.contains('\n'))
        {
            return Err(EngineError::Invalid(
                "the agent's command needs a program (and its arguments, one line each)".into(),
            ));
        }
        Ok(self.inner.store.save_acp_agent(name, command)?)
    }

    pub fn remove_acp_agent(&self, name: &str) -> Result<bool> {
        Ok(self.inner.store.remove_acp_agent(name)?)
    }

    /// Starts (or continues) the chat `session` with the hosted agent `agent` in `folder` (the
    /// workspace unless given): the agent runs there and gets `text`; returns at once.
    pub fn chat_with_agent(
        &self,
        agent: &str,
        session: &str,
        text: &str,
        folder: Option<&str>,
    ) -> Result<SessionRow> {
        let Some(view) = self.inner.store.acp_agent(agent)? else {
            return Err(EngineError::Invalid(format!(
                "no agent named '{agent}' (`airlock agents add {agent} --acp -- COMMAND…` adds one)"
            )));
        };
        let folder = match folder {
            Some(folder) => PathBuf::from(folder),
            None => self.inner.workspace.clone(),
        };
        let folder = match folder.canonicalize() {
            Ok(found) if folder.is_absolute() && found.is_dir() => found,
            _ => {
                return Err(EngineError::Invalid(format!(
                    "the agent's folder {} is not a folder (give an absolute path)",
                    folder.display()
                )));
            }
        };
        let row = self.inner.store.ensure_session(session)?;
        if let Some(why) = self.running_status(&row.id) {
            return Err(EngineError::Busy {
                session: row.name,
                why,
            });
        }
        self.inner
            .store
            .host_session(&row.id, &view.name, &folder.to_string_lossy())?;
        self.send_message(session, text)
    }

    /// The hosted chat's next turn (see [`Engine::send_message`]): refused when nothing here
    /// can host agents or the agent was removed.
    pub(crate) fn start_hosted_turn(
        &self,
        session: &SessionRow,
        hosted: airlock_store::HostedSession,
        text: &str,
    ) -> Result<SessionRow> {
        let host = self
            .inner
            .agent_host
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| EngineError::Invalid("this Airlock cannot host agents".into()))?;
        let Some(agent) = self.inner.store.acp_agent(&hosted.agent)? else {
            return Err(EngineError::Invalid(format!(
                "the chat's agent '{}' was removed; start another chat with `airlock chat --agent`",
                hosted.agent
            )));
        };
        // Held under this replica's lease while its agent runs here: another replica ends the
        // chat if this one stops (`replicas`).
        let fence = self
            .inner
            .hold(airlock_store::Work::HostedChat, &session.id);
        self.inner
            .store
            .host_session(&session.id, &hosted.agent, &hosted.folder)?;
        let (session, _) = self.inner.store.start_turn(&session.name, text)?;
        let (cancel, cancel_rx) = watch::channel(false);
        let (state, _) = watch::channel(TurnWatch {
            running: true,
            outcome: None,
        });
        self.inner
            .turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                session.id.clone(),
                Turn {
                    cancel,
                    state: state.clone(),
                },
            );
        self.inner.emit(EngineEvent::SessionStatus {
            session: session.name.clone(),
            status: SessionStatus::Thinking,
        });
        let turn = HostedTurn {
            inner: self.inner.clone(),
            session: session.clone(),
            text: text.to_string(),
            cancel: cancel_rx,
            state,
            finished: false,
            fence,
        };
        host.prompt(self.clone(), agent, PathBuf::from(&hosted.folder), turn);
        Ok(session)
    }

    /// The hosted chat's agent runs as process `pid` (its group's leader), or no longer.
    pub fn note_hosted_process(&self, session_id: &str, pid: Option<u32>) -> Result<()> {
        Ok(self.inner.store.set_hosted_pid(session_id, pid)?)
    }

    /// The hosted chat's agent ended (`why`, in the chat): its waiting items are withdrawn.
    pub fn end_hosted(&self, session_id: &str, why: &str) -> Result<()> {
        end_hosted(&self.inner, session_id, why)
    }
}

pub(crate) fn end_hosted(inner: &Inner, session_id: &str, why: &str) -> Result<()> {
    inner.store.end_hosted_session(session_id, why)?;
    for approval_id in inner.store.pending_of_session(session_id)? {
        inner.withdraw(&approval_id, &format!("withdrawn: {why}"));
    }
    inner.release(airlock_store::Work::HostedChat, session_id);
    Ok(())
}

/// After a restart: every chat still hosted ended with the previous process.
pub(crate) fn end_after_restart(inner: &Inner) -> Result<()> {
    for hosted in inner.store.live_hosted_sessions()? {
        if let Some(pid) = hosted.pid {
            kill_leftover(pid, Path::new(&hosted.folder));
        }
        end_hosted(
            inner,
            &hosted.session_id,
            &format!(
                "The agent {} ended: Airlock restarted. Send a message to start it again.",
                hosted.agent
            ),
        )?;
    }
    Ok(())
}

/// Kills the process group a crashed engine left, when its leader is still the agent (it still
/// works in the chat's folder: a reused process id is left alone).
fn kill_leftover(pid: u32, folder: &Path) {
    #[cfg(unix)]
    {
        let same = std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == folder);
        if let (true, Some(pid)) = (same, rustix::process::Pid::from_raw(pid as i32)) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = (pid, folder);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::tests::empty_engine as engine;
    use crate::{DecisionRequest, EngineConfig};
    use airlock_core::{ApprovalStatus, DecidedBy};
    use airlock_protocol::{AgentCall, AgentEvent, AgentVerdict};
    use serde_json::json;
    use std::time::Duration;

    fn shell(agent: &str) -> AgentCall {
        AgentCall {
            agent: agent.into(),
            source: None,
            client: None,
            agent_session: "acp-1".into(),
            cwd: Some("/work".into()),
            tool: "run_shell_command".into(),
            input: json!({"command": "echo hi > f.txt"}),
            tool_use_id: Some("call_1".into()),
            event: AgentEvent::PermissionRequest,
            editable: false,
            wait_ms: None,
            definition: None,
            prompt: None,
            defer: false,
            takes_reason: None,
        }
    }

    /// A chat hosted by the agent `fake` (nothing started: the store's binding alone).
    fn hosted_chat(engine: &Engine, folder: &Path) -> SessionRow {
        engine
            .save_acp_agent("fake", &["/bin/true".to_string()])
            .unwrap();
        let session = engine.store().ensure_session("chat").unwrap();
        engine
            .store()
            .host_session(&session.id, "fake", &folder.to_string_lossy())
            .unwrap();
        session
    }

    async fn waiting(engine: &Engine) -> crate::InboxItem {
        for _ in 0..500 {
            if let Some(item) = engine.inbox().unwrap().pop() {
                return item;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("nothing reached the inbox");
    }

    #[tokio::test]
    async fn a_hosted_agents_permission_is_an_item_of_its_chat_decided_on_the_one_path() {
        let (dir, engine) = engine();
        let session = hosted_chat(&engine, dir.path());
        let asking = {
            let engine = engine.clone();
            let session = session.id.clone();
            tokio::spawn(async move {
                engine
                    .hosted_agent_call(
                        &session,
                        shell("fake"),
                        Some("fake asks: echo hi".into()),
                        None,
                    )
                    .await
            })
        };
        let item = waiting(&engine).await;
        assert_eq!(
            item.session, "chat",
            "the chat's item, not a session of its own"
        );
        assert_eq!(item.server, "fake");
        assert!(
            item.why.starts_with("fake asks: echo hi — "),
            "{}",
            item.why
        );
        engine
            .decide(
                DecisionRequest::new(
                    &item.approval_id,
                    crate::Decision::Deny {
                        reason: Some("not here".into()),
                        remember: None,
                        exact_args: false,
                    },
                ),
                DecidedBy::Inbox,
            )
            .unwrap();
        let answer = asking.await.unwrap().unwrap();
        assert_eq!(answer.verdict, AgentVerdict::Deny);
        assert_eq!(answer.reason.as_deref(), Some("not here"));
    }

    #[tokio::test]
    async fn only_a_registered_agent_speaks_through_the_hosted_path() {
        let (dir, engine) = engine();
        let session = hosted_chat(&engine, dir.path());
        for agent in ["claude-code", "nobody"] {
            let refused = engine
                .hosted_agent_call(&session.id, shell(agent), None, None)
                .await;
            assert!(refused.is_err(), "{agent} spoke as a hosted agent");
        }
        assert!(engine.inbox().unwrap().is_empty());
        for name in [
            "builtin",
            "claude-code",
            "codex",
            "cursor",
            "mcp-client",
            "app",
            "a b",
            "",
        ] {
            assert!(
                engine.save_acp_agent(name, &["x".to_string()]).is_err(),
                "'{name}' was taken as a hosted agent's name"
            );
        }
        assert!(engine.save_acp_agent("qwen", &[]).is_err(), "no command");
        // Qwen Code's own program runs the hook and speaks ACP: hosted, it keeps its name.
        engine
            .save_acp_agent("qwen", &["qwen".to_string()])
            .unwrap();
    }

    /// A crash while a hosted agent waits: the next start says the chat's agent ended,
    /// withdraws its item at once (no agent can come back for it) and kills the process group
    /// the crash left, found by its leader still working in the chat's folder.
    #[tokio::test]
    async fn after_a_crash_a_hosted_chat_ends_its_items_go_and_its_agent_is_killed() {
        let (dir, engine) = engine();
        let folder = dir.path().join("project");
        std::fs::create_dir_all(&folder).unwrap();
        let folder = folder.canonicalize().unwrap();
        let session = hosted_chat(&engine, &folder);
        #[cfg(unix)]
        let mut leftover = {
            use std::os::unix::process::CommandExt;
            let child = std::process::Command::new("sleep")
                .arg("60")
                .current_dir(&folder)
                .process_group(0)
                .spawn()
                .unwrap();
            engine
                .note_hosted_process(&session.id, Some(child.id()))
                .unwrap();
            child
        };
        // The previous process still waits on the item; it never ends (as after SIGKILL).
        let waits = {
            let engine = engine.clone();
            let session = session.id.clone();
            tokio::spawn(async move {
                engine
                    .hosted_agent_call(&session, shell("fake"), None, None)
                    .await
            })
        };
        let item = waiting(&engine).await;
        let restarted = Engine::open(EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap();
        assert!(restarted.inbox().unwrap().is_empty(), "the item stayed");
        let row = restarted.approval(&item.approval_id).unwrap().unwrap();
        assert_eq!(row.status, ApprovalStatus::Withdrawn);
        let said = restarted.transcript("chat").unwrap();
        assert!(
            said.iter().any(|m| m
                .content
                .contains("The agent fake ended: Airlock restarted")),
            "{said:?}"
        );
        assert!(restarted.store().live_hosted_sessions().unwrap().is_empty());
        #[cfg(unix)]
        {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                if leftover.try_wait().unwrap().is_some() {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the crashed engine's agent still runs"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        waits.abort();
    }
}
