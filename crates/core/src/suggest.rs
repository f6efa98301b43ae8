//! Rules made from an approval: a few allow rules that generalise one call's arguments — for a
//! path the file itself and its folder's `**`, for a command its first word(s) as a prefix, for
//! another short string its exact value. Pure: the engine counts what each would have matched
//! in History.
//!
//! A command prefix allows only more of what the person saw: it stops before options that run
//! another command ([`EXECUTING_WORDS`]), is never a shell or a program that runs its
//! arguments ([`RUNNERS`]), never ends at a variable assignment, and is not offered when an
//! assignment sets a pager, an editor or the like. The same refusals are in the rule's regex,
//! so the policy refuses those forms when it matches too.

use crate::policy::command_glob::{is_command, is_shell_tool};
use crate::policy::{ArgRule, FieldPattern, GrantPattern, RuleEffect, RulePattern};
use serde_json::Value;
use std::collections::BTreeMap;

/// Longer values are not offered as exact rules: nobody reviews them at a glance.
const MAX_EXACT_CHARS: usize = 200;
/// How deep into nested objects fields are looked for.
const MAX_DEPTH: usize = 3;
/// What no word of a command prefix or of what follows it may hold: what starts another
/// command or expands to one (`;`, `&&`, `|`, `$(…)`, backticks, redirections, newlines), and
/// glob characters (`git *` in a folder holding a file named `-c` runs `git -c …`).
const NOT_IN_A_WORD: &str = ";&|`$<>(){}\\*?[\n\r";
/// Quotes: the shell removes them, so they may stand anywhere in a word (`-""c` is `-c`).
const QUOTES: &str = "'\"";
/// Words after a command prefix that make the program run something the person did not see:
/// git's `-c` and `config` (an alias, a pager, an ssh command), git clone's `-u`; `alias`.
/// Refused as they stand and as `WORD=…`, with quotes anywhere in them (`-""c` is `-c`).
const EXECUTING_WORDS: &[&str] = &["-c", "-u", "config", "alias"];
/// Beginnings of options that run something: `--conf…` (cargo's `--config`, git's
/// `--config-env`), `--exe…` (git's `--exec`, `--exec-path`), `--upl…` (`--upload-pack`),
/// `--rece…` (`--receive-pack`), find's `-exe…` (`-exec`, `-execdir`) and `-ok…`. Every word
/// starting so is refused, and so — git takes any unambiguous prefix of a long option — are
/// their shorter beginnings from `--` and one letter on (`--c`, `--co`, `--con`, `--u`, …).
const EXECUTING_BEGINNINGS: &[&str] = &["--conf", "--exe", "--upl", "--rece", "-exe", "-ok"];
/// Programs that run a command given in their arguments (shells, `env`, `sudo`, `xargs`…): a
/// prefix that starts with one allows any command, so none is offered.
const RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "cmd",
    "cmd.exe",
    "powershell",
    "pwsh",
    "env",
    "sudo",
    "doas",
    "su",
    "exec",
    "eval",
    "command",
    "builtin",
    "xargs",
    "nohup",
    "time",
    "timeout",
    "nice",
    "ionice",
    "stdbuf",
    "setsid",
    "watch",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "parallel",
    "script",
    "strace",
    "ltrace",
    "alias",
    "source",
    ".",
];

/// One proposed rule, with a short label a person reads ("the folder src/**").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub pointer: String,
    pub pattern: RulePattern,
    pub effect: RuleEffect,
    pub label: String,
}

impl Candidate {
    /// As a rule of `server/tool` (no id yet).
    pub fn rule(&self, server: &str, tool: &str) -> ArgRule {
        ArgRule {
            id: "suggested".into(),
            server: server.into(),
            tool: tool.into(),
            pointer: self.pointer.clone(),
            pattern: self.pattern.clone(),
            effect: self.effect,
        }
    }
}

/// The candidates for one call of `tool` with `args`, most specific first.
pub fn candidates(tool: &str, args: &Value) -> Vec<Candidate> {
    let mut fields = Vec::new();
    strings_of(args, String::new(), 0, &mut fields);
    let mut out = Vec::new();
    for (pointer, key, value) in fields {
        if value.trim().is_empty() || value.contains('\0') {
            continue;
        }
        if is_command(tool, &key) {
            command_candidates(&pointer, &value, &mut out);
        } else if is_path(&key, &value) {
            path_candidates(&pointer, &value, &mut out);
        } else if value.chars().count() <= MAX_EXACT_CHARS {
            out.push(Candidate {
                pointer,
                pattern: RulePattern::Glob(escape_glob(&value)),
                effect: RuleEffect::Allow,
                label: format!("exactly \"{value}\""),
            });
        }
    }
    out.dedup();
    out
}

