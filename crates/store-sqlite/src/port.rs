//! The store port implemented by the SQLite store: each operation is the method of the same
//! name, its error turned into the port's (which carries no rusqlite type).

use crate::{Store, StoreError, is_disk_failure};
use airlock_core::{
    AgentFallback, ApprovalStatus, ArgRule, CallState, ItemKind, Mode, ServerDefault,
    SessionStatus, ToolSetting,
};
use airlock_protocol::{AcpAgentView, AddedRule, AgentView, DeviceView, MemberView, RouteView};
use airlock_store_port as port;
use airlock_store_port::{
    AgentActivity, ApprovalRow, AskedRow, AuditRow, CallRow, Decided, DecisionInput,
    DecisionOutcome, DecisionRow, EarlierAgentRequest, HostedCallUpdate, HostedSession,
    ItemRouting, MessageRow, NewAgentRequest, NewApproval, NewCall, NewMemberRow, NewRoute,
    PastCall, PinCheck, RememberedRow, RuleRow, ServerRow, SessionRow, WriteCounters,
};
use serde_json::Value;
use std::collections::HashMap;

impl From<StoreError> for port::StoreError {
    fn from(error: StoreError) -> Self {
        use port::StoreError as Port;
        match error {
            StoreError::NewerDatabase {
                path,
                found,
                supported,
            } => Port::NewerDatabase {
                path,
                found,
                supported,
            },
            StoreError::Open { path, message } => Port::Open { path, message },
            StoreError::Sql(sql) if is_disk_failure(&sql) => {
                Port::Unavailable(StoreError::Sql(sql).to_string())
            }
            StoreError::Sql(sql)
                if matches!(
                    sql.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) =>
            {
                Port::Conflict(sql.to_string())
            }
            StoreError::Sql(sql) => Port::Database(sql.to_string()),
            StoreError::Migration(message) => Port::Migration(message),
            StoreError::CorruptJson { what, message } => Port::CorruptJson { what, message },
            StoreError::UnknownApproval(id) => Port::UnknownApproval(id),
            StoreError::ForeignSession { id } => Port::ForeignSession { id },
            StoreError::AlreadyDecided { id, status } => Port::AlreadyDecided { id, status },
            StoreError::UnknownSession(name) => Port::UnknownSession(name),
            StoreError::Refused(message) => Port::Refused(message),
            unavailable @ StoreError::Unavailable(_) => Port::Unavailable(unavailable.to_string()),
            StoreError::Invalid(message) => Port::Invalid(message),
            StoreError::GrantUsedUp(id) => Port::GrantUsedUp(id),
            StoreError::AlreadyClaimed { id, at } => Port::AlreadyClaimed { id, at },
        }
    }
}

/// Each operation: the store's method of the same name, its error converted.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        fn $name(&self, $($arg: $ty),*) -> port::Result<$out> {
            Ok(Store::$name(self, $($arg),*)?)
        }
    )*};
}

impl port::Sessions for Store {
    delegate! {
        ensure_session(name: &str) -> SessionRow;
        start_turn(name: &str, text: &str) -> (SessionRow, i64);
        session_by_name(name: &str) -> Option<SessionRow>;
        session(id: &str) -> Option<SessionRow>;
        sessions() -> Vec<SessionRow>;
        set_session_title(id: &str, title: &str) -> ();
        set_session_mode(id: &str, mode: Option<Mode>) -> ();
    }

    // One process holds everything it writes: there is no fence to check.
    fn set_session_status_fenced(
        &self,
        id: &str,
        status: SessionStatus,
        error: Option<&str>,
        _fence: Option<&port::Fence>,
    ) -> port::Result<()> {
        Ok(Store::set_session_status(self, id, status, error)?)
    }
}

impl port::Calls for Store {
    delegate! {
        append_user_message(session_id: &str, content: &str) -> i64;
        messages(session_id: &str) -> Vec<MessageRow>;
        calls_of_message(message_id: i64) -> Vec<CallRow>;
        call(call_id: &str) -> Option<CallRow>;
        running_calls() -> Vec<CallRow>;
    }

    // One process holds everything it writes: there is no fence to check.
    fn record_assistant_step_fenced(
        &self,
        session_id: &str,
        content: &str,
        calls: &[NewCall],
        approvals: &[NewApproval],
        _fence: Option<&port::Fence>,
    ) -> port::Result<i64> {
        Ok(Store::record_assistant_step(
            self, session_id, content, calls, approvals,
        )?)
    }

