//! Settings → Phone: the paired phone inbox (where it listens, pairing, devices) and the ntfy
//! push. The engine and `airlock-remote` decide; these only parse what the UI sends.

use super::error::ErrorCode;
use super::{CommandError, CommandResult};
use crate::shell::Shell;
use airlock_protocol::{DeviceView, NtfyPush, NtfyPushView, Pairing};
use airlock_remote::RemoteError;
use serde::Serialize;
use std::net::{IpAddr, SocketAddr};
use ts_rs::TS;

#[derive(Debug, Clone, Serialize, TS)]
pub struct RemoteView {
    /// `ADDR:PORT` the phone inbox listens on; null when it is off.
    pub listen: Option<String>,
    pub devices: Vec<DeviceView>,
    /// The ntfy push, null when it is off.
    pub push: Option<NtfyPushView>,
    /// This machine's addresses to suggest (LAN, a VPN's such as Tailscale's): IPv4 first, no
    /// loopback or link-local ones.
    pub addresses: Vec<String>,
}

/// The addresses worth suggesting, IPv4 first, each once, in the order the system lists them.
fn suggested(ips: impl IntoIterator<Item = IpAddr>) -> Vec<String> {
    let mut ips: Vec<IpAddr> = ips
        .into_iter()
        .filter(|ip| match ip {
            IpAddr::V4(v4) => !(v4.is_loopback() || v4.is_link_local() || v4.is_unspecified()),
            IpAddr::V6(v6) => {
                !(v6.is_loopback() || v6.is_unicast_link_local() || v6.is_unspecified())
            }
        })
        .collect();
    // Stable: keeps the system's order within each family.
    ips.sort_by_key(IpAddr::is_ipv6);
    let mut seen = Vec::new();
    for ip in ips {
        if !seen.contains(&ip) {
            seen.push(ip);
        }
    }
    seen.iter().map(IpAddr::to_string).collect()
}

/// This machine's addresses; none when the system does not list them (they are only hints).
fn machine_addresses() -> Vec<String> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => suggested(interfaces.iter().map(if_addrs::Interface::ip)),
        Err(error) => {
            tracing::warn!("could not list this machine's addresses: {error}");
            Vec::new()
        }
    }
}

/// What the person typed in the address field, without the spaces around it.
fn parse_listen(text: &str) -> CommandResult<SocketAddr> {
    airlock_remote::parse_listen(text.trim()).map_err(remote_error)
}

fn remote_error(error: RemoteError) -> CommandError {
    match error {
        RemoteError::Engine(error) => error.into(),
        RemoteError::Off => CommandError {
            code: ErrorCode::Invalid,
            message: "the phone inbox is off; turn it on first".into(),
        },
        // Not an address, or one this machine cannot listen on: the person picks another.
        listen @ (RemoteError::Listen { .. } | RemoteError::NotAnAddress(_)) => CommandError {
            code: ErrorCode::Invalid,
            message: listen.to_string(),
        },
        other => CommandError {
            code: ErrorCode::Internal,
            message: other.to_string(),
        },
    }
}

pub async fn remote(shell: &Shell) -> CommandResult<RemoteView> {
    let engine = &shell.engine;
    Ok(RemoteView {
        listen: engine.remote_listen()?.map(|addr| addr.to_string()),
        devices: engine.devices()?,
        push: engine.push_ntfy_view()?,
        addresses: machine_addresses(),
    })
}

/// Turns the phone inbox on at `listen` (`ADDR:PORT`), or off with null.
pub async fn set_remote_listen(shell: &Shell, listen: Option<String>) -> CommandResult<()> {
    let listen = listen.as_deref().map(parse_listen).transpose()?;
    airlock_remote::enable(&shell.engine, listen).map_err(remote_error)
}

/// A one-time pairing code with the page's address and the certificate's fingerprint.
pub async fn pair_phone(shell: &Shell) -> CommandResult<Pairing> {
    airlock_remote::pairing(&shell.engine, shell.engine.data_dir()).map_err(remote_error)
}

pub async fn revoke_device(shell: &Shell, id: String) -> CommandResult<bool> {
    Ok(shell.engine.revoke_device(&id)?)
}

/// Sets the ntfy push (null turns it off; a null token keeps the saved one, "" removes it).
pub async fn set_push(shell: &Shell, push: Option<NtfyPush>) -> CommandResult<()> {
    Ok(shell.engine.set_push_ntfy(push)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn suggests_reachable_addresses_ipv4_first() {
        let ips = [
            IpAddr::V6(Ipv6Addr::LOCALHOST),
            IpAddr::V6("fe80::1".parse().unwrap_or(Ipv6Addr::UNSPECIFIED)),
            IpAddr::V6("fd7a:115c:a1e0::1".parse().unwrap_or(Ipv6Addr::UNSPECIFIED)),
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::new(192, 168, 1, 20)),
            IpAddr::V4(Ipv4Addr::new(169, 254, 3, 4)),
            IpAddr::V4(Ipv4Addr::new(100, 64, 0, 7)),
            IpAddr::V4(Ipv4Addr::new(192, 168, 1, 20)),
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        ];
        assert_eq!(
            suggested(ips),
            ["192.168.1.20", "100.64.0.7", "fd7a:115c:a1e0::1"]
        );
    }

    #[test]
    fn parses_addr_and_port_or_says_what_it_wants() {
        assert_eq!(
            parse_listen(" 100.64.0.7:8443 ").ok(),
            Some(SocketAddr::from(([100, 64, 0, 7], 8443)))
        );
        assert!(parse_listen("[fd7a::1]:8443").is_ok());
        let error = parse_listen("192.168.1.20").err();
        assert_eq!(error.as_ref().map(|e| e.code), Some(ErrorCode::Invalid));
        assert!(
            error.is_some_and(|e| e.message.contains("ADDR:PORT")),
            "the message names the form"
        );
    }

    #[test]
    fn an_off_inbox_is_a_refusal_not_a_failure() {
        assert_eq!(remote_error(RemoteError::Off).code, ErrorCode::Invalid);
    }
}
