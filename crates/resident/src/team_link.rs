//! The person's team server beside this desktop's own engine (Settings → Team server,
//! docs/TEAM.md): its address and certificate in `team-server.json` in the data directory, the
//! person's member token in the OS keyring (never in a file or the store), the items the server
//! routes to them read every [`POLL`] with that token, and their decisions sent there, as them.
//! The local engine keeps serving the person's own agents: nothing here reaches it.

use airlock_api::{ApiClient, ClientError};
use airlock_protocol::commands as cmd;
use airlock_protocol::{
    CommandError, CommandResult, DecisionOutcome, DecisionRequest, ErrorCode, MemberView,
    TeamInboxView,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// How often the team server's inbox is read.
pub const POLL: Duration = Duration::from_secs(2);

/// The server's address and certificate, in the data directory (the token is not there).
const CONFIG_FILE: &str = "team-server.json";

#[derive(Debug, Serialize, Deserialize)]
struct Saved {
    url: String,
    certificate: Option<String>,
}

/// Where the person's member token is kept.
pub trait TokenKeeper: Send + Sync + std::fmt::Debug {
    fn load(&self) -> Result<Option<String>, String>;
    fn store(&self, token: &str) -> Result<(), String>;
    fn forget(&self) -> Result<(), String>;
}

/// The OS keyring (the `keyring` crate, as the provider's key and the remote servers' tokens):
/// one entry per data directory.
#[derive(Debug)]
pub struct Keyring {
    account: String,
}

/// The keyring's service name of every Airlock entry (as crates/engine/src/secrets.rs).
const KEYRING_SERVICE: &str = "airlock";

impl Keyring {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            account: format!("team-token@{}", data_dir.display()),
        }
    }

    fn entry(&self) -> Result<keyring::Entry, String> {
        keyring::Entry::new(KEYRING_SERVICE, &self.account).map_err(unavailable)
    }
}

/// The keyring's error (its errors never carry the secret).
fn unavailable(error: keyring::Error) -> String {
    format!(
        "the OS keyring cannot keep the team token ({error}); on Linux it needs a Secret Service such as gnome-keyring"
    )
}

impl TokenKeeper for Keyring {
    fn load(&self) -> Result<Option<String>, String> {
        match self.entry()?.get_password() {
            Ok(token) => Ok(Some(token)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(unavailable(error)),
        }
    }

    fn store(&self, token: &str) -> Result<(), String> {
        self.entry()?.set_password(token).map_err(unavailable)
    }

    fn forget(&self) -> Result<(), String> {
        match self.entry()?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(unavailable(error)),
        }
    }
}

/// A server set: where, and a client that carries the person's token.
#[derive(Debug, Clone)]
struct Linked {
    url: String,
    client: ApiClient,
}

impl Linked {
    fn new(url: &str, token: &str, certificate: Option<&str>) -> CommandResult<Self> {
        let client = ApiClient::remote(url, token, certificate.map(str::as_bytes))
            .map_err(|error| refused(url, &error))?;
        Ok(Self {
            url: url.to_string(),
            client,
        })
    }
}

/// The server's refusal (or silence) as the window reads it.
fn refused(url: &str, error: &ClientError) -> CommandError {
    let code = match error {
        ClientError::Refused { code, .. } => {
            serde_json::from_value(serde_json::json!(code)).unwrap_or(ErrorCode::NotAllowed)
        }
        _ => ErrorCode::Internal,
    };
    CommandError::new(code, format!("the team server {url}: {error}"))
}

fn internal(message: String) -> CommandError {
    CommandError::new(ErrorCode::Internal, message)
}

/// The person's team server, its last inbox read, and the poller's wake-up.
#[derive(Debug)]
pub struct TeamLink {
    data_dir: PathBuf,
    tokens: Box<dyn TokenKeeper>,
    linked: Mutex<Option<Linked>>,
    /// What the window, the tray and the notifications show: `None` when no server is set.
    view: watch::Sender<Option<TeamInboxView>>,
    /// Wakes the poller (a server set, a decision made).
    wake: Notify,
}

