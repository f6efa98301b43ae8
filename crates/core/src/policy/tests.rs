//! Table-driven tests for every step of the order, including the traps named in the engine issue.

use super::*;
use crate::canonical::args_hash;
use serde_json::json;

fn rule(
    id: &str,
    server: &str,
    tool: &str,
    pointer: &str,
    glob: &str,
    effect: RuleEffect,
) -> ArgRule {
    ArgRule {
        id: id.into(),
        server: server.into(),
        tool: tool.into(),
        pointer: pointer.into(),
        pattern: RulePattern::Glob(glob.into()),
        effect,
    }
}

fn remembered(
    server: &str,
    tool: &str,
    args: Option<&Value>,
    session: Option<&str>,
    approve: bool,
) -> Remembered {
    Remembered {
        id: format!("mem-{server}-{tool}"),
        server: server.into(),
        tool: tool.into(),
        args_hash: args.map(args_hash),
        session_id: session.map(str::to_string),
        approve,
        expires_at: None,
        uses_left: None,
        pattern: None,
        created_at: None,
    }
}

struct Case {
    name: &'static str,
    inputs: PolicyInputs,
    session: SessionPolicy,
    session_id: &'static str,
    server: &'static str,
    tool: &'static str,
    args: Value,
    read_only: bool,
    needs: Option<NeedsApproval>,
    verdict: Verdict,
    step: Step,
}

fn base() -> Case {
    Case {
        name: "",
        inputs: PolicyInputs::default(),
        session: SessionPolicy::default(),
        session_id: "s1",
        server: "fs",
        tool: "write_file",
        args: json!({"path": "/work/a.txt"}),
        read_only: false,
        needs: None,
        verdict: Verdict::Ask,
        step: Step::ServerDefault,
    }
}

fn settings(list: &[(&str, &str, ToolSetting)]) -> Vec<(String, String, ToolSetting)> {
    list.iter()
        .map(|(s, t, v)| (s.to_string(), t.to_string(), *v))
        .collect()
}

fn server(name: &str, default: ServerDefault, trust: bool) -> (String, ServerPolicy) {
    (
        name.to_string(),
        ServerPolicy {
            default,
            trust_read_only_hints: trust,
        },
    )
}

