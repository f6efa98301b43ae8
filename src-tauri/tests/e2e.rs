//! The real app, end to end, through WebDriver (tauri-driver + WebKitWebDriver) under a display,
//! against the scripted model server. Run by `scripts/e2e.sh`, which provides Xvfb and
//! tauri-driver; ignored in a plain `cargo test`. Screenshots go to `$AIRLOCK_E2E_OUT`
//! (default `test-output/e2e`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Linux only: WebKitWebDriver, Xvfb, X11 and dunst (scripts/e2e.sh).
#![cfg(target_os = "linux")]

mod support;

use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use support::{App, WAIT, tray, until_true, x11};

fn write_file(id: &str, path: &str, content: &str) -> ScriptedCall {
    ScriptedCall::new(
        id,
        "builtin__write_file",
        json!({"path": path, "content": content}),
    )
}

#[tokio::test]
#[ignore = "needs a display and tauri-driver; run through scripts/e2e.sh"]
async fn approve_an_edited_call_and_deny_a_batch_with_a_reason() {
    let out = PathBuf::from(
        std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()),
    );
    std::fs::create_dir_all(&out).unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write_file("c1", "notes.txt", "draft")]),
        Reply::Text("Saved notes.txt.".into()),
        Reply::ToolCalls(vec![
            write_file("c2", "a.txt", "a"),
            write_file("c3", "b.txt", "b"),
            write_file("c4", "c.txt", "c"),
        ]),
        Reply::Text("Understood, I will not write them.".into()),
        // 6c. "Allow for the next 2 calls" from the prompt: g2 runs unasked, g3 asks.
        Reply::ToolCalls(vec![write_file("g1", "g1.txt", "1")]),
        Reply::Text("First granted write done.".into()),
        Reply::ToolCalls(vec![write_file("g2", "g2.txt", "2")]),
        Reply::Text("Second write done.".into()),
        // 6c'. Another chat's write is not covered by the grant made in the first chat.
        Reply::ToolCalls(vec![write_file("o1", "other.txt", "o")]),
        Reply::Text("Other chat refused.".into()),
        Reply::ToolCalls(vec![write_file("g3", "g3.txt", "3")]),
        Reply::Text("Third write refused.".into()),
        Reply::ToolCalls(vec![write_file("c5", "refused.txt", "x")]),
    ])
    .await
    .unwrap();

    let app = App::launch(data.path(), &out).await;
    let (ui, api) = (&app.ui, &app.api);
    app.use_model(&model, true).await;

    // 1. Send a message: the pending call shows the prompt in the chat and in the inbox.
    // notes.txt is already there: the prompt shows the write as a diff against it.
    std::fs::write(data.path().join("workspace/notes.txt"), "old notes\n").unwrap();
    ui.click("[data-testid=nav-chat]").await;
    ui.click("button.new").await;
    ui.type_into("input[aria-label='New chat name']", "e2e\u{E007}")
        .await;
    ui.type_into("textarea[aria-label=Message]", "Save my notes")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.find("[data-testid=assistant-message] section[aria-label='Permission request']")
        .await;
    // The call shown by what it does: its path, and its content against the file the resident
    // read in the workspace (`file_on_disk`, the window's invoke forwarded to the engine).
    ui.until(
        "the write shown as a diff against the file on disk",
        "const p = document.querySelector('[data-testid=assistant-message] section[aria-label=\"Permission request\"]');
         return !!p && p.querySelector('[data-testid=call-path]')?.textContent === 'notes.txt'
             && p.querySelector('[data-testid=disk-status]')?.textContent === 'Replaces the file on disk: −1 +1 lines'
             && p.querySelector('[data-testid=write-diff]')?.textContent.includes('old notes');",
    )
    .await;
    ui.until(
        "the inbox count",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '1'",
    )
    .await;
    ui.screenshot(&out, "chat-pending").await;

    // 2. Edit the arguments in the inbox and approve.
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    ui.screenshot(&out, "inbox").await;
    ui.click("[data-testid=edit-args]").await;
    ui.type_into(
        "textarea[aria-label='Arguments (JSON)']",
        r#"{"path": "notes.txt", "content": "final"}"#,
    )
    .await;
    ui.find("[data-testid=edit-diff]").await;
    ui.screenshot(&out, "inbox-edit").await;
    ui.click("[data-testid=approve-edited]").await;

    // 3. The result appears in the same assistant message, after the call.
    ui.click("[data-testid=nav-chat]").await;
    ui.until(
        "the answer in the same message as the call",
        "const m = [...document.querySelectorAll('[data-testid=assistant-message]')].pop();
         return !!m && m.querySelector('[data-testid=tool-call][data-state=succeeded]') !== null
             && m.textContent.includes('Saved notes.txt.');",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(data.path().join("workspace/notes.txt")).unwrap(),
        "final"
    );
    ui.click("[data-testid=tool-call] button").await;
    ui.find("[data-testid=tool-result]").await;
    ui.screenshot(&out, "chat-done").await;

    // 4. Three pending calls: select all, deny with one reason; the model reads it.
    ui.type_into("textarea[aria-label=Message]", "Write three files")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.until(
        "three pending",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '3'",
    )
    .await;
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    ui.click("input[aria-label='Select all']").await;
    ui.screenshot(&out, "inbox-batch").await;
    ui.click("[data-testid=deny-selected]").await;
    ui.type_into("input[aria-label='Deny reason']", "E2E: not in this folder")
        .await;
    ui.click("form.deny button[type=submit]").await;
    let requests = model.wait_for_requests(4, WAIT).await.unwrap();
    let last = requests[3]["messages"].as_array().unwrap();
    let denials: Vec<&Value> = last.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(denials.len(), 4, "{last:?}");
    for denial in &denials[1..] {
        let content = denial["content"].as_str().unwrap();
        assert!(
            content.contains("execution-denied") && content.contains("E2E: not in this folder"),
            "{content}"
        );
    }
    // Denied means not written: none of the three files exists.
    for name in ["a.txt", "b.txt", "c.txt"] {
        assert!(
            !data.path().join("workspace").join(name).exists(),
            "{name} was written although denied"
        );
    }

    // 5. The other screens, for the record.
    ui.until(
        "an empty inbox",
        "return document.querySelector('[data-testid=nav-inbox-count]') === null",
    )
    .await;
    ui.click("[data-testid=nav-settings]").await;
    ui.find("section h2").await;
    ui.screenshot(&out, "settings").await;

    // 6. Add an MCP server from Settings: it starts, offers its tools, and its log shows.
    let test_server = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("airlock-test-mcp-server");
    assert!(
        test_server.exists(),
        "build the workspace first: no {}",
        test_server.display()
    );
    // An unsaved edit of the provider form survives the reloads the new server causes.
    ui.type_into("input[placeholder=gpt-4o-mini]", "draft-model")
        .await;
    ui.click("[data-testid=add-server]").await;
    ui.type_into("input[aria-label='Server name']", "echo")
        .await;
    ui.type_into("input[aria-label=Command]", test_server.to_str().unwrap())
        .await;
    ui.click("form[aria-label='MCP server'] button[type=submit]")
        .await;
    ui.until(
        "the server ready",
        "const s = document.querySelector('[data-testid=server][data-name=echo] [data-testid=server-state]');
         return !!s && s.textContent.startsWith('ready');",
    )
    .await;
    ui.click("[data-testid=server][data-name=echo] [data-testid=show-log]")
        .await;
    ui.find("[data-testid=server-log]").await;
    ui.until("the server's tools listed", "return document.body.textContent.includes('Tools by server') && [...document.querySelectorAll('h3')].some((h) => h.textContent.startsWith('echo'))").await;
    ui.screenshot(&out, "settings-servers").await;
    assert_eq!(
        ui.run("return document.querySelector('input[placeholder=gpt-4o-mini]').value")
            .await,
        json!("draft-model")
    );
    let servers: Value = api.get("/v1/servers").await.unwrap();
    assert!(servers.to_string().contains("\"echo\""), "{servers}");
    // Remove it again: one click asks, the second removes it.
    ui.click("[data-testid=server][data-name=echo] [data-testid=remove-server]")
        .await;
    ui.find("[data-testid=confirm-remove]").await;
    ui.screenshot(&out, "settings-remove-server").await;
    ui.click("[data-testid=confirm-remove-yes]").await;
    ui.until(
        "the server gone",
        "return document.querySelector('[data-testid=server][data-name=echo]') === null
             && document.querySelector('[data-testid=server-notice]')?.textContent === 'Removed echo.'",
    )
    .await;
    let servers: Value = api.get("/v1/servers").await.unwrap();
    assert!(!servers.to_string().contains("\"echo\""), "{servers}");
    // 6a. Settings → Phone: on at an address, "Pair a phone" shows a QR code and a code that
    // pairs a device over HTTPS (the device appears in the list), which is then revoked.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    ui.run("document.querySelector('[data-testid=phone-listen]').scrollIntoView()")
        .await;
    ui.type_into("[data-testid=phone-listen]", &format!("127.0.0.1:{port}"))
        .await;
    ui.click("[data-testid=phone-enable]").await;
    ui.click("[data-testid=phone-pair]").await;
    ui.find("[data-testid=phone-qr]").await;
    ui.run("document.querySelector('[data-testid=phone-pairing]').scrollIntoView()")
        .await;
    ui.screenshot(&out, "settings-phone-qr").await;
    let code = ui
        .run("return document.querySelector('[data-testid=phone-code]').textContent.trim()")
        .await;
    let pem = std::fs::read(data.path().join("remote-cert.pem")).unwrap();
    let phone = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .build()
        .unwrap();
    // The listener starts as the setting changes: try until it answers.
    let mut tries = 0;
    let paired: Value = loop {
        let sent = phone
            .post(format!("https://127.0.0.1:{port}/v1/pair"))
            .json(&json!({"code": code, "device_name": "Pixel 7"}))
            .send()
            .await;
        match sent {
            Ok(response) => break response.json().await.unwrap(),
            Err(error) => {
                tries += 1;
                assert!(tries < 100, "the phone inbox never answered: {error}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    };
    assert!(paired["token"].is_string(), "{paired}");
    ui.until(
        "the paired phone listed",
        "return [...document.querySelectorAll('[data-testid=phone-device]')].some((d) => d.textContent.includes('Pixel 7'))",
    )
    .await;
    ui.run("document.querySelector('[data-testid=phone-device]').scrollIntoView()")
        .await;
    ui.screenshot(&out, "settings-phone").await;
    ui.click("[data-testid=phone-revoke]").await;
    ui.until(
        "the phone revoked",
        "return document.querySelector('[data-testid=phone-revoke]') === null",
    )
    .await;
    let refused = phone
        .get(format!("https://127.0.0.1:{port}/v1/inbox"))
        .bearer_auth(paired["token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    ui.click("[data-testid=phone-disable]").await;
    // 6a'. Start at login writes the desktop's login entry (XDG autostart) into the app's own
    // config home — a temporary one (support::App), never the real ~/.config/autostart — which
    // starts this binary hidden in the tray; switched off, the entry is gone.
    let entry_path = app.config_home().join("autostart/Airlock.desktop");
    let real_entry = std::env::var_os("HOME")
        .map(|home| std::path::Path::new(&home).join(".config/autostart/Airlock.desktop"));
    let real_entry_was_there = real_entry.as_ref().is_some_and(|p| p.exists());
    ui.run("document.querySelector('[data-testid=start-at-login]').scrollIntoView()")
        .await;
    ui.click("[data-testid=start-at-login]").await;
    until_true("the login entry", || entry_path.exists()).await;
    let written = std::fs::read_to_string(&entry_path).unwrap();
    let exec = written
        .lines()
        .find_map(|l| l.strip_prefix("Exec="))
        .unwrap_or_default()
        .to_string();
    assert!(
        exec.contains(env!("CARGO_BIN_EXE_airlock-desktop")) && exec.contains("--hidden"),
        "{written}"
    );
    ui.click("[data-testid=start-at-login]").await;
    until_true("the login entry removed", || !entry_path.exists()).await;
    assert_eq!(
        real_entry.as_ref().is_some_and(|p| p.exists()),
        real_entry_was_there,
        "the test touched the real login entry"
    );
    // 6b. Another agent's call — Claude Code's hook, the real `airlock hook` process — waits in
    // the same inbox with the agent and its folder, is approved there, and the hook tells the
    // agent to run it.
    let cli = test_server.with_file_name("airlock");
    let mut hook = std::process::Command::new(&cli)
        .arg("--data-dir")
        .arg(data.path())
        .args(["hook", "claude-code", "--timeout", "120"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let event = json!({
            "session_id": "e2e-agent", "cwd": "/home/dev/project", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "git push origin main"},
            "tool_use_id": "toolu_e2e",
        });
        let mut stdin = hook.stdin.take().unwrap();
        stdin.write_all(event.to_string().as_bytes()).unwrap();
    }
    ui.click("[data-testid=nav-inbox]").await;
    ui.until(
        "the agent's call in the inbox",
        "return [...document.querySelectorAll('[data-testid=inbox-item]')].some((r) => r.textContent.includes('git push origin main'))",
    )
    .await;
    ui.screenshot(&out, "inbox-agent").await;
    ui.click("[data-testid=approve]").await;
    let answer = tokio::task::spawn_blocking(move || hook.wait_with_output().unwrap())
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&answer.stdout).to_string();
    assert!(
        answer.contains("\"permissionDecision\":\"allow\""),
        "the hook did not pass the approval on: {answer}"
    );
    ui.click("[data-testid=nav-history]").await;
    ui.find("table tbody tr").await;
    ui.screenshot(&out, "history").await;
    ui.click("[data-testid=nav-chat]").await;
    ui.until(
        "the final answer",
        "return document.body.textContent.includes('Understood, I will not write them.')",
    )
    .await;
    ui.screenshot(&out, "chat-batch-denied").await;

    // 6c. Grant "for the next 2 calls" from the chat's prompt: the tray counts the grant, the
    // second call runs without asking, the third asks again.
    ui.type_into("textarea[aria-label=Message]", "Write g1")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.find("section[aria-label='Permission request'] [data-testid=prompt-more]")
        .await;
    ui.click("[data-testid=prompt-more]").await;
    ui.find("[data-testid=grant-times]").await;
    ui.run("document.querySelector('[data-testid=grant-times]').scrollIntoView({block: 'center'})")
        .await;
    ui.screenshot(&out, "prompt-grant").await;
    assert_eq!(
        ui.run("return document.querySelector('[data-testid=grant-times-count]').value")
            .await,
        json!("2")
    );
    ui.click("[data-testid=grant-times]").await;
    ui.until(
        "the granted write done",
        "return document.body.textContent.includes('First granted write done.')",
    )
    .await;
    assert!(data.path().join("workspace/g1.txt").exists());
    assert_eq!(
        tray_menu(ui).await.get(2).map(String::as_str),
        Some("1 grant active")
    );
    ui.type_into("textarea[aria-label=Message]", "Write g2")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.until(
        "the second write done without asking",
        "return document.body.textContent.includes('Second write done.')",
    )
    .await;
    assert!(data.path().join("workspace/g2.txt").exists());
    // Issue 27, item 1: the approval that made the grant shows it, the call it let through
    // says so, and the grant covers this chat only — another chat's write asks, and does not
    // use up the grant.
    ui.until(
        "the grant shown on its approval and on the call it allowed",
        "const made = document.querySelector('[data-testid=call-grant]');
         const by = [...document.querySelectorAll('[data-testid=call-allowed-by]')];
         return !!made && made.textContent.includes('in this chat')
             && by.some((b) => b.textContent.includes('allowed by the grant made at') && b.textContent.includes('in this chat'));",
    )
    .await;
    ui.screenshot(&out, "chat-allowed-by-grant").await;
    api.send_message("other-chat", "Write other").await.unwrap();
    ui.until(
        "the other chat's write asks",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '1'",
    )
    .await;
    assert!(!data.path().join("workspace/other.txt").exists());
    let other = api.inbox().await.unwrap();
    let deny: airlock_protocol::DecisionRequest = serde_json::from_value(json!({
        "approval_id": other[0].approval_id,
        "decision": {"kind": "deny", "reason": "not this chat"},
    }))
    .unwrap();
    api.decide(&deny).await.unwrap();
    api.wait_turn("other-chat").await.unwrap();
    assert!(!data.path().join("workspace/other.txt").exists());
    ui.type_into("textarea[aria-label=Message]", "Write g3")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.until(
        "the third call asks",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '1'",
    )
    .await;
    assert!(!data.path().join("workspace/g3.txt").exists());
    assert_eq!(
        tray_menu(ui).await.get(2).map(String::as_str),
        Some("No grants active")
    );
    ui.screenshot(&out, "grant-used-up").await;
    ui.click("section[aria-label='Permission request'] button.danger")
        .await;
    ui.click("form.deny-form button[type=submit]").await;
    ui.until(
        "the third turn ended",
        "return document.body.textContent.includes('Third write refused.')",
    )
    .await;
    assert!(!data.path().join("workspace/g3.txt").exists());
    ui.click("[data-testid=nav-insights]").await;
    ui.find("[data-testid=insights-table]").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    ui.screenshot(&out, "insights").await;

    // 7. The disk refuses the next decision (every fdatasync of the app fails, injected with
    // strace): the approval is refused, nothing runs, and the window says Airlock can no longer
    // record decisions.
    api.send_message("disk", "write it").await.unwrap();
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    let status: Value = api.get("/v1/status").await.unwrap();
    let pid = status["pid"].as_u64().expect("the app's pid") as u32;
    let tracer = airlock_testkit::faults::inject(pid, airlock_testkit::faults::SYNC_FAILS);
    ui.click("[data-testid=approve]").await;
    ui.until(
        "the storage banner",
        "return document.querySelector('[data-testid=storage-banner]')?.textContent.includes('can no longer record decisions') === true",
    )
    .await;
    // Traced, the app repaints slowly: the screenshot is taken once the tracer is gone (the
    // engine keeps refusing decisions; it cannot know what reached the disk).
    drop(tracer);
    tokio::time::sleep(Duration::from_millis(700)).await;
    ui.screenshot(&out, "storage-failure").await;
    assert!(
        !data.path().join("workspace/refused.txt").exists(),
        "a decision the disk refused ran"
    );
    assert_eq!(
        tray_menu(ui).await.first().map(String::as_str),
        Some("Cannot record decisions — restart Airlock")
    );

    app.end().await;
}

/// server-everything's `trigger-elicitation-request` (tests/mcp-servers): its form is shown in
/// the chat card of the call that waits for it and in the Inbox, in the server's order, and is
/// accepted as rendered — a name typed, every other field left at the server's default.
#[tokio::test]
#[ignore = "needs a display and tauri-driver; run through scripts/e2e.sh"]
async fn an_mcp_servers_form_is_accepted_with_its_defaults() {
    let out = PathBuf::from(
        std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()),
    );
    std::fs::create_dir_all(&out).unwrap();
    let npm = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp-servers/node_modules");
    let everything = npm.join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        everything.exists(),
        "the test MCP servers are missing: run `bash scripts/setup.sh --deps-only`"
    );
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "e1",
            "every__trigger-elicitation-request",
            json!({}),
        )]),
        Reply::Text("Thanks for the form.".into()),
        Reply::ToolCalls(vec![
            write_file("w1", "one.txt", "1"),
            write_file("w2", "two.txt", "2"),
        ]),
        Reply::Text("Both written.".into()),
    ])
    .await
    .unwrap();
    let app = App::launch(data.path(), &out).await;
    let (ui, api) = (&app.ui, &app.api);
    app.use_model(&model, true).await;
    let cli = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("airlock");
    let added = Command::new(&cli)
        .arg("--data-dir")
        .arg(data.path())
        .args(["servers", "add", "every", "--"])
        .arg(npm.join(".bin/node"))
        .arg(&everything)
        .arg("stdio")
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let mut ready = false;
    for _ in 0..300 {
        let tools: Value = api.get("/v1/tools").await.unwrap_or(Value::Null);
        if tools.to_string().contains("trigger-elicitation-request") {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ready,
        "server-everything never offered its elicitation tool"
    );

    ui.click("[data-testid=nav-chat]").await;
    ui.click("button.new").await;
    ui.type_into("input[aria-label='New chat name']", "form\u{E007}")
        .await;
    ui.type_into("textarea[aria-label=Message]", "Ask me").await;
    ui.click("form.composer button[type=submit]").await;
    ui.find("section[aria-label='Permission request']").await;
    ui.click("section[aria-label='Permission request'] button.primary")
        .await; // Allow once
    ui.find("[data-testid=call-question]").await;
    let order = ui
        .run("return [...document.querySelectorAll('[data-testid=call-question] [data-testid=elicitation-field]')].map((f) => f.dataset.field)")
        .await;
    assert_eq!(
        order,
        json!([
            "name",
            "check",
            "firstLine",
            "email",
            "homepage",
            "birthdate",
            "integer",
            "number",
            "untitledSingleSelectEnum",
            "untitledMultipleSelectEnum",
            "titledSingleSelectEnum",
            "titledMultipleSelectEnum",
            "legacyTitledEnum"
        ])
    );
    ui.screenshot(&out, "chat-elicitation").await;
    // The choices further down: titles shown for the titled and legacy enums, defaults chosen.
    ui.run("document.querySelector('[data-testid=call-question] [data-field=legacyTitledEnum]').scrollIntoView()")
        .await;
    assert_eq!(
        ui.run("const q = document.querySelector('[data-testid=call-question]');
                return [q.querySelector('select[name=titledSingleSelectEnum]').selectedOptions[0].textContent,
                        q.querySelector('select[name=legacyTitledEnum]').selectedOptions[0].textContent,
                        [...q.querySelectorAll('input[name=titledMultipleSelectEnum]:checked')].map((c) => c.parentElement.textContent.trim())]")
            .await,
        json!(["Superman", "Cats", ["Tuna"]])
    );
    ui.screenshot(&out, "chat-elicitation-choices").await;
    // The same question in the Inbox, headed as a question, not a call to allow.
    ui.click("[data-testid=nav-inbox]").await;
    ui.until(
        "the question in the inbox",
        "return document.querySelector('[data-testid=inbox-detail-title]')?.textContent.includes('asks for input') === true",
    )
    .await;
    ui.screenshot(&out, "inbox-elicitation").await;
    // Answered where the call waits: the name typed, the rest as the server filled it in.
    ui.click("[data-testid=nav-chat]").await;
    ui.type_into(
        "[data-testid=call-question] input[name=name]",
        "Ada Lovelace",
    )
    .await;
    ui.click("[data-testid=call-question] button[type=submit]")
        .await;
    ui.until(
        "the turn's answer",
        "return document.body.textContent.includes('Thanks for the form.')",
    )
    .await;
    let requests = model.wait_for_requests(2, WAIT).await.unwrap();
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    for said in [
        "User provided the requested information",
        "Ada Lovelace",
        "Favorite Integer: 42",
        "fish-1",
        "pet-1",
    ] {
        assert!(result.contains(said), "{said} missing from {result}");
    }
    ui.screenshot(&out, "chat-elicitation-answered").await;

    // The inbox keeps its state: a selection survives showing another item, a trip to another
    // screen and approving the item on show alone; the detail pane says its buttons act on that
    // item; the keys work after Select all.
    ui.type_into("textarea[aria-label=Message]", "Write two files")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.until(
        "two pending",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '2'",
    )
    .await;
    ui.click("[data-testid=nav-inbox]").await;
    ui.find("[data-testid=inbox-item]").await;
    ui.run("document.querySelectorAll('[data-testid=inbox-item]')[0].querySelector('input[type=checkbox]').click();
            document.querySelectorAll('[data-testid=inbox-item]')[1].click();")
        .await;
    ui.until(
        "the detail pane's scope",
        "return document.querySelector('[data-testid=detail-scope]')?.textContent.includes('act on this item only') === true
             && document.querySelector('[data-testid=inbox-detail-args]')?.textContent.includes('two.txt') === true",
    )
    .await;
    ui.screenshot(&out, "inbox-selection-scope").await;
    ui.click("[data-testid=nav-chat]").await;
    ui.click("[data-testid=nav-inbox]").await;
    ui.until(
        "the selection kept",
        "return document.querySelector('[data-testid=inbox-count]')?.textContent === '2 pending · 1 selected'
             && document.querySelector('[data-testid=inbox-detail-args]')?.textContent.includes('two.txt') === true",
    )
    .await;
    ui.click("[data-testid=approve]").await;
    ui.until(
        "the selection kept after approving the item on show",
        "return document.querySelector('[data-testid=inbox-count]')?.textContent === '1 pending · 1 selected'",
    )
    .await;
    // Select all twice (none, then all), then the key `a` on that checkbox approves them.
    ui.click("input[aria-label='Select all']").await;
    ui.click("input[aria-label='Select all']").await;
    ui.run("document.querySelector(\"input[aria-label='Select all']\").focus()")
        .await;
    ui.call(
        reqwest::Method::POST,
        "/actions",
        Some(
            json!({"actions": [{"type": "key", "id": "keys", "actions": [
                {"type": "keyDown", "value": "a"}, {"type": "keyUp", "value": "a"}
            ]}]}),
        ),
    )
    .await;
    ui.until(
        "the selection approved by its key",
        "return document.querySelector('[data-testid=nav-inbox-count]') === null",
    )
    .await;
    ui.click("[data-testid=nav-chat]").await;
    ui.until(
        "both written",
        "return document.body.textContent.includes('Both written.')",
    )
    .await;
    for name in ["one.txt", "two.txt"] {
        assert!(data.path().join("workspace").join(name).exists(), "{name}");
    }
    // One day of data: bars of bounded width, the day's counts in words.
    ui.click("[data-testid=nav-insights]").await;
    ui.find("[data-testid=insights-days]").await;
    tokio::time::sleep(Duration::from_millis(500)).await; // the chart draws after the table
    ui.screenshot(&out, "insights-one-day").await;
    app.end().await;
}

/// How many notifications dunst shows now.
fn notifications_displayed() -> Option<u32> {
    let out = Command::new("dunstctl")
        .args(["count", "displayed"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// What the session bus's monitor recorded of the notification calls (scripts/e2e.sh).
fn notification_calls() -> String {
    let log = std::env::var_os("AIRLOCK_DBUS_LOG")
        .expect("AIRLOCK_DBUS_LOG is unset: run through scripts/e2e.sh");
    std::fs::read_to_string(log).unwrap_or_default()
}

fn run_command(id: &str, command: &str) -> ScriptedCall {
    ScriptedCall::new(id, "builtin__run_command", json!({"command": command}))
}

/// Issue 27, item 3, in the real window: a step's calls run in the model's order although the
/// person approves the later one first (its card says it waits), and a command that exits
/// non-zero shows as failed with its exit code.
#[tokio::test]
#[ignore = "needs a display and tauri-driver; run through scripts/e2e.sh"]
async fn a_step_runs_in_the_models_order_and_a_failing_command_shows_failed() {
    let out = PathBuf::from(
        std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()),
    );
    std::fs::create_dir_all(&out).unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![
            write_file("w", "deploy/app.txt", "v1"),
            run_command("l", "ls deploy"),
        ]),
        Reply::Text("Listed the deploy folder.".into()),
        Reply::ToolCalls(vec![run_command("f", "echo broken >&2; exit 3")]),
        Reply::Text("The command failed.".into()),
    ])
    .await
    .unwrap();
    let app = App::launch(data.path(), &out).await;
    let ui = &app.ui;
    // Issue 27, item 8: an app with no model provider opens on the first-run setup.
    ui.find("[data-testid=setup]").await;
    ui.screenshot(&out, "setup").await;
    app.use_model(&model, true).await;

    ui.click("[data-testid=nav-chat]").await;
    ui.click("button.new").await;
    ui.type_into("input[aria-label='New chat name']", "order\u{E007}")
        .await;
    ui.type_into("textarea[aria-label=Message]", "Deploy and list")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.until(
        "two calls waiting",
        "return document.querySelector('[data-testid=nav-inbox-count]')?.textContent === '2'",
    )
    .await;
    // Item 4: one notification names what waits, each tool with its key argument.
    until_true("a notification naming both calls", || {
        let calls = notification_calls();
        calls.contains("2 tool calls waiting")
            && calls.contains("write_file: deploy/app.txt")
            && calls.contains("run_command: ls deploy")
    })
    .await;
    let calls_before = notification_calls();
    let closes_before = calls_before.matches("CloseNotification").count();
    let replaced_before = calls_before.matches("1 tool call waiting").count();

    // 1. Approve the later call (ls) first, in the inbox.
    ui.click("[data-testid=nav-inbox]").await;
    ui.until(
        "the ls in the inbox",
        "const row = [...document.querySelectorAll('[data-testid=inbox-item]')].find((r) => r.textContent.includes('ls deploy'));
         if (row) row.click();
         return !!row && document.querySelector('[data-testid=inbox-detail]')?.textContent.includes('ls deploy') === true;",
    )
    .await;
    ui.click("[data-testid=approve]").await;

    // 2. Its card says it waits for the write before it; nothing ran.
    ui.click("[data-testid=nav-chat]").await;
    ui.until(
        "the ls waiting for the write",
        "return [...document.querySelectorAll('[data-testid=call-status]')]
             .some((s) => s.textContent === 'approved — runs after 1 earlier call');",
    )
    .await;
    ui.screenshot(&out, "chat-runs-after").await;
    // The notification is replaced: one call waits now.
    until_true("the notification replaced with one call", || {
        notification_calls().matches("1 tool call waiting").count() > replaced_before
    })
    .await;
    assert!(
        !data.path().join("workspace/deploy").exists(),
        "a call ran before the earlier call of its step was decided"
    );

    // 3. Approving the write runs both, in the model's order: the ls sees the file.
    ui.click("section[aria-label='Permission request'] button.primary")
        .await;
    ui.until(
        "the step done",
        "return document.body.textContent.includes('Listed the deploy folder.')",
    )
    .await;
    let requests = model.wait_for_requests(2, WAIT).await.unwrap();
    let results: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        results.len() == 2 && results[1].contains("app.txt"),
        "the ls did not run after the write: {results:?}"
    );
    // Both decided: the notification is closed, none is left with live buttons.
    until_true("the notification closed", || {
        notification_calls().matches("CloseNotification").count() > closes_before
            && notifications_displayed() == Some(0)
    })
    .await;

    // 4. A command that exits 3 is failed, with its exit code, on its card.
    ui.type_into("textarea[aria-label=Message]", "Run the broken one")
        .await;
    ui.click("form.composer button[type=submit]").await;
    ui.find("section[aria-label='Permission request'] button.primary")
        .await;
    ui.click("section[aria-label='Permission request'] button.primary")
        .await;
    ui.until(
        "the failed command",
        "return document.body.textContent.includes('The command failed.')
             && [...document.querySelectorAll('[data-testid=tool-call][data-state=failed] [data-testid=call-status]')]
                 .some((s) => s.textContent === 'failed · exit 3');",
    )
    .await;
    ui.screenshot(&out, "chat-failed-command").await;
    app.end().await;
}

