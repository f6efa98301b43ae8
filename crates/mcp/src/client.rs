//! Airlock's side of an MCP connection: declares elicitation, turns `elicitation/create` into
//! an inbox item, and reports `tools/list_changed`.

use airlock_engine::tools::CallContext;
use airlock_engine::{ElicitationAction, ElicitationAnswer, ElicitationRequest, Engine};
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction as McpAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, ProtocolVersion, RequestMetaObject,
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
        let Some(form) = Form::of(request, &context)? else {
            // URL elicitation would send the person to a web page; Airlock does not do that.
            return Ok(ElicitResult::new(McpAction::Decline));
        };
        let call = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last()
            .cloned();
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
