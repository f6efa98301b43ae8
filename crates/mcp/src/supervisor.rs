//! One server's life: connect, list and pin its tools, offer them, wait; when it dies, take its
//! tools away, say why, and start it again after a backoff (0.5 s doubling up to 30 s). A
//! remote server that refuses to list its tools for want of scope (`403 insufficient_scope`)
//! shows as needing a sign-in while the person is asked in the inbox for a wider one; the list
//! is asked again once after that sign-in succeeded, and otherwise the server waits for the
//! person (never an empty list, never a loop of browser windows).

use crate::client::{AirlockClient, InFlight};
use crate::connect::connect;
use crate::oauth::TokenStore;
use crate::source::McpTools;
use crate::wider::WiderSignIn;
use airlock_core::{ServerConfig, ToolDef};
use airlock_engine::PinCheck;
use airlock_engine::{Engine, ServerStatus};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The state of a server that refuses Airlock until the person signs in (again).
pub const SIGN_IN_NEEDED: &str = "sign-in-needed";

/// Why a connection ended.
enum Ended {
    /// Started again after a backoff (unless it wants a new sign-in).
    Failed(String),
    /// It wants a wider sign-in the person did not give: it waits for them (`servers login`).
    WiderSignInNeeded(String),
}

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

pub(crate) struct Supervisor {
    pub engine: Engine,
    pub name: String,
    pub config: ServerConfig,
    pub log: Option<PathBuf>,
    pub status: Arc<Mutex<ServerStatus>>,
}