fn cases() -> Vec<Case> {
    let grant = |s: &str, t: &str| SessionPolicy::new(None, [(s.to_string(), t.to_string())]);
    let work_args = json!({"path": "/work/a.txt"});
    vec![
        Case {
            name: "new server asks by default",
            ..base()
        },
        Case {
            name: "blocked tool is denied even in never-ask",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::Blocked)]),
                ..Default::default()
            },
            session: SessionPolicy::new(Some(Mode::NeverAsk), []),
            verdict: Verdict::Deny,
            step: Step::Blocked,
            ..base()
        },
        Case {
            name: "deny rule beats never-ask and allow-for-chat",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/path",
                    "/etc/**",
                    RuleEffect::Deny,
                )],
                ..Default::default()
            },
            session: SessionPolicy::new(
                Some(Mode::NeverAsk),
                [("fs".to_string(), "write_file".to_string())],
            ),
            args: json!({"path": "/etc/passwd"}),
            verdict: Verdict::Deny,
            step: Step::DenyRule,
            ..base()
        },
        Case {
            name: "trap: .. in a path cannot dodge a deny glob",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/path",
                    "/etc/**",
                    RuleEffect::Deny,
                )],
                ..Default::default()
            },
            args: json!({"path": "/work/../etc/passwd"}),
            verdict: Verdict::Deny,
            step: Step::DenyRule,
            ..base()
        },
        Case {
            name: "trap: .. in a path does not sneak under an allow glob",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/path",
                    "/work/**",
                    RuleEffect::Allow,
                )],
                ..Default::default()
            },
            args: json!({"path": "/work/../etc/passwd"}),
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "allow glob matches a clean path",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/path",
                    "/work/**",
                    RuleEffect::Allow,
                )],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::ArgRule,
            ..base()
        },
        Case {
            name: "glob star does not cross a separator",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/path",
                    "/work/*",
                    RuleEffect::Allow,
                )],
                ..Default::default()
            },
            args: json!({"path": "/work/sub/a.txt"}),
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "deny wins over allow on the same pointer",
            inputs: PolicyInputs {
                rules: vec![
                    rule(
                        "allow",
                        "fs",
                        "write_file",
                        "/path",
                        "/work/**",
                        RuleEffect::Allow,
                    ),
                    rule(
                        "deny",
                        "fs",
                        "write_file",
                        "/path",
                        "**/*.key",
                        RuleEffect::Deny,
                    ),
                ],
                ..Default::default()
            },
            args: json!({"path": "/work/secret.key"}),
            verdict: Verdict::Deny,
            step: Step::DenyRule,
            ..base()
        },
        Case {
            name: "ask rule beats allow rule and a not-required setting",
            inputs: PolicyInputs {
                rules: vec![
                    rule(
                        "allow",
                        "fs",
                        "write_file",
                        "/path",
                        "/work/**",
                        RuleEffect::Allow,
                    ),
                    rule(
                        "ask",
                        "fs",
                        "write_file",
                        "/path",
                        "/work/*.txt",
                        RuleEffect::Ask,
                    ),
                ],
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                ..Default::default()
            },
            verdict: Verdict::Ask,
            step: Step::ArgRule,
            ..base()
        },
        Case {
            name: "regex rule",
            inputs: PolicyInputs {
                rules: vec![ArgRule {
                    id: "rx".into(),
                    server: "builtin".into(),
                    tool: "run_command".into(),
                    pointer: "/command".into(),
                    pattern: RulePattern::Regex(r"^rm\s".into()),
                    effect: RuleEffect::Deny,
                }],
                ..Default::default()
            },
            server: "builtin",
            tool: "run_command",
            args: json!({"command": "rm -rf /"}),
            verdict: Verdict::Deny,
            step: Step::DenyRule,
            ..base()
        },
        Case {
            name: "rule on a missing pointer does not match",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "r1",
                    "fs",
                    "write_file",
                    "/other",
                    "**",
                    RuleEffect::Deny,
                )],
                ..Default::default()
            },
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "never-ask session runs",
            session: SessionPolicy::new(Some(Mode::NeverAsk), []),
            verdict: Verdict::Run,
            step: Step::SessionMode,
            ..base()
        },
        Case {
            name: "never-ask workspace runs",
            inputs: PolicyInputs {
                workspace_mode: Some(Mode::NeverAsk),
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::WorkspaceMode,
            ..base()
        },
        Case {
            name: "session ask overrides never-ask workspace",
            inputs: PolicyInputs {
                workspace_mode: Some(Mode::NeverAsk),
                ..Default::default()
            },
            session: SessionPolicy::new(Some(Mode::Ask), []),
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "deny-all denies what would ask",
            session: SessionPolicy::new(Some(Mode::DenyAll), []),
            verdict: Verdict::Deny,
            step: Step::SessionMode,
            ..base()
        },
        Case {
            name: "deny-all lets not-required tools run",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                ..Default::default()
            },
            session: SessionPolicy::new(Some(Mode::DenyAll), []),
            verdict: Verdict::Run,
            step: Step::ToolSetting,
            ..base()
        },
        Case {
            name: "allow for this chat runs",
            session: grant("fs", "write_file"),
            verdict: Verdict::Run,
            step: Step::AllowForChat,
            ..base()
        },
        Case {
            name: "trap: a grant for one server's tool does not cover another server's tool of the same name",
            session: grant("other", "write_file"),
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "remembered always approval by tool",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, None, true)],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "remembered approval for exact arguments",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", Some(&work_args), None, true)],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "remembered exact arguments do not cover other arguments",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", Some(&work_args), None, true)],
                ..Default::default()
            },
            args: json!({"path": "/work/b.txt"}),
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "remembered denial",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, None, false)],
                ..Default::default()
            },
            verdict: Verdict::Deny,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "remembered session approval applies in its session",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, Some("s1"), true)],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "trap: a session grant does not leak to another session",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, Some("s1"), true)],
                ..Default::default()
            },
            session_id: "s2",
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "trap: remembered for one server does not cover another",
            inputs: PolicyInputs {
                remembered: vec![remembered("other", "write_file", None, None, true)],
                ..Default::default()
            },
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "needs_approval deny",
            needs: Some(NeedsApproval::Deny("outside the workspace".into())),
            verdict: Verdict::Deny,
            step: Step::NeedsApproval,
            ..base()
        },
        Case {
            name: "needs_approval ask beats a not-required setting",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                ..Default::default()
            },
            needs: Some(NeedsApproval::Ask("secret file".into())),
            verdict: Verdict::Ask,
            step: Step::NeedsApproval,
            ..base()
        },
        Case {
            name: "needs_approval allow",
            needs: Some(NeedsApproval::Allow("harmless".into())),
            verdict: Verdict::Run,
            step: Step::NeedsApproval,
            ..base()
        },
        Case {
            name: "tool setting not required",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::ToolSetting,
            ..base()
        },
        Case {
            name: "tool setting required beats a not-required server",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::Required)]),
                servers: vec![server("fs", ServerDefault::NotRequired, false)],
                ..Default::default()
            },
            verdict: Verdict::Ask,
            step: Step::ToolSetting,
            ..base()
        },
        Case {
            name: "server default not required",
            inputs: PolicyInputs {
                servers: vec![server("fs", ServerDefault::NotRequired, false)],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "read-only hint ignored unless trusted",
            read_only: true,
            verdict: Verdict::Ask,
            step: Step::ServerDefault,
            ..base()
        },
        Case {
            name: "trusted read-only hint runs",
            inputs: PolicyInputs {
                servers: vec![server("fs", ServerDefault::Required, true)],
                ..Default::default()
            },
            read_only: true,
            verdict: Verdict::Run,
            step: Step::ReadOnlyHint,
            ..base()
        },
        Case {
            name: "annotations never override a person's setting",
            inputs: PolicyInputs {
                servers: vec![server("fs", ServerDefault::Required, true)],
                tool_settings: settings(&[("fs", "write_file", ToolSetting::Required)]),
                ..Default::default()
            },
            read_only: true,
            verdict: Verdict::Ask,
            step: Step::ToolSetting,
            ..base()
        },
        Case {
            name: "a changed tool asks despite Allow for this chat, remembered approval and setting",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                remembered: vec![remembered("fs", "write_file", None, None, true)],
                suspended: vec![(
                    "fs".into(),
                    "write_file".into(),
                    "description changed".into(),
                )],
                ..Default::default()
            },
            session: grant("fs", "write_file"),
            verdict: Verdict::Ask,
            step: Step::Changed,
            ..base()
        },
        Case {
            name: "a changed tool is still blocked when blocked",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::Blocked)]),
                suspended: vec![(
                    "fs".into(),
                    "write_file".into(),
                    "description changed".into(),
                )],
                ..Default::default()
            },
            verdict: Verdict::Deny,
            step: Step::Blocked,
            ..base()
        },
    ]
}

