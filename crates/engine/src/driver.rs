//! The deferred agent loop (docs/ARCHITECTURE.md), one task per session with a running turn.
//!
//! The loop keeps no state of its own between steps: each time round it reads the session from
//! the store and does the one thing that state calls for (ask the model, run what may run, wait
//! for decisions). That is what makes a turn resumable after a crash or restart.

use crate::clock::{expiry_after, parse_time};
use crate::decision::{Resolution, Settlement};
use crate::tools::{CallContext, RegisteredTool, ToolError};
use crate::{EngineError, Inner, Turn, TurnWatch};
use airlock_core::policy::{
    CallFacts, NeedsApproval, PolicyDecision, SessionPolicy, Step, Verdict, decide,
};
use airlock_core::{
    ApprovalStatus, CallState, DecidedBy, ItemKind, Mode, SessionStatus, TurnStatus, args_hash,
    ids, split_model_tool_name,
};
use airlock_llm::{
    ChatMessage, ChatRequest, ModelReply, ModelToolCall, ProviderApprovalRequest,
    ProviderToolOutcome, ToolSpec,
};
use airlock_protocol::{EngineEvent, TurnOutcome};
use airlock_store::{CallRow, Fence, MessageRow, NewApproval, NewCall, SessionRow, StoreError};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::watch;

/// Default number of model steps in one turn.
pub const DEFAULT_STEP_LIMIT: usize = 25;
/// Arguments larger than this are refused without being parsed.
const MAX_ARGS_BYTES: usize = 1024 * 1024;
/// A provider-executed call (`Step::Provider`): the provider asked before running its own
/// tool; Airlock's hook does not decide it and Airlock only answers the approval request.
fn is_provider(call: &CallRow) -> bool {
    call.policy_step == Some(Step::Provider)
}

/// Nothing more happens to this call on Airlock's side: its result is settled, or it is a
/// provider-executed call whose approval is decided (the answer goes out with the next request).
fn settled(call: &CallRow) -> bool {
    call.state.is_final()
        || (is_provider(call) && matches!(call.state, CallState::Approved | CallState::AutoAllowed))
}

/// Whether a session was in the middle of a turn (its status says so) when the engine stopped.
pub(crate) fn needs_driving(session: &SessionRow) -> bool {
    matches!(
        session.status,
        SessionStatus::Thinking | SessionStatus::AwaitingApproval | SessionStatus::RunningTools
    )
}

/// Starts the session's turn task unless one is running.
pub(crate) fn start(inner: &Arc<Inner>, session: &SessionRow) {
    let mut turns = inner.turns.lock().unwrap_or_else(|p| p.into_inner());
    if turns
        .get(&session.id)
        .is_some_and(|turn| turn.state.borrow().running)
    {
        return;
    }
    let (cancel, cancel_rx) = watch::channel(false);
    let (state, _) = watch::channel(TurnWatch {
        running: true,
        outcome: None,
    });
    turns.insert(
        session.id.clone(),
        Turn {
            cancel,
            state: state.clone(),
        },
    );
    drop(turns);
    // Every write this turn makes for itself is fenced by this hold (`Fence`).
    let fence = inner.hold(airlock_store::Work::Turn, &session.id);
    let mut lease_lost = inner.lease.lost();
    let inner = inner.clone();
    let session = session.clone();
    tokio::spawn(async move {
        let driving = run(&inner, &session, fence.as_ref(), cancel_rx);
        tokio::pin!(driving);
        let driven = loop {
            tokio::select! {
                driven = &mut driving => break driven,
                // This replica's lease ran out: its turn may be another replica's now.
                _ = lease_lost.changed(), if fence.is_some() => {
                    if let Some(fence) = &fence
                        && !inner.still_holds(fence)
                    {
                        break Err(StoreError::LeaseLost {
                            work: fence.work.as_str(),
                            key: fence.key.clone(),
                        }
                        .into());
                    }
                }
            }
        };
        // Dropped, not failed: the replica that took it over drives it (nothing is written or
        // told for it here; whoever waits here reads the chat as it is).
        let drop_turn = || {
            tracing::warn!(
                session = %session.name,
                "this replica's lease ran out and another replica took over this turn: it is no longer driven here"
            );
            state.send_replace(TurnWatch {
                running: false,
                outcome: None,
            });
        };
        let outcome = match driven {
            Ok(outcome) => outcome,
            Err(EngineError::Store(StoreError::LeaseLost { .. })) => return drop_turn(),
            Err(error) => {
                let mut outcome = ended(&session, TurnStatus::Failed);
                outcome.error = Some(error.to_string());
                outcome
            }
        };
        let status = if outcome.status == TurnStatus::Failed {
            SessionStatus::Failed
        } else {
            SessionStatus::Idle
        };
        // A completed turn was closed with its answer, in the same transaction.
        if outcome.status != TurnStatus::Completed {
            match inner.store.set_session_status_fenced(
                &session.id,
                status,
                outcome.error.as_deref(),
                fence.as_ref(),
            ) {
                Ok(()) => {}
                Err(StoreError::LeaseLost { .. }) => return drop_turn(),
                Err(error) => tracing::error!(%error, "cannot record the end of the turn"),
            }
        }
        // Released before the turn is seen to end: the session's next turn holds it anew (a
        // hold still there would be shared with it, and this release would then take it away).
        inner.release(airlock_store::Work::Turn, &session.id);
        inner.emit(EngineEvent::SessionStatus {
            session: session.name.clone(),
            status,
        });
        inner.emit(EngineEvent::TurnEnded {
            outcome: outcome.clone(),
        });
        state.send_replace(TurnWatch {
            running: false,
            outcome: Some(outcome),
        });
    });
}

