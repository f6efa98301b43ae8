//! The paired phone inbox: an HTTPS server on the address the person picked (never every
//! interface), with a certificate made on first use. A device pairs with a one-time code and
//! gets its own token; with it, it can only list what waits, approve, deny with a reason, edit
//! (schema-checked) and answer forms — every other path answers 403, and a missing, wrong or
//! revoked token 401 (and revoking a device ends its open event streams). Requests must name
//! the address it serves as their Host. Wrong pairing codes are rate-limited per source; every
//! decision is audited with the device's name.

mod page;
pub mod push;
mod routes;
pub mod tls;

use airlock_engine::Engine;
use airlock_protocol::Pairing;
use std::net::SocketAddr;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("the phone inbox is off; turn it on with `airlock remote enable --listen ADDR:PORT`")]
    Off,
    #[error("'{0}' is not ADDR:PORT (e.g. 192.168.1.20:8443 or 100.64.0.7:8443)")]
    NotAnAddress(String),
    #[error("the phone inbox cannot listen on {addr}: {message}")]
    Listen { addr: SocketAddr, message: String },
    #[error(transparent)]
    Engine(#[from] airlock_engine::EngineError),
}

/// A running phone inbox; dropping it stops it.
#[derive(Debug)]
pub struct RemoteServer {
    pub addr: SocketAddr,
    handle: axum_server::Handle<SocketAddr>,
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        self.handle.shutdown();
    }
}

/// Starts the phone inbox on `listen` (HTTPS).
pub async fn start(
    engine: Engine,
    data_dir: &Path,
    listen: SocketAddr,
) -> Result<RemoteServer, RemoteError> {
    let certificate = tls::load_or_create(data_dir, listen.ip())?;
    serve_https(certificate, listen, "the phone inbox", move |addr| {
        routes::router(engine, addr)
    })
    .await
}

/// Serves the routes `app` makes (for the address bound) over HTTPS with `certificate` on
/// `listen` until the returned server is dropped: the phone inbox's, and a team server's
/// listener on an address other than loopback (`airlock serve --listen`). `what` names it in
/// the log when it stops.
pub async fn serve_https(
    certificate: tls::Certificate,
    listen: SocketAddr,
    what: &'static str,
    app: impl FnOnce(SocketAddr) -> axum::Router,
) -> Result<RemoteServer, RemoteError> {
    let config = axum_server::tls_rustls::RustlsConfig::from_pem(
        certificate.cert_pem.into_bytes(),
        certificate.key_pem.into_bytes(),
    )
    .await
    .map_err(|e| listen_error(listen, e))?;
    let listener = std::net::TcpListener::bind(listen).map_err(|e| listen_error(listen, e))?;
    let addr = listener.local_addr().map_err(|e| listen_error(listen, e))?;
    let handle = axum_server::Handle::new();
    let server = axum_server::from_tcp_rustls(listener, config)
        .map_err(|e| listen_error(listen, e))?
        .handle(handle.clone());
    let app = app(addr);
    tokio::spawn(async move {
        if let Err(error) = server
            .serve(app.into_make_service_with_connect_info::<SocketAddr>())
            .await
        {
            tracing::warn!("{what} stopped: {error}");
        }
    });
    Ok(RemoteServer { addr, handle })
}

fn listen_error(addr: SocketAddr, error: impl std::fmt::Display) -> RemoteError {
    RemoteError::Listen {
        addr,
        message: error.to_string(),
    }
}

/// `ADDR:PORT` as the person typed it (Settings, the local API).
pub fn parse_listen(text: &str) -> Result<SocketAddr, RemoteError> {
    text.parse()
        .map_err(|_| RemoteError::NotAnAddress(text.to_string()))
}

/// Switches the phone inbox on at `listen` (or off), after checking this machine can listen
/// there: an address that is not this machine's, or a port in use, is refused now with the
/// reason, instead of a listener that silently never starts.
pub fn enable(engine: &Engine, listen: Option<SocketAddr>) -> Result<(), RemoteError> {
    if let Some(addr) = listen
        && !addr.ip().is_unspecified()
        && engine.remote_listen()? != Some(addr)
    {
        std::net::TcpListener::bind(addr).map_err(|e| RemoteError::Listen {
            addr,
            message: e.to_string(),
        })?;
    }
    Ok(engine.set_remote_listen(listen)?)
}

/// A new pairing code with the page's address and the certificate's fingerprint: what
/// `airlock remote pair` prints and Settings shows as a QR code.
pub fn pairing(engine: &Engine, data_dir: &Path) -> Result<Pairing, RemoteError> {
    let listen = engine.remote_listen()?.ok_or(RemoteError::Off)?;
    let certificate = tls::load_or_create(data_dir, listen.ip())?;
    let (code, expires_at) = engine.new_pairing_code();
    Ok(Pairing {
        url: format!("https://{listen}"),
        code,
        fingerprint: certificate.fingerprint,
        expires_at,
    })
}
