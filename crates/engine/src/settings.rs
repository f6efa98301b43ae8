//! Changing what the person set: providers, modes, settings, tool settings, rules, remembered
//! decisions. Each change drops the cached policy so the next call sees it.

use crate::*;
use airlock_core::policy::PolicyConfig;
use airlock_core::{ArgRule, Mode, Setting, ToolSetting};
use airlock_llm::ApiKey;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The coding agents' own tools (`claude-code/Read`), which no server lists: the ones their
/// hooks are known to report and any other that has a setting, each settable like a server's
/// tool. A notification never approves an agent's call.
fn agent_tool_views(
    policy: &PolicyConfig,
    settings: &HashMap<(String, String), ToolSetting>,
) -> Vec<ToolView> {
    let mut views = Vec::new();
    for agent in airlock_agents::hook_agents() {
        let server = agent.name();
        let mut tools: Vec<String> = agent.known_tools().iter().map(|t| t.to_string()).collect();
        tools.extend(
            settings
                .keys()
                .filter(|(s, _)| s == server)
                .map(|(_, tool)| tool.clone()),
        );
        tools.sort();
        tools.dedup();
        for tool in tools {
            let key = (server.to_string(), tool.clone());
            views.push(ToolView {
                model_name: format!("{server}/{tool}"),
                description: format!(
                    "{}'s own {tool} tool, asked through its hook",
                    agent.display_name()
                ),
                setting: settings
                    .get(&key)
                    .copied()
                    .unwrap_or(ToolSetting::ServerDefault),
                effective: policy.effective_setting(server, &tool, false),
                read_only_hint: false,
                from_notification: None,
                may_allow_from_notification: false,
                approvable_from_notification: false,
                annotations: None,
                server: server.to_string(),
                tool,
            });
        }
    }
    views
}

impl Engine {
    pub fn provider_settings(&self) -> Result<Option<ProviderSettings>> {
        provider::load(self.inner.store.as_ref())
    }

    /// The default provider first (when set), then the named ones by name.
    pub fn providers(&self) -> Result<Vec<ProviderSettings>> {
        let mut all: Vec<ProviderSettings> = provider::load(self.inner.store.as_ref())?
            .into_iter()
            .collect();
        all.extend(provider::load_named(self.inner.store.as_ref())?.into_values());
        Ok(all)
    }

    /// Sets the default provider, or the named one `settings.name` names. A variable named
    /// for the key replaces a key kept in the keyring (which is then forgotten).
    pub fn set_provider(&self, mut settings: ProviderSettings) -> Result<()> {
        let names_variable = settings
            .api_key_env
            .as_deref()
            .is_some_and(|v| !v.trim().is_empty());
        let kept_before = provider::settings_of(self.inner.store.as_ref(), settings.name.clone())
            .is_ok_and(|old| old.api_key_in_keyring);
        if names_variable && (settings.api_key_in_keyring || kept_before) {
            secrets::forget(&self.inner.data_dir, settings.name.as_deref())?;
            settings.api_key_in_keyring = false;
        } else if !names_variable && kept_before {
            // The key pasted earlier stays in use until a variable is named instead.
            settings.api_key_in_keyring = true;
        }
        let built = provider::build(
            &settings,
            provider::keyring_key(&self.inner.data_dir, &settings)?,
        )?;
        provider::save(self.inner.store.as_ref(), &settings)?;
        if let Some(name) = &settings.api_key_env {
            self.inner.builtin.hide_env(name);
        }
        self.inner
            .providers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(provider::cache_key(settings.name.as_deref()), built);
        Ok(())
    }

    /// Keeps `key` in the OS keyring as the API key of the default provider (`provider: None`)
    /// or a named one, which must be set already; the store keeps only that it is there. The
    /// key is never written to the store, a log or an answer.
    pub fn set_provider_key(&self, provider: Option<&str>, key: &str) -> Result<()> {
        let key =
            ApiKey::new(key).ok_or_else(|| EngineError::Invalid("the API key is empty".into()))?;
        let mut settings =
            provider::settings_of(self.inner.store.as_ref(), provider.map(str::to_string))?;
        secrets::store(&self.inner.data_dir, provider, &key)?;
        settings.api_key_env = None;
        settings.api_key_in_keyring = true;
        self.set_provider(settings)
    }

    /// Sends one real request to the provider `settings` describe, with `key` (pasted, not
    /// kept yet) or else the key it would use, and says what came back; nothing is saved.
    pub async fn test_provider(
        &self,
        settings: ProviderSettings,
        key: Option<&str>,
    ) -> Result<String> {
        let key = match key.and_then(ApiKey::new) {
            Some(key) => Some(key),
            None => provider::keyring_key(&self.inner.data_dir, &settings)?,
        };
        let built = provider::build(
            &ProviderSettings {
                // One try: a test says at once what is wrong.
                max_retries: Some(0),
                api_key_env: if key.is_some() {
                    None
                } else {
                    settings.api_key_env.clone()
                },
                ..settings
            },
            key,
        )?;
        let request = airlock_llm::ChatRequest {
            messages: vec![airlock_llm::ChatMessage::user("Reply with the word OK.")],
            tools: Vec::new(),
        };
        let reply = built
            .complete(&request, None)
            .await
            .map_err(|e| EngineError::Provider(e.to_string()))?;
        let text: String = reply.text.trim().chars().take(80).collect();
        Ok(if text.is_empty() {
            "The provider answered.".into()
        } else {
            format!("The provider answered: “{text}”")
        })
    }

