//! Bad input on the command line: every command given malformed JSON, unknown or wrong ids,
//! invalid patterns or values answers with a clear error and a non-zero exit, and nothing runs
//! and nothing is lost — the waiting request still waits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{airlock, eventually, ok, setup};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_clearly_and_changes_nothing() {
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__write_file",
            json!({"path": "target.txt", "content": "x"}),
        )]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--no-wait", "--session", "s", "write"]);
    let items: Vec<Value> = eventually("the request", || {
        let items: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
        (!items.is_empty()).then_some(items)
    });
    let id = items[0]["approval_id"].as_str().unwrap().to_string();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "malformed JSON edit",
            vec!["approve", &id, "--args", "{bad"],
        ),
        (
            "an edit that is not an object",
            vec!["approve", &id, "--args", "[1]"],
        ),
        (
            "an edit against the schema",
            vec!["approve", &id, "--args", r#"{"path": 5}"#],
        ),
        (
            "an edit out of the workspace",
            vec![
                "approve",
                &id,
                "--args",
                r#"{"path": "../x.txt", "content": "y"}"#,
            ],
        ),
        ("an unknown id", vec!["approve", "apr_nope"]),
        (
            "deny an unknown id",
            vec!["deny", "apr_nope", "--reason", "x"],
        ),
        ("answer a tool call", vec!["answer", &id, "--accept", "{}"]),
        (
            "a bad remember scope",
            vec!["approve", &id, "--remember", "forever"],
        ),
        (
            "a pointer without '/'",
            vec!["rules", "add", "builtin/write_file", "path", "*", "allow"],
        ),
        (
            "an invalid regex",
            vec![
                "rules",
                "add",
                "builtin/write_file",
                "/path",
                "[",
                "deny",
                "--regex",
            ],
        ),
        (
            "a rule for no tool",
            vec!["rules", "add", "nothing", "/path", "*", "allow"],
        ),
        (
            "a timeout that is no number",
            vec!["settings", "set", "approval-timeout", "soon"],
        ),
        ("an unknown mode", vec!["mode", "set", "sometimes"]),
        (
            "a URL that is not http",
            vec!["servers", "add", "x", "--url", "ftp://example.com"],
        ),
        (
            "a transcript of no session",
            vec!["transcript", "--session", "nope"],
        ),
    ];
    for (what, args) in &cases {
        let out = airlock(d, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: accepted: {args:?}");
        assert!(!stderr.trim().is_empty(), "{what}: no message");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        let waiting: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
        assert_eq!(waiting.len(), 1, "{what}: the request no longer waits");
        assert!(
            !d.join("workspace/target.txt").exists(),
            "{what}: the call ran"
        );
    }
    ok(d, &["approve", &id]);
    ok(d, &["wait", "--session", "s"]);
    assert_eq!(
        std::fs::read_to_string(d.join("workspace/target.txt")).unwrap(),
        "x"
    );
    // A replay of the decision is refused.
    assert!(!airlock(d, &["approve", &id]).status.success());
}
