//! What a pending file write would replace, so the person sees the write as a diff against the
//! file on disk. The file is read as the writer would reach it: beneath the folder it works in
//! (the workspace for `builtin/write_file`, the agent's folder for Claude Code's `Write`),
//! through `cap-std`, which resolves every component — links included — beneath that folder's
//! handle and refuses one that leads out of it: a link planted in the workspace never makes the
//! engine read (and the window show) a file elsewhere. Reads are bounded; what is not text is
//! not shown. Only a view: the decision path reads nothing from here.

use crate::{Engine, EngineError, Result};
use airlock_core::path::stays_inside;
use airlock_core::{ApprovalStatus, BUILTIN_SERVER};
use airlock_protocol::{ApprovalRow, FileOnDisk};
use cap_std::fs::Dir;
use serde_json::Value;
use std::io::Read;
use std::path::{Component, Path};

/// The largest file shown as a diff; a larger one is named, not read.
pub const ON_DISK_MAX_BYTES: u64 = 256 * 1024;

/// Where a pending call writes a whole file: the folder it works in and the path as written.
#[derive(Debug, PartialEq)]
struct WriteTarget<'a> {
    folder: Option<&'a str>,
    path: &'a str,
}

/// The file a pending call writes whole, if it is such a call: the built-in `write_file`
/// (`path`, in the workspace) or a coding agent's `Write` (`file_path`, in the agent's folder).
fn write_target<'a>(row: &'a ApprovalRow, workspace: &'a str) -> Option<WriteTarget<'a>> {
    let field = |name: &str| row.args.get(name).and_then(Value::as_str);
    if row.server == BUILTIN_SERVER && row.tool == "write_file" && row.agent.is_none() {
        return Some(WriteTarget {
            folder: Some(workspace),
            path: field("path")?,
        });
    }
    let agent = row.agent.as_ref()?;
    (row.tool == "Write").then_some(())?;
    Some(WriteTarget {
        folder: agent.cwd.as_deref(),
        path: field("file_path")?,
    })
}

/// `written` (relative to `folder`, or absolute) as a path below `folder`, or why it is not one.
fn below<'a>(folder: &Path, written: &'a str) -> std::result::Result<&'a Path, String> {
    let path = Path::new(written);
    let relative = if path.is_absolute() {
        path.strip_prefix(folder)
            .map_err(|_| format!("{written} is outside {}; it is not read", folder.display()))?
    } else {
        path
    };
    let text = relative.to_string_lossy();
    if relative
        .components()
        .any(|c| matches!(c, Component::ParentDir))
        || !stays_inside(&text)
    {
        return Err(format!(
            "{written} climbs out of {} with `..`; it is not read",
            folder.display()
        ));
    }
    Ok(relative)
}

/// The file at `written` beneath `folder` as it is now, read without following any link out of
/// `folder`, at most [`ON_DISK_MAX_BYTES`].
pub fn read_on_disk(folder: &Path, written: &str) -> FileOnDisk {
    let path = written.to_string();
    let not_shown = |why: String| FileOnDisk::NotShown {
        path: path.clone(),
        why,
    };
    let relative = match below(folder, written) {
        Ok(relative) => relative,
        Err(why) => return not_shown(why),
    };
    if relative.as_os_str().is_empty() {
        return not_shown(format!("{written} is the folder itself"));
    }
    let root = match Dir::open_ambient_dir(folder, cap_std::ambient_authority()) {
        Ok(root) => root,
        Err(e) => return not_shown(format!("{} cannot be opened: {e}", folder.display())),
    };
    let file = match root.open(relative) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileOnDisk::Missing { path },
        // cap-std's refusal of a path that resolves outside the handle.
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                && e.to_string().contains("outside") =>
        {
            return not_shown(format!(
                "{written} goes through a link that leads outside {} (or is absolute); it is not read",
                folder.display()
            ));
        }
        Err(e) => return not_shown(format!("{written} cannot be read: {e}")),
    };
    match file.metadata() {
        Ok(meta) if !meta.is_file() => {
            return not_shown(format!("{written} is not a regular file"));
        }
        Ok(meta) if meta.len() > ON_DISK_MAX_BYTES => {
            return not_shown(format!(
                "{written} is {} KiB, more than the {} KiB shown",
                meta.len().div_ceil(1024),
                ON_DISK_MAX_BYTES / 1024
            ));
        }
        Ok(_) => {}
        Err(e) => return not_shown(format!("{written} cannot be read: {e}")),
    }
    // Bounded again while reading: the file may grow between the check and the read.
    let mut bytes = Vec::new();
    if let Err(e) = file.take(ON_DISK_MAX_BYTES + 1).read_to_end(&mut bytes) {
        return not_shown(format!("{written} cannot be read: {e}"));
    }
    if bytes.len() as u64 > ON_DISK_MAX_BYTES {
        return not_shown(format!(
            "{written} is more than the {} KiB shown",
            ON_DISK_MAX_BYTES / 1024
        ));
    }
    match String::from_utf8(bytes) {
        Ok(content) if !content.contains('\0') => FileOnDisk::Text { path, content },
        _ => not_shown(format!("{written} is not text")),
    }
}

