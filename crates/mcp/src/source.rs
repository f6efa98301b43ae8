//! One ready MCP server as a [`ToolSource`]: calls go out with a timeout, and a dropped call
//! (the turn was cancelled, or the timeout hit) sends `notifications/cancelled`. A call that
//! comes back asking for input (2026-07-28's multi round-trip requests) is answered from the
//! inbox and sent again. A call the server refuses for want of scope (`403 insufficient_scope`)
//! is sent again once, only after the person agreed in the inbox to a wider sign-in and that
//! sign-in in the browser succeeded.

use crate::DEFAULT_TOOL_TIMEOUT_SECS;
use crate::client::{Form, InFlight, Page, elicit_result};
use crate::oauth::TokenStore;
use crate::wider::WiderSignIn;
use airlock_core::ToolDef;
use airlock_engine::tools::{CallContext, ToolError, ToolSource};
use airlock_engine::{ElicitationRequest, Engine};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitResult,
    ElicitationAction as McpAction, InputRequest, InputResponses,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use std::time::Duration;

pub(crate) struct McpTools {
    pub engine: Engine,
    pub server: String,
    pub peer: Peer<RoleClient>,
    pub tools: Vec<ToolDef>,
    pub in_flight: InFlight,
    /// Where the server's sign-in is kept (remote servers): a wider one may be asked for.
    pub sign_in: Option<TokenStore>,
}

/// Keeps a call in the server's in-flight list while it runs.
struct InFlightGuard<'a> {
    list: &'a InFlight,
    context: CallContext,
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(position) = list.iter().rposition(|c| c == &self.context) {
            list.remove(position);
        }
    }
}

impl McpTools {
    fn timeout(&self) -> Duration {
        let seconds = self
            .engine
            .setting(airlock_core::Setting::ToolTimeoutSecs)
            .ok()
            .flatten()
            .and_then(|v| v.as_u64())
            .filter(|s| *s > 0)
            .unwrap_or(DEFAULT_TOOL_TIMEOUT_SECS);
        Duration::from_secs(seconds)
    }

    async fn run(
        &self,
        context: &CallContext,
        tool: &str,
        args: &Value,
    ) -> Result<Value, ToolError> {
        let Value::Object(arguments) = args.clone() else {
            return Err(ToolError::new("arguments must be a JSON object"));
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.clone());
        let _guard = InFlightGuard {
            list: &self.in_flight,
            context: context.clone(),
        };
        let timeout = self.timeout();
        // `call_tool_once` cancels the request on the server when its future is dropped.
        let call = self.call_with_wider_scope(context, params);
        match tokio::time::timeout(timeout, call).await {
            Err(_) => Err(ToolError::new(format!(
                "the server '{}' did not answer within {} s; the call was cancelled",
                self.server,
                timeout.as_secs()
            ))),
            Ok(Err(CallFailure::Service(
                ServiceError::TransportClosed | ServiceError::TransportSend(_),
            ))) => Err(ToolError::new(format!(
                "the server '{}' stopped during the call (it is being restarted); the call was not retried",
                self.server
            ))),
            Ok(Err(CallFailure::Service(ServiceError::McpError(error)))) => {
                Err(ToolError::new(format!(
                    "the server '{}' refused the call: {}",
                    self.server, error.message
                )))
            }
            Ok(Err(CallFailure::Input(error))) => Err(error),
            Ok(Err(CallFailure::Service(error))) => Err(ToolError::new(format!(
                "the call to '{}' failed: {error}",
                self.server
            ))),
            Ok(Ok(result)) => result_value(result),
        }
    }

    /// The call; when the server refuses it for want of scope, the person is asked in the inbox
    /// for a wider sign-in, and only once they agreed and it succeeded is the call sent again
    /// (once: a second refusal ends it, so that a server can never loop the browser).
    async fn call_with_wider_scope(
        &self,
        context: &CallContext,
        params: CallToolRequestParams,
    ) -> Result<CallToolResult, CallFailure> {
        let error = match self.call_answering_input(context, params.clone()).await {
            Err(CallFailure::Service(error)) => error,
            other => return other,
        };
        let Some(store) = &self.sign_in else {
            return Err(CallFailure::Service(error));
        };
        let Some((challenge, scope)) = WiderSignIn::asked_by(&error, store) else {
            return Err(CallFailure::Service(error));
        };
        self.sign_in_for_scope(context, store, &challenge, &scope)
            .await?;
        self.call_answering_input(context, params).await
    }

    /// Asks the person whether to sign in again for `scope`, and does it in the browser when they
    /// agree. Anything but a successful sign-in ends the call (it was not run).
    async fn sign_in_for_scope(
        &self,
        context: &CallContext,
        store: &TokenStore,
        challenge: &str,
        scope: &str,
    ) -> Result<(), CallFailure> {
        let asked = WiderSignIn {
            server: &self.server,
            store,
            challenge,
            scope,
            to: "run this call",
            context: Some(context.clone()),
        };
        asked.ask_and_sign_in(&self.engine).await.map_err(|why| {
            CallFailure::Input(ToolError::new(format!(
                "the server '{}' refused the call for want of the scope '{scope}': {why}; the call was not run",
                self.server
            )))
        })
    }