impl TeamLink {
    /// The server kept in `data_dir` with its token from `tokens`, if one was set; a server
    /// that cannot be read back (its token gone from the keyring) is not set, and says why in
    /// the log.
    pub fn open(data_dir: &Path, tokens: Box<dyn TokenKeeper>) -> Self {
        let linked = match restore(data_dir, tokens.as_ref()) {
            Ok(linked) => linked,
            Err(error) => {
                tracing::warn!("the team server is not set: {error}");
                None
            }
        };
        let view = linked.as_ref().map(|linked| TeamInboxView {
            url: linked.url.clone(),
            items: Vec::new(),
            error: None,
        });
        Self {
            data_dir: data_dir.to_path_buf(),
            tokens,
            linked: Mutex::new(linked),
            view: watch::Sender::new(view),
            wake: Notify::new(),
        }
    }

    fn current(&self) -> Option<Linked> {
        self.linked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets the server: kept only once it accepts the token (its inbox read with it).
    pub async fn set(
        &self,
        url: &str,
        token: &str,
        certificate: Option<&str>,
    ) -> CommandResult<TeamInboxView> {
        let url = url.trim().trim_end_matches('/');
        let token = token.trim();
        if token.is_empty() {
            return Err(CommandError::new(
                ErrorCode::Invalid,
                "paste your member token (`airlock team add` printed it)",
            ));
        }
        let linked = Linked::new(url, token, certificate)?;
        let items = linked
            .client
            .call(&cmd::Inbox {})
            .await
            .map_err(|error| refused(url, &error))?;
        self.tokens.store(token).map_err(internal)?;
        let saved = Saved {
            url: url.to_string(),
            certificate: certificate.map(str::to_string),
        };
        write_private(&self.data_dir.join(CONFIG_FILE), &saved).map_err(internal)?;
        *self.linked.lock().unwrap_or_else(|p| p.into_inner()) = Some(linked);
        let view = TeamInboxView {
            url: url.to_string(),
            items,
            error: None,
        };
        self.view.send_replace(Some(view.clone()));
        self.wake.notify_one();
        Ok(view)
    }

    /// Forgets the server and the token; whether one was set.
    pub fn forget(&self) -> CommandResult<bool> {
        let was = self
            .linked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .is_some();
        self.view.send_replace(None);
        match std::fs::remove_file(self.data_dir.join(CONFIG_FILE)) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(internal(error.to_string())),
        }
        self.tokens.forget().map_err(internal)?;
        Ok(was)
    }

    /// What waits on the server, as last read.
    pub fn view(&self) -> Option<TeamInboxView> {
        self.view.borrow().clone()
    }

    /// Follows the view (the tray, the notifications).
    pub fn subscribe(&self) -> watch::Receiver<Option<TeamInboxView>> {
        self.view.subscribe()
    }

    /// The server set, or why nothing can be done there.
    fn server(&self) -> CommandResult<Linked> {
        self.current().ok_or_else(|| {
            CommandError::new(
                ErrorCode::Invalid,
                "no team server is set (Settings → Team server)",
            )
        })
    }

    /// Decides on the server as the person (their token): the server's own decision path,
    /// roles and quorum; its refusal is the answer. The inbox is read again right after.
    pub async fn decide(
        &self,
        decisions: Vec<DecisionRequest>,
    ) -> CommandResult<Vec<DecisionOutcome>> {
        let linked = self.server()?;
        let outcomes = linked
            .client
            .call(&cmd::Decide {
                decisions,
                channel: None,
            })
            .await
            .map_err(|error| refused(&linked.url, &error))?;
        self.refresh().await;
        Ok(outcomes)
    }

    /// The server's members (never their tokens), read there with the person's token: whom
    /// "Ask someone else…" offers.
    pub async fn members(&self) -> CommandResult<Vec<MemberView>> {
        let linked = self.server()?;
        linked
            .client
            .call(&cmd::TeamMembers {})
            .await
            .map_err(|error| refused(&linked.url, &error))
    }

    /// Hands an item to another member on the server, as the person: the server's own rule (a
    /// member hands on only what is theirs to decide) and audit. The inbox is read again right
    /// after (the item is no longer theirs).
    pub async fn delegate(
        &self,
        approval_id: &str,
        to: &str,
        note: Option<&str>,
    ) -> CommandResult<()> {
        let linked = self.server()?;
        linked
            .client
            .call(&cmd::Delegate {
                approval_id: approval_id.to_string(),
                to: to.to_string(),
                note: note.map(str::to_string),
            })
            .await
            .map_err(|error| refused(&linked.url, &error))?;
        self.refresh().await;
        Ok(())
    }