/// Issue 29, item 5, in the real window: a chat hosted by an ACP agent (the real qwen-code of
/// tests/agents, offline against the scripted model): New chat → the agent, its text and its
/// shell call stream into the chat, the call waits as a card with the permission prompt in
/// place, **Allow once** there runs it, and the card says it succeeded.
#[tokio::test]
#[ignore = "needs a display and tauri-driver; run through scripts/e2e.sh"]
async fn a_hosted_acp_agents_call_is_approved_from_its_card_in_the_chat() {
    let out = PathBuf::from(
        std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()),
    );
    std::fs::create_dir_all(&out).unwrap();
    let qwen = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/agents/node_modules/.bin/qwen");
    assert!(
        qwen.exists(),
        "{} is missing: run `bash scripts/setup.sh --deps-only` (or `cd tests/agents && npm ci`)",
        qwen.display()
    );
    let data = tempfile::tempdir().unwrap();
    // Qwen Code offline (AGENT-ACP.md): the scripted model's shell call whenever a request
    // offers the tool and holds no result yet, a HOME of its own, every proxy a closed port.
    let model = ScriptedModel::start_with(
        vec![],
        airlock_testkit::Fallback::Smart {
            call: ScriptedCall::new(
                "call_1",
                "run_shell_command",
                json!({"command": "echo hi > f.txt", "description": "write f.txt"}),
            ),
        },
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let qwen_home = home.path().join(".qwen");
    std::fs::create_dir_all(&qwen_home).unwrap();
    std::fs::write(
        qwen_home.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "openai"}},
            "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false}})
        .to_string(),
    )
    .unwrap();
    let home = home.path().display().to_string();
    let mut command: Vec<String> = vec![
        "env".to_string(),
        format!("HOME={home}"),
        format!("QWEN_HOME={home}/.qwen"),
        format!("XDG_CONFIG_HOME={home}/.config"),
        format!("XDG_DATA_HOME={home}/.local/share"),
        format!("XDG_CACHE_HOME={home}/.cache"),
        "OPENAI_API_KEY=dummy".into(),
        format!("OPENAI_BASE_URL={}", model.base_url()),
        "OPENAI_MODEL=mock".into(),
        "QWEN_USAGE_STATISTICS_ENABLED=0".into(),
    ];
    for proxy in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
        command.push(format!("{proxy}=http://127.0.0.1:9"));
    }
    command.extend([
        "NO_PROXY=127.0.0.1,localhost".into(),
        "no_proxy=127.0.0.1,localhost".into(),
        qwen.display().to_string(),
        "--acp".into(),
        "--approval-mode".into(),
        "default".into(),
    ]);

    let app = App::launch(data.path(), &out).await;
    let ui = &app.ui;
    app.use_model(&model, true).await;
    let _: Value = app
        .api
        .post(
            "/v1/commands/save_acp_agent",
            &json!({"name": "qwen", "command": command}),
        )
        .await
        .unwrap();

    ui.click("[data-testid=nav-chat]").await;
    ui.click("button.new").await;
    ui.until(
        "qwen offered for the new chat",
        "const s = document.querySelector(\"select[aria-label='New chat agent']\");
         if (!s || ![...s.options].some((o) => o.value === 'qwen')) return false;
         s.value = 'qwen';
         s.dispatchEvent(new Event('change', { bubbles: true }));
         return true;",
    )
    .await;
    ui.type_into("input[aria-label='New chat name']", "hosted\u{E007}")
        .await;
    ui.type_into(
        "textarea[aria-label=Message]",
        "Create the file f.txt containing hi, using the shell.",
    )
    .await;
    ui.click("form.composer button[type=submit]").await;
    // Qwen Code starts (5–6 s here), asks the model, and asks Airlock: the prompt shows on the
    // card of its call, in the agent's message.
    let waiting_card =
        "[...document.querySelectorAll('[data-testid=assistant-message] [data-testid=tool-call]')]
         .find((c) => c.querySelector('section[aria-label=\"Permission request\"]')
             && c.textContent.includes('echo hi > f.txt') && c.textContent.includes('qwen'))";
    until_long(
        ui,
        "the agent's call waiting on its card with the prompt",
        &format!("return !!{waiting_card};"),
    )
    .await;
    assert!(
        !data.path().join("workspace/f.txt").exists(),
        "nothing runs before the decision"
    );
    ui.screenshot(&out, "chat-acp-pending").await;
    ui.run(&format!(
        "{waiting_card}.querySelector('.actions button.primary').click(); return true;"
    ))
    .await;
    until_long(
        ui,
        "the card succeeded and the agent's answer after it",
        "const m = [...document.querySelectorAll('[data-testid=assistant-message]')].pop();
         return !!m && m.querySelector('[data-testid=tool-call][data-state=succeeded]') !== null
             && m.querySelector('section[aria-label=\"Permission request\"]') === null
             && m.textContent.includes('Done. The tool said');",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(data.path().join("workspace/f.txt")).unwrap(),
        "hi\n"
    );
    ui.click("[data-testid=tool-call][data-state=succeeded] button")
        .await;
    ui.find("[data-testid=tool-result]").await;
    ui.screenshot(&out, "chat-acp-done").await;
    app.end().await;
}

