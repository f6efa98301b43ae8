//! Settings → Start at login: the login entry (an XDG autostart file, a macOS launch agent, the
//! Windows Run key, written by `auto-launch`, the crate tauri-plugin-autostart wraps) that starts
//! the desktop app hidden in the tray. It lives here, not in the window, because the window is
//! gone most of the time and the resident process answers Settings.

use airlock_api::host::default_data_dir;
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
    /// The entry that starts `app` (the desktop app's launcher by its real path, or the
    /// AppImage that holds it) with [`HIDDEN_ARG`] on `data_dir` (named with `--data-dir` when
    /// it is not the default one), under the product's name.
    pub fn new(app: &Path, data_dir: &Path) -> Self {
        let app = std::env::var_os("APPIMAGE")
            .filter(|_| cfg!(target_os = "linux"))
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| app.to_path_buf());
        let args = login_args(data_dir, default_data_dir().as_deref());
        let built = auto_launch::AutoLaunchBuilder::new()
            .set_app_name("Airlock")
            .set_app_path(&command_line_word(&app.display().to_string()))
            .set_args(&args)
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

/// What the login entry passes: [`HIDDEN_ARG`], and `--data-dir DIR` unless `data_dir` is the
/// default one (at login no `$AIRLOCK_DATA_DIR` is set, so the directory in use must be named).
fn login_args(data_dir: &Path, default: Option<&Path>) -> Vec<String> {
    let mut args = vec![HIDDEN_ARG.to_string()];
    if default != Some(data_dir) {
        args.push("--data-dir".into());
        args.push(command_line_word(&data_dir.display().to_string()));
    }
    args
}

/// `word` as one word of the command line the platform's login entry holds: quoted where it has
/// a space or another character that would split or change it. Linux: the desktop entry's `Exec`
/// rules: in double quotes, `"`, `` ` ``, `$` and `\` escaped with a backslash, every backslash
/// doubled again for the file's string escapes, `%` doubled; Windows: the Run key's command line (paths hold no `"`). macOS
/// keeps each argument apart, as written.
fn command_line_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@".contains(c);
    if word.chars().all(plain) || cfg!(target_os = "macos") {
        return word.to_string();
    }
    if cfg!(windows) {
        return format!("\"{word}\"");
    }
    let mut quoted = String::from("\"");
    for c in word.chars() {
        match c {
            '"' | '`' | '$' => {
                quoted.push_str("\\\\");
                quoted.push(c);
            }
            '\\' => quoted.push_str("\\\\\\\\"),
            '%' => quoted.push_str("%%"),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_directory_is_named_unless_it_is_the_default() {
        let default = Path::new("/home/me/.local/share/airlock");
        assert_eq!(login_args(default, Some(default)), [HIDDEN_ARG]);
        assert_eq!(
            login_args(Path::new("/tmp/a"), Some(default)),
            [HIDDEN_ARG, "--data-dir", "/tmp/a"]
        );
        assert_eq!(
            login_args(Path::new("/tmp/a"), None),
            [HIDDEN_ARG, "--data-dir", "/tmp/a"]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_word_with_spaces_or_reserved_characters_stays_one_word_of_exec() {
        assert_eq!(
            command_line_word("/usr/bin/airlock-desktop"),
            "/usr/bin/airlock-desktop"
        );
        assert_eq!(
            command_line_word("/home/me/My Apps/airlock-desktop"),
            "\"/home/me/My Apps/airlock-desktop\""
        );
        assert_eq!(
            command_line_word(r#"/tmp/100% $HOME "q" a\b"#),
            r#""/tmp/100%% \\$HOME \\"q\\" a\\\\b""#
        );
    }
}
