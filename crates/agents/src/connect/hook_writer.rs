//! The one config writer of the agents whose `connect` is a hook entry in one JSON file and
//! nothing else (Claude Code, Copilot CLI, Qwen Code, Cursor, goose): they differ only in where
//! the file is, its [`Layout`], whether Airlock alone writes it, whether Airlock installs an HTTP
//! hook there, and what the person reads once connected. Codex (its hook trust) and Gemini CLI
//! (its policy file) have writers of their own.

use crate::connect::hooks::{self, Layout};
use crate::connect::{
    ConfigWriter, ConnectError, ConnectReport, HttpHook, Options, Result, files, home,
};
use std::path::{Path, PathBuf};

/// Where an agent keeps the file `connect` edits.
#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// This path (its parts) below the project `--project` names, else below the home folder.
    HomeOrProject(&'static [&'static str]),
    /// This path (its parts) below the home folder.
    Home(&'static [&'static str]),
    /// Where the agent's own setting says (Copilot's `$COPILOT_HOME`).
    Custom(fn() -> Result<PathBuf>),
}

/// Why `connect --http` refuses an agent whose hooks are commands only.
pub const NO_HTTP_HOOK: &str =
    "Airlock installs no HTTP hook for this agent; connect it without --http";

/// Whether `connect --http` installs an HTTP hook for the agent.
#[derive(Debug, Clone, Copy)]
pub enum HttpHooks {
    /// One that blocks the call when Airlock does not answer (`onFailure: "block"`).
    Blocking,
    /// None, and why (the person reads it).
    Refused(&'static str),
}

/// A plugin's manifest Airlock writes beside the hook file's folder (`../plugin.json`: goose
/// loads a plugin only with one) and removes with it.
#[derive(Debug, Clone, Copy)]
pub struct PluginManifest(pub &'static str);

impl PluginManifest {
    /// The manifest's path, from the hook file's (`…/PLUGIN/hooks/hooks.json`).
    fn path(hooks_json: &Path) -> Option<PathBuf> {
        Some(hooks_json.parent()?.parent()?.join("plugin.json"))
    }
}

/// One agent's hook entry, and everything `connect` says and does about it.
#[derive(Debug, Clone, Copy)]
pub struct HookWriter {
    /// The agent's name: the hook command's argument and the HTTP hook's route.
    pub agent: &'static str,
    pub place: Place,
    pub layout: Layout,
    /// A file only Airlock writes: removed when its hook goes.
    pub own_file: bool,
    /// `connect --http`: an HTTP hook the agent blocks a call on when it gets no answer, or
    /// why there is none.
    pub http: HttpHooks,
    pub manifest: Option<PluginManifest>,
    /// What the person should know once it is connected.
    pub note: &'static str,
}

impl ConfigWriter for HookWriter {
    fn takes_project(&self) -> bool {
        matches!(self.place, Place::HomeOrProject(_))
    }

    fn config_path(&self, project: Option<&Path>) -> Result<PathBuf> {
        let (base, parts) = match self.place {
            Place::HomeOrProject(parts) => (
                match project {
                    Some(dir) => dir.to_path_buf(),
                    None => home()?,
                },
                parts,
            ),
            Place::Home(parts) => (home()?, parts),
            Place::Custom(place) => return place(),
        };
        Ok(parts.iter().fold(base, |path, part| path.join(part)))
    }

    fn connect(&self, path: &Path, options: &Options) -> Result<ConnectReport> {
        let mut report = hooks::connect(path, self.agent, &self.layout, options)?;
        if let (Some(PluginManifest(text)), Some(manifest)) =
            (self.manifest, PluginManifest::path(path))
            && !manifest.exists()
        {
            files::write_with_backup(&manifest, text)?;
            report.changes.push(format!("+ {}", manifest.display()));
            report.changed = true;
        }
        Ok(report)
    }

    fn no_http_hook(&self) -> Option<&'static str> {
        match self.http {
            HttpHooks::Blocking => None,
            HttpHooks::Refused(why) => Some(why),
        }
    }

    fn connect_http(
        &self,
        path: &Path,
        options: &Options,
        hook: &HttpHook,
    ) -> Result<ConnectReport> {
        if let Some(why) = self.no_http_hook() {
            return Err(ConnectError::Invalid(why.into()));
        }
        hooks::connect_http(path, self.agent, &self.layout, options, hook)
    }

    fn disconnect(&self, path: &Path) -> Result<ConnectReport> {
        let mut report = hooks::disconnect(path, self.agent, &self.layout, self.own_file)?;
        // Airlock's plugin without its hook is nothing: its manifest goes too.
        if let (Some(PluginManifest(text)), Some(manifest)) =
            (self.manifest, PluginManifest::path(path))
            && !path.exists()
            && std::fs::read_to_string(&manifest).ok().as_deref() == Some(text)
        {
            std::fs::remove_file(&manifest).map_err(|e| ConnectError::Write {
                path: manifest.clone(),
                message: e.to_string(),
            })?;
            report.changes.push(format!("- {}", manifest.display()));
            report.changed = true;
        }
        Ok(report)
    }

    fn connected(&self, path: &Path) -> Result<bool> {
        hooks::connected(path, self.agent, &self.layout)
    }

    fn connected_note(&self, _report: &ConnectReport) -> Option<&'static str> {
        Some(self.note)
    }
}
