//! End to end through the real `airlock` binary for every provider kind: OpenAI Responses with a
//! hosted MCP server that asks for approval, Anthropic Messages with two tool calls, and the
//! resilience of every provider (429 + Retry-After, a stream cut mid-arguments, 500 on every try).
//!
//! The scripted server speaks each wire format as its public document describes it; which
//! document each fixture follows is written at the top of `crates/testkit/src/responses.rs`
//! (OpenAI API reference "Responses", "Streaming events", guide "Remote MCP") and
//! `crates/testkit/src/anthropic.rs` (Anthropic API reference "Messages", "Streaming Messages").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::{Reply, ScriptedApproval, ScriptedCall, ScriptedMcpCall, ScriptedModel};
use serde_json::{Value, json};
use std::path::Path;

mod common;
use common::*;

const HOSTED: &str = "deepwiki=https://mcp.deepwiki.com/mcp";

fn ask(id: &str, question: &str) -> Reply {
    Reply::McpApprovalRequests(vec![ScriptedApproval {
        id: id.into(),
        server_label: "deepwiki".into(),
        name: "ask_question".into(),
        arguments: json!({"repoName": "rust-lang/rust", "question": question}).to_string(),
    }])
}

fn ran(id: &str, output: &str, text: &str) -> Reply {
    Reply::McpCall {
        call: ScriptedMcpCall {
            approval_request_id: Some(id.into()),
            server_label: "deepwiki".into(),
            name: "ask_question".into(),
            arguments: json!({"repoName": "rust-lang/rust"}).to_string(),
            output: Some(output.into()),
            error: None,
        },
        text: text.into(),
    }
}

/// The `input` items of a Responses request of the given type.
fn items_of(request: &Value, kind: &str) -> Vec<Value> {
    request["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == kind)
        .cloned()
        .collect()
}

fn chat_in_background(d: &Path, args: &[&str]) -> std::thread::JoinHandle<std::process::Output> {
    let d = d.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    std::thread::spawn(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        airlock(&d, &args)
    })
}