#[test]
fn every_step_of_the_order() {
    assert_cases(cases());
}

/// Decides each case and checks its verdict, the step that made it, and that it says why.
fn assert_cases(cases: Vec<Case>) {
    for case in cases {
        let config = PolicyConfig::compile(case.inputs.clone()).unwrap();
        let hash = args_hash(&case.args);
        let call = CallFacts {
            session_id: case.session_id,
            server: case.server,
            tool: case.tool,
            args: &case.args,
            args_hash: &hash,
            read_only_hint: case.read_only,
        };
        let got = decide(&config, &case.session, call, case.needs.clone());
        assert_eq!(
            (got.verdict, got.step),
            (case.verdict, case.step),
            "case '{}': {got:?}",
            case.name
        );
        assert!(!got.why.is_empty(), "case '{}' has no reason", case.name);
    }
}

#[test]
fn bad_patterns_are_clear_errors() {
    let bad_glob = PolicyInputs {
        rules: vec![rule("r9", "fs", "w", "/p", "a[", RuleEffect::Ask)],
        ..Default::default()
    };
    let err = PolicyConfig::compile(bad_glob)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("r9") && err.contains("glob"), "{err}");
    let bad_pointer = PolicyInputs {
        rules: vec![rule("r8", "fs", "w", "path", "*", RuleEffect::Ask)],
        ..Default::default()
    };
    let err = PolicyConfig::compile(bad_pointer)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("JSON pointer"), "{err}");
}