    /// `tools/call`, answering a 2026-07-28 server's multi round-trip requests for input (a
    /// result that asks for a form; the call is sent again with the answers and the server's
    /// `requestState`, as received) from the inbox, exactly as the older server-initiated
    /// elicitation is answered; at most [`MAX_INPUT_ROUNDS`] rounds.
    async fn call_answering_input(
        &self,
        context: &CallContext,
        mut params: CallToolRequestParams,
    ) -> Result<CallToolResult, CallFailure> {
        for _ in 0..MAX_INPUT_ROUNDS {
            let asked = match self.peer.call_tool_once(params.clone()).await? {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => asked,
                _ => {
                    return Err(CallFailure::Input(ToolError::new(format!(
                        "the server '{}' answered the call with a task; Airlock does not run MCP tasks",
                        self.server
                    ))));
                }
            };
            let mut answers = InputResponses::new();
            for (key, request) in asked.input_requests.unwrap_or_default() {
                let answer = self.answer_input(context, request).await?;
                answers.insert(key, answer);
            }
            params.input_responses = (!answers.is_empty()).then_some(answers);
            params.request_state = asked.request_state;
        }
        Err(CallFailure::Input(ToolError::new(format!(
            "the server '{}' asked for input more than {MAX_INPUT_ROUNDS} times in one call; the call was given up",
            self.server
        ))))
    }

    /// One request for input inside a call's result: a form, answered in the inbox, or a web page,
    /// opened once the person agreed (as for the older elicitation); sampling and roots are
    /// refused.
    async fn answer_input(
        &self,
        context: &CallContext,
        request: InputRequest,
    ) -> Result<Value, CallFailure> {
        let refused = |why: String| CallFailure::Input(ToolError::new(why));
        let InputRequest::Elicitation(request) = request else {
            return Err(refused(format!(
                "the server '{}' asked for sampling or its roots during the call; Airlock answers only forms",
                self.server
            )));
        };
        if let Some(page) = Page::of(&request.params) {
            let page = page.map_err(|why| {
                refused(format!(
                    "the server '{}' asked to open a page Airlock refuses: {why}",
                    self.server
                ))
            })?;
            let result = page
                .ask_and_open(&self.engine, &self.server, Some(context.clone()))
                .await
                .map_err(refused)?;
            return serde_json::to_value(result).map_err(|e| refused(e.to_string()));
        }
        let form = Form::with_meta(request.params, None).map_err(|e| {
            refused(format!(
                "the server '{}' asked for a form Airlock cannot read: {}",
                self.server, e.message
            ))
        })?;
        let result = match form {
            None => ElicitResult::new(McpAction::Decline),
            Some(form) => {
                let asked = ElicitationRequest {
                    server: self.server.clone(),
                    message: form.message,
                    schema: form.schema,
                    meta: form.meta,
                    context: Some(context.clone()),
                    property_order: form.property_order,
                };
                let answer = self
                    .engine
                    .elicit(asked)
                    .await
                    .map_err(|e| refused(e.to_string()))?;
                elicit_result(answer)
            }
        };
        serde_json::to_value(result).map_err(|e| refused(e.to_string()))
    }
}

/// How many times one call may come back asking for input before Airlock gives it up (as
/// rmcp's own client does: a server must not keep a call alive forever).
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// Why a call did not come back with a result.
enum CallFailure {
    Service(ServiceError),
    /// A request for input Airlock could not answer; the message says why.
    Input(ToolError),
}

impl From<ServiceError> for CallFailure {
    fn from(error: ServiceError) -> Self {
        CallFailure::Service(error)
    }
}

/// What the model reads: the text of the result, else its structured content, else the
/// content blocks as JSON. A result flagged as an error is an error.
fn result_value(result: CallToolResult) -> Result<Value, ToolError> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    let all_text = texts.len() == result.content.len() && !texts.is_empty();
    let value = if all_text {
        Value::String(texts.join("\n"))
    } else if let Some(structured) = &result.structured_content {
        structured.clone()
    } else {
        serde_json::to_value(&result.content).unwrap_or(Value::Null)
    };
    if result.is_error == Some(true) {
        let message = match &value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        return Err(ToolError::new(message));
    }
    Ok(value)
}

impl ToolSource for McpTools {
    fn tools(&self) -> Vec<ToolDef> {
        self.tools.clone()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let context = CallContext::default();
            self.run(&context, tool, args).await
        })
    }

    fn call_in<'a>(
        &'a self,
        context: &'a CallContext,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(self.run(context, tool, args))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    #[test]
    fn the_model_reads_text_structured_content_or_the_blocks() {
        let text = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        assert_eq!(result_value(text).unwrap(), json!("a\nb"));
        let mut structured = CallToolResult::success(vec![]);
        structured.structured_content = Some(json!({"sum": 3}));
        assert_eq!(result_value(structured).unwrap(), json!({"sum": 3}));
        let error = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        assert_eq!(result_value(error).unwrap_err().message, "no such file");
    }
}
