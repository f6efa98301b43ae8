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
