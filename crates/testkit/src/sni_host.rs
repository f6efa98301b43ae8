//! A tray host double: what a desktop panel does with a tray icon, over the real D-Bus protocol,
//! so tests (and scripts, through `airlock-sni-host`) see, read and click the tray as a person
//! would, on a private session bus without a desktop.
//!
//! Protocol: the freedesktop StatusNotifierItem specification
//! (<https://www.freedesktop.org/wiki/Specifications/StatusNotifierItem/>): the watcher
//! `org.kde.StatusNotifierWatcher` at `/StatusNotifierWatcher` (items register there; the list
//! is `RegisteredStatusNotifierItems`, entries `SERVICE/PATH` as KDE's watcher keeps them), the
//! items' `org.kde.StatusNotifierItem` (`Menu`, `ToolTip`, `IconPixmap`, `Activate`), and the
//! menus' `com.canonical.dbusmenu` (libdbusmenu's `dbus-menu.xml`: `GetLayout`, `AboutToShow`,
//! `Event`; properties left out of a layout have their defaults: enabled, visible, standard).

use futures::StreamExt;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::task::JoinHandle;
use zbus::Connection;
use zbus::fdo::{DBusProxy, RequestNameFlags, RequestNameReply};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

/// The watcher's well-known name; items find the host through it.
pub const WATCHER_NAME: &str = "org.kde.StatusNotifierWatcher";
/// The watcher's object path.
pub const WATCHER_PATH: &str = "/StatusNotifierWatcher";
/// Where an item registered by bus name alone serves its interface.
const DEFAULT_ITEM_PATH: &str = "/StatusNotifierItem";

#[derive(Debug, thiserror::Error)]
pub enum SniError {
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
    #[error("D-Bus: {0}")]
    Call(#[from] zbus::fdo::Error),
    #[error("unexpected value on the bus: {0}")]
    Value(#[from] zbus::zvariant::Error),
    #[error("another StatusNotifierWatcher owns {WATCHER_NAME} and does not give it up")]
    WatcherTaken,
    #[error("no StatusNotifierItem is registered")]
    NoItem,
    #[error("no menu entry {0:?}; the menu has: {1}")]
    NoEntry(String, String),
    #[error("the menu entry {0:?} is disabled")]
    Disabled(String),
}

/// One line of an item's menu as a panel would draw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuEntry {
    /// The dbusmenu id `Event` takes.
    pub id: i32,
    /// The raw label (mnemonic underscores are not interpreted); empty for a separator.
    pub label: String,
    pub enabled: bool,
    pub separator: bool,
}

/// One size of an item's icon: ARGB32, network byte order, as `IconPixmap` carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixmap {
    pub width: i32,
    pub height: i32,
    pub argb: Vec<u8>,
}

/// The registered items, in registration order (`SERVICE/PATH`).
type Items = Arc<Mutex<Vec<String>>>;

/// A poisoned lock only means a panic elsewhere; the list itself is still whole.
fn lock(items: &Items) -> MutexGuard<'_, Vec<String>> {
    items
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The bus name part of a `SERVICE/PATH` entry.
fn service_of(item: &str) -> &str {
    item.split_once('/').map_or(item, |(service, _)| service)
}

/// Splits an item address into the bus name and the object path of its
/// `org.kde.StatusNotifierItem`.
fn address(item: &str) -> (&str, &str) {
    match item.find('/') {
        Some(slash) => item.split_at(slash),
        None => (item, DEFAULT_ITEM_PATH),
    }
}

/// The `org.kde.StatusNotifierWatcher` object.
struct Watcher {
    items: Items,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    /// An item registers by bus name (then it serves `/StatusNotifierItem`) or, as
    /// libappindicator does, by object path on the caller's own connection.
    async fn register_status_notifier_item(
        &self,
        service: &str,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        let item = if service.starts_with('/') {
            let sender = header
                .sender()
                .ok_or_else(|| zbus::fdo::Error::InvalidArgs("no sender".into()))?;
            format!("{sender}{service}")
        } else {
            format!("{service}{DEFAULT_ITEM_PATH}")
        };
        let added = {
            let mut items = lock(&self.items);
            let added = !items.contains(&item);
            if added {
                items.push(item.clone());
            }
            added
        };
        if added {
            Self::status_notifier_item_registered(&emitter, &item).await?;
            self.registered_status_notifier_items_changed(&emitter)
                .await?;
        }
        Ok(())
    }