/// What a grant made from this call covers by default, from the same candidates as "Make a
/// rule…": each path field's folder (a file directly in the workspace folder: the files there),
/// each command's longest prefix that cannot chain. `None` when the call has neither, or one
/// with no such candidate (a shell, a runner, a quoted prefix): the grant then covers these
/// exact arguments.
pub fn grant_pattern(tool: &str, args: &Value) -> Option<GrantPattern> {
    let mut fields = Vec::new();
    strings_of(args, String::new(), 0, &mut fields);
    let mut patterns = Vec::new();
    let mut labels = Vec::new();
    for (pointer, key, value) in fields {
        let mut found = Vec::new();
        let candidate = if is_command(tool, &key) {
            command_candidates(&pointer, &value, &mut found);
            found
                .into_iter()
                .find(|c| matches!(c.pattern, RulePattern::Regex(_)))?
        } else if is_path(&key, &value) {
            path_candidates(&pointer, &value, &mut found);
            match found
                .into_iter()
                .find(|c| c.label.starts_with("anything under"))
            {
                Some(folder) => folder,
                // A relative file with no folder: the files beside it (`*` stays in its folder).
                None if !value.is_empty() && !value.contains(['/', '\\']) && value != ".." => {
                    Candidate {
                        pointer: pointer.clone(),
                        pattern: RulePattern::Glob("*".into()),
                        effect: RuleEffect::Allow,
                        label: "files directly in the workspace folder".into(),
                    }
                }
                None => return None,
            }
        } else {
            continue;
        };
        // "commands starting `git status` (nothing chained, …)": the short part.
        let label = candidate.label.split(" (").next().unwrap_or_default();
        labels.push(label.to_string());
        patterns.push(FieldPattern {
            pointer: candidate.pointer,
            pattern: candidate.pattern,
        });
    }
    (!patterns.is_empty()).then(|| GrantPattern {
        label: labels.join(", "),
        fields: patterns,
    })
}

/// The string fields of a call's arguments that hold a path, as [`candidates`] tells them
/// (by their key, or a value that starts like a path; a command is not a path):
/// (JSON pointer, value).
pub fn path_fields(tool: &str, args: &Value) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    strings_of(args, String::new(), 0, &mut fields);
    fields
        .into_iter()
        .filter(|(_, key, value)| !is_command(tool, key) && is_path(key, value))
        .map(|(pointer, _, value)| (pointer, value))
        .collect()
}

/// Every string field: (JSON pointer, its key, its value).
fn strings_of(
    value: &Value,
    pointer: String,
    depth: usize,
    out: &mut Vec<(String, String, String)>,
) {
    let Value::Object(map) = value else { return };
    for (key, field) in map {
        let here = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
        match field {
            Value::String(text) => out.push((here, key.to_ascii_lowercase(), text.clone())),
            Value::Object(_) if depth < MAX_DEPTH => strings_of(field, here, depth + 1, out),
            _ => {}
        }
    }
}

/// Whether a tool runs commands: it is named as a shell, or this call's arguments hold a command
/// line. A grant for any of its arguments is a grant for any command, which a person confirms.
pub fn runs_commands(tool: &str, args: &Value) -> bool {
    let mut fields = Vec::new();
    strings_of(args, String::new(), 0, &mut fields);
    is_shell_tool(tool) || fields.iter().any(|(_, key, _)| is_command(tool, key))
}

fn is_path(key: &str, value: &str) -> bool {
    matches!(
        key,
        "path"
            | "file"
            | "file_path"
            | "filepath"
            | "filename"
            | "dir"
            | "directory"
            | "cwd"
            | "target"
            | "source"
            | "destination"
            | "notebook_path"
    ) || value.starts_with('/')
        || value.starts_with("./")
        || value.starts_with("~/")
}

