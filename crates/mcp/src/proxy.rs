//! `airlock mcp-proxy`: a stdio MCP server that an MCP client (Claude Desktop, Cursor, …)
//! launches in place of a server. It starts the real server, passes everything through —
//! initialize, tools/list (and `list_changed`), resources, prompts, completions, logging,
//! elicitation — and puts every `tools/call` through Airlock's policy and inbox first. A call
//! nobody allowed never reaches the server: the client gets a tool result with `isError: true`
//! and the reason, which its model reads.
//!
//! The proxy does not own the data directory; it asks the engine through a [`Gate`] (the
//! local API), so the engine's one decision path decides, and a missing engine means *deny*.
//! An approved call a remote server refuses for want of scope (`403 insufficient_scope`) asks
//! the person in the inbox for a wider sign-in, which the proxy runs in the browser; the call is
//! sent again once, only after it succeeded (otherwise the client reads why it did not run).

use crate::client::{Form, client_config, elicit_result};
use crate::connect::connect;
use crate::oauth::TokenStore;
use crate::wider::WiderSignIn;
use airlock_core::{MCP_CLIENT, ServerConfig};
use airlock_protocol::{AgentAnswer, AgentCall, AgentEvent, AgentVerdict, ElicitationAnswer};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, CompleteRequestParams,
    CompleteResult, ContentBlock, ElicitRequestParams, ElicitResult,
    ElicitationAction as McpAction, ErrorData, GetPromptRequestParams, GetPromptResponse,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ResourceUpdatedNotificationParam, ServerPeerInfo, SubscribeRequestParams, Tool,
    ToolsCapability, UnsubscribeRequestParams,
};
// Logging is deprecated in the newest revision; clients of earlier ones still use it.
#[allow(deprecated)]
use rmcp::model::{LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{
    ElicitationMode, NotificationContext, Peer, RequestContext, RoleClient, RoleServer,
    ServiceError,
};
use rmcp::{ClientHandler, ServerHandler, ServiceExt};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Where the proxy asks: the engine, through its local API.
pub trait Gate: Send + Sync + 'static {
    /// The decision on one `tools/call`, waiting for a person when the policy asks. An error
    /// means no decision: the call does not run.
    fn decide(&self, call: AgentCall) -> BoxFuture<'_, Result<AgentAnswer, String>>;
    /// A form the server asks for, answered in Airlock's inbox (when the client cannot show it);
    /// `property_order` is the server's order of its fields.
    fn elicit(
        &self,
        server: String,
        message: String,
        schema: Value,
        meta: Option<Value>,
        property_order: Vec<String>,
    ) -> BoxFuture<'_, Result<ElicitationAnswer, String>>;
}

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot start the server '{name}': {message}")]
    Upstream { name: String, message: String },
    #[error("the MCP client's connection failed: {0}")]
    Downstream(String),
}

/// What to proxy: the name Airlock's settings and rules know the server by, and how to start it.
pub struct ProxyOptions {
    pub name: String,
    pub config: ServerConfig,
    /// Where the server's stderr goes; `None` passes it on to the client (it logs it).
    pub log: Option<PathBuf>,
    /// A remote server's sign-in (`airlock servers login NAME`), used and refreshed by the proxy.
    pub sign_in: Option<crate::oauth::TokenStore>,
}

/// The client that connected to the proxy, once it has initialized.
type Downstream = Arc<OnceLock<Peer<RoleServer>>>;
/// Each tool's definition as the server last listed it, pinned with every call.
type Definitions = Arc<Mutex<HashMap<String, Value>>>;

