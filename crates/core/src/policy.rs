//! The pre-execution hook: does this call run, wait for a person, or get denied?
//!
//! `decide` is a pure function of a [`PolicyConfig`] (everything the person set), a
//! [`SessionPolicy`] (the session's mode and grants) and the [`CallFacts`] of one call. The config
//! is compiled once into hash maps keyed by server then tool, and argument rules into one
//! `GlobSet`/`RegexSet` per pointer and effect, so one decision costs a few lookups however many
//! servers, tools and rules there are.

use crate::path::{may_need_normalizing, normalize_lexically};
use crate::types::{Mode, ServerDefault, ToolSetting};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::RegexSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// What happens to the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Run,
    Ask,
    Deny,
}

/// Which step of the order made the decision (recorded with the call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Step {
    Blocked,
    DenyRule,
    SessionMode,
    WorkspaceMode,
    AllowForChat,
    Remembered,
    ArgRule,
    NeedsApproval,
    ToolSetting,
    ReadOnlyHint,
    ServerDefault,
    /// The server's definition or the tool's description, schema or annotations changed since
    /// the person last reviewed them: standing grants are suspended.
    Changed,
    /// Not a step of Airlock's order: the model provider runs this tool itself and asked
    /// before it did (provider-executed approvals); Airlock never runs it.
    Provider,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Blocked => "blocked",
            Step::DenyRule => "deny_rule",
            Step::SessionMode => "session_mode",
            Step::WorkspaceMode => "workspace_mode",
            Step::AllowForChat => "allow_for_chat",
            Step::Remembered => "remembered",
            Step::ArgRule => "arg_rule",
            Step::NeedsApproval => "needs_approval",
            Step::ToolSetting => "tool_setting",
            Step::ReadOnlyHint => "read_only_hint",
            Step::ServerDefault => "server_default",
            Step::Changed => "changed",
            Step::Provider => "provider",
        }
    }

    pub const ALL: &'static [Step] = &[
        Step::Blocked,
        Step::DenyRule,
        Step::SessionMode,
        Step::WorkspaceMode,
        Step::AllowForChat,
        Step::Remembered,
        Step::ArgRule,
        Step::NeedsApproval,
        Step::ToolSetting,
        Step::ReadOnlyHint,
        Step::ServerDefault,
        Step::Changed,
        Step::Provider,
    ];
}

impl std::str::FromStr for Step {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Step::ALL
            .iter()
            .copied()
            .find(|step| step.as_str() == s)
            .ok_or_else(|| format!("'{s}' is not a step of the decision order"))
    }
}

/// The outcome with the step that made it and a sentence a person can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    pub verdict: Verdict,
    pub step: Step,
    pub why: String,
    /// A counted grant this call uses up one of (its id): the engine takes the use in the
    /// same transaction that records the call allowed, and asks instead if none is left.
    pub grant_use: Option<String>,
}

impl PolicyDecision {
    pub fn new(verdict: Verdict, step: Step, why: impl Into<String>) -> Self {
        Self {
            verdict,
            step,
            why: why.into(),
            grant_use: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RuleEffect {
    Allow,
    Ask,
    Deny,
}

impl std::str::FromStr for RuleEffect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(RuleEffect::Allow),
            "ask" => Ok(RuleEffect::Ask),
            "deny" => Ok(RuleEffect::Deny),
            other => Err(format!(
                "'{other}' is not a rule effect; expected allow, ask or deny"
            )),
        }
    }
}

impl RuleEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleEffect::Allow => "allow",
            RuleEffect::Ask => "ask",
            RuleEffect::Deny => "deny",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "pattern", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RulePattern {
    Glob(String),
    Regex(String),
}

/// An argument rule: `server/tool`, a JSON pointer into the arguments, a pattern, an effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArgRule {
    pub id: String,
    pub server: String,
    pub tool: String,
    pub pointer: String,
    pub pattern: RulePattern,
    pub effect: RuleEffect,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("rule {id}: invalid glob '{pattern}': {message}")]
    Glob {
        id: String,
        pattern: String,
        message: String,
    },
    #[error("rule {id}: invalid regex '{pattern}': {message}")]
    Regex {
        id: String,
        pattern: String,
        message: String,
    },
    #[error("rule {id}: '{pointer}' is not a JSON pointer (it must be empty or start with '/')")]
    Pointer { id: String, pointer: String },
}

