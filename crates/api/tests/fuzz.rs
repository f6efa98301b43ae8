//! Generated hostile input for every endpoint of the local API: random paths and ids, bodies of
//! arbitrary JSON, broken JSON, raw bytes, deep nesting, and decisions naming the waiting request
//! with anything but the hash it was shown with. Every answer is a 2xx or a clear 4xx (never a
//! 5xx or a hang), and nothing runs and nothing is lost: the request still waits.
//!
//! `AIRLOCK_FUZZ_CASES` sets the number of requests (default 2,000); RELIABILITY.md has the long run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// Names the fuzzer fills into paths and bodies: the real ones where an endpoint cannot decide
/// the waiting request through them, and hostile ones everywhere.
#[derive(Debug, Clone)]
struct Known {
    approval_id: String,
}

/// What an endpoint may be sent without a generated body possibly being a valid request that
/// changes what the person set (those get only bodies that cannot be one: not an object).
#[derive(Debug, Clone, Copy)]
enum BodyKind {
    /// A decision naming the waiting request always carries a wrong hash.
    Decision,
    Batch,
    AnyJson,
    /// Neither an object nor an array (serde reads a struct from either).
    NotAnObject,
    None,
}

const ENDPOINTS: &[(&str, &str, BodyKind)] = &[
    ("POST", "/v1/decisions", BodyKind::Decision),
    ("POST", "/v1/decisions/batch", BodyKind::Batch),
    ("POST", "/v1/elicitations/{id}/answer", BodyKind::AnyJson),
    ("DELETE", "/v1/remembered/{x}", BodyKind::None),
    ("PUT", "/v1/settings/{x}", BodyKind::AnyJson),
    ("PUT", "/v1/tools/{x}/{y}", BodyKind::AnyJson),
    ("PUT", "/v1/tools/{x}/{y}/notification", BodyKind::AnyJson),
    ("PUT", "/v1/servers/{x}", BodyKind::AnyJson),
    ("DELETE", "/v1/servers/{x}", BodyKind::None),
    ("GET", "/v1/servers/{x}/changes", BodyKind::None),
    ("POST", "/v1/servers/{x}/review", BodyKind::AnyJson),
    ("PUT", "/v1/servers/{x}/notification", BodyKind::AnyJson),
    ("GET", "/v1/sessions/{x}/transcript", BodyKind::None),
    ("GET", "/v1/sessions/{x}/turn", BodyKind::None),
    ("POST", "/v1/sessions/{x}/cancel", BodyKind::None),
    ("POST", "/v1/sessions/{x}/messages", BodyKind::NotAnObject),
    ("PUT", "/v1/provider", BodyKind::NotAnObject),
    ("POST", "/v1/servers", BodyKind::NotAnObject),
    ("POST", "/v1/servers/import", BodyKind::NotAnObject),
    ("POST", "/v1/commands/{x}", BodyKind::NotAnObject),
    ("PUT", "/v1/mode", BodyKind::NotAnObject),
    ("POST", "/v1/rules", BodyKind::NotAnObject),
    ("DELETE", "/v1/rules/{x}", BodyKind::None),
    ("PUT", "/v1/paused", BodyKind::NotAnObject),
    ("GET", "/v1/audit?limit={x}", BodyKind::None),
    ("GET", "/v1/inbox?{x}", BodyKind::None),
    ("GET", "/v1/tools", BodyKind::None),
    ("GET", "/v1/servers", BodyKind::None),
    ("GET", "/v1/status", BodyKind::None),
];

/// A path segment a hostile client might send: unknown ids, traversal, escapes, hidden
/// characters, huge ones — never the name of the waiting session or a real server.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        // Never the waiting session or a real server.
        "[a-z_]{1,12}".prop_map(|name| if name == "s" || name == "builtin" {
            format!("{name}_x")
        } else {
            name
        }),
        Just("apr_nope".to_string()),
        Just("..".to_string()),
        Just("%2e%2e%2fetc".to_string()),
        Just("%00".to_string()),
        Just("%E2%80%AEtxt".to_string()),
        "[0-9]{1,25}",
        "-[0-9]{1,5}",
        "\\PC{1,20}".prop_map(|s| urlencoding(&s)),
        (1usize..5000).prop_map(|n| "x".repeat(n)),
    ]
}

fn urlencoding(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// JSON that is neither an object nor an array.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Finite: JSON has no NaN (the raw texts send one).
        (-1e300f64..1e300).prop_map(Value::from),
        "\\PC{0,40}".prop_map(Value::String),
        "[\\u{0}-\\u{1f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{1b}]{0,10}"
            .prop_map(Value::String),
    ]
}

/// Arbitrary JSON, with keys an endpoint might look for mixed in.
fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "approval_id",
            "decision",
            "kind",
            "approve",
            "args",
            "args_hash",
            "reason",
            "remember",
            "exact_args",
            "session",
            "setting",
            "allow",
            "decisions",
            "action",
            "content",
            "text",
            "name",
            "default",
            "enabled",
            "trust_read_only_hints",
            "changes",
            "paused",
        ])
        .prop_map(str::to_string),
        "\\PC{0,10}",
    ]
}

/// Text that is not JSON, or JSON no parser should take whole.
fn raw_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        any_json().prop_flat_map(|v| {
            let text = v.to_string();
            let len = text.len();
            (Just(text), 0..=len).prop_map(|(t, cut)| t.as_bytes()[..cut].to_vec())
        }),
        prop::sample::select(vec![
            "NaN",
            "Infinity",
            "-Infinity",
            "1e999",
            "-",
            "{}}",
            "[,]",
            "\"\\ud800\""
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..200),
        (1usize..20_000)
            .prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()),
        (1usize..5_000).prop_map(|depth| format!(
            "{}1{}",
            "{\"a\":".repeat(depth),
            "}".repeat(depth)
        )
        .into_bytes()),
    ]
}

