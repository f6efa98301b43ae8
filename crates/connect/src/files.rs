//! Reading and writing an agent's JSON config: a missing file is empty; a file that does not
//! parse is refused; a change keeps a backup of the file as it was and lands atomically.

use crate::{ConnectError, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file's JSON object (`{}` when there is no file).
pub fn read_object(path: &Path) -> Result<Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Value::Object(Default::default()));
        }
        Err(error) => {
            return Err(ConnectError::Read {
                path: path.into(),
                message: error.to_string(),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| ConnectError::Unparsable {
        path: path.into(),
        message: e.to_string(),
    })?;
    if !value.is_object() {
        return Err(ConnectError::Unparsable {
            path: path.into(),
            message: "it is not a JSON object".into(),
        });
    }
    Ok(value)
}

/// Writes `text` to `path`, keeping the file as it was in `PATH.airlock-backup` (when there was
/// one). Returns the backup's path.
pub fn write_with_backup(path: &Path, text: &str) -> Result<Option<PathBuf>> {
    let write_error = |e: std::io::Error| ConnectError::Write {
        path: path.into(),
        message: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_error)?;
    }
    let backup = if path.exists() {
        let mut name = path.as_os_str().to_owned();
        name.push(".airlock-backup");
        let backup = PathBuf::from(name);
        std::fs::copy(path, &backup).map_err(write_error)?;
        Some(backup)
    } else {
        None
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".airlock-tmp");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text).map_err(write_error)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temporary, meta.permissions());
    }
    std::fs::rename(&temporary, path).map_err(write_error)?;
    Ok(backup)
}

/// Pretty JSON with a final newline, as the agents write their own files.
pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}