    fn mark_running_fenced(
        &self,
        calls: &[(String, Value)],
        _fence: Option<&port::Fence>,
    ) -> port::Result<()> {
        Ok(Store::mark_running(self, calls)?)
    }

    fn claim_invocation_fenced(
        &self,
        call_ids: &[&str],
        _fence: Option<&port::Fence>,
    ) -> port::Result<Vec<String>> {
        Ok(Store::claim_invocation(self, call_ids)?)
    }

    fn finish_call_fenced(
        &self,
        call_id: &str,
        state: CallState,
        result: &Value,
        _fence: Option<&port::Fence>,
    ) -> port::Result<()> {
        Ok(Store::finish_call(self, call_id, state, result)?)
    }
}

/// A batch's outcomes, each with the port's error.
fn outcomes(outcomes: Vec<crate::Result<DecisionOutcome>>) -> Vec<port::Result<DecisionOutcome>> {
    outcomes
        .into_iter()
        .map(|outcome| outcome.map_err(port::StoreError::from))
        .collect()
}

impl port::Approvals for Store {
    delegate! {
        pending_approvals() -> Vec<ApprovalRow>;
        approval(approval_id: &str) -> Option<ApprovalRow>;
        approvals_of_message(message_id: i64) -> Vec<ApprovalRow>;
        approvals_by_ids(ids: &[&str]) -> HashMap<String, ApprovalRow>;
        unconfirm_decision(approval_id: &str) -> bool;
        pending_of_session(session_id: &str) -> Vec<String>;
        decide(input: &DecisionInput) -> DecisionOutcome;
    }

    fn decide_many(
        &self,
        inputs: &[DecisionInput],
    ) -> port::Result<Vec<port::Result<DecisionOutcome>>> {
        Ok(outcomes(Store::decide_many(self, inputs)?))
    }

    fn decide_and_start(
        &self,
        inputs: &[DecisionInput],
        started: &dyn Fn(&[String]),
    ) -> port::Result<Decided> {
        let decided = Store::decide_and_start(self, inputs, started)?;
        Ok(Decided {
            outcomes: outcomes(decided.outcomes),
            started: decided.started,
        })
    }
}

impl port::Requests for Store {
    delegate! {
        decision(approval_id: &str) -> Option<DecisionRow>;
        decided_by(approval_id: &str) -> Option<String>;
        pending_of_kind(kind: ItemKind) -> Vec<String>;
        insert_request(approval: &NewApproval) -> ();
        approval_status(approval_id: &str) -> Option<ApprovalStatus>;
    }
}

impl port::AgentRequests for Store {
    delegate! {
        insert_agent_request(approval: &NewApproval, origin: &NewAgentRequest) -> ();
        agent_requests_by_key(request_key: &str) -> Vec<EarlierAgentRequest>;
        recent_agent_request(
            agent: &str,
            agent_session: &str,
            tool: &str,
            args_hash: &str
        ) -> Option<EarlierAgentRequest>;
        latest_agent_request(agent: &str, agent_session: &str, tool: &str) -> Option<EarlierAgentRequest>;
        claim_agent_call(approval_id: &str) -> String;
        agent_call_claimed_at(approval_id: &str) -> Option<String>;
        record_agent_call(
            activity: &AgentActivity<'_>,
            session_id: &str,
            detail: &Value,
            grant_use: Option<&str>
        ) -> ();
        note_agent_outcome(agent: &str, outcome: &str) -> ();
        agents() -> Vec<AgentView>;
        set_agent_fallback(agent: &str, fallback: AgentFallback) -> ();
    }
}

impl port::Settings for Store {
    delegate! {
        setting(key: &str) -> Option<Value>;
        set_setting(key: &str, value: &Value) -> ();
    }
}

impl port::ToolSettings for Store {
    delegate! {
        seed_tool_setting(server: &str, tool: &str, setting: ToolSetting) -> ();
        seed_agent_tool_settings(server: &str, tools: &[&str], setting: ToolSetting) -> Vec<String>;
        set_tool_setting(server: &str, tool: &str, setting: ToolSetting) -> ();
        tool_settings() -> Vec<(String, String, ToolSetting)>;
        set_from_notification(server: &str, tool: Option<&str>, allow: Option<bool>) -> ();
        from_notification() -> Vec<(String, Option<String>, bool)>;
    }
}

impl port::Servers for Store {
    delegate! {
        ensure_server(name: &str, default: ServerDefault, config: &Value) -> ();
        set_server_default(name: &str, default: ServerDefault) -> ();
        servers() -> Vec<ServerRow>;
        upsert_server(name: &str, config: &Value, definition_hash: &str) -> ();
        remove_server(name: &str) -> ();
        set_server_trust(name: &str, trust_read_only_hints: bool) -> ();
        set_server_enabled(name: &str, enabled: bool) -> ();
    }
}