fn ended(session: &SessionRow, status: TurnStatus) -> TurnOutcome {
    TurnOutcome {
        session: session.name.clone(),
        status,
        answer: None,
        error: None,
    }
}

fn set_status(inner: &Inner, session: &SessionRow, status: SessionStatus) {
    inner.emit(EngineEvent::SessionStatus {
        session: session.name.clone(),
        status,
    });
}

/// Drives the turn; `fence` is its hold under this replica's lease (none on a store only this
/// engine opens), passed to every write the turn makes for itself.
async fn run(
    inner: &Arc<Inner>,
    session: &SessionRow,
    fence: Option<&Fence>,
    mut cancel: watch::Receiver<bool>,
) -> Result<TurnOutcome, EngineError> {
    loop {
        if *cancel.borrow() || inner.wait_while_paused(&mut cancel).await {
            return cancel_turn(inner, session, fence);
        }
        let messages = inner.store.messages(&session.id)?;
        let Some(last) = messages.last() else {
            return Ok(ended(session, TurnStatus::Idle));
        };
        if last.role == "assistant" && last.calls.is_empty() {
            let mut outcome = ended(session, TurnStatus::Completed);
            outcome.answer = Some(last.content.clone());
            return Ok(outcome);
        }
        let calls: &[CallRow] = if last.role == "assistant" {
            &last.calls
        } else {
            &[]
        };
        if calls.iter().all(settled) {
            let step_limit = inner.turn_settings()?.step_limit;
            if steps_in_turn(&messages) >= step_limit {
                let mut outcome = ended(session, TurnStatus::StepLimit);
                outcome.error = Some(format!(
                    "the turn stopped after {step_limit} model steps (step limit)"
                ));
                return Ok(outcome);
            }
            set_status(inner, session, SessionStatus::Thinking);
            let reply = tokio::select! {
                reply = ask_model(inner, session, &messages) => reply,
                _ = cancel.changed() => return cancel_turn(inner, session, fence),
            };
            match reply {
                Ok(reply) => record_step(inner, session, fence, reply)?,
                Err(error) => {
                    let mut outcome = ended(session, TurnStatus::Failed);
                    outcome.error = Some(format!("the model request failed: {error}"));
                    return Ok(outcome);
                }
            }
            continue;
        }
        // The step's calls run in the model's order, one after another: a call that may run
        // (allowed by the policy, or approved) waits for every earlier call of its step to be
        // decided and run, or denied. Airlock never runs a provider-executed call.
        let step_waits = calls.iter().any(|c| c.state == CallState::Pending);
        let ready = ready_in_order(calls, step_waits);
        let cancelled = if !ready.is_empty() {
            run_calls(inner, session, fence, &ready, &mut cancel).await?
        } else if step_waits {
            set_status(inner, session, SessionStatus::AwaitingApproval);
            wait_for_decisions(inner, last.id, &mut cancel).await?
        } else {
            // No state this loop can move on from; stop rather than spin.
            return Err(EngineError::Invalid(
                "the step's tool calls are in a state the engine cannot continue from".into(),
            ));
        };
        if cancelled {
            return cancel_turn(inner, session, fence);
        }
    }
}

