//! The model providers chosen in settings: one default (`provider set` without `--name`) and
//! any number of named ones; a session may choose a named one (`chat --provider NAME`).

use crate::{EngineError, Result};
use airlock_core::Setting;
use airlock_core::settings::SESSION_PROVIDER_PREFIX;
use airlock_llm::{
    Anthropic, ApiKey, HostedMcpTool, ModelProvider, OpenAiChat, OpenAiResponses, ProviderConfig,
};
use airlock_protocol::{HostedMcpServer, ProviderKind, ProviderKindInfo, ProviderSettings};
use airlock_store::Store;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

type BuildProvider = fn(
    ProviderConfig,
    &ProviderSettings,
) -> std::result::Result<Arc<dyn ModelProvider>, airlock_llm::LlmError>;

/// Every kind, once: its name, its label and how it is built. Adding a kind is its module in
/// `crates/llm`, a variant of [`ProviderKind`], one line here, and its tests; the CLI's
/// `--kind` values and the Settings screen's choices come from this table.
const KINDS: &[(ProviderKind, &str, &str, BuildProvider)] = &[
    (
        ProviderKind::OpenaiChat,
        "openai-chat",
        "OpenAI-compatible chat completions",
        |config, _| Ok(Arc::new(OpenAiChat::new(config)?)),
    ),
    (
        ProviderKind::OpenaiResponses,
        "openai-responses",
        "OpenAI Responses",
        |config, settings| {
            Ok(Arc::new(OpenAiResponses::new(
                config,
                hosted_tools(&settings.hosted_mcp),
            )?))
        },
    ),
    (
        ProviderKind::Anthropic,
        "anthropic",
        "Anthropic Messages",
        |config, settings| Ok(Arc::new(Anthropic::new(config, settings.max_tokens)?)),
    ),
];

/// The hosted MCP servers as the provider's wire format takes them.
fn hosted_tools(servers: &[HostedMcpServer]) -> Vec<HostedMcpTool> {
    servers
        .iter()
        .map(|server| HostedMcpTool {
            server_label: server.server_label.clone(),
            server_url: server.server_url.clone(),
            require_approval: server.require_approval.clone(),
            allowed_tools: server.allowed_tools.clone(),
        })
        .collect()
}

/// Every provider kind with its name and label, in the order a person sees them.
pub fn provider_kinds() -> Vec<ProviderKindInfo> {
    KINDS
        .iter()
        .map(|(kind, name, label, _)| ProviderKindInfo {
            kind: *kind,
            name,
            label,
        })
        .collect()
}

/// The names `airlock provider set --kind` takes.
pub fn provider_kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|(_, name, _, _)| *name).collect()
}

const DEFAULT_KEY: Setting = Setting::DefaultProvider;
const NAMED_KEY: Setting = Setting::NamedProviders;

/// The settings key that remembers which named provider a session chose.
fn session_key(session_id: &str) -> String {
    format!("{SESSION_PROVIDER_PREFIX}{session_id}")
}

fn unreadable(e: serde_json::Error) -> EngineError {
    EngineError::Provider(format!("stored provider settings are unreadable: {e}"))
}

pub(crate) fn load(store: &dyn Store) -> Result<Option<ProviderSettings>> {
    match store.setting(DEFAULT_KEY.key())? {
        None => Ok(None),
        Some(value) => serde_json::from_value(value).map(Some).map_err(unreadable),
    }
}

pub(crate) fn load_named(store: &dyn Store) -> Result<BTreeMap<String, ProviderSettings>> {
    match store.setting(NAMED_KEY.key())? {
        None => Ok(BTreeMap::new()),
        Some(value) => serde_json::from_value(value).map_err(unreadable),
    }
}

/// Stores `settings` as the default provider or as the named one it names.
pub(crate) fn save(store: &dyn Store, settings: &ProviderSettings) -> Result<()> {
    let value = serde_json::to_value(settings).map_err(unreadable)?;
    match &settings.name {
        None => store.set_setting(DEFAULT_KEY.key(), &value)?,
        Some(name) => {
            let mut named = load_named(store)?;
            named.insert(name.clone(), settings.clone());
            store.set_setting(
                NAMED_KEY.key(),
                &serde_json::to_value(named).map_err(unreadable)?,
            )?;
        }
    }
    Ok(())
}