    /// Reads the server's inbox once; the view as it is now. A failed read keeps the items
    /// last read and says why.
    pub async fn refresh(&self) -> Option<TeamInboxView> {
        let linked = self.current()?;
        let read = linked.client.call(&cmd::Inbox {}).await;
        // Forgotten or changed meanwhile: this read is not the current server's.
        if self.current().map(|now| now.url) != Some(linked.url.clone()) {
            return self.view();
        }
        let view = match read {
            Ok(items) => TeamInboxView {
                url: linked.url,
                items,
                error: None,
            },
            Err(error) => TeamInboxView {
                items: self.view().map(|view| view.items).unwrap_or_default(),
                error: Some(refused(&linked.url, &error).message),
                url: linked.url,
            },
        };
        self.view.send_replace(Some(view.clone()));
        Some(view)
    }

    /// Reads the server's inbox every [`POLL`], and at once when woken, until aborted.
    pub fn poll(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                self.refresh().await;
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = self.wake.notified() => {}
                }
            }
        })
    }
}

fn restore(data_dir: &Path, tokens: &dyn TokenKeeper) -> Result<Option<Linked>, String> {
    let path = data_dir.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("{}: {error}", path.display())),
    };
    let saved: Saved =
        serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
    let Some(token) = tokens.load()? else {
        return Err(format!(
            "no token for {} in the keyring; set the server again",
            saved.url
        ));
    };
    Linked::new(&saved.url, &token, saved.certificate.as_deref())
        .map(Some)
        .map_err(|error| error.message)
}

