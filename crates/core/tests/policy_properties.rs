//! Hostile input against the policy: properties that hold for every combination of settings,
//! rules, grants, remembered decisions and modes a person (or an attacker who can shape the
//! arguments) can produce. Generated with proptest; a failure prints the smallest case.
#![allow(clippy::unwrap_used)]

use airlock_core::policy::{PolicyInputs, Remembered, ServerPolicy};
use airlock_core::{
    ArgRule, CallFacts, Mode, PolicyConfig, RuleEffect, RulePattern, ServerDefault, SessionPolicy,
    Step, ToolSetting, Verdict, args_hash, decide,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const SERVER: &str = "fs";
const TOOL: &str = "write_file";

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Ask), Just(Mode::NeverAsk), Just(Mode::DenyAll)]
}

fn setting() -> impl Strategy<Value = ToolSetting> {
    prop_oneof![
        Just(ToolSetting::ServerDefault),
        Just(ToolSetting::Required),
        Just(ToolSetting::NotRequired),
        Just(ToolSetting::Blocked),
    ]
}

/// Paths an agent might send, traversal and odd characters included.
fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a.txt".to_string()),
        Just("secrets/key.pem".to_string()),
        Just("docs/../secrets/key.pem".to_string()),
        Just("./secrets//key.pem".to_string()),
        Just("/etc/passwd".to_string()),
        Just("secrets/\u{202e}mep.yek".to_string()),
        "[a-z/.]{0,12}",
    ]
}

fn rule(id: usize) -> impl Strategy<Value = ArgRule> {
    let pattern = prop_oneof![
        Just(RulePattern::Glob("**".into())),
        Just(RulePattern::Glob("secrets/**".into())),
        Just(RulePattern::Glob("*.txt".into())),
        Just(RulePattern::Regex("key".into())),
        Just(RulePattern::Regex(".*".into())),
    ];
    let effect = prop_oneof![
        Just(RuleEffect::Allow),
        Just(RuleEffect::Ask),
        Just(RuleEffect::Deny)
    ];
    (pattern, effect).prop_map(move |(pattern, effect)| ArgRule {
        id: format!("r{id}"),
        server: SERVER.into(),
        tool: TOOL.into(),
        pointer: "/path".into(),
        pattern,
        effect,
    })
}

/// Everything that can stand between a call and a person, at random.
#[derive(Debug, Clone)]
struct World {
    workspace_mode: Mode,
    session_mode: Option<Mode>,
    granted_for_chat: bool,
    setting: ToolSetting,
    server_default: ServerDefault,
    trust_hints: bool,
    read_only_hint: bool,
    rules: Vec<ArgRule>,
    /// (approve, exact arguments, this session only)
    remembered: Vec<(bool, bool, bool)>,
    suspended: bool,
    path: String,
}

fn world() -> impl Strategy<Value = World> {
    (
        (
            mode(),
            proptest::option::of(mode()),
            any::<bool>(),
            setting(),
        ),
        (
            prop_oneof![
                Just(ServerDefault::Required),
                Just(ServerDefault::NotRequired)
            ],
            any::<bool>(),
            any::<bool>(),
        ),
        (0usize..4).prop_flat_map(|n| (0..n).map(rule).collect::<Vec<_>>()),
        proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..4),
        any::<bool>(),
        path(),
    )
        .prop_map(
            |(
                (workspace_mode, session_mode, granted_for_chat, setting),
                (server_default, trust_hints, read_only_hint),
                rules,
                remembered,
                suspended,
                path,
            )| World {
                workspace_mode,
                session_mode,
                granted_for_chat,
                setting,
                server_default,
                trust_hints,
                read_only_hint,
                rules,
                remembered,
                suspended,
                path,
            },
        )
}

fn args(world: &World) -> Value {
    json!({ "path": world.path, "content": "x" })
}

