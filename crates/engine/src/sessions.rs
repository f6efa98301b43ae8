//! Sessions and their turns: send a message, wait for or cancel the turn, read the transcript.

use crate::*;

impl Engine {
    /// Sends a user message and starts the turn; returns at once.
    pub fn send_message(&self, session: &str, text: &str) -> Result<SessionRow> {
        if text.trim().is_empty() {
            return Err(EngineError::Invalid("the message is empty".into()));
        }
        let existing = self.inner.store.session_by_name(session)?;
        if let Some(existing) = &existing
            && let Some(why) = self.running_status(&existing.id)
        {
            return Err(EngineError::Busy {
                session: existing.name.clone(),
                why,
            });
        }
        // A chat an agent hosts goes to that agent, not to a model.
        if let Some(existing) = &existing
            && let Some(hosted) = self.inner.store.hosted_session(&existing.id)?
        {
            return self.start_hosted_turn(existing, hosted, text);
        }
        self.inner
            .provider_for(existing.as_ref().map(|s| s.id.as_str()))?;
        let (session, _) = self.inner.store.start_turn(session, text)?;
        driver::start(&self.inner, &session);
        Ok(session)
    }

    /// Why the session cannot take a message now (its turn is running), in words that say what
    /// it waits for: the person's decision, the model, or a tool.
    pub(crate) fn running_status(&self, session_id: &str) -> Option<String> {
        {
            let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
            if !turns.get(session_id)?.state.borrow().running {
                return None;
            }
        }
        let waiting = self
            .inner
            .store
            .pending_of_session(session_id)
            .map(|ids| ids.len())
            .unwrap_or(0);
        let status = self.inner.store.session(session_id).ok().flatten();
        Some(busy_reason(status.map(|s| s.status), waiting))
    }

    /// Waits for the session's current turn to end (at once when none is running).
    pub async fn wait_turn(&self, session: &str) -> Result<TurnOutcome> {
        let row = self.session(session)?;
        let receiver = {
            let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
            turns.get(&row.id).map(|turn| turn.state.subscribe())
        };
        if let Some(mut receiver) = receiver {
            let state = receiver
                .wait_for(|state| !state.running)
                .await
                .map(|s| s.clone());
            if let Ok(TurnWatch {
                outcome: Some(outcome),
                ..
            }) = state
            {
                return Ok(outcome);
            }
        }
        let answer = self
            .inner
            .store
            .messages(&row.id)?
            .into_iter()
            .rev()
            .find(|m| m.role == "assistant" && m.calls.is_empty())
            .map(|m| m.content);
        Ok(TurnOutcome {
            session: row.name,
            status: airlock_core::TurnStatus::Idle,
            answer,
            error: row.last_error,
        })
    }

    /// Cancels the session's running turn: pending approvals are cancelled, nothing more runs.
    pub fn cancel(&self, session: &str) -> Result<bool> {
        let row = self.session(session)?;
        let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
        match turns.get(&row.id) {
            Some(turn) if turn.state.borrow().running => {
                let _ = turn.cancel.send(true);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub fn session(&self, name: &str) -> Result<SessionRow> {
        self.inner
            .store
            .session_by_name(name)?
            .ok_or_else(|| EngineError::UnknownSession(name.to_string()))
    }

    pub fn sessions(&self) -> Result<Vec<SessionRow>> {
        Ok(self.inner.store.sessions()?)
    }

    pub fn transcript(&self, session: &str) -> Result<Vec<MessageRow>> {
        let row = self.session(session)?;
        let mut messages = self.inner.store.messages(&row.id)?;
        for message in &mut messages {
            let waits = crate::driver::runs_after(&message.calls);
            for (call, waits) in message.calls.iter_mut().zip(waits) {
                call.runs_after = waits;
            }
        }
        Ok(messages)
    }
}

/// The words of a busy session's refusal: what its running turn waits for.
pub(crate) fn busy_reason(status: Option<airlock_core::SessionStatus>, waiting: usize) -> String {
    if waiting > 0 || status == Some(airlock_core::SessionStatus::AwaitingApproval) {
        let what = match waiting {
            0 | 1 => "a request".to_string(),
            n => format!("{n} requests"),
        };
        return format!(
            "is waiting for you to decide {what} (in the chat or the Inbox); decide, or cancel the turn, then send again"
        );
    }
    match status {
        Some(airlock_core::SessionStatus::Thinking) => {
            "is still thinking (the model is answering); wait for its turn to end or cancel it"
                .into()
        }
        Some(airlock_core::SessionStatus::RunningTools) => {
            "is running its tool calls; wait for them to finish or cancel the turn".into()
        }
        _ => "is busy with its turn; wait for it to end or cancel it".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::busy_reason;
    use airlock_core::SessionStatus;

    #[test]
    fn a_busy_turn_says_what_it_waits_for() {
        let thinking = busy_reason(Some(SessionStatus::Thinking), 0);
        assert!(thinking.starts_with("is still thinking"), "{thinking}");
        let asking = busy_reason(Some(SessionStatus::RunningTools), 2);
        assert!(
            asking.contains("waiting for you to decide 2 requests"),
            "{asking}"
        );
        let asking = busy_reason(Some(SessionStatus::AwaitingApproval), 1);
        assert!(asking.contains("decide a request"), "{asking}");
        let running = busy_reason(Some(SessionStatus::RunningTools), 0);
        assert!(
            running.starts_with("is running its tool calls"),
            "{running}"
        );
    }
}
