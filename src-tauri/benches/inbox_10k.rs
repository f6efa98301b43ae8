//! 10,000 pending requests in the real app (the engine in-process, the real window under Xvfb,
//! driven through WebDriver): how long the inbox takes to open, and "Approve all" from the click
//! until the window shows an empty inbox — every decision durable in the engine by then — and
//! until every approved call has run. Figures go to BENCHMARKS.md. Run by
//! `scripts/bench-desktop.sh` (needs a display and tauri-driver): `cargo bench -p airlock-desktop
//! --bench inbox_10k`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::json;
use std::time::{Duration, Instant};
use support::App;

const SESSIONS: usize = 100;
const CALLS_PER_STEP: usize = 100;

/// Time from a click to the first frame where an element matches `selector` or the page shows
/// `text`, measured inside the page (no `eval`: the app's CSP forbids it).
const TIME_CLICK: &str = "
  const [click, selector, text, finish] = arguments;
  const done = () => (selector ? document.querySelector(selector) !== null : document.body.textContent.includes(text));
  const t0 = performance.now();
  document.querySelector(click).click();
  (function poll() { if (done()) finish(performance.now() - t0); else requestAnimationFrame(poll); })();
";

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let out = std::env::temp_dir().join("airlock-bench-inbox");
    std::fs::create_dir_all(&out).unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut replies: Vec<Reply> = (0..SESSIONS)
        .map(|s| {
            Reply::ToolCalls(
                (0..CALLS_PER_STEP)
                    .map(|c| {
                        let path = format!("s{s}/f{c}.txt");
                        ScriptedCall::new(
                            format!("c{s}_{c}"),
                            "builtin__write_file",
                            json!({"path": path, "content": "x"}),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    replies.extend((0..SESSIONS).map(|_| Reply::Text("written".into())));
    let model = ScriptedModel::start(replies).await.unwrap();
    let app = App::launch(data.path(), &out).await;
    let (ui, api) = (&app.ui, &app.api);
    app.use_model(&model, false).await;

    // Approving 10,000 one by one would outlast WebDriver's default 30 s script timeout.
    ui.call(
        reqwest::Method::POST,
        "/timeouts",
        Some(json!({"script": 600_000})),
    )
    .await;
    let seeding = Instant::now();
    for s in 0..SESSIONS {
        api.send_message(&format!("bench-{s}"), "write the files")
            .await
            .unwrap();
    }
    let total = SESSIONS * CALLS_PER_STEP;
    // The engine holds them all first (the local API's count), then the window shows them.
    let mut held = 0;
    for _ in 0..1200 {
        held = api.inbox().await.unwrap().len();
        if held == total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "the engine holds {held} pending after {:?}",
        seeding.elapsed()
    );
    ui.until(
        "10,000 pending in the window",
        &format!("return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '{total}'"),
    )
    .await;
    println!(
        "seeded {total} pending requests through the real loop in {:?}",
        seeding.elapsed()
    );

    let open = ui
        .run_async(
            TIME_CLICK,
            json!(["[data-testid=nav-inbox]", "[data-testid=inbox-item]", null]),
        )
        .await;
    println!(
        "inbox with {total} pending: open {:.0} ms (click → first row painted)",
        open.as_f64().unwrap()
    );

    ui.click("input[aria-label='Select all']").await;
    ui.until("all selected", &format!("return document.querySelector('[data-testid=inbox-count]').textContent.includes('{total} selected')")).await;
    let clicked = Instant::now();
    let approve = ui
        .run_async(
            TIME_CLICK,
            json!([
                "[data-testid=approve-selected]",
                null,
                "Nothing is waiting for you."
            ]),
        )
        .await;
    println!(
        "approve all {total}: {:.0} ms (click → empty inbox painted; every decision durable)",
        approve.as_f64().unwrap()
    );
    assert!(
        api.inbox().await.unwrap().is_empty(),
        "the engine still has pending requests"
    );

    let workspace = data.path().join("workspace");
    loop {
        let written: usize = (0..SESSIONS)
            .map(|s| {
                std::fs::read_dir(workspace.join(format!("s{s}")))
                    .map(|d| d.count())
                    .unwrap_or(0)
            })
            .sum();
        if written == total {
            break;
        }
        assert!(
            clicked.elapsed() < Duration::from_secs(300),
            "only {written} of {total} calls ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "approve all {total}: every approved call has run {:?} after the click (incl. WebDriver's round trip)",
        clicked.elapsed()
    );
    app.end().await;
}
