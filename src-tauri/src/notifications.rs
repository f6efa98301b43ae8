//! Desktop notifications: one per new request, "N tool calls waiting" for a burst, with
//! Allow once / Deny actions where the platform has them. An action is a decision by the
//! person through the engine's one decision path; any failure leaves the item pending.

use crate::commands::settings::notifications_enabled;
use crate::window;
use airlock_core::DecidedBy;
use airlock_core::display::{NOTIFICATION_ARGS_MAX, args_summary, visible_line};
use airlock_engine::{DecisionRequest, Engine, InboxItem};
use std::time::Duration;
use tauri::{AppHandle, Runtime};
use tokio::sync::mpsc;

/// Requests arriving within this window after the first are summarised in one notification.
pub const BURST_WINDOW: Duration = Duration::from_secs(1);

/// What one notification says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announcement {
    One {
        approval_id: String,
        args_hash: String,
        summary: String,
        body: String,
        /// Offer "Allow once": only for a low-risk tool whose arguments the body shows whole
        /// (the engine refuses any other approval from a notification anyway).
        may_approve: bool,
    },
    Burst {
        count: usize,
        summary: String,
    },
}

/// What to show for a batch of new requests; `may_approve` is the engine's rule for one item.
pub fn announce(
    batch: &[InboxItem],
    may_approve: impl Fn(&InboxItem) -> bool,
) -> Option<Announcement> {
    match batch {
        [] => None,
        [item] => {
            let (args, cut) = args_summary(&item.args, NOTIFICATION_ARGS_MAX);
            Some(Announcement::One {
                approval_id: item.approval_id.clone(),
                args_hash: item.args_hash.clone(),
                summary: format!("Allow tool call from {}?", visible_line(&item.server)),
                body: format!(
                    "{} — {args}{}",
                    visible_line(&item.tool),
                    if cut { " (cut: open to see all)" } else { "" }
                ),
                may_approve: !cut && may_approve(item),
            })
        }
        items => Some(Announcement::Burst {
            count: items.len(),
            summary: format!("{} tool calls waiting", items.len()),
        }),
    }
}

/// The action names sent on the bus.
pub const ACTION_ALLOW: &str = "allow_once";
pub const ACTION_DENY: &str = "deny";
pub const ACTION_OPEN: &str = "default";

