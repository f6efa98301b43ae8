//! Model providers over reqwest. One trait, [`ModelProvider`]; the OpenAI-compatible chat
//! completions provider speaks JSON and server-sent events and retries what is worth retrying.

mod openai_chat;
mod retry;
mod types;

pub use openai_chat::OpenAiChat;
pub use types::*;

#[cfg(test)]
mod tests;
