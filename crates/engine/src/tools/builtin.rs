//! The built-in server `builtin`: file and command tools confined to the workspace folder.
//!
//! Paths are relative to the workspace. A path that climbs out lexically (`..`, absolute) is
//! refused with a clear message before anything is opened. Every file operation then goes
//! through `cap-std`, which resolves each component (symbolic links included — dangling,
//! chained, or swapped between a check and the use) beneath the workspace's directory handle
//! with `openat`-style calls: no path a built-in tool touches can end outside the workspace.
//! Hand-written checks of `exists()`/`canonicalize()` cannot give that (a dangling link is
//! "not existing" and is then followed by the write).

use super::{ToolError, ToolSource};
use crate::shell::{folder_for_shell, kept_from_commands, shell_for};
use airlock_core::path::stays_inside;
use airlock_core::platform::Os;
use airlock_core::policy::NeedsApproval;
use airlock_core::{BUILTIN_SERVER, ToolDef, ToolSetting};
use cap_std::fs::Dir;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The most a tool returns to the model; more is cut with a note.
const MAX_OUTPUT: usize = 64 * 1024;
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone)]
pub struct BuiltinTools {
    workspace: PathBuf,
    /// Environment variables `run_command` never passes on: Airlock's own secrets (the model
    /// providers' API key variables). `AIRLOCK_*` variables are always removed.
    hidden_env: Arc<RwLock<BTreeSet<String>>>,
}

impl BuiltinTools {
    pub fn new(workspace: PathBuf) -> Self {
        Self {
            workspace,
            hidden_env: Arc::default(),
        }
    }

    /// The variables of this process that commands must not see.
    fn secret_env_names(&self) -> Vec<std::ffi::OsString> {
        let hidden = self.hidden_env.read().unwrap_or_else(|p| p.into_inner());
        std::env::vars_os()
            .map(|(name, _)| name)
            .filter(|name| kept_from_commands(Os::NATIVE, &name.to_string_lossy(), &hidden))
            .collect()
    }

    /// Keeps the variable `name` out of every command's environment from now on.
    pub fn hide_env(&self, name: &str) {
        self.hidden_env
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string());
    }

    /// The default approval setting of each built-in tool.
    pub fn default_settings() -> [(&'static str, ToolSetting); 4] {
        [
            ("read_file", ToolSetting::NotRequired),
            ("list_dir", ToolSetting::NotRequired),
            ("write_file", ToolSetting::Required),
            ("run_command", ToolSetting::Required),
        ]
    }

    /// The workspace as a directory handle every file operation is resolved beneath.
    fn root(&self) -> Result<Dir, ToolError> {
        Dir::open_ambient_dir(&self.workspace, cap_std::ambient_authority()).map_err(|e| {
            ToolError::new(format!(
                "the workspace {} is not available: {e}",
                self.workspace.display()
            ))
        })
    }

    /// A workspace-relative path, refused with a clear message when it climbs out lexically.
    fn relative(relative: &str) -> Result<&Path, ToolError> {
        if !stays_inside(relative) {
            return Err(ToolError::new(format!(
                "'{relative}' is outside the workspace; use a path relative to it"
            )));
        }
        Ok(Path::new(relative))
    }

    /// The folder a command runs in: an existing folder of the workspace, every link resolved
    /// (the command gets this path; a command may still `cd` anywhere, which its approval
    /// covers).
    fn command_folder(&self, relative: &str) -> Result<PathBuf, ToolError> {
        let path = Self::relative(relative)?;
        let root = self.workspace.canonicalize().map_err(|e| {
            ToolError::new(format!(
                "the workspace {} is not available: {e}",
                self.workspace.display()
            ))
        })?;
        let real = root
            .join(path)
            .canonicalize()
            .map_err(|e| fs_error("open the folder", relative, &e))?;
        if !real.starts_with(&root) {
            return Err(ToolError::new(format!(
                "'{relative}' leads outside the workspace through a link"
            )));
        }
        if !real.is_dir() {
            return Err(ToolError::new(format!("'{relative}' is not a folder")));
        }
        folder_for_shell(Os::NATIVE, &real).ok_or_else(|| {
            ToolError::new(format!(
                "'{relative}' ({}) cannot be a command's folder on this system",
                real.display()
            ))
        })
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
            .map_err(|e| ToolError::new(format!("the file operation did not complete: {e}")))?
    }

    async fn read_file(&self, args: &Value) -> Result<Value, ToolError> {
        let relative = str_arg(args, "path")?.to_string();
        self.on_files(move |this| {
            let path = Self::relative(&relative)?;
            let bytes = this
                .root()?
                .read(path)
                .map_err(|e| fs_error("read", &relative, &e))?;
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
            let path = Self::relative(&relative)?;
            let list = |e| fs_error("list", &relative, &e);
            let mut names = Vec::new();
            for entry in this.root()?.read_dir(path).map_err(list)? {
                let entry = entry.map_err(list)?;
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
            let path = Self::relative(&relative)?;
            let root = this.root()?;
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                match root.open_dir(parent) {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => root
                        .create_dir_all(parent)
                        .map_err(|e| fs_error("create the folder of", &relative, &e))?,
                    Err(e) => return Err(fs_error("open the folder of", &relative, &e)),
                }
            }
            root.write(path, &content)
                .map_err(|e| fs_error("write", &relative, &e))?;
            Ok(Value::String(format!(
                "wrote {} bytes to {relative}",
                content.len()
            )))
        })
        .await
    }

    async fn run_command(&self, args: &Value) -> Result<Value, ToolError> {
        let command = str_arg(args, "command")?;
        let cwd = self.command_folder(args.get("cwd").and_then(Value::as_str).unwrap_or("."))?;
        let mut child = shell_for(Os::NATIVE, command).to_command();
        child.current_dir(&cwd);
        // Airlock's own secrets stay out of what an approved command can read.
        for name in self.secret_env_names() {
            child.env_remove(name);
        }
        let child = child
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(COMMAND_TIMEOUT, child)
            .await
            .map_err(|_| {
                ToolError::new(format!(
                    "the command did not finish within {} s",
                    COMMAND_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| ToolError::new(format!("cannot start the command: {e}")))?;
        let result = json!({
            "exit_code": output.status.code(),
            "stdout": truncate(String::from_utf8_lossy(&output.stdout).into_owned()),
            "stderr": truncate(String::from_utf8_lossy(&output.stderr).into_owned()),
        });
        // A command that exits non-zero (or is ended by a signal) failed: the call is failed
        // everywhere it is shown, with its exit code and output.
        match output.status.code() {
            Some(0) => Ok(result),
            Some(code) => Err(ToolError::failed_with(
                format!("the command exited with code {code}"),
                result,
            )),
            None => Err(ToolError::failed_with(
                "the command was ended by a signal",
                result,
            )),
        }
    }
}

fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("missing string argument '{name}'")))
}

