//! Settings → Phone: this machine's addresses to suggest for the phone inbox (the desktop's
//! part of the `remote` command; the engine and `airlock-remote` do the rest).

use std::net::IpAddr;

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
pub fn machine_addresses() -> Vec<String> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => suggested(interfaces.iter().map(if_addrs::Interface::ip)),
        Err(error) => {
            tracing::warn!("could not list this machine's addresses: {error}");
            Vec::new()
        }
    }
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
}
