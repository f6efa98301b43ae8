//! The ACP host: Airlock runs agents that speak the Agent Client Protocol (Gemini CLI, Qwen
//! Code, OpenCode, Copilot CLI, Claude Code and Codex through their ACP adapters) as chats.
//! Each chat's agent runs in the chat's folder in a process group of its own; what it says goes
//! into the chat, and every `session/request_permission` goes through Airlock's one decision
//! path with the agent as the policy source (`gemini/run_shell_command`): run → the agent's
//! allow-once option at once, deny → its reject option, ask → an inbox item. Nothing runs on
//! an error: a cancel, the agent's end, garbage or a flood answer `cancelled` or stop the agent.
//!
//! The wire is JSON-RPC 2.0, one message a line, spoken here directly (see `agent.rs`): request
//! ids are echoed back as they came (codex-acp's are strings), unknown methods are answered
//! -32601, and the client advertises neither file system nor terminal, so the agents run their
//! tools themselves — after Airlock's answer.

mod agent;
mod mapping;
pub mod presets;

use agent::Running;
use airlock_engine::{AgentHost, Engine, HostedTurn};
use airlock_protocol::AcpAgentView;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

type Agents = Arc<Mutex<HashMap<String, Arc<Running>>>>;

/// The running agents, by the Airlock session they host.
#[derive(Default)]
pub struct AcpHost {
    running: Agents,
}

impl std::fmt::Debug for AcpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpHost").finish_non_exhaustive()
    }
}

fn lock(agents: &Agents) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Running>>> {
    agents.lock().unwrap_or_else(|p| p.into_inner())
}

impl AcpHost {
    /// A host for `engine`'s chats, set as its agent host.
    pub fn start(engine: &Engine) -> Arc<Self> {
        let host = Arc::new(Self::default());
        engine.set_agent_host(host.clone());
        host
    }

    /// Stops every hosted agent (the app or `serve` ends): each chat says its agent ended.
    pub fn stop_all(&self) {
        let running: Vec<Arc<Running>> = lock(&self.running).drain().map(|(_, r)| r).collect();
        for agent in running {
            agent.end("Airlock stopped".into());
        }
    }

    /// The hosted agents' processes (each its group's leader).
    pub fn pids(&self) -> Vec<u32> {
        lock(&self.running)
            .values()
            .filter_map(|r| r.pid())
            .collect()
    }
}

impl AgentHost for AcpHost {
    fn prompt(&self, engine: Engine, agent: AcpAgentView, folder: PathBuf, turn: HostedTurn) {
        let running = self.running.clone();
        tokio::spawn(run_turn(running, engine, agent, folder, turn));
    }
}

async fn run_turn(
    agents: Agents,
    engine: Engine,
    agent: AcpAgentView,
    folder: PathBuf,
    mut turn: HostedTurn,
) {
    let session_id = turn.session.id.clone();
    let existing = lock(&agents)
        .get(&session_id)
        .filter(|r| r.alive() && r.agent == agent)
        .cloned();
    let running = match existing {
        Some(running) => running,
        None => {
            if let Some(old) = lock(&agents).remove(&session_id) {
                old.end("its command changed".into());
            }
            let running = match Running::spawn(engine, &agent, &folder, &session_id) {
                Ok(running) => running,
                Err(why) => {
                    turn.finish(
                        airlock_core::TurnStatus::Failed,
                        None,
                        Some(format!("the agent {}: {why}", agent.name)),
                    );
                    return;
                }
            };
            lock(&agents).insert(session_id.clone(), running.clone());
            let opened = tokio::select! {
                opened = running.open_session() => opened,
                _ = turn.cancel.wait_for(|cancelled| *cancelled) => Err("the turn was cancelled while it started".into()),
            };
            if let Err(why) = opened {
                running.end(why.clone());
                lock(&agents).remove(&session_id);
                turn.finish(
                    airlock_core::TurnStatus::Failed,
                    None,
                    Some(format!("the agent {}: {why}", agent.name)),
                );
                return;
            }
            running
        }
    };
    running.prompt(turn).await;
    if !running.alive() {
        let mut agents = lock(&agents);
        if agents
            .get(&session_id)
            .is_some_and(|r| Arc::ptr_eq(r, &running))
        {
            agents.remove(&session_id);
        }
    }
}
