//! The agents `airlock agents add NAME` knows by name: where their command is and the flags that
//! put them in a mode that asks before it runs a tool (AGENT-ACP.md: without them qwen asks an
//! LLM classifier instead, and the others run some tools unasked).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// One preset: `program` found on PATH, run with `args`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub program: &'static str,
    pub args: &'static [&'static str],
    /// How to install it.
    pub install: &'static str,
    /// What else the person must set for it to ask (printed by `agents add`).
    pub note: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "qwen",
        program: "qwen",
        args: &["--acp", "--approval-mode", "default"],
        install: "npm install -g @qwen-code/qwen-code",
        note: "",
    },
    Preset {
        name: "opencode",
        program: "opencode",
        args: &["acp", "--pure"],
        install: "npm install -g opencode-ai",
        note: "opencode runs shell commands and edits unasked unless its opencode.json says \"permission\": {\"bash\": \"ask\", \"edit\": \"ask\"}.",
    },
    Preset {
        name: "gemini",
        program: "gemini",
        args: &["--acp"],
        install: "npm install -g @google/gemini-cli",
        note: "",
    },
    Preset {
        name: "claude-code-acp",
        program: "claude-code-acp",
        args: &[],
        install: "npm install -g @zed-industries/claude-code-acp",
        note: "",
    },
    Preset {
        name: "codex-acp",
        program: "codex-acp",
        args: &[],
        install: "npm install -g @zed-industries/codex-acp",
        note: "codex-acp asks only for what its sandbox blocks: set approval_policy = \"untrusted\" and sandbox_mode = \"read-only\" in $CODEX_HOME/config.toml. (Its npm wrapper leaves its native process behind when killed alone; Airlock ends the agent's whole process group, so nothing is left.)",
    },
    Preset {
        name: "copilot",
        program: "copilot",
        args: &["--acp", "--stdio"],
        install: "npm install -g @github/copilot",
        note: "",
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

impl Preset {
    /// Its command with the program's absolute path, when the program is on `path` (a PATH value).
    pub fn command_on(&self, path: &OsStr) -> Option<Vec<String>> {
        let program = find_program(self.program, path)?;
        Some(
            std::iter::once(program.to_string_lossy().into_owned())
                .chain(self.args.iter().map(|a| a.to_string()))
                .collect(),
        )
    }
}

fn find_program(program: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_program(candidate))
}

fn is_program(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_preset_is_found_on_path_with_the_flags_that_make_it_ask() {
        let dir = tempfile::tempdir().unwrap();
        let qwen = dir.path().join("qwen");
        std::fs::write(&qwen, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&qwen, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([dir.path()]).unwrap();
        let command = preset("qwen").unwrap().command_on(&path).unwrap();
        assert_eq!(
            command,
            [
                qwen.to_string_lossy().as_ref(),
                "--acp",
                "--approval-mode",
                "default"
            ]
        );
        assert_eq!(preset("gemini").unwrap().command_on(&path), None);
        assert!(preset("claude-code").is_none(), "a hook agent's name");
    }

    /// A preset may take the name of an agent whose hook Airlock answers only when the registry
    /// says that agent's own program speaks ACP (the engine then lets the hosted agent keep the
    /// name, crates/engine/src/hosted.rs); and each such agent has its preset.
    #[test]
    fn the_presets_with_hook_agents_names_are_the_hook_agents_that_speak_acp() {
        let mut presets: Vec<&str> = names()
            .into_iter()
            .filter(|name| airlock_agents::is_hook_agent(name))
            .collect();
        let mut speaking: Vec<&str> = airlock_agents::hook_agents()
            .filter(|agent| agent.speaks_acp())
            .map(|agent| agent.name())
            .collect();
        presets.sort_unstable();
        speaking.sort_unstable();
        assert_eq!(presets, speaking);
        assert!(!speaking.is_empty());
    }
}