impl Engine {
    /// What is on disk where the pending item `approval_id` would write a whole file.
    pub fn file_on_disk(&self, approval_id: &str) -> Result<FileOnDisk> {
        let row = self.approval(approval_id)?.ok_or_else(|| {
            EngineError::Store(airlock_store::StoreError::UnknownApproval(
                approval_id.to_string(),
            ))
        })?;
        // Only a view of what a waiting write would replace: a decided one reads nothing.
        if row.status != ApprovalStatus::Pending {
            return Err(EngineError::Invalid(format!(
                "{approval_id} is no longer waiting; nothing is read for it"
            )));
        }
        let workspace = self.workspace().to_string_lossy().into_owned();
        let Some(target) = write_target(&row, &workspace) else {
            return Err(EngineError::Invalid(format!(
                "{approval_id} ({}/{}) does not write a whole file",
                row.server, row.tool
            )));
        };
        Ok(
            match target.folder.map(Path::new).filter(|f| f.is_absolute()) {
                Some(folder) => read_on_disk(folder, target.path),
                None => FileOnDisk::NotShown {
                    path: target.path.to_string(),
                    why: "the agent did not say which folder it works in; the file is not read"
                        .into(),
                },
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use airlock_core::ItemKind;
    use airlock_protocol::AgentOrigin;
    use serde_json::json;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        dir
    }

    #[test]
    fn an_existing_file_is_read_and_a_new_one_is_missing() {
        let dir = folder();
        let work = dir.path().join("work");
        std::fs::create_dir(work.join("src")).unwrap();
        std::fs::write(work.join("src/a.rs"), "fn main() {}\n").unwrap();
        assert_eq!(
            read_on_disk(&work, "src/a.rs"),
            FileOnDisk::Text {
                path: "src/a.rs".into(),
                content: "fn main() {}\n".into()
            }
        );
        // An agent's absolute path below its folder is the same file.
        let absolute = work.join("src/a.rs").to_string_lossy().into_owned();
        assert!(matches!(
            read_on_disk(&work, &absolute),
            FileOnDisk::Text { .. }
        ));
        assert_eq!(
            read_on_disk(&work, "src/new.rs"),
            FileOnDisk::Missing {
                path: "src/new.rs".into()
            }
        );
    }

    #[test]
    fn nothing_outside_the_folder_is_read_by_path_or_through_a_planted_link() {
        let dir = folder();
        let work = dir.path().join("work");
        std::fs::write(dir.path().join("secret.txt"), "the secret").unwrap();
        let secret = dir.path().join("secret.txt").to_string_lossy().into_owned();
        for written in ["../secret.txt", "a/../../secret.txt", secret.as_str()] {
            let seen = read_on_disk(&work, written);
            assert!(
                matches!(&seen, FileOnDisk::NotShown { why, .. } if why.contains("not read")),
                "{written}: {seen:?}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), work.join("notes.txt"))
                .unwrap();
            std::os::unix::fs::symlink(dir.path(), work.join("up")).unwrap();
            for written in ["notes.txt", "up/secret.txt"] {
                let seen = read_on_disk(&work, written);
                assert!(
                    matches!(&seen, FileOnDisk::NotShown { why, .. } if why.contains("through a link")),
                    "{written}: {seen:?}"
                );
            }
            // A relative link that stays inside is followed (cap-std, like the built-in tools,
            // takes an absolute link as leading out).
            std::fs::write(work.join("real.txt"), "inside").unwrap();
            std::os::unix::fs::symlink("real.txt", work.join("alias.txt")).unwrap();
            assert!(matches!(
                read_on_disk(&work, "alias.txt"),
                FileOnDisk::Text { content, .. } if content == "inside"
            ));
        }
    }

    #[test]
    fn large_files_binary_files_and_folders_are_named_not_shown() {
        let dir = folder();
        let work = dir.path().join("work");
        std::fs::write(
            work.join("big.log"),
            "x".repeat(ON_DISK_MAX_BYTES as usize + 1),
        )
        .unwrap();
        std::fs::write(work.join("blob.bin"), [0u8, 159, 146, 150]).unwrap();
        std::fs::create_dir(work.join("dir")).unwrap();
        for (written, expected) in [
            ("big.log", "KiB"),
            ("blob.bin", "not text"),
            ("dir", "not a regular file"),
        ] {
            let seen = read_on_disk(&work, written);
            assert!(
                matches!(&seen, FileOnDisk::NotShown { why, .. } if why.contains(expected)),
                "{written}: {seen:?}"
            );
        }
    }

    fn row(server: &str, tool: &str, args: Value, cwd: Option<&str>) -> ApprovalRow {
        ApprovalRow {
            approval_id: "apr_1".into(),
            tool_call_id: None,
            session_id: "ses".into(),
            session: "s".into(),
            kind: ItemKind::ToolCall,
            server: server.into(),
            tool: tool.into(),
            args,
            args_hash: String::new(),
            why: String::new(),
            status: ApprovalStatus::Pending,
            created_at: String::new(),
            expires_at: None,
            agent: cwd.map(|cwd| AgentOrigin {
                agent: "claude-code".into(),
                client: None,
                agent_session: "a".into(),
                cwd: Some(cwd.into()),
                editable: true,
                deferred: false,
            }),
        }
    }

    #[test]
    fn writes_are_the_builtin_write_file_in_the_workspace_and_an_agents_write_in_its_folder() {
        let builtin = row(
            "builtin",
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
            None,
        );
        assert_eq!(
            write_target(&builtin, "/ws"),
            Some(WriteTarget {
                folder: Some("/ws"),
                path: "a.txt"
            })
        );
        let claude = row(
            "claude-code",
            "Write",
            json!({"file_path": "/repo/a.txt", "content": "x"}),
            Some("/repo"),
        );
        assert_eq!(
            write_target(&claude, "/ws"),
            Some(WriteTarget {
                folder: Some("/repo"),
                path: "/repo/a.txt"
            })
        );
        for other in [
            row("builtin", "run_command", json!({"command": "ls"}), None),
            row("fs", "write_file", json!({"path": "a.txt"}), None),
            row(
                "claude-code",
                "Edit",
                json!({"file_path": "/repo/a.txt"}),
                Some("/repo"),
            ),
        ] {
            assert_eq!(write_target(&other, "/ws"), None, "{other:?}");
        }
    }
}