/// The calls that run next, in the model's order: of the step's calls not yet settled, those
/// that may run now, up to the first that may not — it waits for a person, or it is approved
/// while another call of its step still waits (the step's last decision starts its approved
/// calls, so nothing a person approved runs before the whole step is decided).
fn ready_in_order(calls: &[CallRow], step_waits: bool) -> Vec<&CallRow> {
    calls
        .iter()
        .filter(|c| !is_provider(c) && !c.state.is_final())
        .take_while(|c| match c.state {
            CallState::AutoAllowed | CallState::Running => true,
            CallState::Approved => !step_waits,
            _ => false,
        })
        .collect()
}

/// For each call of a step, how many earlier calls of the step it still waits for before it
/// runs (they are not yet decided and run, or denied) — for a call that may run (allowed,
/// approved, started); 0 for every other.
pub(crate) fn runs_after(calls: &[CallRow]) -> Vec<u32> {
    let mut unsettled_before = 0;
    calls
        .iter()
        .map(|call| {
            let waiting = match call.state {
                CallState::AutoAllowed | CallState::Approved | CallState::Running
                    if !is_provider(call) =>
                {
                    unsettled_before
                }
                _ => 0,
            };
            if !is_provider(call) && !call.state.is_final() {
                unsettled_before += 1;
            }
            waiting
        })
        .collect()
}

/// Model steps since the last user message.
fn steps_in_turn(messages: &[MessageRow]) -> usize {
    messages
        .iter()
        .rev()
        .take_while(|m| m.role != "user")
        .filter(|m| m.role == "assistant")
        .count()
}

fn cancel_turn(
    inner: &Inner,
    session: &SessionRow,
    fence: Option<&Fence>,
) -> Result<TurnOutcome, EngineError> {
    let waiting = inner.store.pending_of_session(&session.id)?;
    inner.settle(
        waiting
            .into_iter()
            .map(|id| {
                Settlement::new(id, Resolution::Cancel).with_reason("the user cancelled the turn")
            })
            .collect(),
        DecidedBy::Engine,
    )?;
    if let Some(last) = inner.store.messages(&session.id)?.last() {
        for call in last.calls.iter().filter(|c| !c.state.is_final()) {
            inner.take_started(&call.id);
            let result = json!({"type": "cancelled", "reason": "the user cancelled the turn"});
            inner
                .store
                .finish_call_fenced(&call.id, CallState::Cancelled, &result, fence)?;
        }
    }
    Ok(ended(session, TurnStatus::Cancelled))
}

fn history(inner: &Inner, messages: &[MessageRow]) -> Result<ChatRequest, EngineError> {
    let mut chat = Vec::with_capacity(messages.len() + 1);
    if let Some(prompt) = &inner.turn_settings()?.system_prompt {
        chat.push(ChatMessage::system(prompt.clone()));
    }
    for message in messages {
        if message.role == "user" {
            chat.push(ChatMessage::user(message.content.clone()));
            continue;
        }
        let content = (!message.content.is_empty()).then(|| message.content.clone());
        let (asked, calls): (Vec<&CallRow>, Vec<&CallRow>) =
            message.calls.iter().partition(|c| is_provider(c));
        let mut assistant = ChatMessage::assistant(
            content,
            calls
                .iter()
                .map(|c| ModelToolCall {
                    id: c.provider_call_id.clone(),
                    name: c.model_name.clone(),
                    arguments: c.raw_args.clone(),
                })
                .collect(),
        );
        assistant.approval_requests = asked
            .iter()
            .map(|c| ProviderApprovalRequest {
                id: c.provider_call_id.clone(),
                server_label: c.server.clone(),
                name: c.tool.clone(),
                arguments: c.raw_args.clone(),
            })
            .collect();
        chat.push(assistant);
        for call in calls {
            let text = match &call.result {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => json!({"type": "error", "message": "no result"}).to_string(),
            };
            let id = call.provider_call_id.clone();
            chat.push(if call.state == CallState::Succeeded {
                ChatMessage::tool_result(id, text)
            } else {
                ChatMessage::tool_error(id, text)
            });
        }
        for call in asked {
            chat.push(approval_answer(call));
        }
    }
    let tools = inner
        .tools
        .all()
        .into_iter()
        .map(|t| ToolSpec {
            name: t.def.model_name(),
            description: t.def.description.clone(),
            parameters: t.def.input_schema.clone(),
        })
        .collect();
    Ok(ChatRequest {
        messages: chat,
        tools,
    })
}

