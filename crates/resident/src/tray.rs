//! The tray icon on Linux: a StatusNotifierItem on the session bus (through `ksni`), so the
//! resident process keeps "N pending" (with a badged icon), "N grants active", "Sign in again:
//! SERVER" while a remote server needs it, Open inbox, Pause all agents and Quit without loading
//! GTK.

use ksni::menu::{MenuItem, StandardItem};
use ksni::{Category, Handle, Icon, OfflineReason, Status, ToolTip, TrayMethods};
use std::sync::Arc;

use crate::tray_lines::{
    ICON, ICON_BADGED, ICON_PAUSED, TrayIconKind, TrayLine, TrayView, decode_png,
};
pub use crate::tray_lines::{TrayAction, grants_label, pause_label, pending_label};

#[derive(thiserror::Error, Debug)]
pub enum TrayError {
    #[error("no D-Bus session bus for the tray icon: {0}")]
    NoSessionBus(ksni::Error),
    #[error("the tray host refused the tray icon: {0}")]
    Host(ksni::Error),
    #[error("cannot decode the tray icon: {0}")]
    Icon(#[from] png::DecodingError),
}

/// A PNG as `IconPixmap` carries it: ARGB32 in network byte order.
fn pixmap(png_bytes: &[u8]) -> Result<Icon, png::DecodingError> {
    let (rgba, width, height) = decode_png(png_bytes)?;
    Ok(Icon {
        // PNG caps both sides at 2^31 - 1, so they fit.
        width: width as i32,
        height: height as i32,
        data: rgba
            .chunks_exact(4)
            .flat_map(|p| [p[3], p[0], p[1], p[2]])
            .collect(),
    })
}

/// What the item shows; `ksni` reads it for every property and menu request.
struct Item {
    view: TrayView,
    icon: Icon,
    icon_badged: Icon,
    icon_paused: Icon,
    on_action: Arc<dyn Fn(TrayAction) + Send + Sync>,
}

impl Item {
    fn action(action: TrayAction) -> Box<dyn Fn(&mut Item) + Send> {
        Box::new(move |item: &mut Item| (item.on_action)(action))
    }
}

impl ksni::Tray for Item {
    fn id(&self) -> String {
        "airlock".into()
    }

    fn title(&self) -> String {
        "Airlock".into()
    }

    fn category(&self) -> Category {
        Category::ApplicationStatus
    }

    /// Active rather than NeedsAttention when something is pending: hosts draw
    /// NeedsAttention with the (unset) attention icon or make it blink; the badge says it.
    fn status(&self) -> Status {
        Status::Active
    }

    fn icon_pixmap(&self) -> Vec<Icon> {
        vec![match self.view.icon() {
            TrayIconKind::Plain => self.icon.clone(),
            TrayIconKind::Badged => self.icon_badged.clone(),
            TrayIconKind::Paused => self.icon_paused.clone(),
        }]
    }

    fn tool_tip(&self) -> ToolTip {
        ToolTip {
            title: self.view.tooltip(),
            ..Default::default()
        }
    }

    fn activate(&mut self, _x: i32, _y: i32) {
        (self.on_action)(TrayAction::OpenInbox);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        // The count and grants lines are information: Settings lists each grant, revocable.
        let info = |label: String| {
            StandardItem {
                label,
                enabled: false,
                ..Default::default()
            }
            .into()
        };
        let command = |label: &str, action: TrayAction| {
            StandardItem {
                label: label.to_owned(),
                activate: Item::action(action),
                ..Default::default()
            }
            .into()
        };
        let mut lines = vec![
            info(self.view.count_line.clone()),
            info(grants_label(self.view.grants)),
        ];
        // Said while a remote server waits for a sign-in (Settings has the button).
        lines.extend(self.view.sign_in_line().map(info));
        lines.extend([
            MenuItem::Separator,
            command("Open inbox", TrayAction::OpenInbox),
            command(pause_label(self.view.paused), TrayAction::TogglePause),
            command("Quit Airlock", TrayAction::Quit),
        ]);
        lines
    }