/// A remembered decision (step 4 of the decision order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Remembered {
    pub id: String,
    pub server: String,
    pub tool: String,
    /// `Some` binds to exactly these arguments.
    pub args_hash: Option<String>,
    /// `Some` for scope `session`: only this session.
    pub session_id: Option<String>,
    pub approve: bool,
    /// A timed grant: it applies until then (RFC 3339, UTC), then never again.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// A counted grant: how many more calls it lets through.
    #[serde(default)]
    pub uses_left: Option<u32>,
    /// A grant's arguments: the pattern they must match (the file's folder, the command's
    /// prefix); `None` with no `args_hash`: any arguments.
    #[serde(default)]
    pub pattern: Option<GrantPattern>,
    /// When it was made (RFC 3339, UTC): a call it lets through names the grant by it.
    #[serde(default)]
    pub created_at: Option<String>,
}

/// The arguments a grant covers: each field's pattern, matched as an allow rule's is (the same
/// matcher, so a command prefix never covers a chained command), every field matching.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GrantPattern {
    /// What a person reads: "anything under src/", "commands starting `git status`".
    pub label: String,
    pub fields: Vec<FieldPattern>,
}

/// One field of a [`GrantPattern`]: a JSON pointer into the arguments and its pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FieldPattern {
    pub pointer: String,
    pub pattern: RulePattern,
}