fn decide_in(world: &World) -> airlock_core::PolicyDecision {
    let args = args(world);
    let hash = args_hash(&args);
    let remembered = world
        .remembered
        .iter()
        .enumerate()
        .map(|(i, (approve, exact, session))| Remembered {
            id: format!("m{i}"),
            server: SERVER.into(),
            tool: TOOL.into(),
            args_hash: exact.then(|| hash.clone()),
            session_id: session.then(|| "s1".to_string()),
            approve: *approve,
            expires_at: None,
            uses_left: None,
            pattern: None,
            created_at: None,
        })
        .collect();
    let config = PolicyConfig::compile(PolicyInputs {
        workspace_mode: Some(world.workspace_mode),
        servers: vec![(
            SERVER.into(),
            ServerPolicy {
                default: world.server_default,
                trust_read_only_hints: world.trust_hints,
            },
        )],
        tool_settings: vec![(SERVER.into(), TOOL.into(), world.setting)],
        rules: world.rules.clone(),
        remembered,
        suspended: if world.suspended {
            vec![(SERVER.into(), TOOL.into(), "description changed".into())]
        } else {
            vec![]
        },
        ..Default::default()
    })
    .unwrap();
    let grants = world
        .granted_for_chat
        .then(|| (SERVER.to_string(), TOOL.to_string()));
    let session = SessionPolicy::new(world.session_mode, grants);
    decide(
        &config,
        &session,
        CallFacts {
            session_id: "s1",
            server: SERVER,
            tool: TOOL,
            args: &args,
            args_hash: &hash,
            read_only_hint: world.read_only_hint,
        },
        None,
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A blocked tool is denied whatever grants, remembered approvals, rules or modes exist.
    #[test]
    fn a_blocked_tool_is_always_denied(mut world in world()) {
        world.setting = ToolSetting::Blocked;
        let decision = decide_in(&world);
        prop_assert_eq!(decision.verdict, Verdict::Deny);
        prop_assert_eq!(decision.step, Step::Blocked);
    }

    /// A deny rule that matches the arguments denies whatever else would let the call run.
    #[test]
    fn a_matching_deny_rule_always_denies(mut world in world()) {
        world.rules.push(ArgRule {
            id: "deny-all-paths".into(),
            server: SERVER.into(),
            tool: TOOL.into(),
            pointer: "/path".into(),
            pattern: RulePattern::Regex("".into()),
            effect: RuleEffect::Deny,
        });
        let decision = decide_in(&world);
        prop_assert_eq!(decision.verdict, Verdict::Deny, "{:?}", decision);
    }

    /// A tool whose definition changed never runs on a grant given to the old one.
    #[test]
    fn a_changed_tool_never_runs_unasked(mut world in world()) {
        world.suspended = true;
        let decision = decide_in(&world);
        prop_assert_ne!(decision.verdict, Verdict::Run, "{:?}", decision);
    }

    /// Deny-all never asks (it denies what would ask; grants still run, step 2 of the decision order);
    /// never-ask never asks, but for a changed tool.
    #[test]
    fn modes_hold(world in world()) {
        let decision = decide_in(&world);
        let mode = world.session_mode.unwrap_or(world.workspace_mode);
        if mode == Mode::DenyAll {
            prop_assert_ne!(decision.verdict, Verdict::Ask, "{:?}", decision);
        }
        if mode == Mode::NeverAsk && !world.suspended {
            prop_assert_ne!(decision.verdict, Verdict::Ask, "{:?}", decision);
        }
    }

    /// In ask mode, a remembered denial of the whole tool is never overridden by a remembered
    /// approval of it, whatever the rules and settings.
    #[test]
    fn a_remembered_denial_beats_a_remembered_approval(mut world in world()) {
        world.remembered = vec![(true, false, false), (false, false, false)];
        world.granted_for_chat = false;
        world.suspended = false;
        world.workspace_mode = Mode::Ask;
        world.session_mode = None;
        let decision = decide_in(&world);
        prop_assert_ne!(decision.verdict, Verdict::Run, "{:?}", decision);
    }
}