    /// This watcher is its own host; another host registering changes nothing.
    async fn register_status_notifier_host(
        &self,
        _service: &str,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        Self::status_notifier_host_registered(&emitter).await?;
        Ok(())
    }

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        lock(&self.items).clone()
    }

    /// True, as KDE's and GNOME's watchers say: the items are shown.
    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_item_unregistered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_host_registered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

#[zbus::proxy(
    interface = "org.kde.StatusNotifierWatcher",
    default_service = "org.kde.StatusNotifierWatcher",
    default_path = "/StatusNotifierWatcher"
)]
trait StatusNotifierWatcher {
    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> zbus::Result<Vec<String>>;
}

#[zbus::proxy(interface = "org.kde.StatusNotifierItem")]
trait StatusNotifierItem {
    fn activate(&self, x: i32, y: i32) -> zbus::Result<()>;

    #[zbus(property)]
    fn menu(&self) -> zbus::Result<OwnedObjectPath>;

    /// `(sa(iiay)ss)`: icon name, icon pixmaps, title, description.
    #[zbus(property)]
    #[allow(clippy::type_complexity)]
    fn tool_tip(&self) -> zbus::Result<(String, Vec<(i32, i32, Vec<u8>)>, String, String)>;

    #[zbus(property)]
    fn icon_pixmap(&self) -> zbus::Result<Vec<(i32, i32, Vec<u8>)>>;
}

/// A menu node: `(ia{sv}av)`, the children being variants of the same.
type RawLayout = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);

#[zbus::proxy(interface = "com.canonical.dbusmenu")]
trait DbusMenu {
    fn get_layout(
        &self,
        parent_id: i32,
        recursion_depth: i32,
        property_names: &[&str],
    ) -> zbus::Result<(u32, RawLayout)>;

    fn about_to_show(&self, id: i32) -> zbus::Result<bool>;

    fn event(&self, id: i32, event_id: &str, data: &Value<'_>, timestamp: u32) -> zbus::Result<()>;
}

/// The panel's side: reads and clicks the items registered with whichever watcher owns
/// [`WATCHER_NAME`] (this process's [`SniHost`] or an `airlock-sni-host watch`). Item
/// addresses are the watcher's `SERVICE/PATH` entries.
#[derive(Debug, Clone)]
pub struct SniClient {
    conn: Connection,
}

impl SniClient {
    /// Connects to the session bus.
    pub async fn connect() -> Result<SniClient, SniError> {
        Ok(SniClient {
            conn: Connection::session().await?,
        })
    }

    /// The registered items, oldest first.
    pub async fn items(&self) -> Result<Vec<String>, SniError> {
        let watcher = StatusNotifierWatcherProxy::builder(&self.conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await?;
        Ok(watcher.registered_status_notifier_items().await?)
    }

    /// The first registered item.
    pub async fn first_item(&self) -> Result<String, SniError> {
        self.items()
            .await?
            .into_iter()
            .next()
            .ok_or(SniError::NoItem)
    }

    /// Waits up to `timeout` for an item whose bus name starts with `prefix` (`""` for any),
    /// e.g. `org.kde.StatusNotifierItem-{pid}-` for one of this process's trays.
    pub async fn wait_for_item(&self, prefix: &str, timeout: Duration) -> Result<String, SniError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let items = self.items().await?;
            if let Some(item) = items.into_iter().find(|item| item.starts_with(prefix)) {
                return Ok(item);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(SniError::NoItem);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn item_proxy(&self, item: &str) -> Result<StatusNotifierItemProxy<'static>, SniError> {
        let (service, path) = address(item);
        // Fresh reads: items announce a new tooltip or icon by their own signals
        // (NewToolTip, NewIcon), not PropertiesChanged, so a cache would go stale.
        Ok(StatusNotifierItemProxy::builder(&self.conn)
            .destination(service.to_owned())?
            .path(path.to_owned())?
            .cache_properties(CacheProperties::No)
            .build()
            .await?)
    }

    async fn menu_proxy(&self, item: &str) -> Result<DbusMenuProxy<'static>, SniError> {
        let (service, _) = address(item);
        let path = self.item_proxy(item).await?.menu().await?;
        Ok(DbusMenuProxy::builder(&self.conn)
            .destination(service.to_owned())?
            .path(path)?
            .cache_properties(CacheProperties::No)
            .build()
            .await?)
    }