    /// The desktop has no tray host (yet, or any more): the app runs on and the icon comes back
    /// when one appears (`ksni` re-registers on the watcher's return).
    fn watcher_offline(&self, reason: OfflineReason) -> bool {
        tracing::warn!(
            "no tray host on the session bus ({reason:?}); Airlock runs without a tray icon until one starts"
        );
        true
    }

    fn watcher_online(&self) {
        tracing::info!("a tray host started; the tray icon is shown");
    }
}

/// The tray icon; dropping it removes the icon.
pub struct Tray {
    handle: Handle<Item>,
}

impl Tray {
    /// Registers the icon on the session bus; `on_action` is called for menu clicks and a left
    /// click (activate) on the icon (= OpenInbox). It runs inside the tray's service, so it must
    /// hand work off (a channel, a spawned task) and not wait on this `Tray`.
    ///
    /// Without a tray host (no `org.kde.StatusNotifierWatcher` on the bus: a desktop without
    /// StatusNotifierItem support, or a login session whose panel starts after Airlock) this
    /// still succeeds: a warning is logged and the icon appears when a host starts. By default
    /// `ksni` would fail with a `ServiceUnknown` error instead, and the icon would never come
    /// even after the panel started. It fails only without a session bus
    /// ([`TrayError::NoSessionBus`]) or when a host refuses the item ([`TrayError::Host`]);
    /// the app then runs without a tray.
    pub async fn spawn(
        paused: bool,
        on_action: impl Fn(TrayAction) + Send + Sync + 'static,
    ) -> Result<Tray, TrayError> {
        let item = Item {
            view: TrayView::new(paused),
            icon: pixmap(ICON)?,
            icon_badged: pixmap(ICON_BADGED)?,
            icon_paused: pixmap(ICON_PAUSED)?,
            on_action: Arc::new(on_action),
        };
        let handle =
            item.assume_sni_available(true)
                .spawn()
                .await
                .map_err(|error| match error {
                    ksni::Error::Dbus(_) => TrayError::NoSessionBus(error),
                    other => TrayError::Host(other),
                })?;
        Ok(Tray { handle })
    }

    /// Changes one line: the count (menu, tooltip and the icon's badge), the storage failure,
    /// the pause (and the paused icon), the grants or the servers that need a sign-in.
    pub async fn show(&self, line: TrayLine) {
        self.handle.update(|item| item.view.apply(line)).await;
    }

    /// The texts of the menu's changing lines as the tray shows them now (count, pause,
    /// grants), so a test of the real app can assert what the person sees; empty once the
    /// tray's service has stopped.
    pub async fn menu_texts(&self) -> Vec<String> {
        self.handle
            .update(|item| item.view.texts())
            .await
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Tray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tray").finish_non_exhaustive()
    }
}

impl Drop for Tray {
    fn drop(&mut self) {
        // Dropping ksni's handle alone leaves the icon up; the request goes out without waiting.
        drop(self.handle.shutdown());
    }
}

#[cfg(test)]
mod tests {
    use super::{ICON, ICON_BADGED, ICON_PAUSED, pixmap};

    #[test]
    fn every_icon_decodes_to_an_argb_pixmap_of_its_own() {
        let plain = pixmap(ICON).unwrap();
        let badged = pixmap(ICON_BADGED).unwrap();
        let paused = pixmap(ICON_PAUSED).unwrap();
        for icon in [&plain, &badged, &paused] {
            assert_eq!((icon.width, icon.height), (64, 64));
            assert_eq!(icon.data.len(), 64 * 64 * 4);
        }
        assert_ne!(plain.data, badged.data);
        assert_ne!(paused.data, plain.data);
        assert_ne!(paused.data, badged.data);
        // ARGB: some pixel is transparent and some opaque (alpha first, not last).
        let alphas: Vec<u8> = plain.data.chunks_exact(4).map(|p| p[0]).collect();
        assert!(alphas.contains(&0) && alphas.contains(&0xff));
    }
}
