//! Fewer prompts: rules proposed from an inbox item, and the approval insights.

use super::CommandResult;
use crate::shell::Shell;
use airlock_protocol::{Insights, RuleSuggestion};
use tauri::State;

#[tauri::command]
pub async fn rule_suggestions(
    shell: State<'_, Shell>,
    approval_id: String,
) -> CommandResult<Vec<RuleSuggestion>> {
    Ok(shell.engine.suggest_rules(&approval_id)?)
}

#[tauri::command]
pub async fn insights(shell: State<'_, Shell>) -> CommandResult<Insights> {
    Ok(shell.engine.insights()?)
}
