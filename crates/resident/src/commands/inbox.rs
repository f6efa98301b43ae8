//! Inbox: every pending item, and decisions on one or many of them.

use super::{CommandError, CommandResult};
use crate::shell::Shell;
use airlock_core::DecidedBy;
use airlock_engine::{DecisionRequest, ElicitationAnswer, InboxItem};
use airlock_protocol::FileOnDisk;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which part of the window decided, recorded in the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    Inbox,
    Chat,
}

impl From<Channel> for DecidedBy {
    fn from(channel: Channel) -> Self {
        match channel {
            Channel::Inbox => DecidedBy::Inbox,
            Channel::Chat => DecidedBy::Chat,
        }
    }
}

/// The outcome of one decision of a batch: each succeeds or is refused on its own.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DecisionOutcome {
    pub approval_id: String,
    pub error: Option<CommandError>,
}

pub async fn inbox(shell: &Shell) -> CommandResult<Vec<InboxItem>> {
    Ok(shell.engine.inbox()?)
}

/// What is on disk where a pending write would write: the UI shows the write as a diff.
pub async fn file_on_disk(shell: &Shell, approval_id: String) -> CommandResult<FileOnDisk> {
    Ok(shell.engine.file_on_disk(&approval_id)?)
}

/// Decides a batch in order, in one transaction; a refused decision (already decided, invalid
/// edit) does not stop the others, and the UI shows which were refused.
pub async fn decide(
    shell: &Shell,
    decisions: Vec<DecisionRequest>,
    channel: Channel,
) -> CommandResult<Vec<DecisionOutcome>> {
    Ok(decide_all(&shell.engine, decisions, channel))
}

/// The whole batch through [`airlock_engine::Engine::decide_many`]: one durable transaction. When
/// that transaction fails, nothing was decided and every item carries the error.
pub fn decide_all(
    engine: &airlock_engine::Engine,
    decisions: Vec<DecisionRequest>,
    channel: Channel,
) -> Vec<DecisionOutcome> {
    let ids: Vec<String> = decisions
        .iter()
        .map(|request| request.approval_id.clone())
        .collect();
    match engine.decide_many(decisions, channel.into()) {
        Ok(outcomes) => ids
            .into_iter()
            .zip(outcomes)
            .map(|(approval_id, outcome)| DecisionOutcome {
                approval_id,
                error: outcome.err().map(CommandError::from),
            })
            .collect(),
        Err(error) => {
            let error = CommandError::from(error);
            ids.into_iter()
                .map(|approval_id| DecisionOutcome {
                    approval_id,
                    error: Some(error.clone()),
                })
                .collect()
        }
    }
}

/// Answers an MCP server's elicitation (its form) from the inbox.
pub async fn answer_elicitation(
    shell: &Shell,
    approval_id: String,
    answer: ElicitationAnswer,
) -> CommandResult<()> {
    Ok(shell
        .engine
        .answer(&approval_id, answer, DecidedBy::Inbox)?)
}