/// Runs the proxy on stdin/stdout until the client or the server goes away.
pub async fn run(options: ProxyOptions, gate: Arc<dyn Gate>) -> Result<(), ProxyError> {
    let downstream: Downstream = Arc::new(OnceLock::new());
    let definitions: Definitions = Arc::default();
    let upstream = UpstreamClient {
        name: options.name.clone(),
        gate: gate.clone(),
        downstream: downstream.clone(),
        definitions: definitions.clone(),
    };
    let connection = connect(
        &options.config,
        options.log.as_deref(),
        upstream,
        options.sign_in.as_ref(),
    )
    .await
    .map_err(|message| ProxyError::Upstream {
        name: options.name.clone(),
        message,
    })?;
    let server = connection.running;
    let info = downstream_info(server.peer().peer_info().as_deref());
    let proxy = Proxy {
        sign_in: options.sign_in,
        name: options.name,
        upstream: server.peer().clone(),
        gate,
        info,
        downstream,
        definitions,
        session: format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or_default()
        ),
        calls: AtomicU64::new(0),
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
    };
    let client = proxy
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ProxyError::Downstream(e.to_string()))?;
    // Whichever side goes first ends the proxy; dropping the other stops it (the server's
    // process is killed with its transport).
    tokio::select! {
        quit = client.waiting() => {
            quit.map_err(|e| ProxyError::Downstream(e.to_string()))?;
        }
        _ = server.waiting() => {}
    }
    Ok(())
}

/// What the proxy tells its client: the server's own identity, instructions and capabilities,
/// without the extensions it does not pass on, and tools that say when they changed.
fn downstream_info(upstream: Option<&ServerPeerInfo>) -> InitializeResult {
    let mut capabilities = upstream.map(|u| u.capabilities.clone()).unwrap_or_default();
    capabilities.experimental = None;
    capabilities.extensions = None;
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(true);
    capabilities.tools = Some(tools);
    let mut info = InitializeResult::new(capabilities);
    if let Some(implementation) = upstream.and_then(|u| u.server_info.clone()) {
        info.server_info = implementation;
    }
    info.instructions = upstream.and_then(|u| u.instructions.clone());
    info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
    info
}

fn upstream_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the proxied server: {other}"), None),
    }
}

/// A tool result the model reads, for a call that did not run.
fn not_run(reason: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(reason)]).into()
}

/// What runs is what the person approved: their edit in place of the proposed arguments. An
/// edit that is not an object cannot be sent, and the original is not sent in its place.
fn apply_edit(request: &mut CallToolRequestParams, edited: Option<Value>) -> Result<(), String> {
    match edited {
        None => Ok(()),
        Some(Value::Object(edited)) => {
            request.arguments = Some(edited);
            Ok(())
        }
        Some(_) => Err("the approved edit is not a JSON object; the call was not run".into()),
    }
}

/// The proxy as the MCP client sees it: a server.
struct Proxy {
    name: String,
    upstream: Peer<RoleClient>,
    gate: Arc<dyn Gate>,
    info: InitializeResult,
    downstream: Downstream,
    definitions: Definitions,
    /// This connection's id: one agent session (grants "for this session" last as long).
    session: String,
    /// How many `tools/call`s this connection made: each one's own request key.
    calls: AtomicU64,
    cwd: Option<String>,
    /// A remote server's sign-in, widened when the server asks.
    sign_in: Option<TokenStore>,
}

impl Proxy {
    /// The approved call. Refused for want of scope, the person is asked in Airlock's inbox
    /// for a wider sign-in (the proxy opens the browser, as for its first sign-in) and the call
    /// is sent again once, only after it succeeded; otherwise the client reads why it did not
    /// run.
    async fn call_with_wider_scope(
        &self,
        request: CallToolRequestParams,
    ) -> Result<CallToolResponse, ErrorData> {
        let error = match self.upstream.call_tool_once(request.clone()).await {
            Ok(response) => return Ok(response),
            Err(error) => error,
        };
        let Some(store) = &self.sign_in else {
            return Err(upstream_error(error));
        };
        let Some((challenge, scope)) = WiderSignIn::asked_by(&error, store) else {
            return Err(upstream_error(error));
        };
        let asked = WiderSignIn {
            server: &self.name,
            store,
            challenge: &challenge,
            scope: &scope,
            to: "run this call",
            context: None,
        };
        let question = asked.question();
        let answer = self
            .gate
            .elicit(
                question.server,
                question.message,
                question.schema,
                question.meta,
                question.property_order,
            )
            .await;
        let signed_in = match answer {
            Ok(answer) => asked.when_agreed(answer).await,
            Err(error) => Err(format!("Airlock could not ask ({error})")),
        };
        if let Err(why) = signed_in {
            return Ok(not_run(format!(
                "the server '{}' refused the call for want of the scope '{scope}': {why}; the call was not run",
                self.name
            )));
        }
        self.upstream
            .call_tool_once(request)
            .await
            .map_err(upstream_error)
    }

