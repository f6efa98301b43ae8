//! What a turn reads at every step, built once and cached until a setting changes: the model
//! providers, the compiled policy, the turn settings.

use crate::*;
use airlock_core::Setting;
use airlock_core::policy::PolicyConfig;
use airlock_llm::ModelProvider;
use serde_json::Value;
use std::sync::Arc;

impl Inner {
    /// The provider a session uses (its chosen named one, else the default); `None` for a
    /// session not created yet.
    pub(crate) fn provider_for(&self, session_id: Option<&str>) -> Result<Arc<dyn ModelProvider>> {
        let generation = self.policy_generation()?;
        {
            let mut seen = self
                .providers_generation
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if *seen != generation {
                // Another replica changed a setting: build again from the store.
                self.providers
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .clear();
                *seen = generation;
            }
        }
        let chosen = provider::chosen(self.store.as_ref(), session_id)?;
        let key = provider::cache_key(chosen.as_deref());
        if let Some(provider) = self
            .providers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
        {
            return Ok(provider);
        }
        let settings = provider::settings_of(self.store.as_ref(), chosen)?;
        let built = provider::build(&settings, provider::keyring_key(&self.data_dir, &settings)?)?;
        self.providers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, built.clone());
        Ok(built)
    }

    /// The policy generation of a database several engines share, read before anything
    /// cached is used (`None`: only this engine writes its store, and it drops its own caches
    /// when it changes what they hold).
    pub(crate) fn policy_generation(&self) -> Result<Option<i64>> {
        Ok(self
            .store
            .replicas()
            .map(|replicas| replicas.policy_generation())
            .transpose()?)
    }

    /// The compiled policy, as of the store's latest change (another replica's too).
    pub(crate) fn policy(&self) -> Result<Arc<PolicyConfig>> {
        // Read before the inputs: a change committed meanwhile moves it past this one.
        let generation = self.policy_generation()?;
        if let Some((cached, policy)) = self
            .policy
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            && cached == generation
        {
            return Ok(policy);
        }
        let compiled = Arc::new(PolicyConfig::compile(self.store.policy_inputs()?)?);
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) =
            Some((generation, compiled.clone()));
        Ok(compiled)
    }

    /// Drops the cached policy and settings; the next call reads them from the store again.
    pub(crate) fn invalidate_policy(&self) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = None;
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub(crate) fn turn_settings(&self) -> Result<Arc<TurnSettings>> {
        let generation = self.policy_generation()?;
        if let Some((cached, settings)) = self
            .settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            && cached == generation
        {
            return Ok(settings);
        }
        let number =
            |key| -> Result<Option<u64>> { Ok(self.store.setting(key)?.and_then(|v| v.as_u64())) };
        let settings = Arc::new(TurnSettings {
            step_limit: number(Setting::StepLimit.key())?
                .map_or(driver::DEFAULT_STEP_LIMIT, |n| n as usize),
            approval_timeout_secs: number(Setting::ApprovalTimeoutSecs.key())?.filter(|s| *s > 0),
            system_prompt: match self.store.setting(Setting::SystemPrompt.key())? {
                Some(Value::String(prompt)) if !prompt.is_empty() => Some(prompt),
                _ => None,
            },
        });
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) =
            Some((generation, settings.clone()));
        Ok(settings)
    }
}
