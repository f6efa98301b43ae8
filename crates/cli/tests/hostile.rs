//! Bad input on the command line: every command given malformed JSON, unknown or wrong ids,
//! invalid patterns or values answers with a clear error and a non-zero exit, and nothing runs
//! and nothing is lost — the waiting request still waits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{airlock, eventually, ok, setup};
use serde_json::{Value, json};

/// An engine whose session `s` waits on one write_file request (to `workspace/target.txt`), the
/// model's next answer "done"; returns them with the request's id.
async fn one_waiting_write() -> (ScriptedModel, tempfile::TempDir, common::Engine, String) {
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
    let (dir, engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--no-wait", "--session", "s", "write"]);
    let items: Vec<Value> = eventually("the request", || {
        let items: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
        (!items.is_empty()).then_some(items)
    });
    let id = items[0]["approval_id"].as_str().unwrap().to_string();
    (model, dir, engine, id)
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_clearly_and_changes_nothing() {
    let (_model, dir, _engine, id) = one_waiting_write().await;
    let d = dir.path();
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
            "run_command approvable from a notification",
            vec!["tools", "from-notification", "builtin/run_command", "on"],
        ),
        (
            "a notification choice for no tool",
            vec!["tools", "from-notification", "builtin/nothing", "on"],
        ),
        (
            "a notification choice for no server",
            vec!["servers", "from-notification", "nothing", "off"],
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

/// Generated command lines: every command that takes input, given random ids, names, JSON and
/// flags (the waiting request's id only with an edit that cannot be valid). Each exits 0, 1 or
/// 2 — with a message when not 0 — never panics, and nothing runs and nothing is lost.
/// `AIRLOCK_FUZZ_CASES` sets the number of command lines (default 150).
#[tokio::test(flavor = "multi_thread")]
async fn generated_command_lines_are_refused_clearly_and_run_nothing() {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    let cases: usize = std::env::var("AIRLOCK_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let (_model, dir, _engine, real) = one_waiting_write().await;
    let d = dir.path();

    // Words: never the waiting session's name or a real server's.
    let word = || {
        prop_oneof![
            "[a-z_]{1,10}".prop_map(|w| if w == "s" || w == "builtin" {
                format!("{w}_x")
            } else {
                w
            }),
            "\\PC{0,20}",
            "[\\u{1}-\\u{1f}\\u{202a}-\\u{202e}\\u{1b}]{1,6}",
            Just("apr_nope".to_string()),
            Just("builtin/nothing".to_string()),
            Just("../../etc/passwd".to_string()),
            Just("-".to_string()),
            Just("".to_string()),
        ]
    };
    // JSON texts that are no valid edit: broken, not objects, deep, NaN.
    let bad_json = prop_oneof![
        "\\PC{0,30}",
        Just("{\"path\":".to_string()),
        Just("NaN".to_string()),
        Just("[1,2]".to_string()),
        Just("\"text\"".to_string()),
        (1usize..3000).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
    ];
    let flag = prop_oneof![
        Just("--remember"),
        Just("--exact-args"),
        Just("--for-chat"),
        Just("--reason"),
        Just("--json"),
        Just("--regex"),
        Just("--session"),
        Just("--yes"),
        Just("--accept"),
    ]
    .prop_map(str::to_string);
    let tail = prop::collection::vec(prop_oneof![flag, word()], 0..4);
    let command = (
        prop::sample::select(vec![
            "approve-real",
            "approve",
            "deny",
            "answer",
            "rules add",
            "settings set",
            "tools set",
            "tools from-notification",
            "servers review",
            "servers trust",
            "servers default",
            "servers from-notification",
            "servers remove",
            "servers enable",
            "transcript --session",
            "cancel --session",
            "mode set",
            "audit --limit",
        ]),
        word(),
        word(),
        word(),
        bad_json,
        tail,
    )
        .prop_map({
            let real = real.clone();
            move |(which, a, b, c, json_text, tail)| {
                let mut line: Vec<String> = match which {
                    "approve-real" => {
                        vec!["approve".into(), real.clone(), "--args".into(), json_text]
                    }
                    "answer" => vec!["answer".into(), a, "--accept".into(), json_text],
                    "rules add" => vec!["rules".into(), "add".into(), a, b, c, "allow".into()],
                    other => other.split(' ').map(str::to_string).chain([a, b]).collect(),
                };
                line.extend(tail);
                line
            }
        });

    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for n in 0..cases {
        let line = command.new_tree(&mut runner).unwrap().current();
        let args: Vec<&str> = line.iter().map(String::as_str).collect();
        let out = airlock(d, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let shown = format!(
            "case {n}: {args:?} → {:?}: {stderr:.300}",
            out.status.code()
        );
        assert!(matches!(out.status.code(), Some(0..=2)), "{shown}");
        assert!(!stderr.contains("panicked"), "{shown}");
        if !out.status.success() {
            assert!(!stderr.trim().is_empty(), "no message: {shown}");
        }
        let waiting: Vec<Value> = serde_json::from_str(&ok(d, &["inbox", "--json"])).unwrap();
        assert!(
            waiting.iter().any(|w| w["approval_id"] == real.as_str()),
            "the request no longer waits after {shown}"
        );
        assert!(
            !d.join("workspace/target.txt").exists(),
            "the call ran after {shown}"
        );
    }
}

/// `airlock inbox | head -1`: a reader that stops early ends each command quietly — no panic,
/// no backtrace, exit 0. The pipe's reading end is closed before the command starts, so its
/// first line already meets the closed pipe.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_pipe_ends_each_command_quietly() {
    let (_model, dir, _engine, _id) = one_waiting_write().await;
    let d = dir.path();
    for args in [
        &["inbox"][..],
        &["inbox", "--json"],
        &["sessions"],
        &["transcript", "--session", "s"],
        &["agents"],
        &["tools"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(common::BIN)
            .arg("--data-dir")
            .arg(d)
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "airlock {args:?} on a closed pipe: {:?}\n{stderr}",
            out.status
        );
    }
}