/// The whole command, then its first two words and its first word (after any leading `VAR=…`
/// assignments) as prefixes — each only where it allows nothing the person did not see, and
/// matches the command it came from.
fn command_candidates(pointer: &str, command: &str, out: &mut Vec<Candidate>) {
    if command.chars().count() <= MAX_EXACT_CHARS {
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Glob(escape_glob(command)),
            effect: RuleEffect::Allow,
            label: format!("exactly `{command}`"),
        });
    }
    // Words as the shell splits them (space and tab; it does not split on other whitespace).
    let words: Vec<&str> = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    let assignments = words
        .iter()
        .take_while(|w| assigned_name(w).is_some())
        .count();
    if words[..assignments]
        .iter()
        .filter_map(|w| assigned_name(w))
        .any(names_a_command)
    {
        return;
    }
    let Some(program) = words.get(assignments) else {
        return;
    };
    let program_name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    if RUNNERS.contains(&program_name.to_ascii_lowercase().as_str()) {
        return;
    }
    let Ok(one_word) = regex::Regex::new(&format!("^(?:{})$", tail_word())) else {
        return;
    };
    for n in [2, 1] {
        let Some(prefix_words) = words.get(..assignments + n) else {
            continue;
        };
        // The words themselves: no quotes (a prefix could end inside a quoted string), nothing
        // that chains or expands, no option that runs another command.
        if prefix_words.iter().any(|w| {
            w.chars()
                .any(|c| NOT_IN_A_WORD.contains(c) || QUOTES.contains(c))
        }) || prefix_words[assignments + 1..]
            .iter()
            .any(|w| !one_word.is_match(w))
        {
            continue;
        }
        let pattern = command_prefix_pattern(prefix_words);
        let matches_itself =
            regex::Regex::new(&format!("^(?:{pattern})$")).is_ok_and(|rule| rule.is_match(command));
        if !matches_itself {
            continue;
        }
        let prefix = prefix_words.join(" ");
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Regex(pattern),
            effect: RuleEffect::Allow,
            label: format!(
                "commands starting `{prefix}` (nothing chained, expanded or redirected after it, \
                 and no option that runs another command)"
            ),
        });
    }
}

/// The name a `NAME=value` word assigns, if it is an assignment.
fn assigned_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (starts_well && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(name)
}

/// Whether a variable names a command some program runs (a pager, an editor, an ssh command,
/// a library to preload, a shell's start-up file, …).
fn names_a_command(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    const NAMES: &[&str] = &[
        "VISUAL",
        "BROWSER",
        "SHELL",
        "ENV",
        "BASH_ENV",
        "PROMPT_COMMAND",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PATH",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "GIT_SSH",
        "GIT_DIR",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
    ];
    NAMES.contains(&name.as_str())
        || ["PAGER", "EDITOR", "_COMMAND", "_CMD", "ASKPASS", "_PROGRAM"]
            .iter()
            .any(|end| name.ends_with(end))
        || ["LD_", "DYLD_", "GIT_CONFIG", "GIT_EXTERNAL"]
            .iter()
            .any(|start| name.starts_with(start))
}

/// The regex of a command prefix: its words, then any words that are not
/// [`EXECUTING_WORDS`] and hold nothing of [`NOT_IN_A_WORD`].
fn command_prefix_pattern(words: &[&str]) -> String {
    let words: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    format!(r"{}(?:[ \t]+{})*", words.join(r"[ \t]+"), tail_word())
}

/// One word after a command prefix, as a regex: any word but an [`EXECUTING_WORDS`] or
/// [`EXECUTING_BEGINNINGS`] one, however quoted. Built from a trie of those (the regex crate has
/// no look-ahead): at each node the word may end (unless the node is refused), go on along the
/// trie, or leave it with any other character — and from there hold anything allowed. A
/// beginning's last node is a dead end: nothing goes on from it.
fn tail_word() -> String {
    #[derive(Default)]
    struct Node {
        refused: bool,
        dead_end: bool,
        next: BTreeMap<char, Node>,
    }
    let mut root = Node::default();
    let words = EXECUTING_WORDS.iter().map(|w| (w, false));
    for (word, beginning) in words.chain(EXECUTING_BEGINNINGS.iter().map(|w| (w, true))) {
        let mut node = &mut root;
        for (depth, c) in word.chars().enumerate() {
            node = node.next.entry(c).or_default();
            node.refused |= beginning && word.starts_with("--") && depth >= 2;
        }
        node.refused = true;
        node.dead_end |= beginning;
    }
    // Inside a class only these need a backslash (`&&`, `--`, `~~` are set operations).
    let in_class = |c: char| match c {
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\\' | '[' | ']' | '^' | '-' | '&' | '~' => format!("\\{c}"),
        c => c.to_string(),
    };
    let class_without = |extra: &str| -> String {
        NOT_IN_A_WORD
            .chars()
            .chain(extra.chars())
            .map(in_class)
            .collect()
    };
    let anything = format!("[^ \\t{}]*", class_without(""));
    let quotes = format!("[{QUOTES}]*");
    fn node_regex(
        node: &Node,
        class_without: &dyn Fn(&str) -> String,
        anything: &str,
        quotes: &str,
    ) -> Option<String> {
        if node.dead_end {
            return None;
        }
        let mut ways = Vec::new();
        if !node.refused {
            ways.push(String::new());
        }
        let mut leaving: String = QUOTES.to_string();
        for (c, child) in &node.next {
            leaving.push(*c);
            if let Some(rest) = node_regex(child, class_without, anything, quotes) {
                ways.push(format!("{}{rest}", regex::escape(&c.to_string())));
            }
        }
        if node.refused {
            leaving.push('=');
        }
        ways.push(format!("[^ \\t{}]{anything}", class_without(&leaving)));
        Some(format!("{quotes}(?:{})", ways.join("|")))
    }
    node_regex(&root, &class_without, &anything, &quotes).unwrap_or_default()
}

