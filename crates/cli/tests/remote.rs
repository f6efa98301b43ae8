//! `airlock remote` against `airlock serve`: the phone inbox switched on at an address, a
//! device paired over HTTPS with the printed code, listed, revoked; every interface refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::ScriptedModel;
use serde_json::{Value, json};
use std::time::Duration;

mod common;
use common::*;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread")]
async fn pair_a_phone_over_https_list_it_and_revoke_it() {
    let model = ScriptedModel::start(Vec::new()).await.unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    let every = airlock(d, &["remote", "enable", "--listen", "0.0.0.0:8443"]);
    assert_eq!(every.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&every.stderr).contains("every interface"));
    // An address that is not this machine's, or a port in use, is refused now with the reason.
    let elsewhere = airlock(d, &["remote", "enable", "--listen", "203.0.113.7:8443"]);
    assert_eq!(elsewhere.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&elsewhere.stderr).contains("cannot listen on 203.0.113.7:8443")
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_addr = taken.local_addr().unwrap().to_string();
    let busy = airlock(d, &["remote", "enable", "--listen", &taken_addr]);
    assert_eq!(busy.status.code(), Some(1), "a port in use is refused");
    drop(taken);
    let pair_off = airlock(d, &["remote", "pair"]);
    assert_eq!(
        pair_off.status.code(),
        Some(1),
        "pairing while off is refused"
    );

    let listen = format!("127.0.0.1:{}", free_port());
    ok(d, &["remote", "enable", "--listen", &listen]);
    let pairing: Value = serde_json::from_str(&ok(d, &["remote", "pair", "--json"])).unwrap();
    assert_eq!(pairing["url"], format!("https://{listen}"));
    assert_eq!(pairing["fingerprint"].as_str().unwrap().len(), 95);
    let pem = std::fs::read(d.join("remote-cert.pem")).unwrap();
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = pairing["url"].as_str().unwrap().to_string();
    // The engine starts the listener as the setting changes: wait until it answers.
    let token = eventually("the phone inbox to pair", || {
        let (http, url, code) = (http.clone(), url.clone(), pairing["code"].clone());
        let answer = futures::executor::block_on(async move {
            let response = http
                .post(format!("{url}/v1/pair"))
                .json(&json!({"code": code, "device_name": "Pixel 7"}))
                .send()
                .await
                .ok()?;
            response.json::<Value>().await.ok()
        })?;
        answer["token"].as_str().map(str::to_string)
    });
    let inbox = http
        .get(format!("{url}/v1/inbox"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(inbox.status().as_u16(), 200);

    let devices: Value = serde_json::from_str(&ok(d, &["remote", "devices", "--json"])).unwrap();
    assert_eq!(devices[0]["name"], "Pixel 7");
    assert!(devices[0]["last_used"].is_string());
    let id = devices[0]["id"].as_str().unwrap().to_string();
    ok(d, &["remote", "revoke", &id]);
    let refused = http
        .get(format!("{url}/v1/inbox"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    assert_eq!(
        airlock(d, &["remote", "revoke", &id]).status.code(),
        Some(1)
    );

    ok(d, &["remote", "disable"]);
    eventually("the phone inbox to stop", || {
        let (http, url) = (http.clone(), url.clone());
        futures::executor::block_on(async move {
            http.get(format!("{url}/v1/inbox")).send().await.is_err()
        })
        .then_some(())
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ntfy_push_is_set_from_an_environment_variable_and_never_printed_back() {
    let model = ScriptedModel::start(Vec::new()).await.unwrap();
    let (dir, _engine) = setup(&model);
    let d = dir.path();
    assert!(ok(d, &["remote", "push"]).starts_with("no push"));
    let missing = airlock(
        d,
        &[
            "remote",
            "push",
            "--server",
            "https://ntfy.sh",
            "--topic",
            "t",
            "--token-env",
            "AIRLOCK_TEST_UNSET_VAR",
        ],
    );
    assert_eq!(missing.status.code(), Some(1));
    let bad = airlock(
        d,
        &[
            "remote",
            "push",
            "--server",
            "https://ntfy.sh",
            "--topic",
            "a b",
        ],
    );
    assert_eq!(
        bad.status.code(),
        Some(1),
        "a topic with a space is refused"
    );
    let set = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(d)
        .args([
            "remote",
            "push",
            "--server",
            "https://ntfy.example/",
            "--topic",
            "my-airlock",
            "--token-env",
            "NTFY_TOKEN",
            "--json",
        ])
        .env("NTFY_TOKEN", "tk_very_secret")
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let shown: Value = serde_json::from_slice(&set.stdout).unwrap();
    assert_eq!(
        shown,
        json!({"server": "https://ntfy.example", "topic": "my-airlock", "has_token": true})
    );
    let listed = ok(d, &["remote", "push"]);
    assert_eq!(
        listed.trim(),
        "pushing to https://ntfy.example/my-airlock (with a token)"
    );
    assert!(!listed.contains("tk_very_secret"));
    ok(d, &["remote", "push", "--off"]);
    assert_eq!(ok(d, &["remote", "push", "--json"]).trim(), "null");
}
