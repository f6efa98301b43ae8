//! Airlock's domain: its words as types, and the pre-execution policy as a
//! pure function. Nothing here does I/O, so every rule is tested without a database or a network.

pub mod canonical;
pub mod display;
pub mod duration;
pub mod ids;
pub mod path;
pub mod platform;
pub mod policy;
pub mod schema;
pub mod server;
pub mod settings;
pub mod suggest;
pub mod types;

pub use canonical::args_hash;
pub use policy::{
    ArgRule, CallFacts, NeedsApproval, PolicyConfig, PolicyDecision, PolicyError, RuleEffect,
    RulePattern, SessionPolicy, Step, Verdict, decide, forbidden,
};
pub use server::{ServerConfig, parse_mcp_servers, parse_mcp_servers_each};
pub use settings::Setting;
pub use types::*;
