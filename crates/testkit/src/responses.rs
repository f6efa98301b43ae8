//! `POST /v1/responses`: the OpenAI Responses API as the scripted model speaks it.
//!
//! Follows the OpenAI API reference "Responses" → "Create a model response" and "The response
//! object" (<https://platform.openai.com/docs/api-reference/responses/create>): the answer is a
//! `response` object with `status` and `output` items — `message` (`content` of `output_text`
//! parts), `function_call` (`call_id`, `name`, `arguments` as JSON text), and for hosted remote
//! MCP tools (guide "Remote MCP", <https://platform.openai.com/docs/guides/tools-remote-mcp>)
//! `mcp_approval_request` (`id`, `server_label`, `name`, `arguments`) and `mcp_call` (`id`,
//! `server_label`, `name`, `arguments`, `output`, `error`, `approval_request_id`).
//! With `"stream": true` it is server-sent events as in "Streaming events"
//! (<https://platform.openai.com/docs/api-reference/responses-streaming>), each with `event:`
//! and a `data:` object carrying the same `type` and a `sequence_number`: `response.created`,
//! `response.in_progress`, per item `response.output_item.added`, its deltas
//! (`response.content_part.added`, `response.output_text.delta` / `.done`,
//! `response.content_part.done`, `response.function_call_arguments.delta` / `.done`), then
//! `response.output_item.done`, and last `response.completed` with the whole response. There is
//! no `[DONE]`. After `response.in_progress` it sends one event of a type no document defines
//! (`response.airlock_testkit_unknown`, with an unknown field), which clients must skip.
//! Errors are the status code with `{"error": {...}}` as for chat completions.
//!
//! A request's input ends with the user's own words when its last input item is a user message.

use crate::{
    Reply, ScriptedCall, Shared, json_response, now, pieces, push_event, send_then_cut, sse,
    take_reply,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

fn last_is_user(request: &Value) -> bool {
    let last = request
        .get("input")
        .and_then(Value::as_array)
        .and_then(|items| items.last());
    match (request.get("input"), last) {
        (Some(Value::String(_)), _) => true,
        (_, Some(item)) => {
            item.get("role").and_then(Value::as_str) == Some("user")
                && item
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("message")
                    == "message"
        }
        _ => false,
    }
}

pub(crate) async fn create(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (request, reply, n) = match take_reply(
        &shared,
        &headers,
        &body,
        last_is_user,
        crate::smart_any,
        crate::openai_error,
    ) {
        Ok(taken) => taken,
        Err(response) => return *response,
    };
    let (stream, model) = crate::stream_and_model(&request);
    let out = Out {
        id: format!("resp_{n}"),
        model,
    };
    let items = match reply {
        Reply::Error {
            status,
            retry_after,
        } => {
            return crate::openai_error(
                status,
                retry_after,
                &format!("scripted error (HTTP {status})"),
            );
        }
        Reply::CutStream(call) if stream => return send_then_cut(out.cut(&call)),
        Reply::CutStream(_) => return crate::cut_connection(),
        Reply::Text(text) => vec![out.message(&text)],
        Reply::ToolCalls(calls) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| out.function_call(i, c))
            .collect(),
        Reply::McpApprovalRequests(asks) => asks
            .iter()
            .map(|a| {
                json!({
                    "type": "mcp_approval_request", "id": a.id, "server_label": a.server_label,
                    "name": a.name, "arguments": a.arguments,
                })
            })
            .collect(),
        Reply::McpCall { call, text } => vec![
            json!({
                "type": "mcp_call", "id": format!("mcp_{n}"), "server_label": call.server_label,
                "name": call.name, "arguments": call.arguments, "output": call.output,
                "error": call.error, "approval_request_id": call.approval_request_id,
                "status": if call.error.is_some() { "failed" } else { "completed" },
            }),
            out.message(&text),
        ],
    };
    if stream {
        sse(out.events(&items))
    } else {
        json_response(out.response("completed", &items))
    }
}

struct Out {
    id: String,
    model: String,
}