/// Writes `value` as JSON readable by its owner only (0600 from creation on Unix), whole or
/// not at all.
fn write_private(path: &Path, value: &impl Serialize) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    let temporary = path.with_extension("json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).map_err(fail)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    std::fs::rename(&temporary, path).map_err(fail)
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use airlock_api::host::Host;
    use airlock_protocol::TeamRole;

    /// A token kept in memory (the keyring's stand-in: the OS keyring is tested in
    /// crates/cli/tests/keyring.rs).
    #[derive(Debug, Default, Clone)]
    pub(crate) struct Memory(Arc<Mutex<Option<String>>>);

    impl TokenKeeper for Memory {
        fn load(&self) -> Result<Option<String>, String> {
            Ok(self.0.lock().unwrap().clone())
        }
        fn store(&self, token: &str) -> Result<(), String> {
            *self.0.lock().unwrap() = Some(token.to_string());
            Ok(())
        }
        fn forget(&self) -> Result<(), String> {
            *self.0.lock().unwrap() = None;
            Ok(())
        }
    }

    mod support {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/team_server.rs"
        ));
    }
    use support::team_server;

    /// An agent's call on the team server, waiting for a person; its answer when it comes.
    fn agent_call(
        host: &Host,
        command: &str,
    ) -> tokio::task::JoinHandle<airlock_protocol::AgentCallState> {
        let engine = host.engine.clone();
        let call: airlock_protocol::AgentCall = serde_json::from_value(serde_json::json!({
            "agent": "claude-code", "agent_session": "remote-1", "tool": "Bash",
            "input": {"command": command}, "tool_use_id": command, "wait_ms": 60_000,
        }))
        .unwrap();
        tokio::spawn(async move { engine.agent_call_with_state(call).await.unwrap() })
    }

    async fn until_view(
        link: &TeamLink,
        what: &str,
        check: impl Fn(&TeamInboxView) -> bool,
    ) -> TeamInboxView {
        let mut view = link.subscribe();
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                if let Some(now) = view.borrow_and_update().clone()
                    && check(&now)
                {
                    return now;
                }
                view.changed().await.unwrap();
            }
        })
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_persons_team_inbox_is_read_and_decided_on_the_team_server_with_their_token() {
        let server = team_server().await;
        let desktop = tempfile::tempdir().unwrap();
        let tokens = Memory::default();
        let link = Arc::new(TeamLink::open(desktop.path(), Box::new(tokens.clone())));
        assert_eq!(link.view(), None, "no server set");

        // A token the server does not know is refused, and nothing is kept.
        let wrong = link
            .set(&server.url, &"0".repeat(64), Some(&server.certificate))
            .await
            .unwrap_err();
        assert!(wrong.message.contains("bearer token"), "{}", wrong.message);
        assert_eq!(tokens.load().unwrap(), None);
        assert!(!desktop.path().join(CONFIG_FILE).exists());

        let set = link
            .set(&server.url, &server.ana, Some(&server.certificate))
            .await
            .unwrap();
        assert_eq!(set.url, server.url);
        assert!(set.items.is_empty());
        assert_eq!(tokens.load().unwrap().as_deref(), Some(server.ana.as_str()));
        let saved = std::fs::read_to_string(desktop.path().join(CONFIG_FILE)).unwrap();
        assert!(
            !saved.contains(&server.ana),
            "the token was written to a file"
        );
        let poller = link.clone().poll();

        // A call routed to ana's group appears in her desktop's team inbox.
        let answer = agent_call(&server.host, "make deploy");
        let view = until_view(&link, "the routed call on the desktop", |view| {
            view.items.len() == 1
        })
        .await;
        let item = &view.items[0];
        assert_eq!(item.server, "claude-code");
        assert_eq!(item.args["command"], "make deploy");

        // Decided from the desktop: on the team server, as ana.
        let outcomes = link
            .decide(vec![DecisionRequest::approve(item.approval_id.clone())])
            .await
            .unwrap();
        assert_eq!(outcomes[0].error, None);
        let state = answer.await.unwrap();
        assert_eq!(
            serde_json::to_value(&state).unwrap()["verdict"],
            "allow",
            "{state:?}"
        );
        let audit = server.host.engine.audit(100).unwrap();
        let approved = audit.iter().find(|row| row.action == "approved").unwrap();
        assert_eq!(approved.detail["person"], "ana");
        until_view(&link, "the decided item gone", |view| view.items.is_empty()).await;

        // Opened again (a restart), the server and its token are read back.
        let again = TeamLink::open(desktop.path(), Box::new(tokens.clone()));
        assert_eq!(again.refresh().await.unwrap().url, server.url);

        assert!(link.forget().unwrap());
        assert_eq!(link.view(), None);
        assert_eq!(tokens.load().unwrap(), None);
        assert!(!desktop.path().join(CONFIG_FILE).exists());
        let refused = link
            .decide(vec![DecisionRequest::approve("x".to_string())])
            .await
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::Invalid);
        poller.abort();
    }

    /// Issue 31: "Ask someone else…" on a team item. The members are read on the server with
    /// the person's token, and the item handed on there as them: it leaves their inbox, reaches
    /// the other member's with the note, and a name the server does not know changes nothing.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_team_item_is_handed_to_another_member_on_the_server_as_the_person() {
        let server = team_server().await;
        let ben = server
            .host
            .engine
            .team_add("root", "ben", TeamRole::Approver, Vec::new())
            .unwrap()
            .member;
        let desktop = tempfile::tempdir().unwrap();
        let link = Arc::new(TeamLink::open(desktop.path(), Box::new(Memory::default())));
        let not_set = link.members().await.unwrap_err();
        assert_eq!(not_set.code, ErrorCode::Invalid);
        link.set(&server.url, &server.ana, Some(&server.certificate))
            .await
            .unwrap();
        let mut names: Vec<String> = link
            .members()
            .await
            .unwrap()
            .into_iter()
            .map(|member| member.name)
            .collect();
        names.sort();
        assert_eq!(names, ["ana", "ben", "root"]);

        // Read by hand, not by the poller: a poll racing the delegation could show a stale read.
        let _answer = agent_call(&server.host, "make deploy");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let id = loop {
            if let Some(item) = link
                .refresh()
                .await
                .and_then(|view| view.items.first().cloned())
            {
                break item.approval_id;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the routed call never came"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };

        let unknown = link.delegate(&id, "nobody", None).await.unwrap_err();
        assert!(unknown.message.contains("nobody"), "{}", unknown.message);
        assert_eq!(link.view().unwrap().items.len(), 1, "{unknown:?}");

        link.delegate(&id, "ben", Some("you ran the last deploy"))
            .await
            .unwrap();
        assert!(link.view().unwrap().items.is_empty(), "still ana's");
        let bens = server.host.engine.inbox_for(&ben).unwrap();
        assert_eq!(
            bens.iter()
                .map(|item| &item.approval_id)
                .collect::<Vec<_>>(),
            [&id]
        );
        let audit = server.host.engine.audit(100).unwrap();
        let handed = audit
            .iter()
            .find(|row| row.action.contains("delegat"))
            .unwrap_or_else(|| panic!("no delegation audited: {audit:?}"));
        assert_eq!(handed.actor, "ana", "{handed:?}");
        assert!(
            handed
                .detail
                .to_string()
                .contains("you ran the last deploy"),
            "{handed:?}"
        );
    }
}
