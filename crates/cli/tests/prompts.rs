//! Fewer, better prompts through the real `airlock` binary: `approve --times/--for` and
//! `grants`, `rules suggest` and `rules add --dry-run` previewed against a recorded History
//! (the counts exact), and `insights --json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};

mod common;
use common::*;

fn writes(paths: &[&str]) -> Reply {
    Reply::ToolCalls(
        paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                ScriptedCall::new(
                    format!("c{i}"),
                    "builtin__write_file",
                    json!({"path": path, "content": "x"}),
                )
            })
            .collect(),
    )
}

fn id(item: &Value) -> &str {
    item["approval_id"].as_str().unwrap()
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_times_lets_the_next_calls_run_and_grants_shows_what_is_left() {
    let model = ScriptedModel::start(vec![
        writes(&["a.txt"]),
        Reply::Text("one".into()),
        writes(&["b.txt"]),
        Reply::Text("two".into()),
        writes(&["c.txt"]),
        Reply::Text("three".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--session", "s", "--no-wait", "one"]);
    let first = inbox(d, 1).remove(0);
    // Nonsense is refused with a clear message, and nothing is decided.
    let bad = airlock(d, &["approve", id(&first), "--for", "soon"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a duration"));
    let zero = airlock(d, &["approve", id(&first), "--times", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert_eq!(inbox(d, 1).len(), 1);

    ok(d, &["approve", id(&first), "--times", "2", "--for", "1h"]);
    assert_eq!(ok(d, &["wait", "--session", "s"]).trim(), "one");
    let grants = json_of(&ok(d, &["grants", "--json"]));
    assert_eq!(grants.as_array().unwrap().len(), 1, "{grants}");
    assert_eq!(grants[0]["entry"]["uses_left"], 1);
    let listed = ok(d, &["grants"]);
    assert!(
        listed.contains("builtin/write_file")
            && (listed.contains("\t1 h left, 1 call left")
                || listed.contains(" min left, 1 call left")),
        "{listed}"
    );

    // The next call runs without asking; the one after asks again.
    assert_eq!(
        ok(d, &["chat", "--session", "s", "two"]).trim(),
        "two",
        "the granted call should have run without asking"
    );
    assert!(d.join("workspace/b.txt").exists());
    assert_eq!(ok(d, &["grants", "--json"]).trim(), "[]");
    ok(d, &["chat", "--session", "s", "--no-wait", "three"]);
    let asked = inbox(d, 1);
    assert_eq!(asked[0]["args"]["path"], "c.txt");
    assert!(!d.join("workspace/c.txt").exists());
}

/// Issue 27: `approve --for/--times` covers this chat and the suggested pattern by default;
/// `--scope all`, `--pattern GLOB` and `--any-args` widen it, and go with a grant only. The
/// transcript says which grant let a call through and what an approval granted.
#[tokio::test(flavor = "multi_thread")]
async fn approve_grant_scope_pattern_and_any_args() {
    let model = ScriptedModel::start(vec![
        writes(&["notes/a.txt"]),
        Reply::Text("one".into()),
        writes(&["notes/b.txt"]),
        Reply::Text("two".into()),
        writes(&["notes/c.txt"]),
        Reply::Text("three".into()),
        writes(&["notes/sub/d.md"]),
        Reply::Text("four".into()),
        writes(&["x/e.bin"]),
        Reply::Text("five".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--session", "s", "--no-wait", "one"]);
    let first = inbox(d, 1).remove(0);
    // Without --for or --times there is no grant to scope: refused by the parser.
    for flags in [
        &["--scope", "all"][..],
        &["--pattern", "notes/*"],
        &["--any-args"],
    ] {
        let bad = airlock(d, &[&["approve", id(&first)][..], flags].concat());
        assert_eq!(bad.status.code(), Some(2), "{flags:?}");
    }
    let both = airlock(
        d,
        &[
            "approve",
            id(&first),
            "--for",
            "1h",
            "--any-args",
            "--exact-args",
        ],
    );
    assert_eq!(both.status.code(), Some(2));
    // A pattern must cover the call it is made from.
    let elsewhere = airlock(
        d,
        &["approve", id(&first), "--for", "1h", "--pattern", "docs/*"],
    );
    assert_eq!(elsewhere.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&elsewhere.stderr).contains("does not cover"),
        "{}",
        String::from_utf8_lossy(&elsewhere.stderr)
    );
    assert_eq!(inbox(d, 1).len(), 1, "nothing decided");
    // The defaults: this chat, the file's folder; the approval says what it granted.
    assert!(
        ok(d, &["approve", id(&first), "--for", "1h"]).contains(
            "granted for 1 h: builtin/write_file with anything under notes/ in this chat"
        )
    );
    ok(d, &["wait", "--session", "s"]);
    let listed = ok(d, &["grants"]);
    assert!(
        listed.contains("\tsession\tanything under notes/\t"),
        "{listed}"
    );

    // Another chat is asked, and widens its grant to every chat, for a typed pattern.
    ok(d, &["chat", "--session", "t", "--no-wait", "two"]);
    let second = inbox(d, 1).remove(0);
    assert_eq!(second["args"]["path"], "notes/b.txt");
    ok(
        d,
        &[
            "approve",
            id(&second),
            "--times",
            "5",
            "--scope",
            "all",
            "--pattern",
            "notes/*.txt",
        ],
    );
    ok(d, &["wait", "--session", "t"]);
    assert!(ok(d, &["transcript", "--session", "t"]).contains(
        "granted for the next 4 calls: builtin/write_file with `notes/*.txt` in every chat"
    ));
    assert_eq!(ok(d, &["chat", "--session", "u", "three"]).trim(), "three");
    let shown = ok(d, &["transcript", "--session", "u"]);
    assert!(
        shown.contains("allowed by the grant made at ")
            && shown.contains("with `notes/*.txt` in every chat, 3 calls left"),
        "{shown}"
    );

    // Outside the pattern: asked again; any arguments, asked for, covers everything.
    ok(d, &["chat", "--session", "u", "--no-wait", "four"]);
    let fourth = inbox(d, 1).remove(0);
    assert_eq!(fourth["args"]["path"], "notes/sub/d.md");
    ok(d, &["approve", id(&fourth), "--for", "15m", "--any-args"]);
    ok(d, &["wait", "--session", "u"]);
    assert_eq!(ok(d, &["chat", "--session", "u", "five"]).trim(), "five");
    assert!(d.join("workspace/x/e.bin").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_suggest_and_dry_run_count_exactly_what_history_holds() {
    let model = ScriptedModel::start(vec![
        writes(&["a.txt"]),
        Reply::Text("one".into()),
        writes(&["notes/b.txt", "notes/c.txt"]),
        Reply::Text("two".into()),
        writes(&["notes/d.txt"]),
        Reply::Text("three".into()),
    ])
    .await
    .unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    ok(d, &["chat", "--session", "s", "--no-wait", "one"]);
    ok(d, &["approve", id(&inbox(d, 1)[0])]);
    ok(d, &["wait", "--session", "s"]);
    ok(d, &["chat", "--session", "s", "--no-wait", "two"]);
    let two = inbox(d, 2);
    let by_path = |path: &str| two.iter().find(|i| i["args"]["path"] == path).unwrap();
    ok(d, &["approve", id(by_path("notes/b.txt"))]);
    ok(
        d,
        &["deny", id(by_path("notes/c.txt")), "--reason", "not c"],
    );
    ok(d, &["wait", "--session", "s"]);
    ok(d, &["chat", "--session", "s", "--no-wait", "three"]);
    let pending = inbox(d, 1).remove(0);

    let suggestions = json_of(&ok(d, &["rules", "suggest", id(&pending), "--json"]));
    let find = |pointer: &str, pattern: &str| {
        suggestions
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["pointer"] == pointer && s["pattern"] == pattern)
            .unwrap_or_else(|| panic!("no {pointer} {pattern} in {suggestions}"))
            .clone()
    };
    // History: a.txt, notes/b.txt, notes/c.txt (denied), notes/d.txt (waiting).
    let folder = find("/path", "notes/**");
    assert_eq!(
        (
            &folder["server"],
            &folder["tool"],
            &folder["action"],
            &folder["matches"],
            &folder["denied_matches"],
            &folder["history"],
        ),
        (
            &json!("builtin"),
            &json!("write_file"),
            &json!("allow"),
            &json!(3),
            &json!(1),
            &json!(4)
        ),
        "{folder}"
    );
    let file = find("/path", "notes/d.txt");
    assert_eq!(
        (&file["matches"], &file["denied_matches"]),
        (&json!(1), &json!(0))
    );
    let content = find("/content", "x");
    assert_eq!(content["matches"], 4);

    // The same preview for a rule typed by hand; nothing is added.
    let preview = ok(
        d,
        &[
            "rules",
            "add",
            "builtin/write_file",
            "/path",
            "notes/**",
            "allow",
            "--dry-run",
        ],
    );
    assert!(preview.contains("matches 3 of 4 past calls"), "{preview}");
    assert!(
        preview.contains("WARNING: 1 of them a person denied"),
        "{preview}"
    );
    assert_eq!(ok(d, &["rules", "list", "--json"]).trim(), "[]");
    let text = ok(d, &["rules", "suggest", id(&pending)]);
    assert!(
        text.contains("airlock rules add builtin/write_file /path 'notes/**' allow"),
        "{text}"
    );

    // Insights: four asked, two approved, one denied, one waiting.
    let insights = json_of(&ok(d, &["insights", "--json"]));
    let write = insights
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "write_file")
        .unwrap();
    assert_eq!(
        (
            &write["server"],
            &write["requests"],
            &write["approved"],
            &write["denied"]
        ),
        (&json!("builtin"), &json!(4), &json!(2), &json!(1)),
        "{write}"
    );
    assert!(write["median_decide_ms"].is_u64(), "{write}");
    assert!(write["fast_decisions"].is_u64() && write["suggestions"].is_array());

    // An unknown item: a clear error.
    let unknown = airlock(d, &["rules", "suggest", "apr_nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&unknown.stderr).is_empty());
}