/// The answer to a provider's approval request: approved when the person (or the session mode)
/// approved it — then it has arguments to run with — otherwise denied with the reason the
/// call's result gives.
fn approval_answer(call: &CallRow) -> ChatMessage {
    if call.run_args.is_some() {
        let mut answer = ChatMessage::approval_answer(call.provider_call_id.clone(), true, None);
        if let Some(approval) = answer.approval.as_mut() {
            approval.outcome = call
                .result
                .as_ref()
                .and_then(|r| r.get("outcome"))
                .and_then(|o| serde_json::from_value::<ProviderToolOutcome>(o.clone()).ok());
        }
        return answer;
    }
    let reason = call
        .result
        .as_ref()
        .and_then(|r| r.get("reason").or_else(|| r.get("message")))
        .and_then(Value::as_str)
        .unwrap_or("denied by the user")
        .to_string();
    ChatMessage::approval_answer(call.provider_call_id.clone(), false, Some(reason))
}

async fn ask_model(
    inner: &Arc<Inner>,
    session: &SessionRow,
    messages: &[MessageRow],
) -> Result<ModelReply, EngineError> {
    let request = history(inner, messages)?;
    let provider = inner.provider_for(Some(&session.id))?;
    let sink_inner = inner.clone();
    let name = session.name.clone();
    let sink = move |text: &str| {
        sink_inner.emit(EngineEvent::TextDelta {
            session: name.clone(),
            text: text.to_string(),
        });
    };
    provider
        .complete(&request, Some(&sink))
        .await
        .map_err(|e| EngineError::Provider(e.to_string()))
}

fn invalid(call: &mut NewCall, message: String) {
    call.state = CallState::Invalid;
    call.result = Some(json!({"type": "error", "message": message}));
}

/// What deciding the calls of one model step needs to know.
struct StepContext<'a> {
    inner: &'a Inner,
    session: &'a SessionRow,
    session_policy: SessionPolicy,
    policy: std::result::Result<Arc<airlock_core::PolicyConfig>, EngineError>,
    timeout: Option<u64>,
}

/// Validates and decides every call of a model reply, then persists the step — calls, their
/// policy outcome and approval requests in one transaction — before announcing anything. When
/// a counted grant the step relied on was used up meanwhile (another step took its last use
/// first), nothing was written: the step is decided again with the grants as they are now.
fn record_step(
    inner: &Inner,
    session: &SessionRow,
    fence: Option<&Fence>,
    reply: ModelReply,
) -> Result<(), EngineError> {
    // What the provider's own tools did in earlier steps: recorded once, however many times
    // this step is decided.
    if !reply.provider_outcomes.is_empty() {
        record_provider_outcomes(inner, session, fence, &reply.provider_outcomes)?;
    }
    const ATTEMPTS: usize = 3;
    for attempt in 1..=ATTEMPTS {
        match try_record_step(inner, session, fence, &reply) {
            Err(EngineError::Store(StoreError::GrantUsedUp(_))) if attempt < ATTEMPTS => {
                inner.invalidate_policy();
            }
            other => return other,
        }
    }
    Ok(())
}