/// [`support::Driver::until`] with the time a hosted agent takes to start on a busy machine.
async fn until_long(ui: &support::Driver, what: &str, script: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
    while ui.run(script).await != Value::Bool(true) {
        if tokio::time::Instant::now() >= deadline {
            ui.screenshot(&ui.out, "failure").await;
            panic!("timed out waiting for {what} (see failure.png)");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
#[ignore = "needs a display, tauri-driver and a notification daemon; run through scripts/e2e.sh"]
async fn the_window_closes_to_the_tray_and_comes_back_on_relaunch_tray_and_notification_click() {
    let out = PathBuf::from(
        std::env::var("AIRLOCK_E2E_OUT").unwrap_or_else(|_| "test-output/e2e".into()),
    );
    std::fs::create_dir_all(&out).unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![write_file("n1", "from-click.txt", "x")]),
        Reply::Text("done".into()),
        Reply::ToolCalls(vec![write_file("n2", "on-screen.txt", "x")]),
    ])
    .await
    .unwrap();
    let mut app = App::launch(data.path(), &out).await;
    app.use_model(&model, true).await;
    let resident = app.resident_pid;
    let display = x11::Display::open();
    let (window, window_pid) = shown_window(&display).await;
    assert_ne!(window_pid, resident, "the window is its own process");
    assert!(
        !support::web_processes(window_pid).is_empty(),
        "the window's web view runs in a WebKitWebProcess"
    );
    assert!(
        support::web_processes(resident).is_empty(),
        "the resident runs no web view"
    );
    let sni = airlock_testkit::sni_host::SniClient::connect()
        .await
        .unwrap();
    let item = tray::item(&sni, resident).await;

    // 1. Closing the window ends its process, web view and all; Airlock keeps running in the
    // tray and the API still answers.
    display.request_close(window);
    closed(&display, window_pid).await;
    let still: Value = app.api.get("/v1/status").await.unwrap();
    assert_eq!(still["pid"], json!(resident));
    assert_eq!(app.windows().await["open"], json!(0));

    // 2. Launching again on the same data directory opens the running app's window again: a
    // new window process whose page starts.
    let before = pages(&app).await;
    let second = Command::new(env!("CARGO_BIN_EXE_airlock-desktop"))
        .arg("--data-dir")
        .arg(data.path())
        .arg("--workspace")
        .arg(data.path().join("workspace"))
        .output()
        .unwrap();
    assert!(second.status.success(), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("showed its window"),
        "{second:?}"
    );
    let (window, window_pid) = shown_window(&display).await;
    page_started(&app, before).await;
    ui_settled().await;
    app.ui.screenshot(&out, "reopened-on-relaunch").await;

    // 3. Closed again, a request arrives; clicking its notification opens a new window on it.
    display.request_close(window);
    closed(&display, window_pid).await;
    let _ = Command::new("dunstctl").arg("close-all").status();
    let before = pages(&app).await;
    app.api.send_message("clicked", "write it").await.unwrap();
    let mut pending = Vec::new();
    for _ in 0..100 {
        pending = app.api.inbox().await.unwrap();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let approval_id = pending
        .first()
        .expect("a pending request")
        .approval_id
        .clone();
    // dunst shows it once the burst window has passed; its "action" is a left click on it.
    let deadline = tokio::time::Instant::now() + WAIT;
    while viewable_window(&display).is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "clicking the notification never opened the window"
        );
        let _ = Command::new("dunstctl").args(["action", "0"]).status();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (window, window_pid) = shown_window(&display).await;
    page_started(&app, before).await;
    let windows = app.windows().await;
    assert_eq!(
        windows["landed"],
        json!({"screen": "inbox", "approval_id": approval_id}),
        "the new window's page took the clicked request: {windows}"
    );
    ui_settled().await;
    app.ui.screenshot(&out, "inbox-from-notification").await;

    // 4. The tray, as a panel shows it over D-Bus: closed again, its menu counts the request,
    // and Open inbox opens a new window.
    display.request_close(window);
    closed(&display, window_pid).await;
    assert_eq!(
        tray::lines(&sni, &item).await,
        vec![
            "1 pending",
            "No grants active",
            "Open inbox",
            "Pause all agents",
            "Quit Airlock"
        ],
        "the tray menu's lines"
    );
    let before = pages(&app).await;
    tray::click(&sni, &item, "Open inbox").await;
    let (window, window_pid) = shown_window(&display).await;
    page_started(&app, before).await;

    // 5. Pause all agents from the tray; the window (driven again through WebDriver) shows the
    // banner and resumes from it.
    tray::click(&sni, &item, "Pause all agents").await;
    let paused: Value = app.api.get("/v1/paused").await.unwrap();
    assert_eq!(paused["paused"], json!(true));
    until_lines(&sni, &item, "Resume agents").await;
    display.request_close(window);
    closed(&display, window_pid).await;
    app.attach_new_window(&out).await;
    let ui = &app.ui;
    ui.find("[data-testid=paused-banner]").await;
    assert_eq!(
        tray_menu(ui).await,
        vec!["1 pending", "Resume agents", "No grants active"]
    );
    ui.screenshot(&out, "paused-from-tray").await;
    ui.click("[data-testid=paused-banner] button").await;
    ui.until(
        "the banner gone",
        "return document.querySelector('[data-testid=paused-banner]') === null",
    )
    .await;
    until_lines(&sni, &item, "Pause all agents").await;

    // 6. Pause all agents from the window: the banner says so and the engine holds.
    ui.click("[data-testid=pause-all]").await;
    ui.find("[data-testid=paused-banner]").await;
    let paused: Value = app.api.get("/v1/paused").await.unwrap();
    assert_eq!(paused["paused"], json!(true));
    ui.screenshot(&out, "paused").await;
    ui.click("[data-testid=paused-banner] button").await;
    ui.until(
        "the banner gone",
        "return document.querySelector('[data-testid=paused-banner]') === null",
    )
    .await;
    let paused: Value = app.api.get("/v1/paused").await.unwrap();
    assert_eq!(paused["paused"], json!(false));

    // 7. Quit from the tray with a notification on screen: the window closes and the resident
    // exits within 2 s (issue 27, item 9: a shown notification once kept it alive).
    let (_, window_pid) = shown_window(&display).await;
    app.api.send_message("on-screen", "write it").await.unwrap();
    until_true("a notification on screen", || {
        notifications_displayed().is_some_and(|shown| shown > 0)
    })
    .await;
    tray::click(&sni, &item, "Quit Airlock").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while support::alive(resident) || support::alive(window_pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "Quit left the app running for more than 2 s with a notification on screen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !data.path().join("api.json").exists(),
        "the resident left its api.json"
    );
}