impl Supervisor {
    fn set(&self, f: impl FnOnce(&mut ServerStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|p| p.into_inner()));
        self.engine.announce_server_change(&self.name);
    }

    pub(crate) async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut backoff = FIRST_BACKOFF;
        loop {
            self.set(|s| {
                s.state = "starting".into();
                s.pid = None;
            });
            let stopped = stop.clone();
            let reason = tokio::select! {
                reason = self.serve_once(&mut backoff, &stopped) => reason,
                _ = stop.wait_for(|stop| *stop) => None,
            };
            // Stopped: whoever stopped it took its tools away (and may have started a successor).
            let Some(ended) = reason else { return };
            self.engine.unregister_tools(&self.name);
            let reason = match ended {
                Ended::Failed(reason) => reason,
                Ended::WiderSignInNeeded(why) => {
                    tracing::warn!(server = %self.name, %why, "the MCP server wants a wider sign-in");
                    self.sign_in_needed(why);
                    let _ = stop.wait_for(|stop| *stop).await;
                    return;
                }
            };
            // A server that wants a (new) sign-in is not retried: only the person can sign in.
            // It says so until `airlock servers login` (or a change to the server) restarts it.
            if let Some(store) = self.sign_in_store()
                && crate::oauth::needs_sign_in(&store).await
            {
                tracing::warn!(server = %self.name, "the MCP server wants a sign-in");
                self.sign_in_needed(format!(
                    "sign in again: airlock servers login {}",
                    self.name
                ));
                let _ = stop.wait_for(|stop| *stop).await;
                return;
            }
            tracing::warn!(server = %self.name, %reason, "MCP server failed; restarting in {backoff:?}");
            self.set(|s| {
                s.state = "failed".into();
                s.reason = Some(reason);
                s.pid = None;
                s.tools = 0;
                s.restarts += 1;
            });
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.wait_for(|stop| *stop) => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// The server refuses Airlock until the person signs in: said in the window, the tray and
    /// `airlock servers`, with `reason`.
    fn sign_in_needed(&self, reason: String) {
        self.set(|s| {
            s.state = SIGN_IN_NEEDED.into();
            s.reason = Some(reason);
            s.pid = None;
            s.tools = 0;
        });
    }

    /// Where a remote server's sign-in is kept (none for stdio servers).
    fn sign_in_store(&self) -> Option<TokenStore> {
        match &self.config {
            ServerConfig::Http { url, .. } => {
                Some(TokenStore::new(self.engine.data_dir(), &self.name, url))
            }
            ServerConfig::Stdio { .. } => None,
        }
    }

    /// Runs one connection until it ends; returns why.
    async fn serve_once(
        &self,
        backoff: &mut Duration,
        stopped: &watch::Receiver<bool>,
    ) -> Option<Ended> {
        let in_flight: InFlight = Arc::new(Mutex::new(Vec::new()));
        let (list_changed, mut list_changed_rx) = mpsc::unbounded_channel();
        let client = AirlockClient {
            engine: self.engine.clone(),
            server: self.name.clone(),
            in_flight: in_flight.clone(),
            list_changed,
        };
        let store = self.sign_in_store();
        let connection =
            match connect(&self.config, self.log.as_deref(), client, store.as_ref()).await {
                Ok(connection) => connection,
                Err(reason) => return Some(Ended::Failed(reason)),
            };
        let peer = connection.running.peer().clone();
        let pid = connection.pid;
        if let Err(reason) = self.offer_tools(&peer, &in_flight, stopped).await {
            return Some(reason);
        }
        *backoff = FIRST_BACKOFF;
        self.set(|s| {
            s.state = "ready".into();
            s.reason = None;
            s.pid = pid;
        });
        let cancel = connection.running.cancellation_token();
        let mut waiting = std::pin::pin!(connection.running.waiting());
        loop {
            tokio::select! {
                quit = &mut waiting => {
                    return Some(Ended::Failed(match quit {
                        Ok(reason) => format!("the server closed the connection ({reason:?})"),
                        Err(error) => format!("the connection task failed: {error}"),
                    }));
                }
                Some(()) = list_changed_rx.recv() => {
                    // A burst (or a flood) of list_changed is one re-list, not one per message.
                    while list_changed_rx.try_recv().is_ok() {}
                    if let Err(reason) = self.offer_tools(&peer, &in_flight, stopped).await {
                        cancel.cancel();
                        return Some(reason);
                    }
                }
            }
        }
    }

    /// Every tool (all pages). Refused for want of scope, the person is asked in the inbox for a
    /// wider sign-in (the server meanwhile shows as needing one), and the list is asked again
    /// once, only after that sign-in succeeded.
    async fn list_tools(&self, peer: &Peer<RoleClient>) -> Result<Vec<rmcp::model::Tool>, Ended> {
        let error = match peer.list_all_tools().await {
            Ok(listed) => return Ok(listed),
            Err(error) => error,
        };
        let store = self.sign_in_store();
        let Some((store, (challenge, scope))) = store
            .as_ref()
            .and_then(|store| Some((store, WiderSignIn::asked_by(&error, store)?)))
        else {
            return Err(Ended::Failed(format!("tools/list failed: {error}")));
        };
        let name = &self.name;
        self.sign_in_needed(format!(
            "needs a wider sign-in to list its tools (scope '{scope}'): sign in from the Inbox"
        ));
        let asked = WiderSignIn {
            server: name,
            store,
            challenge: &challenge,
            scope: &scope,
            to: "list its tools",
            context: None,
        };
        asked.ask_and_sign_in(&self.engine).await.map_err(|why| {
            Ended::WiderSignInNeeded(format!(
                "needs a wider sign-in to list its tools (scope '{scope}'), and {why}; to be asked again: airlock servers login {name}"
            ))
        })?;
        let listed = peer.list_all_tools().await.map_err(|error| {
            Ended::WiderSignInNeeded(format!(
                "refused to list its tools again after the wider sign-in ({error}); sign in again: airlock servers login {name}"
            ))
        })?;
        self.set(|s| {
            s.state = "ready".into();
            s.reason = None;
        });
        Ok(listed)
    }

    /// Lists every tool (all pages), pins each definition and offers them to the engine.
    async fn offer_tools(
        &self,
        peer: &Peer<RoleClient>,
        in_flight: &InFlight,
        stopped: &watch::Receiver<bool>,
    ) -> Result<(), Ended> {
        let listed = self.list_tools(peer).await?;
        let mut tools = Vec::with_capacity(listed.len());
        let mut skipped = Vec::new();
        for tool in listed {
            let model_name = airlock_core::model_tool_name(&self.name, &tool.name);
            if !is_model_tool_name(&model_name) {
                skipped.push(format!("{}: '{model_name}' is not a name models accept (letters, digits, _ and -, at most 64)", tool.name));
                continue;
            }
            let pinned = crate::listed_definition(&tool);
            let annotations = pinned["annotations"].clone();
            let def = ToolDef {
                annotations: (!annotations.is_null()).then(|| annotations.clone()),
                server: self.name.clone(),
                name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or_default().to_string(),
                input_schema: Value::Object((*tool.input_schema).clone()),
                read_only_hint: tool
                    .annotations
                    .as_ref()
                    .and_then(|a| a.read_only_hint)
                    .unwrap_or(false),
            };
            match self.engine.check_tool_pin(
                &self.name,
                &def.name,
                &pinned,
                &airlock_core::args_hash(&pinned),
            ) {
                Ok(PinCheck::Changed(what)) => {
                    tracing::warn!(server = %self.name, tool = %def.name, %what, "tool changed; its grants are suspended")
                }
                Ok(_) => {}
                Err(error) => {
                    return Err(Ended::Failed(format!("cannot pin the tools: {error}")));
                }
            }
            tools.push(def);
        }
        let count = tools.len();
        let source = McpTools {
            engine: self.engine.clone(),
            server: self.name.clone(),
            peer: peer.clone(),
            tools,
            in_flight: in_flight.clone(),
            sign_in: self.sign_in_store(),
        };
        if *stopped.borrow() {
            return Ok(()); // replaced or disabled meanwhile: offer nothing
        }
        self.engine.register_tools(&self.name, Arc::new(source));
        self.set(|s| {
            s.tools = count;
            s.skipped_tools = skipped;
        });
        Ok(())
    }
}

/// Whether model APIs take this as a function name (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). One tool
/// with a bad name would make every model request of every chat fail, so such tools are skipped.
fn is_model_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::is_model_tool_name;

    #[test]
    fn model_tool_names() {
        assert!(is_model_tool_name("every__get-sum"));
        assert!(!is_model_tool_name("fs__read.file"));
        assert!(!is_model_tool_name(&"x".repeat(65)));
    }
}
