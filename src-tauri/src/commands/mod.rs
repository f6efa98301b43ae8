//! The commands the UI invokes. Each is a thin call into the engine (no rule lives here) and
//! returns a [`CommandError`] the UI can match on.

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

/// Every command, for `Builder::invoke_handler`.
#[macro_export]
macro_rules! command_handler {
    () => {
        tauri::generate_handler![
            $crate::commands::chat::app_info,
            $crate::commands::chat::list_sessions,
            $crate::commands::chat::transcript,
            $crate::commands::chat::send_message,
            $crate::commands::chat::cancel_turn,
            $crate::commands::chat::paused,
            $crate::commands::chat::set_paused,
            $crate::commands::chat::storage_failure,
            $crate::commands::chat::tray_menu,
            $crate::commands::chat::take_navigation,
            $crate::commands::chat::set_session_mode,
            $crate::commands::inbox::inbox,
            $crate::commands::inbox::decide,
            $crate::commands::insights::rule_suggestions,
            $crate::commands::insights::insights,
            $crate::commands::inbox::answer_elicitation,
            $crate::commands::settings::settings,
            $crate::commands::settings::set_workspace_mode,
            $crate::commands::settings::set_provider,
            $crate::commands::settings::set_tool_setting,
            $crate::commands::settings::set_from_notification,
            $crate::commands::settings::add_rule,
            $crate::commands::settings::revoke_remembered,
            $crate::commands::settings::set_option,
            $crate::commands::settings::set_start_at_login,
            $crate::commands::servers::servers,
            $crate::commands::servers::save_server,
            $crate::commands::servers::preview_import_servers,
            $crate::commands::servers::server_changes,
            $crate::commands::servers::accept_server_changes,
            $crate::commands::servers::set_server_enabled,
            $crate::commands::servers::set_server_default,
            $crate::commands::servers::set_server_trust,
            $crate::commands::servers::remove_server,
            $crate::commands::servers::import_servers,
            $crate::commands::servers::server_log,
            $crate::commands::history::audit,
            $crate::commands::agents::agents,
            $crate::commands::agents::connect_agent,
            $crate::commands::agents::disconnect_agent,
            $crate::commands::agents::set_agent_fallback,
            $crate::commands::remote::remote,
            $crate::commands::remote::set_remote_listen,
            $crate::commands::remote::pair_phone,
            $crate::commands::remote::revoke_device,
            $crate::commands::remote::set_push,
        ]
    };
}