fn regex_rule(id: &str, pattern: &str, effect: RuleEffect) -> ArgRule {
    ArgRule {
        id: id.into(),
        server: "builtin".into(),
        tool: "run_command".into(),
        pointer: "/command".into(),
        pattern: RulePattern::Regex(pattern.into()),
        effect,
    }
}

fn verdict_for(rules: Vec<ArgRule>, command: &str) -> PolicyDecision {
    let config = PolicyConfig::compile(PolicyInputs {
        rules,
        ..Default::default()
    })
    .unwrap();
    let args = json!({ "command": command });
    let hash = args_hash(&args);
    decide(
        &config,
        &SessionPolicy::default(),
        CallFacts {
            session_id: "s1",
            server: "builtin",
            tool: "run_command",
            args: &args,
            args_hash: &hash,
            read_only_hint: false,
        },
        None,
    )
}

fn glob_rule(id: &str, glob: &str, effect: RuleEffect) -> ArgRule {
    rule(id, "builtin", "run_command", "/command", glob, effect)
}

/// Issue 27: an allow glob on a command is matched like a command rule — `cat *` covers
/// `cat notes/x.txt` (a path glob's `*` stopped at `/`), and never a chained command.
#[test]
fn a_command_glob_crosses_slashes_but_never_a_chain() {
    let allow = || vec![glob_rule("a", "cat *", RuleEffect::Allow)];
    let decided = verdict_for(allow(), "cat notes/x.txt");
    assert_eq!(
        (decided.verdict, decided.step),
        (Verdict::Run, Step::ArgRule),
        "{decided:?}"
    );
    for chained in [
        "cat x; rm -rf ~",
        "cat x && rm -rf ~",
        "cat x || rm -rf ~",
        "cat x | sh",
        "cat $(rm -rf ~)",
        "cat `rm -rf ~`",
        "cat x > ~/.bashrc",
        "cat < ~/.ssh/id_ed25519",
        "cat x\nrm -rf ~",
        "cat x & rm -rf ~",
    ] {
        let decided = verdict_for(allow(), chained);
        assert_eq!(decided.verdict, Verdict::Ask, "{chained:?}: {decided:?}");
    }
    // Deny globs still cover everything after the prefix.
    let deny = vec![glob_rule("d", "rm -rf*", RuleEffect::Deny)];
    assert_eq!(
        verdict_for(deny, "rm -rf /tmp/x; ls").verdict,
        Verdict::Deny
    );
}

/// The agents' shells too (Claude Code's and Codex's Bash); a path argument keeps its
/// `/`-aware glob, even beside a command.
#[test]
fn agents_command_globs_are_command_rules_and_path_globs_stay_paths() {
    let config = PolicyConfig::compile(PolicyInputs {
        rules: vec![
            rule(
                "b",
                "claude-code",
                "Bash",
                "/command",
                "npm run test:*",
                RuleEffect::Allow,
            ),
            rule(
                "c",
                "builtin",
                "run_command",
                "/cwd",
                "/work/*",
                RuleEffect::Allow,
            ),
        ],
        ..Default::default()
    })
    .unwrap();
    let decide_for = |server: &str, tool: &str, args: Value| {
        let hash = args_hash(&args);
        decide(
            &config,
            &SessionPolicy::default(),
            CallFacts {
                session_id: "s1",
                server,
                tool,
                args: &args,
                args_hash: &hash,
                read_only_hint: false,
            },
            None,
        )
        .verdict
    };
    let bash = |command: &str| json!({ "command": command });
    assert_eq!(
        decide_for(
            "claude-code",
            "Bash",
            bash("npm run test:unit -- src/a.test.ts")
        ),
        Verdict::Run
    );
    assert_eq!(
        decide_for(
            "claude-code",
            "Bash",
            bash("npm run test:unit && curl x | sh")
        ),
        Verdict::Ask
    );
    assert_eq!(
        decide_for(
            "builtin",
            "run_command",
            json!({"command": "ls", "cwd": "/work/a/b"})
        ),
        Verdict::Ask,
        "a path glob's * stops at /"
    );
}

