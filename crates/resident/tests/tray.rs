//! The tray as a desktop panel sees it: a StatusNotifierItem host on the session bus reads the
//! menu, tooltip and icon and clicks the entries, over the real protocol.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_resident::tray::{Tray, TrayAction};
use airlock_resident::tray_lines::TrayLine;
use airlock_testkit::sni_host::{SniError, SniHost};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

/// One scenario, not several tests: the tests of a binary run in parallel, and two hosts would
/// take the one watcher name from each other.
#[tokio::test]
#[ignore = "needs a session D-Bus; run through scripts/e2e.sh"]
async fn the_tray_waits_for_a_host_then_shows_and_answers_it() {
    let actions = Arc::new(Mutex::new(Vec::new()));
    let recorded = actions.clone();
    let taken = move || std::mem::take(&mut *actions.lock().unwrap());

    // Started before any host (as at login, before the panel): it still starts.
    let tray = Tray::spawn(false, move |action| recorded.lock().unwrap().push(action))
        .await
        .expect("the tray starts without a tray host");
    let host = SniHost::start().await.unwrap();
    let ours = format!("org.kde.StatusNotifierItem-{}-", std::process::id());
    let item = host
        .wait_for_item(&ours, WAIT)
        .await
        .expect("the tray registers once a host appears");
    assert!(host.registered().contains(&item));

    let menu = host.menu(&item).await.unwrap();
    let lines: Vec<(&str, bool, bool)> = menu
        .iter()
        .map(|entry| (entry.label.as_str(), entry.enabled, entry.separator))
        .collect();
    assert_eq!(
        lines,
        [
            ("Nothing pending", false, false),
            ("No grants active", false, false),
            ("", true, true),
            ("Open inbox", true, false),
            ("Pause all agents", true, false),
            ("Quit Airlock", true, false),
        ]
    );
    assert_eq!(
        host.tooltip(&item).await.unwrap(),
        "Airlock — Nothing pending"
    );
    let plain_icon = host.icon_pixmap(&item).await.unwrap();
    assert_eq!(plain_icon.len(), 1);
    assert_eq!((plain_icon[0].width, plain_icon[0].height), (64, 64));

    // The count: menu line, tooltip and a badged icon.
    tray.show(TrayLine::Pending(2)).await;
    assert_eq!(label(&host, &item, 0).await, "2 pending");
    assert_eq!(host.tooltip(&item).await.unwrap(), "Airlock — 2 pending");
    let badged_icon = host.icon_pixmap(&item).await.unwrap();
    assert_ne!(badged_icon, plain_icon);
    assert_eq!(
        tray.menu_texts().await,
        ["2 pending", "Pause all agents", "No grants active"]
    );

    tray.show(TrayLine::Paused(true)).await;
    assert_eq!(label(&host, &item, 4).await, "Resume agents");
    // Finding (issue 27): paused looked like running. The icon says paused, pending or not.
    let paused_icon = host.icon_pixmap(&item).await.unwrap();
    assert_ne!(paused_icon, plain_icon, "paused shows the plain icon");
    assert_ne!(paused_icon, badged_icon, "paused shows the pending icon");
    tray.show(TrayLine::Grants(1)).await;
    assert_eq!(label(&host, &item, 1).await, "1 grant active");
    tray.show(TrayLine::Grants(3)).await;
    assert_eq!(label(&host, &item, 1).await, "3 grants active");
    assert_eq!(
        tray.menu_texts().await,
        ["2 pending", "Resume agents", "3 grants active"]
    );

    tray.show(TrayLine::StorageFailure).await;
    assert_eq!(
        label(&host, &item, 0).await,
        "Cannot record decisions — restart Airlock"
    );
    assert_eq!(
        host.tooltip(&item).await.unwrap(),
        "Airlock — Cannot record decisions — restart Airlock"
    );
    assert_eq!(
        tray.menu_texts().await[0],
        "Cannot record decisions — restart Airlock"
    );

    tray.show(TrayLine::Pending(0)).await;
    assert_eq!(label(&host, &item, 0).await, "Nothing pending");
    assert_eq!(host.icon_pixmap(&item).await.unwrap(), paused_icon);

    // Clicks and a left click on the icon reach `on_action`, each once.
    host.click(&item, "Open inbox").await.unwrap();
    assert_eq!(taken(), [TrayAction::OpenInbox]);
    host.click(&item, "Resume agents").await.unwrap();
    assert_eq!(taken(), [TrayAction::TogglePause]);
    host.click(&item, "Quit Airlock").await.unwrap();
    assert_eq!(taken(), [TrayAction::Quit]);
    host.activate(&item).await.unwrap();
    assert_eq!(taken(), [TrayAction::OpenInbox]);
    // The information lines are not commands.
    assert!(matches!(
        host.click(&item, "Nothing pending").await,
        Err(SniError::Disabled(_))
    ));
    assert!(taken().is_empty());

    // Resumed with nothing pending: the plain icon again.
    tray.show(TrayLine::Paused(false)).await;
    assert_eq!(label(&host, &item, 4).await, "Pause all agents");
    assert_eq!(host.icon_pixmap(&item).await.unwrap(), plain_icon);

    // Issue 30: a remote server that waits for a sign-in is named in the menu (an information
    // line under the grants, not a command) and in the tooltip, until it is signed in.
    tray.show(TrayLine::SignInNeeded(vec![
        "github".into(),
        "linear".into(),
    ]))
    .await;
    assert_eq!(
        label(&host, &item, 2).await,
        "Sign in again: github, linear"
    );
    assert_eq!(
        host.tooltip(&item).await.unwrap(),
        "Airlock — Nothing pending · Sign in again: github, linear"
    );
    assert!(matches!(
        host.click(&item, "Sign in again: github, linear").await,
        Err(SniError::Disabled(_))
    ));
    assert!(taken().is_empty());
    tray.show(TrayLine::SignInNeeded(Vec::new())).await;
    assert!(host.menu(&item).await.unwrap()[2].separator);
    assert_eq!(
        host.tooltip(&item).await.unwrap(),
        "Airlock — Nothing pending"
    );

    // Dropping the tray takes the icon away.
    drop(tray);
    let deadline = tokio::time::Instant::now() + WAIT;
    while host.items().await.unwrap().contains(&item) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the icon stays after the tray is dropped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The label of the menu's `index`th line as the host reads it now.
async fn label(host: &SniHost, item: &str, index: usize) -> String {
    host.menu(item).await.unwrap()[index].label.clone()
}