impl Out {
    fn response(&self, status: &str, output: &[Value]) -> Value {
        json!({
            "id": self.id,
            "object": "response",
            "created_at": now(),
            "status": status,
            "error": null,
            "incomplete_details": null,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": true,
            "tool_choice": "auto",
            "usage": {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20},
        })
    }

    fn message(&self, text: &str) -> Value {
        json!({
            "type": "message", "id": format!("msg_{}", self.id), "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        })
    }

    fn function_call(&self, index: usize, call: &ScriptedCall) -> Value {
        json!({
            "type": "function_call", "id": format!("fc_{}_{index}", self.id), "call_id": call.id,
            "name": call.name, "arguments": call.arguments, "status": "completed",
        })
    }

    /// The events of a streamed answer whose output is `items`.
    fn events(&self, items: &[Value]) -> String {
        let mut events = Events::default();
        events.push(
            "response.created",
            json!({"response": self.response("in_progress", &[])}),
        );
        events.push(
            "response.in_progress",
            json!({"response": self.response("in_progress", &[])}),
        );
        events.push(
            "response.airlock_testkit_unknown",
            json!({"surprise": {"nested": [1, 2, 3]}}),
        );
        for (index, item) in items.iter().enumerate() {
            let item_id = item.get("id").cloned().unwrap_or(Value::Null);
            let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
            let mut started = item.clone();
            match kind {
                "message" => started["content"] = json!([]),
                "function_call" => started["arguments"] = json!(""),
                _ => {}
            }
            if started.get("status").is_some() {
                started["status"] = json!("in_progress");
            }
            events.push(
                "response.output_item.added",
                json!({"output_index": index, "item": started}),
            );
            if kind == "message" {
                let text = item
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let part = json!({"type": "output_text", "text": "", "annotations": []});
                events.push("response.content_part.added", json!({"item_id": item_id, "output_index": index, "content_index": 0, "part": part}));
                for piece in pieces(text, 3).into_iter().filter(|p| !p.is_empty()) {
                    events.push("response.output_text.delta", json!({"item_id": item_id, "output_index": index, "content_index": 0, "delta": piece}));
                }
                events.push("response.output_text.done", json!({"item_id": item_id, "output_index": index, "content_index": 0, "text": text}));
                events.push("response.content_part.done", json!({"item_id": item_id, "output_index": index, "content_index": 0, "part": item.pointer("/content/0")}));
            }
            if kind == "function_call" {
                let arguments = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                for piece in pieces(arguments, 3).into_iter().filter(|p| !p.is_empty()) {
                    events.push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": item_id, "output_index": index, "delta": piece}),
                    );
                }
                events.push(
                    "response.function_call_arguments.done",
                    json!({"item_id": item_id, "output_index": index, "arguments": arguments}),
                );
            }
            if kind == "mcp_call" {
                events.push(
                    "response.mcp_call.completed",
                    json!({"item_id": item_id, "output_index": index}),
                );
            }
            events.push(
                "response.output_item.done",
                json!({"output_index": index, "item": item}),
            );
        }
        events.push(
            "response.completed",
            json!({"response": self.response("completed", items)}),
        );
        events.body
    }

    /// The start of a streamed function call, cut after half of its arguments.
    fn cut(&self, call: &ScriptedCall) -> String {
        let mut events = Events::default();
        events.push(
            "response.created",
            json!({"response": self.response("in_progress", &[])}),
        );
        let mut item = self.function_call(0, call);
        let item_id = item["id"].clone();
        item["arguments"] = json!("");
        item["status"] = json!("in_progress");
        events.push(
            "response.output_item.added",
            json!({"output_index": 0, "item": item}),
        );
        let half = pieces(&call.arguments, 2)
            .first()
            .copied()
            .unwrap_or_default();
        events.push(
            "response.function_call_arguments.delta",
            json!({"item_id": item_id, "output_index": 0, "delta": half}),
        );
        events.body
    }
}

/// Server-sent events with `event:` names and numbered `data:` objects.
#[derive(Default)]
struct Events {
    body: String,
    sequence: u64,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.body.push_str("event: ");
        self.body.push_str(kind);
        self.body.push('\n');
        push_event(&mut self.body, &data.to_string());
    }
}