/// The name of the provider a session chose, if it chose one.
pub(crate) fn chosen(store: &dyn Store, session_id: Option<&str>) -> Result<Option<String>> {
    Ok(match session_id {
        Some(id) => store
            .setting(&session_key(id))?
            .and_then(|v| v.as_str().map(str::to_string)),
        None => None,
    })
}

/// The settings of the provider a session chose (`chosen`), else of the default.
pub(crate) fn settings_of(store: &dyn Store, chosen: Option<String>) -> Result<ProviderSettings> {
    match chosen {
        Some(name) => load_named(store)?.remove(&name).ok_or_else(|| {
            EngineError::Provider(format!(
                "the session's provider '{name}' is no longer configured"
            ))
        }),
        None => load(store)?.ok_or(EngineError::NoProvider),
    }
}

/// Makes the session use the named provider from now on.
pub(crate) fn choose(store: &dyn Store, session_id: &str, name: &str) -> Result<()> {
    if !load_named(store)?.contains_key(name) {
        return Err(EngineError::Provider(format!(
            "no provider named '{name}'; add it with `airlock provider set --name {name} --kind ... --base-url URL --model NAME`"
        )));
    }
    store.set_setting(&session_key(session_id), &json!(name))?;
    Ok(())
}

/// The cache key of a provider: its name, or "" for the default.
pub(crate) fn cache_key(name: Option<&str>) -> String {
    name.unwrap_or_default().to_string()
}

/// The key a provider is built with: none when it names a variable (read at each request), else
/// the one the OS keyring keeps for it.
pub(crate) fn keyring_key(
    data_dir: &std::path::Path,
    settings: &ProviderSettings,
) -> Result<Option<ApiKey>> {
    let names_variable = settings
        .api_key_env
        .as_deref()
        .is_some_and(|v| !v.trim().is_empty());
    if names_variable || !settings.api_key_in_keyring {
        return Ok(None);
    }
    match crate::secrets::load(data_dir, settings.name.as_deref())? {
        Some(key) => Ok(Some(key)),
        None => Err(EngineError::Provider(
            "the API key is no longer in the OS keyring; paste it again in Settings → Model provider".into(),
        )),
    }
}

pub(crate) fn build(
    settings: &ProviderSettings,
    key: Option<ApiKey>,
) -> Result<Arc<dyn ModelProvider>> {
    let url = settings.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(EngineError::Provider(format!(
            "base URL '{url}' must start with http:// or https://"
        )));
    }
    if settings.model.trim().is_empty() {
        return Err(EngineError::Provider("the model name is empty".into()));
    }
    if let Some(name) = &settings.name {
        airlock_core::validate_server_name(name)
            .map_err(|e| EngineError::Provider(e.replace("server", "provider")))?;
    }
    if !settings.hosted_mcp.is_empty() && settings.kind != ProviderKind::OpenaiResponses {
        return Err(EngineError::Provider(
            "hosted MCP tools need a provider of kind openai-responses".into(),
        ));
    }
    let defaults = ProviderConfig::default();
    let config = ProviderConfig {
        base_url: url.to_string(),
        model: settings.model.clone(),
        api_key_env: settings.api_key_env.clone().filter(|v| !v.is_empty()),
        api_key: key,
        stream: settings.stream,
        max_retries: settings.max_retries.unwrap_or(defaults.max_retries),
        request_timeout: settings
            .timeout_secs
            .filter(|s| *s > 0)
            .map_or(defaults.request_timeout, Duration::from_secs),
        ..defaults
    };
    let build = KINDS
        .iter()
        .find(|(kind, ..)| *kind == settings.kind)
        .map(|(.., build)| build)
        .ok_or_else(|| EngineError::Provider(format!("no provider kind {:?}", settings.kind)))?;
    build(config, settings).map_err(|e| EngineError::Provider(e.to_string()))
}

#[cfg(test)]
mod tests;