    /// Keeps the listed tools' definitions; `Some` with `wanted`'s.
    fn remember(&self, listed: &[Tool], wanted: Option<&str>) -> Option<Value> {
        let mut definitions = self.definitions.lock().unwrap_or_else(|p| p.into_inner());
        for tool in listed {
            definitions.insert(tool.name.to_string(), crate::listed_definition(tool));
        }
        wanted.and_then(|name| definitions.get(name).cloned())
    }

    /// The tool's definition as listed now (listing again when the client calls a tool it
    /// learnt of before the proxy did).
    async fn definition(&self, tool: &str) -> Option<Value> {
        let known = self
            .definitions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tool)
            .cloned();
        if known.is_some() {
            return known;
        }
        let listed = self.upstream.list_all_tools().await.ok()?;
        self.remember(&listed, Some(tool))
    }

    /// Asks Airlock: `Ok` when the call may run, with the person's edit if there is one; `Err`
    /// with what the model reads when it may not.
    async fn ask(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Value>, String> {
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "mcp-client".into());
        let call = AgentCall {
            agent: MCP_CLIENT.into(),
            source: Some(self.name.clone()),
            client: Some(client),
            agent_session: self.session.clone(),
            cwd: self.cwd.clone(),
            tool: request.name.to_string(),
            input: Value::Object(request.arguments.clone().unwrap_or_default()),
            // Each `tools/call` its own item, whatever its JSON-RPC id (a client may use one
            // again): the same arguments again are asked again. Only this call's own retries
            // (the engine restarting while it waits) find its item again.
            tool_use_id: Some(format!(
                "{}:{}:{}",
                self.session,
                self.calls.fetch_add(1, Ordering::Relaxed),
                context.id
            )),
            event: AgentEvent::McpCall,
            editable: true,
            wait_ms: None,
            defer: false,
            takes_reason: None,
            definition: self.definition(&request.name).await,
            prompt: None,
        };
        let answer =
            self.gate.decide(call).await.map_err(|error| {
                format!("Airlock could not decide ({error}); the call was not run")
            })?;
        match answer.verdict {
            AgentVerdict::Allow => Ok(answer.updated_input),
            AgentVerdict::Deny => Err(answer
                .reason
                .unwrap_or_else(|| "denied by the user in Airlock".into())),
            AgentVerdict::Undecided => {
                Err("nobody decided in Airlock in time; the call was not run".into())
            }
        }
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> InitializeResult {
        self.info.clone()
    }

    /// Up to the newest revision that still lets a server ask its client (elicitation).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let _ = self.downstream.set(context.peer.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listed = self
            .upstream
            .list_tools(request)
            .await
            .map_err(upstream_error)?;
        self.remember(&listed.tools, None);
        Ok(listed)
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cancelled = context.ct.clone();
        // Dropping the question (the client cancelled) withdraws the inbox item.
        let decided = tokio::select! {
            decided = self.ask(&request, &context) => decided,
            _ = cancelled.cancelled() => {
                return Err(ErrorData::internal_error("the client cancelled the call", None));
            }
        };
        match decided {
            Err(reason) => Ok(not_run(reason)),
            Ok(edited) => {
                if let Err(reason) = apply_edit(&mut request, edited) {
                    return Ok(not_run(reason));
                }
                tokio::select! {
                    result = self.call_with_wider_scope(request) => result,
                    _ = cancelled.cancelled() => {
                        Err(ErrorData::internal_error("the client cancelled the call", None))
                    }
                }
            }
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.upstream
            .list_resources(request)
            .await
            .map_err(upstream_error)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.upstream
            .list_resource_templates(request)
            .await
            .map_err(upstream_error)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.upstream
            .read_resource_once(request)
            .await
            .map_err(upstream_error)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstream
            .subscribe(request)
            .await
            .map_err(upstream_error)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstream
            .unsubscribe(request)
            .await
            .map_err(upstream_error)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.upstream
            .list_prompts(request)
            .await
            .map_err(upstream_error)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.upstream
            .get_prompt_once(request)
            .await
            .map_err(upstream_error)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.upstream
            .complete(request)
            .await
            .map_err(upstream_error)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstream
            .set_level(request)
            .await
            .map_err(upstream_error)
    }
}