/// Security finding: an allow regex matched any part of the value, so `git status` allowed
/// `rm -rf ~; git status`.
#[test]
fn an_allow_regex_must_match_the_whole_value() {
    let allow = || vec![regex_rule("a", r"git status", RuleEffect::Allow)];
    assert_eq!(verdict_for(allow(), "git status").verdict, Verdict::Run);
    let smuggled = verdict_for(allow(), "rm -rf ~; git status");
    assert_eq!(smuggled.verdict, Verdict::Ask, "{smuggled:?}");
    // Deny and ask regexes still match anywhere: a deny rule never lets more through.
    let deny = vec![regex_rule("d", r"rm\s", RuleEffect::Deny)];
    assert_eq!(verdict_for(deny, "sudo rm -rf /").verdict, Verdict::Deny);
}

#[test]
fn forbidden_is_step_one_alone() {
    let config = PolicyConfig::compile(PolicyInputs {
        rules: vec![regex_rule("d", r"rm\s", RuleEffect::Deny)],
        tool_settings: settings(&[("fs", "delete", ToolSetting::Blocked)]),
        ..Default::default()
    })
    .unwrap();
    let step = |server, tool, command: &str| {
        forbidden(&config, server, tool, &json!({ "command": command })).map(|d| d.step)
    };
    assert_eq!(
        step("builtin", "run_command", "rm -rf /"),
        Some(Step::DenyRule)
    );
    assert_eq!(step("builtin", "run_command", "ls"), None);
    assert_eq!(step("fs", "delete", "anything"), Some(Step::Blocked));
}

/// For each pair of neighbouring steps of the decision order, one case where the two disagree:
/// the earlier step must win. A regression that swaps two steps fails here.
fn neighbour_pairs() -> Vec<Case> {
    let args = json!({"path": "/work/a.txt"});
    let granted = || SessionPolicy::new(None, [("fs".to_string(), "write_file".to_string())]);
    let deny_rule = || {
        rule(
            "deny",
            "fs",
            "write_file",
            "/path",
            "/work/**",
            RuleEffect::Deny,
        )
    };
    vec![
        Case {
            name: "blocked vs a deny rule: both deny, blocked is named",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::Blocked)]),
                rules: vec![deny_rule()],
                ..Default::default()
            },
            verdict: Verdict::Deny,
            step: Step::Blocked,
            ..base()
        },
        Case {
            name: "a deny rule vs never-ask: the rule",
            inputs: PolicyInputs {
                rules: vec![deny_rule()],
                ..Default::default()
            },
            session: SessionPolicy::new(Some(Mode::NeverAsk), []),
            verdict: Verdict::Deny,
            step: Step::DenyRule,
            ..base()
        },
        Case {
            name: "deny-all vs a chat grant: the grant runs (deny-all denies only what would ask)",
            session: SessionPolicy::new(
                Some(Mode::DenyAll),
                [("fs".to_string(), "write_file".to_string())],
            ),
            verdict: Verdict::Run,
            step: Step::AllowForChat,
            ..base()
        },
        Case {
            name: "a chat grant vs a remembered denial: the grant",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, None, false)],
                ..Default::default()
            },
            session: granted(),
            verdict: Verdict::Run,
            step: Step::AllowForChat,
            ..base()
        },
        Case {
            name: "a remembered approval vs an ask rule: the remembered approval",
            inputs: PolicyInputs {
                remembered: vec![remembered("fs", "write_file", None, None, true)],
                rules: vec![rule(
                    "ask",
                    "fs",
                    "write_file",
                    "/path",
                    "**",
                    RuleEffect::Ask,
                )],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "an allow rule vs the built-in check: the rule",
            inputs: PolicyInputs {
                rules: vec![rule(
                    "allow",
                    "fs",
                    "write_file",
                    "/path",
                    "/work/**",
                    RuleEffect::Allow,
                )],
                ..Default::default()
            },
            needs: Some(NeedsApproval::Ask("the tool asks".into())),
            verdict: Verdict::Run,
            step: Step::ArgRule,
            ..base()
        },
        Case {
            name: "the built-in check vs the tool setting: the check",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                ..Default::default()
            },
            needs: Some(NeedsApproval::Ask("the tool asks".into())),
            verdict: Verdict::Ask,
            step: Step::NeedsApproval,
            ..base()
        },
        Case {
            name: "the tool setting vs the server default: the setting",
            inputs: PolicyInputs {
                tool_settings: settings(&[("fs", "write_file", ToolSetting::NotRequired)]),
                servers: vec![server("fs", ServerDefault::Required, false)],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::ToolSetting,
            ..base()
        },
        Case {
            name: "exact-arguments memory vs whole-tool memory: the exact one",
            inputs: PolicyInputs {
                remembered: vec![
                    remembered("fs", "write_file", None, None, false),
                    remembered("fs", "write_file", Some(&args), None, true),
                ],
                ..Default::default()
            },
            verdict: Verdict::Run,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "a tie of remembered decisions: the denial",
            inputs: PolicyInputs {
                remembered: vec![
                    remembered("fs", "write_file", Some(&args), None, true),
                    remembered("fs", "write_file", Some(&args), Some("s1"), false),
                ],
                ..Default::default()
            },
            verdict: Verdict::Deny,
            step: Step::Remembered,
            ..base()
        },
        Case {
            name: "never-ask vs a changed tool: the change asks",
            inputs: PolicyInputs {
                suspended: vec![(
                    "fs".into(),
                    "write_file".into(),
                    "description changed".into(),
                )],
                ..Default::default()
            },
            session: SessionPolicy::new(Some(Mode::NeverAsk), []),
            verdict: Verdict::Ask,
            step: Step::Changed,
            ..base()
        },
        Case {
            name: "a changed tool vs a chat grant: the change asks",
            inputs: PolicyInputs {
                suspended: vec![(
                    "fs".into(),
                    "write_file".into(),
                    "description changed".into(),
                )],
                ..Default::default()
            },
            session: granted(),
            verdict: Verdict::Ask,
            step: Step::Changed,
            ..base()
        },
    ]
}

