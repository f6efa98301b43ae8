//! Agents' HTTP hooks (Claude Code's `"type": "http"`): the agent posts its own hook event to
//! `/v1/agent-calls/hook/{agent}` with its own token and reads the answer in its own hook
//! dialect — the same reading and writing as the process hook (`airlock-hook`, crates/hook), and
//! the same engine call as `POST /v1/agent-calls`, without a process per call.
//!
//! Every answer is 200 with one JSON object in the agent's words: the decision, a denial that
//! says why (an event it cannot read, a refusal), or the agent's fallback when nobody decided
//! before the hook's timeout (`?timeout=SECS`, what `connect --http` wrote beside it). When no
//! engine answers at all, the agent's own `onFailure: "block"` blocks the call.

use airlock_agents::{Agent, HookEvent};
use airlock_core::DEFAULT_HOOK_TIMEOUT_SECS;
use airlock_engine::Engine;
use airlock_hook::{HookOutput, NoEngine, answer_for, denial, margin, request_of};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// The largest event a hook posts (the process hook reads as much from stdin).
pub const EVENT_BODY_LIMIT: usize = airlock_hook::MAX_EVENT_BYTES as usize;

#[derive(Debug, Deserialize)]
pub(crate) struct HookQuery {
    /// The agent's hook timeout in seconds, as its config says: the fallback is answered a
    /// little before it.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// The agent's event (the request's body) answered in its words: always one JSON object.
pub(crate) async fn answer(
    engine: &Engine,
    agent: &'static dyn Agent,
    query: &HookQuery,
    body: &[u8],
) -> String {
    let timeout = Duration::from_secs(query.timeout.unwrap_or(DEFAULT_HOOK_TIMEOUT_SECS).max(1));
    let wait = timeout.saturating_sub(margin(timeout));
    let event = match serde_json::from_slice::<Value>(body) {
        Ok(event) => event,
        Err(error) => {
            let why = format!("the hook's input is not JSON: {error}");
            return HookOutput::denied(agent, &why).stdout;
        }
    };
    // The dialect reads the agent's transcript (a file) for the session's first prompt.
    let request = tokio::task::spawn_blocking(move || request_of(agent, &event)).await;
    let (hook_event, mut call) = match request {
        Ok(Ok(request)) => request,
        Ok(Err(denied)) => return denied,
        Err(error) => {
            let why = format!("the hook's event could not be read: {error}");
            return HookOutput::denied(agent, &why).stdout;
        }
    };
    call.wait_ms = Some(wait.as_millis() as u64);
    let answer = match engine.agent_call(call).await {
        Ok(answer) => answer,
        // A refusal is a denial that says why, never a call let through.
        Err(error) => denial(&error.to_string()),
    };
    answer_in_words(engine.data_dir(), agent, hook_event, answer)
}

/// The answer in the agent's words, its fallback when nobody decided in time.
fn answer_in_words(
    data_dir: &std::path::Path,
    agent: &dyn Agent,
    event: HookEvent,
    answer: airlock_protocol::AgentAnswer,
) -> String {
    let fallback = airlock_client::agents::fallback_of(data_dir, agent.name());
    answer_for(agent, event, Ok::<_, NoEngine>(answer), fallback)
}
