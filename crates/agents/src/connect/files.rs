//! Reading and writing an agent's JSON config: a missing file is empty; a file that does not
//! parse is refused; a change keeps a backup of the file as it was and lands atomically, through
//! fresh files only (a planted link is never written through).

use crate::connect::{ConnectError, Result};
use serde_json::Value;
use std::io::Write;
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
///
/// It follows no link it did not expect: the backup and the new text are each written to a
/// fresh file created exclusively beside its destination, then renamed over it, so a link
/// planted at `PATH.airlock-backup` (or any name) is replaced, never written through. A `path`
/// that is itself a link (settings kept in a dotfiles folder) is written through to the file it
/// names, and stays a link; a link to nothing is refused.
pub fn write_with_backup(path: &Path, text: &str) -> Result<Option<PathBuf>> {
    let write_error = |e: std::io::Error| ConnectError::Write {
        path: path.into(),
        message: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(write_error)?;
    }
    let target = linked_file(path)?;
    let backup = match std::fs::read(&target) {
        Ok(before) => {
            let mut name = path.as_os_str().to_owned();
            name.push(".airlock-backup");
            let backup = PathBuf::from(name);
            replace_with(&backup, &before, None).map_err(write_error)?;
            Some(backup)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(write_error(error)),
    };
    let permissions = std::fs::metadata(&target).ok().map(|m| m.permissions());
    replace_with(&target, text.as_bytes(), permissions).map_err(write_error)?;
    Ok(backup)
}

/// The file whose text `path` holds: `path` itself, or the file it links to.
fn linked_file(path: &Path) -> Result<PathBuf> {
    if !is_link(path) {
        return Ok(path.to_path_buf());
    }
    std::fs::canonicalize(path).map_err(|error| ConnectError::Write {
        path: path.into(),
        message: format!(
            "it is a link to {}, which cannot be followed ({error}); nothing was changed — make the link point at a file, or replace it with one",
            std::fs::read_link(path)
                .map(|to| to.display().to_string())
                .unwrap_or_else(|_| "?".into())
        ),
    })
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// The file a change to `path` lands in, when `path` is a link to one (for the report).
pub fn link_target(path: &Path) -> Option<PathBuf> {
    is_link(path).then(|| linked_file(path).ok()).flatten()
}

/// Puts `bytes` at `destination` in one step: written to a new file of a fresh name in the same
/// folder (created exclusively, so nothing that was there is opened), then renamed over the
/// destination's name (which replaces a link there, never follows it).
fn replace_with(
    destination: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = match destination.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = destination
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut fresh = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".airlock-tmp")
        .tempfile_in(dir)?;
    fresh.write_all(bytes)?;
    fresh.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        fresh.as_file().set_permissions(permissions)?;
    }
    fresh.persist(destination).map_err(|e| e.error)?;
    Ok(())
}

/// Pretty JSON with a final newline, as the agents write their own files.
pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

// Unix only: planting a link needs no privilege there (Windows asks for one).
#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::is_link;
    use crate::connect::{Options, Target};
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};

    fn options() -> Options {
        Options {
            airlock: PathBuf::from("/opt/airlock/airlock"),
            data_dir: None,
            timeout_secs: 30,
            codex: None,
        }
    }

    /// `airlock connect claude-code --project DIR`, as the command runs it.
    fn connect_project(project: &Path) -> crate::connect::Result<airlock_protocol::ConnectReport> {
        crate::connect::connect(
            &Target::parse("claude-code", Some(project.to_path_buf())).unwrap(),
            &options(),
        )
    }

    /// Security finding: a repository with `settings.json.airlock-backup` and
    /// `settings.json.airlock-tmp` committed as links to the person's files had both files
    /// overwritten by `connect --project` (and a planted shell line then ran).
    #[test]
    fn links_planted_at_the_backup_and_temporary_names_are_never_written_through() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("repo");
        let claude = project.join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        let settings = claude.join("settings.json");
        std::fs::write(&settings, "{\"model\": \"opus\"}").unwrap();
        let victims = [
            ("settings.json.airlock-backup", root.path().join("bashrc")),
            ("settings.json.airlock-tmp", root.path().join("profile")),
        ];
        for (name, victim) in &victims {
            std::fs::write(victim, "# the person's own file\n").unwrap();
            symlink(victim, claude.join(name)).unwrap();
        }

        let report = connect_project(&project).unwrap();
        assert!(report.changed, "{report:?}");
        for (name, victim) in &victims {
            assert_eq!(
                std::fs::read_to_string(victim).unwrap(),
                "# the person's own file\n",
                "{name} was written through to {}",
                victim.display()
            );
        }
        let backup = claude.join("settings.json.airlock-backup");
        assert!(!is_link(&backup), "the backup is a file of its own");
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            "{\"model\": \"opus\"}"
        );
        let now = std::fs::read_to_string(&settings).unwrap();
        assert!(
            now.contains("\"opus\"") && now.contains("PreToolUse"),
            "{now}"
        );
        // Nothing of the write is left behind but the file and its backup (and the links).
        let mut names: Vec<String> = std::fs::read_dir(&claude)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "settings.json",
                "settings.json.airlock-backup",
                "settings.json.airlock-tmp"
            ]
        );
    }

    /// Security finding: a settings file kept elsewhere and linked (dotfiles) was replaced by
    /// a plain file, so the person's own copy silently stopped being the one in use.
    #[test]
    fn a_linked_settings_file_is_changed_where_it_lives_and_stays_a_link() {
        let root = tempfile::tempdir().unwrap();
        let dotfiles = root.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let kept = dotfiles.join("claude-settings.json");
        std::fs::write(&kept, "{\"model\": \"opus\"}").unwrap();
        let project = root.path().join("repo");
        let claude = project.join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        let settings = claude.join("settings.json");
        symlink("../../dotfiles/claude-settings.json", &settings).unwrap();

        let report = connect_project(&project).unwrap();
        assert!(report.changed, "{report:?}");
        assert!(is_link(&settings), "the link was replaced by a file");
        let now = std::fs::read_to_string(&kept).unwrap();
        assert!(
            now.contains("\"opus\"") && now.contains("PreToolUse"),
            "{now}"
        );
        assert!(
            report
                .changes
                .iter()
                .any(|line| line.contains(&kept.canonicalize().unwrap().display().to_string())),
            "the report names the file that changed: {report:?}"
        );
        assert_eq!(
            std::fs::read_to_string(claude.join("settings.json.airlock-backup")).unwrap(),
            "{\"model\": \"opus\"}"
        );
        let left: Vec<_> = std::fs::read_dir(&dotfiles).unwrap().collect();
        assert_eq!(left.len(), 1, "a temporary file was left: {left:?}");

        // And back: disconnect changes the same file.
        crate::connect::disconnect(&Target::parse("claude-code", Some(project.clone())).unwrap())
            .unwrap();
        assert!(is_link(&settings));
        let after: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
        assert_eq!(after, serde_json::json!({"model": "opus"}));
    }

    #[test]
    fn a_link_to_nothing_is_refused_and_nothing_is_made_where_it_points() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("repo");
        let claude = project.join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        let nowhere = root.path().join("missing").join("settings.json");
        symlink(&nowhere, claude.join("settings.json")).unwrap();

        let error = connect_project(&project).unwrap_err();
        assert!(
            matches!(&error, crate::connect::ConnectError::Write { message, .. } if message.contains("link")),
            "{error}"
        );
        assert!(is_link(&claude.join("settings.json")));
        assert!(!root.path().join("missing").exists());
    }
}