/// A decision object. Naming the waiting request, it carries a hash other than the one shown.
fn decision(known: Known) -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(Value::String(known.approval_id)),
            segment().prop_map(Value::String),
            any_json(),
        ],
        prop_oneof![any::<bool>().prop_map(Value::Bool), any_json()],
        prop_oneof![
            Just(Value::String("0".repeat(64))),
            "[0-9a-f]{0,80}".prop_map(Value::String),
        ],
        prop::option::of(any_json()),
        prop::collection::vec((key(), any_json()), 0..4),
    )
        .prop_map(|(id, approve, hash, args, extra)| {
            let mut object: Map<String, Value> = extra.into_iter().collect();
            object.insert("approval_id".into(), id);
            object.insert("args_hash".into(), hash);
            // A decision of a known kind (or anything at all in its place).
            let decision = match approve {
                Value::Bool(true) => {
                    let mut approval = Map::new();
                    approval.insert("kind".into(), json!("approve"));
                    if let Some(args) = args {
                        approval.insert("args".into(), args);
                    }
                    Value::Object(approval)
                }
                Value::Bool(false) => json!({"kind": "deny"}),
                other => other,
            };
            object.insert("decision".into(), decision);
            Value::Object(object)
        })
}

fn body(kind: BodyKind, known: Known) -> BoxedStrategy<Option<Vec<u8>>> {
    let not_an_object = prop_oneof![
        raw_text(),
        // Not an array either: serde takes one for a struct (its fields by position).
        scalar().prop_map(|v| v.to_string().into_bytes()),
    ];
    match kind {
        BodyKind::None => Just(None).boxed(),
        BodyKind::NotAnObject => not_an_object.prop_map(Some).boxed(),
        BodyKind::AnyJson => prop_oneof![
            not_an_object,
            any_json().prop_map(|v| v.to_string().into_bytes())
        ]
        .prop_map(Some)
        .boxed(),
        BodyKind::Decision => prop_oneof![
            3 => decision(known).prop_map(|v| v.to_string().into_bytes()),
            1 => not_an_object,
        ]
        .prop_map(Some)
        .boxed(),
        BodyKind::Batch => prop_oneof![
            3 => prop::collection::vec(decision(known), 0..5)
                .prop_map(|list| json!({"decisions": list}).to_string().into_bytes()),
            1 => not_an_object,
        ]
        .prop_map(Some)
        .boxed(),
    }
}

#[derive(Debug, Clone)]
struct Generated {
    method: &'static str,
    path: String,
    body: Option<Vec<u8>>,
}

fn request(known: Known) -> impl Strategy<Value = Generated> {
    prop::sample::select(ENDPOINTS).prop_flat_map(move |(method, template, kind)| {
        let id = prop_oneof![Just(known.approval_id.clone()), segment()];
        (id, segment(), segment(), body(kind, known.clone())).prop_map(move |(id, x, y, body)| {
            Generated {
                method,
                path: template
                    .replace("{id}", &id)
                    .replace("{x}", &x)
                    .replace("{y}", &y),
                body,
            }
        })
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn generated_requests_to_every_endpoint_are_refused_clearly_and_run_nothing() {
    let cases: usize = std::env::var("AIRLOCK_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let common::Waiting {
        host,
        item,
        workspace,
        token,
        _model,
        _dir,
        ..
    } = common::one_waiting_write().await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let base = format!("http://{}", host.addr);

    let strategy = request(Known {
        approval_id: item.approval_id.clone(),
    });
    let mut runner = TestRunner::deterministic();
    let started = Instant::now();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for n in 0..cases {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let mut builder = http
            .request(case.method.parse().unwrap(), format!("{base}{}", case.path))
            .bearer_auth(token.as_str())
            .header("content-type", "application/json");
        if let Some(body) = &case.body {
            builder = builder.body(body.clone());
        }
        let (status, answer) = match builder.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.text().await.unwrap_or_default())
            }
            // The server may close the connection on a body it refuses to read.
            Err(error) if !error.is_timeout() => (0, error.to_string()),
            Err(error) => panic!("case {n} hung: {error}: {case:?}"),
        };
        *statuses.entry(status).or_default() += 1;
        let shown = format!(
            "case {n}: {status} {answer:.300} for {} {:.200}",
            case.method, case.path
        );
        assert!(status < 500, "{shown}");
        if (400..500).contains(&status) && status != 413 && status != 405 && status != 404 {
            let error: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
            assert!(
                error.get("error").is_some() || error.get("code").is_some() || !answer.is_empty(),
                "no clear error: {shown}"
            );
        }
        let waiting = host.engine.inbox().unwrap();
        assert!(
            waiting.iter().any(|w| w.approval_id == item.approval_id),
            "the request no longer waits after {shown}"
        );
        assert!(
            !workspace.join("target.txt").exists(),
            "the call ran after {shown}"
        );
    }
    eprintln!(
        "{cases} generated requests in {:.1} s; statuses {statuses:?}",
        started.elapsed().as_secs_f64()
    );
    // The real decision still works.
    host.engine
        .decide(
            airlock_engine::DecisionRequest::approve(item.approval_id.clone())
                .shown(item.args_hash.clone()),
            airlock_core::DecidedBy::Api,
        )
        .unwrap();
    host.engine.wait_turn("s").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.join("target.txt")).unwrap(),
        "x"
    );
}