fn audit(d: &Path) -> Vec<Value> {
    ok(d, &["audit", "--json", "--limit", "1000"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn responses_mcp_approval_request_approved_then_another_denied() {
    let model = ScriptedModel::start(vec![
        ask("mcpr_1", "what is a borrow?"),
        ran(
            "mcpr_1",
            "a reference that does not own",
            "A borrow is a reference.",
        ),
        ask("mcpr_2", "delete the repo?"),
        Reply::Text("Understood, I did not ask.".into()),
    ])
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let _engine = Engine::start(d);
    ok(
        d,
        &[
            "provider",
            "set",
            "--kind",
            "openai-responses",
            "--base-url",
            &model.base_url(),
            "--model",
            "scripted",
            "--hosted-mcp",
            HOSTED,
        ],
    );

    // Approved: the inbox item is a provider_tool_call with the server label, tool and arguments.
    let waiter = chat_in_background(d, &["chat", "--session", "wiki", "what is a borrow?"]);
    let items = inbox(d, 1);
    let item = &items[0];
    assert_eq!(item["kind"], "provider_tool_call");
    assert_eq!(
        (item["server"].as_str(), item["tool"].as_str()),
        (Some("deepwiki"), Some("ask_question"))
    );
    assert_eq!(
        item["args"],
        json!({"repoName": "rust-lang/rust", "question": "what is a borrow?"})
    );
    assert!(item["why"].as_str().unwrap().contains("provider"), "{item}");
    let id = item["approval_id"].as_str().unwrap().to_string();
    // The provider runs the tool, so its arguments cannot be edited.
    let out = airlock(d, &["approve", &id, "--args", r#"{"question": "other"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be edited"));
    ok(d, &["approve", &id]);
    let out = waiter.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "A borrow is a reference."
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let mcp_tool = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "mcp")
        .cloned()
        .unwrap();
    assert_eq!(
        mcp_tool,
        json!({"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "always"})
    );
    assert_eq!(
        items_of(&requests[1], "mcp_approval_request")[0]["id"],
        "mcpr_1"
    );
    assert_eq!(
        items_of(&requests[1], "mcp_approval_response"),
        vec![
            json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true})
        ]
    );
    assert!(
        items_of(&requests[1], "function_call_output").is_empty(),
        "Airlock ran nothing itself"
    );

    // Denied with a reason: the next request carries it.
    let waiter = chat_in_background(d, &["chat", "--session", "wiki", "now delete it"]);
    let items = inbox(d, 1);
    assert_eq!(items[0]["kind"], "provider_tool_call");
    let denied_id = items[0]["approval_id"].as_str().unwrap().to_string();
    ok(
        d,
        &["deny", &denied_id, "--reason", "never delete repositories"],
    );
    let out = waiter.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Understood, I did not ask."
    );
    let requests = model.requests();
    let answers = items_of(&requests[3], "mcp_approval_response");
    assert_eq!(
        answers,
        vec![
            json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true}),
            json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_2", "approve": false, "reason": "never delete repositories"}),
        ]
    );

    // The provider's report of the tool it ran is replayed right after the approval, so the
    // provider sees that the approved tool already ran and does not run it again.
    let input = requests[3]["input"].as_array().unwrap();
    let position = |kind: &str, key: &str, id: &str| {
        input
            .iter()
            .position(|i| i["type"] == kind && i[key] == id)
            .unwrap()
    };
    let replayed = &input[position("mcp_call", "approval_request_id", "mcpr_1")];
    assert_eq!(replayed["output"], "a reference that does not own");
    assert_eq!(
        position("mcp_call", "approval_request_id", "mcpr_1"),
        position("mcp_approval_response", "approval_request_id", "mcpr_1") + 1
    );

    // The person's decisions and the provider's outcome are in the audit trail.
    let rows = audit(d);
    let row = |action: &str, approval: &str| {
        rows.iter()
            .find(|r| r["action"] == action && r["approval_id"] == approval)
            .cloned()
    };
    assert!(row("approval_requested", &id).is_some());
    assert!(row("approved", &id).is_some());
    let outcome = row("provider_tool_outcome", &id).expect("the provider's outcome is audited");
    assert_eq!(outcome["actor"], "provider");
    assert_eq!(outcome["detail"]["output"], "a reference that does not own");
    assert_eq!(
        row("denied", &denied_id).unwrap()["detail"]["reason"],
        "never delete repositories"
    );
    let transcript = ok(d, &["transcript", "--session", "wiki"]);
    assert!(
        transcript.contains("[succeeded] deepwiki/ask_question"),
        "{transcript}"
    );
    assert!(
        transcript.contains("[denied] deepwiki/ask_question"),
        "{transcript}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_two_tool_uses_one_approved_with_edits_one_denied() {
    let calls = vec![
        ScriptedCall::new(
            "toolu_1",
            "builtin__write_file",
            json!({"path": "one.txt", "content": "first"}),
        ),
        ScriptedCall::new(
            "toolu_2",
            "builtin__write_file",
            json!({"path": "two.txt", "content": "second"}),
        ),
    ];
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(calls),
        Reply::Text("one written, two refused".into()),
    ])
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let _engine = Engine::start_with_env(d, &[("AIRLOCK_E2E_ANTHROPIC_KEY", "sk-ant-e2e")]);
    // The default provider stays an OpenAI-compatible one; the session picks the named one.
    ok(
        d,
        &[
            "provider",
            "set",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "unused",
        ],
    );
    ok(
        d,
        &[
            "provider",
            "set",
            "--name",
            "claude",
            "--kind",
            "anthropic",
            "--base-url",
            &model.base_url(),
            "--model",
            "claude-test",
            "--api-key-env",
            "AIRLOCK_E2E_ANTHROPIC_KEY",
        ],
    );
    let shown = ok(d, &["provider", "show"]);
    assert!(
        shown.contains("\"claude\"") && shown.contains("anthropic"),
        "{shown}"
    );
    assert!(
        !shown.contains("sk-ant-e2e"),
        "the key itself is never stored"
    );
    let out = airlock(d, &["chat", "--provider", "nobody", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no provider named 'nobody'"));

    let waiter = chat_in_background(
        d,
        &[
            "chat",
            "--session",
            "c",
            "--provider",
            "claude",
            "write two files",
        ],
    );
    let items = inbox(d, 2);
    assert!(items.iter().all(|i| i["kind"] == "tool_call"));
    let by_path = |p: &str| {
        items.iter().find(|i| i["args"]["path"] == p).unwrap()["approval_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    ok(
        d,
        &[
            "approve",
            &by_path("one.txt"),
            "--args",
            r#"{"path": "one-edited.txt", "content": "edited"}"#,
        ],
    );
    ok(
        d,
        &["deny", &by_path("two.txt"), "--reason", "two is not needed"],
    );
    let out = waiter.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "one written, two refused"
    );

    let workspace = d.join("workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("one-edited.txt")).unwrap(),
        "edited"
    );
    assert!(!workspace.join("one.txt").exists() && !workspace.join("two.txt").exists());
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["model"], "claude-test");
    let headers = &model.request_headers()[0];
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("x-api-key").as_deref(), Some("sk-ant-e2e"));
    assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
    let messages = requests[1]["messages"].as_array().unwrap();
    let assistant = &messages[messages.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .count(),
        2
    );
    let results = messages.last().unwrap();
    assert_eq!(results["role"], "user");
    let blocks = results["content"].as_array().unwrap();
    assert_eq!(
        blocks.len(),
        2,
        "both results in one user message: {results}"
    );
    assert_eq!(blocks[0]["tool_use_id"], "toolu_1");
    assert!(blocks[0].get("is_error").is_none());
    assert!(
        blocks[0]["content"]
            .as_str()
            .unwrap()
            .contains("one-edited.txt")
    );
    assert_eq!(blocks[1]["tool_use_id"], "toolu_2");
    assert_eq!(blocks[1]["is_error"], true);
    let denied: Value = serde_json::from_str(blocks[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        denied,
        json!({"type": "execution-denied", "reason": "two is not needed"})
    );
}

/// Sets up an engine whose default provider is `kind` at the scripted server.
fn engine_for(kind: &str, model: &ScriptedModel, extra: &[&str]) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path());
    let url = model.base_url();
    let mut args = vec![
        "provider",
        "set",
        "--kind",
        kind,
        "--base-url",
        url.as_str(),
        "--model",
        "scripted",
    ];
    args.extend_from_slice(extra);
    ok(dir.path(), &args);
    (dir, engine)
}

