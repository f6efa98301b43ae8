//! The command table on the local API: `POST /v1/commands/{name}` with the command's arguments
//! runs it through the one dispatcher as [`Caller::Api`] (the commands whose surfaces include
//! the API; the window's own are refused). The answer is the command's response, or
//! `{"error": message, "code": code}` with the code's HTTP status. Also the phone inbox's part
//! of a host (its listener, pairing), which the headless `airlock serve` and the desktop share.

use airlock_core::ServerConfig;
use airlock_engine::Engine;
use airlock_engine::commands::{Caller, Host};
use airlock_mcp::oauth;
use airlock_protocol::{CommandError, CommandResult, ErrorCode, Pairing};
use airlock_remote::RemoteError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub use airlock_protocol::commands::COMMANDS_PATH;

/// The host of the headless API (`airlock serve`, and the API beside the desktop's window): the
/// phone inbox's listener and pairing; nothing of a desktop.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServeHost;

impl Host for ServeHost {
    fn set_remote_listen(&self, engine: &Engine, listen: Option<&str>) -> CommandResult<()> {
        set_remote_listen(engine, listen)
    }

    fn pair_phone(&self, engine: &Engine) -> CommandResult<Pairing> {
        pair_phone(engine)
    }

    async fn sign_in_server(&self, engine: &Engine, name: &str) -> CommandResult<String> {
        sign_in_server(engine, name, &oauth::open_browser).await
    }
}

/// Signs in to the remote server `name` (OAuth; `open_browser` shows the sign-in page), then
/// restarts it so that it connects with its tokens. Says where the tokens are kept, so that
/// Settings can say a file stands in for a missing keyring. A refused sign-in keeps nothing.
pub async fn sign_in_server(
    engine: &Engine,
    name: &str,
    open_browser: oauth::OpenBrowser<'_>,
) -> CommandResult<String> {
    let configs = engine.server_configs().map_err(|e| Caller::Api.error(e))?;
    let Some((_, config, _)) = configs.into_iter().find(|(n, _, _)| n == name) else {
        return Err(CommandError::new(
            ErrorCode::UnknownServer,
            format!("no server named '{name}'"),
        ));
    };
    let ServerConfig::Http { url, .. } = config else {
        return Err(CommandError::invalid(format!(
            "'{name}' is not a remote server (it has no URL to sign in to)"
        )));
    };
    let store = oauth::TokenStore::new(engine.data_dir(), name, &url);
    let announce = |page: &str| tracing::info!(server = %name, "sign-in page: {page}");
    let said = match oauth::sign_in(
        &store,
        &oauth::ClientIdentity::default(),
        open_browser,
        &announce,
        oauth::SIGN_IN_TIMEOUT,
    )
    .await
    {
        Ok(()) => format!(
            "Signed in to {name}; its tokens are kept in {}.",
            store.location()
        ),
        Err(oauth::OAuthError::NotNeeded) => format!("{name} asks for no sign-in."),
        Err(error) => return Err(CommandError::invalid(format!("{name}: {error}"))),
    };
    // Restarted, so that it connects with the new tokens (or shows why it cannot).
    engine
        .set_server_enabled(name, true)
        .map_err(|e| Caller::Api.error(e))?;
    Ok(said)
}

/// Turns the phone inbox on at `listen` (`ADDR:PORT`, spaces around it ignored), or off.
pub fn set_remote_listen(engine: &Engine, listen: Option<&str>) -> CommandResult<()> {
    let listen = listen
        .map(|text| airlock_remote::parse_listen(text.trim()))
        .transpose()
        .map_err(remote_error)?;
    airlock_remote::enable(engine, listen).map_err(remote_error)
}

/// A one-time pairing code with the page's address and the certificate's fingerprint.
pub fn pair_phone(engine: &Engine) -> CommandResult<Pairing> {
    airlock_remote::pairing(engine, engine.data_dir()).map_err(remote_error)
}

/// The phone inbox's refusals: not an address, or one this machine cannot listen on, or the
/// inbox is off — the person picks another or turns it on (`invalid`).
pub fn remote_error(error: RemoteError) -> CommandError {
    match error {
        RemoteError::Engine(error) => Caller::Api.error(error),
        RemoteError::Off => CommandError::invalid("the phone inbox is off; turn it on first"),
        listen @ (RemoteError::Listen { .. } | RemoteError::NotAnAddress(_)) => {
            CommandError::invalid(listen.to_string())
        }
        other => CommandError::new(ErrorCode::Internal, other.to_string()),
    }
}

/// A command's answer over HTTP: its response as JSON, or its error with the code's status.
pub fn http_answer(answer: CommandResult<Value>) -> Response {
    match answer {
        Ok(value) => Json(value).into_response(),
        Err(error) => {
            let status = StatusCode::from_u16(error.code.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (
                status,
                Json(json!({ "error": error.message, "code": error.code })),
            )
                .into_response()
        }
    }
}

/// Runs the command `name` for a caller of the local API (or a team server's listener).
pub async fn run(engine: &Engine, caller: &Caller, name: &str, args: Value) -> Response {
    http_answer(airlock_engine::commands::dispatch(engine, &ServeHost, caller, name, args).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_off_inbox_or_a_bad_address_is_a_refusal_not_a_failure() {
        assert_eq!(remote_error(RemoteError::Off).code, ErrorCode::Invalid);
        let error = remote_error(RemoteError::NotAnAddress("192.168.1.20".into()));
        assert_eq!(error.code, ErrorCode::Invalid);
        assert!(
            error.message.contains("ADDR:PORT"),
            "the message names the form"
        );
    }
}
