//! Model providers over reqwest. One trait, [`ModelProvider`]; three wire formats (OpenAI chat
//! completions, OpenAI Responses, Anthropic Messages) share one transport that speaks JSON and
//! server-sent events and retries what is worth retrying.

mod anthropic;
mod openai_chat;
mod openai_responses;
mod retry;
mod transport;
mod types;

pub use anthropic::{ANTHROPIC_VERSION, Anthropic, DEFAULT_MAX_TOKENS};
pub use openai_chat::OpenAiChat;
pub use openai_responses::{HostedMcpTool, OpenAiResponses};
pub use types::*;

#[cfg(test)]
mod tests;