const KINDS: [&str; 3] = ["openai-chat", "openai-responses", "anthropic"];

#[tokio::test(flavor = "multi_thread")]
async fn a_429_with_retry_after_then_success_for_every_provider() {
    for kind in KINDS {
        let model = ScriptedModel::start(vec![
            Reply::Error {
                status: 429,
                retry_after: Some(1),
            },
            Reply::Text("made it".into()),
        ])
        .await
        .unwrap();
        let (dir, _engine) = engine_for(kind, &model, &[]);
        let out = ok(dir.path(), &["chat", "hello"]);
        assert_eq!(out.trim(), "made it", "{kind}");
        assert_eq!(model.requests().len(), 2, "{kind}: one retry");
        assert_eq!(
            model.requests()[0],
            model.requests()[1],
            "{kind}: the same request again"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_mid_arguments_is_never_in_the_inbox_and_never_runs() {
    for kind in KINDS {
        let call = ScriptedCall::new(
            "c1",
            "builtin__write_file",
            json!({"path": "cut.txt", "content": "should never be written"}),
        );
        let model = ScriptedModel::start(vec![
            Reply::CutStream(call),
            Reply::Text("never asked".into()),
        ])
        .await
        .unwrap();
        let (dir, _engine) = engine_for(kind, &model, &[]);
        let d = dir.path();
        ok(d, &["mode", "set", "never-ask"]);
        let out = airlock(d, &["chat", "--session", "cut", "write it"]);
        assert_eq!(out.status.code(), Some(1), "{kind}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cut off")
                && stderr.contains("incomplete tool calls, not run: builtin__write_file"),
            "{kind}: {stderr}"
        );
        assert_eq!(ok(d, &["inbox", "--json"]).trim(), "[]", "{kind}");
        assert!(
            !d.join("workspace/cut.txt").exists(),
            "{kind}: even in never-ask mode the call did not run"
        );
        assert_eq!(
            model.requests().len(),
            1,
            "{kind}: a cut stream is not retried"
        );
        let transcript: Vec<Value> =
            serde_json::from_str(&ok(d, &["transcript", "--session", "cut", "--json"])).unwrap();
        assert_eq!(
            transcript.len(),
            1,
            "{kind}: only the user's message: {transcript:?}"
        );
        assert_eq!(transcript[0]["role"], "user");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_on_every_try_ends_with_a_clear_error_and_loses_nothing() {
    for kind in KINDS {
        let error = || Reply::Error {
            status: 500,
            retry_after: None,
        };
        let model = ScriptedModel::start(vec![
            error(),
            error(),
            error(),
            Reply::Text("back again".into()),
        ])
        .await
        .unwrap();
        let (dir, _engine) = engine_for(kind, &model, &["--max-retries", "2"]);
        let d = dir.path();
        let out = airlock(d, &["chat", "--session", "s", "first question"]);
        assert_eq!(out.status.code(), Some(1), "{kind}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("gave up after 3 tries") && stderr.contains("HTTP 500"),
            "{kind}: {stderr}"
        );
        assert_eq!(model.requests().len(), 3, "{kind}: bounded retries");
        // Nothing is lost: the question stays, and the session goes on.
        assert_eq!(
            ok(d, &["chat", "--session", "s", "second question"]).trim(),
            "back again",
            "{kind}"
        );
        let transcript: Vec<Value> =
            serde_json::from_str(&ok(d, &["transcript", "--session", "s", "--json"])).unwrap();
        let texts: Vec<&str> = transcript
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            ["first question", "second question", "back again"],
            "{kind}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_timeout_is_retried_then_reported() {
    // A server that accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let _engine = Engine::start(d);
    let url = format!("http://{addr}/v1");
    ok(
        d,
        &[
            "provider",
            "set",
            "--kind",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "m",
            "--timeout-secs",
            "1",
            "--max-retries",
            "1",
        ],
    );
    let out = airlock(d, &["chat", "hello"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gave up after 2 tries") && stderr.contains("did not answer in time"),
        "{stderr}"
    );
    held.abort();
}

// Unix only: the command and the file it appends (`ran\n`) are sh's; cmd.exe writes `ran \r\n`.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_retried_request_never_runs_a_tool_again() {
    for kind in KINDS {
        let append = ScriptedCall::new(
            "c1",
            "builtin__run_command",
            json!({"command": "echo ran >> ran.txt"}),
        );
        let model = ScriptedModel::start(vec![
            Reply::ToolCalls(vec![append]),
            Reply::Error {
                status: 503,
                retry_after: Some(0),
            },
            Reply::Error {
                status: 429,
                retry_after: Some(0),
            },
            Reply::Text("ran it once".into()),
        ])
        .await
        .unwrap();
        let (dir, _engine) = engine_for(kind, &model, &[]);
        let d = dir.path();
        ok(d, &["mode", "set", "never-ask"]);
        assert_eq!(ok(d, &["chat", "run it"]).trim(), "ran it once", "{kind}");
        assert_eq!(model.requests().len(), 4, "{kind}");
        assert_eq!(
            std::fs::read_to_string(d.join("workspace/ran.txt")).unwrap(),
            "ran\n",
            "{kind}: the tool ran exactly once"
        );
    }
}
