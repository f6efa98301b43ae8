//! How the desktop app's window process talks to its resident process, over the local API: the
//! routes, and the names of the events the resident sends an open window (the UI's own event
//! names, which the window passes on as they are).

/// `POST {INVOKE_PATH}{command}` with the invoke's arguments: `{"Ok": result}` or
/// `{"Err": CommandError}`.
pub const INVOKE_PATH: &str = "/v1/desktop/invoke/";
/// Server-sent events for one open window; the window counts as open while it listens.
pub const EVENTS_PATH: &str = "/v1/desktop/events";

/// Whether a window is open and where its page went (`WindowsView`).
pub const WINDOWS_PATH: &str = "/v1/desktop/windows";

/// Every engine event, as is.
pub const ENGINE_EVENT: &str = "engine-event";
/// Events were dropped (the window fell behind): reload everything.
pub const RESYNC_EVENT: &str = "engine-resync";
/// Go to a screen (and item): a `Navigate`.
pub const NAVIGATE_EVENT: &str = "navigate";
/// Come to the front.
pub const SHOW_EVENT: &str = "show";
/// Airlock quits: close.
pub const QUIT_EVENT: &str = "quit";