    /// The item's top-level menu as a panel opens it: `AboutToShow(0)`, then
    /// `GetLayout(0, -1, [])`; hidden entries are left out.
    pub async fn menu(&self, item: &str) -> Result<Vec<MenuEntry>, SniError> {
        let menu = self.menu_proxy(item).await?;
        // Informational for the item; an item may refuse it, and a panel still shows the menu.
        let _ = menu.about_to_show(0).await;
        let (_revision, (_root, _props, children)) = menu.get_layout(0, -1, &[]).await?;
        let mut entries = Vec::new();
        for child in children {
            let value = match Value::from(child) {
                Value::Value(inner) => *inner,
                other => other,
            };
            let (id, props, _children): RawLayout = value.try_into()?;
            let flag = |name: &str| {
                props
                    .get(name)
                    .and_then(|value| value.downcast_ref::<bool>().ok())
                    .unwrap_or(true)
            };
            if !flag("visible") {
                continue;
            }
            let text = |name: &str| {
                props
                    .get(name)
                    .and_then(|value| value.downcast_ref::<&str>().ok().map(str::to_owned))
            };
            entries.push(MenuEntry {
                id,
                label: text("label").unwrap_or_default(),
                enabled: flag("enabled"),
                separator: text("type").as_deref() == Some("separator"),
            });
        }
        Ok(entries)
    }

    /// Clicks the menu entry labelled `label`: `Event(id, "clicked", 0, 0)`. A disabled entry
    /// cannot be clicked, as in a panel.
    pub async fn click(&self, item: &str, label: &str) -> Result<(), SniError> {
        let entries = self.menu(item).await?;
        let Some(entry) = entries
            .iter()
            .find(|entry| !entry.separator && entry.label == label)
        else {
            let labels: Vec<&str> = entries
                .iter()
                .filter(|entry| !entry.separator)
                .map(|entry| entry.label.as_str())
                .collect();
            return Err(SniError::NoEntry(label.to_owned(), labels.join(", ")));
        };
        if !entry.enabled {
            return Err(SniError::Disabled(label.to_owned()));
        }
        let menu = self.menu_proxy(item).await?;
        menu.event(entry.id, "clicked", &Value::I32(0), 0).await?;
        Ok(())
    }

    /// A left click on the icon: `Activate(0, 0)`.
    pub async fn activate(&self, item: &str) -> Result<(), SniError> {
        Ok(self.item_proxy(item).await?.activate(0, 0).await?)
    }

    /// The tooltip's title.
    pub async fn tooltip(&self, item: &str) -> Result<String, SniError> {
        let (_icon_name, _icons, title, _description) =
            self.item_proxy(item).await?.tool_tip().await?;
        Ok(title)
    }

