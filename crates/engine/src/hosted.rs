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
use airlock_core::{SessionStatus, TurnStatus};
use airlock_protocol::{AcpAgentView, EngineEvent, SessionRow, TurnOutcome};
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
}

impl std::fmt::Debug for HostedTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedTurn")
            .field("session", &self.session.name)
            .finish_non_exhaustive()
    }
}

impl HostedTurn {
    /// Streams a piece of the agent's answer to whoever watches the chat.
    pub fn text_delta(&self, text: &str) {
        self.inner.emit(EngineEvent::TextDelta {
            session: self.session.name.clone(),
            text: text.to_string(),
        });
    }

    /// Keeps a message in the chat (what the agent said, or what Airlock says of it).
    pub fn say(&self, text: &str) -> Result<()> {
        self.inner
            .store
            .append_assistant_message(&self.session.id, text)?;
        Ok(())
    }

    /// Says what the chat waits for (the person, the agent).
    pub fn status(&self, status: SessionStatus) {
        if let Err(error) = self
            .inner
            .store
            .set_session_status(&self.session.id, status, None)
        {
            tracing::warn!(%error, "cannot record a hosted chat's status");
        }
        self.inner.emit(EngineEvent::SessionStatus {
            session: self.session.name.clone(),
            status,
        });
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
        if let Err(e) =
            self.inner
                .store
                .set_session_status(&self.session.id, session_status, error.as_deref())
        {
            tracing::error!(%e, "cannot record the end of a hosted turn");
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

fn end_hosted(inner: &Inner, session_id: &str, why: &str) -> Result<()> {
    inner.store.end_hosted_session(session_id, why)?;
    for approval_id in inner.store.pending_of_session(session_id)? {
        inner.withdraw(&approval_id, &format!("withdrawn: {why}"));
    }
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
                    .hosted_agent_call(&session, shell("fake"), Some("fake asks: echo hi".into()))
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
                .hosted_agent_call(&session.id, shell(agent), None)
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
                    .hosted_agent_call(&session, shell("fake"), None)
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