#[test]
fn neighbouring_steps_disagree_and_the_earlier_one_wins() {
    assert_cases(neighbour_pairs());
}

/// Who may approve from a notification: the tool's own choice, then its server's, then the
/// default (declared read-only by Airlock itself or by a server the person trusts); never
/// `builtin/run_command`.
#[test]
fn approvable_from_notification_follows_tool_then_server_then_a_trusted_read_only_hint() {
    let config = |from_notification: Vec<(String, Option<String>, bool)>| {
        PolicyConfig::compile(PolicyInputs {
            servers: vec![
                server("trusted", ServerDefault::Required, true),
                server("plain", ServerDefault::Required, false),
            ],
            from_notification,
            ..Default::default()
        })
        .unwrap()
    };
    let none = config(vec![]);
    assert!(none.approvable_from_notification(crate::BUILTIN_SERVER, "read_file", true));
    assert!(!none.approvable_from_notification(crate::BUILTIN_SERVER, "write_file", false));
    assert!(none.approvable_from_notification("trusted", "get", true));
    assert!(!none.approvable_from_notification("trusted", "put", false));
    // An untrusted server's hint is its own claim: not enough.
    assert!(!none.approvable_from_notification("plain", "get", true));

    let chosen = config(vec![
        ("plain".into(), None, true),
        ("plain".into(), Some("delete".into()), false),
        ("trusted".into(), None, false),
        ("trusted".into(), Some("put".into()), true),
        (crate::BUILTIN_SERVER.into(), None, true),
        (
            crate::BUILTIN_SERVER.into(),
            Some("run_command".into()),
            true,
        ),
    ]);
    assert!(chosen.approvable_from_notification("plain", "get", false));
    assert!(!chosen.approvable_from_notification("plain", "delete", true));
    assert!(!chosen.approvable_from_notification("trusted", "get", true));
    assert!(chosen.approvable_from_notification("trusted", "put", false));
    assert!(chosen.approvable_from_notification(crate::BUILTIN_SERVER, "write_file", false));
    assert!(!chosen.approvable_from_notification(crate::BUILTIN_SERVER, "run_command", false));
    assert_eq!(
        chosen.from_notification_choice("plain", Some("delete")),
        Some(false)
    );
    assert_eq!(chosen.from_notification_choice("plain", None), Some(true));
    assert_eq!(chosen.from_notification_choice("plain", Some("get")), None);
}