fn try_record_step(
    inner: &Inner,
    session: &SessionRow,
    fence: Option<&Fence>,
    reply: &ModelReply,
) -> Result<(), EngineError> {
    let fresh = inner
        .store
        .session(&session.id)?
        .unwrap_or_else(|| session.clone());
    let mut context = StepContext {
        inner,
        session,
        session_policy: SessionPolicy::new(fresh.mode, inner.store.session_grants(&session.id)?),
        policy: inner.policy(),
        timeout: inner.turn_settings()?.approval_timeout_secs,
    };
    let mut seen = HashSet::new();
    let mut calls = Vec::with_capacity(reply.tool_calls.len());
    let mut approvals = Vec::new();
    // The first call of each (server, tool, arguments) that asks: identical calls after it in
    // this step follow its decision instead of asking again.
    let mut asked: HashMap<(String, String, String), (String, String)> = HashMap::new();
    for (position, model_call) in reply.tool_calls.iter().enumerate() {
        let duplicate = model_call.id.is_empty() || !seen.insert(model_call.id.clone());
        let (mut call, mut approval) = function_call(&mut context, position, model_call, duplicate);
        if approval.is_some()
            && let Some(hash) = &call.args_hash
        {
            let key = (call.server.clone(), call.tool.clone(), hash.clone());
            match asked.get(&key) {
                Some((leader, leader_id)) => {
                    approval = None;
                    call.same_as = Some(leader.clone());
                    call.policy_why = Some(format!(
                        "the same call as {leader_id} in this step: asked once, decided together"
                    ));
                }
                None => {
                    asked.insert(key, (call.id.clone(), call.provider_call_id.clone()));
                }
            }
        }
        calls.push(call);
        approvals.extend(approval);
    }
    let mode = fresh
        .mode
        .or_else(|| context.policy.as_ref().ok().map(|p| p.workspace_mode))
        .unwrap_or(Mode::Ask);
    for asked in &reply.approval_requests {
        let fresh_id = seen.insert(asked.id.clone()) && !asked.id.is_empty();
        let (call, approval) =
            provider_call(session, asked.clone(), fresh_id, mode, context.timeout);
        calls.push(call);
        approvals.extend(approval);
    }
    #[cfg(test)]
    inner
        .step_gate
        .pass(calls.iter().any(|call| call.grant_use.is_some()));
    let message_id = inner.store.record_assistant_step_fenced(
        &session.id,
        &reply.text,
        &calls,
        &approvals,
        fence,
    )?;
    // A counted grant's use was taken: the cached policy holds the count from before.
    if calls.iter().any(|call| call.grant_use.is_some()) {
        inner.invalidate_policy();
    }
    if !approvals.is_empty() {
        for row in inner.store.approvals_of_message(message_id)? {
            inner.announce_request(inner.inbox_item(row));
        }
    }
    Ok(())
}

/// Holds the next steps between deciding their calls and recording them until all of them got
/// there (or 30 s passed): tests force steps to race with it — both decide on the same grants,
/// then both record.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct StepGate {
    /// How many steps are still to be held.
    left: std::sync::Mutex<usize>,
    all_there: std::sync::Condvar,
    /// Whether each step held relied on a counted grant, in the order they came.
    relied_on_grant: std::sync::Mutex<Vec<bool>>,
}

#[cfg(test)]
impl StepGate {
    /// The next `steps` steps wait for one another before recording.
    pub(crate) fn hold(&self, steps: usize) {
        *self.left.lock().unwrap_or_else(|p| p.into_inner()) = steps;
    }

    fn pass(&self, relies_on_grant: bool) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        if *left == 0 {
            return;
        }
        *left -= 1;
        self.relied_on_grant
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(relies_on_grant);
        self.all_there.notify_all();
        // Off the runtime's worker: a task it was about to run must not wait behind this one.
        tokio::task::block_in_place(|| {
            let _held = self
                .all_there
                .wait_timeout_while(left, std::time::Duration::from_secs(30), |left| *left > 0)
                .unwrap_or_else(|p| p.into_inner());
        });
    }

    pub(crate) fn relied_on_grant(&self) -> Vec<bool> {
        self.relied_on_grant
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// One function call of the model: checked (its id, size, tool, JSON and schema; a call that
/// fails is recorded invalid and never runs), then put through the policy — run, deny, or an
/// approval request.
fn function_call(
    context: &mut StepContext<'_>,
    position: usize,
    model_call: &ModelToolCall,
    duplicate: bool,
) -> (NewCall, Option<NewApproval>) {
    let (server, tool) = split_model_tool_name(&model_call.name)
        .map(|(s, t)| (s.to_string(), t.to_string()))
        .unwrap_or_default();
    let mut call = NewCall {
        id: ids::new_id("call"),
        provider_call_id: if duplicate {
            format!("{}_airlock{position}", model_call.id)
        } else {
            model_call.id.clone()
        },
        model_name: model_call.name.clone(),
        server,
        tool,
        raw_args: String::new(),
        args: None,
        args_hash: None,
        state: CallState::Proposed,
        policy_step: None,
        policy_why: None,
        result: None,
        grant_use: None,
        same_as: None,
    };
    let (registered, args) = match checked_call(context.inner, &mut call, model_call, duplicate) {
        Ok(checked) => checked,
        Err(why) => {
            invalid(&mut call, why);
            return (call, None);
        }
    };
    let hash = args_hash(&args);
    let decision = policy_decision(context, &call, &registered, &args, &hash);
    call.policy_step = Some(decision.step);
    call.policy_why = Some(decision.why.clone());
    let mut approval = None;
    match decision.verdict {
        Verdict::Run => {
            call.state = CallState::AutoAllowed;
            // The next call of this step sees one use fewer.
            if let Some(grant) = decision.grant_use {
                context.session_policy.spend(&grant);
                call.grant_use = Some(grant);
            }
        }
        Verdict::Deny => {
            call.state = CallState::Denied;
            call.result = Some(airlock_core::execution_denied(&decision.why));
        }
        Verdict::Ask => {
            call.state = CallState::Pending;
            approval = Some(NewApproval {
                approval_id: ids::new_approval_id(),
                tool_call_id: Some(call.id.clone()),
                session_id: context.session.id.clone(),
                kind: ItemKind::ToolCall,
                server: call.server.clone(),
                tool: call.tool.clone(),
                args: args.clone(),
                args_hash: hash.clone(),
                why: decision.why,
                expires_at: context.timeout.map(expiry_after),
            });
        }
    }
    call.args = Some(args);
    call.args_hash = Some(hash);
    (call, approval)
}

/// The registered tool and the call's arguments, or why the call is invalid.
fn checked_call(
    inner: &Inner,
    call: &mut NewCall,
    model_call: &ModelToolCall,
    duplicate: bool,
) -> std::result::Result<(Arc<RegisteredTool>, Value), String> {
    if duplicate {
        return Err(format!("duplicate tool call id '{}'", model_call.id));
    }
    if model_call.arguments.len() > MAX_ARGS_BYTES {
        call.raw_args = "{}".into();
        return Err(format!(
            "arguments too large ({} bytes; the limit is {MAX_ARGS_BYTES})",
            model_call.arguments.len()
        ));
    }
    call.raw_args = model_call.arguments.clone();
    let Some(registered) = inner.tools.tool(&call.server, &call.tool) else {
        return Err(format!("unknown tool '{}'", model_call.name));
    };
    let text = if model_call.arguments.trim().is_empty() {
        "{}"
    } else {
        model_call.arguments.as_str()
    };
    let args = match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(_) => return Err("arguments must be a JSON object".into()),
        Err(error) => return Err(format!("arguments are not valid JSON: {error}")),
    };
    match registered.accept(args) {
        Ok(args) => Ok((registered, args)),
        Err((args, error)) => {
            call.args = Some(args);
            Err(error.to_string())
        }
    }
}

