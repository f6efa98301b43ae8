//! Fewer prompts: rules proposed from an inbox item, and the approval insights.

use super::CommandResult;
use crate::shell::Shell;
use airlock_protocol::{GrantOffer, Insights, RuleSuggestion};

pub async fn rule_suggestions(
    shell: &Shell,
    approval_id: String,
) -> CommandResult<Vec<RuleSuggestion>> {
    Ok(shell.engine.suggest_rules(&approval_id)?)
}

/// What a grant made from this item covers by default, for the control that makes it.
pub async fn grant_offer(shell: &Shell, approval_id: String) -> CommandResult<GrantOffer> {
    Ok(shell.engine.grant_offer(&approval_id)?)
}

pub async fn insights(shell: &Shell) -> CommandResult<Insights> {
    Ok(shell.engine.insights()?)
}
