//! A hosted chat as the person sees it, with a stand-in ACP agent (a shell script speaking the
//! messages qwen-code sends, AGENT-ACP.md): the agent's text streams into the chat as it comes,
//! each tool call is a card of the assistant message with its state, the permission's item is
//! linked to that card (the chat shows its prompt there), and a denial's reason reaches the
//! agent as the next message of the same ACP session.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The stand-in agent is a POSIX shell script.
#![cfg(unix)]

use airlock_acp::AcpHost;
use airlock_core::{CallState, DecidedBy};
use airlock_engine::{Engine, EngineConfig};
use airlock_protocol::{DecisionRequest, EngineEvent, InboxItem, MessageRow};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::broadcast;

const WAIT: Duration = Duration::from_secs(60);

/// The agent: answers initialize and session/new, then for the first prompt streams two text
/// chunks, reports its shell call, asks permission for it and waits for the answer. Allowed, it
/// runs the command, reports the output and says "Done."; refused, it reports the call failed
/// (as qwen does), ends the turn, and answers the next prompt. Each prompt and answer it reads
/// is appended to prompts.log / answers.log in its folder.
const AGENT: &str = r#"#!/bin/sh
say() { printf '%s\n' "$1"; }
update() { say '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'"$1"'}}'; }
read -r line
say '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'
read -r line
say '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}'
read -r line
printf '%s\n' "$line" >> prompts.log
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me write "}}'
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"it."}}'
update '{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Shell","kind":"execute","status":"pending","rawInput":{}}'
say '{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"proceed_always","name":"Always","kind":"allow_always"},{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"call_1","status":"pending","title":"echo hi > f.txt","kind":"execute","rawInput":{"command":"echo hi > f.txt","description":"write f.txt"},"_meta":{"toolName":"run_shell_command"}}}}'
read -r answer
printf '%s\n' "$answer" >> answers.log
case "$answer" in
  *proceed_once*)
    update '{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"in_progress"}'
    echo hi > f.txt
    update '{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"wrote f.txt"}}]}'
    update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}'
    say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
    ;;
  *)
    update '{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Tool was canceled by the user."}}]}'
    say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
    read -r line
    printf '%s\n' "$line" >> prompts.log
    update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Understood."}}'
    say '{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}'
    ;;
esac
while read -r line; do :; done
"#;

/// An agent that thinks aloud (`agent_thought_chunk`, as qwen-code sends a model's reasoning):
/// two pieces of thinking, then its shell call and the permission for it; allowed, it runs the
/// command, thinks again and answers "Done.".
const THINKING_AGENT: &str = r#"#!/bin/sh
say() { printf '%s\n' "$1"; }
update() { say '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'"$1"'}}'; }
thought() { update '{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"'"$1"'"}}'; }
read -r line
say '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'
read -r line
say '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}'
read -r line
thought 'The person wants f.txt; '
thought 'the shell can write it.'
update '{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Shell","kind":"execute","status":"pending","rawInput":{}}'
say '{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"call_1","status":"pending","title":"echo hi > f.txt","kind":"execute","rawInput":{"command":"echo hi > f.txt"},"_meta":{"toolName":"run_shell_command"}}}}'
read -r answer
case "$answer" in
  *proceed_once*)
    echo hi > f.txt
    update '{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"wrote f.txt"}}]}'
    thought 'It worked, '
    thought 'so I say so.'
    update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}'
    ;;
esac
say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
while read -r line; do :; done
"#;

struct Chat {
    _dir: tempfile::TempDir,
    folder: PathBuf,
    engine: Engine,
    host: std::sync::Arc<AcpHost>,
    events: broadcast::Receiver<EngineEvent>,
}

impl Chat {
    async fn start() -> Self {
        Self::start_with(AGENT).await
    }

    /// A chat hosted by the stand-in agent `script`.
    async fn start_with(script: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("project");
        std::fs::create_dir_all(&folder).unwrap();
        let folder = folder.canonicalize().unwrap();
        let agent = dir.path().join("agent.sh");
        std::fs::write(&agent, script).unwrap();
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        let engine = Engine::open(EngineConfig {
            data_dir: dir.path().join("data"),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap();
        let host = AcpHost::start(&engine);
        engine
            .save_acp_agent("fake", &[agent.display().to_string()])
            .unwrap();
        let events = engine.subscribe();
        engine
            .chat_with_agent(
                "fake",
                "chat",
                "Create f.txt",
                Some(folder.to_str().unwrap()),
            )
            .unwrap();
        Self {
            _dir: dir,
            folder,
            engine,
            host,
            events,
        }
    }

    /// The engine's events until the agent's permission request reached the inbox.
    async fn until_asked(&mut self) -> (Vec<EngineEvent>, InboxItem) {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .expect("the agent's permission never reached the inbox")
                .unwrap();
            if let EngineEvent::ApprovalRequested { item } = &event {
                let item = (**item).clone();
                seen.push(event);
                return (seen, item);
            }
            seen.push(event);
        }
    }

    fn transcript(&self) -> Vec<MessageRow> {
        self.engine.transcript("chat").unwrap()
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.folder.join(name)).unwrap_or_default()
    }

    async fn turn_ends(&self) {
        tokio::time::timeout(WAIT, self.engine.wait_turn("chat"))
            .await
            .expect("the turn never ended")
            .unwrap();
    }
}

impl Drop for Chat {
    fn drop(&mut self) {
        self.host.stop_all();
    }
}

