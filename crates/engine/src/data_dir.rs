//! The data directory holds transcripts, MCP servers' environment (secrets included), answers
//! to servers' questions and the local API's token: only its owner may read it. The folder is
//! made 0700 and every file in it 0600 each time the engine opens it (SQLite creates its
//! `-wal` and `-shm` files with the database file's mode). A workspace inside it (an explicit
//! `--workspace` there) holds the person's own files and is left as it is.

use crate::Result;
use std::path::{Path, PathBuf};

/// The default workspace: `Airlock` in the person's documents folder (else their home folder).
/// Not inside the data directory: an approved `run_command` there was one `..` away from the
/// API token and the database.
pub(crate) fn default_workspace(data_dir: &Path) -> PathBuf {
    dirs::document_dir()
        .or_else(dirs::home_dir)
        .map(|folder| folder.join("Airlock"))
        .unwrap_or_else(|| {
            let name = data_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "airlock".into());
            data_dir.with_file_name(format!("{name}-workspace"))
        })
}

/// Approvals whose commit the disk refused (see `Store::unconfirm_decision`), one id a line.
const UNCONFIRMED: &str = "unconfirmed-decisions";

/// Notes approvals whose commit failed, best effort (the disk is failing): written and synced
/// beside the database, read at the next start.
pub(crate) fn note_unconfirmed(data_dir: &Path, approval_ids: &[&str]) {
    use std::io::Write;
    if approval_ids.is_empty() {
        return;
    }
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(data_dir.join(UNCONFIRMED))
        .and_then(|mut file| {
            for id in approval_ids {
                writeln!(file, "{id}")?;
            }
            file.sync_all()
        });
    if let Err(error) = written {
        tracing::error!(%error, "cannot note the approvals the disk refused");
    }
}

/// The approvals noted by [`note_unconfirmed`], and forgets them.
pub(crate) fn take_unconfirmed(data_dir: &Path) -> Vec<String> {
    let path = data_dir.join(UNCONFIRMED);
    let ids = std::fs::read_to_string(&path)
        .map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    ids
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| fail(path, e))
}

#[cfg(unix)]
fn fail(path: &Path, error: std::io::Error) -> crate::EngineError {
    crate::EngineError::DataDir {
        path: path.to_path_buf(),
        message: format!("cannot make it private to its owner: {error}"),
    }
}

/// The folder itself 0700, before anything is created in it: what the store creates next is
/// out of other users' reach from the start.
#[cfg(unix)]
pub(crate) fn close(data_dir: &Path) -> Result<()> {
    set_mode(data_dir, 0o700)
}

/// Everything already in the folder 0700 (folders) or 0600 (files), once the store has
/// created its own: one pass at every open.
#[cfg(unix)]
pub(crate) fn make_private(data_dir: &Path, workspace: &Path) -> Result<()> {
    // Compared canonically: `--workspace` may name the same folder another way.
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut folders = vec![data_dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|e| fail(&folder, e))? {
            let entry = entry.map_err(|e| fail(&folder, e))?;
            let path = entry.path();
            // Never follow a link out of the folder, and leave the person's workspace alone.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue;
            }
            if kind.is_dir() && path.canonicalize().is_ok_and(|real| real == workspace) {
                continue;
            }
            if kind.is_dir() {
                set_mode(&path, 0o700)?;
                folders.push(path);
            } else if kind.is_file() {
                set_mode(&path, 0o600)?;
            }
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn close(_data_dir: &Path) -> Result<()> {
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn make_private(_data_dir: &Path, _workspace: &Path) -> Result<()> {
    // The per-user data folder of Windows is private to its user already.
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// Security finding: the data directory was 0755 and airlock.db 0644, so other local
    /// users could read transcripts, servers' secrets and elicitation answers.
    #[tokio::test]
    async fn the_data_directory_is_private_to_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let workspace = dir.path().join("work");
        std::fs::create_dir_all(data.join("logs")).unwrap();
        std::fs::write(data.join("logs/server.log"), "x").unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        let engine = crate::Engine::open(crate::EngineConfig {
            data_dir: data.clone(),
            workspace: Some(workspace.clone()),
        })
        .unwrap();
        engine
            .set_setting(airlock_core::Setting::StepLimit, &serde_json::json!(5))
            .unwrap();
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("logs")), 0o700);
        for file in [
            "airlock.db",
            "airlock.db-wal",
            "airlock.db-shm",
            "logs/server.log",
        ] {
            assert_eq!(mode(&data.join(file)), 0o600, "{file}");
        }
        assert!(!workspace.starts_with(&data));
    }

    /// A workspace inside the data directory holds the person's own files: left as they are,
    /// however `--workspace` names it.
    #[tokio::test]
    async fn a_workspace_inside_the_data_directory_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("work")).unwrap();
        std::fs::write(data.join("work/notes.txt"), "mine").unwrap();
        std::fs::set_permissions(
            data.join("work/notes.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let roundabout = data.join("logs/../work");
        std::fs::create_dir_all(data.join("logs")).unwrap();
        crate::Engine::open(crate::EngineConfig {
            data_dir: data.clone(),
            workspace: Some(roundabout),
        })
        .unwrap();
        assert_eq!(mode(&data.join("work/notes.txt")), 0o644);
        assert_eq!(mode(&data.join("airlock.db")), 0o600);
    }
}
