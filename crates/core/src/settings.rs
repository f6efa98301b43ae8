//! Every setting kept in the settings table, in one place: its key (in the database and the
//! local API), its command-line name, what it takes, its default and a sentence of help. The
//! engine, the API, the CLI and the desktop read this registry; no bare key strings elsewhere.

use serde_json::Value;

/// What a setting's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    /// Whole seconds; 0 means off or the default, as the help says.
    Seconds,
    /// A whole number.
    Count,
    Text,
    Switch,
    /// A [`crate::Mode`] by name.
    Mode,
    /// A JSON object another module defines (the providers' settings).
    Object,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    ApprovalTimeoutSecs,
    StepLimit,
    SystemPrompt,
    ToolTimeoutSecs,
    Notifications,
    WorkspaceMode,
    Paused,
    /// The default model provider (`ProviderSettings`).
    DefaultProvider,
    /// The named model providers, by name.
    NamedProviders,
    /// Where the paired phone inbox listens (`ADDR:PORT`, HTTPS); absent: off.
    RemoteListen,
    /// The push to the person's ntfy topic (`NtfyPush`); absent: off.
    PushNtfy,
    /// The folder Airlock's own tools work in (an absolute path), from the next start on; a
    /// `--workspace` given at start wins.
    Workspace,
    /// The loopback port agents' HTTP hooks post to (`connect --http` writes it into their
    /// config): kept across restarts so the installed hook's URL stays this engine's.
    AgentHookPort,
}

/// The prefix of the per-session keys that remember a session's chosen provider.
pub const SESSION_PROVIDER_PREFIX: &str = "session_provider/";

