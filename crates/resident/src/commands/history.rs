//! History: the audit trail, newest last.

use super::CommandResult;
use crate::shell::Shell;
use airlock_protocol::AuditRow;

pub async fn audit(shell: &Shell, limit: Option<usize>) -> CommandResult<Vec<AuditRow>> {
    Ok(shell.engine.audit(limit.unwrap_or(5000))?)
}