    /// The icon's pixmaps, to tell one icon from another.
    pub async fn icon_pixmap(&self, item: &str) -> Result<Vec<Pixmap>, SniError> {
        let pixmaps = self.item_proxy(item).await?.icon_pixmap().await?;
        Ok(pixmaps
            .into_iter()
            .map(|(width, height, argb)| Pixmap {
                width,
                height,
                argb,
            })
            .collect())
    }
}

/// The watcher and host of a desktop panel on the session bus. Starting one takes the watcher
/// name over from a replaceable one (an `airlock-sni-host watch`, an earlier `SniHost`), which
/// gets it back when this one is gone, so a test runs beside a script's host. Reads and clicks
/// go through [`SniClient`] (by `Deref`) on a connection of its own, as a panel's would.
#[derive(Debug)]
pub struct SniHost {
    client: SniClient,
    _conn: Connection,
    items: Items,
    cleanup: JoinHandle<()>,
}

impl SniHost {
    /// Owns [`WATCHER_NAME`] at [`WATCHER_PATH`]; fails with [`SniError::WatcherTaken`] when a
    /// watcher that does not allow replacement (a desktop's own) has it.
    pub async fn start() -> Result<SniHost, SniError> {
        let items = Items::default();
        let conn = zbus::connection::Builder::session()?
            .serve_at(
                WATCHER_PATH,
                Watcher {
                    items: items.clone(),
                },
            )?
            .build()
            .await?;
        // Listening before owning the name, so no departure is missed.
        let dbus = DBusProxy::new(&conn).await?;
        let owners = dbus.receive_name_owner_changed().await?;
        let lost = dbus.receive_name_lost().await?;
        let reply = conn
            .request_name_with_flags(
                WATCHER_NAME,
                RequestNameFlags::AllowReplacement | RequestNameFlags::ReplaceExisting,
            )
            .await?;
        if reply == RequestNameReply::InQueue {
            conn.release_name(WATCHER_NAME).await?;
            return Err(SniError::WatcherTaken);
        }
        let cleanup = tokio::spawn(forget_departed(conn.clone(), items.clone(), owners, lost));
        Ok(SniHost {
            client: SniClient::connect().await?,
            _conn: conn,
            items,
            cleanup,
        })
    }

    /// The registered items as this watcher holds them (no bus round trip).
    pub fn registered(&self) -> Vec<String> {
        lock(&self.items).clone()
    }
}

impl Deref for SniHost {
    type Target = SniClient;

    fn deref(&self) -> &SniClient {
        &self.client
    }
}

impl Drop for SniHost {
    fn drop(&mut self) {
        // The task holds a clone of the connection; without it the name goes with the socket.
        self.cleanup.abort();
    }
}

/// Drops items whose bus name left the bus (their process quit), as a watcher must, and all
/// of them when another watcher takes the name over (the items register with that one).
async fn forget_departed(
    conn: Connection,
    items: Items,
    mut owners: zbus::fdo::NameOwnerChangedStream,
    mut lost: zbus::fdo::NameLostStream,
) {
    let Ok(watcher) = conn
        .object_server()
        .interface::<_, Watcher>(WATCHER_PATH)
        .await
    else {
        return;
    };
    let emitter = watcher.signal_emitter();
    loop {
        let gone: Vec<String> = tokio::select! {
            Some(signal) = owners.next() => {
                let Ok(args) = signal.args() else { continue };
                if args.new_owner().is_some() {
                    continue;
                }
                let name = args.name().as_str();
                let mut items = lock(&items);
                let (gone, kept) = items.drain(..).partition(|item| service_of(item) == name);
                *items = kept;
                gone
            }
            Some(signal) = lost.next() => {
                match signal.args() {
                    Ok(args) if args.name().as_str() == WATCHER_NAME => lock(&items).drain(..).collect(),
                    _ => continue,
                }
            }
            else => return,
        };
        if gone.is_empty() {
            continue;
        }
        for item in &gone {
            let _ = Watcher::status_notifier_item_unregistered(emitter, item).await;
        }
        let _ = watcher
            .get()
            .await
            .registered_status_notifier_items_changed(emitter)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::{address, service_of};

    #[test]
    fn item_addresses_split_into_bus_name_and_path() {
        assert_eq!(
            address("org.kde.StatusNotifierItem-1-1/StatusNotifierItem"),
            ("org.kde.StatusNotifierItem-1-1", "/StatusNotifierItem")
        );
        assert_eq!(
            address(":1.7/org/ayatana/NotificationItem/x"),
            (":1.7", "/org/ayatana/NotificationItem/x")
        );
        assert_eq!(address(":1.7"), (":1.7", "/StatusNotifierItem"));
        assert_eq!(service_of(":1.7/org/x"), ":1.7");
    }
}