impl Setting {
    pub const ALL: &'static [Setting] = &[
        Setting::ApprovalTimeoutSecs,
        Setting::StepLimit,
        Setting::SystemPrompt,
        Setting::ToolTimeoutSecs,
        Setting::Notifications,
        Setting::WorkspaceMode,
        Setting::Paused,
        Setting::DefaultProvider,
        Setting::NamedProviders,
        Setting::RemoteListen,
        Setting::PushNtfy,
        Setting::Workspace,
        Setting::AgentHookPort,
    ];

    /// The key in the database and in `PUT /v1/settings/KEY`.
    pub fn key(self) -> &'static str {
        match self {
            Setting::ApprovalTimeoutSecs => "approval_timeout_secs",
            Setting::StepLimit => "step_limit",
            Setting::SystemPrompt => "system_prompt",
            Setting::ToolTimeoutSecs => "tool_timeout_secs",
            Setting::Notifications => "notifications",
            Setting::WorkspaceMode => "workspace_mode",
            Setting::Paused => "paused",
            Setting::DefaultProvider => "provider",
            Setting::NamedProviders => "providers",
            Setting::RemoteListen => "remote_listen",
            Setting::PushNtfy => "push_ntfy",
            Setting::Workspace => "workspace",
            Setting::AgentHookPort => "agent_hook_port",
        }
    }

    /// The name `airlock settings set NAME VALUE` takes, for the settings it sets.
    pub fn cli_name(self) -> Option<&'static str> {
        match self {
            Setting::ApprovalTimeoutSecs => Some("approval-timeout"),
            Setting::StepLimit => Some("step-limit"),
            Setting::SystemPrompt => Some("system-prompt"),
            Setting::ToolTimeoutSecs => Some("tool-timeout"),
            // Set by their own commands and screens (notifications in the app, `mode set`,
            // `pause`).
            Setting::Notifications
            | Setting::WorkspaceMode
            | Setting::Paused
            | Setting::DefaultProvider
            | Setting::NamedProviders
            | Setting::RemoteListen
            | Setting::PushNtfy
            | Setting::Workspace
            | Setting::AgentHookPort => None,
        }
    }

    pub fn kind(self) -> SettingKind {
        match self {
            Setting::ApprovalTimeoutSecs | Setting::ToolTimeoutSecs => SettingKind::Seconds,
            Setting::StepLimit | Setting::AgentHookPort => SettingKind::Count,
            Setting::SystemPrompt | Setting::RemoteListen | Setting::Workspace => SettingKind::Text,
            Setting::Notifications | Setting::Paused => SettingKind::Switch,
            Setting::WorkspaceMode => SettingKind::Mode,
            Setting::DefaultProvider | Setting::NamedProviders | Setting::PushNtfy => {
                SettingKind::Object
            }
        }
    }

    /// What it is and what it takes, in a sentence.
    pub fn help(self) -> &'static str {
        match self {
            Setting::ApprovalTimeoutSecs => {
                "deny requests nobody answered in time: whole seconds, 0 = off (the default)"
            }
            Setting::StepLimit => "model steps in one turn: a whole number (default 25)",
            Setting::SystemPrompt => "the system prompt of every turn: text (default none)",
            Setting::ToolTimeoutSecs => {
                "how long an MCP tool call may take: whole seconds, 0 = the default (60)"
            }
            Setting::Notifications => "desktop notifications: true or false (default true)",
            Setting::WorkspaceMode => "the workspace's default mode: ask, never-ask or deny-all",
            Setting::Paused => "pause all agents: true or false (default false)",
            Setting::DefaultProvider => "the default model provider (`airlock provider set`)",
            Setting::NamedProviders => {
                "the named model providers (`airlock provider set --name NAME`)"
            }
            Setting::RemoteListen => {
                "where the paired phone inbox listens (`airlock remote enable --listen ADDR:PORT`)"
            }
            Setting::PushNtfy => {
                "a push to your own ntfy topic when approvals wait (`airlock remote push`)"
            }
            Setting::Workspace => {
                "the folder Airlock's own tools work in: an absolute path, from the next start on"
            }
            Setting::AgentHookPort => {
                "the loopback port agents' HTTP hooks post to (chosen by the engine; `airlock connect AGENT --http`)"
            }
        }
    }

    pub fn from_key(key: &str) -> Option<Setting> {
        Setting::ALL.iter().copied().find(|s| s.key() == key)
    }

    pub fn from_cli_name(name: &str) -> Option<Setting> {
        Setting::ALL
            .iter()
            .copied()
            .find(|s| s.cli_name() == Some(name))
    }

    /// The names `airlock settings set` accepts.
    pub fn cli_names() -> Vec<&'static str> {
        Setting::ALL.iter().filter_map(|s| s.cli_name()).collect()
    }

    /// Whether `value` is of this setting's kind.
    pub fn check(self, value: &Value) -> Result<(), String> {
        let fits = match self.kind() {
            SettingKind::Seconds | SettingKind::Count => value.as_u64().is_some(),
            SettingKind::Text => value.is_string(),
            SettingKind::Switch => value.is_boolean(),
            SettingKind::Mode => value
                .as_str()
                .is_some_and(|m| m.parse::<crate::Mode>().is_ok()),
            SettingKind::Object => value.is_object(),
        };
        if fits {
            Ok(())
        } else {
            Err(format!("{}: {}", self.key(), self.help()))
        }
    }

    /// A value typed on the command line, as this setting's kind.
    pub fn parse(self, text: &str) -> Result<Value, String> {
        let value = match self.kind() {
            SettingKind::Seconds | SettingKind::Count => {
                text.trim().parse::<u64>().map(Value::from).map_err(|_| {
                    format!("{}: {}", self.cli_name().unwrap_or(self.key()), self.help())
                })?
            }
            SettingKind::Switch => match text.trim() {
                "true" | "on" => Value::Bool(true),
                "false" | "off" => Value::Bool(false),
                _ => return Err(format!("{}: {}", self.key(), self.help())),
            },
            SettingKind::Text | SettingKind::Mode => Value::String(text.to_string()),
            SettingKind::Object => serde_json::from_str(text).map_err(|e| e.to_string())?,
        };
        self.check(&value)?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_round_trip() {
        for setting in Setting::ALL {
            assert_eq!(Setting::from_key(setting.key()), Some(*setting));
            if let Some(name) = setting.cli_name() {
                assert_eq!(Setting::from_cli_name(name), Some(*setting));
            }
            assert!(!setting.help().is_empty());
        }
        assert_eq!(
            Setting::cli_names(),
            [
                "approval-timeout",
                "step-limit",
                "system-prompt",
                "tool-timeout"
            ]
        );
    }

    #[test]
    fn values_are_checked_by_kind() {
        assert_eq!(Setting::StepLimit.parse("12").unwrap(), json!(12));
        assert!(Setting::StepLimit.parse("soon").is_err());
        assert!(Setting::ApprovalTimeoutSecs.check(&json!(-1)).is_err());
        assert!(Setting::SystemPrompt.check(&json!("be brief")).is_ok());
        assert!(Setting::SystemPrompt.check(&json!(3)).is_err());
        assert!(Setting::Notifications.check(&json!(false)).is_ok());
        assert!(Setting::WorkspaceMode.check(&json!("never-ask")).is_ok());
        assert!(Setting::WorkspaceMode.check(&json!("sometimes")).is_err());
    }
}