/// A timed or counted grant on `fs/w`, decided at `now` with `spent` uses already taken by
/// earlier calls of the same step.
fn granted(
    expires_at: Option<&str>,
    uses_left: Option<u32>,
    now: i64,
    spent: u32,
) -> PolicyDecision {
    let mut grant = remembered("fs", "w", None, None, true);
    grant.expires_at = expires_at.map(str::to_string);
    grant.uses_left = uses_left;
    let id = grant.id.clone();
    let config = PolicyConfig::compile(PolicyInputs {
        remembered: vec![grant],
        ..Default::default()
    })
    .unwrap();
    let mut session = SessionPolicy::new(None, []).at(now);
    for _ in 0..spent {
        session.spend(&id);
    }
    decide_fs_w(&config, &session)
}

/// One call of `fs/w` in session `s1`.
fn decide_fs_w(config: &PolicyConfig, session: &SessionPolicy) -> PolicyDecision {
    let args = json!({"path": "a"});
    let hash = args_hash(&args);
    decide(
        config,
        session,
        CallFacts {
            session_id: "s1",
            server: "fs",
            tool: "w",
            args: &args,
            args_hash: &hash,
            read_only_hint: false,
        },
        None,
    )
}

#[test]
fn a_timed_grant_applies_until_its_time_and_never_after() {
    // 2026-11-25T10:00:00Z
    let until = "2026-11-25T10:00:00Z";
    let at = unix_seconds(until).unwrap();
    let before = granted(Some(until), None, at - 1, 0);
    assert_eq!(
        (before.verdict, before.step),
        (Verdict::Run, Step::Remembered)
    );
    assert!(before.why.contains("1 s left"), "{}", before.why);
    assert_eq!(before.grant_use, None, "a timed grant has no uses to take");
    for after in [at, at + 3600] {
        assert_eq!(granted(Some(until), None, after, 0).verdict, Verdict::Ask);
    }
    // A time that does not parse is expired, never forever.
    assert_eq!(granted(Some("soon"), None, 0, 0).verdict, Verdict::Ask);
}

#[test]
fn a_counted_grant_lets_exactly_its_uses_through_counting_the_same_step() {
    let first = granted(None, Some(2), 0, 0);
    assert_eq!(first.verdict, Verdict::Run);
    assert_eq!(first.grant_use.as_deref(), Some("mem-fs-w"));
    assert!(first.why.contains("1 call left"), "{}", first.why);
    assert_eq!(granted(None, Some(2), 0, 1).verdict, Verdict::Run);
    // Two earlier calls of this step took both uses: the third asks.
    assert_eq!(granted(None, Some(2), 0, 2).verdict, Verdict::Ask);
    assert_eq!(granted(None, Some(0), 0, 0).verdict, Verdict::Ask);
    // Both limits: whichever ends first.
    assert_eq!(
        granted(Some("1970-01-01T00:01:00Z"), Some(5), 60, 0).verdict,
        Verdict::Ask
    );
}

#[test]
fn a_changed_tool_suspends_a_timed_or_counted_grant_too() {
    let mut grant = remembered("fs", "w", None, None, true);
    grant.uses_left = Some(3);
    grant.expires_at = Some("2999-01-01T00:00:00Z".into());
    let config = PolicyConfig::compile(PolicyInputs {
        remembered: vec![grant],
        suspended: vec![("fs".into(), "w".into(), "description changed".into())],
        ..Default::default()
    })
    .unwrap();
    let got = decide_fs_w(&config, &SessionPolicy::new(None, []));
    assert_eq!((got.verdict, got.step), (Verdict::Ask, Step::Changed));
    assert_eq!(got.grant_use, None, "no use is taken by a call that asks");
}

