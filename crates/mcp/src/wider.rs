//! A wider sign-in: a remote server refused a request (a call, its tool list) for want of scope
//! (`403 insufficient_scope`). The person is asked first — in the inbox, whether Airlock runs
//! the server or `airlock mcp-proxy` fronts it — and only once they agreed does the sign-in run
//! in the browser; the refused request is sent again once, only after it succeeded.

use crate::oauth::{self, TokenStore};
use airlock_engine::tools::CallContext;
use airlock_engine::{ElicitationAction, ElicitationAnswer, ElicitationRequest, Engine};
use rmcp::service::ServiceError;
use serde_json::json;

/// A server refused a request for want of scope (`403 insufficient_scope`): what it asked for.
pub(crate) struct WiderSignIn<'a> {
    pub server: &'a str,
    pub store: &'a TokenStore,
    /// The refusal's `WWW-Authenticate`.
    pub challenge: &'a str,
    pub scope: &'a str,
    /// What the refused request was for, as the person reads it ("run this call").
    pub to: &'a str,
    /// The call it came from, if any (its chat holds the question).
    pub context: Option<CallContext>,
}

impl WiderSignIn<'_> {
    /// The scope `error` (a refused request to the server kept in `store`) asks a wider sign-in
    /// for, with the refusal's challenge; `None` for any other failure.
    pub(crate) fn asked_by(error: &ServiceError, store: &TokenStore) -> Option<(String, String)> {
        let challenge = error.auth_challenge()?;
        let scope = oauth::wider_scope_asked(challenge, store.url())?;
        Some((challenge.to_string(), scope))
    }

    /// The inbox's question: whether to sign in again for the scope.
    pub(crate) fn question(&self) -> ElicitationRequest {
        let (server, scope) = (self.server, self.scope);
        ElicitationRequest {
            server: server.to_string(),
            message: format!(
                "The server '{server}' needs a wider sign-in to {}: it asks for the scope '{scope}'. Sign in again in the browser for it?",
                self.to
            ),
            schema: json!({"type": "object", "properties": {}}),
            meta: Some(json!({"airlock/wider_sign_in": {"scope": scope}})),
            context: self.context.clone(),
            property_order: Vec::new(),
        }
    }

    /// Asks the person in the engine's inbox, then [`WiderSignIn::when_agreed`].
    pub(crate) async fn ask_and_sign_in(&self, engine: &Engine) -> Result<(), String> {
        let answer = engine
            .elicit(self.question())
            .await
            .map_err(|e| e.to_string())?;
        self.when_agreed(answer).await
    }

    /// Signs in in the browser (the same client, the scopes granted plus the one asked) when
    /// the person's `answer` to [`WiderSignIn::question`] agreed. `Err` says why not: only a
    /// successful sign-in lets the refused request be sent again.
    pub(crate) async fn when_agreed(&self, answer: ElicitationAnswer) -> Result<(), String> {
        if answer.action != ElicitationAction::Accept {
            return Err("the wider sign-in was not agreed to".into());
        }
        let server = self.server;
        oauth::sign_in_for_wider_scope(
            self.store,
            self.challenge,
            &oauth::open_browser,
            &|url| tracing::info!(%server, %url, "wider sign-in opened in the browser"),
            oauth::SIGN_IN_TIMEOUT,
        )
        .await
        .map_err(|e| format!("the wider sign-in failed: {e}"))
    }
}
