//! The local HTTP API of a running engine, its discovery files, and a client for it.

pub mod client;
pub mod commands;
pub mod discovery;
pub mod host;
pub mod one_shot;
pub mod server;

pub use client::{ApiClient, ClientError};
pub use server::{router, serve, serve_with};
