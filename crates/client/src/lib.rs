//! Reaching a running engine from another process: its discovery files (`discovery`), the
//! local API client (`client`), the hook's one request with nothing to build (`one_shot`), where
//! the data directory is (`data_dir`) and the agents' fallbacks when no engine answers
//! (`agents`). Of Airlock's crates it uses core and protocol only, so the hook and the window
//! never compile the engine or the store.

pub mod agents;
pub mod client;
pub mod data_dir;
pub mod discovery;
pub mod one_shot;

pub use client::{ApiClient, ClientError};
pub use data_dir::{DATA_DIR_ENV, NoDataDir, default_data_dir, resolve_data_dir};
