//! The push to the person's own ntfy topic: when approvals wait, "3 approvals waiting".
//! Requests that arrive together (one model step's calls) make one push. Only the count leaves
//! the machine — no tool, argument, approval id or address (the topic's server, and whoever
//! reads the topic, learn nothing else); a failed push is logged and changes nothing about the
//! approvals.

use airlock_engine::{Engine, EngineEvent};
use airlock_protocol::NtfyPush;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long after a request the push waits for the rest of its burst.
const BURST: Duration = Duration::from_millis(1500);
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("the ntfy server could not be reached: {0}")]
    Unreachable(String),
    #[error("the ntfy server refused the push: HTTP {status} {body}")]
    Refused { status: u16, body: String },
}

/// The text of a push for `waiting` pending items.
pub fn message(waiting: usize) -> String {
    match waiting {
        1 => "1 approval waiting".to_string(),
        n => format!("{n} approvals waiting"),
    }
}

/// Publishes one push (ntfy's HTTP API: POST the message to SERVER/TOPIC, options as headers).
pub async fn publish(
    http: &reqwest::Client,
    push: &NtfyPush,
    waiting: usize,
) -> Result<(), PushError> {
    let mut request = http
        .post(format!("{}/{}", push.server, push.topic))
        .timeout(PUBLISH_TIMEOUT)
        .header("Title", "Airlock")
        .header("Tags", "lock")
        .body(message(waiting));
    if let Some(token) = &push.token {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .map_err(|e| PushError::Unreachable(e.to_string()))?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body: String = response
        .text()
        .await
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    Err(PushError::Refused {
        status: status.as_u16(),
        body,
    })
}

/// Pushes while the engine runs: after each burst of requests, when the push is on and
/// something still waits. It listens from the call on, not from the future's first poll, so a
/// request made right after is not missed.
pub fn run(engine: Engine) -> impl Future<Output = ()> + Send + 'static {
    let events = engine.subscribe();
    pushes(engine, events)
}

async fn pushes(engine: Engine, mut events: tokio::sync::broadcast::Receiver<EngineEvent>) {
    let http = reqwest::Client::new();
    loop {
        match events.recv().await {
            Ok(EngineEvent::ApprovalRequested { .. }) => {}
            Ok(_) | Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        }
        let burst = tokio::time::sleep(BURST);
        tokio::pin!(burst);
        loop {
            tokio::select! {
                () = &mut burst => break,
                event = events.recv() => if let Err(RecvError::Closed) = event {
                    return;
                },
            }
        }
        let Ok(Some(push)) = engine.push_ntfy() else {
            continue;
        };
        let waiting = engine.inbox().map(|items| items.len()).unwrap_or(0);
        if waiting == 0 {
            continue;
        }
        if let Err(error) = publish(&http, &push, waiting).await {
            tracing::warn!("{error}");
        }
    }
}
