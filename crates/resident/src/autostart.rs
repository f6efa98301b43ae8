//! Settings → Start at login: the login entry (an XDG autostart file, a macOS launch agent, the
//! Windows Run key, written by `auto-launch`, the crate tauri-plugin-autostart wraps) that starts
//! the desktop app hidden in the tray. It lives here, not in the window, because the window is
//! gone most of the time and the resident process answers Settings.

use std::path::Path;

/// The argument the login entry starts the desktop app with.
pub const HIDDEN_ARG: &str = "--hidden";

pub struct LoginEntry(Option<auto_launch::AutoLaunch>);

impl std::fmt::Debug for LoginEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LoginEntry")
            .field(&self.0.is_some())
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("could not change the login entry: {0}")]
pub struct LoginEntryError(String);

impl LoginEntry {
    /// The entry that starts `app` (the desktop app's launcher, or the AppImage that holds it)
    /// with [`HIDDEN_ARG`], under the product's name.
    pub fn new(app: &Path) -> Self {
        let app = std::env::var_os("APPIMAGE")
            .filter(|_| cfg!(target_os = "linux"))
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| app.to_path_buf());
        let built = auto_launch::AutoLaunchBuilder::new()
            .set_app_name("Airlock")
            .set_app_path(&app.display().to_string())
            .set_args(&[HIDDEN_ARG])
            .build();
        match built {
            Ok(entry) => Self(Some(entry)),
            Err(error) => {
                tracing::warn!("start at login is unavailable: {error}");
                Self(None)
            }
        }
    }

    /// No login entry can be written (tests of the commands).
    pub fn unavailable() -> Self {
        Self(None)
    }

    pub fn is_enabled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|entry| entry.is_enabled().unwrap_or(false))
    }

    /// Writes or removes the entry; returns whether it is there now.
    pub fn set(&self, enabled: bool) -> Result<bool, LoginEntryError> {
        let entry = self
            .0
            .as_ref()
            .ok_or_else(|| LoginEntryError("not available on this system".into()))?;
        let done = if enabled {
            entry.enable()
        } else {
            entry.disable()
        };
        done.map_err(|error| LoginEntryError(error.to_string()))?;
        Ok(self.is_enabled())
    }
}