fn texts(messages: &[MessageRow]) -> Vec<&str> {
    messages
        .iter()
        .filter(|m| m.role == "assistant")
        .map(|m| m.content.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agents_text_streams_and_its_tool_call_is_a_card_that_carries_the_prompt() {
    let mut chat = Chat::start().await;
    let (events, item) = chat.until_asked().await;
    // The text streamed before the turn ended, piece by piece, to whoever watches the chat.
    let streamed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::TextDelta { session, text } if session == "chat" => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, ["Let me write ", "it."], "{events:#?}");
    // The text is kept, and the call is a card of the same assistant message, waiting.
    let messages = chat.transcript();
    let message = messages
        .iter()
        .find(|m| !m.calls.is_empty())
        .unwrap_or_else(|| panic!("no tool card: {messages:#?}"));
    assert_eq!(message.content, "Let me write it.");
    let card = &message.calls[0];
    assert_eq!(card.server, "fake");
    assert_eq!(card.tool, "run_shell_command");
    assert_eq!(card.provider_call_id, "call_1");
    assert_eq!(card.args.as_ref().unwrap()["command"], "echo hi > f.txt");
    assert_eq!(card.state, CallState::Pending);
    // The item is the card's: the chat shows its prompt on it.
    assert_eq!(item.tool_call_id.as_deref(), Some(card.id.as_str()));
    assert_eq!(chat.file("f.txt"), "", "nothing runs before the decision");

    chat.engine
        .decide(
            DecisionRequest::approve(&item.approval_id),
            DecidedBy::Inbox,
        )
        .unwrap();
    chat.turn_ends().await;
    assert_eq!(chat.file("f.txt"), "hi\n");
    assert!(chat.file("answers.log").contains("proceed_once"));
    let messages = chat.transcript();
    let card = messages
        .iter()
        .flat_map(|m| &m.calls)
        .next()
        .unwrap()
        .clone();
    assert_eq!(card.state, CallState::Succeeded, "{messages:#?}");
    assert_eq!(card.result.unwrap()["output"], "wrote f.txt");
    assert_eq!(
        texts(&messages),
        ["Let me write it.", "Done."],
        "{messages:#?}"
    );
    // No follow-up without a denial: the agent read one prompt.
    assert_eq!(chat.file("prompts.log").lines().count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denials_reason_is_the_agents_next_message_and_stays_on_the_card() {
    let mut chat = Chat::start().await;
    let (_, item) = chat.until_asked().await;
    chat.engine
        .decide(
            DecisionRequest::deny(&item.approval_id, Some("not in this folder".into())),
            DecidedBy::Inbox,
        )
        .unwrap();
    chat.turn_ends().await;
    assert_eq!(chat.file("f.txt"), "");
    assert!(chat.file("answers.log").contains("\"cancel\""));
    let prompts = chat.file("prompts.log");
    let follow_up = prompts.lines().nth(1).unwrap_or_else(|| {
        panic!("the agent got no follow-up: {prompts}");
    });
    assert!(
        follow_up.contains("\"session/prompt\"")
            && follow_up.contains("The person denied your tool call run_shell_command")
            && follow_up.contains("not in this folder"),
        "{follow_up}"
    );
    let messages = chat.transcript();
    let card = messages.iter().flat_map(|m| &m.calls).next().unwrap();
    // Airlock's answer stays on the card: the agent's "failed" after it says nothing more.
    assert_eq!(card.state, CallState::Denied, "{messages:#?}");
    assert_eq!(
        card.result.as_ref().unwrap()["reason"],
        "not in this folder"
    );
    let said = texts(&messages).join("\n");
    assert!(
        said.contains("Airlock told fake: The person denied"),
        "{said}"
    );
    assert!(said.ends_with("Understood."), "{said}");
}

/// The agent's thinking (`agent_thought_chunk`) streams to the chat apart from its answer
/// (`ThoughtDelta`, never `TextDelta`), is kept beside the message it came before (the card's,
/// then the answer's), and is neither the turn's answer nor a tool call.
#[tokio::test(flavor = "multi_thread")]
async fn the_agents_thinking_streams_and_is_kept_apart_from_its_answer() {
    let mut chat = Chat::start_with(THINKING_AGENT).await;
    let (events, item) = chat.until_asked().await;
    let thoughts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ThoughtDelta { session, text } if session == "chat" => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        thoughts,
        ["The person wants f.txt; ", "the shell can write it."],
        "{events:#?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EngineEvent::TextDelta { .. })),
        "thinking streamed as the answer: {events:#?}"
    );
    let messages = chat.transcript();
    let message = messages
        .iter()
        .find(|m| !m.calls.is_empty())
        .unwrap_or_else(|| panic!("no tool card: {messages:#?}"));
    assert_eq!(message.content, "", "{messages:#?}");
    assert_eq!(
        message.thought.as_deref(),
        Some("The person wants f.txt; the shell can write it."),
        "{messages:#?}"
    );
    chat.engine
        .decide(
            DecisionRequest::approve(&item.approval_id),
            DecidedBy::Inbox,
        )
        .unwrap();
    let outcome = tokio::time::timeout(WAIT, chat.engine.wait_turn("chat"))
        .await
        .expect("the turn never ended")
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Done."), "{outcome:#?}");
    assert_eq!(chat.file("f.txt"), "hi\n");
    let messages = chat.transcript();
    assert_eq!(
        messages.iter().flat_map(|m| &m.calls).count(),
        1,
        "thinking is no tool call: {messages:#?}"
    );
    let answer = messages.last().unwrap();
    assert_eq!(answer.content, "Done.", "{messages:#?}");
    assert_eq!(
        answer.thought.as_deref(),
        Some("It worked, so I say so."),
        "{messages:#?}"
    );
    assert!(
        !texts(&messages).iter().any(|t| t.contains("worked")),
        "thinking kept as the answer: {messages:#?}"
    );
}
