//! The resident half of the desktop app: it owns the data directory's engine and local API and
//! keeps the tray and notifications while no window is open. The window is a separate process
//! (`airlock-desktop --window`), started when it is opened and gone when it closes, whose UI's
//! commands come here over the local API ([`desktop_api`]).

pub mod autostart;
mod bindings;
pub mod commands;
pub mod desktop_api;
pub mod events;
pub mod notifications;
pub mod pending;
pub mod shell;
pub mod team_link;
#[cfg(target_os = "linux")]
pub mod tray;
#[cfg(not(target_os = "linux"))]
#[path = "tray_native.rs"]
pub mod tray;
pub mod tray_lines;
pub mod window;
