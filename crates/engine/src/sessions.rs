//! Sessions and their turns: send a message, wait for or cancel the turn, read the transcript.

use crate::*;

impl Engine {
    /// Sends a user message and starts the turn; returns at once.
    pub fn send_message(&self, session: &str, text: &str) -> Result<SessionRow> {
        if text.trim().is_empty() {
            return Err(EngineError::Invalid("the message is empty".into()));
        }
        let existing = self.inner.store.session_by_name(session)?;
        self.inner
            .provider_for(existing.as_ref().map(|s| s.id.as_str()))?;
        if let Some(existing) = existing
            && let Some(status) = self.running_status(&existing.id)
        {
            return Err(EngineError::Busy {
                session: existing.name,
                status,
            });
        }
        let (session, _) = self.inner.store.start_turn(session, text)?;
        driver::start(&self.inner, &session);
        Ok(session)
    }

    pub(crate) fn running_status(&self, session_id: &str) -> Option<String> {
        let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
        let turn = turns.get(session_id)?;
        if !turn.state.borrow().running {
            return None;
        }
        let status = self
            .inner
            .store
            .session(session_id)
            .ok()
            .flatten()
            .map(|s| s.status.to_string())
            .unwrap_or_else(|| "running".into());
        Some(status)
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