/// The file itself, then every file below its folder.
fn path_candidates(pointer: &str, path: &str, out: &mut Vec<Candidate>) {
    if path.chars().count() <= MAX_EXACT_CHARS {
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Glob(escape_glob(path)),
            effect: RuleEffect::Allow,
            label: format!("the file {path}"),
        });
    }
    let trimmed = path.trim_end_matches('/');
    if let Some((folder, _)) = trimmed.rsplit_once('/') {
        // `/etc/passwd`'s folder is `/etc`; a file at the root has no folder to offer.
        if folder.is_empty() || folder.contains("..") {
            return;
        }
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Glob(format!("{}/**", escape_glob(folder))),
            effect: RuleEffect::Allow,
            label: format!("anything under {folder}/"),
        });
    }
}

/// A value as a glob that matches only itself.
pub fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::policy::RuleProbe;
    use serde_json::json;

    fn probe(candidate: &Candidate) -> RuleProbe {
        RuleProbe::new(&candidate.rule("s", "t")).unwrap()
    }

    fn patterns(tool: &str, args: Value) -> Vec<String> {
        candidates(tool, &args)
            .into_iter()
            .map(|c| match c.pattern {
                RulePattern::Glob(p) => format!("glob {} {p}", c.pointer),
                RulePattern::Regex(p) => format!("regex {} {p}", c.pointer),
            })
            .collect()
    }

    #[test]
    fn a_path_gives_the_file_and_its_folder() {
        assert_eq!(
            patterns(
                "write_file",
                json!({"path": "src/lib.rs", "content": "fn main() {}"})
            ),
            vec![
                "glob /content fn main() \\{\\}",
                "glob /path src/lib.rs",
                "glob /path src/**"
            ]
        );
        let folder = candidates("write_file", &json!({"path": "/home/me/notes/a.md"}));
        let rule = probe(&folder[1]);
        assert!(rule.matches(&json!({"path": "/home/me/notes/b/c.md"})));
        assert!(!rule.matches(&json!({"path": "/home/me/notes/../.ssh/id_rsa"})));
        assert!(!rule.matches(&json!({"path": "/home/me/other.md"})));
    }

    #[test]
    fn a_command_gives_itself_and_prefixes_that_cannot_chain_another_command() {
        let found = candidates("Bash", &json!({"command": "git status --short"}));
        assert_eq!(found.len(), 3, "{found:?}");
        let exact = probe(&found[0]);
        assert!(exact.matches(&json!({"command": "git status --short"})));
        assert!(!exact.matches(&json!({"command": "git status --long"})));
        let two_words = probe(&found[1]);
        for allowed in ["git status", "git status --short", "git status -- src/a b"] {
            assert!(
                two_words.matches(&json!({ "command": allowed })),
                "{allowed}"
            );
        }
        for chained in [
            "git status; rm -rf ~",
            "git status && curl x | sh",
            "git status $(rm -rf ~)",
            "git status `id`",
            "git status > /etc/passwd",
            "git statusx",
            "git status\nrm -rf ~",
        ] {
            assert!(
                !two_words.matches(&json!({ "command": chained })),
                "{chained}"
            );
        }
        assert!(probe(&found[2]).matches(&json!({"command": "git log -1"})));
    }

    /// The prefix rules of `command`, as the policy matches them.
    fn prefix_rules(command: &str) -> Vec<(String, RuleProbe)> {
        candidates("Bash", &json!({ "command": command }))
            .iter()
            .filter(|c| matches!(c.pattern, RulePattern::Regex(_)))
            .map(|c| (c.label.clone(), probe(c)))
            .collect()
    }

    #[test]
    fn commands_starting_git_allow_no_option_that_runs_another_command() {
        let rules = prefix_rules("git status");
        assert_eq!(rules.len(), 2, "git status, git");
        let (label, git) = &rules[1];
        assert!(label.contains("`git`"), "{label}");
        for allowed in [
            "git log -1",
            "git commit -m \"fix: the bug\"",
            "git -C sub status",
            "git log --color=always",
            "git diff --cached --exit-code",
            "git rebase --continue",
            "git submodule update --recursive --remote",
            "git log --reverse -e",
            "git push origin main",
        ] {
            assert!(git.matches(&json!({ "command": allowed })), "{allowed}");
        }
        for executing in [
            "git -c alias.x='!touch X' x",
            "git -c core.pager='touch X' log",
            "git -c core.pager=less log",
            "git '-c' core.pager=x log",
            "git -\"\"c core.pager=x log",
            "git \"-c\"\"\" core.pager=x log",
            "git --config-env=core.pager=X log",
            "git --config-env core.pager=X log",
            "git --exec-path=/tmp/evil status",
            "git config core.pager 'touch X'",
            "git con'fig' alias.x '!touch X'",
            "git fetch --upload-pack='touch X' .",
            "git fetch --upl='touch X' .",
            "git clone -u 'touch X' . y",
            "git push --receive-pack='touch X' .",
            "git archive --exec='touch X' --remote=.",
            "git *",
            "git -[c] core.pager=x log",
        ] {
            assert!(
                !git.matches(&json!({ "command": executing })),
                "{executing}"
            );
        }
    }

    #[test]
    fn a_prefix_stops_before_an_option_that_runs_another_command() {
        // Only the exact command: `git -c` is no prefix to offer, and `git` would not match it.
        assert!(prefix_rules("git -c core.pager=less log").is_empty());
        let find = prefix_rules("find . -name x.rs");
        assert_eq!(find.len(), 2, "find ., find");
        for (label, rule) in &find {
            for executing in [
                "find . -exec touch X +",
                "find . -execdir rm x +",
                "find . -ok rm x +",
            ] {
                assert!(
                    !rule.matches(&json!({ "command": executing })),
                    "{label}: {executing}"
                );
            }
        }
        let cargo = prefix_rules("cargo test");
        assert!(
            !cargo[1]
                .1
                .matches(&json!({"command": "cargo --config 'target.x.runner=\"touch X\"' run"}))
        );
    }

    #[test]
    fn a_leading_assignment_is_no_prefix_alone_and_shells_are_none() {
        let rules = prefix_rules("NODE_ENV=test npm test");
        let labels: Vec<&str> = rules.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(rules.len(), 2, "{labels:?}");
        assert!(labels[0].contains("`NODE_ENV=test npm test`"), "{labels:?}");
        assert!(labels[1].contains("`NODE_ENV=test npm`"), "{labels:?}");
        for (label, rule) in &rules {
            assert!(
                rule.matches(&json!({"command": "NODE_ENV=test npm test --watch"})),
                "{label}"
            );
            for other in [
                "NODE_ENV=test sh -c 'touch X'",
                "NODE_ENV=test bash -c 'touch X'",
                "NODE_ENV=test env touch X",
                "NODE_ENV=test GIT_PAGER='touch X' git log",
                "NODE_ENV=test",
            ] {
                assert!(
                    !rule.matches(&json!({ "command": other })),
                    "{label}: {other}"
                );
            }
        }
        // What runs another command is never a prefix: a shell, env, sudo, xargs; nor a prefix
        // whose assignment sets a pager or an editor; nor one that could end inside quotes.
        for command in [
            "NODE_ENV=test sh -c 'npm test'",
            "sh -c 'npm test'",
            "bash -c ls",
            "/bin/sh -c ls",
            "env NODE_ENV=test npm test",
            "sudo ls",
            "xargs rm",
            "GIT_PAGER=cat git log",
            "PAGER=less man ls",
            "EDITOR=vim git commit",
            "LD_PRELOAD=x.so ls",
            "A='x y' npm test",
            "FOO=bar",
        ] {
            assert!(
                prefix_rules(command).is_empty(),
                "{command}: {:?}",
                prefix_rules(command)
                    .iter()
                    .map(|r| &r.0)
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_value_with_glob_characters_matches_only_itself() {
        let found = candidates("t", &json!({"query": "a*b?[c]"}));
        let rule = probe(&found[0]);
        assert!(rule.matches(&json!({"query": "a*b?[c]"})));
        assert!(!rule.matches(&json!({"query": "aXXbY[c]"})));
        assert!(!rule.matches(&json!({"query": "axbyc"})));
    }

    #[test]
    fn long_values_and_empty_strings_are_not_offered() {
        let long = "x".repeat(500);
        assert!(candidates("t", &json!({"body": long, "empty": " "})).is_empty());
    }
}