/// The policy's verdict on one valid call. Any error on the approval path means deny.
fn policy_decision(
    context: &StepContext<'_>,
    call: &NewCall,
    registered: &RegisteredTool,
    args: &Value,
    hash: &str,
) -> PolicyDecision {
    match &context.policy {
        Ok(policy) => {
            let needs: Option<NeedsApproval> = context
                .inner
                .tools
                .source(&call.server)
                .and_then(|source| source.needs_approval(&call.tool, args));
            let facts = CallFacts {
                session_id: &context.session.id,
                server: &call.server,
                tool: &call.tool,
                args,
                args_hash: hash,
                read_only_hint: registered.def.read_only_hint,
            };
            decide(policy, &context.session_policy, facts, needs)
        }
        Err(error) => PolicyDecision::new(
            Verdict::Deny,
            Step::Blocked,
            format!("the approval settings could not be read: {error}"),
        ),
    }
}

/// Records a provider's approval request as a call Airlock will never run, and — unless the
/// session mode decides — the inbox item of kind `provider_tool_call` that asks the person.
fn provider_call(
    session: &SessionRow,
    asked: ProviderApprovalRequest,
    fresh_id: bool,
    mode: Mode,
    timeout: Option<u64>,
) -> (NewCall, Option<NewApproval>) {
    let mut call = NewCall {
        id: ids::new_id("call"),
        provider_call_id: asked.id.clone(),
        model_name: asked.name.clone(),
        server: asked.server_label.clone(),
        tool: asked.name.clone(),
        raw_args: asked.arguments.clone(),
        args: None,
        args_hash: None,
        state: CallState::Proposed,
        policy_step: Some(Step::Provider),
        policy_why: Some(format!(
            "the provider asks before it runs '{}' of its MCP server '{}'",
            asked.name, asked.server_label
        )),
        result: None,
        grant_use: None,
        same_as: None,
    };
    if !fresh_id {
        // An answer could not name this request unambiguously: never approve it.
        call.provider_call_id = format!("{}_airlock_duplicate", asked.id);
        invalid(
            &mut call,
            format!(
                "the provider's approval request id '{}' is empty or repeated",
                asked.id
            ),
        );
        return (call, None);
    }
    let text = if asked.arguments.trim().is_empty() {
        "{}"
    } else {
        asked.arguments.as_str()
    };
    let args = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(_) => {
            invalid(
                &mut call,
                "the provider's arguments are not a JSON object; denied".into(),
            );
            return (call, None);
        }
        Err(error) => {
            invalid(
                &mut call,
                format!("the provider's arguments are not valid JSON ({error}); denied"),
            );
            return (call, None);
        }
    };
    let hash = args_hash(&args);
    call.args = Some(args.clone());
    call.args_hash = Some(hash.clone());
    match mode {
        Mode::NeverAsk => {
            call.state = CallState::AutoAllowed;
            call.policy_why = Some("session mode 'never-ask': approved without asking".into());
            (call, None)
        }
        Mode::DenyAll => {
            let why = "session mode 'deny-all': denied without asking";
            call.state = CallState::Denied;
            call.policy_why = Some(why.into());
            call.result = Some(airlock_core::execution_denied(why));
            (call, None)
        }
        Mode::Ask => {
            call.state = CallState::Pending;
            let approval = NewApproval {
                approval_id: ids::new_approval_id(),
                tool_call_id: Some(call.id.clone()),
                session_id: session.id.clone(),
                kind: ItemKind::ProviderToolCall,
                server: asked.server_label,
                tool: asked.name,
                args,
                args_hash: hash,
                why: call.policy_why.clone().unwrap_or_default(),
                expires_at: timeout.map(expiry_after),
            };
            (call, Some(approval))
        }
    }
}

