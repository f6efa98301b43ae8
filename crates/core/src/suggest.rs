//! Rules made from an approval: a few allow rules that generalise one call's arguments — for a
//! path the file itself and its folder's `**`, for a command its first word(s) as a prefix, for
//! another short string its exact value. Pure: the engine counts what each would have matched
//! in History.

use crate::policy::{ArgRule, RuleEffect, RulePattern};
use serde_json::Value;

/// Longer values are not offered as exact rules: nobody reviews them at a glance.
const MAX_EXACT_CHARS: usize = 200;
/// How deep into nested objects fields are looked for.
const MAX_DEPTH: usize = 3;
/// What a command prefix may be followed by: more arguments, but nothing that starts another
/// command or expands to one (`;`, `&&`, `|`, `$(…)`, backticks, redirections, newlines).
const COMMAND_TAIL: &str = r"([ \t][^;&|`$<>(){}\\\n\r]*)?";

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

fn is_command(tool: &str, key: &str) -> bool {
    matches!(key, "command" | "cmd" | "script")
        || matches!(
            tool.to_ascii_lowercase().as_str(),
            "bash" | "run_command" | "shell" | "exec"
        ) && key == "command"
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

/// The whole command, then its first two words and its first word as prefixes.
fn command_candidates(pointer: &str, command: &str, out: &mut Vec<Candidate>) {
    let words: Vec<&str> = command.split_whitespace().collect();
    if command.chars().count() <= MAX_EXACT_CHARS {
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Glob(escape_glob(command)),
            effect: RuleEffect::Allow,
            label: format!("exactly `{command}`"),
        });
    }
    for n in [2, 1] {
        if words.len() < n {
            continue;
        }
        let prefix = words[..n].join(" ");
        // A prefix that itself chains commands is no prefix to trust.
        if prefix.chars().any(|c| ";&|`$<>(){}\\".contains(c)) {
            continue;
        }
        out.push(Candidate {
            pointer: pointer.into(),
            pattern: RulePattern::Regex(format!("{}{COMMAND_TAIL}", regex::escape(&prefix))),
            effect: RuleEffect::Allow,
            label: format!("commands starting `{prefix}` (no ; && | $( ) or redirection after it)"),
        });
    }
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
