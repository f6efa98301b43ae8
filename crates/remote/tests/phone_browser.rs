//! The phone page in a real browser: Debian's chromium as a Pixel 7 (ui/browser/phone.browser.mjs,
//! playwright-core) pairs with the code, sees three waiting calls, approves one, denies one with
//! a reason and edits one, against this engine's phone server over HTTPS; the model's next
//! request carries each outcome; two more arrive live and are approved at once. Then the device
//! is revoked (the page asks to pair again) and wrong codes are rate-limited.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::Reply;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{phone, three_writes, write};

#[tokio::test(flavor = "multi_thread")]
async fn a_pixel_7_pairs_and_decides_three_calls_and_the_model_reads_each_outcome() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui");
    assert!(
        ui.join("dist/phone.html").exists(),
        "build the UI first (`npm run build` in ui/; scripts/test.sh does)"
    );
    let p = phone(vec![
        three_writes(),
        Reply::Text("done".into()),
        Reply::ToolCalls(vec![write("c4", "d.txt"), write("c5", "e.txt")]),
        Reply::Text("done again".into()),
    ])
    .await;
    p.engine.send_message("s", "write three").unwrap();
    while p.engine.inbox().unwrap().len() < 3 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pairing = airlock_remote::pairing(&p.engine, &p.data_dir).unwrap();

    let mut browser = Command::new("node")
        .arg(ui.join("browser/phone.browser.mjs"))
        .current_dir(&ui)
        .env("PHONE_URL", &pairing.url)
        .env("PHONE_CODE", &pairing.code)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs the browser test");
    let mut said = BufReader::new(browser.stdout.take().unwrap()).lines();
    // The browser's lines are waited for off the async workers (the engine runs on them).
    let mut next_line = || tokio::task::block_in_place(|| said.next().and_then(Result::ok));
    assert_eq!(
        next_line().as_deref(),
        Some("decided"),
        "the browser test stopped before deciding (its output is above)"
    );

    // The model's next request carries each outcome.
    p.engine.wait_turn("s").await.unwrap();
    let workspace = p.data_dir.join("workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("a.txt")).unwrap(),
        "x"
    );
    assert!(!workspace.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(workspace.join("c.txt")).unwrap(),
        "edited on the phone"
    );
    let next = p.model.requests()[1].to_string();
    assert!(next.contains("wrote 1 bytes to a.txt"), "{next}");
    assert!(next.contains(r#"\"reason\":\"not b, use c\""#), "{next}");
    // The edited call ran with the phone's arguments ("edited on the phone": 19 bytes).
    assert!(next.contains("wrote 19 bytes to c.txt"), "{next}");
    let devices = p.engine.devices().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].name, "Pixel 7");
    let audit = p.engine.audit(100).unwrap();
    let by_phone = audit
        .iter()
        .filter(|row| row.actor == "remote" && row.detail["device"] == "Pixel 7")
        .count();
    assert_eq!(by_phone, 3, "{audit:?}");

    // Two more requests while the page is open arrive live and are approved there at once.
    let mut stdin = browser.stdin.take().unwrap();
    p.engine.send_message("s", "one more").unwrap();
    writeln!(stdin, "another").unwrap();
    assert_eq!(next_line().as_deref(), Some("decided again"));
    p.engine.wait_turn("s").await.unwrap();
    assert!(p.data_dir.join("workspace/d.txt").exists());
    assert!(p.data_dir.join("workspace/e.txt").exists());

    // Revoked on the desktop: the page is told 401 and asks to pair again.
    assert!(p.engine.revoke_device(&devices[0].id).unwrap());
    writeln!(stdin, "revoked").unwrap();
    assert_eq!(next_line().as_deref(), Some("done"));
    let status = browser.wait().unwrap();
    assert!(status.success(), "the browser test failed: {status}");
}