    /// Makes a session (created if new) use the named provider from its next model request on.
    pub fn choose_provider(&self, session: &str, name: &str) -> Result<()> {
        let row = self.inner.store.ensure_session(session)?;
        if let Some(why) = self.running_status(&row.id) {
            return Err(EngineError::Busy {
                session: row.name,
                why,
            });
        }
        provider::choose(self.inner.store.as_ref(), &row.id, name)
    }

    /// Sets the workspace default, or one session's mode (`None` clears the override).
    pub fn set_mode(&self, session: Option<&str>, mode: Option<Mode>) -> Result<()> {
        match session {
            Some(name) => {
                let row = self.inner.store.ensure_session(name)?;
                self.inner.store.set_session_mode(&row.id, mode)?;
            }
            None => {
                let mode = mode.unwrap_or(Mode::Ask);
                self.inner
                    .store
                    .set_setting(Setting::WorkspaceMode.key(), &json!(mode.as_str()))?;
                self.inner.invalidate_policy();
            }
        }
        Ok(())
    }

    /// The folder Airlock's own tools work in from the next start on (an absolute path, made
    /// if missing); the running engine keeps its own until then.
    pub fn set_workspace(&self, folder: &str) -> Result<()> {
        let path = std::path::Path::new(folder.trim());
        if !path.is_absolute() {
            return Err(EngineError::Invalid(format!(
                "the workspace folder must be an absolute path, not '{folder}'"
            )));
        }
        std::fs::create_dir_all(path).map_err(|e| EngineError::DataDir {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        self.inner
            .store
            .set_setting(Setting::Workspace.key(), &json!(path.display().to_string()))?;
        Ok(())
    }

    /// The workspace chosen in Settings for the next start, when one was.
    pub fn chosen_workspace(&self) -> Result<Option<String>> {
        Ok(self
            .inner
            .store
            .setting(Setting::Workspace.key())?
            .and_then(|v| v.as_str().map(str::to_string)))
    }

    /// Sets one setting, after checking that the value is of its kind.
    pub fn set_setting(&self, setting: Setting, value: &Value) -> Result<()> {
        if setting == Setting::Workspace {
            let folder = value.as_str().ok_or_else(|| {
                EngineError::Invalid("the workspace folder must be a path".into())
            })?;
            return self.set_workspace(folder);
        }
        setting.check(value).map_err(EngineError::Invalid)?;
        self.inner.store.set_setting(setting.key(), value)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    pub fn tool_views(&self) -> Result<Vec<ToolView>> {
        let policy = self.inner.policy()?;
        let settings: HashMap<(String, String), ToolSetting> = self
            .inner
            .store
            .tool_settings()?
            .into_iter()
            .map(|(server, tool, setting)| ((server, tool), setting))
            .collect();
        let mut views: Vec<ToolView> = self
            .inner
            .tools
            .all()
            .into_iter()
            .map(|tool| {
                let def = &tool.def;
                let key = (def.server.clone(), def.name.clone());
                ToolView {
                    server: def.server.clone(),
                    tool: def.name.clone(),
                    model_name: def.model_name(),
                    description: def.description.clone(),
                    setting: settings
                        .get(&key)
                        .copied()
                        .unwrap_or(ToolSetting::ServerDefault),
                    effective: policy.effective_setting(&def.server, &def.name, def.read_only_hint),
                    read_only_hint: def.read_only_hint,
                    from_notification: policy
                        .from_notification_choice(&def.server, Some(&def.name)),
                    may_allow_from_notification: !airlock_core::never_from_notification(
                        &def.server,
                        &def.name,
                    ),
                    approvable_from_notification: policy.approvable_from_notification(
                        &def.server,
                        &def.name,
                        def.read_only_hint,
                    ),
                    annotations: def.annotations.clone(),
                }
            })
            .collect();
        views.extend(agent_tool_views(&policy, &settings));
        Ok(views)
    }

    pub fn set_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()> {
        self.require_tool(server, tool)?;
        self.inner.store.set_tool_setting(server, tool, setting)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    /// Whether a notification may approve a tool (`tool: Some`) or a server's tools; `None`
    /// forgets the choice. A tool that runs anything (the built-in `run_command`) cannot be
    /// allowed: a notification shows one line of it.
    pub fn set_from_notification(
        &self,
        server: &str,
        tool: Option<&str>,
        allow: Option<bool>,
    ) -> Result<()> {
        match tool {
            Some(tool) => {
                self.require_tool(server, tool)?;
                if allow == Some(true) && airlock_core::never_from_notification(server, tool) {
                    return Err(EngineError::Invalid(format!(
                        "{server}/{tool} runs whatever it is given; approve it in the inbox, where the whole call is shown"
                    )));
                }
            }
            None => self.require_server(server)?,
        }
        self.inner
            .store
            .set_from_notification(server, tool, allow)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    /// A tool the engine offers now (a setting for any other would be a silent no-op), or a
    /// coding agent's tool (`claude-code/Bash`): those are known when the agent asks.
    fn require_tool(&self, server: &str, tool: &str) -> Result<()> {
        let agent_tool = airlock_agents::is_hook_agent(server)
            && !tool.trim().is_empty()
            && tool.len() <= 256
            && !tool.chars().any(char::is_control);
        match self.inner.tools.tool(server, tool) {
            Some(_) => Ok(()),
            None if agent_tool => Ok(()),
            None => Err(EngineError::UnknownTool {
                server: server.into(),
                tool: tool.into(),
            }),
        }
    }

    /// Adds an argument rule after checking that it compiles; a rule identical to one already
    /// there changes nothing and says so (`already_existed`, with that rule). An allow rule
    /// names the calls waiting now that it covers (`covers_waiting`): it applies to later
    /// calls only, so those still wait for the person, who can approve them as shown.
    pub fn add_rule(&self, rule: ArgRule) -> Result<AddedRule> {
        PolicyConfig::compile(airlock_core::policy::PolicyInputs {
            rules: vec![rule.clone()],
            ..Default::default()
        })?;
        let mut added = self.inner.store.add_rule(&rule)?;
        self.inner.invalidate_policy();
        if rule.effect == airlock_core::RuleEffect::Allow {
            let probe = airlock_core::policy::RuleProbe::new(&rule)?;
            added.covers_waiting = self
                .inbox()?
                .into_iter()
                .filter(|item| {
                    item.kind != airlock_core::ItemKind::Elicitation
                        && item.server == rule.server
                        && item.tool == rule.tool
                        && probe.matches(&item.args)
                })
                .collect();
        }
        Ok(added)
    }

    /// Removes the argument rule `id` (audited as `rule_removed`); it stops applying at once,
    /// to the next decision. An unknown id is [`EngineError::UnknownRule`].
    pub fn remove_rule(&self, id: &str) -> Result<()> {
        let removed = self.inner.store.remove_rule(id)?;
        self.inner.invalidate_policy();
        if removed {
            Ok(())
        } else {
            Err(EngineError::UnknownRule(id.into()))
        }
    }

    pub fn revoke_remembered(&self, id: &str) -> Result<bool> {
        let removed = self.inner.store.revoke_remembered(id)?;
        self.inner.invalidate_policy();
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use airlock_testkit::{Reply, ScriptedModel};

    /// The workspace chosen in Settings is the one the next start uses; a folder given at
    /// start still wins; a relative path is refused.
    #[tokio::test]
    async fn a_workspace_chosen_in_settings_is_used_from_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let open = |workspace: Option<PathBuf>| {
            Engine::open(EngineConfig {
                data_dir: dir.path().join("data"),
                workspace,
            })
            .unwrap()
        };
        let engine = open(Some(dir.path().join("first")));
        assert!(engine.set_workspace("relative/folder").is_err());
        let chosen = dir.path().join("chosen");
        engine.set_workspace(chosen.to_str().unwrap()).unwrap();
        // The running engine keeps its folder until it starts again.
        assert_eq!(engine.workspace(), dir.path().join("first"));
        drop(engine);
        assert_eq!(open(None).workspace(), chosen);
        assert_eq!(
            open(Some(dir.path().join("flag"))).workspace(),
            dir.path().join("flag")
        );
    }

    /// "Test connection" sends one real request with the pasted key and saves nothing; a
    /// provider that cannot be reached says so.
    #[tokio::test]
    async fn test_connection_sends_one_request_with_the_pasted_key_and_saves_nothing() {
        let (_dir, engine) = crate::tests::empty_engine();
        let model = ScriptedModel::start(vec![Reply::Text("OK".into())])
            .await
            .unwrap();
        let settings = ProviderSettings {
            base_url: model.base_url(),
            model: "scripted".into(),
            ..ProviderSettings::default()
        };
        let said = engine
            .test_provider(settings.clone(), Some("sk-pasted"))
            .await
            .unwrap();
        assert_eq!(said, "The provider answered: “OK”");
        let auth: Vec<String> = model
            .request_headers()
            .iter()
            .filter_map(|h| h.iter().find(|(n, _)| n == "authorization"))
            .map(|(_, v)| v.clone())
            .collect();
        assert_eq!(auth, ["Bearer sk-pasted"]);
        assert_eq!(engine.provider_settings().unwrap(), None);
        let unreachable = ProviderSettings {
            base_url: "http://127.0.0.1:9/v1".into(),
            ..settings
        };
        let error = engine
            .test_provider(unreachable, Some("sk-pasted"))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("cannot reach the provider"), "{error}");
        assert!(!error.contains("sk-pasted"), "{error}");
    }
}