impl port::Pins for Store {
    delegate! {
        check_pin(server: &str, tool: &str, definition: &Value, hash: &str) -> PinCheck;
        accept_pin(server: &str, tool: &str) -> bool;
        current_definition(server: &str, tool: &str) -> Option<Value>;
        tool_changes(server: &str) -> Vec<(String, String, Value, Value)>;
        suspended_tools() -> Vec<(String, String, String)>;
    }
}

impl port::Rules for Store {
    delegate! {
        add_rule(rule: &ArgRule) -> AddedRule;
        remove_rule(id: &str) -> bool;
        rules() -> Vec<RuleRow>;
    }
}

impl port::Grants for Store {
    delegate! {
        remembered() -> Vec<RememberedRow>;
        revoke_remembered(id: &str) -> bool;
        session_grants(session_id: &str) -> Vec<(String, String)>;
    }
}

impl port::Devices for Store {
    delegate! {
        add_device(id: &str, name: &str, token_hash: &str) -> DeviceView;
        device_by_token_hash(token_hash: &str) -> Option<DeviceView>;
        devices() -> Vec<DeviceView>;
        revoke_device(id: &str) -> bool;
    }
}

impl port::Audit for Store {
    delegate! {
        audit(
            actor: &str,
            action: &str,
            session_id: Option<&str>,
            approval_id: Option<&str>,
            detail: &Value
        ) -> ();
        audit_rows(limit: usize) -> Vec<AuditRow>;
    }
}

impl port::History for Store {
    delegate! {
        past_calls(server: &str, tool: &str) -> Vec<PastCall>;
        asked_rows() -> Vec<AskedRow>;
    }
}

impl port::Store for Store {
    fn failure(&self) -> Option<String> {
        Store::failure(self)
    }

    fn write_counters(&self) -> WriteCounters {
        Store::write_counters(self)
    }
}

impl port::Team for Store {
    delegate! {
        add_member(new: &NewMemberRow, first: bool, by: &str) -> MemberView;
        has_members() -> bool;
        member_by_token_hash(token_hash: &str) -> Option<MemberView>;
        member_by_name(name: &str) -> Option<MemberView>;
        members() -> Vec<MemberView>;
        remove_member(name: &str, by: &str) -> bool;
        audit_member_command(person: &str, command: &str) -> ();
        add_route(new: &NewRoute, by: &str) -> RouteView;
        routes() -> Vec<RouteView>;
        remove_route(id: &str, by: &str) -> bool;
        route_item(routing: &ItemRouting) -> bool;
        routing_of(ids: &[&str]) -> HashMap<String, ItemRouting>;
        timed_routing() -> Vec<ItemRouting>;
        escalate(approval_id: &str, from_step: u32, next_at: Option<&str>) -> Option<ItemRouting>;
        delegate(approval_id: &str, assignee: &str, note: Option<&str>, by: &str) -> ItemRouting;
        record_vote(
            approval_id: &str,
            member_id: &str,
            person: &str,
            args_hash: &str,
            edited_args: Option<&Value>
        ) -> u32;
    }
}

impl port::AgentTokens for Store {
    delegate! {
        set_agent_token(agent: &str, token_hash: &str) -> ();
        revoke_agent_token(agent: &str) -> bool;
        agent_token_hashes() -> Vec<(String, String)>;
        agent_tokens_issued() -> Vec<(String, String)>;
    }
}

impl port::HostedAgents for Store {
    delegate! {
        save_acp_agent(name: &str, command: &[String]) -> ();
        remove_acp_agent(name: &str) -> bool;
        acp_agents() -> Vec<AcpAgentView>;
        acp_agent(name: &str) -> Option<AcpAgentView>;
        host_session(session_id: &str, agent: &str, folder: &str) -> ();
        hosted_session(session_id: &str) -> Option<HostedSession>;
        live_hosted_sessions() -> Vec<HostedSession>;
        set_hosted_pid(session_id: &str, pid: Option<u32>) -> ();
        end_hosted_session(session_id: &str, why: &str) -> ();
        append_assistant_message(session_id: &str, content: &str) -> i64;
        add_hosted_call(session_id: &str, message: Option<i64>, content: &str, call: &NewCall) -> i64;
        update_hosted_call(call_id: &str, update: &HostedCallUpdate) -> ();
        set_message_thought(message_id: i64, thought: &str) -> ();
    }
}