/// What the provider reports about tools it ran: into the audit trail, and onto the call it
/// asked about (so the transcript shows the provider's result).
fn record_provider_outcomes(
    inner: &Inner,
    session: &SessionRow,
    fence: Option<&Fence>,
    outcomes: &[ProviderToolOutcome],
) -> Result<(), EngineError> {
    let messages = inner.store.messages(&session.id)?;
    for outcome in outcomes {
        let asked = outcome.approval_request_id.as_deref().and_then(|id| {
            messages
                .iter()
                .rev()
                .flat_map(|m| m.calls.iter())
                .find(|c| is_provider(c) && c.provider_call_id == id && !c.state.is_final())
        });
        let approval_id = match asked {
            Some(call) => inner
                .store
                .approvals_of_message(call.message_id)?
                .into_iter()
                .find(|a| a.tool_call_id.as_deref() == Some(call.id.as_str()))
                .map(|a| a.approval_id),
            None => None,
        };
        let result = json!({ "type": "provider-result", "outcome": outcome });
        inner.store.audit(
            "provider",
            "provider_tool_outcome",
            None,
            approval_id.as_deref(),
            &json!({
                "session": session.name, "server_label": outcome.server_label, "tool": outcome.name,
                "arguments": outcome.arguments, "provider_call_id": outcome.id,
                "approval_request_id": outcome.approval_request_id, "output": outcome.output, "error": outcome.error,
            }),
        )?;
        if let Some(call) = asked {
            let state = if outcome.error.is_some() {
                CallState::Failed
            } else {
                CallState::Succeeded
            };
            inner
                .store
                .finish_call_fenced(&call.id, state, &result, fence)?;
        }
    }
    Ok(())
}

