//! `POST /v1/messages`: the Anthropic Messages API as the scripted model speaks it.
//!
//! Follows Anthropic's API reference "Messages" (<https://docs.anthropic.com/en/api/messages>):
//! the answer is a `message` object (`id`, `type: "message"`, `role: "assistant"`, `content`
//! blocks of `{"type": "text", "text"}` and `{"type": "tool_use", "id", "name", "input"}` with
//! `input` a JSON object, `stop_reason` `"end_turn"` or `"tool_use"`, `usage`); errors are the
//! status code with `{"type": "error", "error": {"type", "message"}}` ("Errors",
//! <https://docs.anthropic.com/en/api/errors>) and a `retry-after` header when scripted.
//! With `"stream": true` it is server-sent events as in "Streaming Messages"
//! (<https://docs.anthropic.com/en/docs/build-with-claude/streaming>): `message_start`, per
//! block `content_block_start`, `content_block_delta` (`text_delta` or `input_json_delta` with
//! `partial_json` fragments), `content_block_stop`, a `ping` after the first block start, then
//! `message_delta` (`stop_reason`, `usage`) and `message_stop`. Right after `message_start` it
//! sends one event of a type no document defines (`airlock_testkit_unknown`): the streaming guide
//! says new event types may be added and clients must ignore the ones they do not know.
//!
//! A request ends with the user's own words when its last message is a user message that is not
//! made of `tool_result` blocks.

use crate::{
    Reply, ScriptedCall, Shared, json_response, pieces, push_event, send_then_cut, sse, take_reply,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

fn error(status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let kind = match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        401 => "authentication_error",
        _ => "invalid_request_error",
    };
    crate::error_with_body(
        status,
        retry_after,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

fn last_is_user(request: &Value) -> bool {
    let Some(last) = request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
    else {
        return false;
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return false;
    }
    match last.get("content") {
        Some(Value::Array(blocks)) => !blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")),
        _ => true,
    }
}

pub(crate) async fn create(
    State(shared): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let (request, reply, n) = match take_reply(
        &shared,
        &headers,
        &body,
        last_is_user,
        crate::smart_any,
        error,
    ) {
        Ok(taken) => taken,
        Err(response) => return *response,
    };
    let (stream, model) = crate::stream_and_model(&request);
    let out = Out {
        id: format!("msg_{n}"),
        model,
    };
    let (blocks, stop) = match reply {
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
        Reply::CutStream(call) if stream => return send_then_cut(out.cut(&call)),
        Reply::CutStream(_) => return crate::cut_connection(),
        Reply::Text(text) => (vec![json!({"type": "text", "text": text})], "end_turn"),
        Reply::ToolCalls(calls) => (calls.iter().map(tool_use).collect(), "tool_use"),
        Reply::McpApprovalRequests(_) | Reply::McpCall { .. } => {
            return error(
                500,
                None,
                "scripted hosted-MCP replies exist only in the Responses API",
            );
        }
    };
    if stream {
        sse(out.events(&blocks, stop))
    } else {
        json_response(out.message(&blocks, Some(stop)))
    }
}

/// A `tool_use` block; arguments that are not a JSON object are sent as a string in `input`
/// (which a real server never does; tests use it to see what the client makes of it).
fn tool_use(call: &ScriptedCall) -> Value {
    let input = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
}

struct Out {
    id: String,
    model: String,
}

fn event(body: &mut String, kind: &str, mut data: Value) {
    data["type"] = json!(kind);
    body.push_str("event: ");
    body.push_str(kind);
    body.push('\n');
    push_event(body, &data.to_string());
}

impl Out {
    fn message(&self, content: &[Value], stop: Option<&str>) -> Value {
        json!({
            "id": self.id, "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        })
    }

    fn start(&self, body: &mut String) {
        event(
            body,
            "message_start",
            json!({"message": self.message(&[], None)}),
        );
    }

    fn events(&self, blocks: &[Value], stop: &str) -> String {
        let mut body = String::new();
        self.start(&mut body);
        event(
            &mut body,
            "airlock_testkit_unknown",
            json!({"note": "an event type clients do not know"}),
        );
        for (index, block) in blocks.iter().enumerate() {
            if block["type"] == "text" {
                event(
                    &mut body,
                    "content_block_start",
                    json!({"index": index, "content_block": {"type": "text", "text": ""}}),
                );
                let text = block["text"].as_str().unwrap_or_default();
                for piece in pieces(text, 3).into_iter().filter(|p| !p.is_empty()) {
                    event(
                        &mut body,
                        "content_block_delta",
                        json!({"index": index, "delta": {"type": "text_delta", "text": piece}}),
                    );
                }
            } else {
                let mut start = block.clone();
                start["input"] = json!({});
                event(
                    &mut body,
                    "content_block_start",
                    json!({"index": index, "content_block": start}),
                );
                let input = block["input"].to_string();
                event(
                    &mut body,
                    "content_block_delta",
                    json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}),
                );
                for piece in pieces(&input, 3).into_iter().filter(|p| !p.is_empty()) {
                    event(
                        &mut body,
                        "content_block_delta",
                        json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                }
            }
            if index == 0 {
                event(&mut body, "ping", json!({}));
            }
            event(&mut body, "content_block_stop", json!({"index": index}));
        }
        event(
            &mut body,
            "message_delta",
            json!({"delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 10}}),
        );
        event(&mut body, "message_stop", json!({}));
        body
    }

    /// A `tool_use` block cut after half of its input.
    fn cut(&self, call: &ScriptedCall) -> String {
        let mut body = String::new();
        self.start(&mut body);
        let mut start = tool_use(call);
        start["input"] = json!({});
        event(
            &mut body,
            "content_block_start",
            json!({"index": 0, "content_block": start}),
        );
        let half = pieces(&call.arguments, 2)
            .first()
            .copied()
            .unwrap_or_default();
        event(
            &mut body,
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": half}}),
        );
        body
    }
}