/// What a notification action does. `Open` shows the item; decisions bind to the shown hash.
pub fn handle_action(
    engine: &Engine,
    approval_id: &str,
    args_hash: &str,
    action: &str,
) -> ActionOutcome {
    let approve = match action {
        ACTION_ALLOW => true,
        ACTION_DENY => false,
        ACTION_OPEN => return ActionOutcome::Open,
        _ => return ActionOutcome::Ignored,
    };
    let request = DecisionRequest {
        approval_id: approval_id.to_string(),
        approve,
        reason: (!approve).then(|| "denied from the notification".to_string()),
        args_hash: Some(args_hash.to_string()),
        ..Default::default()
    };
    match engine.decide(request, DecidedBy::Notification) {
        Ok(_) => ActionOutcome::Decided { approve },
        Err(error) => ActionOutcome::Refused(error.to_string()),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionOutcome {
    Decided { approve: bool },
    Refused(String),
    Open,
    Ignored,
}

/// Starts the task that gathers requests into notifications; returns where to send them.
pub fn start<R: Runtime>(app: AppHandle<R>, engine: Engine) -> mpsc::UnboundedSender<InboxItem> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<InboxItem>();
    tauri::async_runtime::spawn(async move {
        while let Some(first) = receiver.recv().await {
            let mut batch = vec![first];
            let deadline = tokio::time::Instant::now() + BURST_WINDOW;
            while let Ok(Some(item)) = tokio::time::timeout_at(deadline, receiver.recv()).await {
                batch.push(item);
            }
            if !notifications_enabled(&engine) {
                continue;
            }
            if let Some(announcement) =
                announce(&batch, |item| engine.notification_may_approve(item))
            {
                let (app, engine) = (app.clone(), engine.clone());
                tauri::async_runtime::spawn_blocking(move || show(&app, &engine, announcement));
            }
        }
    });
    sender
}

fn show<R: Runtime>(app: &AppHandle<R>, engine: &Engine, announcement: Announcement) {
    show_and_wait(
        engine,
        announcement,
        |_| {},
        |approval_id| window::open_inbox(app, approval_id),
    );
}

/// Shows one notification and, where the platform has actions, waits for the person's answer
/// (blocking: run it off the async runtime). `on_shown` gets the notification's id.
pub fn show_and_wait(
    engine: &Engine,
    announcement: Announcement,
    on_shown: impl FnOnce(u32),
    on_open: impl FnOnce(Option<String>),
) {
    let mut notification = notify_rust::Notification::new();
    notification.appname("Airlock");
    let target = match &announcement {
        Announcement::One {
            approval_id,
            args_hash,
            summary,
            body,
            may_approve,
        } => {
            notification.summary(summary).body(body);
            notification.action(ACTION_OPEN, "Open");
            if *may_approve {
                notification.action(ACTION_ALLOW, "Allow once");
            }
            notification.action(ACTION_DENY, "Deny");
            Some((approval_id.clone(), args_hash.clone()))
        }
        Announcement::Burst { summary, .. } => {
            notification
                .summary(summary)
                .body("Open the Airlock inbox to review them");
            notification.action(ACTION_OPEN, "Open inbox");
            None
        }
    };
    let handle = match notification.show() {
        Ok(handle) => handle,
        Err(error) => {
            tracing::warn!("cannot show a notification: {error}");
            return;
        }
    };
    on_shown(handle.id());
    #[cfg(all(unix, not(target_os = "macos")))]
    handle.wait_for_action(|action| {
        let outcome = match &target {
            Some((approval_id, args_hash)) => handle_action(engine, approval_id, args_hash, action),
            None if action == ACTION_OPEN => ActionOutcome::Open,
            None => ActionOutcome::Ignored,
        };
        match outcome {
            ActionOutcome::Open => on_open(target.as_ref().map(|(id, _)| id.clone())),
            ActionOutcome::Refused(message) => {
                tracing::warn!("notification action refused: {message}")
            }
            _ => {}
        }
    });
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    let _ = (handle, target, engine, on_open);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn long_arguments_are_cut_on_a_character_boundary() {
        let (summary, cut) = args_summary(&json!({"content": "é".repeat(300)}), 20);
        assert_eq!(summary.chars().count(), 20);
        assert!(cut && summary.ends_with('…'));
        assert_eq!(
            args_summary(&json!({"path": "a.txt"}), 50),
            ("path: \"a.txt\"".to_string(), false)
        );
    }

    /// Security finding: "Allow once" approved any call, run_command included, after showing
    /// only the first 120 characters of its arguments.
    #[test]
    fn allow_once_is_offered_only_for_what_the_notification_shows_whole_and_the_engine_allows() {
        let offered =
            |item: InboxItem, engine_allows: bool| match announce(&[item], |_| engine_allows) {
                Some(Announcement::One { may_approve, .. }) => may_approve,
                other => panic!("{other:?}"),
            };
        assert!(offered(pending("a"), true));
        assert!(!offered(pending("a"), false), "not a low-risk tool");
        let long = InboxItem {
            args: json!({"command": "x".repeat(500)}),
            ..pending("b")
        };
        assert!(!offered(long.clone(), true), "arguments cut");
        match announce(&[long], |_| true) {
            Some(Announcement::One { body, .. }) => assert!(body.contains("cut"), "{body}"),
            other => panic!("{other:?}"),
        }
        let hidden = InboxItem {
            tool: "write\u{202e}elif".into(),
            args: json!({"path": "a\u{202e}txt.exe"}),
            ..pending("c")
        };
        match announce(&[hidden], |_| true) {
            Some(Announcement::One { body, .. }) => {
                assert!(
                    !body.contains('\u{202e}') && body.contains("\\u{202E}"),
                    "{body}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    fn pending(id: &str) -> InboxItem {
        InboxItem {
            server: "files".into(),
            args: json!({"path": "a.txt"}),
            args_hash: format!("hash-{id}"),
            ..crate::pending::tests::item(id)
        }
    }

    #[test]
    fn one_request_is_announced_with_its_tool_and_a_burst_is_summarised() {
        assert_eq!(announce(&[], |_| true), None);
        assert_eq!(
            announce(&[pending("a")], |_| false),
            Some(Announcement::One {
                approval_id: "a".into(),
                args_hash: "hash-a".into(),
                summary: "Allow tool call from files?".into(),
                body: "write_file — path: \"a.txt\"".into(),
                may_approve: false,
            })
        );
        assert_eq!(
            announce(&[pending("a"), pending("b"), pending("c")], |_| true),
            Some(Announcement::Burst {
                count: 3,
                summary: "3 tool calls waiting".into()
            })
        );
    }

    #[test]
    fn unknown_actions_and_open_decide_nothing() {
        let data = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let _guard = runtime.enter();
        let engine = Engine::open(airlock_engine::EngineConfig {
            data_dir: data.path().to_path_buf(),
            workspace: Some(data.path().join("workspace")),
        })
        .unwrap();
        assert_eq!(
            handle_action(&engine, "apr_x", "h", ACTION_OPEN),
            ActionOutcome::Open
        );
        assert_eq!(
            handle_action(&engine, "apr_x", "h", "__closed"),
            ActionOutcome::Ignored
        );
        // A decision for an unknown request is refused, never run.
        assert!(matches!(
            handle_action(&engine, "apr_x", "h", ACTION_ALLOW),
            ActionOutcome::Refused(_)
        ));
    }

    fn read_file_call() -> airlock_testkit::Reply {
        airlock_testkit::Reply::ToolCalls(vec![airlock_testkit::ScriptedCall::new(
            "c1",
            "builtin__read_file",
            json!({"path": "from-notification.txt"}),
        )])
    }

    /// On a private D-Bus session with a notification daemon (scripts/e2e.sh runs it under
    /// `dbus-run-session` with dunst and dbus-monitor): the notification reaches the bus with the
    /// tool's name, and invoking its "Allow once" action approves the request — a read-only
    /// tool's (set to ask here), the only kind a notification may approve.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "needs a D-Bus session with a notification daemon; run through scripts/e2e.sh"]
    async fn allow_once_from_a_notification_approves() {
        use airlock_engine::{EngineConfig, ProviderSettings};
        let model = airlock_testkit::ScriptedModel::start(vec![
            read_file_call(),
            airlock_testkit::Reply::Text("ok".into()),
        ])
        .await
        .unwrap();
        let data = tempfile::tempdir().unwrap();
        let engine = Engine::open(EngineConfig {
            data_dir: data.path().to_path_buf(),
            workspace: Some(data.path().join("workspace")),
        })
        .unwrap();
        engine
            .set_provider(ProviderSettings {
                base_url: model.base_url(),
                model: "m".into(),
                stream: false,
                ..Default::default()
            })
            .unwrap();
        engine
            .set_tool_setting("builtin", "read_file", airlock_core::ToolSetting::Required)
            .unwrap();
        std::fs::write(engine.workspace().join("from-notification.txt"), "hi").unwrap();
        engine.send_message("notify", "read it").unwrap();
        let mut item = None;
        for _ in 0..200 {
            if let Some(first) = engine.inbox().unwrap().into_iter().next() {
                item = Some(first);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let item = item.expect("a pending request");
        let announcement = announce(std::slice::from_ref(&item), |i| {
            engine.notification_may_approve(i)
        })
        .unwrap();
        let (shown_tx, shown_rx) = std::sync::mpsc::channel();
        let waiter = {
            let engine = engine.clone();
            std::thread::spawn(move || {
                show_and_wait(
                    &engine,
                    announcement,
                    move |id| shown_tx.send(id).unwrap(),
                    |_| {},
                )
            })
        };
        let id = shown_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the notification was shown");
        // The daemon would send this when the person clicks "Allow once"; send it as it would.
        // Repeated until it lands, since the listener subscribes right after showing.
        for _ in 0..100 {
            let _ = std::process::Command::new("dbus-send")
                .args([
                    "--session",
                    "--type=signal",
                    "/org/freedesktop/Notifications",
                    "org.freedesktop.Notifications.ActionInvoked",
                    &format!("uint32:{id}"),
                    &format!("string:{ACTION_ALLOW}"),
                ])
                .status();
            if waiter.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        waiter.join().unwrap();
        let decided = engine.approval(&item.approval_id).unwrap().unwrap();
        assert_eq!(decided.status, airlock_core::ApprovalStatus::Approved);
        let audit = engine.audit(50).unwrap();
        assert!(
            audit
                .iter()
                .any(|row| row.actor == "notification" && row.action == "approved"),
            "{audit:?}"
        );
        if let Some(log) = std::env::var_os("AIRLOCK_DBUS_LOG") {
            let seen = std::fs::read_to_string(log).unwrap();
            assert!(
                seen.contains("Allow tool call from builtin?") && seen.contains("read_file"),
                "{seen}"
            );
        }
    }
}