fn fs_error(what: &str, relative: &str, error: &std::io::Error) -> ToolError {
    // cap-std's refusal of a path that resolves outside the handle.
    if error.kind() == std::io::ErrorKind::PermissionDenied && error.to_string().contains("outside")
    {
        return ToolError::new(format!(
            "cannot {what} '{relative}': it leads outside the workspace through a link"
        ));
    }
    ToolError::new(format!("cannot {what} '{relative}': {error}"))
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
                other => Err(ToolError::new(format!(
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
            assert!(
                err.message.contains("outside the workspace"),
                "{path}: {err}"
            );
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
            assert!(err.message.contains("link"), "{err}");
            let err = tools
                .call(
                    "write_file",
                    &json!({"path": "escape/new.txt", "content": "x"}),
                )
                .await
                .unwrap_err();
            assert!(err.message.contains("link"), "{err}");
            assert!(!dir.path().join("new.txt").exists());
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn runs_commands_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let tools = BuiltinTools::new(dir.path().to_path_buf());
        let out = tools
            .call("run_command", &json!({"command": "echo hi; pwd"}))
            .await
            .unwrap();
        assert_eq!(out["exit_code"], json!(0));
        let stdout = out["stdout"].as_str().unwrap();
        assert!(stdout.starts_with("hi\n"), "{stdout}");
    }

    /// A command that exits non-zero is a failed call, with its exit code and its output.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_command_that_exits_non_zero_fails_with_its_exit_code_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let tools = BuiltinTools::new(dir.path().to_path_buf());
        let err = tools
            .call(
                "run_command",
                &json!({"command": "echo hi; echo oops >&2; exit 3"}),
            )
            .await
            .unwrap_err();
        assert_eq!(err.message, "the command exited with code 3");
        let result = err.into_result();
        assert_eq!(result["type"], "error");
        assert_eq!(result["exit_code"], json!(3));
        assert_eq!(result["stdout"], "hi\n");
        assert_eq!(result["stderr"], "oops\n");
    }

    /// Security finding: `ln -s /tmp/outside WORKSPACE/evil` then an approved
    /// `write_file {"path": "evil"}` created /tmp/outside (a dangling link "does not exist", so
    /// the check looked at its folder and the write followed the link).
    #[cfg(unix)]
    #[tokio::test]
    async fn no_link_leads_a_file_tool_outside_the_workspace() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(workspace.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        // dangling, to a file and to a folder outside; chained through a link that stays inside
        symlink(dir.path().join("created-outside"), workspace.join("evil")).unwrap();
        symlink(outside.join("new-dir/x"), workspace.join("evil-deep")).unwrap();
        symlink(outside.join("secret.txt"), workspace.join("secret")).unwrap();
        symlink(&outside, workspace.join("out")).unwrap();
        symlink("../evil", workspace.join("sub/chain")).unwrap();
        symlink("../sub/chain", workspace.join("sub/chain2")).unwrap();
        let tools = BuiltinTools::new(workspace.clone());
        for path in [
            "evil",
            "evil-deep",
            "sub/chain",
            "sub/chain2",
            "out/new.txt",
            "secret",
        ] {
            let err = tools
                .call("write_file", &json!({"path": path, "content": "pwned"}))
                .await
                .unwrap_err();
            assert!(
                err.message.contains("outside the workspace"),
                "{path}: {err}"
            );
        }
        for path in ["secret", "out/secret.txt"] {
            let err = tools
                .call("read_file", &json!({"path": path}))
                .await
                .unwrap_err();
            assert!(
                err.message.contains("outside the workspace"),
                "{path}: {err}"
            );
        }
        assert!(
            tools
                .call("list_dir", &json!({"path": "out"}))
                .await
                .is_err()
        );
        assert!(
            tools
                .call("run_command", &json!({"command": "pwd", "cwd": "out"}))
                .await
                .is_err()
        );
        assert!(!dir.path().join("created-outside").exists());
        assert!(!outside.join("new-dir").exists());
        assert!(!outside.join("new.txt").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "s"
        );
        // A link that stays inside still works.
        symlink("sub", workspace.join("inside")).unwrap();
        tools
            .call(
                "write_file",
                &json!({"path": "inside/ok.txt", "content": "ok"}),
            )
            .await
            .unwrap();
        assert!(workspace.join("sub/ok.txt").exists());
    }

    /// Security finding: approved commands could read Airlock's own secrets from their
    /// environment (the providers' API keys).
    #[cfg(unix)]
    #[tokio::test]
    async fn commands_run_in_their_folder_without_airlocks_secrets() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let tools = BuiltinTools::new(dir.path().to_path_buf());
        // A variable this process surely has stands in for a provider's key variable.
        tools.hide_env("HOME");
        let out = tools
            .call(
                "run_command",
                &json!({"command": "pwd; echo \"home=${HOME:-hidden}\"", "cwd": "sub"}),
            )
            .await
            .unwrap();
        let stdout = out["stdout"].as_str().unwrap();
        let real = dir.path().join("sub").canonicalize().unwrap();
        assert_eq!(stdout, format!("{}\nhome=hidden\n", real.display()));
    }

    /// Windows: cmd.exe gets the command line as typed (a quote stays a quote; the standard
    /// library's quoting would have written `\"`), runs in the workspace's folder (given
    /// without the `\\?\` that cmd.exe would take for a share), without Airlock's secrets,
    /// and its exit code comes back.
    #[cfg(windows)]
    #[tokio::test]
    async fn commands_run_through_cmd_in_their_folder_without_airlocks_secrets() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let tools = BuiltinTools::new(dir.path().to_path_buf());
        // A variable every Windows process has stands in for a provider's key variable.
        tools.hide_env("USERPROFILE");
        let out = tools
            .call(
                "run_command",
                &json!({"command": r#"echo "a b"& cd& echo home=%USERPROFILE%& exit 3"#, "cwd": "sub"}),
            )
            .await
            .unwrap_err()
            .into_result();
        assert_eq!(out["exit_code"], json!(3), "{out}");
        let stdout = out["stdout"].as_str().unwrap();
        let real = dir.path().join("sub").canonicalize().unwrap();
        let shown = folder_for_shell(Os::Windows, &real).unwrap();
        assert_eq!(
            stdout.lines().collect::<Vec<_>>(),
            [
                r#""a b""#.to_string(),
                shown.display().to_string(),
                "home=%USERPROFILE%".to_string()
            ],
            "{out}"
        );
    }
}
