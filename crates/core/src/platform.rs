//! The desktop platforms Airlock is built for, and the rules that differ between them as pure
//! functions of the platform and of what the caller read from the environment: every
//! platform's rule is tested on every platform (docs/PLATFORMS.md says which run where).

use crate::path::{PathStyle, is_absolute_as};
use std::path::PathBuf;

/// A desktop platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux, and the other Unix-likes that follow the XDG base directories.
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The platform Airlock was built for.
    pub const NATIVE: Os = if cfg!(windows) {
        Os::Windows
    } else if cfg!(target_os = "macos") {
        Os::MacOs
    } else {
        Os::Linux
    };

    /// How the platform writes paths.
    pub fn path_style(self) -> PathStyle {
        match self {
            Os::Windows => PathStyle::Windows,
            Os::Linux | Os::MacOs => PathStyle::Posix,
        }
    }

    fn is_absolute(self, path: &std::path::Path) -> bool {
        is_absolute_as(&path.to_string_lossy(), self.path_style())
    }
}

/// The folder names Airlock's data directory is found from, as read from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFolders {
    /// The home folder (`$HOME`; on Windows the user's profile folder).
    pub home: Option<PathBuf>,
    /// `$XDG_DATA_HOME` (Linux).
    pub xdg_data_home: Option<PathBuf>,
    /// `%APPDATA%`, the roaming application-data folder (Windows).
    pub app_data: Option<PathBuf>,
}

/// The name of Airlock's folder inside the platform's data folder.
pub const DATA_DIR_NAME: &str = "airlock";

/// The platform's per-user data folder: `$XDG_DATA_HOME`, else `~/.local/share` (Linux);
/// `~/Library/Application Support` (macOS); `%APPDATA%`, else `~\AppData\Roaming` (Windows).
/// A variable set to a relative path is ignored (the XDG specification says so; a relative
/// data folder would move with the current folder).
pub fn data_folder(os: Os, folders: &UserFolders) -> Option<PathBuf> {
    let absolute = |path: &Option<PathBuf>| path.clone().filter(|p| os.is_absolute(p));
    let home = absolute(&folders.home);
    match os {
        Os::Linux => absolute(&folders.xdg_data_home)
            .or_else(|| home.map(|h| h.join(".local").join("share"))),
        Os::MacOs => home.map(|h| h.join("Library").join("Application Support")),
        Os::Windows => {
            absolute(&folders.app_data).or_else(|| home.map(|h| h.join("AppData").join("Roaming")))
        }
    }
}

/// Airlock's default data directory: `airlock` in the platform's [`data_folder`].
pub fn default_data_dir(os: Os, folders: &UserFolders) -> Option<PathBuf> {
    data_folder(os, folders).map(|folder| folder.join(DATA_DIR_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn folders(home: &str, xdg: Option<&str>, app_data: Option<&str>) -> UserFolders {
        UserFolders {
            home: Some(home.into()),
            xdg_data_home: xdg.map(PathBuf::from),
            app_data: app_data.map(PathBuf::from),
        }
    }

    #[test]
    fn linux_uses_xdg_data_home_else_local_share() {
        let plain = folders("/home/ada", None, None);
        assert_eq!(
            default_data_dir(Os::Linux, &plain),
            Some(
                Path::new("/home/ada")
                    .join(".local")
                    .join("share")
                    .join("airlock")
            )
        );
        let xdg = folders("/home/ada", Some("/data/ada"), None);
        assert_eq!(
            default_data_dir(Os::Linux, &xdg),
            Some(Path::new("/data/ada").join("airlock"))
        );
        // A relative XDG_DATA_HOME is not a data folder; APPDATA means nothing on Linux.
        let odd = folders(
            "/home/ada",
            Some("data"),
            Some(r"C:\Users\ada\AppData\Roaming"),
        );
        assert_eq!(
            default_data_dir(Os::Linux, &odd),
            default_data_dir(Os::Linux, &plain)
        );
    }

    #[test]
    fn macos_uses_application_support_whatever_xdg_says() {
        let mac = folders("/Users/ada", Some("/data/ada"), None);
        assert_eq!(
            default_data_dir(Os::MacOs, &mac),
            Some(
                Path::new("/Users/ada")
                    .join("Library")
                    .join("Application Support")
                    .join("airlock")
            )
        );
    }

    #[test]
    fn windows_uses_appdata_else_the_profiles_roaming_folder() {
        let roaming = r"C:\Users\ada\AppData\Roaming";
        let set = folders(r"C:\Users\ada", Some("/data/ada"), Some(roaming));
        assert_eq!(
            default_data_dir(Os::Windows, &set),
            Some(Path::new(roaming).join("airlock"))
        );
        let unset = folders(r"C:\Users\ada", None, None);
        assert_eq!(
            default_data_dir(Os::Windows, &unset),
            Some(
                Path::new(r"C:\Users\ada")
                    .join("AppData")
                    .join("Roaming")
                    .join("airlock")
            )
        );
        // A relative APPDATA is ignored, like a relative XDG_DATA_HOME.
        let relative = folders(r"C:\Users\ada", None, Some(r"AppData\Roaming"));
        assert_eq!(
            default_data_dir(Os::Windows, &relative),
            default_data_dir(Os::Windows, &unset)
        );
    }

    #[test]
    fn no_home_and_no_variable_means_no_default() {
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            assert_eq!(
                default_data_dir(os, &UserFolders::default()),
                None,
                "{os:?}"
            );
            let relative_home = folders("ada", None, None);
            assert_eq!(default_data_dir(os, &relative_home), None, "{os:?}");
        }
    }

    #[test]
    fn the_native_platform_is_the_one_built_for() {
        assert_eq!(Os::NATIVE == Os::Windows, cfg!(windows));
        assert_eq!(Os::NATIVE == Os::MacOs, cfg!(target_os = "macos"));
        assert_eq!(Os::NATIVE.path_style(), PathStyle::NATIVE);
    }
}
