// A real team server for the tests of the person's team link (`src/team_link.rs`'s unit tests
// and `tests/team_keyring.rs`): the engine and its HTTPS listener, as `airlock serve --listen`
// runs them; `ana` (approver, group `release`) and `root`; Claude Code's Bash calls go to
// `release`. One copy: a module of the keyring test, `include!`d by the unit tests.

use airlock_api::host::Host;
use airlock_protocol::TeamRole;
use std::net::SocketAddr;

/// The server, its URL, its certificate and ana's token.
pub(crate) struct TeamServer {
    pub(crate) host: Host,
    pub(crate) url: String,
    pub(crate) certificate: String,
    pub(crate) ana: String,
    _dir: tempfile::TempDir,
}

pub(crate) async fn team_server() -> TeamServer {
    let dir = tempfile::tempdir().unwrap();
    let (host, served) = Host::start(
        &dir.path().join("data"),
        Some(dir.path().join("workspace")),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap();
    tokio::spawn(served);
    let (addr, certificate) = host
        .serve_team(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    host.engine.team_init("root").unwrap();
    let ana = host
        .engine
        .team_add("root", "ana", TeamRole::Approver, vec!["release".into()])
        .unwrap()
        .token;
    host.engine
        .team_route(
            "root",
            "claude-code",
            "Bash",
            None,
            None,
            "release",
            None,
            None,
            None,
        )
        .unwrap();
    TeamServer {
        host,
        url: format!("https://{addr}"),
        certificate: certificate.cert_pem,
        ana,
        _dir: dir,
    }
}
