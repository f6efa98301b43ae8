//! The built-in server `builtin`: file and command tools confined to the workspace folder.
//!
//! Paths are relative to the workspace. A path is refused when it climbs out lexically (`..`,
//! absolute) or through a symbolic link (the deepest existing ancestor is canonicalised and must
//! stay below the canonical workspace).

use super::{ToolError, ToolSource};
use airlock_core::path::stays_inside;
use airlock_core::policy::NeedsApproval;
use airlock_core::{BUILTIN_SERVER, ToolDef, ToolSetting};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most a tool returns to the model; more is cut with a note.
const MAX_OUTPUT: usize = 64 * 1024;
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone)]
pub struct BuiltinTools {
    workspace: PathBuf,
}

impl BuiltinTools {
    pub fn new(workspace: PathBuf) -> Self {
        Self { workspace }
    }

    /// The default approval setting of each built-in tool (PRODUCT.md §6).
    pub fn default_settings() -> [(&'static str, ToolSetting); 4] {
        [
            ("read_file", ToolSetting::NotRequired),
            ("list_dir", ToolSetting::NotRequired),
            ("write_file", ToolSetting::Required),
            ("run_command", ToolSetting::Required),
        ]
    }

    /// The absolute path for a workspace-relative one, or why it is refused.
    fn resolve(&self, relative: &str) -> Result<PathBuf, ToolError> {
        if !stays_inside(relative) {
            return Err(ToolError(format!(
                "'{relative}' is outside the workspace; use a path relative to it"
            )));
        }
        let root = self.workspace.canonicalize().map_err(|e| {
            ToolError(format!(
                "the workspace {} is not available: {e}",
                self.workspace.display()
            ))
        })?;
        let joined = root.join(relative);
        let mut existing = joined.as_path();
        while !existing.exists() {
            existing = match existing.parent() {
                Some(parent) => parent,
                None => break,
            };
        }
        let real = existing
            .canonicalize()
            .map_err(|e| ToolError(format!("cannot resolve '{relative}': {e}")))?;
        if !real.starts_with(&root) {
            return Err(ToolError(format!(
                "'{relative}' leads outside the workspace through a link"
            )));
        }
        Ok(joined)
    }

    /// File work runs on the blocking pool in one hop: resolving, creating and writing are all
    /// blocking system calls, and one hand-off costs less than one per call.
    async fn on_files<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || work(&this))
            .await
            .map_err(|e| ToolError(format!("the file operation did not complete: {e}")))?
    }

    async fn read_file(&self, args: &Value) -> Result<Value, ToolError> {
        let relative = str_arg(args, "path")?.to_string();
        self.on_files(move |this| {
            let path = this.resolve(&relative)?;
            let bytes = std::fs::read(&path).map_err(|e| io_error("read", &path, &e))?;
            Ok(Value::String(truncate(
                String::from_utf8_lossy(&bytes).into_owned(),
            )))
        })
        .await
    }

    async fn list_dir(&self, args: &Value) -> Result<Value, ToolError> {
        let relative = args
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or(".")
            .to_string();
        self.on_files(move |this| {
            let path = this.resolve(&relative)?;
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&path).map_err(|e| io_error("list", &path, &e))? {
                let entry = entry.map_err(|e| io_error("list", &path, &e))?;
                let mut name = entry.file_name().to_string_lossy().into_owned();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    name.push('/');
                }
                names.push(name);
            }
            names.sort();
            Ok(Value::String(names.join("\n")))
        })
        .await
    }

    async fn write_file(&self, args: &Value) -> Result<Value, ToolError> {
        let relative = str_arg(args, "path")?.to_string();
        let content = str_arg(args, "content")?.to_string();
        self.on_files(move |this| {
            let path = this.resolve(&relative)?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_error("create", parent, &e))?;
            }
            // Check again now that the parents exist: a link created meanwhile must not be followed.
            let path = this.resolve(&relative)?;
            std::fs::write(&path, &content).map_err(|e| io_error("write", &path, &e))?;
            Ok(Value::String(format!(
                "wrote {} bytes to {relative}",
                content.len()
            )))
        })
        .await
    }

    async fn run_command(&self, args: &Value) -> Result<Value, ToolError> {
        let command = str_arg(args, "command")?;
        let cwd = match args.get("cwd").and_then(Value::as_str) {
            Some(relative) => self.resolve(relative)?,
            None => self.resolve(".")?,
        };
        let child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(COMMAND_TIMEOUT, child)
            .await
            .map_err(|_| {
                ToolError(format!(
                    "the command did not finish within {} s",
                    COMMAND_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| ToolError(format!("cannot start the command: {e}")))?;
        Ok(json!({
            "exit_code": output.status.code(),
            "stdout": truncate(String::from_utf8_lossy(&output.stdout).into_owned()),
            "stderr": truncate(String::from_utf8_lossy(&output.stderr).into_owned()),
        }))
    }
}

fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError(format!("missing string argument '{name}'")))
}