/// Waits until a pending request of the step is decided (or expires), so that the step's
/// calls can move on in their order. Returns true when the turn was cancelled meanwhile.
async fn wait_for_decisions(
    inner: &Arc<Inner>,
    message_id: i64,
    cancel: &mut watch::Receiver<bool>,
) -> Result<bool, EngineError> {
    let approvals = inner.store.approvals_of_message(message_id)?;
    let ids: Vec<&str> = approvals
        .iter()
        .filter(|a| a.status == ApprovalStatus::Pending)
        .map(|a| a.approval_id.as_str())
        .collect();
    // Register before reading again, so that a decision landing in between still wakes us.
    let receivers: Vec<_> = ids.iter().map(|id| inner.router.wait_for(id)).collect();
    let still_pending: Vec<_> = inner
        .store
        .approvals_of_message(message_id)?
        .into_iter()
        .filter(|a| a.status == ApprovalStatus::Pending)
        .collect();
    if still_pending.is_empty() || receivers.is_empty() {
        ids.iter().for_each(|id| inner.router.forget(id));
        return Ok(false);
    }
    let earliest = still_pending
        .iter()
        .filter_map(|a| a.expires_at.as_deref().and_then(parse_time))
        .min();
    let sleep = async {
        match earliest {
            Some(at) => {
                let wait = (at - time::OffsetDateTime::now_utc()).max(time::Duration::ZERO);
                tokio::time::sleep(std::time::Duration::from_millis(
                    wait.whole_milliseconds() as u64
                ))
                .await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    // On a shared database, also look again now and then, should a decision's notification
    // be lost with its connection.
    let recheck = async {
        match inner.store.replicas() {
            Some(_) => tokio::time::sleep(crate::replicas::RECHECK).await,
            None => std::future::pending::<()>().await,
        }
    };
    let cancelled = tokio::select! {
        _ = futures::future::select_all(receivers) => false,
        _ = recheck => {
            ids.iter().for_each(|id| inner.router.forget(id));
            false
        }
        _ = sleep => {
            expire_due(inner, &still_pending);
            false
        }
        _ = cancel.changed() => {
            ids.iter().for_each(|id| inner.router.forget(id));
            true
        }
    };
    Ok(cancelled)
}

fn expire_due(inner: &Inner, pending: &[airlock_store::ApprovalRow]) {
    let now = time::OffsetDateTime::now_utc();
    let due: Vec<Settlement> = pending
        .iter()
        .filter(|approval| {
            approval
                .expires_at
                .as_deref()
                .and_then(parse_time)
                .is_some_and(|at| at <= now)
        })
        .map(|approval| {
            Settlement::new(approval.approval_id.clone(), Resolution::Expire)
                .with_reason("timed out")
        })
        .collect();
    match inner.settle(due, DecidedBy::Timeout) {
        Ok(outcomes) => {
            for error in outcomes.into_iter().filter_map(Result::err) {
                tracing::debug!(%error, "expiry lost to a decision");
            }
        }
        Err(error) => tracing::warn!(%error, "cannot record the expiry of pending requests"),
    }
}

/// Runs calls one after another, in the order given (the model's). Each is claimed before it
/// is invoked — `running` written durably, or a `running` call started by a decision claimed —
/// so no call runs twice; one claimed already is left over from a failure and is reported as
/// interrupted. Stops between calls while the agents are paused. Returns true when the turn was
/// cancelled while a call ran.
async fn run_calls(
    inner: &Arc<Inner>,
    session: &SessionRow,
    fence: Option<&Fence>,
    calls: &[&CallRow],
    cancel: &mut watch::Receiver<bool>,
) -> Result<bool, EngineError> {
    set_status(inner, session, SessionStatus::RunningTools);
    for call in calls {
        if *inner.paused.borrow() {
            return Ok(false);
        }
        let args = call
            .run_args
            .clone()
            .or_else(|| call.args.clone())
            .unwrap_or_else(|| json!({}));
        if call.state == CallState::Running {
            // Started (and claimed) by its decision's transaction: invoked now, once. Any
            // other running call is claimed here, or reported interrupted when it was before.
            if !inner.take_started(&call.id)
                && inner
                    .store
                    .claim_invocation_fenced(&[call.id.as_str()], fence)?
                    .is_empty()
            {
                let result =
                    json!({"type": "error", "message": "interrupted; the call was not run again"});
                inner
                    .store
                    .finish_call_fenced(&call.id, CallState::Failed, &result, fence)?;
                continue;
            }
        } else {
            inner
                .store
                .mark_running_fenced(&[(call.id.clone(), args.clone())], fence)?;
        }
        let source = inner.tools.source(&call.server);
        let context = CallContext {
            session_id: session.id.clone(),
            session: session.name.clone(),
            tool_call_id: call.id.clone(),
        };
        let run = async {
            match source {
                Some(source) => source.call_in(&context, &call.tool, &args).await,
                None => Err(ToolError::new(format!(
                    "the server '{}' is not available",
                    call.server
                ))),
            }
        };
        let result = tokio::select! {
            result = run => result,
            _ = cancel.changed() => {
                let result = json!({"type": "error", "message": "cancelled by the user while running"});
                inner.store.finish_call_fenced(&call.id, CallState::Failed, &result, fence)?;
                return Ok(true);
            }
        };
        let (state, value) = match result {
            Ok(value) => (CallState::Succeeded, value),
            Err(error) => (CallState::Failed, error.into_result()),
        };
        inner
            .store
            .finish_call_fenced(&call.id, state, &value, fence)?;
        inner.emit(EngineEvent::ToolFinished {
            session: session.name.clone(),
            tool_call_id: call.id.clone(),
            state: state.as_str().to_string(),
        });
    }
    Ok(false)
}
