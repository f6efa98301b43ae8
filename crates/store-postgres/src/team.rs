//! A team server's members and routing, agents' own tokens and the agents hosted over ACP, on
//! PostgreSQL: not written yet. Every operation refuses,
//! so a team engine on PostgreSQL decides nothing through a route or a member it cannot read
//! (fail closed); the SQLite adapter has them (`crates/store-sqlite/src/{members,routes}.rs`).

use crate::PostgresStore;
use airlock_protocol::{AcpAgentView, MemberView, RouteView};
use airlock_store_port::{
    self as port, HostedSession, ItemRouting, NewMemberRow, NewRoute, StoreError,
};
use serde_json::Value;
use std::collections::HashMap;

fn not_yet<T>() -> port::Result<T> {
    Err(StoreError::Refused(
        "team members, routes, agents' tokens and hosted agents are not on PostgreSQL yet"
            .to_string(),
    ))
}

impl port::Team for PostgresStore {
    fn add_member(&self, _: &NewMemberRow, _: bool, _: &str) -> port::Result<MemberView> {
        not_yet()
    }
    fn has_members(&self) -> port::Result<bool> {
        not_yet()
    }
    fn member_by_token_hash(&self, _: &str) -> port::Result<Option<MemberView>> {
        not_yet()
    }
    fn member_by_name(&self, _: &str) -> port::Result<Option<MemberView>> {
        not_yet()
    }
    fn members(&self) -> port::Result<Vec<MemberView>> {
        not_yet()
    }
    fn remove_member(&self, _: &str, _: &str) -> port::Result<bool> {
        not_yet()
    }
    fn audit_member_command(&self, _: &str, _: &str) -> port::Result<()> {
        not_yet()
    }
    fn add_route(&self, _: &NewRoute, _: &str) -> port::Result<RouteView> {
        not_yet()
    }
    fn routes(&self) -> port::Result<Vec<RouteView>> {
        not_yet()
    }
    fn remove_route(&self, _: &str, _: &str) -> port::Result<bool> {
        not_yet()
    }
    fn route_item(&self, _: &ItemRouting) -> port::Result<bool> {
        not_yet()
    }
    fn routing_of(&self, _: &[&str]) -> port::Result<HashMap<String, ItemRouting>> {
        not_yet()
    }
    fn timed_routing(&self) -> port::Result<Vec<ItemRouting>> {
        not_yet()
    }
    fn escalate(&self, _: &str, _: u32, _: Option<&str>) -> port::Result<Option<ItemRouting>> {
        not_yet()
    }
    fn delegate(&self, _: &str, _: &str, _: Option<&str>, _: &str) -> port::Result<ItemRouting> {
        not_yet()
    }
    fn record_vote(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &str,
        _: Option<&Value>,
    ) -> port::Result<u32> {
        not_yet()
    }
}

impl port::AgentTokens for PostgresStore {
    fn set_agent_token(&self, _: &str, _: &str) -> port::Result<()> {
        not_yet()
    }
    fn revoke_agent_token(&self, _: &str) -> port::Result<bool> {
        not_yet()
    }
    fn agent_token_hashes(&self) -> port::Result<Vec<(String, String)>> {
        not_yet()
    }
}

impl port::HostedAgents for PostgresStore {
    fn save_acp_agent(&self, _: &str, _: &[String]) -> port::Result<()> {
        not_yet()
    }
    fn remove_acp_agent(&self, _: &str) -> port::Result<bool> {
        not_yet()
    }
    fn acp_agents(&self) -> port::Result<Vec<AcpAgentView>> {
        not_yet()
    }
    fn acp_agent(&self, _: &str) -> port::Result<Option<AcpAgentView>> {
        not_yet()
    }
    fn host_session(&self, _: &str, _: &str, _: &str) -> port::Result<()> {
        not_yet()
    }
    fn hosted_session(&self, _: &str) -> port::Result<Option<HostedSession>> {
        not_yet()
    }
    fn live_hosted_sessions(&self) -> port::Result<Vec<HostedSession>> {
        not_yet()
    }
    fn set_hosted_pid(&self, _: &str, _: Option<u32>) -> port::Result<()> {
        not_yet()
    }
    fn end_hosted_session(&self, _: &str, _: &str) -> port::Result<()> {
        not_yet()
    }
    fn append_assistant_message(&self, _: &str, _: &str) -> port::Result<i64> {
        not_yet()
    }
    fn add_hosted_call(
        &self,
        _: &str,
        _: Option<i64>,
        _: &str,
        _: &port::NewCall,
    ) -> port::Result<i64> {
        not_yet()
    }
    fn update_hosted_call(&self, _: &str, _: &port::HostedCallUpdate) -> port::Result<()> {
        not_yet()
    }
}
