//! The model provider chosen in settings (OpenAI-compatible chat completions for now).

use crate::{EngineError, Result};
use airlock_llm::{ModelProvider, OpenAiChat, ProviderConfig};
use airlock_store::Store;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What `airlock provider set` stores.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProviderSettings {
    pub base_url: String,
    pub model: String,
    /// The name of the environment variable that holds the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default = "default_stream")]
    pub stream: bool,
}

fn default_stream() -> bool {
    true
}

pub(crate) fn load(store: &Store) -> Result<Option<ProviderSettings>> {
    match store.setting("provider")? {
        None => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| EngineError::Provider(format!("stored provider settings are unreadable: {e}"))),
    }
}

pub(crate) fn build(settings: &ProviderSettings) -> Result<Arc<dyn ModelProvider>> {
    let url = settings.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(EngineError::Provider(format!("base URL '{url}' must start with http:// or https://")));
    }
    if settings.model.trim().is_empty() {
        return Err(EngineError::Provider("the model name is empty".into()));
    }
    let config = ProviderConfig {
        base_url: url.to_string(),
        model: settings.model.clone(),
        api_key_env: settings.api_key_env.clone().filter(|v| !v.is_empty()),
        stream: settings.stream,
        ..ProviderConfig::default()
    };
    let provider = OpenAiChat::new(config).map_err(|e| EngineError::Provider(e.to_string()))?;
    Ok(Arc::new(provider))
}