/// Decides `server/tool` with `args` in `session_id` under the one kept decision `entry`.
fn decide_under(entry: Remembered, session_id: &str, tool: &str, args: Value) -> PolicyDecision {
    let server = entry.server.clone();
    let config = PolicyConfig::compile(PolicyInputs {
        remembered: vec![entry],
        ..Default::default()
    })
    .unwrap();
    let hash = args_hash(&args);
    decide(
        &config,
        &SessionPolicy::new(None, []),
        CallFacts {
            session_id,
            server: &server,
            tool,
            args: &args,
            args_hash: &hash,
            read_only_hint: false,
        },
        None,
    )
}

/// Issue 27: a grant made from one chat's card let another chat's call run. A grant covers its
/// chat and the pattern of what was approved (the command's prefix that cannot chain), and its
/// calls say which grant let them through.
#[test]
fn a_grant_covers_its_chat_and_its_commands_prefix_and_no_more() {
    let pattern =
        crate::suggest::grant_pattern("run_command", &json!({"command": "git status"})).unwrap();
    assert_eq!(pattern.label, "commands starting `git status`");
    let mut grant = remembered("builtin", "run_command", None, Some("s1"), true);
    grant.uses_left = Some(5);
    grant.pattern = Some(pattern);
    grant.created_at = Some("2026-11-25T14:02:00Z".into());
    let run = |session: &str, command: &str| {
        decide_under(
            grant.clone(),
            session,
            "run_command",
            json!({ "command": command }),
        )
    };
    let allowed = run("s1", "git status --short");
    assert_eq!(
        (allowed.verdict, allowed.step),
        (Verdict::Run, Step::Remembered)
    );
    assert!(
        allowed.why.starts_with(
            "allowed by the grant made at 14:02 UTC for builtin/run_command with commands \
             starting `git status` in this chat, 4 calls left"
        ),
        "{}",
        allowed.why
    );
    for (session, command) in [
        ("s2", "git status"),
        ("s1", "git push"),
        ("s1", "git status; rm -rf /"),
        ("s1", "git status && curl x | sh"),
        ("s1", "git status $(id)"),
    ] {
        assert_eq!(
            run(session, command).verdict,
            Verdict::Ask,
            "{session}: {command}"
        );
    }
    // Widened to every chat, it covers the other chat too.
    let mut everywhere = grant.clone();
    everywhere.session_id = None;
    let other = decide_under(
        everywhere,
        "s2",
        "run_command",
        json!({"command": "git status"}),
    );
    assert_eq!(other.verdict, Verdict::Run);
    assert!(other.why.contains("in every chat"), "{}", other.why);
}

#[test]
fn a_grant_from_a_file_covers_its_folder_and_not_a_way_out_of_it() {
    let pattern =
        crate::suggest::grant_pattern("write_file", &json!({"path": "src/a.rs", "content": "x"}))
            .unwrap();
    assert_eq!(pattern.label, "anything under src/");
    let mut grant = remembered("builtin", "write_file", None, None, true);
    grant.expires_at = Some("2999-01-01T00:00:00Z".into());
    grant.pattern = Some(pattern);
    let write_under = |grant: &Remembered, path: &str| {
        decide_under(
            grant.clone(),
            "s1",
            "write_file",
            json!({"path": path, "content": "y"}),
        )
        .verdict
    };
    let write = |path: &str| write_under(&grant, path);
    assert_eq!(write("src/b/c.rs"), Verdict::Run);
    assert_eq!(write("etc/passwd"), Verdict::Ask);
    assert_eq!(write("src/../../etc/passwd"), Verdict::Ask);
    // A file with no folder: the files beside it, not below another folder.
    let root = crate::suggest::grant_pattern("write_file", &json!({"path": "a.txt"})).unwrap();
    grant.pattern = Some(root);
    assert_eq!(write_under(&grant, "b.txt"), Verdict::Run);
    assert_eq!(write_under(&grant, "sub/b.txt"), Verdict::Ask);
    // A shell or a runner has no prefix to offer: nothing but these arguments.
    assert!(
        crate::suggest::grant_pattern("run_command", &json!({"command": "bash -c 'ls'"})).is_none()
    );
}