fn io_error(what: &str, path: &Path, error: &std::io::Error) -> ToolError {
    ToolError(format!("cannot {what} {}: {error}", path.display()))
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[output truncated]");
    }
    text
}

fn path_schema(extra: Value) -> Value {
    let mut properties =
        json!({ "path": { "type": "string", "description": "Path relative to the workspace" } });
    if let (Some(map), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
        map.extend(extra.clone());
    }
    properties
}

impl ToolSource for BuiltinTools {
    fn tools(&self) -> Vec<ToolDef> {
        let def = |name: &str, description: &str, schema: Value, read_only: bool| ToolDef {
            server: BUILTIN_SERVER.to_string(),
            name: name.to_string(),
            description: description.to_string(),
            input_schema: schema,
            read_only_hint: read_only,
            annotations: None,
        };
        vec![
            def(
                "read_file",
                "Read a text file in the workspace.",
                json!({"type": "object", "properties": path_schema(json!({})), "required": ["path"], "additionalProperties": false}),
                true,
            ),
            def(
                "list_dir",
                "List a folder of the workspace (folders end with '/').",
                json!({"type": "object", "properties": path_schema(json!({})), "additionalProperties": false}),
                true,
            ),
            def(
                "write_file",
                "Create or overwrite a file in the workspace.",
                json!({"type": "object", "properties": path_schema(json!({"content": {"type": "string"}})), "required": ["path", "content"], "additionalProperties": false}),
                false,
            ),
            def(
                "run_command",
                "Run a shell command in the workspace; returns exit code, stdout and stderr.",
                json!({"type": "object", "properties": {
                    "command": {"type": "string"},
                    "cwd": {"type": "string", "description": "Folder relative to the workspace"}
                }, "required": ["command"], "additionalProperties": false}),
                false,
            ),
        ]
    }

    /// A path that leaves the workspace is denied without asking: it would be refused anyway.
    fn needs_approval(&self, tool: &str, args: &Value) -> Option<NeedsApproval> {
        let key = if tool == "run_command" { "cwd" } else { "path" };
        let path = args.get(key).and_then(Value::as_str)?;
        if stays_inside(path) {
            None
        } else {
            Some(NeedsApproval::Deny(format!(
                "'{path}' is outside the workspace"
            )))
        }
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            match tool {
                "read_file" => self.read_file(args).await,
                "list_dir" => self.list_dir(args).await,
                "write_file" => self.write_file(args).await,
                "run_command" => self.run_command(args).await,
                other => Err(ToolError(format!(
                    "the built-in server has no tool '{other}'"
                ))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn confined_to_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        let tools = BuiltinTools::new(workspace.clone());

        tools
            .call("write_file", &json!({"path": "sub/a.txt", "content": "hi"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(workspace.join("sub/a.txt")).unwrap(),
            "hi"
        );
        assert_eq!(
            tools
                .call("read_file", &json!({"path": "sub/a.txt"}))
                .await
                .unwrap(),
            json!("hi")
        );
        assert_eq!(
            tools.call("list_dir", &json!({"path": "."})).await.unwrap(),
            json!("sub/")
        );

        for path in ["../secret.txt", "/etc/passwd", "sub/../../secret.txt"] {
            let err = tools
                .call("read_file", &json!({"path": path}))
                .await
                .unwrap_err();
            assert!(err.0.contains("outside the workspace"), "{path}: {err}");
            assert!(matches!(
                tools.needs_approval("read_file", &json!({"path": path})),
                Some(NeedsApproval::Deny(_))
            ));
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path(), workspace.join("escape")).unwrap();
            let err = tools
                .call("read_file", &json!({"path": "escape/secret.txt"}))
                .await
                .unwrap_err();
            assert!(err.0.contains("link"), "{err}");
            let err = tools
                .call(
                    "write_file",
                    &json!({"path": "escape/new.txt", "content": "x"}),
                )
                .await
                .unwrap_err();
            assert!(err.0.contains("link"), "{err}");
            assert!(!dir.path().join("new.txt").exists());
        }
    }

    #[tokio::test]
    async fn runs_commands_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let tools = BuiltinTools::new(dir.path().to_path_buf());
        let out = tools
            .call("run_command", &json!({"command": "echo hi; pwd; exit 3"}))
            .await
            .unwrap();
        assert_eq!(out["exit_code"], json!(3));
        let stdout = out["stdout"].as_str().unwrap();
        assert!(stdout.starts_with("hi\n"), "{stdout}");
    }
}
