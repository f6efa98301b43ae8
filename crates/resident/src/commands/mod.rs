//! The window's commands: the command table's (`airlock_protocol::commands`), run by the one
//! dispatcher (`airlock_engine::commands`) as [`Caller::Window`]. What only the desktop has — the
//! tray, the login entry, where a new window lands, the agents' config files, this machine's
//! addresses — is the [`ShellHost`]'s. The window forwards every invoke here ([`dispatch`]) over
//! the local API.

pub mod agents;
pub mod remote;
#[cfg(test)]
mod servers;

use crate::shell::Shell;
use airlock_engine::Engine;
use airlock_engine::commands::{Caller, Host};
use airlock_protocol::{
    AgentStatus, AppInfo, ConnectReport, DecisionOutcome, DecisionRequest, MemberView, Navigate,
    Pairing, TeamInboxView,
};
pub use airlock_protocol::{CommandError, CommandResult, ErrorCode};
use serde_json::Value;

/// The desktop's side of the commands, over the resident's [`Shell`].
pub struct ShellHost<'a>(pub &'a Shell);

impl Host for ShellHost<'_> {
    fn app_info(&self) -> CommandResult<AppInfo> {
        Ok(self.0.info())
    }

    async fn tray_menu(&self) -> CommandResult<Vec<String>> {
        Ok(self.0.tray_texts().await)
    }

    fn take_navigation(&self) -> CommandResult<Option<Navigate>> {
        Ok(self.0.navigation.take())
    }

    fn start_at_login(&self) -> CommandResult<bool> {
        Ok(self.0.login_entry.is_enabled())
    }

    fn set_start_at_login(&self, enabled: bool) -> CommandResult<bool> {
        self.0
            .login_entry
            .set(enabled)
            .map_err(|error| CommandError::new(ErrorCode::Internal, error.to_string()))
    }

    fn agents(&self, engine: &Engine) -> CommandResult<Vec<AgentStatus>> {
        agents::statuses(engine)
    }

    fn connect_agent(&self, engine: &Engine, agent: &str) -> CommandResult<ConnectReport> {
        agents::connect(engine, agent)
    }

    fn disconnect_agent(&self, agent: &str) -> CommandResult<ConnectReport> {
        agents::disconnect(agent)
    }

    fn set_remote_listen(&self, engine: &Engine, listen: Option<&str>) -> CommandResult<()> {
        airlock_api::commands::set_remote_listen(engine, listen)
    }

    fn pair_phone(&self, engine: &Engine) -> CommandResult<Pairing> {
        airlock_api::commands::pair_phone(engine)
    }

    fn machine_addresses(&self) -> Vec<String> {
        remote::machine_addresses()
    }

    fn grants_changed(&self) {
        self.0.grants_changed.notify_one();
    }

    async fn sign_in_server(&self, engine: &Engine, name: &str) -> CommandResult<String> {
        airlock_api::commands::sign_in_server(engine, name, &airlock_mcp::oauth::open_browser).await
    }

    async fn team_inbox(&self) -> CommandResult<Option<TeamInboxView>> {
        Ok(self.0.team.view())
    }

    async fn set_team_server(
        &self,
        url: &str,
        token: &str,
        certificate: Option<&str>,
    ) -> CommandResult<TeamInboxView> {
        self.0.team.set(url, token, certificate).await
    }

    fn forget_team_server(&self) -> CommandResult<bool> {
        self.0.team.forget()
    }

    async fn team_decide(
        &self,
        decisions: Vec<DecisionRequest>,
    ) -> CommandResult<Vec<DecisionOutcome>> {
        self.0.team.decide(decisions).await
    }

    async fn team_server_members(&self) -> CommandResult<Vec<MemberView>> {
        self.0.team.members().await
    }

    async fn team_delegate(
        &self,
        approval_id: &str,
        to: &str,
        note: Option<&str>,
    ) -> CommandResult<()> {
        self.0.team.delegate(approval_id, to, note).await
    }
}

/// Runs the window's command `name` with the invoke's arguments (a JSON object); an unknown
/// command, a malformed argument or a command that is not the window's is refused before
/// anything runs.
pub async fn dispatch(shell: &Shell, name: &str, args: &Value) -> CommandResult<Value> {
    airlock_engine::commands::dispatch(
        &shell.engine,
        &ShellHost(shell),
        &Caller::Window,
        name,
        args.clone(),
    )
    .await
}
