//! Where the data directory is: the one rule every program follows (the CLI, the hook, the
//! engine's hosts, the window), so the CLI talks to whichever engine runs.

use airlock_core::platform::{self, Os, UserFolders};
use std::path::PathBuf;

/// The variable that names the data directory when `--data-dir` is not given.
pub const DATA_DIR_ENV: &str = "AIRLOCK_DATA_DIR";

/// Neither `--data-dir`, the variable, nor a platform data folder says where it is.
#[derive(Debug, thiserror::Error)]
#[error("no data directory: pass --data-dir or set {DATA_DIR_ENV}")]
pub struct NoDataDir;

/// The data directory: `--data-dir DIR`, else `$AIRLOCK_DATA_DIR`, else the platform's data folder.
pub fn resolve_data_dir(given: Option<PathBuf>) -> Result<PathBuf, NoDataDir> {
    if let Some(dir) = given {
        return Ok(dir);
    }
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    default_data_dir().ok_or(NoDataDir)
}

/// `airlock` in this platform's per-user data folder (the rule: [`platform::default_data_dir`]).
pub fn default_data_dir() -> Option<PathBuf> {
    let variable = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let folders = UserFolders {
        home: dirs::home_dir(),
        xdg_data_home: variable("XDG_DATA_HOME"),
        app_data: variable("APPDATA"),
    };
    platform::default_data_dir(Os::NATIVE, &folders)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The platform rule read with this machine's folders is where `dirs` says data goes (on
    /// Windows: %APPDATA% is the roaming known folder `dirs` asks the system for).
    #[test]
    fn the_default_is_airlock_in_the_platforms_data_folder() {
        assert_eq!(
            default_data_dir(),
            dirs::data_dir().map(|folder| folder.join("airlock"))
        );
    }

    #[test]
    fn an_explicit_data_dir_wins() {
        let dir = resolve_data_dir(Some(PathBuf::from("/tmp/x"))).unwrap();
        assert_eq!(dir, PathBuf::from("/tmp/x"));
    }
}
