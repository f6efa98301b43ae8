//! The commands the window's UI invokes. Each is a thin call into the engine (no rule lives here)
//! and returns a [`CommandError`] the UI can match on. They run in the resident process; the
//! window forwards every invoke here ([`dispatch`]) over the local API.

pub mod agents;
pub mod chat;
pub mod error;
pub mod history;
pub mod inbox;
pub mod insights;
pub mod remote;
pub mod servers;
pub mod settings;

pub use error::{CommandError, CommandResult};

use crate::shell::Shell;
use error::ErrorCode;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One argument of an invoke, by the name the UI gives it (Tauri's camelCase of the parameter).
fn arg<T: DeserializeOwned>(args: &Value, name: &str) -> CommandResult<T> {
    let value = args.get(name).cloned().unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|error| CommandError {
        code: ErrorCode::Invalid,
        message: format!("invalid argument `{name}`: {error}"),
    })
}

fn reply<T: serde::Serialize>(value: T) -> CommandResult<Value> {
    serde_json::to_value(value).map_err(|error| CommandError {
        code: ErrorCode::Internal,
        message: format!("cannot encode the reply: {error}"),
    })
}

/// The command table: `"name" => module::function(argName, ...)`; every function takes the
/// [`Shell`] first, then its arguments in order.
macro_rules! commands {
    ($($name:literal => $module:ident :: $function:ident ( $($arg:ident),* )),* $(,)?) => {
        /// Every command's name, as the UI invokes it.
        pub const COMMANDS: &[&str] = &[$($name),*];

        /// Runs the command `name` with the invoke's arguments (a JSON object); an unknown
        /// command or a malformed argument is refused before anything runs.
        pub async fn dispatch(shell: &Shell, name: &str, args: &Value) -> CommandResult<Value> {
            match name {
                $($name => reply($module::$function(shell $(, arg(args, stringify!($arg))?)*).await?),)*
                other => Err(CommandError {
                    code: ErrorCode::Invalid,
                    message: format!("no command `{other}`"),
                }),
            }
        }
    };
}

commands! {
    "app_info" => chat::app_info(),
    "list_sessions" => chat::list_sessions(),
    "transcript" => chat::transcript(session),
    "send_message" => chat::send_message(session, text),
    "cancel_turn" => chat::cancel_turn(session),
    "paused" => chat::paused(),
    "set_paused" => chat::set_paused(paused),
    "storage_failure" => chat::storage_failure(),
    "tray_menu" => chat::tray_menu(),
    "take_navigation" => chat::take_navigation(),
    "set_session_mode" => chat::set_session_mode(session, mode),
    "inbox" => inbox::inbox(),
    "decide" => inbox::decide(decisions, channel),
    "answer_elicitation" => inbox::answer_elicitation(approvalId, answer),
    "file_on_disk" => inbox::file_on_disk(approvalId),
    "rule_suggestions" => insights::rule_suggestions(approvalId),
    "grant_offer" => insights::grant_offer(approvalId),
    "insights" => insights::insights(),
    "settings" => settings::settings(),
    "set_workspace_mode" => settings::set_workspace_mode(mode),
    "set_provider" => settings::set_provider(provider),
    "set_provider_key" => settings::set_provider_key(name, key),
    "test_provider" => settings::test_provider(provider, apiKey),
    "set_tool_setting" => settings::set_tool_setting(server, tool, setting),
    "set_from_notification" => settings::set_from_notification(server, tool, allow),
    "add_rule" => settings::add_rule(server, tool, pointer, pattern, effect),
    "remove_rule" => settings::remove_rule(id),
    "list_rules" => settings::rules(),
    "revoke_remembered" => settings::revoke_remembered(id),
    "set_option" => settings::set_option(option),
    "set_workspace" => settings::set_workspace(folder),
    "set_start_at_login" => settings::set_start_at_login(enabled),
    "servers" => servers::servers(),
    "save_server" => servers::save_server(name, config),
    "preview_import_servers" => servers::preview_import_servers(text),
    "server_changes" => servers::server_changes(name),
    "accept_server_changes" => servers::accept_server_changes(name, changes),
    "set_server_enabled" => servers::set_server_enabled(name, enabled),
    "set_server_default" => servers::set_server_default(name, default),
    "set_server_trust" => servers::set_server_trust(name, trust),
    "remove_server" => servers::remove_server(name),
    "import_servers" => servers::import_servers(text),
    "server_log" => servers::server_log(name, lines),
    "audit" => history::audit(limit),
    "agents" => agents::agents(),
    "connect_agent" => agents::connect_agent(agent),
    "disconnect_agent" => agents::disconnect_agent(agent),
    "set_agent_fallback" => agents::set_agent_fallback(agent, fallback),
    "remote" => remote::remote(),
    "set_remote_listen" => remote::set_remote_listen(listen),
    "pair_phone" => remote::pair_phone(),
    "revoke_device" => remote::revoke_device(id),
    "set_push" => remote::set_push(push),
}