/// The proxy as the real server sees it: a client that can answer forms (through its own
/// client, or Airlock's inbox) and passes the server's notifications on.
#[derive(Clone)]
struct UpstreamClient {
    name: String,
    gate: Arc<dyn Gate>,
    downstream: Downstream,
    definitions: Definitions,
}

impl UpstreamClient {
    fn client(&self) -> Option<&Peer<RoleServer>> {
        self.downstream.get()
    }
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        let mut config = client_config();
        // Only a client can open a web page here: the proxy offers URL-mode elicitation only
        // when the client it serves does.
        let pages = self.client().is_some_and(|client| {
            client
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Url)
        });
        if !pages && let Some(elicitation) = config.capabilities.elicitation.as_mut() {
            elicitation.url = None;
        }
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let form = matches!(request, ElicitRequestParams::FormElicitationParams { .. });
        let wanted = if form {
            ElicitationMode::Form
        } else {
            ElicitationMode::Url
        };
        if let Some(client) = self.client()
            && client.supported_elicitation_modes().contains(&wanted)
        {
            return tokio::select! {
                answer = client.create_elicitation(request) => answer.map_err(upstream_error),
                _ = context.ct.cancelled() => Ok(ElicitResult::new(McpAction::Cancel)),
            };
        }
        let Some(form) = Form::of(request, &context)? else {
            // A web page to open: only a client can do that.
            return Ok(ElicitResult::new(McpAction::Decline));
        };
        let answer = tokio::select! {
            answer = self.gate.elicit(self.name.clone(), form.message, form.schema, form.meta, form.property_order) => answer,
            _ = context.ct.cancelled() => return Ok(ElicitResult::new(McpAction::Cancel)),
        };
        match answer {
            Ok(answer) => Ok(elicit_result(answer)),
            // Nobody can answer: the server is told so, nothing is made up.
            Err(error) => {
                tracing::warn!(%error, "cannot ask Airlock for the form");
                Ok(ElicitResult::new(McpAction::Cancel))
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.definitions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        if let Some(client) = self.client() {
            let _ = client.notify_tool_list_changed().await;
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(client) = self.client() {
            let _ = client.notify_resource_list_changed().await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(client) = self.client() {
            let _ = client.notify_prompt_list_changed().await;
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(client) = self.client() {
            let _ = client.notify_resource_updated(params).await;
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(client) = self.client() {
            let _ = client.notify_logging_message(params).await;
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(client) = self.client() {
            let _ = client.notify_progress(params).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_client_sees_the_servers_identity_with_tools_that_announce_changes() {
        let mut upstream =
            ServerPeerInfo::new(ProtocolVersion::LATEST_WITH_INITIALIZE, Default::default());
        upstream.server_info = Some(rmcp::model::Implementation::new("everything", "1.0"));
        upstream.instructions = Some("be kind".into());
        let info = downstream_info(Some(&upstream));
        assert_eq!(info.server_info.name, "everything");
        assert_eq!(info.instructions.as_deref(), Some("be kind"));
        assert_eq!(
            info.capabilities.tools.and_then(|t| t.list_changed),
            Some(true)
        );
        assert!(info.capabilities.extensions.is_none());
    }

    #[test]
    fn a_call_that_did_not_run_is_a_tool_error_with_the_reason() {
        let CallToolResponse::Complete(result) = not_run("no: wrong folder".into()) else {
            panic!("a complete result");
        };
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            serde_json::to_value(&result.content).unwrap(),
            json!([{"type": "text", "text": "no: wrong folder"}])
        );
    }

    #[test]
    fn the_person_s_edit_runs_and_nothing_else() {
        let mut request = CallToolRequestParams::new("write");
        request.arguments = json!({"path": "a"}).as_object().cloned();
        apply_edit(&mut request, None).unwrap();
        assert_eq!(request.arguments, json!({"path": "a"}).as_object().cloned());
        apply_edit(&mut request, Some(json!({"path": "b"}))).unwrap();
        assert_eq!(request.arguments, json!({"path": "b"}).as_object().cloned());
        assert!(apply_edit(&mut request, Some(json!("rm -rf /"))).is_err());
    }
}
