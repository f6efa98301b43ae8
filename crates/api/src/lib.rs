//! The local HTTP API of a running engine and the engine's host (`host.rs`); its clients, the
//! discovery files and the data directory's rule are in `airlock-client`, re-exported here.

mod agent_hooks;
pub mod commands;
pub mod host;
pub mod server;

pub use airlock_client::{ApiClient, ClientError, client, discovery, one_shot};
pub use server::{AgentCaller, router, serve, serve_with};