impl GrantPattern {
    /// Its fields compiled as allow rules of `server/tool`. A pattern of no field is an error:
    /// it would cover every call.
    pub fn compile(&self, server: &str, tool: &str) -> Result<GrantMatcher, PolicyError> {
        if self.fields.is_empty() {
            return Err(PolicyError::Pointer {
                id: "grant".into(),
                pointer: String::new(),
            });
        }
        let probes = self
            .fields
            .iter()
            .map(|field| {
                RuleProbe::new(&ArgRule {
                    id: "grant".into(),
                    server: server.into(),
                    tool: tool.into(),
                    pointer: field.pointer.clone(),
                    pattern: field.pattern.clone(),
                    effect: RuleEffect::Allow,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(GrantMatcher { probes })
    }
}

/// A [`GrantPattern`] compiled: whether a call's arguments are covered.
#[derive(Debug, Clone)]
pub struct GrantMatcher {
    probes: Vec<RuleProbe>,
}

impl GrantMatcher {
    pub fn covers(&self, args: &Value) -> bool {
        self.probes.iter().all(|probe| probe.matches(args))
    }
}

impl Remembered {
    /// Whether it still applies at `now` (unix seconds): not expired, not used up. A time that
    /// does not parse counts as expired.
    pub fn active_at(&self, now: i64) -> bool {
        let unexpired = self
            .expires_at
            .as_deref()
            .is_none_or(|at| unix_seconds(at).is_some_and(|at| at > now));
        unexpired && self.uses_left != Some(0)
    }

    /// What is left of a grant as a person reads it at `now`: "12 min left, 3 calls left";
    /// empty for a decision with no limit.
    pub fn left_at(&self, now: i64) -> String {
        let mut parts = Vec::new();
        if let Some(at) = self.expires_at.as_deref().and_then(unix_seconds) {
            parts.push(format!("{} left", crate::duration::describe_secs(at - now)));
        }
        if let Some(left) = self.uses_left {
            parts.push(format!(
                "{left} call{} left",
                if left == 1 { "" } else { "s" }
            ));
        }
        parts.join(", ")
    }
}

/// Seconds since the epoch of an RFC 3339 time.
pub fn unix_seconds(rfc3339: &str) -> Option<i64> {
    time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}

/// Now, in seconds since the epoch.
pub fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerPolicy {
    pub default: ServerDefault,
    pub trust_read_only_hints: bool,
}

impl Default for ServerPolicy {
    fn default() -> Self {
        Self {
            default: ServerDefault::Required,
            trust_read_only_hints: false,
        }
    }
}

/// What a code-defined tool's `needs_approval(args, ctx)` says, if it has an opinion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeedsApproval {
    Allow(String),
    Ask(String),
    Deny(String),
}

/// One call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub session_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub args: &'a Value,
    pub args_hash: &'a str,
    pub read_only_hint: bool,
}

/// The session's own part: its mode override and its "Allow for this chat" grants; the time
/// its calls are decided at (timed grants); and the uses of counted grants already taken by
/// earlier calls of the same step, which the store has not recorded yet.
#[derive(Debug, Clone, Default)]
pub struct SessionPolicy {
    pub mode: Option<Mode>,
    allowed: HashMap<String, HashSet<String>>,
    now: i64,
    spent: HashMap<String, u32>,
}

impl SessionPolicy {
    /// Decides at the current time.
    pub fn new(mode: Option<Mode>, grants: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut allowed: HashMap<String, HashSet<String>> = HashMap::new();
        for (server, tool) in grants {
            allowed.entry(server).or_default().insert(tool);
        }
        Self {
            mode,
            allowed,
            now: unix_now(),
            spent: HashMap::new(),
        }
    }

    /// Decides as at `now` (seconds since the epoch).
    pub fn at(mut self, now: i64) -> Self {
        self.now = now;
        self
    }

    /// Notes that a call of this step took one use of a counted grant.
    pub fn spend(&mut self, grant: &str) {
        *self.spent.entry(grant.to_string()).or_default() += 1;
    }

    /// Whether a remembered decision applies now, counting the uses this step already took.
    fn applies(&self, entry: &Remembered) -> bool {
        if !entry.active_at(self.now) {
            return false;
        }
        match entry.uses_left {
            Some(left) => self.spent.get(&entry.id).copied().unwrap_or(0) < left,
            None => true,
        }
    }

    fn allows(&self, server: &str, tool: &str) -> bool {
        self.allowed
            .get(server)
            .is_some_and(|tools| tools.contains(tool))
    }
}

/// Everything the person set, compiled for lookup.
#[derive(Debug, Clone)]
pub struct PolicyConfig {
    pub workspace_mode: Mode,
    servers: HashMap<String, ServerPolicy>,
    tool_settings: HashMap<String, HashMap<String, ToolSetting>>,
    rules: HashMap<String, HashMap<String, ToolRules>>,
    remembered: HashMap<String, HashMap<String, Vec<Kept>>>,
    suspended: HashMap<String, HashMap<String, String>>,
    from_notification: HashMap<String, NotificationChoices>,
}

/// A remembered decision with its grant's pattern compiled: `Some(None)` when it did not
/// compile (it then covers nothing).
#[derive(Debug, Clone)]
struct Kept {
    entry: Remembered,
    pattern: Option<Option<GrantMatcher>>,
}

impl Kept {
    fn covers(&self, call: &CallFacts<'_>) -> bool {
        match (&self.entry.args_hash, &self.pattern) {
            (Some(hash), _) => hash == call.args_hash,
            (None, None) => true,
            (None, Some(matcher)) => matcher.as_ref().is_some_and(|m| m.covers(call.args)),
        }
    }
}

/// A server's choices of whether a notification may approve its tools.
#[derive(Debug, Clone, Default)]
struct NotificationChoices {
    server: Option<bool>,
    tools: HashMap<String, bool>,
}

/// Plain inputs for [`PolicyConfig::compile`].
#[derive(Debug, Clone, Default)]
pub struct PolicyInputs {
    pub workspace_mode: Option<Mode>,
    pub servers: Vec<(String, ServerPolicy)>,
    pub tool_settings: Vec<(String, String, ToolSetting)>,
    pub rules: Vec<ArgRule>,
    pub remembered: Vec<Remembered>,
    /// `(server, tool, what changed)`: tools whose pinned definition changed (rug-pull guard).
    pub suspended: Vec<(String, String, String)>,
    /// `(server, tool or None for the whole server, allow)`: whether a notification may
    /// approve the tool.
    pub from_notification: Vec<(String, Option<String>, bool)>,
}

impl PolicyConfig {
    pub fn compile(inputs: PolicyInputs) -> Result<Self, PolicyError> {
        let mut tool_settings: HashMap<String, HashMap<String, ToolSetting>> = HashMap::new();
        for (server, tool, setting) in inputs.tool_settings {
            tool_settings
                .entry(server)
                .or_default()
                .insert(tool, setting);
        }
        let mut grouped: HashMap<String, HashMap<String, Vec<ArgRule>>> = HashMap::new();
        for rule in inputs.rules {
            grouped
                .entry(rule.server.clone())
                .or_default()
                .entry(rule.tool.clone())
                .or_default()
                .push(rule);
        }
        let mut rules = HashMap::new();
        for (server, tools) in grouped {
            let mut compiled = HashMap::new();
            for (tool, list) in tools {
                compiled.insert(tool, ToolRules::compile(&list)?);
            }
            rules.insert(server, compiled);
        }
        let mut remembered: HashMap<String, HashMap<String, Vec<Kept>>> = HashMap::new();
        for entry in inputs.remembered {
            // A pattern that no longer compiles covers nothing (the call is asked), rather than
            // failing every decision.
            let pattern = match &entry.pattern {
                None => None,
                Some(pattern) => Some(pattern.compile(&entry.server, &entry.tool).ok()),
            };
            remembered
                .entry(entry.server.clone())
                .or_default()
                .entry(entry.tool.clone())
                .or_default()
                .push(Kept { entry, pattern });
        }
        let mut suspended: HashMap<String, HashMap<String, String>> = HashMap::new();
        for (server, tool, what) in inputs.suspended {
            suspended.entry(server).or_default().insert(tool, what);
        }
        let mut from_notification: HashMap<String, NotificationChoices> = HashMap::new();
        for (server, tool, allow) in inputs.from_notification {
            let choices = from_notification.entry(server).or_default();
            match tool {
                Some(tool) => {
                    choices.tools.insert(tool, allow);
                }
                None => choices.server = Some(allow),
            }
        }
        Ok(Self {
            from_notification,
            workspace_mode: inputs.workspace_mode.unwrap_or(Mode::Ask),
            suspended,
            servers: inputs.servers.into_iter().collect(),
            tool_settings,
            rules,
            remembered,
        })
    }

    fn tool_setting(&self, server: &str, tool: &str) -> ToolSetting {
        self.tool_settings
            .get(server)
            .and_then(|tools| tools.get(tool))
            .copied()
            .unwrap_or(ToolSetting::ServerDefault)
    }

    fn match_rules(&self, server: &str, tool: &str, args: &Value) -> RuleMatch {
        self.rules
            .get(server)
            .and_then(|tools| tools.get(tool))
            .map(|rules| rules.evaluate(args))
            .unwrap_or_default()
    }

    /// What changed, when the tool's grants are suspended (rug-pull guard).
    pub fn suspension(&self, server: &str, tool: &str) -> Option<&str> {
        self.suspended
            .get(server)
            .and_then(|tools| tools.get(tool))
            .map(String::as_str)
    }

    /// Whether a notification — one line of text with two buttons — may approve this tool.
    /// Never a tool that runs anything (e.g. the built-in `run_command`); otherwise the
    /// tool's own choice, else its server's, else only a tool declared read-only by a source
    /// Airlock trusts (its own tools, or a server whose hints the person trusts).
    pub fn approvable_from_notification(
        &self,
        server: &str,
        tool: &str,
        read_only_hint: bool,
    ) -> bool {
        if crate::never_from_notification(server, tool) {
            return false;
        }
        let choices = self.from_notification.get(server);
        if let Some(allow) = choices
            .and_then(|c| c.tools.get(tool).copied())
            .or_else(|| choices.and_then(|c| c.server))
        {
            return allow;
        }
        read_only_hint
            && (server == crate::BUILTIN_SERVER
                || self
                    .servers
                    .get(server)
                    .is_some_and(|p| p.trust_read_only_hints))
    }

    /// The person's own choice for a tool (`Some(tool)`) or a server, if any.
    pub fn from_notification_choice(&self, server: &str, tool: Option<&str>) -> Option<bool> {
        let choices = self.from_notification.get(server)?;
        match tool {
            Some(tool) => choices.tools.get(tool).copied(),
            None => choices.server,
        }
    }

    /// The setting a person would see for this tool after steps 6–7, ignoring rules and grants.
    pub fn effective_setting(&self, server: &str, tool: &str, read_only_hint: bool) -> ToolSetting {
        match self.tool_setting(server, tool) {
            ToolSetting::ServerDefault => {
                let policy = self.servers.get(server).copied().unwrap_or_default();
                if policy.trust_read_only_hints && read_only_hint {
                    return ToolSetting::NotRequired;
                }
                match policy.default {
                    ServerDefault::Required => ToolSetting::Required,
                    ServerDefault::NotRequired => ToolSetting::NotRequired,
                }
            }
            other => other,
        }
    }
}

/// Step 1 alone: a blocked tool or a deny rule matching these arguments, which nothing a person
/// granted overrides. The engine checks it again when a person approves, because the arguments
/// may be an edit and the settings may have changed while the call waited.
pub fn forbidden(
    config: &PolicyConfig,
    server: &str,
    tool: &str,
    args: &Value,
) -> Option<PolicyDecision> {
    step_one(
        config,
        server,
        tool,
        &config.match_rules(server, tool, args),
    )
}

fn step_one(
    config: &PolicyConfig,
    server: &str,
    tool: &str,
    matched: &RuleMatch,
) -> Option<PolicyDecision> {
    if config.tool_setting(server, tool) == ToolSetting::Blocked {
        return Some(PolicyDecision::new(
            Verdict::Deny,
            Step::Blocked,
            format!("{server}/{tool} is blocked in settings"),
        ));
    }
    matched.deny.as_ref().map(|rule_id| {
        PolicyDecision::new(
            Verdict::Deny,
            Step::DenyRule,
            format!("denied by argument rule {rule_id}"),
        )
    })
}

/// Decides one call. `needs_approval` is the code-defined tool's own check, if it has one.
pub fn decide(
    config: &PolicyConfig,
    session: &SessionPolicy,
    call: CallFacts<'_>,
    needs_approval: Option<NeedsApproval>,
) -> PolicyDecision {
    let matched = config.match_rules(call.server, call.tool, call.args);
    if let Some(denied) = step_one(config, call.server, call.tool, &matched) {
        return denied;
    }
    // Step 2: the session's mode, else the workspace default.
    let (mode, mode_step) = match session.mode {
        Some(mode) => (mode, Step::SessionMode),
        None => (config.workspace_mode, Step::WorkspaceMode),
    };
    // A tool that changed since the person reviewed it loses every standing grant (Allow for
    // this chat, remembered decisions, settings, never-ask) until they look at it again.
    if let Some(what) = config.suspension(call.server, call.tool) {
        let why = format!(
            "{}/{} changed since it was last reviewed ({what}); earlier grants are suspended",
            call.server, call.tool
        );
        let verdict = if mode == Mode::DenyAll {
            Verdict::Deny
        } else {
            Verdict::Ask
        };
        return PolicyDecision::new(verdict, Step::Changed, why);
    }
    if mode == Mode::NeverAsk {
        return PolicyDecision::new(Verdict::Run, mode_step, "mode is never-ask");
    }
    let decision = decide_after_mode(config, session, call, &matched, needs_approval);
    if mode == Mode::DenyAll && decision.verdict == Verdict::Ask {
        return PolicyDecision::new(
            Verdict::Deny,
            mode_step,
            format!("mode is deny-all (would have asked: {})", decision.why),
        );
    }
    decision
}

fn decide_after_mode(
    config: &PolicyConfig,
    session: &SessionPolicy,
    call: CallFacts<'_>,
    matched: &RuleMatch,
    needs_approval: Option<NeedsApproval>,
) -> PolicyDecision {
    // Step 3: Allow for this chat.
    if session.allows(call.server, call.tool) {
        return PolicyDecision::new(Verdict::Run, Step::AllowForChat, "allowed for this chat");
    }
    // Step 4: remembered decisions (and timed or counted grants); exact arguments before the
    // whole tool, deny wins a tie.
    if let Some(found) = remembered_match(config, session, call) {
        return found;
    }
    // Step 5: argument rules (ask beats allow), then the tool's own check.
    if let Some(rule_id) = &matched.ask {
        return PolicyDecision::new(
            Verdict::Ask,
            Step::ArgRule,
            format!("argument rule {rule_id}"),
        );
    }
    if let Some(rule_id) = &matched.allow {
        return PolicyDecision::new(
            Verdict::Run,
            Step::ArgRule,
            format!("allowed by argument rule {rule_id}"),
        );
    }
    match needs_approval {
        Some(NeedsApproval::Deny(why)) => {
            return PolicyDecision::new(Verdict::Deny, Step::NeedsApproval, why);
        }
        Some(NeedsApproval::Ask(why)) => {
            return PolicyDecision::new(Verdict::Ask, Step::NeedsApproval, why);
        }
        Some(NeedsApproval::Allow(why)) => {
            return PolicyDecision::new(Verdict::Run, Step::NeedsApproval, why);
        }
        None => {}
    }
    // Steps 6–7: per-tool setting, then server default (with optional read-only trust).
    let own = config.tool_setting(call.server, call.tool);
    let (setting, step) = if own == ToolSetting::ServerDefault {
        let effective = config.effective_setting(call.server, call.tool, call.read_only_hint);
        let server = config.servers.get(call.server).copied().unwrap_or_default();
        let by_hint = server.trust_read_only_hints
            && call.read_only_hint
            && server.default == ServerDefault::Required;
        (
            effective,
            if by_hint {
                Step::ReadOnlyHint
            } else {
                Step::ServerDefault
            },
        )
    } else {
        (own, Step::ToolSetting)
    };
    let verdict = if setting == ToolSetting::NotRequired {
        Verdict::Run
    } else {
        Verdict::Ask
    };
    let why = match step {
        Step::ReadOnlyHint => "read-only hint trusted for this server".to_string(),
        Step::ServerDefault => format!("server default for {}: approval {}", call.server, setting),
        _ => format!(
            "tool setting for {}/{}: approval {}",
            call.server, call.tool, setting
        ),
    };
    PolicyDecision::new(verdict, step, why)
}

fn remembered_match(
    config: &PolicyConfig,
    session: &SessionPolicy,
    call: CallFacts<'_>,
) -> Option<PolicyDecision> {
    let entries = config.remembered.get(call.server)?.get(call.tool)?;
    // One pass, no allocation: exact arguments beat a pattern or the whole tool; a denial beats
    // an approval.
    let mut exact: Option<&Remembered> = None;
    let mut whole_tool: Option<&Remembered> = None;
    for kept in entries {
        let entry = &kept.entry;
        if entry
            .session_id
            .as_deref()
            .is_some_and(|session| session != call.session_id)
            || !session.applies(entry)
            || !kept.covers(&call)
        {
            continue;
        }
        let slot = if entry.args_hash.is_some() {
            &mut exact
        } else {
            &mut whole_tool
        };
        if slot.is_none_or(|kept| kept.approve && !entry.approve) {
            *slot = Some(entry);
        }
    }
    let entry = exact.or(whole_tool)?;
    let scope = if entry.session_id.is_some() {
        "session"
    } else {
        "always"
    };
    let what = if entry.args_hash.is_some() {
        "these arguments"
    } else {
        "this tool"
    };
    Some(if entry.approve {
        let is_grant = entry.expires_at.is_some() || entry.uses_left.is_some();
        let mut decision = PolicyDecision::new(
            Verdict::Run,
            Step::Remembered,
            if is_grant {
                grant_sentence(entry, session)
            } else {
                format!("remembered approval ({scope}, {what}) {}", entry.id)
            },
        );
        if entry.uses_left.is_some() {
            decision.grant_use = Some(entry.id.clone());
        }
        decision
    } else {
        PolicyDecision::new(
            Verdict::Deny,
            Step::Remembered,
            format!("remembered denial ({scope}, {what}) {}", entry.id),
        )
    })
}

/// What a call let through by a grant says, where a person looks (chat card, History, the
/// CLI's transcript): "allowed by the grant made at 14:02 UTC for commands starting `git
/// status` in this chat, 12 min left (mem_…)". What is left counts this call as used.
fn grant_sentence(entry: &Remembered, session: &SessionPolicy) -> String {
    let made = entry
        .created_at
        .as_deref()
        .and_then(|at| {
            time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()
        })
        .map(|at| format!(" made at {:02}:{:02} UTC", at.hour(), at.minute()))
        .unwrap_or_default();
    let what = match (&entry.pattern, &entry.args_hash) {
        (Some(pattern), _) => pattern.label.clone(),
        (None, Some(_)) => "these exact arguments".to_string(),
        (None, None) => "any arguments".to_string(),
    };
    let scope = if entry.session_id.is_some() {
        "in this chat"
    } else {
        "in every chat"
    };
    let after_this = Remembered {
        uses_left: entry.uses_left.map(|left| {
            left.saturating_sub(session.spent.get(&entry.id).copied().unwrap_or(0) + 1)
        }),
        ..entry.clone()
    };
    format!(
        "allowed by the grant{made} for {}/{} with {what} {scope}, {} ({})",
        entry.server,
        entry.tool,
        after_this.left_at(session.now),
        entry.id
    )
}

/// One rule compiled alone, to ask whether it matches a call's arguments: a rule's preview
/// against History uses the policy's own matching, so its counts are exactly what the rule
/// would have done.
#[derive(Debug, Clone)]
pub struct RuleProbe {
    rules: ToolRules,
    effect: RuleEffect,
}

impl RuleProbe {
    pub fn new(rule: &ArgRule) -> Result<Self, PolicyError> {
        Ok(Self {
            rules: ToolRules::compile(std::slice::from_ref(rule))?,
            effect: rule.effect,
        })
    }

    pub fn matches(&self, args: &Value) -> bool {
        let matched = self.rules.evaluate(args);
        match self.effect {
            RuleEffect::Allow => matched.allow.is_some(),
            RuleEffect::Ask => matched.ask.is_some(),
            RuleEffect::Deny => matched.deny.is_some(),
        }
    }
}

/// The argument rules of one tool, compiled.
#[derive(Debug, Clone)]
struct ToolRules {
    pointers: Vec<PointerRules>,
}

#[derive(Debug, Clone)]
struct PointerRules {
    pointer: String,
    deny: Matchers,
    ask: Matchers,
    allow: Matchers,
}

#[derive(Debug, Clone, Default)]
struct RuleMatch {
    deny: Option<String>,
    ask: Option<String>,
    allow: Option<String>,
}

#[derive(Debug, Clone)]
struct Matchers {
    globs: GlobSet,
    glob_ids: Vec<String>,
    regexes: RegexSet,
    regex_ids: Vec<String>,
}

impl Matchers {
    /// `whole_value`: a regex must match the whole value, not a part of it. Allow rules are
    /// compiled so (`^/tmp/` must not allow `/etc/passwd #/tmp/`); deny and ask regexes keep
    /// matching anywhere, so that an existing deny rule never lets more through. Likewise a
    /// glob's `*` stays within one path segment for allow, but crosses `/` for deny and ask:
    /// `rm -rf*` must deny `rm -rf /` (a command is not a path).
    ///
    /// `command`: the value is a command line (`run_command`'s, an agent's Bash). Its allow
    /// globs are matched as command rules ([`command_glob`]): `*` crosses `/` but never covers
    /// what chains, expands or redirects.
    fn compile(rules: &[&ArgRule], whole_value: bool, command: bool) -> Result<Self, PolicyError> {
        let mut globs = GlobSetBuilder::new();
        let mut glob_ids = Vec::new();
        let mut regex_patterns = Vec::new();
        let mut regex_ids = Vec::new();
        for rule in rules {
            match &rule.pattern {
                RulePattern::Glob(pattern) => {
                    let glob = GlobBuilder::new(pattern)
                        .literal_separator(whole_value)
                        .backslash_escape(true)
                        .build()
                        .map_err(|e| PolicyError::Glob {
                            id: rule.id.clone(),
                            pattern: pattern.clone(),
                            message: e.kind().to_string(),
                        })?;
                    if command && whole_value {
                        let regex = command_glob::to_regex(pattern).map_err(|message| {
                            PolicyError::Glob {
                                id: rule.id.clone(),
                                pattern: pattern.clone(),
                                message,
                            }
                        })?;
                        regex_patterns.push(regex);
                        regex_ids.push(rule.id.clone());
                    } else {
                        globs.add(glob);
                        glob_ids.push(rule.id.clone());
                    }
                }
                RulePattern::Regex(pattern) => {
                    regex::Regex::new(pattern).map_err(|e| PolicyError::Regex {
                        id: rule.id.clone(),
                        pattern: pattern.clone(),
                        message: e.to_string(),
                    })?;
                    regex_patterns.push(if whole_value {
                        format!("^(?:{pattern})$")
                    } else {
                        pattern.clone()
                    });
                    regex_ids.push(rule.id.clone());
                }
            }
        }
        let globs = globs.build().map_err(|e| PolicyError::Glob {
            id: glob_ids.join(","),
            pattern: String::new(),
            message: e.to_string(),
        })?;
        let regexes = RegexSet::new(&regex_patterns).map_err(|e| PolicyError::Regex {
            id: regex_ids.join(","),
            pattern: String::new(),
            message: e.to_string(),
        })?;
        Ok(Self {
            globs,
            glob_ids,
            regexes,
            regex_ids,
        })
    }

    fn is_empty(&self) -> bool {
        self.glob_ids.is_empty() && self.regex_ids.is_empty()
    }

    /// The id of the first rule matching `text`, if any.
    fn first_match(&self, text: &str) -> Option<&str> {
        // `is_match` first: it allocates nothing, and most values match no rule.
        if !self.glob_ids.is_empty() && self.globs.is_match(text) {
            let index = self.globs.matches(text).into_iter().min()?;
            return self.glob_ids.get(index).map(String::as_str);
        }
        if !self.regex_ids.is_empty() && self.regexes.is_match(text) {
            let index = self.regexes.matches(text).into_iter().next()?;
            return self.regex_ids.get(index).map(String::as_str);
        }
        None
    }
}

impl ToolRules {
    fn compile(rules: &[ArgRule]) -> Result<Self, PolicyError> {
        let mut pointers: Vec<String> = Vec::new();
        for rule in rules {
            if !(rule.pointer.is_empty() || rule.pointer.starts_with('/')) {
                return Err(PolicyError::Pointer {
                    id: rule.id.clone(),
                    pointer: rule.pointer.clone(),
                });
            }
            if !pointers.contains(&rule.pointer) {
                pointers.push(rule.pointer.clone());
            }
        }
        let mut compiled = Vec::with_capacity(pointers.len());
        for pointer in pointers {
            let of = |effect: RuleEffect| -> Vec<&ArgRule> {
                rules
                    .iter()
                    .filter(|r| r.pointer == pointer && r.effect == effect)
                    .collect()
            };
            let command = rules
                .iter()
                .find(|r| r.pointer == pointer)
                .is_some_and(|r| command_glob::is_command_pointer(&r.tool, &pointer));
            compiled.push(PointerRules {
                deny: Matchers::compile(&of(RuleEffect::Deny), false, command)?,
                ask: Matchers::compile(&of(RuleEffect::Ask), false, command)?,
                allow: Matchers::compile(&of(RuleEffect::Allow), true, command)?,
                pointer,
            });
        }
        Ok(Self { pointers: compiled })
    }

    /// Deny and ask match if the raw *or* the normalised text matches; allow needs every value
    /// to match in both forms, so `..` can neither dodge a deny nor sneak under an allow.
    fn evaluate(&self, args: &Value) -> RuleMatch {
        let mut result = RuleMatch::default();
        for rules in &self.pointers {
            let Some(value) = args.pointer(&rules.pointer) else {
                continue;
            };
            let texts = texts_of(value);
            if texts.is_empty() {
                continue;
            }
            let any = |m: &Matchers| -> Option<String> {
                texts.iter().find_map(|(raw, normalized)| {
                    m.first_match(raw)
                        .or_else(|| m.first_match(normalized))
                        .map(str::to_string)
                })
            };
            if result.deny.is_none() && !rules.deny.is_empty() {
                result.deny = any(&rules.deny);
            }
            if result.ask.is_none() && !rules.ask.is_empty() {
                result.ask = any(&rules.ask);
            }
            if result.allow.is_none() && !rules.allow.is_empty() {
                let mut id = None;
                let all = texts.iter().all(|(raw, normalized)| {
                    match (
                        rules.allow.first_match(raw),
                        rules.allow.first_match(normalized),
                    ) {
                        (Some(found), Some(_)) => {
                            id.get_or_insert_with(|| found.to_string());
                            true
                        }
                        _ => false,
                    }
                });
                if all {
                    result.allow = id;
                }
            }
        }
        result
    }
}

/// The texts a pointer's value is matched as: each string (or scalar) raw and normalised.
fn texts_of(value: &Value) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    fn one(v: &Value) -> (Cow<'_, str>, Cow<'_, str>) {
        let raw: Cow<'_, str> = match v {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => Cow::Owned(other.to_string()),
        };
        let normalized = if may_need_normalizing(&raw) {
            Cow::Owned(normalize_lexically(&raw))
        } else {
            raw.clone()
        };
        (raw, normalized)
    }
    match value {
        Value::Array(items) => items.iter().map(one).collect(),
        other => vec![one(other)],
    }
}

pub(crate) mod command_glob;
#[cfg(test)]
mod tests;
