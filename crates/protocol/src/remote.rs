//! The paired phone inbox: its devices and how a new one pairs.

use serde::{Deserialize, Serialize};

/// A device paired with the phone inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceView {
    pub id: String,
    pub name: String,
    pub created_at: String,
    pub last_used: Option<String>,
    /// Set once revoked: its token is refused.
    pub revoked_at: Option<String>,
}

/// What a person needs to pair a device: the page's address, a one-time code and the
/// certificate's fingerprint (to check the page is Airlock's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Pairing {
    pub url: String,
    pub code: String,
    pub fingerprint: String,
    /// RFC 3339: the code is refused after this.
    pub expires_at: String,
}

/// A push to the person's own ntfy topic when approvals wait ("3 approvals waiting"), opening
/// the paired phone page on the newest item. Only the count leaves the machine: no tool names,
/// no arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NtfyPush {
    /// The ntfy server, e.g. `https://ntfy.sh` or a self-hosted one.
    pub server: String,
    pub topic: String,
    /// An access token for a protected topic; never shown again once saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// The push as Settings shows it: the token only as whether one is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NtfyPushView {
    pub server: String,
    pub topic: String,
    pub has_token: bool,
}
