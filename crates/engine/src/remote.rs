//! The engine's part of the paired phone inbox: where it listens, one-time pairing codes, and
//! the devices with their tokens (only a hash of each is kept). The HTTPS server itself is
//! `crates/remote`; it asks the engine which device a token belongs to on every request.

use crate::*;
use airlock_core::Setting;
use airlock_protocol::{DeviceView, NtfyPush, NtfyPushView};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How long a pairing code is accepted.
pub const PAIRING_TTL: Duration = Duration::from_secs(5 * 60);
/// The longest device name kept.
const MAX_DEVICE_NAME: usize = 64;
/// Letters and digits nobody confuses when typing a code from a screen (no 0/O, 1/I/L).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// Live pairing codes and when each stops being accepted.
#[derive(Debug, Default)]
pub struct PairingCodes(Mutex<Vec<(String, Instant)>>);

impl PairingCodes {
    /// The live codes (expired ones dropped), to read or change.
    fn live(&self) -> std::sync::MutexGuard<'_, Vec<(String, Instant)>> {
        let mut codes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        codes.retain(|(_, until)| *until > now);
        codes
    }
}

/// A new bearer token: 256 random bits (a paired device's, a team member's).
pub(crate) fn new_token() -> String {
    format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    )
}

/// What the store keeps of a token: its SHA-256, looked up by equality of the whole digest.
pub(crate) fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Compares without stopping at the first difference, so timing says nothing about a code.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Engine {
    /// Where the phone inbox listens, when it is on.
    pub fn remote_listen(&self) -> Result<Option<SocketAddr>> {
        Ok(self
            .inner
            .store
            .setting(Setting::RemoteListen.key())?
            .and_then(|value| value.as_str()?.parse().ok()))
    }

    /// Switches the phone inbox on at `listen`, or off. Never on every interface: the person
    /// names the address (their LAN's, or a VPN's such as a Tailscale address).
    pub fn set_remote_listen(&self, listen: Option<SocketAddr>) -> Result<()> {
        if let Some(addr) = listen
            && addr.ip().is_unspecified()
        {
            return Err(EngineError::Invalid(format!(
                "{addr} listens on every interface; name one address (your LAN address, or a VPN's such as Tailscale's)"
            )));
        }
        let key = Setting::RemoteListen.key();
        match listen {
            Some(addr) => self
                .inner
                .store
                .set_setting(key, &serde_json::json!(addr.to_string()))?,
            None => self
                .inner
                .store
                .set_setting(key, &serde_json::Value::Null)?,
        }
        self.inner.emit(EngineEvent::RemoteChanged {
            listen: listen.map(|a| a.to_string()),
        });
        Ok(())
    }

    /// A new one-time pairing code and when it expires (RFC 3339).
    pub fn new_pairing_code(&self) -> (String, String) {
        let code: String = (0..10)
            .map(|_| CODE_ALPHABET[rand::random_range(0..CODE_ALPHABET.len())] as char)
            .collect();
        self.inner
            .pairing
            .live()
            .push((code.clone(), Instant::now() + PAIRING_TTL));
        (code, crate::clock::expiry_after(PAIRING_TTL.as_secs()))
    }

    /// Pairs a device with a live code (used up by it): a new token, returned once.
    pub fn pair_device(&self, code: &str, name: &str) -> Result<(DeviceView, String)> {
        let name: String = name
            .trim()
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_DEVICE_NAME)
            .collect();
        if name.is_empty() {
            return Err(EngineError::Invalid("name the device".into()));
        }
        let typed = code.trim().to_ascii_uppercase();
        let found = {
            let mut codes = self.inner.pairing.live();
            let at = codes
                .iter()
                .position(|(live, _)| same(live.as_bytes(), typed.as_bytes()));
            at.map(|at| codes.remove(at))
        };
        if found.is_none() {
            return Err(EngineError::NotAllowed(
                "wrong or expired pairing code".into(),
            ));
        }
        let token = new_token();
        let device = self.inner.store.add_device(
            &airlock_core::ids::new_id("dev"),
            &name,
            &token_hash(&token),
        )?;
        Ok((device, token))
    }

    /// The device a token belongs to (not revoked), marked used now.
    pub fn device_for_token(&self, token: &str) -> Result<Option<DeviceView>> {
        Ok(self.inner.store.device_by_token_hash(&token_hash(token))?)
    }

    pub fn devices(&self) -> Result<Vec<DeviceView>> {
        Ok(self.inner.store.devices()?)
    }

    /// Refuses the device's token from now on and ends its open event streams (the phone
    /// inbox ends a stream on this event).
    pub fn revoke_device(&self, id: &str) -> Result<bool> {
        let revoked = self.inner.store.revoke_device(id)?;
        self.inner.emit(EngineEvent::DeviceRevoked {
            device_id: id.to_string(),
        });
        Ok(revoked)
    }

    /// Whether this device is paired and not revoked.
    pub fn device_is_paired(&self, id: &str) -> Result<bool> {
        Ok(self
            .inner
            .store
            .devices()?
            .iter()
            .any(|device| device.id == id && device.revoked_at.is_none()))
    }

    /// The push to the person's ntfy topic, with its token, when it is on.
    pub fn push_ntfy(&self) -> Result<Option<NtfyPush>> {
        Ok(self
            .inner
            .store
            .setting(Setting::PushNtfy.key())?
            .and_then(|value| serde_json::from_value(value).ok()))
    }

    /// The push as Settings shows it: whether a token is kept, never the token.
    pub fn push_ntfy_view(&self) -> Result<Option<NtfyPushView>> {
        Ok(self.push_ntfy()?.map(|push| NtfyPushView {
            has_token: push.token.is_some(),
            server: push.server,
            topic: push.topic,
        }))
    }

    /// Turns the ntfy push on (or off with `None`). A token of `None` keeps the one saved
    /// before (Settings never shows it back); an empty token removes it.
    pub fn set_push_ntfy(&self, push: Option<NtfyPush>) -> Result<()> {
        let key = Setting::PushNtfy.key();
        let Some(mut push) = push else {
            self.inner
                .store
                .set_setting(key, &serde_json::Value::Null)?;
            return Ok(());
        };
        push.server = push.server.trim().trim_end_matches('/').to_string();
        push.topic = push.topic.trim().to_string();
        let scheme_ok = ["https://", "http://"]
            .iter()
            .any(|scheme| push.server.starts_with(scheme) && push.server.len() > scheme.len());
        if !scheme_ok
            || push
                .server
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(EngineError::Invalid(format!(
                "'{}' is not an ntfy server address (e.g. https://ntfy.sh)",
                push.server
            )));
        }
        // ntfy's own rule for topic names.
        let topic_ok = !push.topic.is_empty()
            && push.topic.len() <= 64
            && push
                .topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !topic_ok {
            return Err(EngineError::Invalid(format!(
                "'{}' is not an ntfy topic: 1 to 64 letters, digits, - or _",
                push.topic
            )));
        }
        push.token = match push.token.map(|t| t.trim().to_string()) {
            None => self.push_ntfy()?.and_then(|before| before.token),
            Some(token) if token.is_empty() => None,
            Some(token) => Some(token),
        };
        let value = serde_json::to_value(&push)
            .map_err(|e| EngineError::Invalid(format!("the ntfy push: {e}")))?;
        self.inner.store.set_setting(key, &value)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::tests::empty_engine as engine;

    #[test]
    fn a_code_pairs_one_device_once_and_a_revoked_token_is_refused() {
        let (_dir, engine) = engine();
        let (code, _) = engine.new_pairing_code();
        assert!(engine.pair_device("WRONGCODE0", "Pixel").is_err());
        let (device, token) = engine
            .pair_device(&code.to_lowercase(), " Pixel 7\u{1b}[2J ")
            .unwrap();
        assert_eq!(device.name, "Pixel 7[2J");
        assert!(
            engine.pair_device(&code, "Second").is_err(),
            "a code pairs once"
        );
        assert_eq!(
            engine.device_for_token(&token).unwrap().unwrap().id,
            device.id
        );
        assert!(engine.device_for_token("not-a-token").unwrap().is_none());
        assert!(engine.revoke_device(&device.id).unwrap());
        assert!(engine.device_for_token(&token).unwrap().is_none());
        assert!(engine.devices().unwrap()[0].revoked_at.is_some());
    }

    #[test]
    fn the_phone_inbox_never_listens_on_every_interface() {
        let (_dir, engine) = engine();
        assert!(
            engine
                .set_remote_listen(Some("0.0.0.0:8443".parse().unwrap()))
                .is_err()
        );
        engine
            .set_remote_listen(Some("100.64.0.7:8443".parse().unwrap()))
            .unwrap();
        assert_eq!(
            engine.remote_listen().unwrap(),
            Some("100.64.0.7:8443".parse().unwrap())
        );
        engine.set_remote_listen(None).unwrap();
        assert_eq!(engine.remote_listen().unwrap(), None);
    }

    #[test]
    fn the_ntfy_push_keeps_its_token_out_of_sight_and_refuses_what_is_not_a_topic() {
        use airlock_protocol::NtfyPush;
        let (_dir, engine) = engine();
        let push = |server: &str, topic: &str, token: Option<&str>| NtfyPush {
            server: server.into(),
            topic: topic.into(),
            token: token.map(str::to_string),
        };
        assert!(
            engine
                .set_push_ntfy(Some(push("ntfy.sh", "t", None)))
                .is_err()
        );
        assert!(
            engine
                .set_push_ntfy(Some(push("https://ntfy.sh", "a/b", None)))
                .is_err()
        );
        engine
            .set_push_ntfy(Some(push("https://ntfy.sh/", "my-topic", Some("tk_1"))))
            .unwrap();
        let view = engine.push_ntfy_view().unwrap().unwrap();
        assert_eq!(
            (view.server.as_str(), view.has_token),
            ("https://ntfy.sh", true)
        );
        // Saved again without a token (Settings never shows it back): the token stays.
        engine
            .set_push_ntfy(Some(push("https://ntfy.sh", "other", None)))
            .unwrap();
        assert_eq!(
            engine.push_ntfy().unwrap().unwrap().token.as_deref(),
            Some("tk_1")
        );
        engine
            .set_push_ntfy(Some(push("https://ntfy.sh", "other", Some(""))))
            .unwrap();
        assert_eq!(engine.push_ntfy().unwrap().unwrap().token, None);
        engine.set_push_ntfy(None).unwrap();
        assert!(engine.push_ntfy().unwrap().is_none());
    }
}