/// The app's window on screen, if there is one, with its process.
fn viewable_window(display: &x11::Display) -> Option<(u32, u32)> {
    display
        .titled("Airlock")
        .into_iter()
        .find(|&(w, _)| display.viewable(w))
}

/// Waits for the app's window on screen.
async fn shown_window(display: &x11::Display) -> (u32, u32) {
    let mut window = None;
    until_true("the window on screen", || {
        window = viewable_window(display);
        window.is_some()
    })
    .await;
    window.unwrap()
}

/// Waits until the window and its whole process are gone (web view included).
async fn closed(display: &x11::Display, window_pid: u32) {
    until_true("the window gone", || {
        display
            .titled("Airlock")
            .iter()
            .all(|&(_, pid)| pid != window_pid)
    })
    .await;
    until_true("the window process gone", || !support::alive(window_pid)).await;
}

/// How many pages have started in the resident's life (one per window opened).
async fn pages(app: &App) -> u64 {
    app.windows().await["pages_started"].as_u64().unwrap()
}

/// Waits until a page has started since `before` pages had.
async fn page_started(app: &App, before: u64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let windows = app.windows().await;
        if windows["pages_started"].as_u64() > Some(before) && windows["page_ready"] == json!(true)
        {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            app.ui.screenshot(&app.ui.out, "failure").await;
            panic!("no page started after {before}: {windows}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The page paints its data a moment after it started: the screenshot waits for it.
async fn ui_settled() {
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

/// Waits until the tray menu shows `line`.
async fn until_lines(sni: &airlock_testkit::sni_host::SniClient, item: &str, line: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let lines = tray::lines(sni, item).await;
        if lines.iter().any(|l| l == line) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tray never showed {line:?}: {lines:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The tray menu's changing lines, read back from the live menu items by the app.
async fn tray_menu(ui: &support::Driver) -> Vec<String> {
    let texts = ui
        .run_async(
            "const done = arguments[arguments.length - 1]; \
             window.__TAURI_INTERNALS__.invoke('tray_menu').then(done, (e) => done(String(e)));",
            json!([]),
        )
        .await;
    serde_json::from_value(texts.clone()).unwrap_or_else(|_| panic!("tray_menu answered {texts}"))
}
