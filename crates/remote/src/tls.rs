//! The phone inbox's certificate: self-signed, made on first use for the address it listens on
//! and kept in the data directory (owner-only); the person checks its fingerprint when pairing.

use sha2::{Digest, Sha256};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot make the phone inbox's certificate: {0}")]
    Generate(String),
    #[error("cannot keep the phone inbox's certificate in {path}: {message}")]
    Io { path: PathBuf, message: String },
}

/// A certificate with its private key (PEM) and the SHA-256 fingerprint of its DER bytes.
#[derive(Debug, Clone)]
pub struct Certificate {
    pub cert_pem: String,
    pub key_pem: String,
    pub fingerprint: String,
}

/// The phone inbox's certificate files are named after it; a team server's listener has its
/// own (`team-cert.pem`…), so that the two never replace each other's.
pub const PHONE: &str = "remote";
pub const TEAM: &str = "team";

fn io(path: &Path) -> impl Fn(std::io::Error) -> TlsError + '_ {
    move |e| TlsError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The phone inbox's kept certificate for `ip`, or a new one.
pub fn load_or_create(data_dir: &Path, ip: IpAddr) -> Result<Certificate, TlsError> {
    load_or_create_named(data_dir, PHONE, ip)
}

/// The certificate `name` (`NAME-cert.pem`, `NAME-key.pem`, and `NAME-cert.for`: the address
/// it was made for, another address gets a new one) kept for `ip`, or a new one.
pub fn load_or_create_named(
    data_dir: &Path,
    name: &str,
    ip: IpAddr,
) -> Result<Certificate, TlsError> {
    let (cert, key, made_for) = (
        data_dir.join(format!("{name}-cert.pem")),
        data_dir.join(format!("{name}-key.pem")),
        data_dir.join(format!("{name}-cert.for")),
    );
    if std::fs::read_to_string(&made_for).is_ok_and(|text| text.trim() == ip.to_string())
        && let (Ok(cert_pem), Ok(key_pem)) = (
            std::fs::read_to_string(&cert),
            std::fs::read_to_string(&key),
        )
        && let Some(fingerprint) = fingerprint_of(&cert_pem)
    {
        return Ok(Certificate {
            cert_pem,
            key_pem,
            fingerprint,
        });
    }
    let generated = rcgen::generate_simple_self_signed(vec![ip.to_string(), "localhost".into()])
        .map_err(|e| TlsError::Generate(e.to_string()))?;
    let cert_pem = generated.cert.pem();
    let key_pem = generated.signing_key.serialize_pem();
    write_private(&key, key_pem.as_bytes())?;
    write_private(&cert, cert_pem.as_bytes())?;
    write_private(&made_for, ip.to_string().as_bytes())?;
    let fingerprint = colon_hex(&Sha256::digest(generated.cert.der()));
    Ok(Certificate {
        cert_pem,
        key_pem,
        fingerprint,
    })
}

/// `AB:CD:…`, as browsers show a certificate's SHA-256 fingerprint.
fn colon_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn fingerprint_of(pem: &str) -> Option<String> {
    let body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    let der = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body).ok()?;
    Some(colon_hex(&Sha256::digest(der)))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), TlsError> {
    std::fs::write(path, bytes).map_err(io(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io(path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_certificate_is_kept_for_its_address_and_made_anew_for_another() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path(), "127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(first.fingerprint.len(), 32 * 3 - 1);
        let again = load_or_create(dir.path(), "127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(
            again.fingerprint, first.fingerprint,
            "read back, same fingerprint"
        );
        let other = load_or_create(dir.path(), "127.0.0.2".parse().unwrap()).unwrap();
        assert_ne!(other.fingerprint, first.fingerprint);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("remote-key.pem"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
