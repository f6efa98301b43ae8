//! Airlock's side of an MCP connection: declares elicitation, turns `elicitation/create` into
//! an inbox item (a form to fill in, or a web page to open once the person agreed), and reports
//! `tools/list_changed`.

use airlock_engine::tools::CallContext;
use airlock_engine::{ElicitationAction, ElicitationAnswer, ElicitationRequest, Engine};
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction as McpAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, ProtocolVersion, RequestMetaObject, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The calls running on one server, newest last: an elicitation belongs to the newest.
pub(crate) type InFlight = Arc<Mutex<Vec<CallContext>>>;

/// A server's form, as the inbox shows it.
pub(crate) struct Form {
    pub message: String,
    pub schema: Value,
    pub meta: Option<Value>,
    /// The fields in the server's order: `schema` is a JSON value whose keys are sorted.
    pub property_order: Vec<String>,
}

impl Form {
    /// `None` for a URL elicitation (a web page to open, not a form).
    pub(crate) fn of(
        request: ElicitRequestParams,
        context: &RequestContext<RoleClient>,
    ) -> Result<Option<Self>, ErrorData> {
        Self::with_meta(request, Some(context.meta.clone()))
    }

    /// [`Form::of`] with the request's `_meta` as the context carries it (none for a form that
    /// came inside a multi round-trip result: its `_meta` is in its params).
    pub(crate) fn with_meta(
        request: ElicitRequestParams,
        context_meta: Option<RequestMetaObject>,
    ) -> Result<Option<Self>, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            meta,
            message,
            requested_schema,
        } = request
        else {
            return Ok(None);
        };
        let schema = serde_json::to_value(&requested_schema)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let property_order = requested_schema.property_order.unwrap_or_default();
        // rmcp hands the request's `_meta` to the context; older paths leave it in the params.
        let meta = meta
            .or(context_meta)
            .and_then(|m| serde_json::to_value(m).ok())
            .filter(|m| m.as_object().is_some_and(|o| !o.is_empty()));
        Ok(Some(Self {
            message,
            schema,
            meta,
            property_order,
        }))
    }
}

/// A URL-mode elicitation: a web page the server wants the person to open (a sign-in of its
/// own, a payment), never filled in by Airlock.
pub(crate) struct Page {
    pub message: String,
    pub url: String,
    /// Who the page belongs to, as the question names it.
    pub host: String,
}

impl Page {
    /// The page of a URL-mode request; `None` for a form. A page that is not `https://` (or
    /// `http://` on this machine) is refused: nothing else is opened in the browser.
    pub(crate) fn of(request: &ElicitRequestParams) -> Option<Result<Self, String>> {
        let ElicitRequestParams::UrlElicitationParams { message, url, .. } = request else {
            return None;
        };
        Some(
            crate::oauth::require_secure("the page", url)
                .map_err(|e| e.to_string())
                .and_then(|parsed| {
                    let host = parsed
                        .host_str()
                        .ok_or_else(|| format!("the page {url} names no host"))?;
                    Ok(Self {
                        message: message.clone(),
                        url: url.clone(),
                        host: host.to_string(),
                    })
                }),
        )
    }

    /// Asks the person in the inbox whether to open the page (its host named); opens it in the
    /// system browser (as a sign-in does) only when they agree, and answers the server as they
    /// chose.
    pub(crate) async fn ask_and_open(
        self,
        engine: &Engine,
        server: &str,
        context: Option<CallContext>,
    ) -> Result<ElicitResult, String> {
        let request = ElicitationRequest {
            server: server.to_string(),
            message: format!(
                "{}\n\nOpen this page on {} in the browser?",
                self.message, self.host
            ),
            schema: serde_json::json!({"type": "object", "properties": {}}),
            meta: Some(serde_json::json!({"airlock/page": {"url": self.url, "host": self.host}})),
            context,
            property_order: Vec::new(),
        };
        let answer = engine.elicit(request).await.map_err(|e| e.to_string())?;
        Ok(match answer.action {
            ElicitationAction::Accept => match crate::oauth::open_browser(&self.url) {
                Ok(()) => ElicitResult::new(McpAction::Accept),
                Err(error) => {
                    tracing::warn!(%server, %error, "cannot open the page the person agreed to");
                    ElicitResult::new(McpAction::Cancel)
                }
            },
            ElicitationAction::Decline => ElicitResult::new(McpAction::Decline),
            ElicitationAction::Cancel => ElicitResult::new(McpAction::Cancel),
        })
    }
}

/// The person's answer in the inbox, as the server reads it.
pub(crate) fn elicit_result(answer: ElicitationAnswer) -> ElicitResult {
    match answer.action {
        ElicitationAction::Accept => {
            let result = ElicitResult::new(McpAction::Accept);
            match answer.content {
                Some(content) => result.with_content(content),
                None => result,
            }
        }
        ElicitationAction::Decline => ElicitResult::new(McpAction::Decline),
        ElicitationAction::Cancel => ElicitResult::new(McpAction::Cancel),
    }
}

/// Airlock's client capabilities: elicitation forms (answered in the inbox), on the newest
/// revision with the `initialize` handshake that today's servers speak.
pub(crate) fn client_config() -> ClientConfig {
    let mut form = FormElicitationCapability::new();
    form.schema_validation = Some(true);
    let mut elicitation = ElicitationCapability::new();
    elicitation.form = Some(form);
    elicitation.url = Some(UrlElicitationCapability::new());
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(elicitation);
    ClientConfig::new(
        capabilities,
        Implementation::new("airlock", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

#[derive(Clone)]
pub(crate) struct AirlockClient {
    pub engine: Engine,
    pub server: String,
    pub in_flight: InFlight,
    pub list_changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for AirlockClient {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let call = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last()
            .cloned();
        if let Some(page) = Page::of(&request) {
            let page = page.map_err(|why| ErrorData::invalid_params(why, None))?;
            let answer = tokio::select! {
                answer = page.ask_and_open(&self.engine, &self.server, call) => answer,
                _ = context.ct.cancelled() => return Ok(ElicitResult::new(McpAction::Cancel)),
            };
            return answer.map_err(|e| ErrorData::internal_error(e, None));
        }
        let Some(form) = Form::of(request, &context)? else {
            return Ok(ElicitResult::new(McpAction::Decline));
        };
        let request = ElicitationRequest {
            server: self.server.clone(),
            message: form.message,
            schema: form.schema,
            meta: form.meta,
            context: call,
            property_order: form.property_order,
        };
        let answer = tokio::select! {
            answer = self.engine.elicit(request) => answer,
            _ = context.ct.cancelled() => return Ok(ElicitResult::new(McpAction::Cancel)),
        };
        let answer = answer.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(elicit_result(answer))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }
}
