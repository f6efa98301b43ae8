//! `POST /v1beta/models/MODEL:ACTION`: the Gemini API as the scripted model speaks it, for
//! Gemini CLI (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`).
//!
//! Follows Google's Gemini API reference "Generating content"
//! (<https://ai.google.dev/api/generate-content>): `:generateContent` answers one
//! `GenerateContentResponse` (`candidates[0].content` with `role: "model"` and `parts` of
//! `{"text"}` or `{"functionCall": {"name", "args"}}`, `finishReason: "STOP"`,
//! `usageMetadata`); `:streamGenerateContent?alt=sse` answers the same as server-sent events,
//! one `data: {GenerateContentResponse}` per chunk (the text in pieces, a function call whole),
//! with no terminator. `:countTokens` answers `{"totalTokens"}` ("Counting tokens",
//! <https://ai.google.dev/api/tokens>) and is neither recorded nor scripted. Errors are the
//! status code with `{"error": {"code", "message", "status"}}`.
//!
//! A request ends with the user's own words when its last content is a user turn without a
//! `functionResponse` part.

use crate::{Reply, ScriptedCall, Shared, json_response, pieces, push_event, sse, take_reply};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

fn error(status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let kind = match status {
        429 => "RESOURCE_EXHAUSTED",
        400 => "INVALID_ARGUMENT",
        401 | 403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    crate::error_with_body(
        status,
        retry_after,
        json!({"error": {"code": status, "message": message, "status": kind}}),
    )
}

fn contents(request: &Value) -> Vec<Value> {
    request
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn parts(content: &Value) -> Vec<Value> {
    content
        .get("parts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn last_is_user(request: &Value) -> bool {
    contents(request).last().is_some_and(|last| {
        last.get("role").and_then(Value::as_str) == Some("user")
            && !parts(last)
                .iter()
                .any(|part| part.get("functionResponse").is_some())
    })
}

/// The smart reply ([`crate::Fallback::Smart`]) to a Gemini request.
fn smart(request: &Value, call: &ScriptedCall) -> Reply {
    let results: Vec<String> = contents(request)
        .iter()
        .flat_map(parts)
        .filter_map(|part| {
            part.get("functionResponse")
                .map(|r| r["response"].to_string())
        })
        .collect();
    let offered = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools.iter().any(|tool| {
                tool.get("functionDeclarations")
                    .and_then(Value::as_array)
                    .is_some_and(|declared| {
                        declared
                            .iter()
                            .any(|d| d.get("name").and_then(Value::as_str) == Some(&call.name))
                    })
            })
        });
    crate::smart_reply(call, offered, &results)
}

pub(crate) async fn create(
    State(shared): State<Arc<Shared>>,
    Path(model_action): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some((model, action)) = model_action.rsplit_once(':') else {
        return error(404, None, "expected models/MODEL:ACTION");
    };
    let stream = match action {
        "streamGenerateContent" => true,
        "generateContent" => false,
        "countTokens" => {
            return json_response(json!({"totalTokens": (body.len() as u64).div_ceil(4)}));
        }
        other => return error(404, None, &format!("no action {other}")),
    };
    let (_request, reply, _n) =
        match take_reply(&shared, &headers, &body, last_is_user, smart, error) {
            Ok(taken) => taken,
            Err(response) => return *response,
        };
    let model = model.to_string();
    let chunks: Vec<Value> = match reply {
        Reply::Error {
            status,
            retry_after,
        } => {
            return error(
                status,
                retry_after,
                &format!("scripted error (HTTP {status})"),
            );
        }
        Reply::CutStream(_) => return crate::cut_connection(),
        Reply::Text(text) if stream => pieces(&text, 3)
            .into_iter()
            .filter(|piece| !piece.is_empty())
            .map(|piece| json!({"text": piece}))
            .collect(),
        Reply::Text(text) => vec![json!({"text": text})],
        Reply::ToolCalls(calls) => calls.iter().map(function_call).collect(),
        Reply::McpApprovalRequests(_) | Reply::McpCall { .. } => {
            return error(
                500,
                None,
                "scripted hosted-MCP replies exist only in the Responses API",
            );
        }
    };
    if stream {
        let mut body = String::new();
        let last = chunks.len().saturating_sub(1);
        for (i, part) in chunks.iter().enumerate() {
            push_event(
                &mut body,
                &response(&model, std::slice::from_ref(part), i == last).to_string(),
            );
        }
        sse(body)
    } else {
        json_response(response(&model, &chunks, true))
    }
}

/// A `functionCall` part; arguments that are not a JSON object are sent as a string.
fn function_call(call: &ScriptedCall) -> Value {
    let args = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    json!({"functionCall": {"name": call.name, "args": args, "id": call.id}})
}

fn response(model: &str, parts: &[Value], last: bool) -> Value {
    let mut candidate = json!({
        "content": {"role": "model", "parts": parts},
        "index": 0,
    });
    if last {
        candidate["finishReason"] = json!("STOP");
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": model,
    })
}
