//! The provider's API key in the OS keyring (the `keyring` crate: Secret Service over D-Bus on
//! Linux, the Keychain on macOS, the Credential Manager on Windows), never in the store: the
//! settings keep only that the key is there (`ProviderSettings::api_key_in_keyring`). One entry
//! per data directory and provider, so two data directories never share a key.

use crate::{EngineError, Result};
use airlock_llm::ApiKey;
use std::path::Path;

/// The keyring's service name of every Airlock entry.
const SERVICE: &str = "airlock";

/// The entry of a provider (`None`: the default one) of this data directory.
fn entry(data_dir: &Path, provider: Option<&str>) -> Result<keyring::Entry> {
    let account = format!(
        "provider:{}@{}",
        provider.unwrap_or("default"),
        data_dir.display()
    );
    keyring::Entry::new(SERVICE, &account).map_err(unavailable)
}

/// The keyring's error, said without the key (its errors never carry the secret itself).
fn unavailable(error: keyring::Error) -> EngineError {
    EngineError::Provider(format!(
        "the OS keyring cannot keep the API key ({error}); on Linux it needs a Secret Service such as gnome-keyring (sudo apt-get install gnome-keyring), or name an environment variable instead"
    ))
}

/// Keeps `key` as the provider's API key.
pub(crate) fn store(data_dir: &Path, provider: Option<&str>, key: &ApiKey) -> Result<()> {
    entry(data_dir, provider)?
        .set_password(key.expose())
        .map_err(unavailable)
}

/// The provider's API key, when the keyring holds one.
pub(crate) fn load(data_dir: &Path, provider: Option<&str>) -> Result<Option<ApiKey>> {
    match entry(data_dir, provider)?.get_password() {
        Ok(key) => Ok(ApiKey::new(&key)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(error) => Err(unavailable(error)),
    }
}

/// Forgets the provider's API key (nothing to forget is fine).
pub(crate) fn forget(data_dir: &Path, provider: Option<&str>) -> Result<()> {
    match entry(data_dir, provider)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(error) => Err(unavailable(error)),
    }
}
